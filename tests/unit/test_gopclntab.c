// SPDX-License-Identifier: Apache-2.0
/*
 * Go: rows from .gopclntab checked against the Go toolchain's own view of
 * the binary (go tool nm, go tool objdump, and readelf on the .debug_frame
 * the Go linker writes), on tests/workloads/go/deep.go built with the
 * machine's Go, plain, stripped (-s -w) and PIE; and on hand-built tables
 * in the Go 1.16 and 1.20+ layouts, which the machine's Go (1.19) does
 * not write.
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deltas.h"
#include "ehframe.h"
#include "elfmap.h"
#include "gopclntab.h"

static const char *go_bin(void)
{
	static const char *cands[] = { "/usr/lib/go-1.19/bin/go",
				       "/usr/lib/go/bin/go", "/usr/bin/go" };
	size_t i;

	for (i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (access(cands[i], X_OK) == 0)
			return cands[i];
	return NULL;
}

/* Go's build cache is content-addressed and safe to share: one per user
 * across runs spares rebuilding the standard library (PIE: 10 s). */
static const char *go_cache(void)
{
	static char dir[512];
	const char *t = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/ep-test-gocache-%u", t && *t ? t : "/tmp",
		 (unsigned)getuid());
	return dir;
}

/* Build deep.go into tmpdir/name with extra go build flags and
 * environment (GOARCH=arm64); NULL and a skip when there is no Go
 * toolchain. */
static const char *build_deep_env(const char *name, const char *env,
				  const char *flags)
{
	static char out[512];
	char cmd[8192], src[PATH_MAX];
	const char *go = go_bin(), *tmp = test_tmpdir();

	if (!go) {
		test_skip("no Go toolchain (golang-1.19-go)");
		return NULL;
	}
	if (!realpath(test_srcdir(), src)) {
		test_fail(__FILE__, __LINE__, "srcdir: %s", strerror(errno));
		return NULL;
	}
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; mkdir -p src; cp %s/tests/workloads/go/deep.go src/;"
		 "printf 'module deep\\n\\ngo 1.19\\n' > src/go.mod; cd src;"
		 "GOCACHE=%s GOPATH=%s/gopath GOFLAGS=-mod=mod "
		 "GOTOOLCHAIN=local CGO_ENABLED=0 %s %s build %s -o ../%s . 2>&1",
		 tmp, src, go_cache(), tmp, env, go, flags, name);
	if (system(cmd) != 0) {
		test_fail(__FILE__, __LINE__, "go build %s failed", flags);
		return NULL;
	}
	snprintf(out, sizeof(out), "%s/%s", tmp, name);
	return out;
}

static const char *build_deep(const char *name, const char *flags)
{
	return build_deep_env(name, "", flags);
}

static struct dt_file *extract(const char *path, struct dt_extract_stats *st)
{
	struct dt_extract_opts o = { .stats = st };
	struct dt_file *f = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (dt_extract_file_opts(fd, path, &o, &f) != 0)
		f = NULL;
	close(fd);
	return f;
}

static struct unwind_rule at(const struct dt_file *f, uint64_t addr)
{
	struct unwind_rule inv = { .cmd = RULE_CMD_INVALID };
	int idx = dt_file_lookup(f, addr);

	return idx < 0 ? inv : *dt_file_rule(f, idx);
}

/* Our rule at addr, a row of readelf's .debug_frame table, counted in
 * *rows; false for a special runtime entry, counted in *cmds too (its
 * rule is a command, not the table's CFA). */
static bool at_row(const struct dt_file *f, unsigned long addr,
		   struct unwind_rule *r, unsigned long *rows,
		   unsigned long *cmds)
{
	*r = at(f, addr);
	(*rows)++;
	if (r->cmd == RULE_CMD_NONE)
		return true;
	(*cmds)++;
	return false;
}

/* What an unwinder must do at the entry of a runtime function: the spec
 * of gopclntab.h, written out again here. */
