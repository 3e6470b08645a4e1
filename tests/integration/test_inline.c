// SPDX-License-Identifier: Apache-2.0
/*
 * Inline frames from DWARF (issue 23), in the host kernel: the inline
 * workload (-O2 -g) spends 60% of its CPU time under inlined_a and 40%
 * under inlined_b, both folded into caller; with -inline-frames each
 * sample's stack names the inlined function it was in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../unit/test.h"
#include "harness.h"

TEST_ROOT(inline_frames_split)
{
	char *wargv[] = { (char *)h_workload("inline"), "12", NULL };
	const char *extra[] = { "-inline-frames", NULL };
	const char *comm = "inline";
	double a, b, ab;
	struct folded f;
	char *err = NULL;
	int rc;

	if (access(wargv[0], X_OK)) {
		test_skip("inline not built: see the workloads build");
		return;
	}
	rc = h_profile_workload(wargv, "6s", "999", extra, &f, &err);
	if (!ASSERT_EQ(rc, 0, "profiler exit code"))
		printf("%s\n", err ? err : "");
	free(err);
	if (rc)
		return;
	ASSERT_GE(h_count_comm(&f, comm), 1500, "samples");
	a = h_share(&f, comm, "main;caller;inlined_a;leaf");
	b = h_share(&f, comm, "main;caller;inlined_b;leaf");
	ab = a + b;
	test_note("%llu samples: inlined_a %.1f%% (want 60), inlined_b %.1f%% "
		  "(want 40), both %.2f%%",
		  (unsigned long long)h_count_comm(&f, comm), 100 * a, 100 * b,
		  100 * ab);
	if (!ASSERT_GE(ab * 10000, 9900, "stacks through an inlined function"))
		h_dump_top(&f, comm, 8);
	if (ab > 0)
		ASSERT_NEAR(100 * a / ab, 60, 3, "inlined_a's share");
	h_free_folded(&f);
}
