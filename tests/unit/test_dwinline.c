// SPDX-License-Identifier: Apache-2.0
/*
 * Inline chains from DWARF (dwinline.h): against elfutils' eu-addr2line
 * on Debian's libc and its libc6-dbg debug file, on the inline workload
 * built here, and the blob's loader against damaged blobs.
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "debugfind.h"
#include "dwinline.h"
#include "inlcache.h"
#include "nm_oracle.h"
#include "store.h"
#include "symbols.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define ORACLE_ADDRS 1000
#define MAXF 16

/* libc's debug file from its build id, where libc6-dbg puts it; the
 * string is static. */
static const char *libc_debug(void)
{
	static char path[512];
	struct elfm *e = NULL, *d = NULL;
	int fd = open(LIBC, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	/* the project's finder: the build-id directory, the debuglink */
	path[0] = 0;
	if (elfm_open_fd(fd, &e) == 0 &&
	    dbgf_open(e, LIBC, NULL, &d, path, sizeof(path)) != 0)
		path[0] = 0;
	elfm_free(d);
	elfm_free(e);
	close(fd);
	return path[0] ? path : NULL;
}

/* One address's frames, innermost first: names and "file:line". */
struct chain {
	int n;
	char func[MAXF][256];
	unsigned line[MAXF];
};

/*
 * eu-addr2line -i -f -a prints, per address, "0x..." then a name line
 * and a "file:line:col" line per frame, innermost first; the innermost
 * name of an inlined frame reads "NAME inlined at FILE:L:C in OUTER".
 */
static int addr2line(const char *elf, const unsigned long long *addrs, int n,
		     struct chain *out)
{
	size_t len = 4096 + (size_t)n * 24, o;
	char *cmd = malloc(len), line[8192], *s;
	int cur = -1, half = 0, i;
	FILE *p;

	o = snprintf(cmd, len, "eu-addr2line -i -f -a -e %s", elf);
	for (i = 0; i < n; i++)
		o += snprintf(cmd + o, len - o, " 0x%llx", addrs[i]);
	snprintf(cmd + o, len - o, " 2>/dev/null");
	p = popen(cmd, "r");
	free(cmd);
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "0x", 2)) {
			if (++cur >= n)
				break;
			out[cur].n = 0;
			half = 0;
			continue;
		}
		if (cur < 0 || out[cur].n >= MAXF)
			continue;
		if (!half) {
			s = strstr(line, " inlined at ");
			if (s)
				*s = 0;
			snprintf(out[cur].func[out[cur].n], 256, "%.255s", line);
			half = 1;
		} else {
			/* file:line:col, or ??:0 */
			char *c = strrchr(line, ':'), *l;

			if (c) {
				*c = 0;
				l = strrchr(line, ':');
				out[cur].line[out[cur].n] = l ? atoi(l + 1) :
							    atoi(c + 1);
			}
			out[cur].n++;
			half = 0;
		}
	}
	pclose(p);
	return cur + 1 == n ? 0 : -1;
}

/*
 * glibc names its functions twice: DW_AT_name "__strxfrm_l" and an asm
 * label "__GI___strxfrm_l" (the hidden alias, DW_AT_linkage_name), which
 * eu-addr2line prefers; we keep the source name.
 */
static bool same_name(const char *oracle, const char *ours)
{
	if (!strcmp(oracle, ours))
		return true;
	return !strncmp(oracle, "__GI_", 5) && !strcmp(oracle + 5, ours);
}

/*
 * Are a and b two names of the function containing addr?  An outermost
 * frame may be named by any alias: eu-addr2line falls back on the ELF
 * symbols where glibc's assembler functions have DWARF it does not find
 * (gas's DW_TAG_subprogram without .debug_aranges), and picks another
 * of the aliases than the one DWARF names.
 */
