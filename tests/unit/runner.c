// SPDX-License-Identifier: Apache-2.0
/*
 * Test runner.  Each test runs in its own child process so that a crash or
 * a hang (limit: EP_TEST_TIMEOUT seconds, default 900: the kernel matrix
 * downloads its kernels on a first run) fails that test
 * only.  Arguments are substring filters on test names; "-l" lists.
 * A failed test runs once more (EP_TEST_RETRIES, default 1; 0 for none):
 * the root tests count samples of real workloads on a shared machine, and
 * a burst of load can starve one run.  Both runs' output is printed, a
 * test that passes only on its retry is listed as such before the last
 * line, and one that fails every run fails.  The names of the failed tests
 * come just before the last line, which is "N passed, N failed", followed
 * by skips.
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_SKIP 77

static struct test_case *tests;
static const char *cur_test;
static const char *cur_subtest;
static bool cur_failed, cur_sub_failed, cur_skipped;
static int sub_pass, sub_fail;
static char tmpdir[256];

void test_register(struct test_case *tc)
{
	/* Keep registration order stable: append. */
	struct test_case **p = &tests;
	while (*p)
		p = &(*p)->next;
	*p = tc;
}

/* The rest of a line of FAIL, SKIP or note: out at once, as a test may
 * crash or hang next. */
static void line_end(const char *fmt, va_list ap)
{
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("    FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	line_end(fmt, ap);
	va_end(ap);
	cur_failed = true;
	if (cur_subtest)
		cur_sub_failed = true;
}

void test_skip(const char *fmt, ...)
{
	va_list ap;

	printf("    SKIP ");
	va_start(ap, fmt);
	line_end(fmt, ap);
	va_end(ap);
	cur_skipped = true;
}

bool test_skipped(void)
{
	return cur_skipped;
}

void test_note(const char *fmt, ...)
{
	va_list ap;

	printf("    note: ");
	va_start(ap, fmt);
	line_end(fmt, ap);
	va_end(ap);
}

bool test_contains(const char *file, int line, const char *hay,
		   const struct test_needle *n, size_t count)
{
	bool ok = true;
	size_t i;

	for (i = 0; i < count; i++) {
		if (hay && strstr(hay, n[i].needle))
			continue;
		test_fail(file, line, "%s: expected to contain \"%s\"",
			  n[i].what, n[i].needle);
		ok = false;
	}
	return ok;
}

static void end_subtest(void)
{
	if (!cur_subtest)
		return;
	printf("  %s/%s: %s\n", cur_test, cur_subtest,
	       cur_sub_failed ? "FAIL" : "ok");
	fflush(stdout);
	if (cur_sub_failed)
		sub_fail++;
	else
		sub_pass++;
	cur_subtest = NULL;
	cur_sub_failed = false;
}

bool test_start_subtest(const char *name)
{
	static char buf[128];

	end_subtest();
	/* a copy: the name may be on the test's stack, and the subtest is
	 * reported after the test returned */
	snprintf(buf, sizeof(buf), "%s", name);
	cur_subtest = buf;
	cur_sub_failed = false;
	return true;
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);
	return v && *v ? v : def;
}

const char *test_srcdir(void)
{
	return env_or("EP_SRCDIR", ".");
}

unsigned test_src_line(const char *rel, const char *marker)
{
	char path[4096], line[1024];
	unsigned n = 0, found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", test_srcdir(), rel);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker))
			found = n;
	}
	fclose(f);
	return found;
}

const char *test_bin(void)
{
	return env_or("EP_BIN", "./ebpf-profiler");
}

const char *test_workloads(void)
{
	return env_or("EP_WORKLOADS", "build/workloads");
}

const char *test_tmpdir(void)
{
	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/ep-test-XXXXXX");
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			exit(1);
		}
	}
	return tmpdir;
}

const char *test_tmppath(const char *name)
{
	static char bufs[8][512];
	static unsigned n;
	char *p = bufs[n++ % 8];

	snprintf(p, sizeof(bufs[0]), "%s/%s", test_tmpdir(), name);
	return p;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static bool matches(const char *name, int argc, char **argv)
{
	int i, n = 0;

	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		n++;
		if (strstr(name, argv[i]))
			return true;
	}
	return n == 0;
}

/* LeakSanitizer's check, present in sanitizer builds (make test-asan). */
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

static int run_child(struct test_case *tc)
{
	cur_test = tc->name;
	if (tc->needs_root && (geteuid() != 0 || getenv("EP_NO_ROOT_TESTS"))) {
		test_skip("needs root (loads BPF into the kernel)");
		return EXIT_SKIP;
	}
	tc->fn();
	end_subtest();
	/* The child ends with _exit, which skips the check at exit: what
	 * the test left allocated fails it here. */
	if (__lsan_do_recoverable_leak_check &&
	    __lsan_do_recoverable_leak_check())
		test_fail(__FILE__, __LINE__,
			  "memory leaked (LeakSanitizer's report above)");
	if (tmpdir[0] && !getenv("EP_KEEP_TMP"))
		nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (cur_failed)
		return 1;
	return cur_skipped ? EXIT_SKIP : 0;
}

/* Appends a name to a space-separated list, "..." once it is full. */
static void list_add(char *list, size_t size, const char *name)
{
	size_t len = strlen(list);

	if (len + strlen(name) + 5 >= size) {
		if (len + 4 < size && !strstr(list, "..."))
			strcat(list, " ...");
		return;
	}
	snprintf(list + len, size - len, "%s%s", len ? " " : "", name);
}

/* Runs one test in its own child: 0 passed, EXIT_SKIP skipped, 1 failed. */
static int run_one(struct test_case *tc, unsigned timeout)
{
	struct timespec t0, t1;
	int status;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		/* The test's own process group, so a timeout can
		 * take its workloads along. */
		setpgid(0, 0);
		alarm(timeout);
		_exit(run_child(tc));
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	kill(-pid, SIGKILL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("PASS %s (%.1fs)\n", tc->name, secs);
		return 0;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_SKIP) {
		printf("SKIP %s\n", tc->name);
		return EXIT_SKIP;
	}
	if (WIFSIGNALED(status))
		printf("    killed by signal %d%s\n", WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
	printf("FAIL %s (%.1fs)\n", tc->name, secs);
	return 1;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0, i;
	unsigned timeout = atoi(env_or("EP_TEST_TIMEOUT", "900"));
	int retries = atoi(env_or("EP_TEST_RETRIES", "1"));
	static char retried[2048], failed_names[2048];
	struct test_case *tc;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-l") == 0) {
			for (tc = tests; tc; tc = tc->next)
				printf("%s\n", tc->name);
			return 0;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (tc = tests; tc; tc = tc->next) {
		int attempt, rc = 1;

		if (!matches(tc->name, argc, argv))
			continue;
		for (attempt = 0; attempt <= retries && rc == 1; attempt++) {
			if (attempt)
				printf("    retrying %s: run %d failed\n",
				       tc->name, attempt);
			rc = run_one(tc, timeout);
		}
		if (rc == 0) {
			passed++;
			if (attempt > 1)
				list_add(retried, sizeof(retried), tc->name);
		} else if (rc == EXIT_SKIP) {
			skipped++;
		} else {
			failed++;
			list_add(failed_names, sizeof(failed_names), tc->name);
		}
	}
	if (retried[0])
		printf("passed on their retry: %s\n", retried);
	if (failed_names[0])
		printf("failed: %s\n", failed_names);
	printf("%d passed, %d failed", passed, failed);
	if (skipped)
		printf(", %d skipped", skipped);
	printf("\n");
	return failed ? 1 : 0;
}
