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
}

/* Create the lowest chunk that does not exist and make its blocks free.
 * -ENOSPC at the bound; else 0 or the map's creation error. */
static int chunk_add(struct exe_mgr *m)
{
	uint32_t c;
	int err;

	for (c = 0; c < m->bm->max_chunks && m->bm->chunks[c]; c++)
		;
	if (c == m->bm->max_chunks)
		return -ENOSPC;
	err = bm_chunk_new(m->bm, c);
	if (err) {
		log_warn("creating a chunk of stack-delta rows (%u MiB): %s",
			 (unsigned)(DELTA_CHUNK_BLOCKS * sizeof(struct row_block) >> 20),
			 strerror(-err));
		return err;
	}
	err = exe_rows_free(m, c * DELTA_CHUNK_BLOCKS, DELTA_CHUNK_BLOCKS);
	if (err) {
		bm_chunk_drop(m->bm, c);
		return err;
	}
	exe_chunk_stats(m);
	return 0;
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


static uint32_t free_blocks(const struct exe_mgr *m)
{
	uint64_t n = (uint64_t)(m->bm->max_chunks - m->bm->n_chunks) *
		     DELTA_CHUNK_BLOCKS;
	uint32_t i;

	for (i = 0; i < m->n_ext; i++)
		n += m->free_ext[i].len;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

int exe_rows_place(struct exe_mgr *m, const struct dt_file *t,
		   struct piece *pcs)
{
	uint32_t p = 0, n = 0, i, best, start, rows, b;
	int err;

	if (free_blocks(m) < BLOCKS(t->n_rows))
		return -ENOSPC;
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
			err = chunk_add(m);
			if (err)
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
