// SPDX-License-Identifier: Apache-2.0
/*
 * Inline frames and source lines from DWARF: one walk of every compile
 * unit's DIE tree and line table into a flat table (dwinline.h).
 *
 * Build: each subprogram and inlined subroutine with code becomes a scope
 * (parents before children, so a parent's index is always smaller) and
 * one interval per address range.  The intervals, sorted by start and
 * nesting depth, are swept with a stack into non-overlapping segments,
 * each naming the innermost scope that covers it.  Line rows keep what
 * libdw's dwarf_getsrc_die() would answer: the last row at an address,
 * and a row only where the (file, line) changes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "dwinline.h"
#include "arr.h"
#include "elfmap.h"
#include "sorted.h"
#include "hashmap.h"

#define NONE UINT32_MAX
/* Deeper DIE nesting or inline chains are not followed: a chain of 64
 * inlined calls is already far past real code (the reference's symblib
 * allows more, but a flame graph shows no more), and the cap bounds the
 * recursion a hostile file can ask for. */
#define DWI_MAX_DEPTH 64
#define MAGIC "DWIT"

struct dwi_hdr {
	char magic[4];
	uint32_t version;
	uint32_t flags;
	uint32_t nscopes;
	uint32_t inlined;
	uint32_t nsegs;
	uint32_t nlines;
	uint32_t str_bytes;
};
_Static_assert(sizeof(struct dwi_hdr) == 32, "dwi_hdr");

struct dwi_scope {
	uint32_t name;
	uint32_t parent;	/* NONE for a function */
	uint32_t call_file;	/* inlined: the call site in the parent */
	uint32_t call_line;
};
_Static_assert(sizeof(struct dwi_scope) == 16, "dwi_scope");

/* covers [start, next segment's start) */
struct dwi_seg {
	uint64_t start;
	uint32_t scope;		/* NONE: no function here */
	uint32_t pad;
};
_Static_assert(sizeof(struct dwi_seg) == 16, "dwi_seg");

struct dwi_line {
	uint64_t addr;
	uint32_t file;		/* NONE: end of a sequence, no line */
	uint32_t line;
};
_Static_assert(sizeof(struct dwi_line) == 16, "dwi_line");

struct dwi_table {
	void *buf;
	size_t len;
	const struct dwi_hdr *hdr;
	const struct dwi_scope *scopes;
	const struct dwi_seg *segs;
	const struct dwi_line *lines;
	const char *strs;
};

/* ---- build ------------------------------------------------------------ */

struct iv {
	uint64_t lo, hi;
	uint32_t scope, depth;
};

struct row {
	uint64_t addr;
	uint32_t file, line;
	uint32_t ord;		/* order in libdw's sorted list: ties */
	uint8_t end;
};

struct builder {
	struct dwi_scope *scopes;
	struct iv *ivs;
	struct row *rows;
	struct dwi_seg *segs;
	char *strs;
	uint32_t nscopes, cscopes, nivs, civs, nrows, crows, nsegs, csegs;
	uint32_t nstrs, cstrs, inlined;
	struct hm names;	/* string hash -> offset */
	size_t max_bytes;
	bool funcs_only;
	uint64_t deadline_ns;	/* CLOCK_MONOTONIC; 0: none */
	/* the compile unit being read */
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t nfiles;
	uint32_t *file_off;	/* file index -> string offset, NONE unread */
	size_t cfile_off;
};

/* Make room for one more element in *p (n used of *cap): arr_grow, with
 * -EFBIG past UINT32_MAX / 2 elements (the table's offsets are u32). */
static int grow(void **p, uint32_t n, uint32_t *cap, size_t elem)
{
	size_t c = *cap;

	if (n < *cap)
		return 0;
	if (*cap >= UINT32_MAX / 2)
		return -EFBIG;
	if (arr_grow(p, &c, (size_t)n + 1, elem, UINT32_MAX / 2))
		return -ENOMEM;
	*cap = (uint32_t)c;
	return 0;
}

/* What the blob would take so far; intervals stand in for the segments
 * they become (about one each). */
static bool over_budget(const struct builder *b)
{
	size_t bytes = sizeof(struct dwi_hdr) +
		       16 * ((size_t)b->nscopes + b->nivs + b->nrows) +
		       b->nstrs;

	return bytes > b->max_bytes;
}

