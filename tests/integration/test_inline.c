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

/* Profile bin (its comm: comm) with -inline-frames: the 60/40 split
 * through the inlined functions. */
static void split_check(const char *bin, const char *comm)
{
	char *wargv[] = { (char *)bin, "12", NULL };
	const char *extra[] = { "-inline-frames", NULL };
	double a, b, ab;
	struct folded f;
	char *err = NULL;
	int rc;

	rc = h_profile_workload(wargv, "6s", "999", extra, &f, &err);
	if (!ASSERT_EQ(rc, 0, "profiler exit code"))
		printf("%s\n", err ? err : "");
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
	p = popen(cmd, "r");
	id[0] = 0;
	if (p) {
		if (!fgets(id, sizeof(id), p))
			id[0] = 0;
		pclose(p);
	}
	id[strcspn(id, "\n")] = 0;
	if (strlen(id) < 4) {
		test_skip("the inline workload has no build id");
		return;
	}
	snprintf(bid_dir, sizeof(bid_dir), "/usr/lib/debug/.build-id/%.2s", id);
	snprintf(bid_file, sizeof(bid_file), "%s/%s.debug", bid_dir, id + 2);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp %s/inline.debug %s",
		 bid_dir, dir, bid_file);
	if (!ASSERT_EQ(system(cmd), 0, "debug file under the build-id directory"))
		return;
	split_check(strcat(strcpy(cmd, dir), "/inline-bid"), "inline-bid");
	unlink(bid_file);
	rmdir(bid_dir); /* only when the test made it (else not empty) */
}

/* pprof and OTLP: a machine frame with inlined functions is one Location
 * with several Lines, innermost first (caller's frame, at a return
 * address inside inlined_a's code: inlined_a, then caller), decoded by
 * protoc against the upstream protos. */
static void one_location_many_lines(const char *kind, const char *decoded)
{
	(void)kind;
	ASSERT_TRUE(strstr(decoded, "inline=inlined_a;caller\n"),
		    "inlined_a's Location: inlined_a, then caller");
	ASSERT_TRUE(strstr(decoded, "inline=inlined_b;caller\n"),
		    "inlined_b's Location: inlined_b, then caller");
}

TEST_ROOT(inline_frames_one_location_many_lines)
{
	const char *bin = h_workload("inline");
	const char *extra[] = { "-inline-frames", NULL };

	if (access(bin, X_OK)) {
		test_skip("inline not built: see the workloads build");
	} else if (!fix_upstream_protos()) {
		test_skip("no upstream .proto files (run 'make deps' as root)");
	} else {
		char *wargv[] = { (char *)bin, "20", NULL };
		pid_t w = h_spawn(wargv);

		usleep(200000);
		if (w > 0) {
			h_each_decoded(w, extra, one_location_many_lines);
			kill(w, SIGKILL);
			h_wait(w, 5);
		}
	}
}
