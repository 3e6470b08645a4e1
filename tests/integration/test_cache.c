// SPDX-License-Identifier: Apache-2.0
/*
 * The persistent cache end to end: `cache warm` of a directory, then a
 * profile of a program from it extracts nothing; a second run of the
 * daemon hits the cache for every file; a damaged cache costs nothing.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "../unit/test.h"
#include "harness.h"
#include "kbtf.h"
#include "store.h"
#include "tracer.h"

static int copy_file(const char *from, const char *to)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	return system(cmd);
}

#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static int run_cmd(const char *fmt, const char *a, const char *b, char *out,
		   size_t n)
{
	char cmd[2048];
	FILE *p;
	size_t got;

	snprintf(cmd, sizeof(cmd), fmt, test_bin(), a, b);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	got = fread(out, 1, n - 1, p);
	out[got] = 0;
	return pclose(p);
}

TEST_ROOT(cache_warm_then_profile_extracts_nothing)
{
	char dir[512], cache[512], bin[600], out[4096], *err = NULL;
	char *wargv[] = { bin, "10", NULL };
	const char *extra[] = { "-cache-dir", cache, "-v", NULL };
	struct folded f;
	int rc;

	snprintf(dir, sizeof(dir), "%s/image", test_tmpdir());
	snprintf(cache, sizeof(cache), "%s/cache", test_tmpdir());
	snprintf(bin, sizeof(bin), "%s/split-nofp-static", dir);
	mkdir(dir, 0755);
	ASSERT_EQ(copy_file(h_workload("split-nofp-static"), bin), 0, "copy");

	rc = run_cmd("%s cache warm -cache-dir %s %s 2>&1", cache, dir, out,
		     sizeof(out));
	test_note("%s", out);
	ASSERT_EQ(rc, 0, "cache warm exit code");
	ASSERT_TRUE(strstr(out, "extracted=1"), "the binary was extracted");

	rc = h_profile_workload(wargv, "2s", "99", extra, &f, &err);
	ASSERT_EQ(rc, 0, "profiler exit code");
	test_note("%s", err ? err : "");
	/* the static binary and the vDSO: both from the cache; and the
	 * kernel types, which cache warm stores too */
	ASSERT_EQ(h_summary_value(err, "extracted"), 0, "extracted=0");
	ASSERT_TRUE(strstr(err, "kernel types from cache"), "kernel types warmed");
	ASSERT_GE(h_summary_value(err, "cache_hits"), 2, "cache_hits");
	ASSERT_GE(h_share(&f, "split-nofp-stat", "split-nofp-stat;_start") * 100,
		  99, "complete stacks from cached deltas");
	free(err);
	h_free_folded(&f);

	rc = run_cmd("%s cache stats -cache-dir %s %s 2>&1", cache, "", out,
		     sizeof(out));
	ASSERT_EQ(rc, 0, "cache stats");
	rc = run_cmd("%s cache verify -cache-dir %s %s 2>&1", cache, "", out,
		     sizeof(out));
	ASSERT_EQ(rc, 0, "cache verify");
	ASSERT_TRUE(strstr(out, "removed=0"), "nothing bad");
}

/* A daemon restart: the second run extracts nothing and starts faster. */
TEST_ROOT(cache_restart_hits_everything)
{
	char cache[512], *err1 = NULL, *err2 = NULL;
	char *wargv[] = { (char *)h_workload("split-nofp-pie"), "10", NULL };
	const char *extra[] = { "-cache-dir", cache, NULL };
	struct folded f;

	snprintf(cache, sizeof(cache), "%s/cache", test_tmpdir());
	ASSERT_EQ(h_profile_workload(wargv, "1s", "99", extra, &f, &err1), 0, "cold");
	h_free_folded(&f);
	ASSERT_EQ(h_profile_workload(wargv, "1s", "99", extra, &f, &err2), 0, "warm");
	test_note("cold: extracted=%lld cache_hits=%lld startup_ms=%lld; warm: extracted=%lld cache_hits=%lld startup_ms=%lld",
		  h_summary_value(err1, "extracted"), h_summary_value(err1, "cache_hits"),
		  h_summary_value(err1, "startup_ms"), h_summary_value(err2, "extracted"),
		  h_summary_value(err2, "cache_hits"), h_summary_value(err2, "startup_ms"));
	ASSERT_GE(h_summary_value(err1, "extracted"), 3, "cold run extracts");
	ASSERT_EQ(h_summary_value(err2, "extracted"), 0, "warm run extracts nothing");
	ASSERT_EQ(h_summary_value(err2, "cache_hits"),
		  h_summary_value(err1, "extracted") + h_summary_value(err1, "cache_hits"),
		  "every file from the cache");
	free(err1);
	free(err2);
	h_free_folded(&f);
}

