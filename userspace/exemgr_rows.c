// SPDX-License-Identifier: Apache-2.0
/*
 * The rows' allocator: blocks of ROWS_PER_BLOCK rows over the chunks of
 * the BPF rows map, free extents sorted by start, chunks created as files
 * need them and dropped when none uses them.
 */
#include "exemgr_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arr.h"
#include "log.h"
#include "store.h"

static void ext_take(struct exe_mgr *m, uint32_t i, uint32_t n)
{
	m->free_ext[i].start += n;
	m->free_ext[i].len -= n;
	if (!m->free_ext[i].len) {
		memmove(&m->free_ext[i], &m->free_ext[i + 1],
			(m->n_ext - i - 1) * sizeof(*m->free_ext));
		m->n_ext--;
	}
}

/* n blocks in one extent, first fit.  -ENOSPC when no extent has them. */
static int rows_alloc(struct exe_mgr *m, uint32_t n, uint32_t *start)
{
	uint32_t i;

	for (i = 0; i < m->n_ext; i++) {
		if (m->free_ext[i].len < n)
			continue;
		*start = m->free_ext[i].start;
		ext_take(m, i, n);
		return 0;
	}
	return -ENOSPC;
}

int exe_rows_free(struct exe_mgr *m, uint32_t start, uint32_t n)
{
	uint32_t i = 0;
	/* neighbours merge unless the point between them is a chunk's
	 * start: the blocks on either side live in two maps */
	bool join_prev = start % DELTA_CHUNK_BLOCKS != 0;
	bool join_next = (start + n) % DELTA_CHUNK_BLOCKS != 0;

	if (!n)
		return 0;
	while (i < m->n_ext && m->free_ext[i].start < start)
		i++;
	if (join_prev && i > 0 &&
	    m->free_ext[i - 1].start + m->free_ext[i - 1].len == start) {
		m->free_ext[i - 1].len += n;
		if (join_next && i < m->n_ext && start + n == m->free_ext[i].start) {
			m->free_ext[i - 1].len += m->free_ext[i].len;
			memmove(&m->free_ext[i], &m->free_ext[i + 1],
				(m->n_ext - i - 1) * sizeof(*m->free_ext));
			m->n_ext--;
		}
		return 0;
	}
	if (join_next && i < m->n_ext && start + n == m->free_ext[i].start) {
		m->free_ext[i].start = start;
		m->free_ext[i].len += n;
		return 0;
	}
	if (ARR_PUSH(m->free_ext, m->n_ext, m->cap_ext, ARR_NO_LIMIT))
		return -ENOMEM; /* leaks the range; counted nowhere */
	memmove(&m->free_ext[i + 1], &m->free_ext[i],
		(m->n_ext - i) * sizeof(*m->free_ext));
	m->free_ext[i].start = start;
	m->free_ext[i].len = n;
	m->n_ext++;
	return 0;
}

void exe_chunk_stats(struct exe_mgr *m)
{
	m->st.row_chunks = m->bm->n_chunks;
	m->st.rows_alloc = (uint64_t)m->bm->n_chunks * DELTA_CHUNK_ROWS;
	m->st.chunk_batches = m->bm->chunk_batches;
	m->st.chunks_created = m->bm->chunks_created;
	m->st.chunks_unplaced =
		__atomic_load_n(&m->bm->chunks_unplaced, __ATOMIC_RELAXED);
}

/* Create the n lowest chunks that do not exist (in one update of the
 * array of maps when the kernel can) and make their blocks free.  Returns
 * the chunks added, or -ENOSPC when none could be (the bound), or the
 * map's creation error when none was made. */
static int chunks_add(struct exe_mgr *m, uint32_t n)
{
	uint32_t idx[BM_CHUNK_BATCH_MAX], c = 0, k, i, done, added = 0;
	int err = 0;

	while (added < n && !err) {
		for (k = 0; k < n - added && k < BM_CHUNK_BATCH_MAX &&
			    c < m->bm->max_chunks;
		     c++)
			if (!m->bm->chunks[c])
				idx[k++] = c;
		if (!k) {
			err = -ENOSPC;
			break;
		}
		err = bm_chunks_new(m->bm, idx, k, &done);
		if (err)
			log_warn("creating %u chunks of stack-delta rows (%u MiB each): %s",
				 k - done,
				 (unsigned)(DELTA_CHUNK_BLOCKS *
					    sizeof(struct row_block) >> 20),
				 strerror(-err));
		for (i = 0; i < done; i++) {
			if (exe_rows_free(m, idx[i] * DELTA_CHUNK_BLOCKS,
					  DELTA_CHUNK_BLOCKS)) {
				bm_chunk_drop(m->bm, idx[i]);
				err = -ENOMEM;
				continue;
			}
			added++;
		}
	}
	exe_chunk_stats(m);
	return added ? (int)added : err;
}

