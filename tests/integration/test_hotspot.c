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

/* tests/workloads/java/<name>.java compiled into a directory of the
 * test's own; NULL when javac failed. */
static const char *compile_java(const struct jdk *j, int idx, const char *name)
{
	static char dir[512];
	char cmd[1200];
	int st;

	snprintf(dir, sizeof(dir), "%s/hs-%s-%d", test_tmpdir(), name, idx);
	mkdir(dir, 0755);
	snprintf(cmd, sizeof(cmd), "%s/bin/javac -d %s %s/tests/workloads/java/%s.java",
		 j->home, dir, test_srcdir(), name);
	st = system(cmd);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? dir : NULL;
}

/* Run class (compiled from tests/workloads/java) under the JDK with flag
 * for 6 s of profile, into f.  false (after a SKIP note or a failed
 * assertion) when it could not. */
static bool profile_java(const struct jdk *j, int idx, const char *class,
			 const char *flag, struct folded *f, char **err)
{
	char java[512], cache[600];
	const char *dir;

	snprintf(java, sizeof(java), "%s/bin/java", j->home);
	if (access(java, X_OK)) {
		test_note("%s: SKIP, %s is not installed", j->name, java);
		return false;
	}
	dir = compile_java(j, idx, class);
	if (!ASSERT_NOT_NULL(dir, "javac"))
		return false;
	{
		char *argv[] = { java, (char *)flag, "-cp", (char *)dir,
				 (char *)class, "30", NULL };
		/* a cache of the test's own: the machine's may hold records
		 * of other builds, whose runtimes' kinds differ */
		const char *extra[] = { "-cache-dir", cache, NULL };

		snprintf(cache, sizeof(cache), "%s/hs-cache", test_tmpdir());
		if (!ASSERT_EQ(h_profile_workload(argv, "6s", HZ, extra, f, err), 0,
			       "profiler exit code")) {
			printf("%s\n", *err ? *err : "");
			return false;
		}
	}
	return true;
}

/* flag: the JVM's option; split: assert the split too.  Compiled frames
 * stand for the methods C1/C2 inlined into them (not expanded yet): the
 * split holds while each chain's first method keeps a frame of its own,
 * as Split's do (run calls three methods each looping ~1000 times). */
static void split_test(const struct jdk *j, int idx, const char *flag,
		       bool split)
{
	static const char *const chain[3] = { ";Split.heavy (Split.java",
					      ";Split.medium (Split.java",
					      ";Split.light (Split.java" };
	static const double want[3] = { 60, 30, 10 };
	uint64_t total = 0, complete = 0, n[3] = { 0 }, noline = 0;
	struct folded f = { 0 };
	char *err = NULL;
	int i, k;

	if (!profile_java(j, idx, "Split", flag, &f, &err))
		goto out;
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
		/* a Java frame of Split without its line */
		if (strstr(s, " (Split.java);") ||
		    (strlen(s) > 13 && !strcmp(s + strlen(s) - 13, " (Split.java)"))) {
			noline += c;
			if (getenv("HS_DUMP"))
				printf("noline %llu %s\n", (unsigned long long)c,
				       strstr(s, "Split.main") ? strstr(s, "Split.main") : s);
		}
	}
	if (getenv("HS_DUMP"))
		h_dump_top(&f, "java", 12);
	test_note("%s %s: %llu samples of the java thread, %.1f%% complete; heavy %.1f%% "
		  "medium %.1f%% light %.1f%%; %.1f%% with a frame without line; err_hotspot_read=%lld",
		  j->name, flag, (unsigned long long)total,
		  100.0 * complete / (total ? total : 1),
		  100.0 * n[0] / (total ? total : 1), 100.0 * n[1] / (total ? total : 1),
		  100.0 * n[2] / (total ? total : 1), 100.0 * noline / (total ? total : 1),
		  h_summary_value(err, "err_hotspot_read"));
	ASSERT_GE(total, 300, "samples");
	/* interpreted frames by their bcp, compiled ones by their PcDesc */
	ASSERT_LE(100 * noline, 5 * total, "<= 5% of stacks with a Split frame without line");
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

/* A comparator called from Arrays.sort (the JDK's TimSort, Java too):
 * the nested class' compare and a lambda's body, each under
 * Sort.sortAll;java.util.Arrays.sort, the lambda named by its hidden
 * class without its address. */
TEST_ROOT(hotspot_sort_comparator_and_lambda_xint)
{
	size_t j;

	for (j = 0; j < sizeof(jdks) / sizeof(jdks[0]); j++) {
		struct folded f = { 0 };
		char *err = NULL;
		uint64_t cmp = 0, cmp_ok = 0, lam = 0, lam_ok = 0;
		int i;

		if (!profile_java(&jdks[j], (int)j, "Sort", "-Xint", &f, &err))
			goto next;
		for (i = 0; i < f.n; i++) {
			const char *s = f.lines[i].stack, *a, *b, *c;
			uint64_t n = f.lines[i].count;

			if (strncmp(s, "java;", 5))
				continue;
			a = strstr(s, ";Sort.sortAll (Sort.java:");
			b = a ? strstr(a, ";java.util.Arrays.sort (Arrays.java:") : NULL;
			if ((c = strstr(s, ";Sort$ByWeight.compare (Sort.java:21)"))) {
				cmp += n;
				if (b && b < c && strstr(s, ";start_thread;"))
					cmp_ok += n;
			}
			if ((c = strstr(s, ";Sort.lambda$sortAll$0 (Sort.java:27)"))) {
				lam += n;
				if (b && b < c && strstr(s, "$$Lambda") &&
				    !strstr(s, "$$Lambda$1+0x") &&
				    !strstr(s, "$$Lambda+0x") &&
				    strstr(s, ";start_thread;"))
					lam_ok += n;
			}
		}
		test_note("%s: comparator %llu samples, %.1f%% under sortAll;Arrays.sort; "
			  "lambda %llu, %.1f%%",
			  jdks[j].name, (unsigned long long)cmp,
			  100.0 * cmp_ok / (cmp ? cmp : 1), (unsigned long long)lam,
			  100.0 * lam_ok / (lam ? lam : 1));
		ASSERT_GE(cmp, 200, "samples in the comparator");
		ASSERT_GE(lam, 200, "samples in the lambda");
		ASSERT_GE(10000 * cmp_ok / (cmp ? cmp : 1), 9500,
			  "the comparator between the right frames");
		if (!ASSERT_GE(10000 * lam_ok / (lam ? lam : 1), 9500,
			       "the lambda named, between the right frames"))
			h_dump_top(&f, "java", 6);
next:
		free(err);
		h_free_folded(&f);
	}
}
