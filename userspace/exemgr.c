// SPDX-License-Identifier: Apache-2.0
#include "exemgr.h"
#include "exemgr_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "deltas.h"
#include "elfmap.h"
#include "hashmap.h"
#include "log.h"
#include "store.h"
#include "symbols.h"

void exe_mgr_set_fp_only(struct exe_mgr *m, bool on)
{
	m->fp_only = on;
}

void exe_mgr_set_chunk_hint(struct exe_mgr *m, bool on)
{
	m->no_chunk_hint = !on;
}

void exe_mgr_set_share(struct exe_mgr *m, unsigned table, unsigned file_div,
		       unsigned owner_div)
{
	if (table < EXE_TABLE_COUNT) {
		m->share_div[table][0] = file_div;
		m->share_div[table][1] = owner_div;
	}
}

const char *exe_table_name(unsigned table)
{
	static const char *const names[EXE_TABLE_COUNT] = {
		[EXE_TABLE_RULES] = "rules",
		[EXE_TABLE_ROWS] = "rows",
		[EXE_TABLE_PAGES] = "pages",
	};

	return table < EXE_TABLE_COUNT ? names[table] : "?";
}

void exe_mgr_set_detect(struct exe_mgr *m, exe_detect_fn fn, void *arg)
{
	m->detect = fn;
	m->detect_arg = arg;
}

uint64_t exe_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- rules ------------------------------------------------------------- */

/*
 * Fair shares of the shared tables, as divisors of each table's capacity:
 * { one file, the files of one owner other than root }.  A file that
 * would take more is not loaded (frame-pointer walk) and counted, so the
 * files of one user cannot fill a table for everyone.  The largest files
 * of a desktop stay well under them: libclang-cpp takes 1109 rules of
 * 65536 (1/59) and 1.0 M rows of the default 8 Mi (1/8), libLLVM 809
 * pages of 65536 (1/81).  Root's files (the system's) have no owner
 * share: only the file's own.
 */
static const unsigned share_default[EXE_TABLE_COUNT][2] = {
	[EXE_TABLE_RULES] = { 8, 4 },
	[EXE_TABLE_ROWS] = { 4, 2 },
	[EXE_TABLE_PAGES] = { 8, 4 },
};
/* Files named in a warning when over their share; the rest are counted
 * only. */
#define SHARE_WARNINGS 20

/* What the files of one owner take of each table (rules: those its files
 * added, until freed). */
struct owner_use {
	uint64_t use[EXE_TABLE_COUNT];
};

/* The owner's record, created when create is set; NULL for root, or when
 * there is none (or no memory: the owner is then not limited, and its
 * files stay under their own share). */
static struct owner_use *owner_get(struct exe_mgr *m, uid_t uid, bool create)
{
	struct owner_use *o;
	uint64_t *slot;
	bool added;

	if (uid == 0)
		return NULL;
	if (!create)
		return hm_get_ptr(&m->owners, uid);
	slot = hm_slot(&m->owners, uid, &added);
	if (!slot || !added)
		return slot ? (struct owner_use *)(uintptr_t)*slot : NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		hm_del(&m->owners, uid);
	else
		*slot = (uintptr_t)o;
	return o;
}

/* Take back n of table from uid's use; the record goes when empty. */
static void owner_release(struct exe_mgr *m, uid_t uid, unsigned table,
			  uint64_t n)
{
	struct owner_use *o = owner_get(m, uid, false);
	unsigned k;

	if (!o)
		return;
	o->use[table] -= n < o->use[table] ? n : o->use[table];
	for (k = 0; k < EXE_TABLE_COUNT && !o->use[k]; k++)
		;
	if (k == EXE_TABLE_COUNT) {
		hm_del(&m->owners, uid);
		free(o);
	}
}

/* The global index of a rule, or -1; *key is its hash, the rules map's
 * key.  A rule whose hash another rule holds (one in 2^64) is found
 * nowhere: each file that has it takes an index of its own, none shared. */
static int rule_find(const struct exe_mgr *m, const struct unwind_rule *r,
		     uint64_t *key)
{
	uint64_t v;

	*key = hm_hash(r, sizeof(*r), 0);
	if (hm_get(&m->rules, *key, &v) &&
	    !memcmp(&m->bm->rules[v], r, sizeof(*r)))
		return (int)v;
	return -1;
}

