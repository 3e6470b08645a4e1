/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tracer owns the BPF skeleton: it checks what the kernel and the
 * caller's privileges allow, loads and attaches the programs (a perf
 * CPU-clock event on every online CPU, the exec and exit tracepoints, and
 * with off-CPU profiling the sched_switch BTF tracepoint),
 * polls the ring buffers, and reads the per-CPU counters.  Nothing it
 * attached survives tracer_free().  With opts.keep_dir, tracer_free()
 * leaves a fresh, verified set of the programs and their (empty) maps
 * pinned there, and the next tracer_open() with the same options takes
 * it instead of verifying (tracer_keep.c).
 */
#ifndef EP_TRACER_H
#define EP_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "bpfmaps.h"
#include "profiler.h"

struct tracer;

struct tracer_opts {
	int samples_per_second;
	const uint32_t *pids; /* in-kernel pid filter, n_pids == 0: all */
	int n_pids;
	const uint64_t *cgroup_ids; /* in-kernel cgroup filter */
	int n_cgroups;
	uint64_t ringbuf_bytes; /* 0: from the rate and the CPU count */
	int map_scale_factor;
	/* bound on stack-delta rows (rounded up to whole chunks); 0:
	 * DELTA_ROWS_DEFAULT doubled map_scale_factor times */
	uint64_t max_delta_rows;
	int max_frames;
	/* off-CPU: probability per context switch (0: the program is not
	 * even loaded), and the bound on threads waiting for their
	 * switch-in */
	double offcpu_threshold;
	uint32_t offcpu_max_threads;
	/* entries per CPU of the rule cache (rounded up to a power of two);
	 * 0: no cache */
	uint32_t rule_cache_entries;
	uint32_t map_cache_entries;
	uint32_t interps; /* interpreter unwinders on: bit per interp_kind */
	int log_level; /* verifier log level on failure (0: libbpf's) */
	/* -keep-programs: the directory (on a BPF file system) of the set
	 * kept for the next start; NULL: nothing kept, nothing taken */
	const char *keep_dir;
};

/* Called for each trace record; words holds hdr->n_kernel kernel
 * addresses, then hdr->n_user user frame words, then, in an off-CPU
 * record (TRACE_F_OFFCPU), the nanoseconds off the CPU. */
typedef void (*tracer_trace_fn)(void *arg, const struct trace_hdr *hdr,
				const __u64 *words);
typedef void (*tracer_event_fn)(void *arg, const struct pid_event *ev);

/*
 * Check privileges and kernel features, open the BPF object and create
 * its maps: tracer_maps() can be filled from here on, while tracer_load()
 * runs on another thread.  On failure prints one clear line about what
 * the user can do and returns a negative errno.
 */
int tracer_open(const struct tracer_opts *opts, tracer_trace_fn on_trace,
		tracer_event_fn on_event, void *arg, struct tracer **out);
/* The BPF object tracer_load() loads (an ELF image; static data). */
const void *tracer_object(size_t *len);
/*
 * Load the programs, their CO-RE relocations resolved against types (raw
 * BTF from kbtf_minimize(), len bytes), or against the kernel's whole BTF
 * when types is NULL or does not do (tracer_types_rejected() then says
 * so).  Nothing is attached yet.  On failure prints the verifier's log
 * and one line, and returns a negative errno.
 */
int tracer_load(struct tracer *t, const void *types, size_t len);
bool tracer_types_rejected(struct tracer *t);
/* The programs came verified from the set the last run kept
 * (-keep-programs): nothing was verified at this start. */
bool tracer_programs_kept(struct tracer *t);
/* Attach the tracepoints and the perf events (sampling starts). */
int tracer_attach(struct tracer *t);
/* Turn sampling on or off (probabilistic mode) without detaching. */
int tracer_enable(struct tracer *t, bool on);
/*
 * Wait up to timeout_ms for records and dispatch them to the callbacks,
 * on the caller's thread.  From tracer_attach() on, a drain thread
 * empties both rings every few milliseconds into a queue bounded by
 * bytes (a record that does not fit is dropped and counted), and this
 * takes records from the queue, at most a few thousand a call.  Returns
 * the number of records handled or a negative errno (-EINTR is fine).
 */
int tracer_poll(struct tracer *t, int timeout_ms);
/* Every record written to the rings before the call, dispatched: waits
 * for a pass of the drain thread that starts after it (an interval's
 * cut, the exit).  Returns the number handled or a negative errno. */
int tracer_flush(struct tracer *t);
struct tracer_drain_stats {
	bool threaded;		  /* the drain thread runs */
	uint64_t stall_ns_max;	  /* longest time between two drains */
	uint64_t queue_drops;	  /* records dropped: the queue was full */
	uint64_t trace_drops;	  /* of queue_drops, trace records (samples) */
	uint64_t queue_bytes;	  /* queued now */
	uint64_t queue_bytes_max; /* the most ever queued */
	uint64_t queue_bound;
};
void tracer_drain_stats(struct tracer *t, struct tracer_drain_stats *out);
/* Sum the per-CPU counters into out[METRIC_COUNT]. */
void tracer_read_metrics(struct tracer *t, uint64_t *out);
/* The maps for the process and executable managers (owned by t). */
struct bpfmaps *tracer_maps(struct tracer *t);
/* Per-program kernel statistics (runs and time need
 * kernel.bpf_stats_enabled=1; verified_insns is the verifier's work at
 * load, 0 before 5.16). */
struct tracer_prog_stats {
	const char *name;
	uint64_t run_cnt, run_time_ns, verified_insns;
};
int tracer_prog_stats(struct tracer *t, struct tracer_prog_stats *out, int max);
/* Number of programs loaded, perf events attached. */
int tracer_nprogs(struct tracer *t);
int tracer_nevents(struct tracer *t);
/* Until tracer_attach: new chunks of rows are put into the array of maps
 * on a thread of their own (the kernel waits a grace period on that
 * update) while their memory takes rows at once; BPF reads them only
 * once the programs are attached, and tracer_attach waits for them.  For
 * the daemon's start-up, before its process loads. */
void tracer_defer_chunks(struct tracer *t);

/* The daemon is exiting: chunks of rows dropped from here on stay in the
 * array of maps, which tracer_free() closes with them (each delete would
 * wait for an RCU grace period).  Only before tracer_free(): BPF may
 * still read those rows until then.  NULL is fine. */
void tracer_closing(struct tracer *t);
/* Detach and free everything; NULL is fine. */
void tracer_free(struct tracer *t);

#endif
