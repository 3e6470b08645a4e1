// SPDX-License-Identifier: Apache-2.0
/*
 * CPython 3.8-3.13 detection, per ELF file: the symbols, the version, the
 * offsets (a table from CPython's sources, or 3.13's _Py_DebugOffsets read
 * from the file) and the eval loop's cold part.  See interp_python.h.
 */
#include "interp_python.h"

#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfmap.h"

/* ---- offsets ------------------------------------------------------------- */

#define N PY_OFF_NONE
/* From _Py_DebugOffsets in the file (3.13). */
#define D 0xfffe

/*
 * One row per field, one column per minor version 3.8 ... 3.13, written
 * from CPython's headers (Include/cpython/pystate.h, code.h, frameobject.h,
 * unicodeobject.h, Include/internal/pycore_runtime.h, pycore_interp.h,
 * pycore_frame.h) and checked against the DWARF of the pyenv builds 3.8.18,
 * 3.9.18, 3.10.13, 3.11.7, 3.12.1 and 3.13.0 by tests/unit/test_python.c.
 * CPython does not change these structures within a minor version (the
 * live test also walks Debian's 3.11.2 with the 3.11 column), but only the
 * builds above were checked; PyCode_Type.tp_basicsize, read from each
 * file, catches a build whose code object differs.
 *
 * 3.13 describes most of itself (_Py_DebugOffsets); its column holds only
 * what that lacks.
 */
#define PY_TABLE(X)                                                          \
	/* field             3.8   3.9  3.10  3.11  3.12  3.13 */             \
	X(rt_interp_main,     40,   40,   40,   48,   48,    D)               \
	X(rt_tss_key,       1396,  588,  588,  596, 1548, 2164)               \
	X(is_tstate_head,      8,    8,    8,   16,   72,    D)               \
	X(ts_next,             8,    8,    8,    8,    8,    D)               \
	X(ts_thread_id,      176,  176,  176,  152,  136,    D)               \
	X(ts_native_tid,       N,    N,    N,  160,  144,    D)               \
	X(ts_frame,           24,   24,   24,   56,   56,    D)               \
	X(cf_current_frame,    N,    N,    N,    8,    0,    N)               \
	X(f_back,             24,   24,   24,   48,    8,    D)               \
	X(f_code,             32,   32,   32,   32,    0,    D)               \
	X(f_lasti,           104,  104,   96,   56,   56,    D)               \
	X(f_is_entry,          N,    N,    N,   68,    N,    N)               \
	X(f_owner,             N,    N,    N,   69,   70,    D)               \
	X(co_code_adaptive,    N,    N,    N,  184,  192,    D)               \
	X(co_firstlineno,     40,   40,   40,   72,   68,    D)               \
	X(co_filename,       104,  104,  104,  112,  112,    D)               \
	X(co_name,           112,  112,  112,  120,  120,    D)               \
	X(co_qualname,         N,    N,    N,  128,  128,    D)               \
	X(co_linetable,      120,  120,  120,  136,  136,    D)               \
	X(co_basicsize,      176,  176,  176,  184,  192,    D)               \
	X(uni_length,         16,   16,   16,   16,   16,    D)               \
	X(uni_state,          32,   32,   32,   32,   32,    D)               \
	X(uni_ascii_size,     48,   48,   48,   48,   40,    D)               \
	X(uni_compact_size,   72,   72,   72,   72,   56,    D)               \
	X(bytes_size,         16,   16,   16,   16,   16,    D)               \
	X(bytes_sval,         32,   32,   32,   32,   32,    D)

#define PY_MINOR_FIRST 8
#define PY_MINOR_LAST 13
#define PY_NVERSIONS (PY_MINOR_LAST - PY_MINOR_FIRST + 1)

#define PY_FIELD_(f, v8, v9, v10, v11, v12, v13)                              \
	.f = { v8, v9, v10, v11, v12, v13 },
static const struct {
#define PY_DECL_(f, ...) uint16_t f[PY_NVERSIONS];
	PY_TABLE(PY_DECL_)
#undef PY_DECL_
} py_table = { PY_TABLE(PY_FIELD_) };
#undef PY_FIELD_

static void table_offsets(unsigned minor, struct py_offsets *o)
{
	unsigned c = minor - PY_MINOR_FIRST;

	memset(o, 0, sizeof(*o));
#define PY_SET_(f, ...) o->f = py_table.f[c];
	PY_TABLE(PY_SET_)
#undef PY_SET_
}

