// SPDX-License-Identifier: Apache-2.0
/*
 * CPython support, userland half (interp_python.c), against the builds on
 * this machine (python_interps.h):
 *   python_detect         version, symbols, eval loop and its cold part,
 *                         against the interpreter itself, nm, objdump and
 *                         readelf's CFI
 *   python_offsets_dwarf  every offset against the build's DWARF (gdb)
 *   python_line_tables    the line of every instruction of many code
 *                         objects against CPython's own co_lines()
 *   python_cache, python_malformed, python_walk_synthetic
 *                         symbolizer and walker on objects built in this
 *                         process's memory, laid out as each version's
 * The live walk on running interpreters is in test_python_live.c.
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "alloc_fault.h"
#include "interp_python.h"
#include "py_fixture.h"
#include "python_interps.h"

/* ---- detection ----------------------------------------------------------- */

/* The value and size of a defined symbol by nm (the .symtab, else the
 * .dynsym). */
static bool nm_symbol(const char *file, const char *sym, uint64_t *value,
		      uint64_t *size)
{
	char *out = pyi_run("{ nm -S --defined-only %s; "
			    "nm -D -S --defined-only %s; } 2>/dev/null | "
			    "awk '$4 == \"%s\" { print $1, $2; exit }'",
			    file, file, sym);
	bool ok = out && sscanf(out, "%" SCNx64 " %" SCNx64, value, size) == 2;

	free(out);
	return ok;
}

/*
 * Every jump out of the eval loop (as objdump disassembles it) must land
 * in the cold range, and that range must be one CFI entry by readelf.
 */
static void check_cold(const struct pyi *p, const struct py_info *in)
{
	char *out, *line, *save = NULL;
	unsigned outside = 0, in_cold = 0;

	out = pyi_run("objdump -d --no-show-raw-insn --start-address=0x%" PRIx64
		      " --stop-address=0x%" PRIx64 " %s | awk '$2 ~ /^j/ "
		      "&& $3 ~ /^[0-9a-f]+$/ { print $3 }' | sort -u",
		      in->eval_lo, in->eval_hi, p->lib);
	if (!ASSERT_NOT_NULL(out, "objdump"))
		return;
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		uint64_t t = strtoull(line, NULL, 16);

		if (t >= in->eval_lo && t < in->eval_hi)
			continue;
		outside++;
		if (t >= in->cold_lo && t < in->cold_hi)
			in_cold++;
	}
	free(out);
	ASSERT_EQ(in_cold, outside, "jumps out of the eval loop land in cold");
	test_note("%s: %u jump targets outside the loop, cold [%#" PRIx64
		  ", %#" PRIx64 ")%s",
		  p->label, outside, in->cold_lo, in->cold_hi,
		  in->flags & PY_INFO_F_COLD_SCAN ? " by scan" : "");
	if (!in->cold_hi)
		return;
	out = pyi_run("readelf --debug-dump=frames %s 2>/dev/null | grep -c "
		      "'pc=0*%" PRIx64 "\\.\\.0*%" PRIx64 "$'",
		      p->lib, in->cold_lo, in->cold_hi);
	ASSERT_TRUE(out && atoi(out) == 1, "cold range is one FDE");
	free(out);
}

static void detect_one(const struct pyi *p)
{
	struct py_info in, bare;
	struct py_proc pp;
	uint64_t v, sz;
	char *out;

	if (!ASSERT_OK(fix_py_detect(p->lib, 0, &in), p->lib))
		return;
	ASSERT_EQ(in.format, PY_INFO_FORMAT, "format");
	ASSERT_EQ(in.major, 3, "major");
	ASSERT_EQ(in.minor, p->minor, "minor");
	/* The interpreter's own word on its version. */
	out = pyi_run("%s -c 'import sys; print(sys.hexversion)'", p->bin);
	if (ASSERT_NOT_NULL(out, "sys.hexversion")) {
		uint32_t hex = strtoul(out, NULL, 10);

		if (in.flags & PY_INFO_F_FULL_VERSION)
			ASSERT_EQ(in.hexversion, hex, "Py_Version");
		else
			ASSERT_EQ(in.hexversion, hex & 0xffff0000,
				  "major.minor");
	}
	free(out);
	ASSERT_EQ(!!(in.flags & PY_INFO_F_FULL_VERSION), p->minor >= 11,
		  "Py_Version from 3.11 on");
	ASSERT_EQ(!!(in.flags & PY_INFO_F_DEBUG_OFFSETS), p->minor >= 13,
		  "debug offsets from 3.13 on");
	ASSERT_TRUE(nm_symbol(p->lib, "_PyRuntime", &v, &sz) &&
			    v == in.runtime,
		    "_PyRuntime");
	ASSERT_TRUE(nm_symbol(p->lib, "PyCode_Type", &v, &sz) &&
			    v == in.code_type,
		    "PyCode_Type");
	ASSERT_TRUE(nm_symbol(p->lib, "_PyEval_EvalFrameDefault", &v, &sz) &&
			    v == in.eval_lo && in.eval_hi == v + sz,
		    "_PyEval_EvalFrameDefault range");
	if (nm_symbol(p->lib, "_PyEval_EvalFrameDefault.cold", &v, &sz))
		ASSERT_EQ(in.cold_lo, v, ".cold symbol");
	check_cold(p, &in);
	/* As if stripped: the scan finds the same part or none. */
	if (ASSERT_OK(fix_py_detect(p->lib, PY_DETECT_NO_SYMTAB, &bare),
		      "no symtab") &&
	    bare.cold_hi)
		ASSERT_TRUE(bare.cold_lo == in.cold_lo &&
				    bare.cold_hi == in.cold_hi,
			    "scan agrees with the symbol");
	py_proc_fill(&in, 0x1000, &pp);
	ASSERT_EQ(pp.runtime, in.runtime + 0x1000, "bias applied");
	ASSERT_LE(pp.f_read_size, PY_FRAME_READ_MAX, "f_read_size");
	ASSERT_EQ(pp.version, 0x300 | p->minor, "py_proc.version");
	/* The pyenv stub only loads libpython. */
	if (strcmp(p->bin, p->lib) != 0)
		ASSERT_EQ(fix_py_detect(p->bin, 0, &bare), -ENOENT,
			  "stub binary holds no CPython");
}

TEST(python_detect)
{
	pyi_each(detect_one);
}