static int intern(struct builder *b, const char *s, uint32_t *off)
{
	size_t len = strlen(s);
	uint64_t h = hm_hash(s, len, 0), v;
	int err;

	while (hm_get(&b->names, h, &v)) {
		if (strcmp(b->strs + v, s) == 0) {
			*off = v;
			return 0;
		}
		h = hm_mix(h + 1);	/* collision: the next slot */
	}
	if (len >= UINT32_MAX / 4 || b->nstrs + len + 1 > b->max_bytes)
		return -EFBIG;
	while (b->nstrs + len + 1 > b->cstrs) {
		err = grow((void **)&b->strs, b->cstrs, &b->cstrs, 1);
		if (err)
			return err;
	}
	memcpy(b->strs + b->nstrs, s, len + 1);
	err = hm_put(&b->names, h, b->nstrs);
	if (err)
		return err;
	*off = b->nstrs;
	b->nstrs += len + 1;
	return 0;
}

/* The string offset of the unit's file number idx, or NONE. */
static int file_name(struct builder *b, uint64_t idx, uint32_t *off)
{
	const char *s;
	int err;

	*off = NONE;
	if (!b->files || idx >= b->nfiles)
		return 0;
	if (b->file_off[idx] == NONE) {
		s = dwarf_filesrc(b->files, idx, NULL, NULL);
		if (!s)
			return 0;
		err = intern(b, s, &b->file_off[idx]);
		if (err)
			return err;
	}
	*off = b->file_off[idx];
	return 0;
}

/*
 * The name a frame shows: a mangled linkage name (C++, Rust: demangled
 * later, it carries the namespaces and types) or else DW_AT_name; a C
 * linkage name is only an asm label (glibc's __GI_ aliases) and reads
 * worse than the source name.  Both through abstract origins.
 */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n;

	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(
			dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (n && n[0] == '_' && (n[1] == 'Z' || n[1] == 'R'))
		return n;
	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return n ? n : "??";
}

/* A scope for die when it has code; *idx is NONE when it has none. */
static int add_scope(struct builder *b, Dwarf_Die *die, uint32_t parent,
		     uint32_t depth, uint32_t *idx)
{
	Dwarf_Addr base, lo, hi;
	struct dwi_scope *s = NULL;
	Dwarf_Attribute a;
	Dwarf_Word w;
	ptrdiff_t off = 0;
	int err;

	*idx = NONE;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (!s) {
			err = grow((void **)&b->scopes, b->nscopes,
				   &b->cscopes, sizeof(*s));
			if (err)
				return err;
			s = &b->scopes[b->nscopes];
			*s = (struct dwi_scope){ .parent = parent,
						 .call_file = NONE };
			err = intern(b, die_name(die), &s->name);
			if (err)
				return err;
			if (parent != NONE) {
				if (dwarf_formudata(dwarf_attr(die,
						DW_AT_call_file, &a), &w) == 0) {
					err = file_name(b, w, &s->call_file);
					if (err)
						return err;
				}
				if (dwarf_formudata(dwarf_attr(die,
						DW_AT_call_line, &a), &w) == 0)
					s->call_line = w > UINT32_MAX ?
						0 : (uint32_t)w;
				b->inlined++;
			}
			*idx = b->nscopes++;
		}
		err = grow((void **)&b->ivs, b->nivs, &b->civs, sizeof(*b->ivs));
		if (err)
			return err;
		b->ivs[b->nivs++] = (struct iv){ lo, hi, *idx, depth };
	}
	if (over_budget(b))
		return -EFBIG;
	return 0;
}

