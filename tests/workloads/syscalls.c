// SPDX-License-Identifier: Apache-2.0
/*
 * A syscall-heavy workload: most of its time is in the kernel, under a
 * known user stack main -> do_io -> write_loop -> write().
 * Usage: syscalls SECONDS
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* noipa: no inlining, no cloning, and no pure/const deduction that would
 * let the compiler merge repeated calls */
#define NOINLINE __attribute__((noipa))

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE static long write_loop(int fd, const char *buf, size_t len, int n)
{
	long total = 0;
	int i;

	for (i = 0; i < n; i++) {
		/* pwrite of a page to a file in /tmp: real work in the kernel */
		ssize_t w = pwrite(fd, buf, len, (off_t)(i % 64) * len);
		if (w > 0)
			total += w;
	}
	return total;
}

NOINLINE static long do_io(int fd, double end)
{
	static char buf[65536];
	long total = 0;

	memset(buf, 'x', sizeof(buf));
	while (now() < end)
		total += write_loop(fd, buf, sizeof(buf), 100);
	return total;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	char path[] = "/tmp/ep-syscalls-XXXXXX";
	int fd = mkstemp(path);
	long r;

	if (fd < 0)
		return 1;
	unlink(path);
	r = do_io(fd, now() + secs);
	close(fd);
	return r < 0;
}
