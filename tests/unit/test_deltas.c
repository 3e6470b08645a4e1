// SPDX-License-Identifier: Apache-2.0
/* The stack-delta builder, the paged table, lookup and serialization. */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "deltas.h"

static struct unwind_rule sp(int off)
{
	struct unwind_rule r = { .cmd = RULE_CMD_NONE, .cfa_reg = RULE_REG_SP,
				 .cfa_off = off };
	return r;
}

static struct unwind_rule cmd(uint8_t c)
{
	struct unwind_rule r = { .cmd = c };
	return r;
}

/* The rule at addr, or an INVALID rule when no page covers it. */
static struct unwind_rule at(const struct dt_file *f, uint64_t addr)
{
	int idx = dt_file_lookup(f, addr);

	if (idx < 0)
		return cmd(RULE_CMD_INVALID);
	return *dt_file_rule(f, idx);
}

/* Add a row at addr whose rule is "CFA = SP + off". */
static int add_sp(struct dt_builder *b, uint64_t addr, int off)
{
	struct unwind_rule r = sp(off);

	return dt_builder_add(b, addr, &r);
}

/* Finish the table and free its builder: the table, or NULL after a
 * failed assertion. */
static struct dt_file *finish(struct dt_builder *b)
{
	struct dt_file *f = NULL;

	ASSERT_OK(dt_builder_finish(b, &f), "finish");
	dt_builder_free(b);
	ASSERT_NOT_NULL(f, "file");
	return f;
}

#define ASSERT_RULE(f, addr, want, what)                                       \
	({                                                                     \
		struct unwind_rule got_ = at(f, addr), want_ = (want);         \
		char g_[64], w_[64];                                           \
		bool ok_ = memcmp(&got_, &want_, sizeof(got_)) == 0;           \
		if (!ok_)                                                      \
			test_fail(__FILE__, __LINE__,                          \
				  "%s: at 0x%llx: %s, expected %s", what,        \
				  (unsigned long long)(addr),                  \
				  dt_rule_str(&got_, g_, sizeof(g_)),          \
				  dt_rule_str(&want_, w_, sizeof(w_)));        \
		ok_;                                                           \
	})

/* Structural invariants every finished table must hold. */
static void check_invariants(const struct dt_file *f)
{
	uint32_t i, j, next = 0;

	ASSERT_GE(f->n_rules, RULE_FIXED_COUNT, "fixed rules");
	for (i = 0; i < RULE_FIXED_COUNT && i < f->n_rules; i++)
		ASSERT_TRUE(memcmp(&f->rules[i], &dt_fixed_rules[i],
				   sizeof(f->rules[i])) == 0,
			    "fixed rules first");
	for (i = RULE_FIXED_COUNT; i < f->n_rules; i++)
		for (j = i + 1; j < f->n_rules; j++)
			if (memcmp(&f->rules[i], &f->rules[j],
				   sizeof(f->rules[i])) == 0)
				ASSERT_TRUE(false, "rules are distinct");
	for (i = 0; i < f->n_pages; i++) {
		const struct dt_page *p = &f->pages[i];

		if (i)
			ASSERT_GT(p->page, f->pages[i - 1].page, "pages sorted");
		ASSERT_EQ(p->first, next, "pages contiguous");
		ASSERT_GT(p->count, 0, "page not empty");
		ASSERT_EQ(ROW_ADDR(f->rows[p->first]), 0, "row at page start");
		for (j = 1; j < p->count; j++)
			ASSERT_GT(ROW_ADDR(f->rows[p->first + j]),
				  ROW_ADDR(f->rows[p->first + j - 1]),
				  "rows sorted");
		next += p->count;
	}
	ASSERT_EQ(next, f->n_rows, "all rows in pages");
}

/* In a struct fn_rows: the row's rule is RULE_CMD_INVALID (no test uses
 * a negative CFA offset). */
#define INVALID (-1)

/* One function as a source gives it: its rows "CFA = SP + off" (or
 * INVALID), in order, up to the first at address 0, then its range. */
struct fn_rows {
	unsigned src;
	uint64_t lo, hi;
	struct {
		uint64_t addr;
		int off;
	} rows[3];
};

