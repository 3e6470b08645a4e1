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