/* A reference on a rule's global index for a file of owner, adding the
 * rule to the table (charged to owner) when new; RULE_IDX_INVALID when
 * the table is full. */
static uint32_t rule_intern(struct exe_mgr *m, const struct unwind_rule *r,
			    uid_t owner)
{
	struct owner_use *o;
	bool added;
	uint32_t idx;
	/* one search: the slot of the rule's hash, taken when new */
	uint64_t key = hm_hash(r, sizeof(*r), 0);
	uint64_t *slot = hm_slot(&m->rules, key, &added);

	if (slot && !added && !memcmp(&m->bm->rules[*slot], r, sizeof(*r))) {
		idx = (uint32_t)*slot;
		if (idx >= RULE_FIXED_COUNT)
			m->rule_refs[idx]++;
		return idx;
	}
	if (m->n_rules < MAX_RULES) {
		idx = m->n_rules;
	} else if (m->n_free) {
		idx = m->rule_free[m->free_head];
	} else {
		if (added)
			hm_del(&m->rules, key);
		m->st.rules_full++;
		return RULE_IDX_INVALID;
	}
	if (!slot)
		return RULE_IDX_INVALID; /* the file is loaded with invalid rows */
	/* a hash another rule holds keeps pointing there: this one is
	 * found nowhere (rule_find) */
	if (added)
		*slot = idx;
	if (idx == m->n_rules) {
		m->n_rules++;
	} else {
		m->free_head = (m->free_head + 1) % MAX_RULES;
		m->n_free--;
	}
	/* shared with the kernel: reachable once a page entry (a system
	 * call, so after this store) leads to a row that names it */
	m->bm->rules[idx] = *r;
	m->rule_refs[idx] = 1;
	m->rule_owner[idx] = owner;
	o = owner_get(m, owner, true);
	if (o)
		o->use[EXE_TABLE_RULES]++;
	m->st.rules_used = m->n_rules - m->n_free;
	return idx;
}

/* Drop a file's reference on rule idx; the last one frees it. */
static void rule_put(struct exe_mgr *m, uint32_t idx)
{
	uint64_t key;

	if (idx < RULE_FIXED_COUNT || !m->rule_refs[idx] || --m->rule_refs[idx])
		return;
	if (rule_find(m, &m->bm->rules[idx], &key) == (int)idx)
		hm_del(&m->rules, key);
	/* no page leads to a row naming it any more; a sample that read
	 * such a row just before finds an invalid rule, not a wrong one */
	m->bm->rules[idx] = dt_fixed_rules[RULE_IDX_INVALID];
	owner_release(m, m->rule_owner[idx], EXE_TABLE_RULES, 1);
	m->rule_owner[idx] = 0;
	m->rule_free[(m->free_head + m->n_free) % MAX_RULES] = (uint16_t)idx;
	m->n_free++;
	m->st.rules_freed++;
	m->st.rules_used = m->n_rules - m->n_free;
}

static void put_rules(struct exe_mgr *m, struct exe_file *f)
{
	uint32_t i;

	for (i = 0; i < f->n_rule_idx; i++)
		rule_put(m, f->rule_idx[i]);
	free(f->rule_idx);
	f->rule_idx = NULL;
	f->n_rule_idx = 0;
}

int exe_mgr_new(struct bpfmaps *bm, struct store *store, struct exe_mgr **out)
{
	struct exe_mgr *m = calloc(1, sizeof(*m));
	uint32_t i;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->bm = bm;
	m->store = store;
	memcpy(m->share_div, share_default, sizeof(m->share_div));
	m->rule_hi = calloc(1u << 16, sizeof(*m->rule_hi));
	m->rule_refs = calloc(MAX_RULES, sizeof(*m->rule_refs));
	m->rule_owner = calloc(MAX_RULES, sizeof(*m->rule_owner));
	m->rule_free = calloc(MAX_RULES, sizeof(*m->rule_free));
	if (!m->rule_hi || !m->rule_refs || !m->rule_owner || !m->rule_free) {
		exe_mgr_free(m);
		return -ENOMEM;
	}
	/* into empty tables: only an allocation can fail */
	for (i = 0; i < RULE_FIXED_COUNT; i++)
		if (rule_intern(m, &dt_fixed_rules[i], 0) != i) {
			exe_mgr_free(m);
			return -ENOMEM;
		}
	m->st.rows_cap = (uint64_t)bm->max_chunks * DELTA_CHUNK_ROWS;
	exe_chunk_stats(m);
	*out = m;
	return 0;
}