TEST(python_detect_rejects)
{
	struct py_info in;
	const char *path = "/tmp/ep-test-not-elf";
	FILE *f = fopen(path, "w");
	char *old;

	ASSERT_EQ(fix_py_detect("/bin/true", 0, &in), -ENOENT, "/bin/true");
	ASSERT_EQ(fix_py_detect("/nonexistent", 0, &in), -ENOENT, "missing file");
	if (f) {
		fputs("not an ELF file\n", f);
		fclose(f);
		ASSERT_EQ(fix_py_detect(path, 0, &in), -ENOEXEC, "text file");
		unlink(path);
	}
	old = pyi_run("ls -d \"$(pyenv root 2>/dev/null || echo "
		      "$HOME/.pyenv)\"/versions/3.7.*/lib/libpython3.7m.so.1.0 "
		      "2>/dev/null | head -1");
	if (old && old[0]) {
		old[strcspn(old, "\n")] = 0;
		ASSERT_EQ(fix_py_detect(old, 0, &in), -ENOTSUP, "3.7");
	} else {
		test_note("no CPython 3.7 build: the version gate is untested");
	}
	free(old);
}

/* ---- offsets against DWARF ----------------------------------------------- */

struct dwarf_check {
	const char *field;
	size_t off; /* offsetof(struct py_offsets, field) */
	unsigned lo, hi; /* minor versions the expression applies to */
	const char *expr;
};

#define F_(f) #f, offsetof(struct py_offsets, f)
#define RT "((_PyRuntimeState *)0)"
#define TS "((PyThreadState *)0)"
#define FO "((PyFrameObject *)0)"
#define IF "((struct _PyInterpreterFrame *)0)"
#define CO "((PyCodeObject *)0)"
#define IS "((PyInterpreterState *)0)"
static const struct dwarf_check dwarf_checks[] = {
	{ F_(rt_interp_main), 8, 13, "&" RT "->interpreters.main" },
	{ F_(rt_tss_key), 8, 11, "&" RT "->gilstate.autoTSSkey._key" },
	{ F_(rt_tss_key), 12, 13, "&" RT "->autoTSSkey._key" },
	{ F_(is_tstate_head), 8, 10, "&" IS "->tstate_head" },
	{ F_(is_tstate_head), 11, 13, "&" IS "->threads.head" },
	{ F_(ts_next), 8, 13, "&" TS "->next" },
	{ F_(ts_thread_id), 8, 13, "&" TS "->thread_id" },
	{ F_(ts_native_tid), 11, 13, "&" TS "->native_thread_id" },
	{ F_(ts_frame), 8, 10, "&" TS "->frame" },
	{ F_(ts_frame), 11, 12, "&" TS "->cframe" },
	{ F_(ts_frame), 13, 13, "&" TS "->current_frame" },
	{ F_(cf_current_frame), 11, 12, "&((_PyCFrame *)0)->current_frame" },
	{ F_(f_back), 8, 10, "&" FO "->f_back" },
	{ F_(f_back), 11, 13, "&" IF "->previous" },
	{ F_(f_code), 8, 10, "&" FO "->f_code" },
	{ F_(f_code), 11, 12, "&" IF "->f_code" },
	{ F_(f_code), 13, 13, "&" IF "->f_executable" },
	{ F_(f_lasti), 8, 10, "&" FO "->f_lasti" },
	{ F_(f_lasti), 11, 12, "&" IF "->prev_instr" },
	{ F_(f_lasti), 13, 13, "&" IF "->instr_ptr" },
	{ F_(f_is_entry), 11, 11, "&" IF "->is_entry" },
	{ F_(f_owner), 11, 13, "&" IF "->owner" },
	{ F_(co_code_adaptive), 11, 13, "&" CO "->co_code_adaptive" },
	{ F_(co_firstlineno), 8, 13, "&" CO "->co_firstlineno" },
	{ F_(co_filename), 8, 13, "&" CO "->co_filename" },
	{ F_(co_name), 8, 13, "&" CO "->co_name" },
	{ F_(co_qualname), 11, 13, "&" CO "->co_qualname" },
	{ F_(co_linetable), 8, 9, "&" CO "->co_lnotab" },
	{ F_(co_linetable), 10, 13, "&" CO "->co_linetable" },
	{ F_(co_basicsize), 8, 13, "PyCode_Type.tp_basicsize" },
	{ F_(uni_length), 8, 13, "&((PyASCIIObject *)0)->length" },
	{ F_(uni_state), 8, 13, "&((PyASCIIObject *)0)->state" },
	{ F_(uni_ascii_size), 8, 13, "sizeof(PyASCIIObject)" },
	{ F_(uni_compact_size), 8, 13, "sizeof(PyCompactUnicodeObject)" },
	{ F_(uni_compact_size), 8, 13, "&((PyUnicodeObject *)0)->data" },
	{ F_(bytes_size), 8, 13, "&((PyVarObject *)0)->ob_size" },
	{ F_(bytes_sval), 8, 13, "&((PyBytesObject *)0)->ob_sval" },
};
/* Facts the code assumes rather than stores: name, minor range, gdb
 * expression, value. */
static const struct {
	const char *what;
	unsigned lo, hi;
	const char *expr;
	long value;
} dwarf_facts[] = {
	{ "ob_type", 8, 13, "&((PyObject *)0)->ob_type", 8 },
	{ "thread_id is a pthread_t", 8, 13, "sizeof(" TS "->thread_id)", 8 },
	{ "f_lasti is an int", 8, 10, "sizeof(" FO "->f_lasti)", 4 },
	{ "is_entry is a byte", 11, 11, "sizeof(" IF "->is_entry)", 1 },
	{ "owner is a byte", 11, 13, "sizeof(" IF "->owner)", 1 },
	{ "FRAME_OWNED_BY_CSTACK", 12, 13, "FRAME_OWNED_BY_CSTACK",
	  PY_OWNED_BY_CSTACK },
	{ "interpreters.main follows head", 8, 13,
	  "(char *)&" RT "->interpreters.main - (char *)&" RT
	  "->interpreters.head",
	  8 },
	{ "str state: kind at bit 2", 8, 13, "$kind", 2 },
	{ "str state: compact at bit 5", 8, 13, "$compact", 5 },
	{ "str state: ascii at bit 6", 8, 13, "$ascii", 6 },
};
#undef RT
#undef TS
#undef FO
#undef IF
#undef CO
#undef IS

/* Print "K<i> value" for each expression with gdb; the bit positions in
 * PyASCIIObject.state come through gdb's Python as convenience variables. */
