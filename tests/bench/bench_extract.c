// SPDX-License-Identifier: Apache-2.0
/*
 * Stack-delta extraction speed, not a test: for libc and for the largest
 * ELF file under /usr/lib and under /usr/bin (or the files given as
 * arguments), the median of 5 extractions: time, rows, rules, pages and
 * the serialized size (what the store and the BPF maps take).
 *
 *   make bench-extract [BENCH_FILES="a b"]
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "deltas.h"

#define RUNS 5

static char biggest[PATH_MAX];
static off_t biggest_size;

static int visit(const char *path, const struct stat *st, int type,
		 struct FTW *ftw)
{
	char magic[4];
	int fd;

	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size <= biggest_size)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (read(fd, magic, 4) == 4 && memcmp(magic, "\177ELF", 4) == 0) {
		biggest_size = st->st_size;
		snprintf(biggest, sizeof(biggest), "%s", path);
	}
	close(fd);
	return 0;
}

static const char *largest_elf(const char *dir)
{
	biggest[0] = 0;
	biggest_size = 0;
	nftw(dir, visit, 64, FTW_PHYS);
	return biggest[0] ? strdup(biggest) : NULL;
}

static void bench(const char *path)
{
	struct dt_extract_stats st;
	struct dt_extract_opts o = { .stats = &st };
	struct dt_file *f = NULL;
	double t[RUNS];
	size_t bytes = 0;
	void *buf = NULL;
	struct stat sb;
	int i, fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) != 0) {
		printf("%-60s %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	for (i = 0; i < RUNS; i++) {
		double t0 = bench_now();

		dt_file_free(f);
		f = NULL;
		err = dt_extract_file_opts(fd, path, &o, &f);
		t[i] = bench_now() - t0;
		if (err)
			break;
	}
	close(fd);
	if (err) {
		printf("%-60s %s\n", path, strerror(-err));
		return;
	}
	qsort(t, RUNS, sizeof(t[0]), bench_cmp_double);
	dt_file_serialize(f, &buf, &bytes);
	printf("%-52s %8.1f %9.2f %9u %6u %6u %9zu %6.2f%% %8.1f\n", path,
	       sb.st_size / 1048576.0, t[RUNS / 2] * 1e3, f->n_rows, f->n_rules,
	       f->n_pages, bytes,
	       f->text_hi > f->text_lo
		       ? 100.0 * f->covered / (double)(f->text_hi - f->text_lo)
		       : 0.0,
	       t[RUNS / 2] > 0 ? sb.st_size / 1048576.0 / t[RUNS / 2] : 0.0);
	free(buf);
	dt_file_free(f);
}

int main(int argc, char **argv)
{
	struct rusage ru;
	int i;

	printf("median of %d runs; bytes = serialized table (rows*4 + rules*16 "
	       "+ pages*16 + 56)\n",
	       RUNS);
	printf("%-52s %8s %9s %9s %6s %6s %9s %7s %8s\n", "file", "MiB", "ms",
	       "rows", "rules", "pages", "bytes", "covered", "MiB/s");
	if (argc > 1) {
		for (i = 1; i < argc; i++)
			bench(argv[i]);
	} else {
		const char *dirs[] = { "/usr/lib", "/usr/bin" };

		bench("/lib/x86_64-linux-gnu/libc.so.6");
		for (i = 0; i < 2; i++) {
			const char *p = largest_elf(dirs[i]);

			if (p)
				bench(p);
		}
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS %ld MiB (the files are mapped, so this includes the "
	       "pages extraction read)\n",
	       ru.ru_maxrss / 1024);
	return 0;
}
