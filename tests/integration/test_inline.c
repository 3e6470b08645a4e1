// SPDX-License-Identifier: Apache-2.0
/*
 * Inline frames from DWARF (issue 23), in the host kernel: the inline
 * workload (-O2 -g) spends 60% of its CPU time under inlined_a and 40%
 * under inlined_b, both folded into caller; with -inline-frames each
 * sample's stack names the inlined function it was in.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit/rep_fixture.h"
#include "../unit/test.h"
#include "harness.h"

/* Profile bin (its comm: comm) with -inline-frames and more flags
 * (more: NULL-terminated, may be NULL): the 60/40 split through the
 * inlined functions.  *summary (may be NULL): the daemon's stderr. */
static void split_check_with(const char *bin, const char *comm,
			     const char *const *more, char **summary)
{
	char *wargv[] = { (char *)bin, "12", NULL };
	const char *extra[16] = { "-inline-frames" };
	double a, b, ab;
	struct folded f;
	char *err = NULL;
	int rc, n = 1;

	while (more && *more && n < 15)
		extra[n++] = *more++;
	rc = h_profile_workload(wargv, "6s", "999", extra, &f, &err);
	h_profiled(rc, err);
	if (summary)
		*summary = err;
	else
		free(err);
	if (rc)
		return;
	ASSERT_GE(h_count_comm(&f, comm), 1000, "samples");
	a = h_share(&f, comm, "main;caller;inlined_a;leaf");
	b = h_share(&f, comm, "main;caller;inlined_b;leaf");
	ab = a + b;
	test_note("%s: %llu samples: inlined_a %.1f%% (want 60), inlined_b "
		  "%.1f%% (want 40), both %.2f%%", comm,
		  (unsigned long long)h_count_comm(&f, comm), 100 * a, 100 * b,
		  100 * ab);
	if (!ASSERT_GE(ab * 10000, 9900, "stacks through an inlined function"))
		h_dump_top(&f, comm, 8);
	if (ab > 0)
		ASSERT_NEAR(100 * a / ab, 60, 3, "inlined_a's share");
	h_free_folded(&f);
}

static void split_check(const char *bin, const char *comm)
{
	split_check_with(bin, comm, NULL, NULL);
}

TEST_ROOT(inline_frames_split)
{
	const char *bin = h_workload("inline");

	if (access(bin, X_OK)) {
		test_skip("inline not built: see the workloads build");
		return;
	}
	split_check(bin, "inline");
}

/* The same with the binary's DWARF moved out (objcopy --only-keep-debug,
 * then --strip-debug): found through .gnu_debuglink beside the binary,
 * and through the build-id directory (/usr/lib/debug/.build-id/xx/...,
 * created for the test and removed after). */
TEST_ROOT(inline_frames_from_separate_debug_files)
{
	const char *bin = h_workload("inline"), *dir = test_tmpdir();
	char cmd[4096], id[130] = "", bid_dir[256], bid_file[512];
	FILE *p;

	if (access(bin, X_OK)) {
		test_skip("inline not built: see the workloads build");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; objcopy --only-keep-debug %s inline.debug; "
		 "objcopy --strip-debug --add-gnu-debuglink=inline.debug %s "
		 "inline-dlink; objcopy --strip-debug %s inline-bid; "
		 "readelf -S inline-dlink inline-bid | grep -c debug_info || true",
		 dir, bin, bin, bin);
	p = popen(cmd, "r");
	if (!ASSERT_TRUE(p != NULL, "objcopy"))
		return;
	if (fgets(id, sizeof(id), p))
		ASSERT_EQ(atoi(id), 0, "stripped copies have no .debug_info");
	if (!ASSERT_EQ(pclose(p), 0, "objcopy ran"))
		return;
	split_check(strcat(strcpy(cmd, dir), "/inline-dlink"), "inline-dlink");

	snprintf(cmd, sizeof(cmd),
		 "readelf -n %s | awk '/Build ID/ { print $3 }'", bin);
	id[0] = 0;
	fix_run(cmd, id, sizeof(id));
	id[strcspn(id, "\n")] = 0;
	if (strlen(id) < 4) {
		test_skip("the inline workload has no build id");
		return;
	}
	snprintf(bid_dir, sizeof(bid_dir), "/usr/lib/debug/.build-id/%.2s", id);
	snprintf(bid_file, sizeof(bid_file), "%s/%s.debug", bid_dir, id + 2);
	if (!ASSERT_EQ(system(h_cmdf("mkdir -p %s && cp %s/inline.debug %s",
				     bid_dir, dir, bid_file)),
		       0, "debug file under the build-id directory"))
		return;
	split_check(strcat(strcpy(cmd, dir), "/inline-bid"), "inline-bid");
	unlink(bid_file);
	rmdir(bid_dir); /* only when the test made it (else not empty) */
}