/* The table of the n functions fns, added in order, finished and checked
 * for its invariants: the table, or NULL after a failed assertion. */
static struct dt_file *build_fns(const struct fn_rows *fns, size_t n)
{
	struct dt_builder *b;
	struct dt_file *f;
	struct unwind_rule r;
	size_t i, j;

	if (!ASSERT_OK(dt_builder_new(&b), "new"))
		return NULL;
	for (i = 0; i < n; i++) {
		dt_builder_set_source(b, fns[i].src);
		for (j = 0; j < 3 && fns[i].rows[j].addr; j++) {
			if (fns[i].rows[j].off == INVALID)
				r = cmd(RULE_CMD_INVALID);
			else
				r = sp(fns[i].rows[j].off);
			dt_builder_add(b, fns[i].rows[j].addr, &r);
		}
		dt_builder_add_range(b, fns[i].lo, fns[i].hi);
	}
	f = finish(b);
	if (f)
		check_invariants(f);
	return f;
}

TEST(deltas_builder_basic)
{
	struct dt_builder *b;
	struct dt_file *f;

	ASSERT_OK(dt_builder_new(&b), "new");
	dt_builder_set_source(b, DT_SRC_EH_FRAME);
	dt_builder_set_text(b, 0x1000, 0x2000);
	/* Two functions, rows given out of order; a gap between them. */
	ASSERT_OK(dt_builder_add(b, 0x1104, &(struct unwind_rule){ 0 }), "add");
	ASSERT_OK(dt_builder_add_range(b, 0x1100, 0x1180), "range 2");
	ASSERT_OK(add_sp(b, 0x1100, 8), "add");
	ASSERT_OK(add_sp(b, 0x1104, 16), "replaces 0x1104");
	ASSERT_OK(add_sp(b, 0x1000, 8), "add");
	ASSERT_OK(add_sp(b, 0x1001, 16), "add");
	ASSERT_OK(add_sp(b, 0x1010, 16), "add"); /* same as before: merged */
	ASSERT_OK(add_sp(b, 0x10f0, 8), "add");
	ASSERT_OK(dt_builder_add_range(b, 0x1000, 0x10f1), "range 1");
	/* A third function starting exactly where the second ends. */
	ASSERT_OK(add_sp(b, 0x1180, 8), "add");
	ASSERT_OK(dt_builder_add_range(b, 0x1180, 0x1190), "range 3");
	f = finish(b);
	if (!f)
		return;
	check_invariants(f);
	ASSERT_RULE(f, 0x0fff, cmd(RULE_CMD_INVALID), "before");
	ASSERT_RULE(f, 0x1000, sp(8), "entry");
	ASSERT_RULE(f, 0x1001, sp(16), "push");
	ASSERT_RULE(f, 0x1010, sp(16), "merged");
	ASSERT_RULE(f, 0x10ef, sp(16), "body");
	ASSERT_RULE(f, 0x10f0, sp(8), "last byte");
	ASSERT_RULE(f, 0x10f1, cmd(RULE_CMD_INVALID), "small gap is marked");
	ASSERT_RULE(f, 0x10ff, cmd(RULE_CMD_INVALID), "gap");
	ASSERT_RULE(f, 0x1100, sp(8), "fn 2");
	ASSERT_RULE(f, 0x1104, sp(16), "later row replaces");
	ASSERT_RULE(f, 0x117f, sp(16), "fn 2 end");
	ASSERT_RULE(f, 0x1180, sp(8), "no INVALID where fn 3 starts");
	ASSERT_RULE(f, 0x1190, cmd(RULE_CMD_INVALID), "after");
	/* Rows: 0 (INVALID, the page's start) 1000 1001 10f0 10f1(INV)
	 * 1100 1104 1180 1190(INV). */
	ASSERT_EQ(f->n_rows, 9, "rows merged");
	ASSERT_EQ(f->n_pages, 1, "one page");
	ASSERT_EQ(f->n_rules, RULE_FIXED_COUNT + 2, "two distinct rules");
	ASSERT_EQ(f->covered, 0xf1 + 0x80 + 0x10, "covered bytes");
	ASSERT_EQ(f->source, DT_SRC_EH_FRAME, "source");
	ASSERT_EQ(f->text_lo, 0x1000, "text_lo");
	ASSERT_EQ(f->text_hi, 0x2000, "text_hi");
	dt_file_free(f);
}