static bool aliases(const struct nm_sym *fs, int n, unsigned long long addr,
		    const char *a, const char *b)
{
	unsigned long long start = 0;
	bool has_a = false, has_b = false;
	int i;

	for (i = 0; i < n; i++)
		if (fs[i].addr <= addr && addr < fs[i].addr + fs[i].size &&
		    fs[i].addr > start)
			start = fs[i].addr;
	for (i = 0; start && i < n; i++) {
		if (fs[i].addr != start)
			continue;
		has_a |= !strcmp(fs[i].name, a);
		has_b |= !strcmp(fs[i].name, b);
	}
	return has_a && has_b;
}

TEST(dwinline_libc_oracle)
{
	static struct chain want[ORACLE_ADDRS];
	unsigned long long addrs[ORACLE_ADDRS];
	int i, k, n, nf, chains = 0, names = 0, lines = 0, inl = 0, nlines = 0;
	struct symb_table *st = NULL;
	struct dwi_table *t = NULL;
	struct nm_sym *fs = NULL;
	const char *dbg;
	int fd, shown = 0;

	if (system("command -v eu-addr2line >/dev/null 2>&1") != 0) {
		test_skip("no eu-addr2line (elfutils)");
		return;
	}
	dbg = libc_debug();
	if (!dbg) {
		test_skip("no debug file for %s (libc6-dbg)", LIBC);
		return;
	}
	if (!ASSERT_OK(dwi_build_path(dbg, NULL, &t), "build"))
		return;
	ASSERT_EQ(dwi_flags(t), 0, "full table");
	/* code symbols with a size, from the debug file's .symtab */
	nf = nm_syms(dbg, "", "TtW", true, &fs);
	if (!ASSERT_GT(nf, 1000, "functions in libc"))
		goto cleanup;
	srand(23);
	for (i = 0; i < ORACLE_ADDRS; i++) {
		struct nm_sym *f = &fs[rand() % nf];

		addrs[i] = f->addr + (unsigned long long)rand() % f->size;
	}
	if (!ASSERT_OK(addr2line(LIBC, addrs, ORACLE_ADDRS, want),
		       "eu-addr2line"))
		goto cleanup;
	/* where no DWARF covers an address, the symbolizer falls back on
	 * the ELF symbols: so does the comparison */
	fd = open(LIBC, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(symb_load_fd(fd, &st), "symbols");
	close(fd);
	for (i = 0; i < ORACLE_ADDRS; i++) {
		struct dwi_frame got[MAXF];
		bool ok;

		n = dwi_lookup(t, addrs[i], got, MAXF);
		if (n == 0 && st) {
			uint64_t off;

			got[0].func = symb_lookup(st, addrs[i], &off);
			got[0].file = NULL;
			got[0].line = 0;
			n = got[0].func ? 1 : 0;
		}
		if (want[i].n > 1)
			inl++;
		ok = n == want[i].n;
		for (k = 0; ok && k < n; k++)
			ok = same_name(want[i].func[k], got[k].func) ||
			     (k == n - 1 && aliases(fs, nf, addrs[i],
						    want[i].func[k],
						    got[k].func));
		chains += n == want[i].n;
		names += ok;
		if (!ok && shown++ < 5)
			test_note("0x%llx: %d frames (%s), eu-addr2line %d (%s)",
				  addrs[i], n, n ? got[0].func : "-",
				  want[i].n, want[i].func[0]);
		if (!ok)
			continue;
		for (k = 0; k < n; k++) {
			nlines++;
			lines += got[k].line == want[i].line[k];
		}
	}
	test_note("libc, %d addresses (%d with inlined frames): chains %.1f%%, "
		  "chains and names %.1f%%, lines %.1f%% of %d frames",
		  ORACLE_ADDRS, inl, 100.0 * chains / ORACLE_ADDRS,
		  100.0 * names / ORACLE_ADDRS,
		  nlines ? 100.0 * lines / nlines : 0.0, nlines);
	ASSERT_GE(names * 100, 99 * ORACLE_ADDRS, "chains and names agree");
	ASSERT_GE(lines * 100, 99 * nlines, "lines agree");
	ASSERT_GE(inl, 50, "addresses with inlined frames");
cleanup:
	symb_free(st);
	free(fs);
	dwi_free(t);
}

/* The inline workload: the one the integration tests run, else built
 * here with the same flags (tests/workloads/workloads.mk). */
static const char *inline_workload(void)
{
	static char path[4096];
	char cmd[8192];

	snprintf(path, sizeof(path), "%s/inline", test_workloads());
	if (access(path, X_OK) == 0)
		return path;
	snprintf(path, sizeof(path), "%s", test_tmppath("inline"));
	snprintf(cmd, sizeof(cmd),
		 "gcc -g -O2 -fno-optimize-sibling-calls -o %s "
		 "%s/tests/workloads/inline.c 2>&1", path, test_srcdir());
	return system(cmd) == 0 ? path : NULL;
}

/* The line of the workload's source holding marker, or 0. */
static unsigned src_line(const char *marker)
{
	return test_src_line("tests/workloads/inline.c", marker);
}

/* Addresses of the calls to callee inside func, from binutils' objdump
 * (an independent reader of the code); returns how many. */
static int calls(const char *bin, const char *func, const char *callee,
		 unsigned long long *out, int max)
{
	char cmd[8192], line[1024], want[256], call[256];
	unsigned long long a;
	bool in = false;
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn %s", bin);
	snprintf(want, sizeof(want), "<%s>:", func);
	snprintf(call, sizeof(call), "<%s>", callee);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		if (strchr(line, '<') && strstr(line, ">:"))
			in = strstr(line, want) != NULL;
		else if (in && n < max && strstr(line, "call") &&
			 strstr(line, call) && sscanf(line, " %llx:", &a) == 1)
			out[n++] = a;
	}
	pclose(p);
	return n;
}