static void file_free(struct exe_file *f)
{
	unsigned k;

	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	symb_free(f->syms);
	for (k = 0; k < INTERP_COUNT; k++)
		free(f->interp_data[k]);
	free(f->row_ext);
	free(f->rule_idx);
	free(f->pages);
	free(f->path);
	free(f);
}

void exe_mgr_free(struct exe_mgr *m)
{
	uint32_t it = 0;
	uint64_t v;

	if (!m)
		return;
	while (hm_next(&m->by_id, &it, NULL, &v))
		file_free((struct exe_file *)(uintptr_t)v);
	for (it = 0; hm_next(&m->owners, &it, NULL, &v);)
		free((void *)(uintptr_t)v);
	/* the chunks are ours (their page entries stay: BPF finds no chunk
	 * behind them) */
	for (it = 0; it < m->bm->max_chunks; it++)
		bm_chunk_drop(m->bm, it);
	hm_free(&m->by_id);
	hm_free(&m->by_inode);
	hm_free(&m->rules);
	hm_free(&m->owners);
	free(m->rule_hi);
	free(m->rule_refs);
	free(m->rule_owner);
	free(m->rule_free);
	free(m->free_ext);
	free(m);
}

/* ---- loading ---------------------------------------------------------- */

static void free_row_ext(struct exe_mgr *m, struct exe_file *f)
{
	uint32_t i;

	for (i = 0; i < f->n_row_ext; i++)
		exe_rows_free(m, f->row_ext[i].block, f->row_ext[i].n_blocks);
	free(f->row_ext);
	f->row_ext = NULL;
	f->n_row_ext = 0;
	f->n_blocks = 0;
}

static void unload_deltas(struct exe_mgr *m, struct exe_file *f)
{
	uint32_t i;

	if (f->deltas != EXE_DELTAS_LOADED)
		return;
	for (i = 0; i < f->n_pages; i++) {
		struct page_key k = { .file_id = f->id64, .page = f->pages[i] };
		bm_remove(m->bm, BM_PAGES, &k);
	}
	m->st.rows_used -= (uint64_t)f->n_blocks * ROWS_PER_BLOCK;
	owner_release(m, f->owner, EXE_TABLE_ROWS,
		      (uint64_t)f->n_blocks * ROWS_PER_BLOCK);
	owner_release(m, f->owner, EXE_TABLE_PAGES, f->n_pages);
	free_row_ext(m, f);
	put_rules(m, f);
	m->st.loaded--;
	m->st.unloaded++;
	free(f->pages);
	f->pages = NULL;
	f->n_pages = 0;
	f->deltas = EXE_DELTAS_NONE;
}

/* The bound is reached (or a chunk could not be created): the file is
 * walked by frame pointer.  Loud: counted, and the file named. */
static void rows_full(struct exe_mgr *m, const struct exe_file *f,
		      const struct dt_file *t, int err)
{
	bool last;

	m->st.rows_full++;
	if (m->full_warnings == ROWS_FULL_WARNINGS)
		return;
	last = ++m->full_warnings == ROWS_FULL_WARNINGS;
	log_warn("stack-delta rows: %s (%u rows) does not fit (%s; %llu of at "
		 "most %llu rows in use) and is walked by frame pointer: raise "
		 "-max-delta-rows%s",
		 f->path, t->n_rows,
		 err == -ENOSPC ? "bound reached" : strerror(-err),
		 (unsigned long long)m->st.rows_used,
		 (unsigned long long)m->st.rows_cap,
		 last ? "; further files that do not fit are only counted "
			"(map_full_total{map=\"delta_rows\"})" :
			"");
}

/* The capacity of a shared table. */
static uint64_t table_cap(const struct exe_mgr *m, unsigned table)
{
	switch (table) {
	case EXE_TABLE_RULES:
		return MAX_RULES - RULE_FIXED_COUNT;
	case EXE_TABLE_ROWS:
		return m->st.rows_cap;
	default:
		return m->bm->max_entries[BM_PAGES];
	}
}

/* Would f, loading t, take more than its share of a table, or than its
 * owner's?  Then it is counted, named (the first SHARE_WARNINGS files)
 * and true is returned: the file is walked by frame pointer.  A file
 * whose rows exceed the whole bound is left to rows_place, which counts
 * it as rows_full.  Also true, counted as rules_full, when its new rules
 * do not fit in what the table has free: the file is refused whole
 * rather than loaded with invalid rows. */
