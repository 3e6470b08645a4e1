/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to tracer.c (preflight, open, load, attach, statistics),
 * tracer_maps.c (the libbpf bpfmaps and the maps made before loading) and
 * tracer_drain.c (the rings' drain thread, poll and flush): the tracer
 * itself and the calls between them.  Not for other modules.
 */
#ifndef EP_TRACER_INT_H
#define EP_TRACER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "bpfmaps.h"
#include "tracer.h"

#define MAX_MAPS 32
#define MAX_PROGS 8

struct map_shape {
	enum bpf_map_type type;
	__u32 key, value, entries, flags;
};

struct tracer {
	struct profiler *skel;
	struct ring_buffer *rb;
	int *perf_fds;
	struct bpf_link **perf_links;
	int n_perf;
	int ncpus_possible;
	struct bpfmaps bm;
	int map_fds[BM_COUNT];
	int own_fds[MAX_MAPS]; /* the maps we created, by skeleton order */
	int n_own;
	int btf_fd; /* memfd: the kernel types CO-RE relocates against */
	bool btf_rejected;
	/* the kernel lets perf programs use hash maps that allocate as
	 * entries are added (probe_no_prealloc) */
	bool grow_hash_maps;
	bool no_batch[BM_COUNT]; /* the kernel has no batch update for it */
	bool exiting; /* tracer_closing(): chunks are not deleted one by one */
	/* -keep-programs (tracer_keep.c): the programs of this run came
	 * from the kept set (kept_fds, by the object's program order; -1:
	 * not loaded), their tracepoints attached through kept_links; once
	 * attached (keep_next) tracer_free() makes the next set */
	bool kept, keep_next;
	int kept_fds[MAX_PROGS], kept_links[MAX_PROGS];
	int n_kept_links;
	struct tracer_opts o;
	size_t rules_len;
	/* the counters: the first METRIC_STRIDE words of each CPU's entry
	 * of the two scratch maps (the CPU sampler's, the off-CPU
	 * program's), mmap'ed (read by tracer_read_metrics); an entry's
	 * bytes */
	void *metrics_mem[2];
	size_t metrics_len, metrics_stride;
	/* pid_epoch, mmap'ed: bumped after each change of pid_info
	 * (tracer_maps.c) */
	__u64 *pid_epoch_mem;
	/* the rows: the array of chunks, and a chunk's shape (kept apart
	 * from the skeleton, which a second load replaces while files load
	 * on another thread) */
	int rows_fd;
	struct map_shape chunk_shape;
	/* start-up (until tracer_attach): a batch of new chunks goes into
	 * the array of maps on a thread of its own, since the kernel waits
	 * a grace period on every update of a map of maps (15-20 ms), while
	 * the caller writes rows into their memory; tr_chunks_defer()
	 * joins it (under chunk_lock) */
	pthread_mutex_t chunk_lock;
	bool chunk_defer, chunk_pending;
	pthread_t chunk_thread;
	struct chunk_job {
		struct tracer *t;
		uint32_t n, placed;
		uint32_t idx[BM_CHUNK_BATCH_MAX];
		int fds[BM_CHUNK_BATCH_MAX];
	} chunk_job;
	tracer_trace_fn on_trace;
	tracer_event_fn on_event;
	void *arg;
	int freq;
	size_t rb_bytes;

	/* the drain thread: it empties both rings into q, so a long step of
	 * the main thread (a file's extraction) never leaves them full */
	struct recq *q;
	pthread_t drain;
	bool threaded;	       /* the thread runs: callbacks copy into q */
	bool drain_stop;       /* atomic */
	pthread_mutex_t drain_lock;
	pthread_cond_t drained;
	uint64_t passes;       /* passes done (under drain_lock) */
	uint64_t last_pass_ns; /* the end of the last pass (drain thread) */
	uint64_t stall_ns_max; /* atomic: longest time between two passes */
	uint64_t trace_drops;  /* atomic: trace records the queue refused */
};

#define CHUNK_BYTES ((size_t)DELTA_CHUNK_BLOCKS * sizeof(struct row_block))

struct profiler;

/* tracer_maps.c */
extern const struct bpfmaps_ops tr_libbpf_ops;
void *tr_map_memory(int fd, size_t len, int *err);
/* Wait for the chunks being placed on their thread; on: place the next
 * ones there too (the daemon's start-up), else at once (sampling is about
 * to be live). */
void tr_chunks_defer(struct tracer *t, bool on);
struct map_shape tr_shape_of(const struct bpf_map *m);
int tr_reuse_maps(struct tracer *t, struct profiler *skel);
int tr_create_maps(struct tracer *t);

/* tracer.c */
int tr_open_skel(struct tracer *t, struct profiler **out);
/* The tail-call table of skel (PROG_*) filled: 0 or a negative errno. */
int tr_set_tail_calls(struct profiler *skel, int unwind_native_fd);

/* tracer_keep.c */
/* After tr_open_skel(): take the set kept for these options, if there
 * is one (its maps become the skeleton's, its programs kept_fds, none
 * is loaded again).  Never fails: no set, or one that does not fit, and
 * the caller creates and loads as before (a set that does not fit is
 * removed, with a warning). */
void tk_take(struct tracer *t);
/* The program's fd: the kept one, or the skeleton's. */
int tk_prog_fd(struct tracer *t, const struct bpf_program *p);
/* The kept programs' tracepoints (raw_tp, tp_btf), after the skeleton's
 * attach (which skips programs it did not load). */
int tk_attach(struct tracer *t);
/* Load a fresh set with the same options and pin it for the next start
 * (the maps of this run are gone by then). */
void tk_make_next(struct tracer *t);

/* tracer_drain.c */
int tr_on_trace_rec(void *ctx, void *data, size_t size);
int tr_on_event_rec(void *ctx, void *data, size_t size);
int tr_start_drain(struct tracer *t);
void tr_stop_drain(struct tracer *t);

#endif