/* debug_frame first, eh_frame later: eh_frame wins at the same address,
 * whatever the order; where eh_frame says "unsupported" the lower layer
 * shows; synthetic rows only fill what nothing else covers. */
TEST(deltas_sources_layer)
{
	static const struct fn_rows fns[] = {
		{ DT_SRC_DEBUG_FRAME, 0x2000, 0x2200,
		  { { 0x2000, 24 }, { 0x2100, 24 } } },
		/* debug_frame alone covers this function. */
		{ DT_SRC_DEBUG_FRAME, 0x3000, 0x3010, { { 0x3000, 40 } } },
		{ DT_SRC_EH_FRAME, 0x2000, 0x2180,
		  { { 0x2000, 8 }, { 0x2100, INVALID } } },
		{ DT_SRC_SYNTH, 0x2000, 0x4010, { { 0x2000, 99 }, { 0x4000, 99 } } },
	};
	struct dt_file *f = build_fns(fns, ARRAY_SIZE(fns));

	if (!f)
		return;
	ASSERT_RULE(f, 0x2000, sp(8), "eh_frame over debug_frame");
	ASSERT_RULE(f, 0x2100, sp(24), "debug_frame under unsupported");
	ASSERT_RULE(f, 0x2180, sp(24), "debug_frame past eh_frame's end");
	ASSERT_RULE(f, 0x2200, sp(99), "synthetic where nothing else");
	ASSERT_RULE(f, 0x3000, sp(40), "debug_frame alone");
	ASSERT_RULE(f, 0x4000, sp(99), "synthetic");
	ASSERT_RULE(f, 0x4010, cmd(RULE_CMD_INVALID), "end");
	ASSERT_EQ(f->source, DT_SRC_EH_FRAME | DT_SRC_DEBUG_FRAME | DT_SRC_SYNTH,
		  "sources");
	dt_file_free(f);
}

/* A function across three page boundaries, with a row in the middle page,
 * then one starting mid-page after a gap. */
TEST(deltas_pages)
{
	static const struct fn_rows fns[] = {
		{ DT_SRC_EH_FRAME, 0x1fff0, 0x50020,
		  { { 0x1fff0, 8 }, { 0x1fff4, 64 }, { 0x30010, 72 } } },
		{ DT_SRC_EH_FRAME, 0x70100, 0x70200, { { 0x70100, 8 } } },
	};
	struct dt_file *f = build_fns(fns, ARRAY_SIZE(fns));

	if (!f)
		return;
	/* Pages 1, 2, 3, 4, 5 and 7; page 6 is all gap. */
	ASSERT_EQ(f->n_pages, 6, "pages");
	ASSERT_RULE(f, 0x1fff3, sp(8), "entry");
	ASSERT_RULE(f, 0x20000, sp(64), "carried over page 2");
	ASSERT_RULE(f, 0x3000f, sp(64), "carried over page 3");
	ASSERT_RULE(f, 0x30010, sp(72), "row in page 3");
	ASSERT_RULE(f, 0x40000, sp(72), "filler page 4");
	ASSERT_RULE(f, 0x5001f, sp(72), "page 5");
	ASSERT_RULE(f, 0x50020, cmd(RULE_CMD_INVALID), "end");
	ASSERT_EQ(dt_file_lookup(f, 0x60000), -ENOENT, "no page 6");
	ASSERT_RULE(f, 0x70000, cmd(RULE_CMD_INVALID), "page 7 start");
	ASSERT_RULE(f, 0x70100, sp(8), "fn 2");
	ASSERT_EQ(f->covered, 0x50020 - 0x1fff0 + 0x100, "covered");
	dt_file_free(f);
}