static char *gdb_eval(const struct pyi *p, const char **exprs, int n)
{
	char cmd[16384];
	int i, len;

	len = snprintf(cmd, sizeof(cmd),
		       "gdb -nx -batch -ex 'python "
		       "[gdb.set_convenience_variable(f.name, f.bitpos) "
		       "for f in [x for x in gdb.lookup_type("
		       "\"PyASCIIObject\").fields() if x.name == \"state\"]"
		       "[0].type.fields()]'");
	for (i = 0; i < n; i++)
		len += snprintf(cmd + len, sizeof(cmd) - len,
				" -ex 'printf \"K%d %%ld\\n\", (long)(%s)'", i,
				exprs[i]);
	snprintf(cmd + len, sizeof(cmd) - len, " %s 2>&1", p->lib);
	return pyi_run("%s", cmd);
}

static bool gdb_value(const char *out, int i, long *v)
{
	char key[16];
	const char *s;

	snprintf(key, sizeof(key), "K%d ", i);
	for (s = out; (s = strstr(s, key)); s++)
		if (s == out || s[-1] == '\n')
			return sscanf(s + strlen(key), "%ld", v) == 1;
	return false;
}

static void dwarf_one(const struct pyi *p)
{
	const size_t nc = sizeof(dwarf_checks) / sizeof(dwarf_checks[0]);
	const size_t nf = sizeof(dwarf_facts) / sizeof(dwarf_facts[0]);
	const char *exprs[64];
	struct py_info in;
	char *out;
	size_t k, j;
	int ne = 0, checked = 0;

	if (!p->dbg[0]) {
		test_note("%s: no DWARF (for Debian: python3.11-dbg of the "
			  "same build): not checked",
			  p->label);
		return;
	}
	if (!ASSERT_OK(fix_py_detect(p->lib, 0, &in), "detect"))
		return;
	for (k = 0; k < nc; k++)
		exprs[ne++] = dwarf_checks[k].expr;
	for (k = 0; k < nf; k++)
		exprs[ne++] = dwarf_facts[k].expr;
	out = gdb_eval(p, exprs, ne);
	if (!ASSERT_NOT_NULL(out, "gdb"))
		return;
	for (k = 0; k < nc; k++) {
		const struct dwarf_check *c = &dwarf_checks[k];
		bool applies = false;
		uint16_t ours;
		long v;

		memcpy(&ours, (const char *)&in.off + c->off, sizeof(ours));
		for (j = 0; j < nc; j++)
			if (dwarf_checks[j].off == c->off &&
			    p->minor >= dwarf_checks[j].lo &&
			    p->minor <= dwarf_checks[j].hi)
				applies = true;
		/* Fields the version does not have must say so. */
		if (!applies && ours != PY_OFF_NONE)
			test_fail(__FILE__, __LINE__,
				  "%s: 3.%u has no such field, ours %u",
				  c->field, p->minor, ours);
		if (p->minor < c->lo || p->minor > c->hi)
			continue;
		if (!gdb_value(out, (int)k, &v))
			test_fail(__FILE__, __LINE__,
				  "%s: gdb could not evaluate %s", c->field,
				  c->expr);
		else if (ours != v)
			test_fail(__FILE__, __LINE__,
				  "%s: ours %u, DWARF %ld (%s)", c->field, ours,
				  v, c->expr);
		checked++;
	}
	for (k = 0; k < nf; k++) {
		long v = -1;

		if (p->minor < dwarf_facts[k].lo ||
		    p->minor > dwarf_facts[k].hi)
			continue;
		if (!gdb_value(out, (int)(nc + k), &v) ||
		    v != dwarf_facts[k].value)
			test_fail(__FILE__, __LINE__,
				  "%s: DWARF says %ld, expected %ld",
				  dwarf_facts[k].what, v, dwarf_facts[k].value);
		checked++;
	}
	free(out);
	test_note("%s: %d offsets and facts equal the DWARF", p->label,
		  checked);
}

TEST(python_offsets_dwarf)
{
	char *have_gdb = pyi_run("command -v gdb");

	if (!have_gdb) {
		test_skip("gdb not installed: no DWARF oracle");
		return;
	}
	free(have_gdb);
	pyi_each(dwarf_one);
}

/* ---- line tables against CPython's co_lines() ---------------------------- */

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	while (s[0] && s[1] && n < cap) {
		unsigned b;

		if (sscanf(s, "%2x", &b) != 1)
			break;
		out[n++] = (uint8_t)b;
		s += 2;
	}
	return n;
}

static void lines_one(const struct pyi *p)
{
	static uint8_t table[1 << 20];
	char *out, *line, *save = NULL;
	size_t tlen = 0, codes = 0, instrs = 0, bad = 0;
	int first = 0;

	out = pyi_run("%s %s/tests/workloads/python/linetable.py", p->bin,
		      test_srcdir());
	if (!ASSERT_NOT_NULL(out, "linetable.py"))
		return;
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *s, *end;
		uint32_t k = 0;

		if (strncmp(line, "code ", 5) == 0) {
			first = (int)strtol(line + 5, &end, 10);
			tlen = unhex(end + 1, table, sizeof(table));
			codes++;
			ASSERT_EQ(py_line_for_instr(p->minor, table, tlen,
						    first, PY_INSTR_NONE),
				  first, "not started: first line");
			continue;
		}
		if (strncmp(line, "lines", 5) != 0)
			continue;
		for (s = line + 5; *s; s = end, k++) {
			long want = strtol(s, &end, 10);
			int got;

			if (end == s)
				break;
			got = py_line_for_instr(p->minor, table, tlen, first,
						k);
			instrs++;
			if (got != want && bad++ < 5)
				test_fail(__FILE__, __LINE__,
					  "code at line %d, instr %u: line %d, "
					  "CPython says %ld",
					  first, k, got, want);
		}
	}
	free(out);
	ASSERT_EQ(bad, 0, "lines that differ from CPython's");
	ASSERT_GT(codes, 100, "code objects compared");
	test_note("%s: %zu code objects, %zu instructions", p->label, codes,
		  instrs);
}

TEST(python_line_tables)
{
	pyi_each(lines_one);
}