/* True if a field is still marked "from _Py_DebugOffsets". */
static bool offsets_unresolved(const struct py_offsets *o)
{
#define PY_TEST_(f, ...) if (o->f == D) return true;
	PY_TABLE(PY_TEST_)
#undef PY_TEST_
	return false;
}
#undef N
#undef D

/*
 * _Py_DebugOffsets as 3.13 lays it out (Include/internal/pycore_runtime.h):
 * the first member of _PyRuntime, a cookie, the version, and sections of
 * uint64_t offsets in a fixed order.  The layout is stable within 3.13 and
 * changes in 3.14 (fields added in the middle), hence the version gate.
 */
struct py313_debug_offsets {
	char cookie[8]; /* "xdebugpy", not NUL-terminated */
	uint64_t version;
	uint64_t free_threaded;
	struct {
		uint64_t size, finalizing, interpreters_head;
	} rt;
	struct {
		uint64_t size, id, next, threads_head, gc, imports_modules;
		uint64_t sysdict, builtins, ceval_gil, gil_runtime_state;
		uint64_t gil_enabled, gil_locked, gil_holder;
	} is;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id;
		uint64_t native_thread_id, datastack_chunk, status;
	} ts;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus;
		uint64_t owner;
	} fr;
	struct {
		uint64_t size, filename, name, qualname, linetable;
		uint64_t firstlineno, argcount, localsplusnames;
		uint64_t localspluskinds, co_code_adaptive;
	} co;
	struct {
		uint64_t size, ob_type;
	} ob;
	uint64_t type_object[4], tuple_object[3], list_object[3];
	uint64_t dict_object[3], float_object[2], long_object[3];
	struct {
		uint64_t size, ob_size, ob_sval;
	} bytes;
	struct {
		uint64_t size, state, length, asciiobject_size;
	} uni;
	uint64_t gc[2];
};
_Static_assert(sizeof(struct py313_debug_offsets) == 584,
	       "3.13 _Py_DebugOffsets layout");

static int debug_offsets_apply(const struct py313_debug_offsets *d,
			       struct py_offsets *o)
{
	/* Each offset, the width of the field there, and the size of the
	 * structure it is in: an offset past the end means the debug
	 * offsets are not laid out as we think. */
	const struct {
		uint64_t off, width, size;
		uint16_t *dst;
	} map[] = {
		/* interpreters.main follows interpreters.head (a pointer) in
		 * every version; the debug offsets only name head. */
		{ d->rt.interpreters_head + 8, 8, d->rt.size,
		  &o->rt_interp_main },
		{ d->is.threads_head, 8, d->is.size, &o->is_tstate_head },
		{ d->ts.next, 8, d->ts.size, &o->ts_next },
		{ d->ts.thread_id, 8, d->ts.size, &o->ts_thread_id },
		{ d->ts.native_thread_id, 8, d->ts.size, &o->ts_native_tid },
		{ d->ts.current_frame, 8, d->ts.size, &o->ts_frame },
		{ d->fr.previous, 8, d->fr.size, &o->f_back },
		{ d->fr.executable, 8, d->fr.size, &o->f_code },
		{ d->fr.instr_ptr, 8, d->fr.size, &o->f_lasti },
		{ d->fr.owner, 1, d->fr.size, &o->f_owner },
		{ d->co.co_code_adaptive, 0, d->co.size, &o->co_code_adaptive },
		{ d->co.firstlineno, 4, d->co.size, &o->co_firstlineno },
		{ d->co.filename, 8, d->co.size, &o->co_filename },
		{ d->co.name, 8, d->co.size, &o->co_name },
		{ d->co.qualname, 8, d->co.size, &o->co_qualname },
		{ d->co.linetable, 8, d->co.size, &o->co_linetable },
		{ d->uni.length, 8, d->uni.size, &o->uni_length },
		{ d->uni.state, 4, d->uni.size, &o->uni_state },
		{ d->uni.asciiobject_size, 0, d->uni.size, &o->uni_ascii_size },
		{ d->bytes.ob_size, 8, d->bytes.size, &o->bytes_size },
		{ d->bytes.ob_sval, 0, d->bytes.size, &o->bytes_sval },
	};
	size_t i;

