// SPDX-License-Identifier: Apache-2.0
/*
 * The stack-delta builder and the finished, paged table.
 *
 * The builder keeps every row it is given (16 bytes each) with the rule
 * interned, so memory is rows * 16 plus the distinct rules.  finish() sorts
 * once, resolves the source layers in one sweep and writes the table into
 * a single allocation.
 */
#include "deltas.h"
#include "deltas_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arr.h"
#include "intern.h"
#include "sorted.h"


const struct unwind_rule dt_fixed_rules[RULE_FIXED_COUNT] = {
	[RULE_IDX_INVALID] = { .cmd = RULE_CMD_INVALID },
	[RULE_IDX_STOP] = { .cmd = RULE_CMD_STOP },
	[RULE_IDX_PLT] = { .cmd = RULE_CMD_PLT, .cfa_reg = RULE_REG_SP,
			   .cfa_off = 8, .cfa_post = 11 },
	[RULE_IDX_SIGNAL] = { .cmd = RULE_CMD_SIGNAL },
	[RULE_IDX_FRAME_POINTER] = { .cmd = RULE_CMD_FRAME_POINTER },
	[RULE_IDX_UNSUPPORTED] = { .cmd = RULE_CMD_UNSUPPORTED },
};

/* Source layers, lowest first. */
enum layer {
	LAYER_SYNTH = 0,
	LAYER_DEBUG_FRAME = 1,
	LAYER_GOPCLNTAB = 2,
	LAYER_EH_FRAME = 3,
	LAYER_COUNT = 4,
};

struct brow {
	uint64_t addr;
	uint32_t seq;  /* insertion order: later wins within a layer */
	uint16_t rule; /* interned rule index */
	uint8_t layer;
	uint8_t weak; /* a range's end marker: loses to any row at addr */
};
_Static_assert(sizeof(struct brow) == 16, "brow packs to 16 bytes");

struct dt_builder {
	struct brow *rows;
	size_t n_rows, cap_rows;
	/* the rules, fixed ones first: a rule's id is its index, the
	 * interner's copy of it the one kept */
	struct intern rules;
	unsigned layer_src[LAYER_COUNT]; /* source bits that added rows */
	unsigned cur_src;
	uint8_t layer;
	bool have_text;
	uint64_t text_lo, text_hi;
};

/* The interned index of r, adding it when new; -E2BIG past MAX_RULES. */
static int rule_index(struct dt_builder *b, const struct unwind_rule *r)
{
	int64_t id;

	/* at the bound only a rule already in has an index: find, not add */
	if (b->rules.n >= MAX_RULES) {
		id = intern_find(&b->rules, r, sizeof(*r));
		return id >= 0 ? (int)id : -E2BIG;
	}
	id = intern_add(&b->rules, r, sizeof(*r), NULL);
	return id >= 0 ? (int)id : -ENOMEM;
}

int dt_builder_new(struct dt_builder **out)
{
	struct dt_builder *b;
	int i, err = 0;

	*out = NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (i = 0; i < RULE_FIXED_COUNT && err >= 0; i++)
		err = rule_index(b, &dt_fixed_rules[i]);
	if (err < 0) {
		dt_builder_free(b);
		return err;
	}
	*out = b;
	return 0;
}

void dt_builder_free(struct dt_builder *b)
{
	if (!b)
		return;
	free(b->rows);
	intern_free(&b->rules);
	free(b);
}

void dt_builder_set_source(struct dt_builder *b, unsigned src)
{
	b->cur_src = src;
	if (src & DT_SRC_EH_FRAME)
		b->layer = LAYER_EH_FRAME;
	else if (src & DT_SRC_GOPCLNTAB)
		b->layer = LAYER_GOPCLNTAB;
	else if (src & (DT_SRC_DEBUG_FRAME | DT_SRC_DEBUGLINK))
		b->layer = LAYER_DEBUG_FRAME;
	else
		b->layer = LAYER_SYNTH;
}

