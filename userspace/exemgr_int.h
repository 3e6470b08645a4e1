/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to exemgr.c (files, rules, loading) and exemgr_rows.c (the
 * allocator of the rows' blocks over the BPF maps' chunks): the manager
 * itself and the allocator's calls.  Not for other modules.
 */
#ifndef EP_EXEMGR_INT_H
#define EP_EXEMGR_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "deltas.h"
#include "exemgr.h"
#include "hashmap.h"

/* A run of blocks of ROWS_PER_BLOCK rows.  A block's global index is
 * chunk * DELTA_CHUNK_BLOCKS + its index in the chunk. */
struct extent {
	uint32_t start, len;
};

struct exe_mgr {
	struct bpfmaps *bm;
	uint32_t load_gen; /* the last exe_file.load_gen given */
	struct store *store;
	struct hm by_id;    /* id64 -> struct exe_file * */
	struct hm by_inode; /* hash(dev, ino, size, mtime) -> struct exe_file * */
	struct hm rules;    /* hash(rule) -> index */
	uint32_t n_rules;   /* indices handed out so far (the high mark) */
	/* per rule: the loaded files that hold it (the fixed rules are
	 * never freed), and the owner charged for it (0: root, no one) */
	uint32_t *rule_refs;
	uid_t *rule_owner;
	/* indices freed, oldest first: reused only once the high mark is
	 * at MAX_RULES, and the oldest first, so that a sample that read a
	 * row of an unloaded file just before its pages went finds the
	 * INVALID rule there, not another file's */
	uint16_t *rule_free;
	uint32_t free_head, n_free;
	struct hm owners; /* uid (not root) -> struct owner_use * */
	unsigned share_div[EXE_TABLE_COUNT][2];
	uint32_t share_warnings; /* files named in an "over its share" warning */
	/* While a file loads, its rule i -> the global index << 16 (the
	 * row's rule bits); RULE_IDX_INVALID (0) past its rules, so any
	 * 16-bit rule field of a row reads an entry. */
	uint32_t *rule_hi;
	/* free blocks of the chunks that exist, sorted by start; an extent
	 * never crosses a chunk's end, so its rows are in one chunk */
	struct extent *free_ext;
	uint32_t n_ext, cap_ext;
	uint32_t full_warnings; /* files named in a "rows full" warning */
	/* the most chunks in use seen by exe_chunks_remember, and what it
	 * wrote in the cache this run + 1 (0: nothing yet) */
	uint32_t chunks_in_use_max, hint_written;
	struct exe_stats st;
	exe_detect_fn detect;
	void *detect_arg;
	bool fp_only;
	bool no_chunk_hint; /* exe_mgr_set_chunk_hint(false) */
};

#define BLOCKS(rows) (((rows) + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK)
/* Files named in a warning when their rows do not fit; the rest are
 * counted only. */
#define ROWS_FULL_WARNINGS 20

/* Where a file's rows went: pages [p0, p1) from block `block` on. */
struct piece {
	uint32_t block, n_blocks, p0, p1;
};

/* ---- the rows allocator (exemgr_rows.c) ------------------------------ */

/* Give back n blocks from start, merged with their free neighbours
 * inside one chunk.  0, or -ENOMEM (the blocks are then lost). */
int exe_rows_free(struct exe_mgr *m, uint32_t start, uint32_t n);
/* Place a file's rows: in one extent if one holds them; else, page by
 * page, over the largest free extents (each page's rows in one, so in
 * one chunk), creating chunks when none takes the next page.  Fills
 * pcs (n_pages entries at most).  Returns the number of pieces, or
 * -ENOSPC (the bound: nothing is taken) or a chunk's creation error. */
int exe_rows_place(struct exe_mgr *m, const struct dt_file *t,
		   struct piece *pcs);
/* Drop the chunks no file uses, so that memory goes back to the kernel
 * after a burst of large files. */
void exe_chunks_trim(struct exe_mgr *m);
/* The chunk counts in the stats. */
void exe_chunk_stats(struct exe_mgr *m);

#endif