static int special_cmd(const char *name)
{
	char n[256];
	size_t len;

	snprintf(n, sizeof(n), "%s", name);
	len = strlen(n);
	if (len > 5 && !strcmp(n + len - 5, ".abi0"))
		n[len - 5] = 0;
	if (!strcmp(n, "runtime.goexit") || !strcmp(n, "runtime.mstart") ||
	    !strcmp(n, "runtime.rt0_go") || !strcmp(n, "runtime.mcall"))
		return RULE_CMD_STOP;
	if (!strcmp(n, "runtime.systemstack") || !strcmp(n, "runtime.asmcgocall") ||
	    !strcmp(n, "runtime.morestack") || !strcmp(n, "runtime.nanotime1") ||
	    !strcmp(n, "runtime.walltime1") || !strcmp(n, "runtime.walltime"))
		return RULE_CMD_GO_SWITCH;
	if (!strncmp(n, "runtime.sigreturn", 17))
		return RULE_CMD_SIGNAL;
	return RULE_CMD_NONE;
}

static bool is_sp(const struct unwind_rule *r, int cfa_off, int fp_rule)
{
	return r->cmd == RULE_CMD_NONE && r->cfa_reg == RULE_REG_SP &&
	       r->cfa_off == cfa_off && !r->flags && r->fp_rule == fp_rule &&
	       (fp_rule != RULE_FP_CFA_OFF || r->fp_off == -16);
}

static FILE *go_tool(const char *tool, const char *args, const char *bin)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s tool %s %s '%s' 2>/dev/null", go_bin(),
		 tool, args, bin);
	return popen(cmd, "r");
}

/* Every function `go tool nm` lists starts with CFA = rsp+8 (or its
 * command).  Returns the number of functions checked. */
static unsigned check_entries(const struct dt_file *f, const char *nm_of)
{
	char line[1024], name[512], type[4];
	unsigned checked = 0, bad = 0;
	unsigned long addr, size;
	FILE *p = go_tool("nm", "-size", nm_of);

	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		struct unwind_rule r;
		int want;

		if (sscanf(line, "%lx %lu %3s %511s", &addr, &size, type, name) != 4 ||
		    (strcmp(type, "T") && strcmp(type, "t")) || size == 0)
			continue;
		want = special_cmd(name);
		r = at(f, want == RULE_CMD_SIGNAL ? addr - 1 : addr);
		checked++;
		if (want != RULE_CMD_NONE ? r.cmd != want
					  : !is_sp(&r, 8, RULE_FP_SAME)) {
			char s[64];

			if (bad++ < 5)
				printf("    %s at 0x%lx: %s\n", name, addr,
				       dt_rule_str(&r, s, sizeof(s)));
		}
	}
	pclose(p);
	ASSERT_EQ(bad, 0, "function entries with CFA=rsp+8 (or the command)");
	return checked;
}

static bool blank(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == 0;
}

/* Does s read exactly the format (one %lx)?  sscanf alone accepts a
 * prefix: "SUBQ $0x10, R12" would pass for "SUBQ $0x%lx, SP". */
#define match1(s, fmt, v)                                                      \
	({                                                                     \
		int n_ = -1;                                                   \
		sscanf(s, fmt "%n", v, &n_) == 1 && n_ >= 0 && blank(s + n_); \
	})

struct insn {
	unsigned long addr;
	char text[128];
};

/* Prologue and epilogue points of every function in `go tool objdump`:
 * after SUBQ $N, SP the CFA is rsp+N+8; after MOVQ BP, N-8(SP) rbp is at
 * CFA-16; after PUSHQ BP (the first push) rsp+16 and rbp at CFA-16; at a
 * RET right after ADDQ $N, SP, rsp+8 again. */