/* The stack from the root, "a;b;c", of a chain (innermost first). */
static void folded(const struct dwi_frame *f, int n, char *buf, size_t len)
{
	size_t o = 0;
	int k;

	buf[0] = 0;
	for (k = n - 1; k >= 0 && o < len; k--)
		o += snprintf(buf + o, len - o, "%s%s", f[k].func, k ? ";" : "");
}

TEST(dwinline_workload)
{
	unsigned long long a[4], l[1];
	struct dwi_frame f[MAXF];
	struct dwi_table *t = NULL;
	const char *bin = inline_workload();
	unsigned line_a = src_line("/* CALL_A */"),
		 line_b = src_line("/* CALL_B */");
	char s[512];
	int n;

	if (!bin) {
		test_skip("inline workload not built and no gcc to build it");
		return;
	}
	if (!ASSERT_OK(dwi_build_path(bin, NULL, &t), "build"))
		return;
	/* caller calls leaf twice, once in each inlined function */
	if (!ASSERT_EQ(calls(bin, "caller", "leaf", a, 4), 2, "calls to leaf") ||
	    !ASSERT_EQ(calls(bin, "main", "caller", l, 1), 1, "call to caller"))
		goto cleanup;
	n = dwi_lookup(t, a[0], f, MAXF);
	folded(f, n, s, sizeof(s));
	ASSERT_STREQ(s, "caller;inlined_a", "first call");
	ASSERT_TRUE(n == 2 && f[0].file && strstr(f[0].file, "inline.c"),
		    "file of the call in inlined_a");
	ASSERT_EQ(f[0].line, line_a, "line of the call in inlined_a");
	n = dwi_lookup(t, a[1], f, MAXF);
	folded(f, n, s, sizeof(s));
	ASSERT_STREQ(s, "caller;inlined_b", "second call");
	ASSERT_EQ(f[0].line, line_b, "line of the call in inlined_b");
	/* with main's call of caller and leaf's own code, the stacks the
	 * profiler shows */
	n = dwi_lookup(t, l[0], f, MAXF);
	folded(f, n, s, sizeof(s));
	ASSERT_STREQ(s, "main", "call to caller");
	n = dwi_lookup(t, a[0] - 1, f, MAXF);
	ASSERT_GE(n, 1, "just before the call");
	/* a chain deeper than the room keeps the outermost function */
	n = dwi_lookup(t, a[0], f, 1);
	ASSERT_EQ(n, 1, "room for one");
	ASSERT_STREQ(f[0].func, "caller", "outermost kept");
	ASSERT_EQ(dwi_lookup(t, 0, f, MAXF), 0, "address 0");
	ASSERT_EQ(dwi_lookup(t, ~0ULL, f, MAXF), 0, "last address");
cleanup:
	dwi_free(t);
}