static bool over_share(struct exe_mgr *m, const struct exe_file *f,
		       const struct dt_file *t)
{
	uint64_t need[EXE_TABLE_COUNT], key, cap, lim, take = 0;
	const struct owner_use *o = owner_get(m, f->owner, false);
	unsigned k, who;
	uint32_t i;

	need[EXE_TABLE_RULES] = 0;
	for (i = RULE_FIXED_COUNT; i < t->n_rules; i++)
		need[EXE_TABLE_RULES] += rule_find(m, &t->rules[i], &key) < 0;
	need[EXE_TABLE_ROWS] = (uint64_t)BLOCKS(t->n_rows) * ROWS_PER_BLOCK;
	need[EXE_TABLE_PAGES] = t->n_pages;
	for (k = 0; k < EXE_TABLE_COUNT; k++) {
		cap = table_cap(m, k);
		if (k == EXE_TABLE_ROWS && need[k] > cap)
			continue;
		for (who = 0; who < 2; who++) {
			if (!m->share_div[k][who] || (who == 1 && f->owner == 0))
				continue;
			lim = cap / m->share_div[k][who];
			take = need[k] + (who == 1 && o ? o->use[k] : 0);
			if (take > lim)
				goto over;
		}
	}
	if (need[EXE_TABLE_RULES] > MAX_RULES - (m->n_rules - m->n_free)) {
		m->st.rules_full++;
		log_warn_once("rule table full (%u rules): files are walked by "
			      "frame pointer (map_full_total{map=\"rules\"})",
			      MAX_RULES);
		return true;
	}
	return false;
over:
	m->st.over_share[k][who]++;
	if (m->share_warnings < SHARE_WARNINGS) {
		bool last = ++m->share_warnings == SHARE_WARNINGS;

		log_warn("stack deltas: %s would take %llu %s%s (more than %s "
			 "1/%u of %llu) and is walked by frame pointer%s",
			 f->path, (unsigned long long)take, exe_table_name(k),
			 who ? " with its owner's other files" : "",
			 who ? "an owner's" : "a file's", m->share_div[k][who],
			 (unsigned long long)table_cap(m, k),
			 last ? "; further files over their share are only "
				"counted (files_over_share_total)" :
				"");
	}
	return true;
}

/* Copy the rows of pages [p0, p1) of t to dst, rules renumbered: t itself
 * for a file in one piece, else a view of those pages whose first rows
 * count from the piece's start (scratch: n_pages entries). */
static int copy_piece(const struct dt_file *t, const struct piece *pc,
		      const uint32_t *rule_hi, struct dt_page *scratch,
		      uint32_t *dst)
{
	struct dt_file sub = *t;
	uint32_t i, first = t->pages[pc->p0].first;

	if (pc->p0 == 0 && pc->p1 == t->n_pages)
		return dt_copy_rows(t, rule_hi, dst);
	for (i = pc->p0; i < pc->p1; i++) {
		scratch[i - pc->p0] = t->pages[i];
		scratch[i - pc->p0].first -= first;
	}
	sub.pages = scratch;
	sub.n_pages = pc->p1 - pc->p0;
	sub.rows = t->rows + first;
	sub.n_rows = (pc->p1 < t->n_pages ? t->pages[pc->p1].first : t->n_rows) -
		     first;
	return dt_copy_rows(&sub, rule_hi, dst);
}

/* Page j's entry: its rows at first in the row chunks, and the address of
 * each run's first row when it has runs (struct page_info). */
static struct page_info page_entry(const struct dt_file *t, uint32_t j,
				   uint32_t first)
{
	const struct dt_page *p = &t->pages[j];
	struct page_info v = { .first = first, .count = p->count };
	uint32_t b;

	if (p->count >= PAGE_FENCES)
		for (b = 0; b < PAGE_FENCES; b++)
			v.fence[b] = (uint16_t)ROW_ADDR(
				t->rows[p->first + page_run(p->count, b)]);
	return v;
}