/* The line of tests/workloads/inline.c holding needle, or 0. */
static int inline_c_line(const char *needle)
{
	return (int)test_src_line("tests/workloads/inline.c", needle);
}

/* -folded-lines: each frame named from DWARF is "func (inline.c:line)",
 * the line where it is in the chain (the call site of the next frame
 * inward), as the source file says; without the flag, the function only
 * (the other tests). */
TEST_ROOT(inline_frames_folded_lines)
{
	const char *bin = h_workload("inline");
	const char *extra[] = { "-inline-frames", "-folded-lines", NULL };
	int lm = inline_c_line("sink += caller("),
	    lc_a = inline_c_line("= inlined_a(a)"),
	    lc_b = inline_c_line("inlined_b(b)"),
	    la = inline_c_line("CALL_A */"), lb = inline_c_line("CALL_B */");
	char *wargv[] = { (char *)bin, "12", NULL }, want_a[256], want_b[256];
	double a, b;
	struct folded f;
	char *err = NULL;
	int rc;

	if (access(bin, X_OK)) {
		test_skip("inline not built: see the workloads build");
		return;
	}
	if (!ASSERT_TRUE(lm && lc_a && lc_b && la && lb, "lines in inline.c"))
		return;
	snprintf(want_a, sizeof(want_a),
		 "main (inline.c:%d);caller (inline.c:%d);inlined_a (inline.c:%d)",
		 lm, lc_a, la);
	snprintf(want_b, sizeof(want_b),
		 "main (inline.c:%d);caller (inline.c:%d);inlined_b (inline.c:%d)",
		 lm, lc_b, lb);
	rc = h_profile_workload(wargv, "4s", "999", extra, &f, &err);
	h_profiled(rc, err);
	free(err);
	if (rc)
		return;
	a = h_share(&f, "inline", want_a);
	b = h_share(&f, "inline", want_b);
	test_note("%llu samples: \"%s\" %.1f%%, \"%s\" %.1f%%",
		  (unsigned long long)h_count_comm(&f, "inline"), want_a,
		  100 * a, want_b, 100 * b);
	ASSERT_GE(h_count_comm(&f, "inline"), 500, "samples");
	if (!ASSERT_GE((a + b) * 10000, 9900, "stacks with the lines"))
		h_dump_top(&f, "inline", 8);
	if (a + b > 0)
		ASSERT_NEAR(100 * a / (a + b), 60, 3, "inlined_a's share");
	h_free_folded(&f);
}

/* MiniDebugInfo end to end: the inline workload stripped whole, its
 * functions in .gnu_debugdata only (tests/tools/minidebuginfo.sh, as
 * Fedora makes it): a native profile (no -inline-frames) names caller
 * and leaf; the same binary stripped without the section names neither. */
TEST_ROOT(minidebuginfo_names_a_stripped_binary)
{
	const char *bin = h_workload("inline"), *dir = test_tmpdir();
	char mini[512], bare[512];
	int k;

	if (access(bin, X_OK)) {
		test_skip("inline not built: see the workloads build");
		return;
	}
	snprintf(mini, sizeof(mini), "%s/inline-mdi", dir);
	snprintf(bare, sizeof(bare), "%s/inline-bare", dir);
	if (system(h_cmdf("%s/tests/tools/minidebuginfo.sh %s %s %s",
			  test_srcdir(), bin, mini, bare))) {
		test_skip("could not make MiniDebugInfo (xz, binutils)");
		return;
	}
	for (k = 0; k < 2; k++) {
		const char *path = k ? bare : mini;
		const char *comm = k ? "inline-bare" : "inline-mdi";
		char *wargv[] = { (char *)path, "12", NULL };
		struct folded f;
		char *err = NULL;
		double named;
		int rc;

		rc = h_profile_workload(wargv, "4s", "999", NULL, &f, &err);
		h_profiled(rc, err);
		free(err);
		if (rc)
			continue;
		named = h_share(&f, comm, "main;caller;leaf");
		test_note("%s: %llu samples, main;caller;leaf %.2f%%", comm,
			  (unsigned long long)h_count_comm(&f, comm), 100 * named);
		ASSERT_GE(h_count_comm(&f, comm), 500, "samples");
		if (!k && !ASSERT_GE(named * 10000, 9900,
				     "named from .gnu_debugdata"))
			h_dump_top(&f, comm, 6);
		if (k)
			ASSERT_EQ(h_count_with(&f, comm, "caller"), 0,
				  "no names without the section");
		h_free_folded(&f);
	}
}

