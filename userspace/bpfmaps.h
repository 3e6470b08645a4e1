/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF maps as the process and executable managers see them: a small
 * ops table with a libbpf implementation (owned by the tracer) and an
 * in-memory one for tests (tests/unit/bpfmaps_mem.h), so those modules
 * never touch libbpf.
 *
 * The stack-delta rows and the unwind rules live in mmap-able arrays:
 * bm->chunks[] and bm->rules point at them (kernel memory for the libbpf
 * implementation), so loading a file's rows is a memcpy and adding a rule
 * a store, without a system call.  The rows come in chunks of
 * DELTA_CHUNK_ROWS (profiler.h), created when the executable manager
 * needs one, up to bm->max_chunks.
 */
#ifndef EP_BPFMAPS_H
#define EP_BPFMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "profiler.h"

enum bm_map {
	BM_PID_INFO,	/* u32 pid -> struct pid_info */
	BM_MAPPINGS,	/* struct mapping_key -> struct mapping_info */
	BM_PAGES,	/* struct page_key -> struct page_info */
	BM_RULES,	/* u32 index -> struct unwind_rule (through bm->rules) */
	BM_PID_FILTER,	/* u32 pid -> u8 */
	BM_CGROUP_FILTER, /* u64 cgroup id -> u8 */
	/* one map per interpreter unwinder, BM_INTERP(kind): named and sized
	 * by its module (interp.h), bound with bm_bind() */
	BM_INTERP_BASE,
	BM_COUNT = BM_INTERP_BASE + INTERP_COUNT,
};
#define BM_INTERP(kind) ((enum bm_map)(BM_INTERP_BASE + (kind)))

struct bpfmaps_ops {
	int (*update)(void *ctx, enum bm_map m, const void *key, const void *val);
	/* -ENOENT when absent */
	int (*remove)(void *ctx, enum bm_map m, const void *key);
	/* -ENOENT when absent */
	int (*lookup)(void *ctx, enum bm_map m, const void *key, void *val);
	/* n entries, keys and values packed (bm_key_size, bm_val_size);
	 * *done: how many went in before the first failure.  Optional:
	 * without it, bm_update_batch() updates them one by one. */
	int (*update_batch)(void *ctx, enum bm_map m, const void *keys,
			    const void *vals, uint32_t n, uint32_t *done);
	/* Remove n keys (packed), the absent ones skipped; returns how many
	 * were removed.  Optional: without it, bm_remove_batch() removes
	 * them one by one. */
	uint32_t (*remove_batch)(void *ctx, enum bm_map m, const void *keys,
				 uint32_t n);
	/* Find the BPF map called name for slot m (an interpreter's), with
	 * these key and value sizes.  0, -ENOENT (no such map) or -EINVAL
	 * (other sizes). */
	int (*bind)(void *ctx, enum bm_map m, const char *name, size_t key_size,
		    size_t val_size);
	/* Create chunk idx of the rows (DELTA_CHUNK_BLOCKS zeroed blocks)
	 * and put it where BPF finds it; *mem: its memory, shared with the
	 * kernel, valid until chunk_drop. */
	int (*chunk_new)(void *ctx, uint32_t idx, struct row_block **mem);
	/* Create the chunks idx[0..n) as chunk_new does, and put them where
	 * BPF finds them in one update of the array of maps: the kernel
	 * waits for an RCU grace period (several ms) after each update of
	 * a map of maps, so one for n chunks, not n.  *done: how many went
	 * in, the first ones (mem[0..*done) set) when it fails.  n is at
	 * most BM_CHUNK_BATCH_MAX.
	 * -EOPNOTSUPP with nothing done: the kernel cannot update this map
	 * in a batch (6.1); bm_chunks_new() then uses chunk_new.
	 * Optional. */
	int (*chunks_new)(void *ctx, const uint32_t *idx, uint32_t n,
			  struct row_block **mem, uint32_t *done);
	/* Take chunk idx out of BPF's reach and unmap mem. */
	void (*chunk_drop)(void *ctx, uint32_t idx, struct row_block *mem);
};

/* The key and value sizes of each map (0 for the interpreters' slots,
 * whose sizes their modules give to bm_bind). */
extern const size_t bm_key_size[BM_COUNT], bm_val_size[BM_COUNT];