/* Do two tables answer the same at n addresses from lo on? */
static int same_answers(const struct dwi_table *x, const struct dwi_table *y,
			uint64_t lo, uint64_t step, int n)
{
	struct dwi_frame a[MAXF], b[MAXF];
	int i, k, na, nb, same = 0;

	for (i = 0; i < n; i++) {
		bool ok;

		na = dwi_lookup(x, lo + i * step, a, MAXF);
		nb = dwi_lookup(y, lo + i * step, b, MAXF);
		ok = na == nb;
		for (k = 0; ok && k < na; k++)
			ok = !strcmp(a[k].func, b[k].func) &&
			     a[k].line == b[k].line &&
			     !a[k].file == !b[k].file &&
			     (!a[k].file || !strcmp(a[k].file, b[k].file));
		same += ok;
	}
	return same;
}

/* Layout of the blob (keep in sync with dwinline.c): a 32-byte header
 * (magic, version, flags, nscopes, inlined, nsegs, nlines, str_bytes),
 * then 16-byte scopes (name, parent, call_file, call_line), segments
 * (start, scope, pad), lines (addr, file, line) and the strings. */
static uint32_t hdr_word(const uint8_t *b, int i)
{
	uint32_t v;

	memcpy(&v, b + 4 * i, 4);
	return v;
}

static void put_word(uint8_t *b, size_t off, uint32_t v)
{
	memcpy(b + off, &v, 4);
}

static int load_err(const uint8_t *b, size_t len)
{
	struct dwi_table *t = NULL;
	int err = dwi_load(b, len, &t);

	dwi_free(t);
	return err;
}