void dt_builder_set_text(struct dt_builder *b, uint64_t lo, uint64_t hi)
{
	b->have_text = lo < hi;
	b->text_lo = lo;
	b->text_hi = hi;
}

/* Zero what the rule's kind does not use, so equal meanings compare
 * equal byte for byte.  Returns -EINVAL for a value out of range. */
int dt_canonicalize(const struct unwind_rule *in, struct unwind_rule *r)
{
	switch (in->cmd) {
	case RULE_CMD_NONE:
		if (in->cfa_reg >= RULE_REG_COUNT || in->fp_rule > RULE_FP_UNDEF ||
		    (in->flags & ~RULE_F_DEREF_CFA) || in->ra_rule > RULE_RA_LR ||
		    (in->ra_rule == RULE_RA_CFA_OFF && (in->ra_off & 7)))
			return -EINVAL;
		*r = *in;
		memset(r->pad, 0, sizeof(r->pad));
		if (!(r->flags & RULE_F_DEREF_CFA))
			r->cfa_post = 0;
		if (r->fp_rule == RULE_FP_SAME || r->fp_rule == RULE_FP_UNDEF)
			r->fp_off = 0;
		if (r->ra_rule != RULE_RA_CFA_OFF)
			r->ra_off = 0;
		return 0;
	case RULE_CMD_PLT:
		memset(r, 0, sizeof(*r));
		r->cmd = RULE_CMD_PLT;
		r->cfa_reg = RULE_REG_SP;
		r->cfa_off = in->cfa_off;
		r->cfa_post = in->cfa_post;
		return 0;
	case RULE_CMD_GO_SWITCH:
		if (in->flags & ~(RULE_F_GO_TLS_GOT | RULE_F_GO_FP))
			return -EINVAL;
		memset(r, 0, sizeof(*r));
		r->cmd = RULE_CMD_GO_SWITCH;
		r->flags = in->flags;
		if (!(in->flags & RULE_F_GO_FP)) {
			r->cfa_off = in->cfa_off;
			r->fp_off = in->fp_off;
		}
		return 0;
	case RULE_CMD_INVALID:
	case RULE_CMD_STOP:
	case RULE_CMD_SIGNAL:
	case RULE_CMD_FRAME_POINTER:
	case RULE_CMD_UNSUPPORTED:
		memset(r, 0, sizeof(*r));
		r->cmd = in->cmd;
		return 0;
	default:
		return -EINVAL;
	}
}

static int push_row(struct dt_builder *b, uint64_t addr, int rule, bool weak)
{
	struct brow *r;

	if (b->n_rows >= DT_MAX_ROWS)
		return -E2BIG;
	if (ARR_PUSH(b->rows, b->n_rows, b->cap_rows, DT_MAX_ROWS))
		return -ENOMEM;
	r = &b->rows[b->n_rows];
	r->addr = addr;
	r->seq = (uint32_t)b->n_rows;
	r->rule = (uint16_t)rule;
	r->layer = b->layer;
	r->weak = weak;
	b->n_rows++;
	if (!weak)
		b->layer_src[b->layer] |= b->cur_src;
	return 0;
}

int dt_builder_add(struct dt_builder *b, uint64_t addr,
		   const struct unwind_rule *rule)
{
	struct unwind_rule r;
	int idx;

	idx = dt_canonicalize(rule, &r);
	if (idx < 0)
		return idx;
	idx = rule_index(b, &r);
	if (idx < 0)
		return idx;
	return push_row(b, addr, idx, false);
}

int dt_builder_add_range(struct dt_builder *b, uint64_t start, uint64_t end)
{
	if (end <= start)
		return 0;
	return push_row(b, end, RULE_IDX_INVALID, true);
}

/* ---- finish ------------------------------------------------------------ */