void exe_chunks_trim(struct exe_mgr *m)
{
	uint32_t i = 0;

	while (i < m->n_ext) {
		struct extent *e = &m->free_ext[i];

		if (e->len != DELTA_CHUNK_BLOCKS) {
			i++;
			continue;
		}
		bm_chunk_drop(m->bm, e->start / DELTA_CHUNK_BLOCKS);
		ext_take(m, i, e->len);
	}
	exe_chunk_stats(m);
}


/* The free blocks of the chunks that exist. */
static uint64_t ext_blocks(const struct exe_mgr *m)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < m->n_ext; i++)
		n += m->free_ext[i].len;
	return n;
}

/* ... and of those that may still be created. */
static uint32_t free_blocks(const struct exe_mgr *m)
{
	uint64_t n = (uint64_t)(m->bm->max_chunks - m->bm->n_chunks) *
		     DELTA_CHUNK_BLOCKS + ext_blocks(m);

	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

int exe_rows_place(struct exe_mgr *m, const struct dt_file *t,
		   struct piece *pcs)
{
	uint32_t p = 0, n = 0, i, best, start, rows, b;
	uint64_t need, have;
	int err;

	if (free_blocks(m) < BLOCKS(t->n_rows))
		return -ENOSPC;
	/* the chunks it needs in any case, at once: one grace period for
	 * all of them (the growth below is for what fragmentation adds) */
	need = BLOCKS(t->n_rows);
	have = ext_blocks(m);
	if (have < need) {
		err = chunks_add(m, (uint32_t)((need - have + DELTA_CHUNK_BLOCKS - 1) /
					     DELTA_CHUNK_BLOCKS));
		if (err < 0)
			return err;
	}
	while (p < t->n_pages) {
		rows = t->n_rows - t->pages[p].first;
		if (rows_alloc(m, BLOCKS(rows), &start) == 0) {
			pcs[n++] = (struct piece){ start, BLOCKS(rows), p,
						   t->n_pages };
			return (int)n;
		}
		for (i = 1, best = 0; i < m->n_ext; i++)
			if (m->free_ext[i].len > m->free_ext[best].len)
				best = i;
		/* the pages that fit in the largest extent */
		rows = 0;
		for (i = p; i < t->n_pages && m->n_ext; i++) {
			if (BLOCKS(rows + t->pages[i].count) > m->free_ext[best].len)
				break;
			rows += t->pages[i].count;
		}
		if (i == p) {
			/* not even one page: grow (a page fits in a chunk) */
			err = chunks_add(m, 1);
			if (err < 0)
				goto fail;
			continue;
		}
		b = BLOCKS(rows);
		pcs[n++] = (struct piece){ m->free_ext[best].start, b, p, i };
		ext_take(m, best, b);
		p = i;
	}
	return (int)n;
fail:
	while (n--)
		exe_rows_free(m, pcs[n].block, pcs[n].n_blocks);
	return err;
}

/* ---- the start-up hint: how many chunks the last run used ------------- */

/* The record's fixed key (a file id never is: ids are hashes) */
static const uint8_t hint_id[16] = "rows:chunk-hint";
#define HINT_VERSION 1

struct chunk_hint {
	uint32_t version, chunks;
};

/* The chunks that hold a file's rows (not wholly free). */
static uint32_t chunks_in_use(const struct exe_mgr *m)
{
	uint32_t i, n = m->bm->n_chunks;

	for (i = 0; i < m->n_ext; i++)
		n -= m->free_ext[i].len == DELTA_CHUNK_BLOCKS;
	return n;
}

uint32_t exe_chunks_prefill(struct exe_mgr *m)
{
	struct chunk_hint h;
	void *val = NULL;
	size_t len = 0;
	int added;

	if (!m->store || m->fp_only || m->no_chunk_hint ||
	    store_get(m->store, hint_id, STORE_KIND_ROW_CHUNKS, &val, &len))
		return 0;
	/* anything else than what we write reads as no hint */
	if (len != sizeof(h)) {
		free(val);
		return 0;
	}
	memcpy(&h, val, sizeof(h));
	free(val);
	if (h.version != HINT_VERSION || h.chunks <= m->bm->n_chunks)
		return 0;
	if (h.chunks > m->bm->max_chunks)
		h.chunks = m->bm->max_chunks;
	added = chunks_add(m, h.chunks - m->bm->n_chunks);
	if (added <= 0)
		return 0;
	m->st.chunks_prefilled += (uint32_t)added;
	return (uint32_t)added;
}

void exe_chunks_remember(struct exe_mgr *m)
{
	struct chunk_hint h = { HINT_VERSION, 0 };
	uint32_t now = chunks_in_use(m);

	if (now > m->chunks_in_use_max)
		m->chunks_in_use_max = now;
	if (!m->store || m->fp_only || m->no_chunk_hint ||
	    m->hint_written == m->chunks_in_use_max + 1)
		return;
	h.chunks = m->chunks_in_use_max;
	if (!store_put(m->store, hint_id, STORE_KIND_ROW_CHUNKS, &h, sizeof(h)))
		m->hint_written = h.chunks + 1;
}