TEST(deltas_canonical_rules)
{
	struct dt_builder *b;
	struct dt_file *f;
	struct unwind_rule r;

	ASSERT_OK(dt_builder_new(&b), "new");
	/* Fields a kind does not use are ignored: these are one rule. */
	r = sp(16);
	r.fp_off = 123; /* fp_rule SAME: fp_off unused */
	r.cfa_post = 5; /* no deref: unused */
	dt_builder_add(b, 0x1000, &r);
	add_sp(b, 0x1010, 16);
	r = (struct unwind_rule){ .cmd = RULE_CMD_STOP, .cfa_off = 77 };
	dt_builder_add(b, 0x1020, &r);
	r = (struct unwind_rule){ .cmd = RULE_CMD_PLT, .cfa_reg = RULE_REG_SP,
				  .cfa_off = 8, .cfa_post = 11, .fp_off = 3 };
	dt_builder_add(b, 0x1030, &r);
	r = (struct unwind_rule){ .cmd = 9 };
	ASSERT_EQ(dt_builder_add(b, 0x1040, &r), -EINVAL, "bad command");
	dt_builder_add_range(b, 0x1000, 0x1040);
	f = finish(b);
	if (!f)
		return;
	ASSERT_EQ(f->n_rules, RULE_FIXED_COUNT + 1, "one rule besides fixed");
	ASSERT_EQ(dt_file_lookup(f, 0x1020), RULE_IDX_STOP, "STOP is fixed");
	ASSERT_EQ(dt_file_lookup(f, 0x1030), RULE_IDX_PLT, "PLT is fixed");
	/* 0 (page start), 1000, 1020, 1030, 1040 (end). */
	ASSERT_EQ(f->n_rows, 5, "rows merged across canonical twins");
	dt_file_free(f);
}

TEST(deltas_too_many_rules)
{
	struct dt_builder *b;
	int i, err = 0;

	ASSERT_OK(dt_builder_new(&b), "new");
	for (i = 0; i < MAX_RULES && !err; i++) {
		err = add_sp(b, 0x1000 + i, 8 + i);
	}
	ASSERT_EQ(err, -E2BIG, "distinct rules are bounded");
	ASSERT_EQ(i, MAX_RULES - RULE_FIXED_COUNT + 1, "where it stops");
	dt_builder_free(b);
}

/* A small table with everything in it. */
static struct dt_file *sample(void)
{
	struct dt_builder *b;
	struct dt_file *f = NULL;
	struct unwind_rule r;
	int i;

	if (dt_builder_new(&b))
		return NULL;
	dt_builder_set_source(b, DT_SRC_EH_FRAME);
	dt_builder_set_text(b, 0x10000, 0x40000);
	for (i = 0; i < 40; i++) {
		r = sp(8 + 8 * (i % 5));
		if (i % 7 == 3) {
			r.fp_rule = RULE_FP_CFA_OFF;
			r.fp_off = -16;
		}
		if (i % 11 == 5) {
			r.flags = RULE_F_DEREF_CFA;
			r.cfa_post = 8;
		}
		dt_builder_add(b, 0x10000 + i * 0x1234, &r);
		dt_builder_add_range(b, 0x10000 + i * 0x1234,
				     0x10000 + i * 0x1234 + 0x1000);
	}
	r = cmd(RULE_CMD_SIGNAL);
	dt_builder_add(b, 0x3f000, &r);
	dt_builder_add_range(b, 0x3f000, 0x3f010);
	dt_builder_finish(b, &f);
	dt_builder_free(b);
	return f;
}

static bool same_file(const struct dt_file *a, const struct dt_file *b)
{
	return a->source == b->source && a->n_rules == b->n_rules &&
	       a->n_pages == b->n_pages && a->n_rows == b->n_rows &&
	       a->covered == b->covered && a->text_lo == b->text_lo &&
	       a->text_hi == b->text_hi &&
	       !memcmp(a->rules, b->rules, a->n_rules * sizeof(*a->rules)) &&
	       !memcmp(a->pages, b->pages, a->n_pages * sizeof(*a->pages)) &&
	       !memcmp(a->rows, b->rows, a->n_rows * sizeof(*a->rows));
}

TEST(deltas_serialize_roundtrip)
{
	struct dt_file *f = sample(), *g = NULL;
	void *buf = NULL;
	size_t len = 0;

	if (!ASSERT_NOT_NULL(f, "sample"))
		return;
	check_invariants(f);
	ASSERT_OK(dt_file_serialize(f, &buf, &len), "serialize");
	ASSERT_OK(dt_file_deserialize(buf, len, &g), "deserialize");
	if (ASSERT_NOT_NULL(g, "file"))
		ASSERT_TRUE(same_file(f, g), "identical after round trip");
	test_note("sample: %u rules, %u pages, %u rows, %zu bytes", f->n_rules,
		  f->n_pages, f->n_rows, len);
	dt_file_free(g);
	free(buf);
	dt_file_free(f);
}