static int cmp_brow(const void *pa, const void *pb)
{
	const struct brow *a = pa, *b = pb;

	/* Within a layer the winner comes last: weak end markers first,
	 * then insertion order. */
	return CMP3(a->addr, b->addr) ?: CMP3(a->layer, b->layer) ?:
	       CMP3(b->weak, a->weak) ?: CMP3(a->seq, b->seq);
}

/* The sort key in one word: address, layer, strength (cmp_brow's order
 * but for seq, which a stable sort keeps).  Only for addresses below
 * 2^61. */
static uint64_t row_key(const struct brow *r)
{
	return r->addr << 3 | (uint64_t)r->layer << 1 | !r->weak;
}

/*
 * Stable LSD radix sort on row_key, a byte per pass, skipping the bytes
 * all keys share.  Rows arrive nearly sorted (FDEs in address order), a
 * case where comparison sorts gain little; this is a third of the cost
 * of qsort on large files.  Returns false (nothing done) when an address
 * does not fit or the scratch buffer cannot be had.
 */
static bool radix_sort(struct brow *rows, size_t n)
{
	struct brow *tmp, *src = rows, *dst;
	uint64_t or_all = 0, and_all = ~0ULL;
	size_t i, count[256];
	unsigned pass;

	for (i = 0; i < n; i++) {
		if (rows[i].addr >> 61)
			return false;
		or_all |= row_key(&rows[i]);
		and_all &= row_key(&rows[i]);
	}
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return false;
	dst = tmp;
	for (pass = 0; pass < 8; pass++) {
		unsigned shift = pass * 8;
		size_t sum = 0;

		if (!(((or_all ^ and_all) >> shift) & 0xff))
			continue; /* every key has the same byte here */
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(row_key(&src[i]) >> shift) & 0xff]++;
		for (i = 0; i < 256; i++) {
			size_t c = count[i];

			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[(row_key(&src[i]) >> shift) & 0xff]++] = src[i];
		src = dst;
		dst = src == tmp ? rows : tmp;
	}
	if (src != rows)
		memcpy(rows, src, n * sizeof(*rows));
	free(tmp);
	return true;
}

static bool sorted(const struct brow *r, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (cmp_brow(&r[i - 1], &r[i]) > 0)
			return false;
	return true;
}

/*
 * Resolve the layers in place: rows[0..*n) becomes the effective rows
 * (addr, rule), each rule different from the one before, the first one
 * valid.  Only .addr and .rule stay meaningful.  Returns the mask of the
 * layers that gave an effective rule.
 */
static unsigned resolve_layers(struct brow *rows, size_t *n)
{
	uint16_t cur[LAYER_COUNT] = { 0 }, last = RULE_IDX_INVALID;
	size_t i = 0, out = 0;
	unsigned used = 0;

	while (i < *n) {
		uint64_t addr = rows[i].addr;
		uint16_t eff = RULE_IDX_INVALID;
		int l;

		for (; i < *n && rows[i].addr == addr; i++)
			cur[rows[i].layer] = rows[i].rule;
		/* the highest layer with a usable rule; where none has one,
		 * "unsupported" (some CFI, of a form we cannot evaluate) says
		 * more than "nothing here" */
		for (l = LAYER_COUNT - 1; l >= 0; l--) {
			if (cur[l] == RULE_IDX_UNSUPPORTED)
				eff = RULE_IDX_UNSUPPORTED;
			else if (cur[l] != RULE_IDX_INVALID) {
				eff = cur[l];
				used |= 1U << l;
				break;
			}
		}
		if (eff == last)
			continue;
		/* out <= the index of a row already consumed. */
		rows[out].addr = addr;
		rows[out].rule = eff;
		out++;
		last = eff;
	}
	*n = out;
	return used;
}

/* Pages and rows of the paged table; with t == NULL only counts. */
struct pager {
	struct dt_file *t;
	uint32_t n_pages, n_rows;
	int err;
};

