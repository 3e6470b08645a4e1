// SPDX-License-Identifier: Apache-2.0
#include "symbols.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arr.h"
#include "budget.h"
#include "debugfind.h"
#include "elfmap.h"
#include "gopclntab.h"
#include "hashmap.h"
#include "log.h"
#include "rustdemangle.h"

/* libstdc++'s demangler (the Itanium C++ ABI one). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
			    int *status);

struct sym {
	uint64_t addr;
	uint32_t size;
	uint32_t name; /* offset into strs */
};

struct symb_table {
	struct sym *syms;
	uint32_t n, cap;
	char *strs;
	size_t strs_len, strs_cap;
	struct hm names; /* while built: hash of a name -> its offset */
	char **demangled; /* lazily, per symbol; (char *)-1 = not mangled */
	char build_id[41 * 2];
};

/* The offset of name in strs, added when new.  -EFBIG past the bound.
 * Names are indexed by their 64-bit hash alone: a name whose hash an
 * other name holds (one in 2^64) is stored again, not shared. */
static int intern(struct symb_table *t, const char *name, uint32_t *off)
{
	size_t n = strlen(name) + 1;
	uint64_t h = hm_hash(name, n - 1, 0), v;
	bool indexed = hm_get(&t->names, h, &v);

	if (indexed && !strcmp(t->strs + v, name)) {
		*off = (uint32_t)v;
		return 0;
	}
	if (t->strs_len + n > SYMB_MAX_NAME_BYTES) {
		budget_over(BUDGET_SYMBOL_BYTES);
		return -EFBIG;
	}
	if (ARR_RESERVE(t->strs, t->strs_cap, t->strs_len + n, ARR_NO_LIMIT))
		return -ENOMEM;
	if (!indexed && hm_put(&t->names, h, t->strs_len))
		return -ENOMEM;
	memcpy(t->strs + t->strs_len, name, n);
	*off = (uint32_t)t->strs_len;
	t->strs_len += n;
	return 0;
}

static int add_sym(struct symb_table *t, uint64_t addr, uint64_t size,
		   const char *name)
{
	uint32_t off;
	struct sym *s;
	int err;

	if (t->n >= SYMB_MAX_SYMS) {
		budget_over(BUDGET_SYMBOLS);
		return -EFBIG;
	}
	if (ARR_PUSH(t->syms, t->n, t->cap, SYMB_MAX_SYMS))
		return -ENOMEM;
	err = intern(t, name, &off);
	if (err)
		return err;
	s = &t->syms[t->n++];
	s->addr = addr;
	s->size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	s->name = off;
	return 0;
}

/* A function symbol of a table read by read_symtabs(). */
static int sym_found(const struct elfm_sym *s, void *arg)
{
	int type = ELF64_ST_TYPE(s->info);

	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return 0;
	if (s->shndx == SHN_UNDEF || s->value == 0 || !s->name[0])
		return 0;
	return add_sym(arg, s->value, s->size, s->name);
}

/* The function symbols of every .symtab and .dynsym of e. */
static int read_symtabs(struct symb_table *t, const struct elfm *e)
{
	const Elf64_Shdr *sh;
	unsigned n, i;
	int err;

	sh = elfm_shdrs(e, &n);
	for (i = 1; i < n; i++) {
		if (sh[i].sh_type != SHT_SYMTAB && sh[i].sh_type != SHT_DYNSYM)
			continue;
		if (sh[i].sh_size > SYMB_MAX_TABLE_BYTES) {
			budget_over(BUDGET_SYMBOLS);
			return -EFBIG;
		}
		err = elfm_for_each_sym(e, &sh[i], sym_found, t);
		if (err > 0)
			err = 0;
		if (err < 0 && err != -ENOENT)
			return err;
	}
	return 0;
}

static void read_build_id(struct symb_table *t, const struct elfm *e)
{
	const uint8_t *id;
	size_t n, i;

	if (elfm_build_id(e, &id, &n) || n > 40)
		return;
	for (i = 0; i < n; i++)
		snprintf(t->build_id + 2 * i, 3, "%02x", id[i]);
}

/* Symbols from the separate debug file, by build id, when installed. */
static int read_debug_file(struct symb_table *t, const struct elfm *e)
{
	struct elfm *d = NULL;

	if (dbgf_open(e, NULL, NULL, &d, NULL, 0))
		return 0;
	return elfm_release(d, read_symtabs(t, d));
}

/*
 * MiniDebugInfo (Fedora, RHEL, ...): a stripped file may carry in
 * .gnu_debugdata an xz-compressed ELF file whose .symtab names the
 * functions .dynsym does not.  A damaged or oversized one is skipped:
 * the file keeps the names it has.
 */
static int read_minidebuginfo(struct symb_table *t, const struct elfm *e)
{
	const Elf64_Shdr *sh = elfm_section(e, ".gnu_debugdata");
	struct elfm *m = NULL;
	void *buf = NULL;
	size_t len;
	int err;

	if (!sh)
		return 0;
	err = elfm_section_xz(e, sh, &buf, &len);
	if (!err)
		err = elfm_open_mem(buf, len, &m);
	if (!err)
		err = read_symtabs(t, m);
	elfm_free(m);
	free(buf);
	return err == -ENOMEM ? err : 0;
}