TEST(python_line_tables_garbage)
{
	static const unsigned minors[] = { 8, 10, 11 };
	uint8_t t[512];
	unsigned seed = 1, k, j;

	/* Any bytes are safe input; a varint that never ends is refused. */
	for (k = 0; k < 2000; k++) {
		for (j = 0; j < sizeof(t); j++)
			t[j] = (uint8_t)(rand_r(&seed) >> 7);
		for (j = 0; j < 3; j++)
			py_line_for_instr(minors[j], t,
					  rand_r(&seed) % sizeof(t),
					  rand_r(&seed) % 1000,
					  rand_r(&seed) % 2000);
	}
	memset(t, 0xff, sizeof(t)); /* long form, varints all continue */
	t[0] = 0x80 | 14 << 3;
	ASSERT_EQ(py_line_for_instr(11, t, sizeof(t), 5, 0), -1,
		  "endless varint");
	t[0] = 0x00; /* not an entry start */
	ASSERT_EQ(py_line_for_instr(12, t, 4, 5, 0), -1, "no entry byte");
	ASSERT_EQ(py_line_for_instr(9, NULL, 0, 7, 3), -1, "no table");
	ASSERT_EQ(py_line_for_instr(9, t, 0, 7, 0), 7, "empty lnotab");
	/* lines past INT_MAX: -1, not signed overflow (found by fuzz_pyline) */
	t[0] = 2;
	t[1] = 100;
	t[2] = 2;
	t[3] = 100;
	ASSERT_EQ(py_line_for_instr(10, t, 4, INT_MAX - 50, 1), -1,
		  "3.10 table past INT_MAX");
	ASSERT_EQ(py_line_for_instr(9, t, 4, INT_MAX - 50, 1), -1,
		  "lnotab past INT_MAX");
	t[0] = t[2] = 0x80 | 13 << 3; /* no columns, one unit */
	t[1] = t[3] = 62;	      /* svarint +31 */
	ASSERT_EQ(py_line_for_instr(12, t, 4, INT_MAX - 50, 0), INT_MAX - 19,
		  "location table near INT_MAX");
	ASSERT_EQ(py_line_for_instr(12, t, 4, INT_MAX - 50, 1), -1,
		  "location table past INT_MAX");
}

/* ---- objects built in this process --------------------------------------- */

/* A page-aligned arena of fake CPython objects, read back through
 * process_vm_readv by a context registered for our own pid. */
struct fake {
	uint8_t *mem;
	size_t size, used;
	const struct py_info *in;
	uint64_t type; /* our fake PyCode_Type */
};

static uint64_t fk_alloc(struct fake *f, size_t n)
{
	uint64_t a = (uint64_t)(uintptr_t)(f->mem + f->used);

	f->used += (n + 15) & ~(size_t)15;
	if (f->used > f->size)
		abort();
	return a;
}

static void fk_put(uint64_t addr, const void *v, size_t n)
{
	memcpy((void *)(uintptr_t)addr, v, n);
}

static void fk_u64(uint64_t addr, uint64_t v)
{
	fk_put(addr, &v, 8);
}

/* A str of the given kind (1, 2, 4) holding n code points; compact unless
 * legacy (then the data lives elsewhere and is pointed to). */
static uint64_t fk_str_kind(struct fake *f, unsigned kind, const uint32_t *cps,
			    size_t n, bool legacy)
{
	const struct py_offsets *o = &f->in->off;
	bool ascii = kind == 1 && !legacy;
	uint64_t s, data;
	uint32_t state;
	int64_t len = (int64_t)n;
	size_t i;

	for (i = 0; i < n; i++)
		if (cps[i] > 0x7f)
			ascii = false;
	s = fk_alloc(f, o->uni_compact_size + 8 + (n + 1) * kind);
	state = kind << 2 | (legacy ? 0 : 1u << 5) | (ascii ? 1u << 6 : 0) |
		1u << 7; /* "ready" up to 3.11 */
	fk_put(s + o->uni_length, &len, 8);
	fk_put(s + o->uni_state, &state, 4);
	if (legacy) {
		data = fk_alloc(f, (n + 1) * kind);
		fk_u64(s + o->uni_compact_size, data);
	} else {
		data = s + (ascii ? o->uni_ascii_size : o->uni_compact_size);
	}
	for (i = 0; i < n; i++) {
		uint16_t u16 = (uint16_t)cps[i];
		uint8_t u8 = (uint8_t)cps[i];

		if (kind == 1)
			fk_put(data + i, &u8, 1);
		else if (kind == 2)
			fk_put(data + 2 * i, &u16, 2);
		else
			fk_put(data + 4 * i, &cps[i], 4);
	}
	return s;
}

static uint64_t fk_str(struct fake *f, const char *ascii)
{
	uint32_t cps[512];
	size_t i, n = strlen(ascii);

	for (i = 0; i < n && i < 512; i++)
		cps[i] = (uint8_t)ascii[i];
	return fk_str_kind(f, 1, cps, i, false);
}

static uint64_t fk_bytes(struct fake *f, const uint8_t *b, size_t n)
{
	const struct py_offsets *o = &f->in->off;
	uint64_t a = fk_alloc(f, o->bytes_sval + n + 1);
	int64_t len = (int64_t)n;

	fk_put(a + o->bytes_size, &len, 8);
	fk_put(a + o->bytes_sval, b, n);
	return a;
}

/* A code object: name (qualname too from 3.11), file, a line table that
 * puts instruction 0 on `first` and instructions 1.. on first + 1. */
static uint64_t fk_code(struct fake *f, const char *name, const char *file,
			int first)
{
	const struct py_offsets *o = &f->in->off;
	uint64_t c = fk_alloc(f, o->co_basicsize + 64);
	uint8_t tab[8];
	size_t tlen;
	int32_t fl = first;

	if (f->in->minor <= 9) { /* (bytes, line) increments */
		tab[0] = 2, tab[1] = 1, tlen = 2;
	} else if (f->in->minor == 10) { /* (range bytes, line delta) */
		tab[0] = 2, tab[1] = 0, tab[2] = 254, tab[3] = 1, tlen = 4;
	} else { /* 1 unit, no columns delta 0; 8 units, one-line form +1 */
		tab[0] = 0x80 | 13 << 3, tab[1] = 0;
		tab[2] = 0x80 | 11 << 3 | 7, tab[3] = 0, tab[4] = 0, tlen = 5;
	}
	fk_u64(c + 8, f->type);
	fk_put(c + o->co_firstlineno, &fl, 4);
	fk_u64(c + o->co_name, fk_str(f, name));
	if (o->co_qualname != PY_OFF_NONE)
		fk_u64(c + o->co_qualname, fk_str(f, name));
	fk_u64(c + o->co_filename, fk_str(f, file));
	fk_u64(c + o->co_linetable, fk_bytes(f, tab, tlen));
	return c;
}

/* Register our own pid with in's layout, biased so that PyCode_Type is
 * f->type. */