static void pager_row(struct pager *pg, uint64_t page, bool new_page,
		      uint16_t low, uint32_t rule)
{
	if (pg->err)
		return;
	if (new_page) {
		if (pg->n_pages >= DT_MAX_PAGES) {
			pg->err = -E2BIG;
			return;
		}
		if (pg->t) {
			pg->t->pages[pg->n_pages].page = page;
			pg->t->pages[pg->n_pages].first = pg->n_rows;
			pg->t->pages[pg->n_pages].count = 0;
		}
		pg->n_pages++;
	}
	if (pg->t) {
		pg->t->rows[pg->n_rows] = ROW(low, rule);
		pg->t->pages[pg->n_pages - 1].count++;
	}
	pg->n_rows++;
}

/* Single-row pages (page_lo, page_hi) exclusive, for a rule that spans
 * them. */
static void pager_fill(struct pager *pg, uint64_t page_lo, uint64_t page_hi,
		       uint32_t rule)
{
	uint64_t p;

	for (p = page_lo + 1; p < page_hi && !pg->err; p++)
		pager_row(pg, p, true, 0, rule);
}

static void paginate(struct pager *pg, const struct brow *e, size_t n,
		     const uint32_t *remap, bool have_text, uint64_t text_hi)
{
	uint64_t cur_page = 0;
	uint32_t active = RULE_IDX_INVALID;
	bool any = false;
	size_t i;

	for (i = 0; i < n && !pg->err; i++) {
		uint64_t page = e[i].addr >> DELTA_PAGE_BITS;
		uint16_t low = (uint16_t)(e[i].addr & 0xffff);
		uint32_t rule = remap[e[i].rule];

		if (!any || page != cur_page) {
			if (any && active != RULE_IDX_INVALID)
				pager_fill(pg, cur_page, page, active);
			/* The BPF search needs a row at offset 0 of every
			 * page: carry the active rule over. */
			if (low != 0) {
				pager_row(pg, page, true, 0, active);
				pager_row(pg, page, false, low, rule);
			} else {
				pager_row(pg, page, true, low, rule);
			}
			cur_page = page;
			any = true;
		} else {
			pager_row(pg, page, false, low, rule);
		}
		active = rule;
	}
	/* A last rule without an end marker runs to the end of the text. */
	if (any && active != RULE_IDX_INVALID && have_text && text_hi &&
	    ((text_hi - 1) >> DELTA_PAGE_BITS) > cur_page)
		pager_fill(pg, cur_page, ((text_hi - 1) >> DELTA_PAGE_BITS) + 1,
			   active);
}

static uint64_t clip_len(uint64_t lo, uint64_t hi, bool have_text,
			 uint64_t text_lo, uint64_t text_hi)
{
	if (have_text) {
		if (lo < text_lo)
			lo = text_lo;
		if (hi > text_hi)
			hi = text_hi;
	}
	return hi > lo ? hi - lo : 0;
}

static uint64_t covered_bytes(const struct brow *e, size_t n, bool have_text,
			      uint64_t text_lo, uint64_t text_hi)
{
	uint64_t sum = 0, end;
	size_t i;

	for (i = 0; i < n; i++) {
		if (e[i].rule == RULE_IDX_INVALID ||
		    e[i].rule == RULE_IDX_UNSUPPORTED)
			continue;
		if (i + 1 < n)
			end = e[i + 1].addr;
		else if (have_text && text_hi > e[i].addr)
			end = text_hi;
		else
			continue;
		sum += clip_len(e[i].addr, end, have_text, text_lo, text_hi);
	}
	return sum;
}

/* One block: the struct, pages, rules, rows. */
struct dt_file *dt_file_alloc(uint32_t n_rules, uint32_t n_pages,
			       uint32_t n_rows)
{
	size_t sz = sizeof(struct dt_file) +
		    (size_t)n_pages * sizeof(struct dt_page) +
		    (size_t)n_rules * sizeof(struct unwind_rule) +
		    (size_t)n_rows * sizeof(uint32_t);
	struct dt_file *t = calloc(1, sz);

	if (!t)
		return NULL;
	t->n_rules = n_rules;
	t->n_pages = n_pages;
	t->n_rows = n_rows;
	t->pages = (struct dt_page *)(t + 1);
	t->rules = (struct unwind_rule *)(t->pages + n_pages);
	t->rows = (uint32_t *)(t->rules + n_rules);
	return t;
}