/* Tables kept in the persistent cache: the second run on one cache
 * directory parses no DWARF (every table read from the cache) and names
 * the same chains. */
TEST_ROOT(inline_frames_tables_from_cache)
{
	const char *bin = h_workload("inline");
	char cache[512];
	const char *more[] = { "-cache-dir", cache, NULL };
	long long built[2], cached[2];
	char *summary = NULL;
	int run;

	if (access(bin, X_OK)) {
		test_skip("inline not built: see the workloads build");
		return;
	}
	snprintf(cache, sizeof(cache), "%s/cache", test_tmpdir());
	for (run = 0; run < 2; run++) {
		split_check_with(bin, "inline", more, &summary);
		built[run] = h_summary_value(summary, "inline_loaded_built");
		cached[run] = h_summary_value(summary, "inline_loaded_cache");
		test_note("run %d: tables built %lld, from the cache %lld, "
			  "build %lld ms, rejected %lld", run + 1, built[run],
			  cached[run],
			  h_summary_value(summary, "inline_build_ms"),
			  h_summary_value(summary, "inline_cache_rejected"));
		free(summary);
		summary = NULL;
	}
	ASSERT_GE(built[0], 1, "first run: tables built");
	ASSERT_EQ(built[1], 0, "second run: no table built");
	ASSERT_EQ(cached[1], built[0] + cached[0],
		  "second run: every table from the cache");
}

/* The build id of the ELF file at path, in hex, or "" (id: 129 bytes). */
static void build_id_of(const char *path, char *id)
{
	char cmd[4096];
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "readelf -n %s | awk '/Build ID/ { print $3 }'", path);
	id[0] = 0;
	p = popen(cmd, "r");
	if (p) {
		if (!fgets(id, 129, p))
			id[0] = 0;
		pclose(p);
	}
	id[strcspn(id, "\n")] = 0;
}

/* A debuginfod server (debuginfod -F on a directory holding the
 * workload's debug file, on a free port) serves the DWARF of the
 * stripped workload: the daemon downloads it (DEBUGINFOD_URLS) into
 * its cache directory's debuginfod/ and names the inline chains as with
 * a local debug file.  Then the server is down: the failure is counted,
 * the run goes on, and frames are named from the ELF symbols. */