struct bpfmaps {
	const struct bpfmaps_ops *ops;
	void *ctx;
	/* the rows' chunks, max_chunks of them: chunk i holds the global
	 * rows [i << DELTA_CHUNK_SHIFT, (i + 1) << DELTA_CHUNK_SHIFT); NULL
	 * until created (bm_chunk_new) */
	struct row_block **chunks;
	uint32_t max_chunks;
	uint32_t n_chunks; /* created */
	/* insertions into the array of maps (a grace period each), chunks
	 * created; chunks_new refused once: single updates from then on */
	uint64_t chunk_batches, chunks_created;
	/* created chunks the kernel refused into the array of maps when a
	 * thread of the tracer placed them (start-up): their rows are not
	 * seen by BPF (atomic: counted on that thread) */
	uint64_t chunks_unplaced;
	bool no_chunk_batch;
	struct unwind_rule *rules; /* the rules array, MAX_RULES entries */
	uint32_t max_entries[BM_COUNT];
	/* failures per map (full maps mostly), for the metrics */
	uint64_t update_errors[BM_COUNT];
	uint64_t entries[BM_COUNT]; /* entries we inserted and not removed */
};

static inline int bm_update(struct bpfmaps *bm, enum bm_map m, const void *k,
			    const void *v)
{
	int err = bm->ops->update(bm->ctx, m, k, v);

	if (err)
		bm->update_errors[m]++;
	return err;
}

/* One update per entry: the fallback of update_batch. */
int bm_update_each(const struct bpfmaps_ops *ops, void *ctx, enum bm_map m,
		   const void *keys, const void *vals, uint32_t n,
		   uint32_t *done);

/* Many updates in one call (one system call for the libbpf
 * implementation); *done as for update_batch. */
static inline int bm_update_batch(struct bpfmaps *bm, enum bm_map m,
				  const void *keys, const void *vals,
				  uint32_t n, uint32_t *done)
{
	int err = bm->ops->update_batch ?
			  bm->ops->update_batch(bm->ctx, m, keys, vals, n, done) :
			  bm_update_each(bm->ops, bm->ctx, m, keys, vals, n, done);

	if (err)
		bm->update_errors[m]++;
	return err;
}

static inline int bm_bind(struct bpfmaps *bm, enum bm_map m, const char *name,
			  size_t key_size, size_t val_size)
{
	return bm->ops->bind(bm->ctx, m, name, key_size, val_size);
}

static inline int bm_remove(struct bpfmaps *bm, enum bm_map m, const void *k)
{
	return bm->ops->remove(bm->ctx, m, k);
}

/* One removal per key: the fallback of remove_batch. */
uint32_t bm_remove_each(const struct bpfmaps_ops *ops, void *ctx,
			enum bm_map m, const void *keys, uint32_t n);

/* Many removals in one call (one system call for the libbpf
 * implementation, as long as no key is absent); how many were removed. */
static inline uint32_t bm_remove_batch(struct bpfmaps *bm, enum bm_map m,
				       const void *keys, uint32_t n)
{
	return bm->ops->remove_batch ?
		       bm->ops->remove_batch(bm->ctx, m, keys, n) :
		       bm_remove_each(bm->ops, bm->ctx, m, keys, n);
}

static inline int bm_lookup(struct bpfmaps *bm, enum bm_map m, const void *k,
			    void *v)
{
	return bm->ops->lookup(bm->ctx, m, k, v);
}

/* Create chunk idx (< max_chunks, not created yet).  Returns 0, or the
 * error of the map's creation (-ENOMEM mostly). */
int bm_chunk_new(struct bpfmaps *bm, uint32_t idx);
/* Chunks per update of the array of maps at most (64 MiB of rows): the
 * bound of the implementations' arrays; more take several. */
#define BM_CHUNK_BATCH_MAX 64

/* Create the chunks idx[0..n) (each < max_chunks, not created yet,
 * distinct) in as few updates of the array of maps as the kernel allows.
 * Returns 0, or the first error, with *done the chunks created (the
 * first ones). */
int bm_chunks_new(struct bpfmaps *bm, const uint32_t *idx, uint32_t n,
		  uint32_t *done);
/* Drop chunk idx; BPF no longer finds rows in it.  Nothing may point
 * into it any more. */
void bm_chunk_drop(struct bpfmaps *bm, uint32_t idx);

/* Global row index -> its place in the shared memory.  The chunk must
 * exist; valid until it is dropped. */
static inline uint32_t *bm_row(const struct bpfmaps *bm, uint32_t row)
{
	return &bm->chunks[row >> DELTA_CHUNK_SHIFT][0].rows[0] +
	       (row & (DELTA_CHUNK_ROWS - 1));
}

/* The number of chunks that holds max_rows rows (at least one, at most
 * DELTA_ROWS_MAX's). */
uint32_t bm_chunks_for(uint64_t max_rows);

#endif