static void check_prologues(const struct dt_file *f, const char *bin,
			    unsigned *n_checked)
{
	struct insn prev[3] = { 0 };
	char line[1024], fn[512] = "";
	unsigned checked = 0, bad = 0;
	long frame = -1;
	bool special = false;
	int idx = 0;
	FILE *p = go_tool("objdump", "", bin);

	if (!p)
		return;
	while (fgets(line, sizeof(line), p)) {
		struct insn cur;
		unsigned long n;
		char hex[64];
		struct unwind_rule r;
		int want_off = -1, want_fp = RULE_FP_SAME;

		if (sscanf(line, "TEXT %511s", fn) == 1) {
			char *paren = strchr(fn, '(');

			if (paren)
				*paren = 0;
			special = special_cmd(fn) != RULE_CMD_NONE;
			memset(prev, 0, sizeof(prev));
			frame = -1;
			idx = 0;
			continue;
		}
		if (sscanf(line, "%*s %lx %63s %127[^\n]", &cur.addr, hex,
			   cur.text) != 3 || special)
			continue;
		if (frame < 0 && match1(prev[0].text, "SUBQ $0x%lx, SP", &n) &&
		    prev[0].addr) {
			frame = n;
			want_off = n + 8;
		} else if (frame > 0 && prev[0].addr &&
			   match1(prev[0].text, "MOVQ BP, 0x%lx(SP)", &n) &&
			   (long)n == frame - 8 &&
			   match1(prev[1].text, "SUBQ $0x%lx, SP", &n)) {
			want_off = frame + 8;
			want_fp = RULE_FP_CFA_OFF;
		} else if (frame < 0 && prev[0].addr && !prev[1].addr &&
			   strncmp(prev[0].text, "PUSHQ BP", 8) == 0) {
			frame = 8;
			want_off = 16;
			want_fp = RULE_FP_CFA_OFF;
		} else if (frame > 0 && strncmp(cur.text, "RET", 3) == 0 &&
			   match1(prev[0].text, "ADDQ $0x%lx, SP", &n) &&
			   (long)n == frame) {
			want_off = 8;
		}
		if (want_off > 0) {
			r = at(f, cur.addr);
			checked++;
			if (!is_sp(&r, want_off, want_fp)) {
				char s[64];

				if (bad++ < 5)
					printf("    %s at 0x%lx after \"%s\": %s, "
					       "expected rsp+%d%s\n",
					       fn, cur.addr, prev[0].text,
					       dt_rule_str(&r, s, sizeof(s)),
					       want_off,
					       want_fp ? " rbp=c-16" : "");
			}
		}
		prev[2] = prev[1];
		prev[1] = prev[0];
		prev[0] = cur;
		/* Only the few instructions at the entry (stack check,
		 * SUBQ) are a prologue. */
		if (++idx >= 5 && frame < 0)
			frame = 0;
	}
	pclose(p);
	*n_checked = checked;
	ASSERT_EQ(bad, 0, "prologue and epilogue deltas as objdump shows");
}

TEST(gopclntab_go_binary)
{
	struct dt_extract_stats st;
	const char *bin = build_deep("deep", "");
	struct dt_file *f;
	unsigned entries, prologues = 0;

	if (!bin)
		return;
	f = extract(bin, &st);
	if (!ASSERT_NOT_NULL(f, "extract"))
		return;
	ASSERT_EQ(f->source, DT_SRC_GOPCLNTAB, "rows from .gopclntab only");
	ASSERT_EQ(st.go_version, 118, "Go 1.19 writes the 1.18 layout");
	entries = check_entries(f, bin);
	check_prologues(f, bin, &prologues);
	ASSERT_GT(entries, 1000, "functions checked");
	ASSERT_GT(prologues, 2000, "prologue points checked");
	test_note("deep: %llu functions, %u rows, %u rules, %.2f%% of the text "
		  "covered; %u entries and %u prologue/epilogue points agree "
		  "with go tool nm/objdump",
		  (unsigned long long)st.go_funcs, f->n_rows, f->n_rules,
		  100.0 * f->covered / (double)(f->text_hi - f->text_lo),
		  entries, prologues);
	dt_file_free(f);
}

/* The layout the stack switches need (RULE_CMD_GO_SWITCH), as Go's own
 * disassembler shows runtime.systemstack: "MOVQ FS:0xfffffff8, AX" (g in
 * TLS) and the last "CMPQ 0x..(BX), AX" before the first CALL (m.curg). */