	if (memcmp(d->cookie, "xdebugpy", 8) != 0)
		return -EPROTO;
	if (d->free_threaded)
		return -ENOTSUP; /* another object header: not supported */
	if (d->ob.ob_type != 8)
		return -EPROTO;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (map[i].off > map[i].size ||
		    map[i].width > map[i].size - map[i].off ||
		    map[i].off >= PY_OFF_NONE - 1)
			return -EPROTO;
		*map[i].dst = (uint16_t)map[i].off;
	}
	/* PyCode_Type.tp_basicsize is offsetof(co_code_adaptive) since 3.11;
	 * PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject. */
	o->co_basicsize = o->co_code_adaptive;
	o->uni_compact_size = o->uni_ascii_size + 16;
	return 0;
}

/* ---- ELF access ---------------------------------------------------------- */

enum {
	SYM_RUNTIME,
	SYM_EVAL,
	SYM_CODE_TYPE,
	SYM_PY_VERSION,
	SYM_ITER_SEND,	    /* 3.10+ API: fingerprints 3.10 */
	SYM_FRAME_GET_CODE, /* 3.9+ */
	SYM_BYTES_MAIN,	    /* 3.8+ */
	SYM_EVAL_COLD,	    /* _PyEval_EvalFrameDefault.cold (.symtab) */
	SYM_COUNT,
};

static const char *const sym_names[SYM_COUNT] = {
	[SYM_RUNTIME] = "_PyRuntime",
	[SYM_EVAL] = "_PyEval_EvalFrameDefault",
	[SYM_CODE_TYPE] = "PyCode_Type",
	[SYM_PY_VERSION] = "Py_Version",
	[SYM_ITER_SEND] = "PyIter_Send",
	[SYM_FRAME_GET_CODE] = "PyFrame_GetCode",
	[SYM_BYTES_MAIN] = "Py_BytesMain",
	[SYM_EVAL_COLD] = "_PyEval_EvalFrameDefault.cold",
};

struct py_sym {
	uint64_t value, size;
	bool found;
};

struct py_elf {
	struct elfm *elf;
	int fd; /* the file elf maps, for libdw (elfm_libelf) */
	struct py_sym syms[SYM_COUNT];
};

static int py_sym_found(const struct elfm_sym *s, void *arg)
{
	struct py_elf *e = arg;
	const char *name = s->name;
	int k;

	if (s->shndx == SHN_UNDEF || (name[0] != '_' && name[0] != 'P'))
		return 0;
	for (k = 0; k < SYM_COUNT; k++) {
		size_t len = strlen(sym_names[k]);

		if (e->syms[k].found || strncmp(name, sym_names[k], len) != 0)
			continue;
		/* .cold may carry a suffix (.cold.0). */
		if (name[len] && (k != SYM_EVAL_COLD || name[len] != '.'))
			continue;
		e->syms[k].value = s->value;
		e->syms[k].size = s->size;
		e->syms[k].found = true;
	}
	return 0;
}

/* The symbols we look for, from .dynsym and (unless told not to)
 * .symtab, the first of each name in section order. */
static void py_find_syms(struct py_elf *e, bool use_symtab)
{
	const Elf64_Shdr *sh;
	unsigned n, i;

	sh = elfm_shdrs(e->elf, &n);
	for (i = 1; i < n; i++)
		if (sh[i].sh_type == SHT_DYNSYM ||
		    (sh[i].sh_type == SHT_SYMTAB && use_symtab))
			elfm_for_each_sym(e->elf, &sh[i], py_sym_found, e);
}

/* Read len bytes at ELF address addr from the file's loadable data
 * (never .bss).  Returns 0, or -ENODATA when no segment holds them. */
static int py_read_vaddr(struct py_elf *e, uint64_t addr, void *buf,
			 size_t len)
{
	const uint8_t *p;
	size_t avail;

	if (elfm_vaddr_bytes(e->elf, addr, len, &p, &avail))
		return -ENODATA;
	memcpy(buf, p, len);
	return 0;
}

/* ---- the cold part of the eval loop -------------------------------------- */

/* Bound on the eval loop's size we are willing to scan (3.11-3.13 are
 * 40-60 KiB). */
#define EVAL_SCAN_MAX (1u << 20)
/* Distinct jump targets one address range must receive from the eval loop
 * to be taken as its cold part.  Tail calls give one target per callee;
 * GCC's hot/cold split of Debian's 3.11 gives hundreds. */
