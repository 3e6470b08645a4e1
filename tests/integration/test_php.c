// SPDX-License-Identifier: Apache-2.0
/*
 * PHP in the host kernel: Debian's php8.2 (stripped, NTS, hybrid VM) on
 * scripts with known stacks (tests/workloads/php), with and without the
 * tracing JIT.  A stack is complete when its PHP frames reach the
 * script's top level ({main}) and its native frames reach _start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include "../unit/test.h"
#include "harness.h"

#define PHP "/usr/bin/php8.2"
#define HZ "499"

#define PHP_HINT " (make deps installs php8.2-cli)"

/* The PHP run: Debian's, or another build (EP_PHP_BIN). */
static struct h_interp php = { PHP, "php8.2", "php8.2;_start;" };

/* Profile a script for 6 s; false (after a skip or a failure) when
 * there is no profile to look at. */
static bool profile_php(const char *script, bool jit, struct h_run *r)
{
	char *path = (char *)h_script("php", script), ext[512];
	char *plain[] = { (char *)php.bin, path, "30", NULL };
	char *with_jit[] = { (char *)php.bin, "-d", ext,
			     "-d", "opcache.enable_cli=1",
			     "-d", "opcache.jit=tracing",
			     "-d", "opcache.jit_buffer_size=64M", path, "30",
			     NULL };

	/* opcache: Debian's php8.2 loads it from its ini files, another
	 * build by path (EP_PHP_OPCACHE) */
	if (php.bin != (const char *)PHP && getenv("EP_PHP_OPCACHE"))
		snprintf(ext, sizeof(ext), "zend_extension=%s",
			 getenv("EP_PHP_OPCACHE"));
	else
		snprintf(ext, sizeof(ext), "opcache.enable=1");
	if (!h_have(php.bin, PHP_HINT))
		return false;
	return h_run_workload(jit ? with_jit : plain, "6s", HZ, NULL, r);
}

static void split_test(bool jit)
{
	static const char *const chain[3] = { "heavy (split.php:", "medium (split.php:",
					      "light (split.php:" };
	static const double want[3] = { 60, 30, 10 };
	uint64_t total = 0, complete = 0, n[3] = { 0 }, c;
	struct h_run r = { 0 };
	const char *s;
	int i;

	if (!profile_php("split.php", jit, &r))
		goto out;
	h_for_each_line(&r.f, i, s, c) {
		if (!h_comm_is(s, php.comm))
			continue;
		total += c;
		if (strstr(s, php.comm_start) &&
		    strstr(s, ";{main} (split.php:") &&
		    strstr(s, ";run (split.php:"))
			complete += c;
		h_tally(s, c, chain, 3, n);
	}
	test_note("%s, %s: %llu samples, %.1f%% complete; heavy %.1f%% medium "
		  "%.1f%% light %.1f%%; err_php_read=%lld", php.comm,
		  jit ? "tracing JIT" : "no JIT", (unsigned long long)total,
		  h_pct(complete, total), h_pct(n[0], total), h_pct(n[1], total),
		  h_pct(n[2], total), h_summary_value(r.err, "err_php_read"));
	ASSERT_GE(total, 300, "samples");
	if (!ASSERT_GE(h_pct(complete, total), 95.0,
		       ">= 95% complete (PHP to {main}, native to _start)"))
		h_dump_top(&r.f, php.comm, 8);
	h_assert_split(n, total, want);
out:
	h_run_free(&r);
}

static void split_plain(void)
{
	split_test(false);
}

static void split_jit(void)
{
	split_test(true);
}

TEST_ROOT(php_split_60_30_10)
{
	split_test(false);
}

TEST_ROOT(php_split_60_30_10_tracing_jit)
{
	split_test(true);
}

/* A PHP comparator called back from the internal usort, in a class:
 * usort sits between Sorter::sortAll and the native frames under which
 * Sorter::compare runs. */
static void usort_test(void)
{
	uint64_t compare = 0, ordered = 0, c;
	struct h_run r = { 0 };
	const char *s, *a, *b;
	int i;

	if (!profile_php("usort.php", false, &r))
		goto out;
	h_for_each_line(&r.f, i, s, c) {
		if (!h_comm_is(s, php.comm) ||
		    !(b = strstr(s, ";Sorter::compare (usort.php:")))
			continue;
		compare += c;
		a = strstr(s, ";{main} (usort.php:27);Sorter::sortAll (usort.php:19);usort;");
		if (a && a < b && strstr(s, php.comm_start))
			ordered += c;
	}
	test_note("%llu samples in Sorter::compare, %.1f%% under "
		  "{main};Sorter::sortAll;usort;<native>",
		  (unsigned long long)compare,
		  h_pct(ordered, compare));
	ASSERT_GE(compare, 200, "samples in the comparator");
	if (!ASSERT_GE(h_pct(ordered, compare), 95.0,
		       "usort between the right PHP frames"))
		h_dump_top(&r.f, php.comm, 8);
out:
	h_run_free(&r);
}

TEST_ROOT(php_usort_method_between_frames)
{
	usort_test();
}

/*
 * Another PHP build, named by EP_PHP_BIN (with LD_LIBRARY_PATH for its
 * libraries if need be): the split and usort, and the split under the
 * tracing JIT when EP_PHP_OPCACHE names its opcache.so.  How 7.4 and 8.4
 * were checked live: Debian 11's php7.4-cli and 13's php8.4-cli unpacked
 * (README, PHP).
 */
TEST_ROOT(php_other_build)
{
	static const struct h_build_case cases[] = {
		{ "split", split_plain },
		{ "usort", usort_test },
		{ "split_tracing_jit", split_jit, "EP_PHP_OPCACHE" },
	};

	h_other_build(&php, PHP, "EP_PHP_BIN",
		      "no PHP build other than Debian's php8.2 to run",
		      PHP_HINT, cases, sizeof(cases) / sizeof(cases[0]));
}