static int fk_setup(struct fake *f, const struct py_info *in,
		    const struct py_ctx_opts *opts, struct py_ctx **ctx)
{
	int err;

	memset(f, 0, sizeof(*f));
	f->size = 1 << 20;
	f->mem = mmap(NULL, f->size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f->mem == MAP_FAILED)
		return -errno;
	f->in = in;
	f->type = fk_alloc(f, 512);
	err = py_ctx_new(opts, ctx);
	if (!err)
		err = py_ctx_add_proc(*ctx, getpid(), in,
				      f->type - in->code_type);
	return err;
}

static void fk_teardown(struct fake *f, struct py_ctx *ctx)
{
	py_ctx_free(ctx);
	if (f->mem && f->mem != MAP_FAILED)
		munmap(f->mem, f->size);
	f->mem = NULL;
}

/* Run fn on one detected layout per minor version present, each a
 * subtest. */
static void each_layout(void (*fn)(const struct py_info *in))
{
	struct pyi list[PYI_MAX];
	int i, n = pyi_find(list, PYI_MAX);
	unsigned seen = 0;

	if (n == 0) {
		test_skip("no CPython 3.8-3.13 on this machine");
		return;
	}
	for (i = 0; i < n; i++) {
		/* The runner keeps the subtest's name until the next one. */
		static char labels[PYI_MAX][16];
		char *label = labels[i];
		struct py_info in;

		if (seen & 1u << list[i].minor ||
		    fix_py_detect(list[i].lib, 0, &in) != 0)
			continue;
		seen |= 1u << list[i].minor;
		snprintf(label, sizeof(labels[i]), "3.%u", list[i].minor);
		if (test_start_subtest(label))
			fn(&in);
	}
}

static void cache_one(const struct py_info *in)
{
	struct py_ctx_opts opts = { .max_code = 4 };
	struct py_ctx *ctx = NULL;
	struct py_frame_info fi;
	struct py_stats st;
	struct fake f;
	uint64_t code[10], name2;
	const struct py_offsets *o = &in->off;
	pid_t me = getpid();
	int k;

	if (!ASSERT_OK(fk_setup(&f, in, &opts, &ctx), "setup"))
		goto cleanup;
	for (k = 0; k < 10; k++) {
		char name[32];

		snprintf(name, sizeof(name), "fn%d", k);
		code[k] = fk_code(&f, name, "/src/mod.py", 10 * k + 1);
	}
	/* miss, then hit */
	ASSERT_OK(py_symbolize(ctx, me, code[0], 0, &fi), "first");
	ASSERT_STREQ(fi.name, "fn0", "name");
	ASSERT_STREQ(fi.file, "/src/mod.py", "file");
	ASSERT_EQ(fi.line, 1, "line of instr 0");
	ASSERT_OK(py_symbolize(ctx, me, code[0], 3, &fi), "again");
	ASSERT_EQ(fi.line, 2, "line of instr 3");
	ASSERT_OK(py_symbolize(ctx, me, code[0], PY_INSTR_NONE, &fi),
		  "not started");
	ASSERT_EQ(fi.line, 1, "not started: first line");
	py_ctx_stats(ctx, &st);
	ASSERT_EQ(st.misses, 1, "misses");
	ASSERT_EQ(st.hits, 2, "hits");
	/* bound: 10 distinct objects through a cache of 4 */
	for (k = 0; k < 10; k++)
		ASSERT_OK(py_symbolize(ctx, me, code[k], 1, &fi), "fill");
	py_ctx_stats(ctx, &st);
	ASSERT_EQ(st.entries, 4, "entries at the bound");
	ASSERT_EQ(st.evictions, 6, "evictions");
	ASSERT_OK(py_symbolize(ctx, me, code[9], 1, &fi), "recent");
	ASSERT_OK(py_symbolize(ctx, me, code[1], 1, &fi), "evicted");
	py_ctx_stats(ctx, &st);
	ASSERT_EQ(st.hits, 4, "recent one is a hit");
	ASSERT_EQ(st.misses, 11, "evicted one is a miss");
	ASSERT_STREQ(fi.name, "fn1", "evicted one read again");
	/* reused address: the object at code[1] becomes another one */
	name2 = fk_str(&f, "other");
	fk_u64(code[1] + o->co_name, name2);
	if (o->co_qualname != PY_OFF_NONE)
		fk_u64(code[1] + o->co_qualname, name2);
	ASSERT_OK(py_symbolize(ctx, me, code[1], 1, &fi), "reused");
	ASSERT_STREQ(fi.name, "other", "new object's name");
	fk_put(code[1] + o->co_firstlineno, &(int32_t){ 500 }, 4);
	ASSERT_OK(py_symbolize(ctx, me, code[1], 0, &fi), "reused 2");
	ASSERT_EQ(fi.first_line, 500, "new first line");
	py_ctx_stats(ctx, &st);
	ASSERT_EQ(st.stale, 2, "stale entries detected");
	/* the process goes: its entries go */
	py_ctx_remove_proc(ctx, me);
	py_ctx_stats(ctx, &st);
	ASSERT_EQ(st.entries, 0, "entries after exit");
	ASSERT_EQ(st.bytes, 0, "bytes after exit");
	ASSERT_EQ(py_symbolize(ctx, me, code[1], 0, &fi), -ESRCH,
		  "unknown pid");
	py_ctx_free(ctx);
	ctx = NULL;
	/* the byte bound */
	opts.max_code = 1000;
	opts.max_bytes = 1000;
	if (ASSERT_OK(py_ctx_new(&opts, &ctx), "ctx") &&
	    ASSERT_OK(py_ctx_add_proc(ctx, me, in,
				      f.type - in->code_type),
		      "add")) {
		for (k = 0; k < 10; k++)
			py_symbolize(ctx, me, code[k], 0, &fi);
		py_ctx_stats(ctx, &st);
		ASSERT_LE(st.bytes, 1000, "bytes at the bound");
		ASSERT_GT(st.evictions, 0, "evictions by bytes");
	}
cleanup:
	fk_teardown(&f, ctx);
}

TEST(python_cache)
{
	each_layout(cache_one);
}

