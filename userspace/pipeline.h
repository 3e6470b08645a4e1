/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The trace pipeline: each record's frames go through the symbolizer
 * (symbolize.h: what a frame is, then its names), and are aggregated by
 * (process, thread, stack) over an interval into the reporter's batch:
 * locations, stacks and samples interned by their whole keys.  It only
 * reads the process and executable managers: a record of a process not
 * loaded yet asks for a sync (pm_request) and waits for the poll loop.
 */
#ifndef EP_PIPELINE_H
#define EP_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "exemgr.h"
#include "inlcache.h"
#include "interp.h"
#include "ksyms.h"
#include "procmgr.h"
#include "profiler.h"
#include "reporter.h"

struct tp;

struct tp_opts {
	uint64_t period_ns;	   /* 1e9 / samples per second */
	bool send_error_frames;	   /* keep error frames in stacks */
	uint32_t max_timestamps;   /* per aggregated sample (default 256) */
	uint32_t max_samples;	   /* distinct samples per interval */
	uint32_t max_locations;	   /* distinct frames per interval */
	/* name an interpreter frame (interp_symbolize); NULL, or an error:
	 * shown by address */
	int (*interp_frame)(void *arg, uint32_t pid,
			    const struct interp_frame *f,
			    struct interp_symbol *out, unsigned max);
	void *interp_arg;
	/* inline frames from DWARF (not owned); NULL: off.  A native
	 * frame becomes one location per function of its inline chain. */
	struct inl_cache *inlines;
	/* batches say native_lines (reporter.h): -folded-lines */
	bool native_lines;
};

struct tp_stats {
	uint64_t traces;	 /* records received */
	uint64_t offcpu;	 /* of them, off-CPU records */
	uint64_t offcpu_ns;	 /* the time off the CPU they carry */
	uint64_t samples;	 /* records aggregated */
	uint64_t dropped_full;	 /* records dropped: aggregation tables full */
	uint64_t truncated;	 /* stacks cut by the frame limit */
	uint64_t unwind_errors;	 /* stacks that ended in an error */
	uint64_t unsynced;	 /* records of processes not loaded yet */
	uint64_t complete;	 /* user stacks that reached the entry */
	uint64_t kernel_only;	 /* records without a user stack */
	uint64_t raw_unresolved; /* raw pcs in no known mapping */
	uint64_t bad_records;	 /* malformed frame words */
	uint64_t waited;	 /* records kept until their process' sync */
	uint64_t wait_full;	 /* records named at once: no room to wait */
	uint64_t wait_expired;	 /* records whose sync was not served in time */
	uint64_t errors_by_code[METRIC_COUNT];
};

/* The words a record holds after its header: the frames, and an
 * off-CPU record's duration. */
static inline size_t tp_record_words(const struct trace_hdr *h)
{
	return (size_t)h->n_kernel + h->n_user +
	       ((h->flags & TRACE_F_OFFCPU) ? 1 : 0);
}

/* ka: the kernel symbols, loading in the background (may be NULL). */
int tp_new(struct pm *pm, struct exe_mgr *em, struct ksyms_async *ka,
	   const struct tp_opts *opts, struct tp **out);
void tp_free(struct tp *tp);
/* Add one record (the tracer's callback; words: tp_record_words(h)).  A record of a process not
 * loaded yet asks the process manager for a sync (pm_request) and waits,
 * copied, in a bounded list until tp_retry finds the request served. */
void tp_add_trace(struct tp *tp, const struct trace_hdr *h, const __u64 *words);
/* Aggregate the waiting records whose sync was served (or failed, or
 * took too long); force: all of them (at an interval's cut).  The poll
 * loop calls it after pm_service. */
void tp_retry(struct tp *tp, bool force);
/* Records waiting now. */
uint32_t tp_waiting(struct tp *tp);
/* Fill b with the current interval's aggregate.  b stays valid until the
 * next tp_reset() or tp_add_trace().  start_ns/end_ns: unix ns. */
void tp_batch(struct tp *tp, struct rep_batch *b);
/* Start a new interval (frees the aggregate). */
void tp_reset(struct tp *tp);
void tp_get_stats(struct tp *tp, struct tp_stats *out);

#endif