static int load_deltas(struct exe_mgr *m, struct exe_file *f,
		       const struct dt_file *t)
{
	uint32_t i, j, done, *hi = m->rule_hi;
	struct page_key *keys = NULL;
	struct page_info *vals = NULL;
	struct dt_page *scratch = NULL;
	struct piece *pcs = NULL;
	int n = 0, err = -ENOMEM;

	if (!t->n_rows)
		return 0;
	if (over_share(m, f, t))
		return -EDQUOT;
	pcs = malloc(t->n_pages * sizeof(*pcs));
	f->pages = malloc(t->n_pages * sizeof(*f->pages));
	keys = malloc(t->n_pages * sizeof(*keys));
	vals = malloc(t->n_pages * sizeof(*vals));
	if (!pcs || !f->pages || !keys || !vals)
		goto fail;
	n = exe_rows_place(m, t, pcs);
	if (n < 0) {
		err = n;
		n = 0;
		rows_full(m, f, t, err);
		goto fail;
	}
	f->row_ext = malloc(n * sizeof(*f->row_ext));
	if (n > 1)
		scratch = malloc(t->n_pages * sizeof(*scratch));
	if (t->n_rules > RULE_FIXED_COUNT)
		f->rule_idx = malloc((t->n_rules - RULE_FIXED_COUNT) *
				     sizeof(*f->rule_idx));
	if (!f->row_ext || (n > 1 && !scratch) ||
	    (t->n_rules > RULE_FIXED_COUNT && !f->rule_idx)) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < (uint32_t)n; i++) {
		f->row_ext[i] = (struct exe_rows){ pcs[i].block, pcs[i].n_blocks };
		f->n_blocks += pcs[i].n_blocks;
	}
	f->n_row_ext = n;
	n = 0; /* f->row_ext owns them now */
	for (i = 0; i < t->n_rules; i++) {
		uint32_t g = i;

		if (i >= RULE_FIXED_COUNT) {
			g = rule_intern(m, &t->rules[i], f->owner);
			if (g >= RULE_FIXED_COUNT)
				f->rule_idx[f->n_rule_idx++] = (uint16_t)g;
		}
		hi[i] = g << 16;
	}
	/* the rows are shared memory with the kernel: write them before the
	 * page entries that make them reachable (a bad row stops us before) */
	for (i = 0, err = 0; i < f->n_row_ext && !err; i++)
		err = copy_piece(t, &pcs[i], hi, scratch,
				 bm_row(m->bm, pcs[i].block * ROWS_PER_BLOCK));
	memset(hi, 0, t->n_rules * sizeof(*hi));
	if (err)
		goto fail;
	for (i = 0; i < f->n_row_ext; i++) {
		uint32_t base = pcs[i].block * ROWS_PER_BLOCK,
			 first = t->pages[pcs[i].p0].first;

		for (j = pcs[i].p0; j < pcs[i].p1; j++) {
			keys[j] = (struct page_key){ .file_id = f->id64,
						     .page = t->pages[j].page };
			vals[j] = page_entry(t, j, base + t->pages[j].first - first);
			f->pages[j] = t->pages[j].page;
		}
	}
	/* the whole file's pages in one call */
	err = bm_update_batch(m->bm, BM_PAGES, keys, vals, t->n_pages, &done);
	f->n_pages = err ? done : t->n_pages;
	f->deltas = EXE_DELTAS_LOADED;
	/* a new number for each load (never 0): BPF's rule cache keeps its
	 * answers per load (mapping_info.load_gen) */
	f->load_gen = ++m->load_gen ? m->load_gen : ++m->load_gen;
	m->st.loaded++;
	m->st.rows_used += (uint64_t)f->n_blocks * ROWS_PER_BLOCK;
	{
		struct owner_use *o = owner_get(m, f->owner, true);

		if (o) {
			o->use[EXE_TABLE_ROWS] += (uint64_t)f->n_blocks * ROWS_PER_BLOCK;
			o->use[EXE_TABLE_PAGES] += f->n_pages;
		}
	}
	m->st.split_files += f->n_row_ext > 1;
	if (err) {
		m->st.pages_full++;
		/* a map that allocates as it fills (tracer.c) can also
		 * find the kernel out of memory: no use raising its size */
		if (err == -ENOMEM)
			log_warn_once("delta_pages: the kernel had no memory for new entries");
		else
			log_warn_once("delta_pages map is full: raise -map-scale-factor");
		unload_deltas(m, f); /* the pages that went in, and the rows */
	}
	free(pcs);
	free(scratch);
	free(keys);
	free(vals);
	return err;
fail:
	while (n--)
		exe_rows_free(m, pcs[n].block, pcs[n].n_blocks);
	free_row_ext(m, f);
	put_rules(m, f);
	free(pcs);
	free(scratch);
	free(keys);
	free(vals);
	free(f->pages);
	f->pages = NULL;
	return err;
}