#define COLD_MIN_TARGETS 8

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The CFI range [*lo, *hi) that covers addr, from .eh_frame. */
static bool cfi_range(Dwarf_CFI *cfi, uint64_t addr, uint64_t *lo,
		      uint64_t *hi)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Addr s = 0, t = 0;
	bool ok, signal;

	if (!cfi || dwarf_cfi_addrframe(cfi, addr, &fr) != 0)
		return false;
	ok = dwarf_frame_info(fr, &s, &t, &signal) >= 0 && s <= addr &&
	     addr < t;
	free(fr);
	*lo = s;
	*hi = t;
	return ok;
}

/*
 * Find the .cold part of the eval loop in a file without the .cold symbol:
 * GCC moves unlikely blocks into a separate range that has its own CFI but
 * no symbol, and the hot part jumps into it.  Scan the loop's bytes for
 * rel32 jumps (e9, 0f 80-8f) leaving the function, and take the CFI range
 * that receives the most distinct targets, if it receives enough.  A byte
 * scan also decodes operands as jumps; such noise lands anywhere and never
 * piles up in one range.
 */
static void find_cold_by_scan(struct py_elf *e, Dwarf_CFI *cfi,
			      struct py_info *info)
{
	uint64_t lo = info->eval_lo, hi = info->eval_hi;
	uint64_t *targets = NULL, best_lo = 0, best_hi = 0;
	size_t len = hi - lo, n = 0, i, best = 0;
	uint8_t *code = NULL;

	if (!cfi || len < 6 || len > EVAL_SCAN_MAX)
		return;
	code = malloc(len);
	targets = malloc(len / 5 * sizeof(*targets) + sizeof(*targets));
	if (!code || !targets || py_read_vaddr(e, lo, code, len) < 0)
		goto cleanup;
	for (i = 0; i + 5 <= len; i++) {
		size_t ilen;
		int32_t rel;
		uint64_t t;

		if (code[i] == 0xe9)
			ilen = 5;
		else if (code[i] == 0x0f && i + 6 <= len &&
			 (code[i + 1] & 0xf0) == 0x80)
			ilen = 6;
		else
			continue;
		memcpy(&rel, code + i + ilen - 4, 4);
		t = lo + i + ilen + (int64_t)rel;
		if (t < lo || t >= hi)
			targets[n++] = t;
	}
	qsort(targets, n, sizeof(*targets), cmp_u64);
	for (i = 0; i < n;) {
		uint64_t rlo, rhi;
		size_t distinct = 0;

		if (!cfi_range(cfi, targets[i], &rlo, &rhi) ||
		    (rlo <= lo && lo < rhi)) {
			i++;
			continue;
		}
		for (; i < n && targets[i] < rhi; i++)
			if (i == 0 || targets[i] != targets[i - 1])
				distinct++;
		if (distinct > best) {
			best = distinct;
			best_lo = rlo;
			best_hi = rhi;
		}
	}
	if (best >= COLD_MIN_TARGETS) {
		info->cold_lo = best_lo;
		info->cold_hi = best_hi;
		info->flags |= PY_INFO_F_COLD_SCAN;
	}
cleanup:
	free(code);
	free(targets);
}

static void find_cold(struct py_elf *e, struct py_info *info)
{
	const struct py_sym *cold = &e->syms[SYM_EVAL_COLD];
	/* libdw reads the CFI through elfm's door to libelf */
	struct Elf *lelf = elfm_libelf(e->elf, e->fd);
	Dwarf_CFI *cfi = lelf ? dwarf_getcfi_elf(lelf) : NULL;

	if (cold->found) {
		uint64_t lo, hi;

		info->cold_lo = cold->value;
		info->cold_hi = cold->value + cold->size;
		/* The symbol's size may cover less than its CFI range. */
		if (cfi_range(cfi, cold->value, &lo, &hi) &&
		    lo == cold->value && hi > info->cold_hi)
			info->cold_hi = hi;
		info->flags |= PY_INFO_F_COLD_SYMBOL;
	} else {
		find_cold_by_scan(e, cfi, info);
	}
	if (cfi)
		dwarf_cfi_end(cfi);
}

/* ---- detection ----------------------------------------------------------- */

/* The minor version from a name such as python3.11 or libpython3.9.so.1.0;
 * -1 if there is none. */
static int minor_from_name(const char *name)
{
	const char *p, *base;
	char *end;
	long v;

	if (!name)
		return -1;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	p = strstr(base, "python3.");
	if (!p)
		return -1;
	v = strtol(p + 8, &end, 10);
	return end != p + 8 && v >= 0 && v < 100 ? (int)v : -1;
}