TEST_ROOT(inline_frames_through_debuginfod)
{
	const char *bin = h_workload("inline"), *dir = test_tmpdir(), *curl;
	char id[130], url[64], port_s[16], db[512], srv[512];
	char cache[512], cache2[512], got[1024], local[512];
	const char *more[] = { "-cache-dir", cache, NULL };
	char *dargv[] = { "/usr/bin/debuginfod", "-F", srv, "-p", port_s,
			  "-d", db, NULL };
	char *summary = NULL, *wargv[] = { NULL, "12", NULL };
	struct folded f;
	pid_t server;
	int port, i, rc;
	double plain, inl;

	if (access(bin, X_OK)) {
		test_skip("inline not built: see the workloads build");
		return;
	}
	if (access(dargv[0], X_OK)) {
		test_skip("no debuginfod server (Debian package debuginfod: make deps)");
		return;
	}
	build_id_of(bin, id);
	if (strlen(id) < 4) {
		test_skip("the inline workload has no build id");
		return;
	}
	/* a local debug file would be found before the server */
	snprintf(local, sizeof(local), "/usr/lib/debug/.build-id/%.2s/%s.debug",
		 id, id + 2);
	if (!ASSERT_NEQ(access(local, F_OK), 0, "no local debug file by build id"))
		return;
	snprintf(srv, sizeof(srv), "%s/srv", dir);
	snprintf(db, sizeof(db), "%s/debuginfod.sqlite", dir);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	snprintf(cache2, sizeof(cache2), "%s/cache-down", dir);
	if (!ASSERT_EQ(system(h_cmdf("set -e; cd %s; mkdir -p srv; "
				     "objcopy --only-keep-debug %s srv/inline.debug; "
				     "objcopy --strip-debug %s inline-dfd; "
				     "test $(readelf -S inline-dfd | grep -c debug_info) = 0",
				     dir, bin, bin)),
		       0, "stripped copy and its debug file"))
		return;

	port = h_free_port();
	snprintf(port_s, sizeof(port_s), "%d", port);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	server = h_spawn(dargv);
	if (!ASSERT_GT(server, 0, "debuginfod started"))
		return;
	/* wait until its first scan has indexed the debug file */
	curl = h_cmdf("curl -sf -o /dev/null %s/buildid/%s/debuginfo", url, id);
	for (i = 0; i < 120 && (rc = system(curl)) != 0; i++)
		usleep(250000);
	if (!ASSERT_EQ(rc, 0, "debuginfod serves the debug file")) {
		kill(server, SIGTERM);
		h_wait(server, 5);
		return;
	}
	test_note("debuginfod served it after %.2f s", i * 0.25);

	setenv("DEBUGINFOD_URLS", url, 1);
	unsetenv("DEBUGINFOD_CACHE_PATH"); /* the daemon's default */
	split_check_with(strcat(strcpy(got, dir), "/inline-dfd"), "inline-dfd",
			 more, &summary);
	if (summary) {
		/* not_found: the process' other files (ld.so, ...) that
		 * have no debug file here, asked of the server too */
		test_note("fetched=%lld cache_hit=%lld not_found=%lld "
			  "error=%lld pending=%lld",
			  h_summary_value(summary, "debuginfod_fetched"),
			  h_summary_value(summary, "debuginfod_cache_hit"),
			  h_summary_value(summary, "debuginfod_not_found"),
			  h_summary_value(summary, "debuginfod_error"),
			  h_summary_value(summary, "inline_pending"));
		ASSERT_EQ(h_summary_value(summary, "debuginfod_fetched"), 1,
			  "one download");
		ASSERT_EQ(h_summary_value(summary, "debuginfod_error") +
				  h_summary_value(summary, "debuginfod_timeout"),
			  0, "no failure but not found");
	}
	free(summary);
	summary = NULL;
	snprintf(got, sizeof(got), "%s/debuginfod/%s/debuginfo", cache, id);
	ASSERT_EQ(access(got, R_OK), 0,
		  "the file kept under the cache directory's debuginfod/");
	kill(server, SIGTERM);
	h_wait(server, 10);

	/* the server down, a debuginfod cache without the file, and a
	 * store without its table (the same bytes as other tests' stripped
	 * copies: their table is in the default cache directory by file id) */
	setenv("DEBUGINFOD_CACHE_PATH", cache2, 1);
	wargv[0] = strcat(strcpy(got, dir), "/inline-dfd");
	strcat(cache2, "-store");
	{
		const char *extra[] = { "-inline-frames", "-cache-dir", cache2,
					NULL };

		rc = h_profile_workload(wargv, "6s", "999", extra, &f, &summary);
	}
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
	if (!ASSERT_EQ(rc, 0, "profiler exit code, server down")) {
		printf("%s\n", summary ? summary : "");
		free(summary);
		return;
	}
	plain = h_share(&f, "inline-dfd", "main;caller;leaf");
	inl = h_share(&f, "inline-dfd", "inlined_a") +
	      h_share(&f, "inline-dfd", "inlined_b");
	test_note("server down: %llu samples, main;caller;leaf %.2f%%, "
		  "inlined %.2f%%, error=%lld",
		  (unsigned long long)h_count_comm(&f, "inline-dfd"),
		  100 * plain, 100 * inl,
		  h_summary_value(summary, "debuginfod_error"));
	ASSERT_GE(h_count_comm(&f, "inline-dfd"), 1000, "samples");
	if (!ASSERT_GE(plain * 10000, 9900, "named from the ELF symbols"))
		h_dump_top(&f, "inline-dfd", 8);
	ASSERT_EQ(inl * 10000, 0, "no inline frames");
	ASSERT_GE(h_summary_value(summary, "debuginfod_error"), 1,
		  "the failed download counted");
	ASSERT_EQ(h_summary_value(summary, "debuginfod_fetched"), 0,
		  "nothing downloaded");
	free(summary);
	h_free_folded(&f);
}

/* pprof and OTLP: a machine frame with inlined functions is one Location
 * with several Lines, innermost first (caller's frame, at a return
 * address inside inlined_a's code: inlined_a, then caller), decoded by
 * protoc against the upstream protos. */
TEST_ROOT(inline_frames_one_location_many_lines)
{
	const char *extra[] = { "-inline-frames", NULL };
	static const char *const chains[] = { "inlined_a;caller",
					      "inlined_b;caller", NULL };

	h_workload_inlined("inline", extra, chains, NULL);
}