/* The children of die; parent is the innermost scope around them. */
static int walk(struct builder *b, Dwarf_Die *die, uint32_t parent,
		uint32_t depth)
{
	Dwarf_Die c;
	uint32_t idx;
	int tag, err;

	if (depth >= DWI_MAX_DEPTH || dwarf_child(die, &c) != 0)
		return 0;
	do {
		/* whether c's children are walked, and in which scope */
		bool descend = false;
		uint32_t under = parent;

		tag = dwarf_tag(&c);
		switch (tag) {
		case DW_TAG_inlined_subroutine:
			/* functions only: the function's ranges cover it */
			if (b->funcs_only || parent == NONE)
				break;
			/* fall through */
		case DW_TAG_subprogram:
			err = add_scope(b, &c, tag == DW_TAG_subprogram ?
					NONE : parent, depth, &idx);
			if (err)
				return err;
			/* no code, no frames under it (an abstract instance) */
			descend = idx != NONE && !b->funcs_only;
			under = idx;
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			descend = parent != NONE && !b->funcs_only;
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
			descend = true;
			break;
		}
		if (descend) {
			err = walk(b, &c, under, depth + 1);
			if (err)
				return err;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

static int read_lines(struct builder *b)
{
	const char *src, *last_src = NULL;
	uint32_t last_off = NONE, start = b->nrows;
	Dwarf_Lines *lines;
	Dwarf_Addr addr;
	size_t n, i;
	bool end;
	int lineno, err;

	if (dwarf_getsrclines(&b->cu, &lines, &n) != 0)
		return 0;	/* a unit without lines */
	for (i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		struct row r = { 0 }, *prev;

		if (!l || dwarf_lineaddr(l, &addr) != 0 ||
		    dwarf_lineendsequence(l, &end) != 0)
			continue;
		r.addr = addr;
		r.end = end;
		r.file = NONE;
		if (!end) {
			if (dwarf_lineno(l, &lineno) != 0 || lineno < 0)
				lineno = 0;
			r.line = lineno;
			src = dwarf_linesrc(l, NULL, NULL);
			if (src && src != last_src) {
				err = intern(b, src, &last_off);
				if (err)
					return err;
				last_src = src;
			}
			r.file = src ? last_off : NONE;
		}
		prev = b->nrows > start ? &b->rows[b->nrows - 1] : NULL;
		/* libdw answers with the last row at an address */
		if (prev && prev->addr == r.addr) {
			r.ord = prev->ord;
			*prev = r;
			continue;
		}
		if (prev && !r.end && !prev->end && prev->file == r.file &&
		    prev->line == r.line)
			continue;
		err = grow((void **)&b->rows, b->nrows, &b->crows,
			   sizeof(*b->rows));
		if (err)
			return err;
		r.ord = b->nrows;
		b->rows[b->nrows++] = r;
		if ((b->nrows & 4095) == 0 && over_budget(b))
			return -EFBIG;
	}
	return over_budget(b) ? -EFBIG : 0;
}

static int read_unit(struct builder *b)
{
	size_t i;
	int err;

	b->files = NULL;
	b->nfiles = 0;
	if (!b->funcs_only && dwarf_getsrcfiles(&b->cu, &b->files,
						&b->nfiles) == 0) {
		if (ARR_RESERVE(b->file_off, b->cfile_off, b->nfiles,
				ARR_NO_LIMIT))
			return -ENOMEM;
		for (i = 0; i < b->nfiles; i++)
			b->file_off[i] = NONE;
	} else {
		b->files = NULL;
		b->nfiles = 0;
	}
	err = walk(b, &b->cu, NONE, 0);
	if (err || b->funcs_only)
		return err;
	return read_lines(b);
}

static int cmp_iv(const void *pa, const void *pb)
{
	const struct iv *a = pa, *b = pb;

	/* the larger of two intervals at one start and depth first */
	return CMP3(a->lo, b->lo) ?: CMP3(a->depth, b->depth) ?:
	       CMP3(b->hi, a->hi) ?: CMP3(a->scope, b->scope);
}

/* Ends of sequences before rows at the same address, then libdw's order. */
static int cmp_row(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;

	return CMP3(a->addr, b->addr) ?: CMP3(b->end, a->end) ?:
	       CMP3(a->ord, b->ord);
}

static int emit(struct builder *b, uint64_t start, uint32_t scope)
{
	int err;

	if (b->nsegs && b->segs[b->nsegs - 1].scope == scope)
		return 0;
	err = grow((void **)&b->segs, b->nsegs, &b->csegs, sizeof(*b->segs));
	if (err)
		return err;
	b->segs[b->nsegs++] = (struct dwi_seg){ .start = start, .scope = scope };
	return 0;
}

/* Sweep the sorted intervals with a stack of the open ones (each inside
 * the one below it: an interval that pokes out of its container is cut
 * to it) into segments of the innermost open scope. */
static int flatten(struct builder *b)
{
	struct { uint64_t hi; uint32_t scope; } *st;
	uint32_t sp = 0, i;
	uint64_t pos = 0, lo, hi;
	int err = 0;

	qsort(b->ivs, b->nivs, sizeof(*b->ivs), cmp_iv);
	st = malloc(((size_t)b->nivs + 1) * sizeof(*st));
	if (!st)
		return -ENOMEM;
	for (i = 0; i <= b->nivs; i++) {
		lo = i < b->nivs ? b->ivs[i].lo : UINT64_MAX;
		while (sp && st[sp - 1].hi <= lo) {
			if (pos < st[sp - 1].hi) {
				err = emit(b, pos, st[sp - 1].scope);
				if (err)
					goto out;
				pos = st[sp - 1].hi;
			}
			sp--;
		}
		if (i == b->nivs)
			break;
		if (pos < lo) {
			err = emit(b, pos, sp ? st[sp - 1].scope : NONE);
			if (err)
				goto out;
			pos = lo;
		}
		hi = b->ivs[i].hi;
		if (sp && hi > st[sp - 1].hi)
			hi = st[sp - 1].hi;
		if (hi <= lo)
			continue;
		st[sp].hi = hi;
		st[sp].scope = b->ivs[i].scope;
		sp++;
	}
	err = emit(b, pos, NONE);
out:
	free(st);
	return err;
}

/* Sort the rows of all units, keep the last at an address and only the
 * rows where the answer changes. */
static void sort_rows(struct builder *b)
{
	uint32_t i, n = 0;

	if (!b->nrows)
		return;	/* functions only */
	qsort(b->rows, b->nrows, sizeof(*b->rows), cmp_row);
	for (i = 0; i < b->nrows; i++) {
		struct row *r = &b->rows[i];

		if (n && b->rows[n - 1].addr == r->addr) {
			b->rows[n - 1] = *r;
			continue;
		}
		if (n && b->rows[n - 1].end == r->end &&
		    b->rows[n - 1].file == r->file &&
		    b->rows[n - 1].line == r->line)
			continue;
		b->rows[n++] = *r;
	}
	b->nrows = n;
}

static int pack(struct builder *b, struct dwi_table **out)
{
	struct dwi_table *t;
	struct dwi_hdr *h;
	struct dwi_line *l;
	size_t len;
	char *p;
	uint32_t i;

	len = sizeof(*h) + sizeof(struct dwi_scope) * (size_t)b->nscopes +
	      sizeof(struct dwi_seg) * (size_t)b->nsegs +
	      sizeof(struct dwi_line) * (size_t)b->nrows + b->nstrs;
	if (len > b->max_bytes)
		return -EFBIG;
	t = calloc(1, sizeof(*t));
	p = malloc(len);
	if (!t || !p) {
		free(t);
		free(p);
		return -ENOMEM;
	}
	h = (struct dwi_hdr *)p;
	memcpy(h->magic, MAGIC, 4);
	h->version = DWI_VERSION;
	h->flags = b->funcs_only ? DWI_FUNCS_ONLY : 0;
	h->nscopes = b->nscopes;
	h->inlined = b->inlined;
	h->nsegs = b->nsegs;
	h->nlines = b->nrows;
	h->str_bytes = b->nstrs;
	p += sizeof(*h);
	memcpy(p, b->scopes, sizeof(struct dwi_scope) * (size_t)b->nscopes);
	p += sizeof(struct dwi_scope) * (size_t)b->nscopes;
	memcpy(p, b->segs, sizeof(struct dwi_seg) * (size_t)b->nsegs);
	p += sizeof(struct dwi_seg) * (size_t)b->nsegs;
	l = (struct dwi_line *)p;
	for (i = 0; i < b->nrows; i++)
		l[i] = (struct dwi_line){ b->rows[i].addr, b->rows[i].file,
					  b->rows[i].line };
	p += sizeof(struct dwi_line) * (size_t)b->nrows;
	memcpy(p, b->strs, b->nstrs);
	t->buf = h;
	t->len = len;
	*out = t;
	return 0;
}

static void builder_reset(struct builder *b)
{
	free(b->scopes);
	free(b->ivs);
	free(b->rows);
	free(b->segs);
	free(b->strs);
	free(b->file_off);
	hm_free(&b->names);
	*b = (struct builder){ .max_bytes = b->max_bytes,
			       .funcs_only = b->funcs_only,
			       .deadline_ns = b->deadline_ns };
	hm_init(&b->names);
}

static void table_point(struct dwi_table *t);

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int build(Dwarf *dw, struct builder *b, struct dwi_table **out)
{
	Dwarf_CU *cu = NULL;
	uint8_t type;
	uint32_t off;
	int r, err;

	/* offset 0 is the "??" of nameless scopes: never an empty table */
	err = intern(b, "??", &off);
	if (err)
		return err;
	while ((r = dwarf_get_units(dw, cu, &cu, NULL, &type, &b->cu,
				    NULL)) == 0) {
		/* type units have no code; partial units (dwz) and split
		 * units are not followed */
		if (type != DW_UT_compile)
			continue;
		if (b->deadline_ns && mono_ns() > b->deadline_ns)
			return -ETIMEDOUT;
		err = read_unit(b);
		if (err)
			return err;
	}
	if (r < 0)
		return -EINVAL;
	if (!b->nivs)
		return -ENODATA;
	err = flatten(b);
	if (err)
		return err;
	sort_rows(b);
	err = pack(b, out);
	if (!err)
		table_point(*out);
	return err;
}

int dwi_build_fd(int fd, const struct dwi_opts *o, struct dwi_table **out)
{
	struct builder b = { 0 };
	struct elfm *e = NULL;
	Dwarf *dw = NULL;
	struct Elf *elf;
	int err;

	*out = NULL;
	err = elfm_open_fd(fd, &e);
	if (err)
		return err;
	/* libdw reads the DWARF through elfm's door to libelf */
	elf = elfm_libelf(e, fd);
	if (!elf) {
		err = -EINVAL;
		goto cleanup;
	}
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw) {
		err = -ENODATA;
		goto cleanup;
	}
	b.max_bytes = o && o->max_bytes ? o->max_bytes : DWI_DEFAULT_MAX_BYTES;
	b.funcs_only = o && o->funcs_only;
	if (o && o->max_ns)
		b.deadline_ns = mono_ns() + o->max_ns;
	hm_init(&b.names);
	err = build(dw, &b, out);
	if (err == -EFBIG && !b.funcs_only) {
		/* over budget: again, for the functions alone */
		b.funcs_only = true;
		builder_reset(&b);
		err = build(dw, &b, out);
	}
	builder_reset(&b);
	hm_free(&b.names);
	/* a file cut short under the mapping: the table was read from zeros */
	if (!err && elfm_damaged(e)) {
		dwi_free(*out);
		*out = NULL;
		err = -EIO;
	}
cleanup:
	if (dw)
		dwarf_end(dw);
	elfm_free(e);
	return err;
}

int dwi_build_path(const char *path, const struct dwi_opts *o,
		   struct dwi_table **out)
{
	int fd, err;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = dwi_build_fd(fd, o, out);
	close(fd);
	return err;
}

/* ---- the table ---------------------------------------------------------- */

static void table_point(struct dwi_table *t)
{
	const char *p = t->buf;

	t->hdr = t->buf;
	p += sizeof(*t->hdr);
	t->scopes = (const struct dwi_scope *)p;
	p += sizeof(struct dwi_scope) * (size_t)t->hdr->nscopes;
	t->segs = (const struct dwi_seg *)p;
	p += sizeof(struct dwi_seg) * (size_t)t->hdr->nsegs;
	t->lines = (const struct dwi_line *)p;
	p += sizeof(struct dwi_line) * (size_t)t->hdr->nlines;
	t->strs = p;
}

void dwi_free(struct dwi_table *t)
{
	if (!t)
		return;
	free(t->buf);
	free(t);
}

const void *dwi_blob(const struct dwi_table *t, size_t *len)
{
	*len = t->len;
	return t->buf;
}

uint32_t dwi_flags(const struct dwi_table *t)
{
	return t->hdr->flags;
}

void dwi_stats(const struct dwi_table *t, struct dwi_stats *st)
{
	st->scopes = t->hdr->nscopes;
	st->inlined = t->hdr->inlined;
	st->segments = t->hdr->nsegs;
	st->lines = t->hdr->nlines;
	st->str_bytes = t->hdr->str_bytes;
	st->bytes = t->len;
}

/* Every index and offset in range, arrays sorted, chains acyclic (a
 * parent before its child) and no deeper than DWI_MAX_DEPTH. */
static bool valid(const struct dwi_table *t)
{
	const struct dwi_hdr *h = t->hdr;
	uint8_t *depth;
	uint32_t i;
	bool ok = false;

	if (h->flags & ~DWI_FUNCS_ONLY || h->inlined > h->nscopes ||
	    !h->str_bytes || t->strs[h->str_bytes - 1] != 0)
		return false;
	depth = malloc(h->nscopes ? h->nscopes : 1);
	if (!depth)
		return false;
	for (i = 0; i < h->nscopes; i++) {
		const struct dwi_scope *s = &t->scopes[i];

		if (s->name >= h->str_bytes ||
		    (s->call_file != NONE && s->call_file >= h->str_bytes))
			goto out;
		if (s->parent == NONE) {
			depth[i] = 0;
			continue;
		}
		if (s->parent >= i || depth[s->parent] + 1 >= DWI_MAX_DEPTH)
			goto out;
		depth[i] = depth[s->parent] + 1;
	}
	for (i = 0; i < h->nsegs; i++) {
		const struct dwi_seg *s = &t->segs[i];

		if ((s->scope != NONE && s->scope >= h->nscopes) ||
		    (i && s->start <= t->segs[i - 1].start))
			goto out;
	}
	for (i = 0; i < h->nlines; i++) {
		const struct dwi_line *l = &t->lines[i];

		if ((l->file != NONE && l->file >= h->str_bytes) ||
		    (i && l->addr <= t->lines[i - 1].addr))
			goto out;
	}
	ok = true;
out:
	free(depth);
	return ok;
}

int dwi_load(const void *blob, size_t len, struct dwi_table **out)
{
	struct dwi_hdr h;
	struct dwi_table *t;
	uint64_t need;

	*out = NULL;
	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, blob, sizeof(h));
	if (memcmp(h.magic, MAGIC, 4) != 0)
		return -EBADMSG;
	if (h.version != DWI_VERSION)
		return -EPROTO;
	need = sizeof(h) + 16ULL * ((uint64_t)h.nscopes + h.nsegs + h.nlines) +
	       h.str_bytes;
	if (need != len)
		return -EBADMSG;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->buf = malloc(len);
	if (!t->buf) {
		free(t);
		return -ENOMEM;
	}
	memcpy(t->buf, blob, len);
	t->len = len;
	table_point(t);
	if (!valid(t)) {
		dwi_free(t);
		return -EBADMSG;
	}
	*out = t;
	return 0;
}

int dwi_lookup(const struct dwi_table *t, uint64_t addr,
	       struct dwi_frame *frames, int max)
{
	const struct dwi_scope *s;
	int64_t i;
	uint32_t sc;
	int n = 0;

	if (max <= 0)
		return 0;
	i = floor_u64(t->segs, t->hdr->nsegs, sizeof(*t->segs), addr);
	if (i < 0 || t->segs[i].scope == NONE)
		return 0;
	sc = t->segs[i].scope;
	s = &t->scopes[sc];
	frames[0] = (struct dwi_frame){ .func = t->strs + s->name };
	i = floor_u64(t->lines, t->hdr->nlines, sizeof(*t->lines), addr);
	if (i >= 0 && t->lines[i].file != NONE) {
		frames[0].file = t->strs + t->lines[i].file;
		frames[0].line = t->lines[i].line;
	}
	n = 1;
	while (s->parent != NONE) {
		const struct dwi_scope *p = &t->scopes[s->parent];
		/* past max: the last slot ends up with the outermost */
		int k = n < max ? n++ : max - 1;

		if (max == 1)
			k = 0;
		frames[k] = (struct dwi_frame){
			.func = t->strs + p->name,
			.file = s->call_file != NONE ? t->strs + s->call_file :
						       NULL,
			.line = s->call_line,
		};
		s = p;
	}
	return n;
}
