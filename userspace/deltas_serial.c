// SPDX-License-Identifier: Apache-2.0
/*
 * The finished table's serialization: the record written to the store and
 * read back (checked: header, CRC, rules, pages), rows copied into the BPF
 * maps' blocks, and the debugging dump.  The builder and the lookup are in
 * deltas.c.
 */
#include "deltas.h"
#include "deltas_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzzing.h"

/* ---- serialization ------------------------------------------------------ */

#define DT_MAGIC "EPDT"

struct dt_hdr {
	char magic[4];
	uint32_t version;
	uint32_t hdr_size;
	uint32_t crc; /* CRC-32 of the whole buffer with this field zero */
	uint32_t source;
	uint32_t n_rules;
	uint32_t n_pages;
	uint32_t n_rows;
	uint64_t covered;
	uint64_t text_lo, text_hi;
};
_Static_assert(sizeof(struct dt_hdr) == 56, "dt_hdr layout");
_Static_assert(sizeof(struct dt_page) == 16, "dt_page layout");

static uint32_t buf_crc(const uint8_t *buf, size_t len)
{
	static const uint8_t zero[4];
	uLong c = crc32(0L, Z_NULL, 0);
	size_t off = offsetof(struct dt_hdr, crc), done;

	c = crc32(c, buf, off);
	c = crc32(c, zero, 4);
	/* crc32() takes uInt lengths. */
	for (done = off + 4; done < len;) {
		size_t chunk = len - done > (1U << 30) ? (1U << 30) : len - done;

		c = crc32(c, buf + done, (uInt)chunk);
		done += chunk;
	}
	return (uint32_t)c;
}

int dt_file_serialize(const struct dt_file *f, void **buf, size_t *len)
{
	size_t sz = sizeof(struct dt_hdr) +
		    (size_t)f->n_pages * sizeof(struct dt_page) +
		    (size_t)f->n_rules * sizeof(struct unwind_rule) +
		    (size_t)f->n_rows * sizeof(uint32_t);
	struct dt_hdr h = { 0 };
	uint8_t *p, *o;

	*buf = NULL;
	p = malloc(sz);
	if (!p)
		return -ENOMEM;
	memcpy(h.magic, DT_MAGIC, 4);
	h.version = DT_FORMAT_VERSION;
	h.hdr_size = sizeof(h);
	h.source = f->source;
	h.n_rules = f->n_rules;
	h.n_pages = f->n_pages;
	h.n_rows = f->n_rows;
	h.covered = f->covered;
	h.text_lo = f->text_lo;
	h.text_hi = f->text_hi;
	o = p + sizeof(h);
	memcpy(o, f->pages, (size_t)f->n_pages * sizeof(struct dt_page));
	o += (size_t)f->n_pages * sizeof(struct dt_page);
	memcpy(o, f->rules, (size_t)f->n_rules * sizeof(struct unwind_rule));
	o += (size_t)f->n_rules * sizeof(struct unwind_rule);
	memcpy(o, f->rows, (size_t)f->n_rows * sizeof(uint32_t));
	memcpy(p, &h, sizeof(h));
	h.crc = buf_crc(p, sz);
	memcpy(p, &h, sizeof(h));
	*buf = p;
	*len = sz;
	return 0;
}

static bool rule_ok(const struct unwind_rule *r, uint32_t idx)
{
	struct unwind_rule c;

	if (idx < RULE_FIXED_COUNT)
		return memcmp(r, &dt_fixed_rules[idx], sizeof(*r)) == 0;
	/* Only canonical rules are ever written. */
	if (dt_canonicalize(r, &c) != 0 || memcmp(&c, r, sizeof(c)) != 0)
		return false;
	return r->cmd == RULE_CMD_NONE || r->cmd == RULE_CMD_PLT;
}

/* A row may follow the one before it in its page: it names one of the
 * table's n_rules rules and its address rises (prev: the address before
 * it, -1 for a page's first row). */
static inline bool row_follows(uint32_t row, int32_t prev, uint32_t n_rules)
{
	return ROW_RULE(row) < n_rules && (int32_t)ROW_ADDR(row) > prev;
}

/* The pages tile the rows; with rows, each row is sound too. */
static bool pages_ok(const struct dt_file *t, bool rows_too)
{
	uint64_t next_first = 0;
	uint32_t i, j;
	int32_t prev;

	for (i = 0; i < t->n_pages; i++) {
		const struct dt_page *p = &t->pages[i];
		const uint32_t *rows;

		if (i > 0 && p->page <= t->pages[i - 1].page)
			return false;
		if (p->page > (UINT64_MAX >> DELTA_PAGE_BITS))
			return false;
		if (p->first != next_first || p->count == 0 ||
		    p->count > (1U << DELTA_PAGE_BITS) ||
		    p->count > t->n_rows - p->first)
			return false;
		rows = t->rows + p->first;
		if (ROW_ADDR(rows[0]) != 0)
			return false;
		prev = -1;
		for (j = 0; rows_too && j < p->count; j++) {
			if (!row_follows(rows[j], prev, t->n_rules))
				return false;
			prev = (int32_t)ROW_ADDR(rows[j]);
		}
		next_first += p->count;
	}
	return next_first == t->n_rows;
}