TEST(dwinline_blob)
{
	struct dwi_table *t = NULL, *u = NULL;
	const char *bin = inline_workload();
	uint32_t nscopes, nsegs, i;
	struct dwi_frame f[MAXF];
	const void *blob;
	uint8_t *b = NULL;
	size_t len;
	int accepted = 0, it;

	if (!bin) {
		test_skip("inline workload not built and no gcc to build it");
		return;
	}
	if (!ASSERT_OK(dwi_build_path(bin, NULL, &t), "build"))
		return;
	blob = dwi_blob(t, &len);
	/* from an unaligned copy, as a cache value may be */
	b = malloc(len + 1);
	memcpy(b + 1, blob, len);
	if (!ASSERT_OK(dwi_load(b + 1, len, &u), "load"))
		goto cleanup;
	ASSERT_EQ(same_answers(t, u, 0, 1, 0x3000), 0x3000, "same answers");
	memcpy(b, blob, len);
	nscopes = hdr_word(b, 3);
	nsegs = hdr_word(b, 5);

	ASSERT_EQ(load_err(b, 31), -EBADMSG, "shorter than the header");
	ASSERT_EQ(load_err(b, len - 1), -EBADMSG, "truncated");
	b[0] ^= 1;
	ASSERT_EQ(load_err(b, len), -EBADMSG, "magic");
	b[0] ^= 1;
	put_word(b, 4, DWI_VERSION + 1);
	ASSERT_EQ(load_err(b, len), -EPROTO, "another version");
	put_word(b, 4, DWI_VERSION);
	put_word(b, 12, nscopes + 1);
	ASSERT_EQ(load_err(b, len), -EBADMSG, "count past the end");
	put_word(b, 12, nscopes);
	b[len - 1] = 'x';
	ASSERT_EQ(load_err(b, len), -EBADMSG, "unterminated strings");
	b[len - 1] = 0;
	/* a scope its own parent: a lookup would never end */
	for (i = 0; i < nscopes; i++)
		if (hdr_word(b + 32 + 16 * i, 1) != UINT32_MAX)
			break;
	if (ASSERT_LT(i, nscopes, "an inlined scope")) {
		put_word(b, 32 + 16 * i + 4, i);
		ASSERT_EQ(load_err(b, len), -EBADMSG, "parent loop");
		memcpy(b, blob, len);
	}
	put_word(b, 32 + 16 * nscopes + 8, nscopes);
	ASSERT_EQ(load_err(b, len), -EBADMSG, "segment's scope out of range");
	memcpy(b, blob, len);
	if (ASSERT_GE(nsegs, 2, "segments")) {
		/* the second segment starting where the first does */
		memcpy(b + 32 + 16 * nscopes + 16, b + 32 + 16 * nscopes, 8);
		ASSERT_EQ(load_err(b, len), -EBADMSG, "segments out of order");
		memcpy(b, blob, len);
	}
	ASSERT_OK(load_err(b, len), "intact again");

	/* random damage: refused, or a table whose lookups stay in it
	 * (ASan checks under make test-asan) */
	srand(7);
	for (it = 0; it < 3000; it++) {
		struct dwi_table *d = NULL;
		int k, flips = 1 + rand() % 4;

		memcpy(b, blob, len);
		for (k = 0; k < flips; k++)
			b[rand() % len] ^= 1 << (rand() % 8);
		if (dwi_load(b, len, &d) != 0)
			continue;
		accepted++;
		for (k = 0; k < 64; k++)
			dwi_lookup(d, (uint64_t)rand() % 0x3000, f, MAXF);
		dwi_free(d);
	}
	test_note("blob %zu bytes, %u scopes; 3000 damaged: %d accepted",
		  len, nscopes, accepted);
cleanup:
	free(b);
	dwi_free(u);
	dwi_free(t);
}

TEST(dwinline_budget)
{
	struct dwi_opts small = { .max_bytes = 1U << 20 };
	struct dwi_opts tiny = { .max_bytes = 4096 };
	struct dwi_table *full = NULL, *fo = NULL, *none = NULL;
	struct dwi_frame a[MAXF], b[MAXF];
	struct dwi_stats sf, so;
	const char *dbg = libc_debug();
	int i, na, nb, same = 0, one = 0;

	if (!dbg) {
		test_skip("no debug file for %s (libc6-dbg)", LIBC);
		return;
	}
	if (!ASSERT_OK(dwi_build_path(dbg, NULL, &full), "full") ||
	    !ASSERT_OK(dwi_build_path(dbg, &small, &fo), "small budget"))
		goto cleanup;
	dwi_stats(full, &sf);
	dwi_stats(fo, &so);
	ASSERT_GT(sf.bytes, small.max_bytes, "libc's full table over 1 MiB");
	ASSERT_EQ(dwi_flags(fo), DWI_FUNCS_ONLY, "functions only");
	ASSERT_LE(so.bytes, small.max_bytes, "within the budget");
	ASSERT_EQ(so.inlined, 0, "no inlined scopes");
	ASSERT_EQ(so.lines, 0, "no lines");
	/* the same outermost function everywhere, alone */
	for (i = 0; i < 20000; i++) {
		uint64_t addr = 0x28000 + (uint64_t)i * 97;

		na = dwi_lookup(full, addr, a, MAXF);
		nb = dwi_lookup(fo, addr, b, MAXF);
		one += nb <= 1 && (!nb || (!b[0].file && !b[0].line));
		same += na == 0 ? nb == 0 :
		        nb == 1 && !strcmp(a[na - 1].func, b[0].func);
	}
	ASSERT_EQ(one, 20000, "one frame without a line");
	ASSERT_EQ(same, 20000, "outermost functions as in the full table");
	test_note("libc: full %zu bytes (%u scopes, %u inlined, %u segments, "
		  "%u lines), functions only %zu bytes", sf.bytes, sf.scopes,
		  sf.inlined, sf.segments, sf.lines, so.bytes);
	ASSERT_EQ(dwi_build_path(dbg, &tiny, &none), -EFBIG, "4 KiB");
	ASSERT_TRUE(none == NULL, "no table");
cleanup:
	dwi_free(none);
	dwi_free(fo);
	dwi_free(full);
}