TEST(gopclntab_go_switch_layout)
{
	const char *bin = build_deep("deep", "");
	struct dt_file *f;
	char line[1024], text[256];
	unsigned long addr, entry = 0, tls = 0, curg = 0;
	bool in_fn = false, called = false;
	struct unwind_rule r;
	FILE *p;

	if (!bin)
		return;
	f = extract(bin, NULL);
	p = go_tool("objdump", "-s runtime.systemstack", bin);
	if (!ASSERT_NOT_NULL(f, "extract") || !ASSERT_NOT_NULL(p, "objdump"))
		goto out;
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "TEXT ", 5)) {
			in_fn = !strncmp(line, "TEXT runtime.systemstack.abi0(SB)", 33) ||
				!strncmp(line, "TEXT runtime.systemstack(SB)", 28);
			continue;
		}
		if (!in_fn || called ||
		    sscanf(line, "%*s %lx %*s %255[^\n]", &addr, text) != 2)
			continue;
		if (!entry)
			entry = addr;
		if (!strncmp(text, "CALL", 4))
			called = true;
		else if (!tls)
			sscanf(text, "MOVQ FS:0x%lx,", &tls);
		if (!strncmp(text, "CMPQ 0x", 7))
			sscanf(text, "CMPQ 0x%lx(", &curg);
	}
	pclose(p);
	if (!ASSERT_TRUE(entry && tls && curg, "objdump shows the layout"))
		goto out;
	r = at(f, entry);
	test_note("runtime.systemstack at 0x%lx: g at fs%+d, m.curg at 0x%lx; ours: %s",
		  entry, (int)(int32_t)tls, curg, dt_rule_str(&r, text, sizeof(text)));
	ASSERT_EQ(r.cmd, RULE_CMD_GO_SWITCH, "GO_SWITCH at systemstack");
	ASSERT_EQ(r.flags, 0, "layout found (no frame-pointer fallback)");
	ASSERT_EQ(r.cfa_off, (int32_t)tls, "g's TLS offset");
	ASSERT_EQ(r.fp_off, (long)curg, "offsetof(m, curg)");
out:
	dt_file_free(f);
}

/* Go's linker writes a .debug_frame (zlib-compressed) from the same pcsp
 * tables: readelf's CFA per row must be ours. */
TEST(gopclntab_matches_go_debug_frame)
{
	struct dt_extract_stats st;
	const char *bin = build_deep("deep", "");
	struct dt_file *f;
	char cmd[1024], line[1024];
	unsigned long rows = 0, bad = 0, cmds = 0;
	FILE *p;

	if (!bin)
		return;
	f = extract(bin, &st);
	if (!ASSERT_NOT_NULL(f, "extract"))
		return;
	snprintf(cmd, sizeof(cmd),
		 "readelf -W --debug-dump=frames-interp '%s' 2>/dev/null", bin);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		unsigned long addr;
		int off;
		struct unwind_rule r;

		if (sscanf(line, "%lx rsp+%d", &addr, &off) != 2 ||
		    strlen(line) < 17 || line[16] != ' ')
			continue;
		if (!at_row(f, addr, &r, &rows, &cmds))
			continue;
		if (r.cfa_reg != RULE_REG_SP || r.cfa_off != off)
			if (bad++ < 5)
				printf("    0x%lx: ours rsp%+d, debug_frame rsp+%d\n",
				       addr, r.cfa_off, off);
	}
	if (p)
		pclose(p);
	ASSERT_GT(rows, 3000, "debug_frame rows");
	ASSERT_EQ(bad, 0, "CFA as in Go's .debug_frame");
	test_note("%lu .debug_frame rows agree (%lu at special entries)", rows,
		  cmds);
	dt_file_free(f);
}

/* Our own .debug_frame reader on Go's compressed section gives the same
 * CFA as the pclntab rows. */