int dt_builder_finish(struct dt_builder *b, struct dt_file **out)
{
	struct pager pg = { 0 };
	struct dt_file *t = NULL;
	uint32_t *remap = NULL, n_local = RULE_FIXED_COUNT;
	size_t n = b->n_rows, i;
	unsigned used, source = 0;
	int err = 0;

	*out = NULL;
	if (n > 1 && !sorted(b->rows, n))
		if (!radix_sort(b->rows, n))
			qsort(b->rows, n, sizeof(*b->rows), cmp_brow);
	used = resolve_layers(b->rows, &n);
	for (i = 0; i < LAYER_COUNT; i++)
		if (used & (1U << i))
			source |= b->layer_src[i];

	/* Local rule table: fixed entries, then rules by first use. */
	remap = malloc(b->rules.n * sizeof(*remap));
	if (!remap) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < b->rules.n; i++)
		remap[i] = i < RULE_FIXED_COUNT ? (uint32_t)i : UINT32_MAX;
	for (i = 0; i < n; i++)
		if (remap[b->rows[i].rule] == UINT32_MAX)
			remap[b->rows[i].rule] = n_local++;

	paginate(&pg, b->rows, n, remap, b->have_text, b->text_hi);
	if (pg.err) {
		err = pg.err;
		goto cleanup;
	}
	t = dt_file_alloc(n_local, pg.n_pages, pg.n_rows);
	if (!t) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < b->rules.n; i++)
		if (remap[i] != UINT32_MAX)
			memcpy(&t->rules[remap[i]],
			       intern_key(&b->rules, (uint32_t)i, NULL),
			       sizeof(*t->rules));
	memset(&pg, 0, sizeof(pg));
	pg.t = t;
	paginate(&pg, b->rows, n, remap, b->have_text, b->text_hi);
	t->source = source;
	t->covered = covered_bytes(b->rows, n, b->have_text, b->text_lo,
				   b->text_hi);
	if (b->have_text) {
		t->text_lo = b->text_lo;
		t->text_hi = b->text_hi;
	}
	*out = t;
	t = NULL;
cleanup:
	free(remap);
	free(t);
	/* The builder is left empty either way; its rule table stays. */
	b->n_rows = 0;
	memset(b->layer_src, 0, sizeof(b->layer_src));
	return err;
}

void dt_file_free(struct dt_file *f)
{
	free(f);
}

/* ---- lookup ------------------------------------------------------------ */

int dt_file_lookup(const struct dt_file *f, uint64_t addr)
{
	uint64_t page = addr >> DELTA_PAGE_BITS;
	uint32_t lo = 0, hi = f->n_pages, low = addr & 0xffff;
	const struct dt_page *p = NULL;
	const uint32_t *rows;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (f->pages[mid].page < page) {
			lo = mid + 1;
		} else if (f->pages[mid].page > page) {
			hi = mid;
		} else {
			p = &f->pages[mid];
			break;
		}
	}
	if (!p || p->count == 0)
		return -ENOENT;
	/* Last row with ROW_ADDR <= low; row 0 has address 0. */
	rows = f->rows + p->first;
	lo = 0;
	hi = p->count;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ROW_ADDR(rows[mid]) <= low)
			lo = mid;
		else
			hi = mid;
	}
	return (int)ROW_RULE(rows[lo]);
}

const struct unwind_rule *dt_file_rule(const struct dt_file *f, int idx)
{
	if (idx < 0 || (uint32_t)idx >= f->n_rules)
		return NULL;
	return &f->rules[idx];
}