/* A damaged cache file: detected, rebuilt, profiling goes on. */
TEST_ROOT(cache_corrupted_file_profiling_goes_on)
{
	char cache[512], db[600], *err = NULL;
	char *wargv[] = { (char *)h_workload("split-nofp-pie"), "10", NULL };
	const char *extra[] = { "-cache-dir", cache, NULL };
	struct folded f;
	int fd, i;

	snprintf(cache, sizeof(cache), "%s/cache", test_tmpdir());
	ASSERT_EQ(h_profile_workload(wargv, "1s", "99", extra, &f, &err), 0, "fill");
	free(err);
	h_free_folded(&f);
	/* scribble over the middle of the database */
	snprintf(db, sizeof(db), "%s/data.mdb", cache);
	fd = open(db, O_WRONLY);
	if (ASSERT_GE(fd, 0, "open data.mdb")) {
		char junk[4096];

		for (i = 0; i < (int)sizeof(junk); i++)
			junk[i] = (char)(i * 131 + 7);
		for (i = 1; i < 8; i++)
			(void)!pwrite(fd, junk, sizeof(junk), (off_t)i * 4096);
		close(fd);
	}
	ASSERT_EQ(h_profile_workload(wargv, "2s", "499", extra, &f, &err), 0,
		  "profiling goes on");
	test_note("%s", err ? err : "");
	ASSERT_GE(h_summary_value(err, "samples"), 100, "samples");
	ASSERT_GE(h_share(&f, "split-nofp-pie", "split-nofp-pie;_start") * 100, 99,
		  "complete stacks");
	free(err);
	h_free_folded(&f);
}

/* A read-only cache directory: one warning, profiling goes on. */
TEST_ROOT(cache_unusable_dir_runs_without)
{
	char *err = NULL;
	char *wargv[] = { (char *)h_workload("split-nofp-pie"), "10", NULL };
	const char *extra[] = { "-cache-dir", "/proc/ep-no-such-cache", NULL };
	struct folded f;

	/* 499 Hz for 2 s: up to 1,000 samples of the workload, so that a
	 * busy machine (which gives it a fraction of a CPU) still has 100 */
	ASSERT_EQ(h_profile_workload(wargv, "2s", "499", extra, &f, &err), 0,
		  "exit code");
	ASSERT_TRUE(err && strstr(err, "running without the cache"), "one warning");
	ASSERT_GE(h_summary_value(err, "samples"), 100, "samples");
	free(err);
	h_free_folded(&f);
}

/* The kernel types CO-RE relocates against: cut from the kernel's BTF on
 * the first start, from the cache on the next.  A cached copy that does
 * not fit (here: types without task_struct) costs a second load with the
 * kernel's whole BTF, a warning and the record, never the profile. */
