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

#include "dwinline.h"
#include "symbols.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define ORACLE_ADDRS 1000
#define MAXF 16

/* libc's debug file from its build id, where libc6-dbg puts it; the
 * string is static. */
static const char *libc_debug(void)
{
	static char path[512];
	struct symb_table *st = NULL;
	const char *id;
	int fd;

	fd = open(LIBC, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (symb_load_fd(fd, &st) == 0 && (id = symb_build_id(st)) &&
	    strlen(id) > 2)
		snprintf(path, sizeof(path),
			 "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	symb_free(st);
	close(fd);
	return path[0] && access(path, R_OK) == 0 ? path : NULL;
}

struct func {
	unsigned long long addr, size;
	char name[128];
};

/* Code symbols with a size, from binutils' nm on the debug file's
 * .symtab. */
static int functions(const char *path, struct func **out)
{
	char cmd[1024], line[4096], type;
	struct func *v = NULL, f;
	int n = 0, cap = 0, pos;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only %s 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		pos = 0;
		if (sscanf(line, "%llx %llx %c %n", &f.addr, &f.size, &type,
			   &pos) != 3 || !pos ||
		    (type != 'T' && type != 't' && type != 'W') || !f.size)
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(f.name, sizeof(f.name), "%.127s", line + pos);
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			v = realloc(v, cap * sizeof(*v));
		}
		v[n++] = f;
	}
	pclose(p);
	*out = v;
	return n;
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
static bool aliases(const struct func *fs, int n, unsigned long long addr,
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
	struct func *fs = NULL;
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
	nf = functions(dbg, &fs);
	if (!ASSERT_GT(nf, 1000, "functions in libc"))
		goto cleanup;
	srand(23);
	for (i = 0; i < ORACLE_ADDRS; i++) {
		struct func *f = &fs[rand() % nf];

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
