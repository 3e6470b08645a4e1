// SPDX-License-Identifier: Apache-2.0
/*
 * HotSpot in the host kernel, on each JDK present (Debian's OpenJDK 17,
 * Temurin 25): tests/workloads/java/Split.java, compiled with the JDK's
 * javac, splits its thread's CPU time 60/30/10 over three method chains.
 * A stack is complete when its Java frames reach Split.main and its
 * native frames reach start_thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/types.h>

#include "../unit/test.h"
#include "harness.h"

#define HZ "499"

struct jdk {
	const char *name, *home;
};

static const struct jdk jdks[] = {
	{ "OpenJDK 17", "/usr/lib/jvm/java-17-openjdk-amd64" },
	{ "Temurin 25", "/usr/lib/jvm/temurin-25-jdk-amd64" },
};

/* Split.class into a directory of the test's own; NULL when javac
 * failed. */
static const char *compile_split(const struct jdk *j, int idx)
{
	static char dir[512];
	char cmd[1200];
	int st;

	snprintf(dir, sizeof(dir), "%s/hs-split-%d", test_tmpdir(), idx);
	mkdir(dir, 0755);
	snprintf(cmd, sizeof(cmd), "%s/bin/javac -d %s %s/tests/workloads/java/Split.java",
		 j->home, dir, test_srcdir());
	st = system(cmd);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? dir : NULL;
}

/* flag: the JVM's option; split: assert the split too.  Compiled frames
 * stand for the methods C1/C2 inlined into them (not expanded yet): the
 * split holds while each chain's first method keeps a frame of its own,
 * as Split's do (run calls three methods each looping ~1000 times). */
static void split_test(const struct jdk *j, int idx, const char *flag,
		       bool split)
{
	/* compiled frames have no line yet: "(Split.java)" */
	static const char *const chain[3] = { ";Split.heavy (Split.java",
					      ";Split.medium (Split.java",
					      ";Split.light (Split.java" };
	static const double want[3] = { 60, 30, 10 };
	uint64_t total = 0, complete = 0, n[3] = { 0 };
	struct folded f = { 0 };
	char java[512], *err = NULL;
	const char *dir;
	int i, k;

	snprintf(java, sizeof(java), "%s/bin/java", j->home);
	if (access(java, X_OK)) {
		test_note("%s: SKIP, %s is not installed", j->name, java);
		return;
	}
	dir = compile_split(j, idx);
	if (!ASSERT_NOT_NULL(dir, "javac Split.java"))
		return;
	{
		char *argv[] = { java, (char *)flag, "-cp", (char *)dir, "Split",
				 "30", NULL };
		/* a cache of the test's own: the machine's may hold records
		 * of other builds, whose runtimes' kinds differ */
		char cache[600];
		const char *extra[] = { "-cache-dir", cache, NULL };

		snprintf(cache, sizeof(cache), "%s/hs-cache", test_tmpdir());
		if (!ASSERT_EQ(h_profile_workload(argv, "6s", HZ, extra, &f, &err), 0,
			       "profiler exit code")) {
			printf("%s\n", err ? err : "");
			goto out;
		}
	}
	for (i = 0; i < f.n; i++) {
		const char *s = f.lines[i].stack;
		uint64_t c = f.lines[i].count;

		/* the Java main thread (the process' first thread, also
		 * "java", waits for it) */
		if (strncmp(s, "java;", 5))
			continue;
		total += c;
		if (strstr(s, ";start_thread;") &&
		    strstr(s, ";Split.main (Split.java"))
			complete += c;
		for (k = 0; k < 3; k++)
			if (strstr(s, chain[k]))
				n[k] += c;
	}
	if (getenv("HS_DUMP"))
		h_dump_top(&f, "java", 12);
	test_note("%s %s: %llu samples of the java thread, %.1f%% complete; heavy %.1f%% "
		  "medium %.1f%% light %.1f%%; err_hotspot_read=%lld",
		  j->name, flag, (unsigned long long)total,
		  100.0 * complete / (total ? total : 1),
		  100.0 * n[0] / (total ? total : 1), 100.0 * n[1] / (total ? total : 1),
		  100.0 * n[2] / (total ? total : 1),
		  h_summary_value(err, "err_hotspot_read"));
	ASSERT_GE(total, 300, "samples");
	if (!ASSERT_GE(10000 * complete / (total ? total : 1), 9500,
		       ">= 95% complete (Java to Split.main, native to start_thread)"))
		h_dump_top(&f, "java", 8);
	for (k = 0; split && k < 3; k++)
		ASSERT_LE(abs((int)(1000.0 * n[k] / (total ? total : 1)) -
			      (int)(10 * want[k])),
			  30, "the split within 3 points");
out:
	free(err);
	h_free_folded(&f);
}

TEST_ROOT(hotspot_split_60_30_10_xint)
{
	size_t i;

	for (i = 0; i < sizeof(jdks) / sizeof(jdks[0]); i++)
		split_test(&jdks[i], (int)i, "-Xint", true);
}

/* Default tiered compilation (the flag only fills the slot: the
 * collector plays no part): C1 and C2 code unwound by frame size. */
TEST_ROOT(hotspot_split_60_30_10_jit)
{
	size_t i;

	for (i = 0; i < sizeof(jdks) / sizeof(jdks[0]); i++)
		split_test(&jdks[i], (int)i, "-XX:+UseSerialGC", true);
}

TEST_ROOT(hotspot_split_60_30_10_jit_preserve_fp)
{
	size_t i;

	for (i = 0; i < sizeof(jdks) / sizeof(jdks[0]); i++)
		split_test(&jdks[i], (int)i, "-XX:+PreserveFramePointer", true);
}