TEST(gopclntab_compressed_debug_frame)
{
	const char *bin = build_deep("deep", "");
	struct dt_builder *b = NULL;
	struct dt_file *go = NULL, *df = NULL;
	struct elfm *e = NULL;
	struct dt_extract_stats st = { 0 };
	uint32_t i, j, checked = 0, bad = 0;
	int fd, n;

	if (!bin)
		return;
	go = extract(bin, NULL);
	fd = open(bin, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(elfm_open_fd(fd, &e), "open");
	close(fd);
	if (!e || !go)
		goto out;
	ASSERT_TRUE(elfm_section(e, ".debug_frame")->sh_flags & SHF_COMPRESSED,
		    "Go compresses .debug_frame");
	dt_builder_new(&b);
	n = ehf_debug_frame(e, e, DT_SRC_DEBUG_FRAME, b, &st);
	ASSERT_GT(n, 1000, "FDEs from the compressed section");
	ASSERT_EQ(st.bad_entries, 0, "malformed entries");
	ASSERT_OK(dt_builder_finish(b, &df), "finish");
	if (!df)
		goto out;
	for (i = 0; i < df->n_pages; i++) {
		for (j = 0; j < df->pages[i].count; j++) {
			uint32_t row = df->rows[df->pages[i].first + j];
			uint64_t addr = (df->pages[i].page << DELTA_PAGE_BITS) |
					ROW_ADDR(row);
			const struct unwind_rule *r = &df->rules[ROW_RULE(row)];
			struct unwind_rule g = at(go, addr);

			if (r->cmd != RULE_CMD_NONE || g.cmd != RULE_CMD_NONE)
				continue;
			checked++;
			if (g.cfa_off != r->cfa_off || g.cfa_reg != r->cfa_reg)
				bad++;
		}
	}
	ASSERT_GT(checked, 3000, "rows compared");
	ASSERT_EQ(bad, 0, "same CFA from both tables");
out:
	dt_file_free(df);
	dt_file_free(go);
	dt_builder_free(b);
	elfm_free(e);
}

/* -s -w drops the symbol table and DWARF but not .gopclntab, and leaves
 * the code as it was: every function keeps its rows, relative to its
 * entry, as in the plain build (which has the symbols to check them). */
TEST(gopclntab_stripped)
{
	char plain[512];
	const char *bin = build_deep("deep", ""), *path;
	struct gopc_table *t0 = NULL, *t = NULL;
	struct dt_file *f0 = NULL, *f = NULL;
	struct elfm *e0 = NULL, *e = NULL;
	unsigned bad = 0, funcs = 0;
	size_t i;
	int fd;

	if (!bin)
		return;
	snprintf(plain, sizeof(plain), "%s", bin);
	path = build_deep("deep.stripped", "-ldflags='-s -w'");
	if (!path)
		return;
	f0 = extract(plain, NULL);
	f = extract(path, NULL);
	fd = open(plain, O_RDONLY | O_CLOEXEC);
	elfm_open_fd(fd, &e0);
	close(fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	elfm_open_fd(fd, &e);
	close(fd);
	if (!ASSERT_NOT_NULL(f0, "extract") || !ASSERT_NOT_NULL(f, "extract") ||
	    !ASSERT_OK(gopc_open(e0, &t0), "pclntab") ||
	    !ASSERT_OK(gopc_open(e, &t), "pclntab stripped"))
		goto out;
	ASSERT_TRUE(elfm_section(e, ".symtab") == NULL, "no symbols");
	ASSERT_EQ(gopc_nfunc(t), gopc_nfunc(t0), "same functions");
	for (i = 0; i < gopc_nfunc(t) && i < gopc_nfunc(t0); i++) {
		struct gopc_func a, b;
		uint64_t k;

		if (gopc_func(t, i, &b) || gopc_func(t0, i, &a) ||
		    strcmp(a.name, b.name) || a.end - a.entry != b.end - b.entry) {
			bad++;
			continue;
		}
		funcs++;
		for (k = 0; k < a.end - a.entry; k++) {
			struct unwind_rule ra = at(f0, a.entry + k),
					   rb = at(f, b.entry + k);

			if (memcmp(&ra, &rb, sizeof(ra))) {
				bad++;
				break;
			}
		}
	}
	ASSERT_EQ(bad, 0, "functions with the same rows");
	test_note("stripped: %u functions with the rows of the plain build", funcs);
out:
	gopc_free(t0);
	gopc_free(t);
	elfm_free(e0);
	elfm_free(e);
	dt_file_free(f0);
	dt_file_free(f);
}

/* PIE puts the table in .data.rel.ro.gopclntab; its own symbols check it. */
TEST(gopclntab_pie)
{
	const char *bin = build_deep("deep.pie", "-buildmode=pie");
	struct dt_extract_stats st;
	unsigned entries, prologues = 0;
	struct dt_file *f;

	if (!bin)
		return;
	f = extract(bin, &st);
	if (!ASSERT_NOT_NULL(f, "extract"))
		return;
	entries = check_entries(f, bin);
	check_prologues(f, bin, &prologues);
	ASSERT_GT(prologues, 2000, "prologue points checked");
	test_note("pie: %llu functions, %u entries and %u prologue points agree",
		  (unsigned long long)st.go_funcs, entries, prologues);
	dt_file_free(f);
}

/* ---- hand-built tables ------------------------------------------------- */

/*
 * A small ELF: .text at 0x401000 (R+X segment) with two functions,
 * main.f (0x2c bytes: "SUBQ $0x18, SP; MOVQ BP, 0x10(SP)" at +4) and
 * runtime.goexit.abi0, and a pclntab of the requested version in a
 * read-only segment at 0x402000, at data_off inside a section named
 * secname (NULL: no section headers at all).
 */
struct img {
	uint8_t b[0x3400];
	size_t len;
};

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* A word of the function table or a pc of a _func record, width bytes. */
static void put_word(uint8_t *p, uint64_t v, size_t width)
{
	if (width == 8)
		put64(p, v);
	else
		put32(p, (uint32_t)v);
}

static size_t pclntab(uint8_t *d, unsigned version)
{
	/* Layout after the header: names, pctab, functab, _func records. */
	static const char names[] = "\0main.f\0runtime.goexit.abi0";
	/* pcsp of main.f: 0 for [0,4), 0x18 for [4,0x24), 0 for [0x24,0x2c).
	 * Pairs: zig-zag value delta, pc delta. */
	static const uint8_t pcsp[] = { 0, 2, 4, 0x30, 0x20, 0x2f, 8, 0 };
	size_t hdr = version == 116 ? 8 + 7 * 8 : 8 + 8 * 8;
	size_t names_off = hdr, pctab_off = names_off + sizeof(names);
	size_t pcln_off = (pctab_off + sizeof(pcsp) + 7) & ~7UL;
	size_t ftab = version == 116 ? 2 * 16 + 8 : 2 * 8 + 4;
	size_t func0 = ftab, func1 = ftab + 48;
	uint32_t magic = version == 116 ? 0xfffffffa
			 : version == 118 ? 0xfffffff0 : 0xfffffff1;
	/* 1.16's pcs are addresses in words of 8 bytes; later ones are
	 * offsets from textStart in words of 4 */
	size_t wd = version == 116 ? 8 : 4;
	uint64_t text = version == 116 ? 0x401000 : 0;
	uint8_t *w = d + 8, *ft = d + pcln_off;

	put32(d, magic);
	d[4] = d[5] = 0;
	d[6] = 1;
	d[7] = 8;
	put64(w, 2); /* nfunc */
	put64(w + 8, 0); /* nfiles */
	w += 16;
	if (version != 116) {
		put64(w, 0x401000); /* textStart */
		w += 8;
	}
	put64(w, names_off);
	put64(w + 8, pctab_off); /* cutab: empty */
	put64(w + 16, pctab_off); /* filetab: empty */
	put64(w + 24, pctab_off);
	put64(w + 32, pcln_off);
	memcpy(d + names_off, names, sizeof(names));
	memcpy(d + pctab_off, pcsp, sizeof(pcsp));
	/* The function table, then the _func records: main.f's names its
	 * name and its pcsp (12 bytes further), the last's only its name. */
	put_word(ft, text, wd);
	put_word(ft + wd, func0, wd);
	put_word(ft + 2 * wd, text + 0x40, wd);
	put_word(ft + 3 * wd, func1, wd);
	put_word(ft + 4 * wd, text + 0x50, wd);
	put_word(ft + func0, text, wd);
	put32(ft + func0 + wd, 1);
	put32(ft + func0 + wd + 12, 1); /* pcsp, 0 means none */
	put_word(ft + func1, text + 0x40, wd);
	put32(ft + func1 + wd, 8);
	return pcln_off + func1 + 48;
}

static void build_img(struct img *m, unsigned version, const char *secname,
		      size_t data_off)
{
	static const uint8_t prologue[] = { 0x48, 0x83, 0xec, 0x18, /* SUBQ */
					    0x48, 0x89, 0x6c, 0x24, 0x10 };
	/* The Go build id note (name "Go\0\0", type 4). */
	static const uint8_t note[] = { 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0,
					'G', 'o', 0, 0, 'i', 'd', '!', 0 };
	Elf64_Ehdr *eh = (Elf64_Ehdr *)m->b;
	Elf64_Phdr ph[3] = { 0 };
	Elf64_Shdr sh[4] = { 0 };
	char shstr[64] = "";
	size_t tab_len, shstr_len;

	memset(m, 0, sizeof(*m));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = 64;
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 3;
	eh->e_ehsize = sizeof(*eh);
	ph[0] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_X, 0x1000, 0x401000, 0x401000,
			      0x1000, 0x1000, 0x1000 };
	ph[1] = (Elf64_Phdr){ PT_LOAD, PF_R, 0x2000, 0x402000, 0x402000, 0x1000,
			      0x1000, 0x1000 };
	ph[2] = (Elf64_Phdr){ PT_NOTE, PF_R, 0x2f00, 0x402f00, 0x402f00,
			      sizeof(note), sizeof(note), 4 };
	memcpy(m->b + 64, ph, sizeof(ph));
	memcpy(m->b + 0x2f00, note, sizeof(note));
	memset(m->b + 0x1000, 0xcc, 0x50);
	memcpy(m->b + 0x1000, prologue, sizeof(prologue));
	tab_len = pclntab(m->b + 0x2000 + data_off, version);
	m->len = 0x3000;
	if (!secname)
		return;
	/* Section names: "", .text, secname, .shstrtab */
	shstr_len = 1;
	strcpy(shstr + shstr_len, ".text");
	sh[1] = (Elf64_Shdr){ shstr_len, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
			      0x401000, 0x1000, 0x50, 0, 0, 16, 0 };
	shstr_len += 6;
	strcpy(shstr + shstr_len, secname);
	sh[2] = (Elf64_Shdr){ shstr_len, SHT_PROGBITS, SHF_ALLOC, 0x402000,
			      0x2000, data_off + tab_len, 0, 0, 8, 0 };
	shstr_len += strlen(secname) + 1;
	strcpy(shstr + shstr_len, ".shstrtab");
	sh[3] = (Elf64_Shdr){ shstr_len, SHT_STRTAB, 0, 0, 0x3000, 0, 0, 0, 1, 0 };
	shstr_len += 10;
	sh[3].sh_size = shstr_len;
	memcpy(m->b + 0x3000, shstr, shstr_len);
	memcpy(m->b + 0x3100, sh, sizeof(sh));
	eh->e_shoff = 0x3100;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 4;
	eh->e_shstrndx = 3;
	m->len = 0x3100 + sizeof(sh);
}

static void check_img(const struct img *m, unsigned version)
{
	struct dt_extract_stats st;
	struct dt_extract_opts o = { .stats = &st };
	struct dt_file *f = NULL;
	struct unwind_rule r;

	if (!ASSERT_OK(dt_extract_mem(m->b, m->len, &o, &f), "extract"))
		return;
	ASSERT_EQ(st.go_version, version, "version");
	ASSERT_EQ(st.go_funcs, 2, "functions");
	r = at(f, 0x401000);
	ASSERT_TRUE(is_sp(&r, 8, RULE_FP_SAME), "entry: rsp+8");
	r = at(f, 0x401004);
	ASSERT_TRUE(is_sp(&r, 0x20, RULE_FP_SAME), "after SUBQ: rsp+32");
	r = at(f, 0x401009);
	ASSERT_TRUE(is_sp(&r, 0x20, RULE_FP_CFA_OFF), "after MOVQ BP: rbp c-16");
	r = at(f, 0x401023);
	ASSERT_TRUE(is_sp(&r, 0x20, RULE_FP_CFA_OFF), "body");
	r = at(f, 0x401024);
	ASSERT_TRUE(is_sp(&r, 8, RULE_FP_SAME), "after ADDQ");
	r = at(f, 0x401040);
	ASSERT_EQ(r.cmd, RULE_CMD_STOP, "runtime.goexit is STOP");
	r = at(f, 0x401050);
	ASSERT_EQ(r.cmd, RULE_CMD_INVALID, "end of text");
	dt_file_free(f);
}

TEST(gopclntab_synthetic_layouts)
{
	static const unsigned versions[] = { 116, 118, 120 };
	static struct img m;
	size_t i;

	for (i = 0; i < 3; i++) {
		char name[64];

		snprintf(name, sizeof(name), "go%u.gopclntab", versions[i]);
		if (test_start_subtest(name)) {
			build_img(&m, versions[i], ".gopclntab", 0);
			check_img(&m, versions[i]);
		}
		snprintf(name, sizeof(name), "go%u.search", versions[i]);
		if (test_start_subtest(name)) {
			/* Found by its magic inside .data.rel.ro. */
			build_img(&m, versions[i], ".data.rel.ro", 0x40);
			check_img(&m, versions[i]);
		}
		snprintf(name, sizeof(name), "go%u.no_sections", versions[i]);
		if (test_start_subtest(name)) {
			build_img(&m, versions[i], NULL, 0x88);
			check_img(&m, versions[i]);
		}
	}
}

TEST(gopclntab_corrupt_tables)
{
	static struct img m, c;
	unsigned seed = 1, i, unexpected = 0;

	build_img(&m, 118, ".gopclntab", 0);
	/* Flip bytes in the table; extraction must neither crash nor read
	 * out of bounds (run under ASan), whatever it concludes. */
	for (i = 0; i < 20000; i++) {
		struct dt_file *f = NULL;
		unsigned k, pos;
		int err;

		c = m;
		for (k = 0; k < 1 + i % 4; k++) {
			seed = seed * 1103515245 + 12345;
			pos = 0x2000 + (seed >> 8) % 0x100;
			c.b[pos] ^= (uint8_t)(1 + ((seed >> 4) & 0xfe));
		}
		err = dt_extract_mem(c.b, c.len, NULL, &f);
		if (err && err != -ENOEXEC)
			unexpected++;
		dt_file_free(f);
	}
	ASSERT_EQ(unexpected, 0, "corrupt tables give a table or -ENOEXEC");
}

/*
 * arm64 (LR-based), parsed on any host: deep.go cross-built with
 * GOARCH=arm64, its pcsp rows against the .debug_frame Go's linker writes
 * from the same tables, as binutils' aarch64 readelf prints it: CFA sp+N,
 * the return address in x30 ("s") at sp+0 or saved at CFA-N ("c-N").
 * Our rows also restore x29 from CFA-N-8 once stored.
 */
TEST(gopclntab_arm64_matches_go_debug_frame)
{
	struct dt_extract_opts o = { .machine = EM_AARCH64 };
	const char *bin;
	struct dt_file *f = NULL;
	char cmd[1024], line[1024];
	unsigned long rows = 0, bad = 0, cmds = 0, lr = 0, saved = 0, fp = 0;
	unsigned long top = 0;
	FILE *p;
	int fd;

	if (system("aarch64-linux-gnu-readelf --version >/dev/null 2>&1")) {
		test_skip("aarch64-linux-gnu-readelf not installed (make deps)");
		return;
	}
	bin = build_deep_env("deep-arm64", "GOARCH=arm64", "");
	if (!bin)
		return;
	fd = open(bin, O_RDONLY | O_CLOEXEC);
	if (!ASSERT_OK(dt_extract_file_opts(fd, bin, &o, &f), "extract"))
		goto out;
	ASSERT_EQ(f->source, DT_SRC_GOPCLNTAB, "rows from .gopclntab only");
	snprintf(cmd, sizeof(cmd),
		 "aarch64-linux-gnu-readelf -W --debug-dump=frames-interp '%s' 2>/dev/null",
		 bin);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		unsigned long addr;
		int off, n = 0;
		char ra[16];
		struct unwind_rule r;
		bool ok;

		if (sscanf(line, "%lx sp+%d %15s%n", &addr, &off, ra, &n) != 3 ||
		    strlen(line) < 17 || line[16] != ' ')
			continue;
		if (!at_row(f, addr, &r, &rows, &cmds))
			continue;
		ok = r.cfa_reg == RULE_REG_SP && r.cfa_off == off;
		if (!strcmp(ra, "u")) {
			/* Go's TOPFRAME functions (runtime.sigtramp: its
			 * caller is the signal frame, which we go on into) */
			top++;
			continue;
		}
		if (!strcmp(ra, "s")) {
			ok = ok && r.ra_rule == RULE_RA_LR && off == 0;
			lr++;
		} else {
			ok = ok && r.ra_rule == RULE_RA_CFA_OFF &&
			     -r.ra_off == off && ra[0] == 'c' &&
			     atoi(ra + 1) == r.ra_off;
			saved++;
			if (r.fp_rule == RULE_FP_CFA_OFF) {
				ok = ok && r.fp_off == r.ra_off - 8;
				fp++;
			}
		}
		if (!ok && bad++ < 5) {
			char b[160];

			printf("    0x%lx: ours %s, debug_frame sp+%d ra %s\n",
			       addr, dt_rule_str(&r, b, sizeof(b)), off, ra);
		}
	}
	if (p)
		pclose(p);
	test_note("%lu .debug_frame rows agree (%lu at special entries, %lu in "
		  "Go's top frames; ra in x30 %lu, saved %lu, of which x29 "
		  "restored %lu)", rows, cmds, top, lr, saved, fp);
	ASSERT_GT(rows, 3000, "debug_frame rows");
	ASSERT_GT(saved, 1000, "rows with the return address saved");
	ASSERT_EQ(bad, 0, "CFA and return address as in Go's .debug_frame");
out:
	if (fd >= 0)
		close(fd);
	dt_file_free(f);
}