int dt_copy_rows(const struct dt_file *t, const uint32_t *rule_hi,
		 uint32_t *dst)
{
	uint32_t i, j;

	for (i = 0; i < t->n_pages; i++) {
		const struct dt_page *p = &t->pages[i];
		const uint32_t *src = t->rows + p->first;
		uint32_t *out = dst + p->first;
		int32_t prev = -1;

		/* a cache hit's hot loop: one pass checks and copies */
		for (j = 0; j < p->count; j++) {
			uint32_t row = src[j];

			if (!row_follows(row, prev, t->n_rules))
				return -EINVAL;
			prev = (int32_t)ROW_ADDR(row);
			out[j] = rule_hi[ROW_RULE(row)] | ROW_ADDR(row);
		}
	}
	return 0;
}

int dt_file_record(const struct dt_file *f, void **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	return f->n_rows ? dt_file_serialize(f, buf, len) : 0;
}

int dt_file_deserialize(const void *buf, size_t len, struct dt_file **out)
{
	return dt_file_deserialize_opts(buf, len, false, out);
}

/* Check a serialized file's header (and CRC unless checksummed); fills
 * *h.  The arrays follow the header: pages, rules, rows. */
static int check_hdr(const void *buf, size_t len, bool checksummed,
		     struct dt_hdr *h)
{
	uint64_t need;

	if (!buf || len < sizeof(*h))
		return -EINVAL;
	memcpy(h, buf, sizeof(*h));
	if (memcmp(h->magic, DT_MAGIC, 4) != 0)
		return -EINVAL;
	/* written by another version of the extractor: not damage, just
	 * something to compute again */
	if (h->version != DT_FORMAT_VERSION)
		return -ESTALE;
	if (h->hdr_size != sizeof(*h))
		return -EINVAL;
	if (h->n_rules < RULE_FIXED_COUNT || h->n_rules > MAX_RULES ||
	    h->n_pages > DT_MAX_PAGES || h->n_rows > DT_MAX_ROWS + DT_MAX_PAGES)
		return -EINVAL;
	need = sizeof(*h) + (uint64_t)h->n_pages * sizeof(struct dt_page) +
	       (uint64_t)h->n_rules * sizeof(struct unwind_rule) +
	       (uint64_t)h->n_rows * sizeof(uint32_t);
	if (need != len)
		return -EINVAL;
	if (!checksummed && buf_crc(buf, len) != h->crc && !FUZZING_CRC_ADVISORY)
		return -EINVAL;
	if (h->text_lo > h->text_hi || (h->source & ~0x1fU) ||
	    (h->text_hi && h->covered > h->text_hi - h->text_lo))
		return -EINVAL;
	return 0;
}

/* The rules and pages of t (arrays already in place) make sense, and
 * with rows_too its rows. */
static int check_body(const struct dt_hdr *h, struct dt_file *t,
		      bool rows_too)
{
	uint32_t i;

	for (i = 0; i < t->n_rules; i++)
		if (!rule_ok(&t->rules[i], i))
			return -EINVAL;
	if (!pages_ok(t, rows_too))
		return -EINVAL;
	t->source = h->source;
	t->covered = h->covered;
	t->text_lo = h->text_lo;
	t->text_hi = h->text_hi;
	return 0;
}

int dt_file_deserialize_opts(const void *buf, size_t len, bool checksummed,
			     struct dt_file **out)
{
	const uint8_t *p = buf;
	struct dt_file *t;
	struct dt_hdr h;
	int err;

	*out = NULL;
	err = check_hdr(buf, len, checksummed, &h);
	if (err)
		return err;
	t = dt_file_alloc(h.n_rules, h.n_pages, h.n_rows);
	if (!t)
		return -ENOMEM;
	p += sizeof(h);
	memcpy(t->pages, p, (size_t)h.n_pages * sizeof(struct dt_page));
	p += (size_t)h.n_pages * sizeof(struct dt_page);
	memcpy(t->rules, p, (size_t)h.n_rules * sizeof(struct unwind_rule));
	p += (size_t)h.n_rules * sizeof(struct unwind_rule);
	memcpy(t->rows, p, (size_t)h.n_rows * sizeof(uint32_t));
	err = check_body(&h, t, true);
	if (err) {
		free(t);
		return err;
	}
	*out = t;
	return 0;
}

int dt_file_view(const void *buf, size_t len, bool checksummed,
		 struct dt_file *out)
{
	const uint8_t *p = buf;
	struct dt_hdr h;
	int err;

