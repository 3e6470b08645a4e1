// SPDX-License-Identifier: Apache-2.0
/* What every bpfmaps implementation shares: batches one by one, the rows'
 * chunks.  The in-memory implementation is the tests'
 * (tests/unit/bpfmaps_mem.c). */
#include "bpfmaps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const size_t bm_key_size[BM_COUNT] = {
	[BM_PID_INFO] = 4,
	[BM_MAPPINGS] = sizeof(struct mapping_key),
	[BM_PAGES] = sizeof(struct page_key),
	[BM_RULES] = 4,
	[BM_PID_FILTER] = 4,
	[BM_CGROUP_FILTER] = 8,
};

const size_t bm_val_size[BM_COUNT] = {
	[BM_PID_INFO] = sizeof(struct pid_info),
	[BM_MAPPINGS] = sizeof(struct mapping_info),
	[BM_PAGES] = sizeof(struct page_info),
	[BM_RULES] = sizeof(struct unwind_rule),
	[BM_PID_FILTER] = 1,
	[BM_CGROUP_FILTER] = 1,
};

int bm_update_each(const struct bpfmaps_ops *ops, void *ctx, enum bm_map m,
		   const void *keys, const void *vals, uint32_t n,
		   uint32_t *done)
{
	const uint8_t *k = keys, *v = vals;
	uint32_t i;
	int err;

	for (i = 0; i < n; i++) {
		err = ops->update(ctx, m, k + i * bm_key_size[m],
				  v + i * bm_val_size[m]);
		if (err) {
			*done = i;
			return err;
		}
	}
	*done = n;
	return 0;
}

uint32_t bm_remove_each(const struct bpfmaps_ops *ops, void *ctx,
			enum bm_map m, const void *keys, uint32_t n)
{
	const uint8_t *k = keys;
	uint32_t i, removed = 0;

	for (i = 0; i < n; i++)
		removed += ops->remove(ctx, m, k + i * bm_key_size[m]) == 0;
	return removed;
}

uint32_t bm_chunks_for(uint64_t max_rows)
{
	if (max_rows > DELTA_ROWS_MAX)
		max_rows = DELTA_ROWS_MAX;
	if (max_rows < DELTA_CHUNK_ROWS)
		max_rows = DELTA_CHUNK_ROWS;
	return (uint32_t)((max_rows + DELTA_CHUNK_ROWS - 1) >> DELTA_CHUNK_SHIFT);
}

int bm_chunk_new(struct bpfmaps *bm, uint32_t idx)
{
	struct row_block *mem = NULL;
	int err;

	if (idx >= bm->max_chunks || bm->chunks[idx])
		return -EINVAL;
	err = bm->ops->chunk_new(bm->ctx, idx, &mem);
	if (err)
		return err;
	bm->chunks[idx] = mem;
	bm->n_chunks++;
	bm->chunk_batches++;
	bm->chunks_created++;
	return 0;
}

int bm_chunks_new(struct bpfmaps *bm, const uint32_t *idx, uint32_t n,
		  uint32_t *done)
{
	struct row_block *mem[BM_CHUNK_BATCH_MAX];
	uint32_t i, k, got;
	int err;

	*done = 0;
	for (i = 0; i < n; i++)
		if (idx[i] >= bm->max_chunks || bm->chunks[idx[i]])
			return -EINVAL;
	while (*done < n && bm->ops->chunks_new && !bm->no_chunk_batch &&
	       n - *done > 1) {
		k = n - *done < BM_CHUNK_BATCH_MAX ? n - *done : BM_CHUNK_BATCH_MAX;
		got = 0;
		err = bm->ops->chunks_new(bm->ctx, idx + *done, k, mem, &got);
		for (i = 0; i < got; i++)
			bm->chunks[idx[*done + i]] = mem[i];
		bm->n_chunks += got;
		bm->chunks_created += got;
		bm->chunk_batches += got > 0;
		*done += got;
		if (err == -EOPNOTSUPP && !got) {
			/* an older kernel: one update per chunk from now on */
			bm->no_chunk_batch = true;
			break;
		}
		if (err)
			return err;
	}
	for (; *done < n; ++*done) {
		err = bm_chunk_new(bm, idx[*done]);
		if (err)
			return err;
	}
	return 0;
}

void bm_chunk_drop(struct bpfmaps *bm, uint32_t idx)
{
	if (idx >= bm->max_chunks || !bm->chunks[idx])
		return;
	bm->ops->chunk_drop(bm->ctx, idx, bm->chunks[idx]);
	bm->chunks[idx] = NULL;
	bm->n_chunks--;
}