/* The debug file of the fake files below: their path. */
static int open_path(void *arg, const struct exe_file *f)
{
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);

	(void)arg;
	return fd < 0 ? -errno : fd;
}

TEST(dwinline_cache)
{
	struct inl_opts o = { .max_files = 2, .debug_fd = open_path };
	struct exe_file wl = { .id64 = 1 }, tru = { .id64 = 2 },
			other = { .id64 = 3 };
	const char *bin = inline_workload();
	struct dwi_frame f[INL_MAX_FRAMES];
	unsigned long long a[2];
	struct inl_cache *c = NULL;
	struct inl_stats st;

	if (!bin) {
		test_skip("inline workload not built and no gcc to build it");
		return;
	}
	if (!ASSERT_EQ(calls(bin, "caller", "leaf", a, 2), 2, "calls to leaf") ||
	    !ASSERT_OK(inl_new(&o, &c), "new"))
		return;
	wl.path = (char *)bin;
	tru.path = "/bin/true";
	other.path = (char *)bin;
	ASSERT_EQ(inl_lookup(c, &wl, a[1], f), 2, "chain");
	ASSERT_STREQ(f[0].func, "inlined_b", "innermost");
	ASSERT_EQ(inl_lookup(c, &wl, a[0], f), 2, "again, from the table");
	ASSERT_STREQ(f[0].func, "inlined_a", "innermost");
	ASSERT_EQ(inl_lookup(c, &tru, 0x1000, f), 0, "no DWARF");
	ASSERT_EQ(inl_lookup(c, &other, a[0], f), 0, "past the bound on files");
	inl_get_stats(c, &st);
	ASSERT_EQ(st.tables, 1, "tables");
	ASSERT_EQ(st.no_dwarf, 1, "files without DWARF");
	ASSERT_EQ(st.full, 1, "files left out");
	ASSERT_GT(st.bytes, 0, "bytes");
	inl_free(c);
}

/* The chain at addr as one string, "f1@file:line;f2@..." ("" for none). */
static void chain_str(struct inl_cache *c, const struct exe_file *f,
		      unsigned long long addr, char *out, size_t cap)
{
	struct dwi_frame fr[INL_MAX_FRAMES];
	int n = inl_lookup(c, f, addr, fr), i;
	size_t len = 0;

	out[0] = 0;
	for (i = 0; i < n && len < cap; i++)
		len += snprintf(out + len, cap - len, "%s@%s:%u;", fr[i].func,
				fr[i].file ? fr[i].file : "", fr[i].line);
}

/* Tables kept in the store by file id: a second cache on the same store
 * reads the table instead of parsing DWARF (built 0, from_store 1) and
 * answers the same chains; a record that passes the store's checksum but
 * not dwi_load's checks (written damaged) is counted, rebuilt and
 * replaced. */