TEST(python_proc_table)
{
	struct py_ctx_opts opts = { .max_procs = 3 };
	struct py_info in = { .format = PY_INFO_FORMAT };
	struct py_ctx *ctx;
	struct py_stats st;

	/* A layout only needs to be self-consistent here. */
	in.off.uni_length = 16;
	in.off.uni_state = 32;
	in.off.uni_ascii_size = 48;
	in.off.uni_compact_size = 72;
	in.off.co_qualname = PY_OFF_NONE;
	in.off.rt_tss_key = PY_OFF_NONE;
	in.frame_model = PY_FRAMES_OBJECT;
	if (!ASSERT_OK(py_ctx_new(&opts, &ctx), "ctx"))
		return;
	ASSERT_OK(py_ctx_add_proc(ctx, 30, &in, 0), "30");
	ASSERT_OK(py_ctx_add_proc(ctx, 10, &in, 0x1000), "10");
	ASSERT_OK(py_ctx_add_proc(ctx, 20, &in, 0), "20");
	ASSERT_EQ(py_ctx_add_proc(ctx, 40, &in, 0), -ENOSPC, "full");
	ASSERT_OK(py_ctx_add_proc(ctx, 10, &in, 0x2000), "replace");
	if (ASSERT_NOT_NULL(py_ctx_proc(ctx, 10), "10"))
		ASSERT_EQ(py_ctx_proc(ctx, 10)->runtime, 0x2000,
			  "replaced bias");
	py_ctx_remove_proc(ctx, 20);
	ASSERT_TRUE(py_ctx_proc(ctx, 20) == NULL, "removed");
	ASSERT_NOT_NULL(py_ctx_proc(ctx, 30), "30 kept");
	ASSERT_OK(py_ctx_add_proc(ctx, 40, &in, 0), "room again");
	py_ctx_stats(ctx, &st);
	ASSERT_EQ(st.procs_full, 1, "procs_full");
	py_ctx_free(ctx);
	py_ctx_free(NULL);
}

/* Layouts that would make userland read past its buffers: a 3.13 file
 * describes its own offsets, and the cache holds them as bytes (found by
 * fuzz_pycode). */
TEST(python_info_check)
{
	struct py_info good = { .format = PY_INFO_FORMAT }, in;
	struct py_ctx *ctx;

	good.frame_model = PY_FRAMES_SHIM;
	good.off.uni_length = 16;
	good.off.uni_state = 32;
	good.off.uni_ascii_size = 40;
	good.off.uni_compact_size = 56;
	good.off.co_firstlineno = 48;
	good.off.co_filename = 56;
	good.off.co_name = 64;
	good.off.co_qualname = 72;
	good.off.co_linetable = 80;
	good.off.bytes_size = 16;
	good.off.bytes_sval = 32;
	good.off.f_back = 8;
	good.off.f_code = 0;
	good.off.f_lasti = 56;
	good.off.f_is_entry = PY_OFF_NONE;
	good.off.f_owner = 70;
	good.off.rt_tss_key = PY_OFF_NONE;
	good.off.cf_current_frame = PY_OFF_NONE;
	if (!ASSERT_OK(py_ctx_new(NULL, &ctx), "ctx"))
		return;
	ASSERT_OK(py_info_check(&good), "a sane layout");
	ASSERT_OK(py_ctx_add_proc(ctx, 1, &good, 0), "sane: added");
	/* offset + width past 0xffff used to wrap to a small header size */
	in = good;
	in.off.co_filename = 0xfff8;
	ASSERT_EQ(py_ctx_add_proc(ctx, 2, &in, 0), -EINVAL, "code field wraps");
	in = good;
	in.off.f_owner = 0xfffd;
	ASSERT_EQ(py_info_check(&in), -EINVAL, "frame size wraps to 0");
	in = good;
	in.off.bytes_size = 0x100;
	ASSERT_EQ(py_info_check(&in), -EINVAL, "bytes header too large");
	in = good;
	in.off.co_name = PY_OFF_NONE;
	ASSERT_EQ(py_info_check(&in), -EINVAL, "code field missing");
	in = good;
	in.off.f_owner = PY_OFF_NONE;
	ASSERT_EQ(py_info_check(&in), -EINVAL, "shim frames need owner");
	in = good;
	in.frame_model = PY_FRAMES_OBJECT;
	in.lasti_shift = 40;
	ASSERT_EQ(py_info_check(&in), -EINVAL, "shift past 31");
	in.frame_model = 9;
	ASSERT_EQ(py_info_check(&in), -EINVAL, "unknown frame model");
	ASSERT_TRUE(py_ctx_proc(ctx, 2) == NULL, "refused: not registered");
	py_ctx_free(ctx);
}

/* A reader that fails the nth call (counting from 1), for fault injection. */
struct fault {
	int n, calls;
};

static int faulty_read(void *arg, pid_t pid, uint64_t addr, void *buf,
		       size_t len)
{
	struct fault *ft = arg;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	if (++ft->calls == ft->n ||
	    process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)len)
		return -EFAULT;
	return 0;
}