/* A stripped Go binary keeps its function names in .gopclntab. */
static int read_gopclntab(struct symb_table *t, const struct elfm *e)
{
	struct gopc_table *g = NULL;
	size_t i, n;
	int err = 0;

	if (gopc_open(e, &g) == 0) {
		n = gopc_nfunc(g);
		for (i = 0; i < n && !err; i++) {
			struct gopc_func f;

			if (gopc_func(g, i, &f) || !f.name[0] || f.end <= f.entry)
				continue;
			err = add_sym(t, f.entry, f.end - f.entry, f.name);
		}
		gopc_free(g);
	}
	return err;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* prefer the symbol with a size, the larger one.  Compared, not
	 * subtracted: sizes come from the file, and an overflowing
	 * difference makes the order inconsistent, which qsort must not
	 * be given. */
	return x->size < y->size ? 1 : x->size > y->size ? -1 : 0;
}

int symb_load_fd(int fd, struct symb_table **out)
{
	struct symb_table *t;
	struct elfm *e = NULL;
	uint32_t i, j;
	int err;

	*out = NULL;
	err = elfm_open_fd(fd, &e);
	if (err)
		return err;
	t = calloc(1, sizeof(*t));
	if (!t) {
		elfm_free(e);
		return -ENOMEM;
	}
	read_build_id(t, e);
	err = read_symtabs(t, e);
	if (!err)
		err = read_debug_file(t, e);
	if (!err)
		err = read_minidebuginfo(t, e);
	if (!err && t->n == 0)
		err = read_gopclntab(t, e);
	/* a file cut short under the mapping: names read from zeros */
	err = elfm_release(e, err);
	if (err) {
		symb_free(t);
		return err;
	}
	if (t->n) {
		/* sort; drop duplicates at one address (.symtab and .dynsym
		 * name the same function) */
		qsort(t->syms, t->n, sizeof(*t->syms), cmp_sym);
		for (i = 1, j = 0; i < t->n; i++) {
			if (t->syms[i].addr == t->syms[j].addr)
				continue;
			t->syms[++j] = t->syms[i];
		}
		t->n = j + 1;
		/* the table no longer grows: give back the slack */
		if (t->n < t->cap) {
			struct sym *p = realloc(t->syms, t->n * sizeof(*p));

			if (p) {
				t->syms = p;
				t->cap = t->n;
			}
		}
		t->demangled = calloc(t->n, sizeof(*t->demangled));
		if (!t->demangled) {
			symb_free(t);
			return -ENOMEM;
		}
	}
	/* interning is over */
	hm_free(&t->names);
	*out = t;
	return 0;
}

void symb_free(struct symb_table *t)
{
	uint32_t i;

	if (!t)
		return;
	if (t->demangled) {
		for (i = 0; i < t->n; i++)
			if (t->demangled[i] != (char *)-1)
				free(t->demangled[i]);
		free(t->demangled);
	}
	free(t->syms);
	free(t->strs);
	hm_free(&t->names);
	free(t);
}

/* Rust legacy names demangle as C++ with a trailing "::h<16 hex>". */
static void strip_rust_hash(char *s)
{
	size_t n = strlen(s), i;

	if (n < 19 || strncmp(s + n - 19, "::h", 3))
		return;
	for (i = n - 16; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return;
	s[n - 19] = 0;
}

/*
 * Rust v0 names.  Most fit the stack buffer; a long generic one gets one
 * retry in a buffer past which a name is no use in a profile anyway, and
 * is shown cut short there.
 */
#define RUST_NAME_MAX (64 * 1024)

static char *demangle_rust_v0(const char *name)
{
	char buf[1024], *big, *d;
	int err;

	err = rdm_demangle(name, buf, sizeof(buf));
	if (err == 0)
		return strdup(buf);
	if (err != -ENAMETOOLONG)
		return NULL;
	big = malloc(RUST_NAME_MAX);
	if (!big)
		return NULL;
	/* 0, or -ENAMETOOLONG with the name cut short */
	rdm_demangle(name, big, RUST_NAME_MAX);
	d = realloc(big, strlen(big) + 1);
	return d ? d : big;
}

char *symb_demangle(const char *name)
{
	int status = 0;
	char *d;

	if (strncmp(name, "_R", 2) == 0)
		return demangle_rust_v0(name);
	if (strncmp(name, "_Z", 2) != 0)
		return NULL;
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (!d || status)
		return NULL;
	if (strncmp(name, "_ZN", 3) == 0)
		strip_rust_hash(d);
	return d;
}

const char *symb_lookup(struct symb_table *t, uint64_t addr, uint64_t *off)
{
	uint32_t lo = 0, hi;
	struct sym *s;

	if (!t || !t->n || addr < t->syms[0].addr)
		return NULL;
	hi = t->n;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	s = &t->syms[lo];
	/* a sized symbol only covers its size: past it is a function
	 * without a symbol (stripped libraries have many) */
	if (s->size && addr - s->addr >= s->size)
		return NULL;
	if (off)
		*off = addr - s->addr;
	if (!t->demangled[lo]) {
		char *d = symb_demangle(t->strs + s->name);
		t->demangled[lo] = d ? d : (char *)-1;
	}
	if (t->demangled[lo] != (char *)-1)
		return t->demangled[lo];
	return t->strs + s->name;
}

uint32_t symb_count(const struct symb_table *t)
{
	return t ? t->n : 0;
}

const char *symb_build_id(const struct symb_table *t)
{
	return t && t->build_id[0] ? t->build_id : NULL;
}