TEST(dwinline_cache_store)
{
	struct inl_opts o = { .debug_fd = open_path };
	struct exe_file wl = { .id64 = 0x1234 };
	const char *bin = inline_workload();
	char want[2][1024], got[1024];
	unsigned long long a[2];
	struct inl_cache *c = NULL;
	struct store *s = NULL;
	struct inl_stats st;
	void *blob = NULL;
	size_t len = 0;
	int round, k;

	if (!bin) {
		test_skip("inline workload not built and no gcc to build it");
		return;
	}
	if (!ASSERT_EQ(calls(bin, "caller", "leaf", a, 2), 2, "calls to leaf") ||
	    !ASSERT_OK(store_open(test_tmppath("store"), NULL, &s), "store"))
		return;
	memset(wl.id.b, 0x5a, sizeof(wl.id.b));
	wl.path = (char *)bin;
	o.store = s;
	/* 0: built and put; 1: read back; 2: a damaged record; 3: the
	 * rebuilt one read back */
	for (round = 0; round < 4; round++) {
		if (round == 2) {
			/* the real blob with its scope count raised past
			 * what it holds: the checked loader refuses it */
			ASSERT_OK(store_get(s, wl.id.b, STORE_KIND_INLINE, &blob,
					    &len), "the stored table");
			if (!ASSERT_GT(len, 64, "blob"))
				break;
			for (k = 8; k < 40; k++)
				((unsigned char *)blob)[k] ^= 0xff;
			ASSERT_OK(store_put(s, wl.id.b, STORE_KIND_INLINE, blob,
					    len), "put a damaged table");
			free(blob);
			blob = NULL;
		}
		if (!ASSERT_OK(inl_new(&o, &c), "new"))
			break;
		for (k = 0; k < 2; k++) {
			chain_str(c, &wl, a[k], round ? got : want[k],
				  sizeof(got));
			if (round)
				ASSERT_STREQ(got, want[k], "the same chain");
		}
		inl_get_stats(c, &st);
		test_note("round %d: built %llu, from the store %llu, "
			  "rejected %llu; %s", round,
			  (unsigned long long)st.built,
			  (unsigned long long)st.from_store,
			  (unsigned long long)st.store_rejected, want[0]);
		ASSERT_EQ(st.built, round == 0 || round == 2, "tables built");
		ASSERT_EQ(st.from_store, round == 1 || round == 3,
			  "tables from the store");
		ASSERT_EQ(st.store_rejected, round == 2, "records refused");
		ASSERT_EQ(st.store_errors, 0, "puts that failed");
		inl_free(c);
		c = NULL;
	}
	ASSERT_TRUE(strstr(want[0], "inlined_") != NULL, "a chain with lines");
	store_free(s);
}

TEST(dwinline_deadline)
{
	struct dwi_opts o = { .max_ns = 1 };
	struct dwi_table *t = NULL;
	const char *dbg = libc_debug();

	if (!dbg) {
		test_skip("no debug file for %s (libc6-dbg)", LIBC);
		return;
	}
	ASSERT_EQ(dwi_build_path(dbg, &o, &t), -ETIMEDOUT, "1 ns");
	ASSERT_TRUE(t == NULL, "no table");
}

/* The debug information split out (objcopy --only-keep-debug, what
 * distributions ship as -dbg files): the table of the debug file answers
 * as the one of the unstripped binary. */
TEST(dwinline_split_debug_file)
{
	struct dwi_table *t = NULL, *u = NULL;
	const char *bin = inline_workload();
	const char *dbg = test_tmppath("inline.debug");
	char cmd[8192];

	if (!bin) {
		test_skip("inline workload not built and no gcc to build it");
		return;
	}
	snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug %s %s", bin, dbg);
	if (system(cmd) != 0) {
		test_skip("objcopy failed (binutils)");
		return;
	}
	if (ASSERT_OK(dwi_build_path(bin, NULL, &t), "binary") &&
	    ASSERT_OK(dwi_build_path(dbg, NULL, &u), "debug file"))
		ASSERT_EQ(same_answers(t, u, 0, 1, 0x3000), 0x3000,
			  "same answers");
	dwi_free(u);
	u = NULL;
	/* and the binary stripped of it has none */
	snprintf(cmd, sizeof(cmd), "strip -o %s %s", test_tmppath("stripped"),
		 bin);
	if (system(cmd) == 0)
		ASSERT_EQ(dwi_build_path(test_tmppath("stripped"), NULL, &u),
			  -ENODATA, "stripped");
	dwi_free(u);
	dwi_free(t);
}