static void malformed_one(const struct py_info *in)
{
	const struct py_offsets *o = &in->off;
	struct py_ctx *ctx = NULL;
	struct py_frame_info fi;
	struct py_stats st;
	struct fake f;
	pid_t me = getpid();
	uint64_t c, s, garbage, hole;
	static const uint32_t latin[] = { 'h', 0xe9, 'l' };
	static const uint32_t cjk[] = { 0x65e5, 0x672c, 0xd800 };
	static const uint32_t astral[] = { 0x1d518, 0x110000 };
	unsigned seed = 7;
	int k;

	if (!ASSERT_OK(fk_setup(&f, in, NULL, &ctx), "setup"))
		goto cleanup;
	/* garbage where a code object should be */
	garbage = fk_alloc(&f, 512);
	for (k = 0; k < 512; k++)
		((uint8_t *)(uintptr_t)garbage)[k] = (uint8_t)rand_r(&seed);
	ASSERT_EQ(py_symbolize(ctx, me, garbage, 0, &fi), -EINVAL,
		  "garbage: not a code object");
	/* unmapped memory */
	hole = (uint64_t)(uintptr_t)(f.mem + f.size - 4096);
	munmap(f.mem + f.size - 4096, 4096);
	ASSERT_EQ(py_symbolize(ctx, me, hole, 0, &fi), -EFAULT,
		  "unmapped code object");
	ASSERT_EQ(py_symbolize(ctx, me, 0, 0, &fi), -EFAULT, "NULL");
	ASSERT_EQ(py_symbolize(ctx, me, hole - 8, 0, &fi), -EFAULT,
		  "object across the end of the mapping");
	/* a name of absurd length: cut, not trusted */
	c = fk_code(&f, "x", "f.py", 1);
	s = fk_str(&f, "abc");
	fk_u64(c + o->co_name, s);
	if (o->co_qualname != PY_OFF_NONE)
		fk_u64(c + o->co_qualname, s);
	fk_put(s + o->uni_length, &(int64_t){ 1LL << 60 }, 8);
	k = py_symbolize(ctx, me, c, 0, &fi);
	ASSERT_TRUE(k == 0 || k == -EFAULT, "huge length: clean");
	if (k == 0)
		ASSERT_TRUE(fi.flags & PY_FI_NAME_TRUNC, "cut");
	fk_put(s + o->uni_length, &(int64_t){ -1 }, 8);
	fk_put(c + o->co_firstlineno, &(int32_t){ 2 }, 4);
	ASSERT_EQ(py_symbolize(ctx, me, c, 0, &fi), -EINVAL,
		  "negative length");
	fk_put(s + o->uni_length, &(int64_t){ 3 }, 8);
	fk_put(s + o->uni_state, &(uint32_t){ 3 << 2 | 1 << 5 }, 4);
	fk_put(c + o->co_firstlineno, &(int32_t){ 3 }, 4);
	ASSERT_EQ(py_symbolize(ctx, me, c, 0, &fi), -EINVAL,
		  "kind 3 does not exist");
	/* strings of every kind, compact and legacy, as UTF-8 */
	c = fk_code(&f, "x", "f.py", 1);
	s = fk_str_kind(&f, 1, latin, 3, false);
	fk_u64(c + o->co_filename, s);
	ASSERT_OK(py_symbolize(ctx, me, c, 0, &fi), "latin-1");
	ASSERT_STREQ(fi.file, "h\xc3\xa9l", "latin-1 as UTF-8");
	c = fk_code(&f, "x", "f.py", 1);
	fk_u64(c + o->co_filename, fk_str_kind(&f, 2, cjk, 3, false));
	ASSERT_OK(py_symbolize(ctx, me, c, 0, &fi), "UCS-2");
	ASSERT_STREQ(fi.file, "\xe6\x97\xa5\xe6\x9c\xac\xef\xbf\xbd",
		     "UCS-2 as UTF-8, lone surrogate replaced");
	c = fk_code(&f, "x", "f.py", 1);
	fk_u64(c + o->co_filename, fk_str_kind(&f, 4, astral, 2, true));
	ASSERT_OK(py_symbolize(ctx, me, c, 0, &fi), "legacy UCS-4");
	ASSERT_STREQ(fi.file, "\xf0\x9d\x94\x98\xef\xbf\xbd",
		     "UCS-4 as UTF-8, out of range replaced");
	/* broken line tables */
	c = fk_code(&f, "x", "f.py", 1);
	s = fk_bytes(&f, (const uint8_t *)"\x01", 1);
	fk_put(s + o->bytes_size, &(int64_t){ -5 }, 8);
	fk_u64(c + o->co_linetable, s);
	ASSERT_EQ(py_symbolize(ctx, me, c, 0, &fi), -EINVAL,
		  "negative table size");
	fk_put(s + o->bytes_size, &(int64_t){ 1LL << 40 }, 8);
	fk_put(c + o->co_firstlineno, &(int32_t){ 4 }, 4);
	k = py_symbolize(ctx, me, c, 0, &fi);
	ASSERT_TRUE(k == 0 || k == -EFAULT, "huge table: clean");
	fk_u64(c + o->co_name, 0);
	fk_put(c + o->co_firstlineno, &(int32_t){ 5 }, 4);
	ASSERT_EQ(py_symbolize(ctx, me, c, 0, &fi), -EINVAL, "no name");
	fk_u64(c + o->co_name, hole);
	if (o->co_qualname != PY_OFF_NONE)
		fk_u64(c + o->co_qualname, hole);
	ASSERT_EQ(py_symbolize(ctx, me, c, 0, &fi), -EFAULT,
		  "name unmapped");
	py_ctx_stats(ctx, &st);
	ASSERT_GT(st.bad_objects, 3, "bad objects counted");
	ASSERT_GT(st.read_errors, 2, "read errors counted");
	ASSERT_EQ(st.entries, 3, "only good objects cached");
	fk_teardown(&f, ctx);
	ctx = NULL;
	/* fail each read of a fresh lookup in turn */
	for (k = 1; k < 8; k++) {
		struct fault ft = { .n = k };
		struct py_ctx_opts opts = { .read = faulty_read,
					    .read_arg = &ft };
		int err;

		if (!ASSERT_OK(fk_setup(&f, in, &opts, &ctx), "setup"))
			break;
		c = fk_code(&f, "fn", "f.py", 1);
		err = py_symbolize(ctx, me, c, 0, &fi);
		if (ft.calls >= k)
			ASSERT_EQ(err, -EFAULT, "injected failure");
		else
			ASSERT_OK(err, "no read failed");
		ASSERT_OK(py_symbolize(ctx, me, c, 0, &fi), "recovers");
		ASSERT_STREQ(fi.name, "fn", "after recovery");
		fk_teardown(&f, ctx);
		ctx = NULL;
	}
cleanup:
	fk_teardown(&f, ctx);
}

TEST(python_malformed)
{
	each_layout(malformed_one);
}

/* ---- allocation failures --------------------------------------------------- */

struct py_alloc {
	const struct py_info *in;
	struct fake *f;
	uint64_t code;
};

/* A fresh context symbolizing one code object twice (read, then cached). */
static int py_alloc_op(void *arg)
{
	const struct py_alloc *a = arg;
	struct py_ctx *ctx = NULL;
	struct py_frame_info fi;
	int err;

	err = py_ctx_new(NULL, &ctx);
	if (!err)
		err = py_ctx_add_proc(ctx, getpid(), a->in,
				      a->f->type - a->in->code_type);
	if (!err)
		err = py_symbolize(ctx, getpid(), a->code, 1, &fi);
	if (!err)
		err = py_symbolize(ctx, getpid(), a->code, 1, &fi);
	if (!err && strcmp(fi.name, "fn"))
		err = -EINVAL;
	py_ctx_free(ctx);
	return err;
}

static void alloc_faults_one(const struct py_info *in)
{
	struct py_ctx *ctx = NULL;
	struct fake f;
	struct py_alloc a = { in, &f, 0 };

	if (!ASSERT_OK(fk_setup(&f, in, NULL, &ctx), "setup"))
		goto out;
	a.code = fk_code(&f, "fn", "f.py", 3);
	alloc_fail_each("py_symbolize", py_alloc_op, &a, false, NULL, 200);
	alloc_fail_each("py_symbolize", py_alloc_op, &a, true, NULL, 200);
	ASSERT_OK(py_alloc_op(&a), "after");
out:
	fk_teardown(&f, ctx);
}