TEST_ROOT(cache_kernel_types_cached_and_checked)
{
	char cache[512], *err = NULL;
	char *wargv[] = { (char *)h_workload("split-nofp-pie"), "10", NULL };
	const char *extra[] = { "-cache-dir", cache, "-v", NULL };
	struct store *s = NULL;
	struct file_id key;
	struct folded f;
	struct btf *bogus;
	const void *raw, *obj;
	size_t olen;
	uint32_t rlen;

	snprintf(cache, sizeof(cache), "%s/cache", test_tmpdir());
	ASSERT_EQ(h_profile_workload(wargv, "1s", "99", extra, &f, &err), 0, "cold");
	ASSERT_TRUE(strstr(err, "kernel types from built"), "built on the first start");
	h_free_folded(&f);
	free(err);
	ASSERT_EQ(h_profile_workload(wargv, "1s", "99", extra, &f, &err), 0, "warm");
	ASSERT_TRUE(strstr(err, "kernel types from cache"), "cached on the second");
	ASSERT_GE(h_share(&f, "split-nofp-pie", "split-nofp-pie;_start") * 100, 99,
		  "stacks complete with the cached types");
	h_free_folded(&f);
	free(err);

	/* replace the record by types that lack what the programs read */
	obj = tracer_object(&olen);
	ASSERT_OK(kbtf_key(obj, olen, &key), "key");
	ASSERT_OK(store_open(cache, NULL, &s), "open the cache");
	bogus = btf__new_empty();
	ASSERT_TRUE(bogus, "btf");
	ASSERT_GT(btf__add_int(bogus, "int", 4, BTF_INT_SIGNED), 0, "int");
	raw = btf__raw_data(bogus, &rlen);
	ASSERT_OK(store_put(s, key.b, STORE_KIND_KTYPES, raw, rlen), "put");
	btf__free(bogus);
	store_free(s);

	ASSERT_EQ(h_profile_workload(wargv, "1s", "99", extra, &f, &err), 0,
		  "a bad record is no failure");
	test_note("%s", err);
	ASSERT_TRUE(strstr(err, "cached kernel types failed"), "one warning");
	ASSERT_TRUE(strstr(err, "kernel types from kernel"), "the whole BTF");
	ASSERT_GE(h_share(&f, "split-nofp-pie", "split-nofp-pie;_start") * 100, 99,
		  "stacks complete all the same");
	h_free_folded(&f);
	free(err);
	ASSERT_EQ(h_profile_workload(wargv, "1s", "99", extra, &f, &err), 0, "again");
	ASSERT_TRUE(strstr(err, "kernel types from built"), "the bad record is gone");
	h_free_folded(&f);
	free(err);
}

/* A golden image: `cache warm` keeps what the interpreter modules find
 * (Debian's python3.11 holds CPython), and a daemon from that cache
 * unwinds the Python frames. */
TEST_ROOT(cache_warm_keeps_interpreter_runtimes)
{
	char dir[512], cache[512], bin[600], script[600], out[4096], *err = NULL;
	char *wargv[] = { bin, script, "10", NULL };
	const char *extra[] = { "-cache-dir", cache, NULL };
	struct folded f;
	int rc;

	if (access("/usr/bin/python3.11", X_OK)) {
		test_skip("/usr/bin/python3.11 is not installed");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/pyimage", test_tmpdir());
	snprintf(cache, sizeof(cache), "%s/pycache", test_tmpdir());
	snprintf(bin, sizeof(bin), "%s/python3.11", dir);
	snprintf(script, sizeof(script), "%s/tests/workloads/python/split.py",
		 test_srcdir());
	mkdir(dir, 0755);
	ASSERT_EQ(copy_file("/usr/bin/python3.11", bin), 0, "copy");

	rc = run_cmd("%s cache warm -cache-dir %s %s 2>&1", cache, dir, out,
		     sizeof(out));
	test_note("%s", out);
	ASSERT_EQ(rc, 0, "cache warm exit code");
	ASSERT_TRUE(strstr(out, " runtimes=1 "), "one runtime found and kept");
	rc = run_cmd("%s cache stats -cache-dir %s %s 2>&1", cache, "", out,
		     sizeof(out));
	ASSERT_EQ(rc, 0, "cache stats");
	ASSERT_TRUE(strstr(out, "kind python: records=1 "),
		    "the CPython record, under the module's name");

	rc = h_profile_workload(wargv, "3s", "99", extra, &f, &err);
	ASSERT_EQ(rc, 0, "profiler exit code");
	ASSERT_GE(h_share(&f, "python3.11", "<module> (split.py:40)") * 100, 99,
		  "Python frames from the warmed record");
	free(err);
	h_free_folded(&f);
}