	memset(out, 0, sizeof(*out));
	if ((uintptr_t)buf % _Alignof(struct dt_page))
		return -EFAULT;
	err = check_hdr(buf, len, checksummed, &h);
	if (err)
		return err;
	p += sizeof(h);
	out->n_rules = h.n_rules;
	out->n_pages = h.n_pages;
	out->n_rows = h.n_rows;
	out->pages = (struct dt_page *)p;
	p += (size_t)h.n_pages * sizeof(struct dt_page);
	out->rules = (struct unwind_rule *)p;
	p += (size_t)h.n_rules * sizeof(struct unwind_rule);
	out->rows = (uint32_t *)p;
	err = check_body(&h, out, false);
	if (err)
		memset(out, 0, sizeof(*out));
	return err;
}

/* ---- debugging ---------------------------------------------------------- */

static const char *reg_name(unsigned reg)
{
	static const char *const names[RULE_REG_COUNT] = {
		"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
		"r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15",
	};

	return reg < RULE_REG_COUNT ? names[reg] : "?";
}

const char *dt_rule_str(const struct unwind_rule *r, char *buf, size_t len)
{
	static const char *cmds[] = { "", "INVALID", "STOP", "PLT", "SIGNAL",
				      "FRAME_POINTER", "UNSUPPORTED" };
	static const uint8_t saved[RULE_SAVED_COUNT] = RULE_SAVED_REGS;
	size_t n;
	int i;

	if (r->cmd == RULE_CMD_PLT) {
		snprintf(buf, len, "PLT(%s+%d, >=%d)", reg_name(r->cfa_reg),
			 r->cfa_off, r->cfa_post);
		return buf;
	}
	if (r->cmd == RULE_CMD_GO_SWITCH) {
		if (r->flags & RULE_F_GO_FP)
			snprintf(buf, len, "GO_SWITCH(frame pointer)");
		else
			snprintf(buf, len,
				 (r->flags & RULE_F_GO_TLS_GOT) ?
					 "GO_SWITCH(g at fs+*0x%x, m.curg +0x%x)" :
					 "GO_SWITCH(g at fs%+d, m.curg +0x%x)",
				 r->cfa_off, (unsigned)r->fp_off);
		return buf;
	}
	if (r->cmd != RULE_CMD_NONE) {
		snprintf(buf, len, "%s",
			 r->cmd < sizeof(cmds) / sizeof(cmds[0]) ? cmds[r->cmd]
								 : "?");
		return buf;
	}
	if (r->flags & RULE_F_DEREF_CFA)
		n = snprintf(buf, len, "*(%s%+d)%+d", reg_name(r->cfa_reg),
			     r->cfa_off, r->cfa_post);
	else
		n = snprintf(buf, len, "%s%+d", reg_name(r->cfa_reg),
			     r->cfa_off);
	if (n >= len)
		return buf;
	switch (r->fp_rule) {
	case RULE_FP_CFA_OFF:
		snprintf(buf + n, len - n, " rbp=c%+d", r->fp_off);
		break;
	case RULE_FP_REG_OFF:
		snprintf(buf + n, len - n, " rbp=*(rbp%+d)", r->fp_off);
		break;
	case RULE_FP_UNDEF:
		snprintf(buf + n, len - n, " rbp=u");
		break;
	}
	n = strlen(buf);
	if (r->ra_rule == RULE_RA_CFA_OFF)
		snprintf(buf + n, len - n, " ra=c%+d", r->ra_off);
	else if (r->ra_rule == RULE_RA_LR)
		snprintf(buf + n, len - n, " ra=lr");
	for (i = 0; i < RULE_SAVED_COUNT; i++) {
		n = strlen(buf);
		if (r->saved[i] == RULE_SAVED_UNDEF)
			snprintf(buf + n, len - n, " %s=u", reg_name(saved[i]));
		else if (r->saved[i] != RULE_SAVED_SAME)
			snprintf(buf + n, len - n, " %s=c%+d",
				 reg_name(saved[i]), r->saved[i] * 8);
	}
	return buf;
}

int dt_file_dump(FILE *f, const struct dt_file *t)
{
	char s[160];
	uint32_t i, j;

	fprintf(f, "source 0x%x rules %u pages %u rows %u covered %" PRIu64
		   " text [0x%" PRIx64 ", 0x%" PRIx64 ")\n",
		t->source, t->n_rules, t->n_pages, t->n_rows, t->covered,
		t->text_lo, t->text_hi);
	for (i = 0; i < t->n_rules; i++)
		fprintf(f, "rule %u: %s\n", i,
			dt_rule_str(&t->rules[i], s, sizeof(s)));
	for (i = 0; i < t->n_pages; i++) {
		const struct dt_page *p = &t->pages[i];

		fprintf(f, "page 0x%" PRIx64 " rows %u\n",
			p->page << DELTA_PAGE_BITS, p->count);
		for (j = 0; j < p->count; j++) {
			uint32_t row = t->rows[p->first + j];
			uint32_t rule = ROW_RULE(row);

			fprintf(f, "  %016" PRIx64 " %u %s\n",
				(p->page << DELTA_PAGE_BITS) | ROW_ADDR(row),
				rule,
				rule < t->n_rules
					? dt_rule_str(&t->rules[rule], s,
						      sizeof(s))
					: "?");
		}
	}
	return ferror(f) ? -EIO : 0;
}