TEST(python_alloc_faults)
{
	each_layout(alloc_faults_one);
}

/* ---- the walk over built structures -------------------------------------- */

struct fk_frame {
	uint64_t code;
	uint32_t instr; /* code units, or PY_INSTR_NONE */
	bool entry;	/* first frame of an invocation */
};

/* Build a frame of the layout; returns its address. */
static uint64_t fk_frame(struct fake *f, const struct py_proc *pp,
			 const struct fk_frame *fr, uint64_t back, bool shim)
{
	uint64_t a = fk_alloc(f, 512);

	fk_u64(a + pp->f_back, back);
	if (shim) {
		uint8_t owner = PY_OWNED_BY_CSTACK;

		fk_put(a + pp->f_owner, &owner, 1);
		return a;
	}
	fk_u64(a + pp->f_code, fr->code);
	if (pp->frame_model == PY_FRAMES_OBJECT) {
		int32_t lasti = fr->instr == PY_INSTR_NONE ?
					-1 :
					(int32_t)(fr->instr << pp->lasti_shift);

		fk_put(a + pp->f_lasti, &lasti, 4);
	} else {
		uint64_t ip = fr->code + pp->co_code_adaptive;

		/* prev_instr of a frame not started: one unit before */
		if (fr->instr == PY_INSTR_NONE)
			ip -= 2;
		else
			ip += 2ull * fr->instr;
		fk_u64(a + pp->f_lasti, ip);
		if (pp->frame_model == PY_FRAMES_ENTRY && fr->entry)
			fk_put(a + pp->f_is_entry, &(uint8_t){ 1 }, 1);
	}
	return a;
}

static void walk_one(const struct py_info *in)
{
	/* Two invocations: [c1 c2 c3] called from C called from [c4 c5]. */
	struct fk_frame frs[5] = {
		{ 0x1000, 7, false },   { 0x2000, 0, false },
		{ 0x3000, 12, true },   { 0x4000, PY_INSTR_NONE, false },
		{ 0x5000, 1, true },
	};
	struct py_walk_frame out[16];
	struct py_walk w;
	struct py_ctx *ctx = NULL;
	const struct py_proc *pp;
	struct fake f;
	uint64_t rt, interp, ts[70], frame = 0, cf, tsx;
	/* the fake memory is ours, read as the context reads it */
	interp_read_fn rd = interp_read_process;
	/* our thread's fs base in the fake list of states: the third */
	const uint64_t fs = 0x7f0000000002ull;
	pid_t me = getpid();
	int k;

	if (!ASSERT_OK(fk_setup(&f, in, NULL, &ctx), "setup"))
		goto cleanup;
	/* the runtime sits where the context expects it: rebias */
	rt = fk_alloc(&f, 8192);
	py_ctx_remove_proc(ctx, me);
	ASSERT_OK(py_ctx_add_proc(ctx, me, in, rt - in->runtime),
		  "rebias");
	pp = py_ctx_proc(ctx, me);
	interp = fk_alloc(&f, 8192);
	fk_u64(rt + pp->rt_interp_main, interp);
	/* 70 thread states, newest first; ours is the third */
	for (k = 69; k >= 0; k--) {
		ts[k] = fk_alloc(&f, 512);
		fk_u64(ts[k] + pp->ts_thread_id, 0x7f0000000000ull + k);
		fk_u64(ts[k] + pp->ts_next, k < 69 ? ts[k + 1] : 0);
	}
	fk_u64(interp + pp->is_tstate_head, ts[0]);
	for (k = 4; k >= 0; k--) {
		bool shim_below = pp->frame_model == PY_FRAMES_SHIM &&
				  frs[k].entry;

		if (shim_below)
			frame = fk_frame(&f, pp, NULL, frame, true);
		frame = fk_frame(&f, pp, &frs[k], frame, false);
	}
	cf = frame;
	if (pp->cf_current_frame != PY_OFF_NONE) {
		cf = fk_alloc(&f, 64);
		fk_u64(cf + pp->cf_current_frame, frame);
	}
	fk_u64(ts[2] + pp->ts_frame, cf);
	ASSERT_OK(fix_py_tstate(pp, rd, NULL, me, fs, &tsx),
		  "find");
	ASSERT_EQ(tsx, ts[2], "third state");
	ASSERT_EQ(fix_py_tstate(pp, rd, NULL, me, 0x7f0000000000ull + 64, &tsx),
		  -ESRCH, "65th state is past the scan limit");
	ASSERT_EQ(fix_py_tstate(pp, rd, NULL, me, 0x1234, &tsx), -ESRCH,
		  "unknown thread");
	if (!ASSERT_OK(fix_py_walk(pp, rd, NULL, me, fs, out, 16, &w), "walk"))
		goto cleanup;
	ASSERT_EQ(w.n, 5, "frames");
	ASSERT_FALSE(w.truncated, "not truncated");
	for (k = 0; k < 5 && k < (int)w.n; k++) {
		bool end = pp->frame_model == PY_FRAMES_OBJECT ||
			   k == 2 || k == 4;

		ASSERT_EQ(out[k].code, frs[k].code, "code");
		ASSERT_EQ(out[k].instr, frs[k].instr, "instr");
		ASSERT_EQ(out[k].flags, end ? PY_WF_CALL_END : 0,
			  "invocation boundaries");
	}
	ASSERT_OK(fix_py_walk(pp, rd, NULL, me, fs, out, 3, &w),
		  "short array");
	ASSERT_TRUE(w.n == 3 && w.truncated, "truncated at 3");
	/* a cycle ends at the bound */
	fk_u64(frame + pp->f_back, frame);
	ASSERT_OK(fix_py_walk(pp, rd, NULL, me, fs, out, 16, &w),
		  "cycle");
	ASSERT_TRUE(w.n == 16 && w.truncated, "cycle bounded");
	/* a broken link is an error, not a crash */
	fk_u64(frame + pp->f_back, 8);
	ASSERT_EQ(fix_py_walk(pp, rd, NULL, me, fs, out, 16, &w),
		  -EFAULT, "bad link");
	fk_u64(rt + pp->rt_interp_main, 0);
	ASSERT_EQ(fix_py_tstate(pp, rd, NULL, me, fs, &tsx), -ESRCH,
		  "no interpreter yet");
cleanup:
	fk_teardown(&f, ctx);
}

TEST(python_walk_synthetic)
{
	each_layout(walk_one);
}
