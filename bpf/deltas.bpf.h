/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stack-delta search of the native unwinder (native.bpf.c): a file's
 * address to the index of its unwind rule, and the rule.
 *
 * find_rule: the file's 64 KiB page in delta_pages (or the CPU's copy of
 * it in the scratch), the run of the page's rows that its fences pick,
 * then a binary search of that run in the rows' chunks.
 * find_rule_cached: the same through the per-CPU cache of recent answers.
 * find_rule_trail: first from the trail, the last sample's frames of the
 * same thread on this CPU.
 */
#ifndef EP_DELTAS_BPF_H
#define EP_DELTAS_BPF_H

#include "maps.bpf.h"

/* Row idx of a chunk (an inner map of delta_rows). */
static __always_inline __u32 *row_at(void *chunk, __u32 idx)
{
	__u32 blk = idx >> ROWS_PER_BLOCK_SHIFT;
	struct row_block *b = bpf_map_lookup_elem(chunk, &blk);

	if (!b)
		return NULL;
	return &b->rows[idx & (ROWS_PER_BLOCK - 1)];
}

struct rule_search {
	__u32 lo, hi, target, chunk_idx, failed;
};

/* One step of the binary search: a bpf_loop callback, which the verifier
 * checks once and inlines as a direct call in a loop of its own.  Written
 * as one loop, the verifier checked the 17 steps one by one (2,450
 * instructions of its work, a tenth of the program's).  A step costs a
 * call, paid on a rule cache miss only (about one frame in twenty once
 * the caches are warm). */
static long rule_search_step(__u32 i, void *arg)
{
	struct rule_search *rs = arg;
	void *chunk;
	__u32 mid, *row;

	if (rs->hi - rs->lo <= 1)
		return 1;
	chunk = bpf_map_lookup_elem(&delta_rows, &rs->chunk_idx);
	mid = rs->lo + (rs->hi - rs->lo) / 2;
	row = chunk ? row_at(chunk, mid) : NULL;
	if (!row) {
		rs->failed = 1;
		return 1;
	}
	if (ROW_ADDR(*row) <= rs->target)
		rs->lo = mid;
	else
		rs->hi = mid;
	return 0;
}

/* Find the rule index for an address in a file of the current mapping's
 * load (s->st.cur): -1 with *err set when there is none.  The page's entry
 * from the scratch's copy (struct page_memo) when it holds it, else from
 * "delta_pages", then copied there (unless the caches are off).  A global function: the verifier
 * checks it once, not on every path of the native step (a rule cache miss
 * pays a call; apply_rule, on every frame, stays inline). */
__noinline int find_rule(struct scratch *s, __u64 file_id, __u64 addr,
			 __u32 *err)
{
	if (!err || !s)
		return -1;
	struct page_key pk = { .file_id = file_id,
			       .page = addr >> DELTA_PAGE_BITS };
	__u32 gen = s->st.cur.load_gen,
	      m = (__u32)(((file_id ^ pk.page) * 0x9e3779b97f4a7c15ULL) >> 32) &
		  (PAGE_MEMOS - 1);
	struct page_memo *pm = &s->pmemo[m];
	struct page_info *pi = &pm->pi;
	struct rule_search rs = { .target = addr &
					    ((1u << DELTA_PAGE_BITS) - 1) };
	__u32 *row;
	void *chunk;

	/* a cache like the rule cache: -rule-cache-entries 0 turns it off
	 * with the others */
	if (rule_cache_mask && pm->file_id == file_id && pm->page == pk.page &&
	    pm->gen == gen && gen) {
		metric_inc(s, METRIC_PAGE_MEMO_HITS);
	} else {
		pi = bpf_map_lookup_elem(&delta_pages, &pk);
		if (!pi || pi->count == 0) {
			*err = METRIC_ERR_NO_PAGE;
			return -1;
		}
		if (rule_cache_mask) {
			pm->pi = *pi;
			pm->file_id = file_id;
			pm->page = pk.page;
			pm->gen = gen;
			pi = &pm->pi;
		}
	}
	if (pi->count == 0) {
		*err = METRIC_ERR_NO_PAGE;
		return -1;
	}
	/* the page's rows are all in one chunk: one lookup per frame */
	rs.chunk_idx = pi->first >> DELTA_CHUNK_SHIFT;
	chunk = bpf_map_lookup_elem(&delta_rows, &rs.chunk_idx);
	if (!chunk) {
		*err = METRIC_ERR_NO_PAGE;
		return -1;
	}
	/* invariant: row[lo] <= target (the page's first row is at 0) and
	 * the answer is in [lo, hi) */
	rs.lo = pi->first & (DELTA_CHUNK_ROWS - 1);
	rs.hi = rs.lo + pi->count;
	if (pi->count >= PAGE_FENCES) {
		__u32 b = 0, n = pi->count;

		/* the last run whose first row is at or below the target,
		 * from the fences in the entry (fence[0] is 0): five steps
		 * in the line just read */
		if (pi->fence[16] <= rs.target)
			b = 16;
		if (pi->fence[b + 8] <= rs.target)
			b += 8;
		if (pi->fence[b + 4] <= rs.target)
			b += 4;
		if (pi->fence[b + 2] <= rs.target)
			b += 2;
		if (pi->fence[b + 1] <= rs.target)
			b += 1;
		rs.hi = rs.lo + page_run(n, b + 1);
		rs.lo += page_run(n, b);
	}
	bpf_loop(DELTA_SEARCH_STEPS, rule_search_step, &rs, 0);
	row = rs.failed ? NULL : row_at(chunk, rs.lo);
	if (!row) {
		*err = METRIC_ERR_NO_PAGE;
		return -1;
	}
	return ROW_RULE(*row);
}