/* Put a file's deltas into the maps (or count that it has none).
 * Returns -EINVAL for a table with a bad row, else 0 (a full map leaves
 * the file to the frame-pointer walk). */
static int use_deltas(struct exe_mgr *m, struct exe_file *f,
		      const struct dt_file *t)
{
	if (!t->n_rows)
		m->st.no_cfi++;
	else if (!m->fp_only && load_deltas(m, f, t) == -EINVAL)
		return -EINVAL;
	return 0;
}

struct cached {
	struct exe_mgr *m;
	struct exe_file *f;
};

/* A cached record (checksummed by the store), used where it lies in the
 * store's map: a hit costs one copy of the rows, into the BPF array. */
static int use_cached(void *arg, const void *val, size_t len)
{
	struct cached *c = arg;
	struct dt_file view = { 0 }, *copy = NULL;
	int err;

	if (len == 0) /* an empty record: the file has no CFI */
		return use_deltas(c->m, c->f, &view);
	err = dt_file_view(val, len, true, &view);
	if (!err)
		return use_deltas(c->m, c->f, &view);
	if (err != -EFAULT)
		return err;
	/* a small record, not aligned for a view */
	err = dt_file_deserialize_opts(val, len, true, &copy);
	if (!err)
		err = use_deltas(c->m, c->f, copy);
	dt_file_free(copy);
	return err;
}

/* The file's deltas: from the store, or extracted (and stored); loaded. */
static int get_deltas(struct exe_mgr *m, struct exe_file *f)
{
	struct cached c = { m, f };
	struct dt_file *t = NULL;
	void *buf = NULL;
	size_t len = 0;
	uint64_t t0;
	int err;

	if (m->store) {
		err = store_read(m->store, f->id.b, STORE_KIND_DELTAS, use_cached, &c);
		if (!err) {
			m->st.cache_hits++;
			return 0;
		}
		/* a bad record: recompute and overwrite it */
		if (err == -EINVAL)
			log_warn_once("cache: file %s: bad stack-delta record, "
				      "recomputing",
				      f->path);
	}
	t0 = exe_now_ns();
	err = dt_extract_file(f->fd, f->path, &t);
	m->st.extract_ns += exe_now_ns() - t0;
	if (err)
		return err;
	m->st.extracted++;
	if (m->store && dt_file_record(t, &buf, &len) == 0) {
		store_put(m->store, f->id.b, STORE_KIND_DELTAS, buf, len);
		free(buf);
	}
	use_deltas(m, f, t);
	dt_file_free(t);
	return 0;
}

int exe_read_segs(int fd, struct ea_seg *segs, uint32_t *n)
{
	const Elf64_Phdr *ph;
	struct elfm *e;
	unsigned nph;
	int err;

	*n = 0;
	err = elfm_open_fd(fd, &e);
	if (err)
		return err;
	ph = elfm_phdrs(e, &nph);
	*n = ea_segs_from_phdrs(ph, nph, segs, EA_MAX_SEGS);
	/* a file cut short while the headers were copied gave zeros */
	return elfm_release(e, 0);
}

uint64_t exe_bias(const struct exe_file *f, const struct ea_map *maps,
		  unsigned n)
{
	uint64_t bias;

	ea_bias(f->segs, f->n_segs, maps, n, &bias);
	return bias;
}

static uint64_t inode_key(const struct stat *st)
{
	uint64_t k[4] = { st->st_dev, st->st_ino, (uint64_t)st->st_size,
			  (uint64_t)st->st_mtim.tv_sec * 1000000000ULL +
				  st->st_mtim.tv_nsec };

	return hm_hash(k, sizeof(k), 1);
}

struct exe_file *exe_get_known(struct exe_mgr *m, const struct stat *st)
{
	struct exe_file *f = hm_get_ptr(&m->by_inode, inode_key(st));

	return f ? exe_ref(f) : NULL;
}