TEST(deltas_deserialize_truncated_and_flipped)
{
	struct dt_file *f = sample(), *g;
	uint8_t *buf = NULL, *copy;
	size_t len = 0, i;
	unsigned bad = 0;

	if (!ASSERT_NOT_NULL(f, "sample"))
		return;
	ASSERT_OK(dt_file_serialize(f, (void **)&buf, &len), "serialize");
	copy = malloc(len);
	for (i = 0; i < len; i++) {
		/* Truncated copies in their own allocation, so ASan sees any
		 * read past the end. */
		uint8_t *t = malloc(i ? i : 1);

		memcpy(t, buf, i);
		g = (void *)1;
		if (dt_file_deserialize(t, i, &g) != -EINVAL || g)
			bad++;
		free(t);
	}
	ASSERT_EQ(bad, 0, "every truncation is -EINVAL");
	bad = 0;
	for (i = 0; i < len * 8; i++) {
		memcpy(copy, buf, len);
		copy[i / 8] ^= 1 << (i % 8);
		g = (void *)1;
		/* the version field (bytes 4..7) says "another format" */
		if (dt_file_deserialize(copy, len, &g) !=
			    (i / 8 >= 4 && i / 8 < 8 ? -ESTALE : -EINVAL) ||
		    g)
			bad++;
	}
	ASSERT_EQ(bad, 0, "every flipped bit is -EINVAL (-ESTALE in the version)");
	ASSERT_EQ(dt_file_deserialize(NULL, 0, &g), -EINVAL, "NULL");
	free(copy);
	free(buf);
	dt_file_free(f);
}

/* Set the CRC the way the format defines it, so the checks behind it are
 * what rejects the buffer. */
static void fix_crc(uint8_t *buf, size_t len)
{
	uint32_t zero = 0, c;

	memcpy(buf + 12, &zero, 4);
	c = (uint32_t)crc32(crc32(0L, Z_NULL, 0), buf, (uInt)len);
	memcpy(buf + 12, &c, 4);
}

TEST(deltas_deserialize_validates_content)
{
	struct dt_file *f = sample(), *g = NULL;
	uint8_t *buf = NULL, *copy;
	size_t len = 0, pages, rules, rows;
	uint32_t v;

	if (!ASSERT_NOT_NULL(f, "sample"))
		return;
	dt_file_serialize(f, (void **)&buf, &len);
	copy = malloc(len);
	pages = 56;
	rules = pages + f->n_pages * sizeof(struct dt_page);
	rows = rules + f->n_rules * sizeof(struct unwind_rule);

	memcpy(copy, buf, len);
	fix_crc(copy, len);
	ASSERT_OK(dt_file_deserialize(copy, len, &g), "crc recomputed: ok");
	dt_file_free(g);

#define CORRUPT_(what, stmt, want)                                             \
	do {                                                                   \
		memcpy(copy, buf, len);                                        \
		stmt;                                                          \
		fix_crc(copy, len);                                            \
		g = (void *)1;                                                 \
		ASSERT_EQ(dt_file_deserialize(copy, len, &g), want, what);     \
		ASSERT_TRUE(g == NULL, what);                                  \
	} while (0)
#define CORRUPT(what, stmt) CORRUPT_(what, stmt, -EINVAL)

	/* A row naming a rule past the table. */
	CORRUPT("rule index", v = ROW(0, f->n_rules);
		memcpy(copy + rows, &v, 4));
	/* First row of a page not at offset 0. */
	CORRUPT("page start", v = ROW(1, 0); memcpy(copy + rows, &v, 4));
	/* Rows out of order. */
	CORRUPT("row order", v = ROW(0xffff, 0); memcpy(copy + rows + 4, &v, 4));
	/* A page claiming more rows than there are. */
	CORRUPT("page count", v = f->n_rows + 1; memcpy(copy + pages + 12, &v, 4));
	/* Pages not sorted. */
	CORRUPT("page order", memset(copy + pages + 16, 0, 8));
	/* A fixed rule changed. */
	CORRUPT("fixed rule", copy[rules + RULE_IDX_STOP * sizeof(struct unwind_rule)] =
				      RULE_CMD_PLT);
	/* An unknown command, a register past r15. */
	CORRUPT("command",
		copy[rules + RULE_FIXED_COUNT * sizeof(struct unwind_rule)] = 7);
	CORRUPT("register",
		copy[rules + RULE_FIXED_COUNT * sizeof(struct unwind_rule) + 1] =
			RULE_REG_COUNT);
	/* Counts that do not match the length. */
	CORRUPT("n_rows", v = f->n_rows + 1; memcpy(copy + 28, &v, 4));
	CORRUPT("n_rules", v = 2; memcpy(copy + 20, &v, 4));
	CORRUPT_("version", v = 99; memcpy(copy + 4, &v, 4), -ESTALE);
#undef CORRUPT
#undef CORRUPT_
	free(copy);
	free(buf);
	dt_file_free(f);
}

