// SPDX-License-Identifier: Apache-2.0
/*
 * The interpreter interface, end to end, with the test runtime
 * (bpf/test_runtime.h, tests/workloads/fakert.c): a runtime that exists
 * only through its own files and its line in INTERPRETERS.  Its BPF
 * unwinder replaces each loop invocation's native frame by the function
 * the invocation runs; its module names them from process memory.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include "../unit/rep_fixture.h"
#include "../unit/test.h"
#include "harness.h"

#define HZ "999"
#define ALPHA "main (fakert:1);alpha (fakert:10);burn"
/* gamma: inlined into beta's code, a frame of its own (the interface's
 * inline chain) */
#define BETA "main (fakert:1);beta (fakert:20);gamma (fakert:30);burn"

static int profile_fakert(const char *tracers, struct folded *f, char **err)
{
	char *const wargv[] = { (char *)h_workload("fakert"), "30", NULL };
	const char *extra[] = { "-tracers", tracers, NULL };

	return h_profile_workload(wargv, "6s", HZ, extra, f, err);
}

TEST_ROOT(interp_test_runtime_frames)
{
	struct folded f = { 0 };
	char *err = NULL;
	uint64_t total, alpha, beta, loop = 0, entry;
	int rc = profile_fakert("native,test", &f, &err), i;

	if (!h_profiled(rc, err)) {
		goto out;
	}
	total = h_count_comm(&f, "fakert");
	alpha = h_count_with(&f, "fakert", ALPHA);
	beta = h_count_with(&f, "fakert", BETA);
	entry = h_count_with(&f, "fakert", "_start");
	for (i = 0; i < f.n; i++)
		if (!strncmp(f.lines[i].stack, "fakert;", 7) &&
		    strstr(f.lines[i].stack, "ep_fakert_eval"))
			loop += f.lines[i].count;
	test_note("samples %llu: alpha %.2f%%, beta %.2f%% (of the two: alpha "
		  "%.2f%%, expected 66.67%%), the loop's native frame left in "
		  "%.2f%%, reaching _start %.2f%%; err_test_read=%lld "
		  "err_test_magic=%lld",
		  (unsigned long long)total, 100.0 * alpha / (total ? total : 1),
		  100.0 * beta / (total ? total : 1),
		  100.0 * alpha / (alpha + beta ? alpha + beta : 1),
		  100.0 * loop / (total ? total : 1),
		  100.0 * entry / (total ? total : 1),
		  h_summary_value(err, "err_test_read"),
		  h_summary_value(err, "err_test_magic"));
	ASSERT_GE(total, 1000, "samples");
	if (!ASSERT_GE(100.0 * (alpha + beta) / (total ? total : 1), 97.0,
		       "the runtime's frames in place of its loop, in order"))
		h_dump_top(&f, "fakert", 8);
	ASSERT_GE(100.0 * entry / (total ? total : 1), 99.0,
		  "stacks go on below the runtime's frames to _start");
	ASSERT_LE(100.0 * loop / (total ? total : 1), 1.0,
		  "the loop's native frames are replaced");
	ASSERT_LE(abs((int)(10000.0 * alpha / (alpha + beta ? alpha + beta : 1)) -
		      6667), 300, "alpha:beta is 2:1 within 3 points");
	ASSERT_GE(h_summary_value(err, "err_test_read"), 0,
		  "the runtime's counters are in the summary");
out:
	free(err);
	h_free_folded(&f);
}

TEST_ROOT(interp_test_runtime_off_by_default)
{
	struct folded f = { 0 };
	char *err = NULL;
	uint64_t total, named;
	int rc = profile_fakert("all", &f, &err);

	if (!h_profiled(rc, err)) {
		goto out;
	}
	total = h_count_comm(&f, "fakert");
	named = h_count_with(&f, "fakert", "ep_fakert_eval;ep_fakert_eval;burn");
	test_note("samples %llu, %.2f%% with the loop's native frames",
		  (unsigned long long)total, 100.0 * named / (total ? total : 1));
	ASSERT_GE(total, 1000, "samples");
	ASSERT_EQ(h_count_with(&f, "fakert", "alpha (fakert:10)"), 0,
		  "no test-runtime frames unless -tracers names it");
	ASSERT_GE(100.0 * named / (total ? total : 1), 90.0,
		  "the loop shows as native frames");
	ASSERT_EQ(h_summary_value(err, "err_test_read"), 0,
		  "its unwinder never ran");
out:
	free(err);
	h_free_folded(&f);
}

/* pprof and OTLP: a runtime frame whose code inlined another is one
 * Location with several Lines, innermost first (beta's frame: gamma,
 * then beta), as a native frame's DWARF inline chain is; alpha's has one
 * line.  Decoded by protoc against the upstream protos. */
TEST_ROOT(interp_test_runtime_inline_chain_one_location)
{
	const char *extra[] = { "-tracers", "native,test", NULL };
	static const char *const chains[] = { "gamma;beta", NULL };

	h_workload_inlined("fakert", extra, chains, "alpha");
}