static int detect_version(struct py_elf *e, const char *name,
			  struct py_info *info)
{
	int minor = -1;

	if (e->syms[SYM_PY_VERSION].found) {
		uint32_t hex;
		int err = py_read_vaddr(e, e->syms[SYM_PY_VERSION].value,
					 &hex, sizeof(hex));

		if (err < 0)
			return err;
		if (hex >> 24 != 3)
			return -ENOTSUP;
		info->hexversion = hex;
		info->flags |= PY_INFO_F_FULL_VERSION;
		minor = (hex >> 16) & 0xff;
	} else if (e->syms[SYM_ITER_SEND].found) {
		/* Py_Version exists from 3.11 on: this is 3.10. */
		minor = 10;
	} else if (e->syms[SYM_FRAME_GET_CODE].found) {
		minor = 9;
	} else if (e->syms[SYM_BYTES_MAIN].found) {
		minor = 8;
	} else {
		/* No exported API to tell: a build with hidden symbols. */
		minor = minor_from_name(name);
		if (minor < 0)
			return -ENOTSUP;
		info->flags |= PY_INFO_F_VERSION_NAME;
	}
	if (minor < PY_MINOR_FIRST || minor > PY_MINOR_LAST)
		return -ENOTSUP;
	info->major = 3;
	info->minor = (uint8_t)minor;
	if (!(info->flags & PY_INFO_F_FULL_VERSION))
		info->hexversion = 3u << 24 | (unsigned)minor << 16;
	return 0;
}

static int detect_offsets(struct py_elf *e, struct py_info *info)
{
	struct py_offsets *o = &info->off;
	uint64_t basicsize;
	int err;

	table_offsets(info->minor, o);
	if (info->minor >= 13) {
		struct py313_debug_offsets d;

		err = py_read_vaddr(e, info->runtime, &d, sizeof(d));
		if (err < 0)
			return err == -ENODATA ? -EPROTO : err;
		if ((d.version >> 16) != (info->hexversion >> 16))
			return -EPROTO;
		err = debug_offsets_apply(&d, o);
		if (err < 0)
			return err;
		if (offsets_unresolved(o))
			return -EPROTO;
		info->flags |= PY_INFO_F_DEBUG_OFFSETS;
	}
	switch (info->minor) {
	case 8:
	case 9:
		info->frame_model = PY_FRAMES_OBJECT;
		info->lasti_shift = 1; /* f_lasti counts bytes */
		break;
	case 10:
		info->frame_model = PY_FRAMES_OBJECT;
		break; /* f_lasti counts code units */
	case 11:
		info->frame_model = PY_FRAMES_ENTRY;
		break;
	default:
		info->frame_model = PY_FRAMES_SHIM;
		break;
	}
	/* tp_basicsize sits after PyVarObject (24) and tp_name (8). */
	err = py_read_vaddr(e, info->code_type + 32, &basicsize,
			     sizeof(basicsize));
	if (err < 0)
		return err == -ENODATA ? -EPROTO : err;
	if (basicsize != o->co_basicsize)
		return -EPROTO;
	return 0;
}

int py_detect_elf(struct elfm *elf, int fd, const char *name, unsigned flags,
		  struct py_info *out)
{
	struct py_elf e = { .elf = elf, .fd = fd };
	struct py_info info = { .format = PY_INFO_FORMAT };
	int err;

	memset(out, 0, sizeof(*out));
	py_find_syms(&e, !(flags & PY_DETECT_NO_SYMTAB));
	if (!e.syms[SYM_RUNTIME].found || !e.syms[SYM_EVAL].found ||
	    !e.syms[SYM_CODE_TYPE].found || !e.syms[SYM_EVAL].size)
		return -ENOENT;
	info.runtime = e.syms[SYM_RUNTIME].value;
	info.code_type = e.syms[SYM_CODE_TYPE].value;
	info.eval_lo = e.syms[SYM_EVAL].value;
	info.eval_hi = info.eval_lo + e.syms[SYM_EVAL].size;
	err = detect_version(&e, name, &info);
	if (!err)
		err = detect_offsets(&e, &info);
	if (err)
		return err;
	find_cold(&e, &info);
	/* 3.13 took its offsets from the file: they must fit our buffers */
	if (py_info_check(&info))
		return -EPROTO;
	*out = info;
	return 0;
}
