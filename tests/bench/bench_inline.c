// SPDX-License-Identifier: Apache-2.0
/*
 * Inline-chain tables (dwinline.h), not a test: for libc's debug file
 * (libc6-dbg) and the file with the largest .debug_info on the machine
 * (or the files given as arguments, each one holding DWARF):
 *
 *   build     median of 3 table builds: time, blob bytes, scopes,
 *             inlined scopes, segments, line rows, peak RSS;
 *   cold      build + 10,000 lookups of random addresses in .text;
 *   warm      the 10,000 lookups alone (median of 5), per address;
 *   restart   the table from its blob, as a restart reads it from the
 *             cache (dwi_load: copy and check), + the 10,000 lookups;
 *   libdw     the same addresses through eu-addr2line -i -f (libdw's
 *             per-query scope walk), when it is installed.
 *
 *   make bench-inline [BENCH_FILES="a.debug b"]
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "debugfind.h"
#include "dwinline.h"

#define BUILDS 3
#define WARM 5
#define NADDR 10000

static char biggest[PATH_MAX];
static uint64_t biggest_info;

/* The size of the file's section called name (0 when none); *addr and
 * *size get its address range. */
static uint64_t section(const char *path, const char *name, uint64_t *addr,
			uint64_t *size)
{
	Elf_Scn *scn = NULL;
	uint64_t found = 0;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf *e;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF &&
	    elf_getshdrstrndx(e, &shstrndx) == 0) {
		while ((scn = elf_nextscn(e, scn))) {
			const char *n;

			if (!gelf_getshdr(scn, &sh))
				break;
			n = elf_strptr(e, shstrndx, sh.sh_name);
			if (n && !strcmp(n, name)) {
				found = sh.sh_size;
				if (addr)
					*addr = sh.sh_addr;
				if (size)
					*size = sh.sh_size;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return found;
}

/* Candidates of 1 MiB or more, by the size of their .debug_info. */
static int visit(const char *path, const struct stat *st, int type,
		 struct FTW *ftw)
{
	uint64_t n;

	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size < (1 << 20) ||
	    (uint64_t)st->st_size <= biggest_info)
		return 0;
	n = section(path, ".debug_info", NULL, NULL);
	if (n > biggest_info) {
		biggest_info = n;
		snprintf(biggest, sizeof(biggest), "%s", path);
	}
	return 0;
}

static const char *libc_debug(void)
{
	static char path[512];
	struct elfm *e = NULL, *d = NULL;
	int fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	/* the project's finder: the build-id directory, the debuglink */
	path[0] = 0;
	if (elfm_open_fd(fd, &e) == 0 &&
	    dbgf_open(e, "/lib/x86_64-linux-gnu/libc.so.6", NULL, &d, path, sizeof(path)) != 0)
		path[0] = 0;
	elfm_free(d);
	elfm_free(e);
	close(fd);
	return path[0] ? path : NULL;
}

static long rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* eu-addr2line over the same addresses, seconds (or -1). */
static double libdw_time(const char *path, const uint64_t *addrs, int n)
{
	char cmd[PATH_MAX + 128];
	double t0;
	FILE *p;
	int i;

	if (system("command -v eu-addr2line >/dev/null 2>&1") != 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "eu-addr2line -i -f -e %s >/dev/null", path);
	t0 = bench_now();
	p = popen(cmd, "w");
	if (!p)
		return -1;
	for (i = 0; i < n; i++)
		fprintf(p, "0x%llx\n", (unsigned long long)addrs[i]);
	return pclose(p) == 0 ? bench_now() - t0 : -1;
}

static void bench(const char *path)
{
	double tb[BUILDS], tw[WARM], t0, cold, dw, restart;
	struct dwi_table *t = NULL;
	struct dwi_frame f[32];
	struct dwi_stats st;
	uint64_t lo = 0, size = 0, *addrs;
	long frames = 0, hits = 0, rss0 = rss_kib();
	int i, k, err = 0;

	if (!section(path, ".text", &lo, &size) || !size) {
		printf("%s: no .text\n", path);
		return;
	}
	addrs = malloc(NADDR * sizeof(*addrs));
	srand(23);
	for (i = 0; i < NADDR; i++)
		addrs[i] = lo + ((uint64_t)rand() * RAND_MAX + rand()) % size;
	for (i = 0; i < BUILDS && !err; i++) {
		dwi_free(t);
		t = NULL;
		t0 = bench_now();
		err = dwi_build_path(path, NULL, &t);
		tb[i] = bench_now() - t0;
	}
	if (err) {
		printf("%s: %s\n", path, strerror(-err));
		free(addrs);
		return;
	}
	qsort(tb, BUILDS, sizeof(tb[0]), bench_cmp_double);
	dwi_stats(t, &st);
	printf("%s\n  .debug_info %.1f MiB, build %.0f ms (median of %d), "
	       "table %.2f MiB%s, peak RSS +%ld MiB\n"
	       "  %u scopes (%u inlined), %u segments, %u line rows, "
	       "%u string bytes\n",
	       path, section(path, ".debug_info", NULL, NULL) / 1048576.0,
	       tb[BUILDS / 2] * 1e3, BUILDS, st.bytes / 1048576.0,
	       dwi_flags(t) & DWI_FUNCS_ONLY ? " (functions only: over budget)" :
					       "",
	       (rss_kib() - rss0) / 1024, st.scopes, st.inlined, st.segments,
	       st.lines, st.str_bytes);

	/* cold: a fresh table, then the queries */
	dwi_free(t);
	t0 = bench_now();
	dwi_build_path(path, NULL, &t);
	for (i = 0; i < NADDR; i++)
		dwi_lookup(t, addrs[i], f, 32);
	cold = bench_now() - t0;
	for (k = 0; k < WARM; k++) {
		frames = hits = 0;
		t0 = bench_now();
		for (i = 0; i < NADDR; i++) {
			int n = dwi_lookup(t, addrs[i], f, 32);

			frames += n;
			hits += n > 0;
		}
		tw[k] = bench_now() - t0;
	}
	qsort(tw, WARM, sizeof(tw[0]), bench_cmp_double);
	/* restart: the blob as the cache gives it back */
	{
		size_t len;
		const void *b = dwi_blob(t, &len);
		void *copy = malloc(len);
		struct dwi_table *r = NULL;

		memcpy(copy, b, len);
		t0 = bench_now();
		err = dwi_load(copy, len, &r);
		for (i = 0; !err && i < NADDR; i++)
			dwi_lookup(r, addrs[i], f, 32);
		restart = err ? -1 : bench_now() - t0;
		dwi_free(r);
		free(copy);
	}
	printf("  %d random .text addresses: cold %.0f ms, warm %.2f ms "
	       "(%.0f ns per address), %.1f%% covered, %.2f frames per covered "
	       "address\n"
	       "  restart (the table read back from the cache, checked, and "
	       "the same lookups): %.1f ms\n",
	       NADDR, cold * 1e3, tw[WARM / 2] * 1e3, tw[WARM / 2] * 1e9 / NADDR,
	       100.0 * hits / NADDR, hits ? (double)frames / hits : 0.0,
	       restart * 1e3);
	dw = libdw_time(path, addrs, NADDR);
	if (dw >= 0)
		printf("  eu-addr2line -i -f, same addresses: %.0f ms (%.1f us "
		       "per address)\n", dw * 1e3, dw * 1e6 / NADDR);
	dwi_free(t);
	free(addrs);
}

int main(int argc, char **argv)
{
	/* /root: pyenv's Pythons are built -g (libpython3.13: 14 MiB of
	 * .debug_info, the most here) */
	const char *dirs[] = { "/usr/lib/debug", "/usr/lib", "/usr/bin",
			       "/usr/local", "/opt", "/root" };
	const char *libc;
	int i;

	elf_version(EV_CURRENT);
	if (argc > 1) {
		for (i = 1; i < argc; i++)
			bench(argv[i]);
		return 0;
	}
	libc = libc_debug();
	if (libc && access(libc, R_OK) == 0)
		bench(libc);
	else
		printf("no libc debug file (libc6-dbg)\n");
	for (i = 0; i < (int)(sizeof(dirs) / sizeof(dirs[0])); i++)
		nftw(dirs[i], visit, 64, FTW_PHYS);
	if (biggest[0])
		bench(biggest);
	return 0;
}