TEST(deltas_dump)
{
	struct dt_file *f = sample();
	char *out = NULL;
	size_t len = 0;
	FILE *m;

	if (!ASSERT_NOT_NULL(f, "sample"))
		return;
	m = open_memstream(&out, &len);
	ASSERT_OK(dt_file_dump(m, f), "dump");
	fclose(m);
	ASSERT_TRUE(out && strstr(out, "rule 3: SIGNAL"), "rules listed");
	ASSERT_TRUE(out && strstr(out, "0000000000010000 6 rsp+8"), "rows listed");
	free(out);
	dt_file_free(f);
}

/* Many rows in random order, at low addresses (radix sort) and above
 * 2^61 (the comparison sort): the same table either way, and every
 * lookup as a plain model says. */
TEST(deltas_sort_paths)
{
	static const uint64_t bases[] = { 0x400000, 0xe000000000000000ULL };
	struct dt_file *f[2] = { NULL, NULL };
	unsigned seed = 99, i, k, bad = 0;
	enum { N = 5000 };
	static int model[N * 4];

	for (i = 0; i < N * 4; i++)
		model[i] = -1;
	for (k = 0; k < 2; k++) {
		struct dt_builder *b;

		ASSERT_OK(dt_builder_new(&b), "new");
		seed = 99;
		for (i = 0; i < N; i++) {
			unsigned fn, off;
			struct unwind_rule r;

			seed = seed * 1103515245 + 12345;
			fn = (seed >> 8) % (N / 4);
			seed = seed * 1103515245 + 12345;
			off = (seed >> 8) % 16;
			r = sp(8 + 8 * (int)((seed >> 20) % 7));
			dt_builder_add(b, bases[k] + fn * 16 + off, &r);
			dt_builder_add_range(b, bases[k] + fn * 16,
					     bases[k] + fn * 16 + 16);
			if (k == 0)
				model[fn * 16 + off] = r.cfa_off;
		}
		ASSERT_OK(dt_builder_finish(b, &f[k]), "finish");
		dt_builder_free(b);
		if (f[k])
			check_invariants(f[k]);
	}
	if (!f[0] || !f[1])
		goto out;
	ASSERT_EQ(f[0]->n_rows, f[1]->n_rows, "same rows");
	ASSERT_EQ(f[0]->n_rules, f[1]->n_rules, "same rules");
	/* Model: within a function (16 bytes) the last row at or below. */
	for (i = 0; i < N / 4 * 16; i++) {
		int want = -1, j;
		struct unwind_rule r0 = at(f[0], bases[0] + i),
				   r1 = at(f[1], bases[1] + i);

		for (j = (int)i; j >= (int)(i & ~15U); j--) {
			if (model[j] >= 0) {
				want = model[j];
				break;
			}
		}
		if (memcmp(&r0, &r1, sizeof(r0)) ||
		    (want < 0 ? r0.cmd != RULE_CMD_INVALID
			      : (r0.cmd != RULE_CMD_NONE || r0.cfa_off != want)))
			bad++;
	}
	ASSERT_EQ(bad, 0, "lookups as the model says");
out:
	dt_file_free(f[0]);
	dt_file_free(f[1]);
}