int exe_get(struct exe_mgr *m, int fd, const char *path, struct exe_file **out)
{
	struct exe_file *f;
	struct stat st;
	uint64_t ik, t0;
	struct file_id id;
	int err;

	*out = NULL;
	if (fstat(fd, &st) < 0)
		return -errno;
	ik = inode_key(&st);
	f = hm_get_ptr(&m->by_inode, ik);
	if (f)
		goto found;
	t0 = exe_now_ns();
	err = fileid_from_fd(fd, &id);
	m->st.hash_ns += exe_now_ns() - t0;
	if (err)
		return err;
	f = hm_get_ptr(&m->by_id, fileid_hi64(&id));
	if (f)
		goto found;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->id = id;
	f->id64 = fileid_hi64(&id);
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->owner = st.st_uid;
	f->inode_key = ik;
	f->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	f->path = strdup(path ? path : "?");
	if (f->fd < 0 || !f->path) {
		err = f->fd < 0 ? -errno : -ENOMEM;
		goto fail;
	}
	f->name = strrchr(f->path, '/') ? strrchr(f->path, '/') + 1 : f->path;
	f->is_vdso = strcmp(f->path, "[vdso]") == 0;
	err = exe_read_segs(f->fd, f->segs, &f->n_segs);
	if (err)
		goto fail;
	if (m->detect)
		m->detect(m->detect_arg, f, f->fd);
	err = get_deltas(m, f);
	if (err) {
		m->st.errors++;
		log_debug("file %s: no stack deltas: %s", f->path, strerror(-err));
	}
	if (hm_put(&m->by_id, f->id64, (uintptr_t)f) ||
	    hm_put(&m->by_inode, ik, (uintptr_t)f)) {
		unload_deltas(m, f);
		hm_del(&m->by_id, f->id64);
		err = -ENOMEM;
		goto fail;
	}
	m->st.files++;
found:
	f->refs++;
	*out = f;
	return 0;
fail:
	file_free(f);
	return err;
}

struct exe_file *exe_ref(struct exe_file *f)
{
	f->refs++;
	return f;
}

void exe_put(struct exe_mgr *m, struct exe_file *f)
{
	(void)m;
	if (!f || f->refs <= 0)
		return;
	if (--f->refs == 0)
		f->unused_since_ns = exe_now_ns();
}

struct exe_file *exe_find(struct exe_mgr *m, uint64_t id64)
{
	return hm_get_ptr(&m->by_id, id64);
}

static void load_symbols(struct exe_file *f)
{
	f->syms_tried = true;
	if (f->fd >= 0 && symb_load_fd(f->fd, &f->syms))
		f->syms = NULL;
}

const char *exe_symbolize(struct exe_mgr *m, struct exe_file *f, uint64_t addr,
			  uint64_t *off)
{
	(void)m;
	if (!f->syms_tried)
		load_symbols(f);
	return symb_lookup(f->syms, addr, off);
}

const char *exe_build_id(struct exe_mgr *m, struct exe_file *f)
{
	(void)m;
	if (!f->syms_tried)
		load_symbols(f);
	return symb_build_id(f->syms);
}

void exe_gc(struct exe_mgr *m, uint64_t now_ns, uint64_t linger_ns)
{
	struct exe_file *dead = NULL, *f;
	uint32_t it = 0;
	uint64_t k, v;

	while (hm_next(&m->by_id, &it, &k, &v)) {
		f = (struct exe_file *)(uintptr_t)v;
		if (f->refs > 0 || now_ns - f->unused_since_ns < linger_ns)
			continue;
		f->next_free = dead;
		dead = f;
	}
	while ((f = dead)) {
		dead = f->next_free;
		unload_deltas(m, f);
		hm_del(&m->by_id, f->id64);
		if (hm_get(&m->by_inode, f->inode_key, &v) &&
		    (struct exe_file *)(uintptr_t)v == f)
			hm_del(&m->by_inode, f->inode_key);
		m->st.files--;
		file_free(f);
	}
	exe_chunks_trim(m);
}

void exe_get_stats(struct exe_mgr *m, struct exe_stats *out)
{
	*out = m->st;
}

int exe_set_interp(struct exe_file *f, unsigned kind, void *data, size_t len)
{
	if (kind == INTERP_NONE || kind >= INTERP_COUNT || f->interp_data[kind])
		return -EEXIST;
	f->interp_data[kind] = data;
	f->interp_len[kind] = len;
	f->interp_mask |= 1u << kind;
	return 0;
}

const void *exe_interp_data(const struct exe_file *f, unsigned kind,
			    size_t *len)
{
	if (kind >= INTERP_COUNT || !f->interp_data[kind])
		return NULL;
	*len = f->interp_len[kind];
	return f->interp_data[kind];
}