/* find_rule, and the rule itself copied to *out. */
static __always_inline int find_rule_copy(struct scratch *s, __u64 file_id,
					  __u64 addr, struct unwind_rule *out,
					  __u32 *err)
{
	int idx = find_rule(s, file_id, addr, err);
	__u32 key = idx;
	struct unwind_rule *r;

	if (idx < 0)
		return idx;
	r = bpf_map_lookup_elem(&rules, &key);
	if (!r) {
		*err = METRIC_ERR_BAD_RULE;
		return -1;
	}
	*out = *r;
	return idx;
}

static __always_inline __u64 rule_cache_check(__u64 file_id, __u64 addr,
					      __u32 gen, __u32 idx,
					      const struct unwind_rule *r)
{
	const __u64 *w = (const __u64 *)r;

	return file_id ^ addr ^ ((__u64)gen << 32 | idx) ^ w[0] ^ w[1] ^ w[2] ^
	       0x5bd1e9955bd1e995ULL;
}

/* find_rule_copy through the per-CPU cache of recent answers.  A sample's
 * return addresses recur from one sample to the next (the same callers of
 * the same hot code), and one cached answer, its rule inline, replaces a
 * page lookup, a binary search over rows and a read of the rules table,
 * all cold by the next sample. */
static __always_inline int find_rule_cached(struct scratch *s, __u64 file_id,
					    __u64 addr,
					    struct unwind_rule *out,
					    __u32 *err)
{
	struct ustate *st = &s->st;
	__u32 gen = st->cur.load_gen, slot, idx;
	struct rule_cache_ent *e;
	int rule;

	if (!rule_cache_mask)
		return find_rule_copy(s, file_id, addr, out, err);
	/* the page of entries (4 KiB) from the file and the address's 64 KiB
	 * region, the line in it from the address: the frames of a sample,
	 * in a few files and regions, touch a few pages of the cache, not
	 * one each (a TLB miss each, timed at ~100 ns a frame) */
	slot = ((__u32)(((file_id ^ (addr >> 16)) * 0x9e3779b97f4a7c15ULL) >>
			32)
		<< RULE_CACHE_PAGE_SHIFT |
		(__u32)((addr * 0x9e3779b97f4a7c15ULL) >>
			(64 - RULE_CACHE_PAGE_SHIFT))) &
	       rule_cache_mask;
	slot |= st->cpu << rule_cache_shift;
	e = bpf_map_lookup_elem(&rule_cache, &slot);
	if (!e)
		return find_rule_copy(s, file_id, addr, out, err);
	if (e->file_id == file_id && e->addr == addr && e->gen == gen) {
		idx = e->idx;
		*out = e->rule;
		if (e->check == rule_cache_check(file_id, addr, gen, idx, out)) {
			st->n_cached++;
			return idx;
		}
	}
	rule = find_rule_copy(s, file_id, addr, out, err);
	if (rule >= 0) {
		e->file_id = file_id;
		e->addr = addr;
		e->idx = rule;
		e->gen = gen;
		e->rule = *out;
		e->check = rule_cache_check(file_id, addr, gen, rule, out);
	}
	return rule;
}

/* find_rule_cached, first from the trail (struct trail_ent) when the last
 * sample on this CPU was of this thread in the same mappings: the entry
 * of the frame at this stack pointer and pc, found by passing over the
 * entries above it (both stacks are in the order of their stack
 * pointers).  The result goes into this sample's trail. */
static __always_inline int find_rule_trail(struct scratch *s, __u64 file_id,
					   __u64 addr, __u64 pc,
					   struct unwind_rule *out, __u32 *err)
{
	struct ustate *st = &s->st;
	__u64 sp = st->regs[R_SP];
	__u32 last = s->trail_last & 1, c, n, k;
	struct trail_ent *e;
	int rule = -1;

	if (!rule_cache_mask)
		return find_rule_copy(s, file_id, addr, out, err);
	if (st->trail_state == TRAIL_UNCHECKED)
		st->trail_state = s->trail_hdr[last].tid == s->hdr.tid &&
					  s->trail_hdr[last].pid == st->pid &&
					  s->trail_hdr[last].map_gen ==
						  st->map_gen ?
				  TRAIL_VALID :
				  TRAIL_INVALID;
	if (st->trail_state == TRAIL_VALID) {
		n = s->trail_hdr[last].n;
		c = st->trail_c;
		for (k = 0; k < TRAIL_SKIP; k++) {
			/* opaque to the compiler: the check below is on the
			 * register the index uses (6.1's verifier does not
			 * carry a check of c over to c + 1) */
			barrier_var(c);
			if (c >= n || c >= TRAIL_MAX)
				break;
			e = &s->trail[last][c];
			if (e->sp >= sp)
				break;
			c++;
		}
		barrier_var(c);
		st->trail_c = c;
		if (c < n && c < TRAIL_MAX) {
			e = &s->trail[last][c];
			if (e->sp == sp && e->pc == pc &&
			    e->gen == st->cur.load_gen) {
				rule = e->idx;
				*out = e->rule;
				st->n_trail++;
				st->trail_c = c + 1;
			}
		}
	}
	if (rule < 0)
		rule = find_rule_cached(s, file_id, addr, out, err);
	k = st->trail_n;
	if (rule >= 0 && k < TRAIL_MAX) {
		e = &s->trail[last ^ 1][k];
		e->sp = sp;
		e->pc = pc;
		e->gen = st->cur.load_gen;
		e->idx = rule;
		e->rule = *out;
		st->trail_n = k + 1;
	}
	return rule;
}

#endif
