// SPDX-License-Identifier: Apache-2.0
/*
 * HotSpot in the host kernel, on each JDK present (Debian's OpenJDK 17,
 * Temurin 25): tests/workloads/java/Split.java, compiled with the JDK's
 * javac, splits its thread's CPU time 60/30/10 over three method chains.
 * A stack is complete when its Java frames reach Split.main and its
 * native frames reach start_thread.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/types.h>

#include "../unit/rep_fixture.h"
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
	/* the sourcepath: classes a workload uses beside it (WhiteBox) */
	snprintf(cmd, sizeof(cmd), "%s/bin/javac -d %s -sourcepath %s/tests/workloads/java "
		 "%s/tests/workloads/java/%s.java",
		 j->home, dir, test_srcdir(), test_srcdir(), name);
	st = system(cmd);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? dir : NULL;
}

/* Run class (compiled from tests/workloads/java) under the JDK with flag
 * for 6 s of profile at hz, into r.  false (after a SKIP note or a failed
 * assertion) when it could not. */
static bool profile_java_hz(const struct jdk *j, int idx, const char *class,
			    const char *flag, const char *hz, struct h_run *r)
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
		/* flag: options separated by spaces, "%s" in them standing
		 * for the directory of the compiled classes */
		char flags[512], *argv[16], *tok, *save = NULL;
		const char *pct = strstr(flag, "%s");
		int n = 0;

		if (pct)
			snprintf(flags, sizeof(flags), "%.*s%s%s",
				 (int)(pct - flag), flag, dir, pct + 2);
		else
			snprintf(flags, sizeof(flags), "%s", flag);
		argv[n++] = java;
		for (tok = strtok_r(flags, " ", &save); tok && n < 10;
		     tok = strtok_r(NULL, " ", &save))
			argv[n++] = tok;
		argv[n++] = "-cp";
		argv[n++] = (char *)dir;
		argv[n++] = (char *)class;
		argv[n++] = "30";
		argv[n] = NULL;
		/* a cache of the test's own: the machine's may hold records
		 * of other builds, whose runtimes' kinds differ */
		const char *extra[] = { "-cache-dir", cache, NULL };

		snprintf(cache, sizeof(cache), "%s/hs-cache", test_tmpdir());
		if (!h_run_workload(argv, "6s", hz, extra, r))
			return false;
	}
	return true;
}

static bool profile_java(const struct jdk *j, int idx, const char *class,
			 const char *flag, struct h_run *r)
{
	return profile_java_hz(j, idx, class, flag, HZ, r);
}

/* The logical Java call chain of a folded stack: its frames whose names
 * begin with prefix, names only (no file, no line), joined by ';'.  The
 * same whether the JIT inlined methods or not, since a compiled frame
 * gives the methods inlined into it as frames of their own. */
static void java_chain(const char *s, const char *prefix, char *out, size_t n)
{
	size_t len = strlen(prefix), used = 0;
	const char *p = s, *e, *paren;

	out[0] = 0;
	while (p && *p) {
		e = strchr(p, ';');
		if (!e)
			e = p + strlen(p);
		if ((size_t)(e - p) > len && !strncmp(p, prefix, len)) {
			paren = memchr(p, ' ', (size_t)(e - p));
			if (!paren)
				paren = e;
			used += (size_t)snprintf(out + used, n - used, "%s%.*s",
						 used ? ";" : "", (int)(paren - p), p);
			if (used >= n)
				return;
		}
		p = *e ? e + 1 : NULL;
	}
}

/* Whether s is a sample of the Java main thread (the process' first
 * thread, also "java", waits for it): then counted in *total, and in
 * *complete when its native frames reach start_thread and it has the
 * frame main (";Class.main (Class.java..."). */
static bool java_main_thread(const char *s, uint64_t c, const char *main,
			     uint64_t *total, uint64_t *complete)
{
	if (strncmp(s, "java;", 5))
		return false;
	*total += c;
	if (strstr(s, ";start_thread;") && strstr(s, main))
		*complete += c;
	return true;
}

/* Whether stack s has a frame of file without its line: file as a
 * frame names it (" (Class.java)"), followed by ';' or the stack's end. */
static bool frame_without_line(const char *s, const char *file)
{
	const char *p = s;
	size_t n = strlen(file);

	while ((p = strstr(p, file))) {
		p += n;
		if (*p == ';' || !*p)
			return true;
	}
	return false;
}

/* flag: the JVM's option; split: assert the split too.  Each sample's
 * Split frames must form the logical chain -Xint shows
 * (main;run;X;XLeaf, then work or cpu below it): with tiered
 * compilation C2 inlines work and cpu into the leaves (and more into
 * run's OSR code), and the inlined methods come out as frames. */
static void split_test(const struct jdk *j, int idx, const char *flag,
		       bool split)
{
	static const char *const chain[3] = { "heavy", "medium", "light" };
	static const double want[3] = { 60, 30, 10 };
	uint64_t total = 0, complete = 0, n[3] = { 0 }, noline = 0;
	uint64_t logical = 0, below = 0;
	struct h_run r = { 0 };
	char jc[512], want_chain[128];
	const char *s;
	uint64_t c;
	int i, k;

	if (!profile_java(j, idx, "Split", flag, &r))
		goto out;
	h_for_each_line(&r.f, i, s, c) {
		size_t wl;

		if (!java_main_thread(s, c, ";Split.main (Split.java", &total,
				      &complete))
			continue;
		java_chain(s, "Split.", jc, sizeof(jc));
		for (k = 0; k < 3; k++) {
			snprintf(want_chain, sizeof(want_chain),
				 "Split.main;Split.run;Split.%s;Split.%sLeaf",
				 chain[k], chain[k]);
			wl = strlen(want_chain);
			if (strncmp(jc, want_chain, wl))
				continue;
			n[k] += c;
			if (!jc[wl] || !strcmp(jc + wl, ";Split.work") ||
			    !strcmp(jc + wl, ";Split.cpu"))
				logical += c;
			if (jc[wl])
				below += c;
		}
		if (getenv("HS_DUMP") && !strstr(jc, "Leaf"))
			printf("off-chain %llu %s\n", (unsigned long long)c, jc);
		/* a Java frame of Split without its line */
		if (frame_without_line(s, " (Split.java)")) {
			noline += c;
			if (getenv("HS_DUMP"))
				printf("noline %llu %s\n", (unsigned long long)c,
				       strstr(s, "Split.main") ? strstr(s, "Split.main") : s);
		}
	}
	if (getenv("HS_DUMP"))
		h_dump_top(&r.f, "java", 12);
	test_note("%s %s: %llu samples of the java thread, %.1f%% complete, %.1f%% "
		  "the logical chain, %.1f%% with work or cpu below the leaf; heavy %.1f%% "
		  "medium %.1f%% light %.1f%%; %.1f%% with a frame without line; err_hotspot_read=%lld",
		  j->name, flag, (unsigned long long)total,
		  h_pct(complete, total),
		  h_pct(logical, total),
		  h_pct(below, total),
		  h_pct(n[0], total), h_pct(n[1], total),
		  h_pct(n[2], total), h_pct(noline, total),
		  h_summary_value(r.err, "err_hotspot_read"));
	ASSERT_GE(total, 300, "samples");
	/* interpreted frames by their bcp, compiled ones by their PcDesc */
	ASSERT_LE(100 * noline, 5 * total, "<= 5% of stacks with a Split frame without line");
	if (!ASSERT_GE(h_pct(complete, total), 95.0,
		       ">= 95% complete (Java to Split.main, native to start_thread)"))
		h_dump_top(&r.f, "java", 8);
	ASSERT_GE(h_pct(logical, total), 95.0,
		  ">= 95% with the logical chain main;run;X;XLeaf[;work|;cpu], as -Xint");
	/* work and cpu are what the leaves run: inlined by C2, still
	 * frames of their own */
	ASSERT_GE(h_pct(below, total), 80.0,
		  ">= 80% with work or cpu below the leaf");
	if (split)
		h_assert_split(n, total, want);
out:
	h_run_free(&r);
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

/* Whether every frame between the frame at from and the one at to
 * (each pointing at its ';') is TimSort's (or Arrays', or names begin
 * with one of also), and at least one is TimSort's: the frames a
 * comparator is called through. */
static bool through_timsort(const char *from, const char *to,
			    const char *also)
{
	const char *p = strchr(from + 1, ';');
	bool timsort = false;

	for (; p && p < to; p = strchr(p + 1, ';')) {
		if (!strncmp(p, ";java.util.TimSort.", 19))
			timsort = true;
		else if (strncmp(p, ";java.util.Arrays.", 18) &&
			 strncmp(p, also, strlen(also)))
			return false;
	}
	return timsort;
}

/* A comparator called from Arrays.sort (the JDK's TimSort, Java too):
 * the nested class' compare and a lambda's body, each under
 * Sort.sortAll;java.util.Arrays.sort and TimSort's frames only, the
 * lambda named by its hidden class without its address.  Under default
 * flags C2 inlines the comparator into TimSort's binarySort and
 * mergeLo/Hi: the inlined methods still come out as those frames. */
/* min_samples: in each comparator; min_share: of the sort's samples in
 * the two comparators, percent; hz: the sampling rate. */
static void sort_test(const char *flag, const char *hz, uint64_t min_samples,
		      uint64_t min_share)
{
	size_t j;

	for (j = 0; j < sizeof(jdks) / sizeof(jdks[0]); j++) {
		uint64_t cmp = 0, cmp_ok = 0, lam = 0, lam_ok = 0, sorting = 0, n;
		struct h_run r = { 0 };
		const char *s, *a, *b, *c;
		int i;

		if (!profile_java_hz(&jdks[j], (int)j, "Sort", flag, hz, &r))
			goto next;
		h_for_each_line(&r.f, i, s, n) {

			if (strncmp(s, "java;", 5))
				continue;
			a = strstr(s, ";Sort.main (Sort.java:");
			a = a ? strstr(a, ";Sort.sortAll (Sort.java:") : NULL;
			b = a ? strstr(a, ";java.util.Arrays.sort (Arrays.java:") : NULL;
			if (b)
				sorting += n;
			if ((c = strstr(s, ";Sort$ByWeight.compare (Sort.java:21)"))) {
				cmp += n;
				/* through the bridge compare(Object, Object) */
				if (b && b < c && strstr(s, ";start_thread;") &&
				    through_timsort(b, c, ";Sort$ByWeight.compare (Sort.java:19)"))
					cmp_ok += n;
				else if (getenv("HS_DUMP"))
					printf("cmp off %llu %s\n", (unsigned long long)n,
					       b ? b : s);
			}
			if ((c = strstr(s, ";Sort.lambda$sortAll$0 (Sort.java:27)"))) {
				lam += n;
				if (b && b < c && strstr(s, "$$Lambda") &&
				    !strstr(s, "$$Lambda$1+0x") &&
				    !strstr(s, "$$Lambda+0x") &&
				    strstr(s, ";start_thread;") &&
				    through_timsort(b, c, ";Sort$$Lambda"))
					lam_ok += n;
				else if (getenv("HS_DUMP"))
					printf("lam off %llu %s\n", (unsigned long long)n,
					       b ? b : s);
			}
		}
		test_note("%s %s: comparator %llu samples, %.1f%% under sortAll;Arrays.sort "
			  "through TimSort; lambda %llu, %.1f%%; the two %.1f%% of the %llu "
			  "samples under Arrays.sort",
			  jdks[j].name, flag, (unsigned long long)cmp,
			  h_pct(cmp_ok, cmp), (unsigned long long)lam,
			  h_pct(lam_ok, lam),
			  h_pct(cmp + lam, sorting),
			  (unsigned long long)sorting);
		ASSERT_GE(100 * (cmp + lam), min_share * sorting,
			  "the comparators' share of the sort");
		ASSERT_GE(cmp, min_samples, "samples in the comparator");
		ASSERT_GE(lam, min_samples, "samples in the lambda");
		ASSERT_GE(h_pct(cmp_ok, cmp), 95.0,
			  "the comparator between the right frames");
		if (!ASSERT_GE(h_pct(lam_ok, lam), 95.0,
			       "the lambda named, between the right frames") ||
		    getenv("HS_DUMP"))
			h_dump_top(&r.f, "java", 6);
next:
		h_run_free(&r);
	}
}

TEST_ROOT(hotspot_sort_comparator_and_lambda_xint)
{
	sort_test("-Xint", HZ, 200, 70);
}

/* Default tiered compilation (the flag only fills the slot).  C2 keeps
 * debug information only at calls and safepoints: a leaf pc inside the
 * comparator it inlined (weight's loop) is named by the next PcDesc,
 * often TimSort's own, so fewer samples land in the comparator; those
 * that do must sit between the right frames.  Sampled at 999 Hz: at 499
 * the comparator's few samples (2-8% of the sort's) came as low as 29 in
 * a whole-suite run, short of the 30 the share needs to mean anything. */
TEST_ROOT(hotspot_sort_comparator_and_lambda_jit)
{
	sort_test("-XX:+UseSerialGC", "999", 30, 0);
}

/* With debug information at every pc (what JFR and async-profiler turn
 * on), the leaf is exact: the comparators and weight, inlined into
 * TimSort, hold the sort's time again. */
TEST_ROOT(hotspot_sort_comparator_and_lambda_jit_debug_nonsafepoints)
{
	sort_test("-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints", HZ,
		  50, 70);
}

/* Deoptimization: Deopt.java's second thread deoptimizes every compiled
 * method every 50 ms (the WhiteBox API), so the main thread's compiled
 * frames keep returning through their nmethods' deopt handlers into the
 * interpreter and being compiled again.  A frame whose return address
 * is its deopt handler is still unwound by its nmethod's frame size and
 * named by its own method; the stacks stay whole. */
TEST_ROOT(hotspot_deopt_whitebox)
{
	size_t j;

	for (j = 0; j < sizeof(jdks) / sizeof(jdks[0]); j++) {
		uint64_t total = 0, complete = 0, logical = 0, deopt = 0, n;
		struct h_run r = { 0 };
		char jc[512];
		const char *s;
		int i;

		if (!profile_java(&jdks[j], (int)j, "Deopt",
				  "-XX:+UnlockDiagnosticVMOptions -XX:+WhiteBoxAPI "
				  "-XX:-DisplayVMOutput -Xbootclasspath/a:%s",
				  &r))
			goto next;
		h_for_each_line(&r.f, i, s, n) {
			if (!java_main_thread(s, n, ";Deopt.main (Deopt.java:",
					      &total, &complete))
				continue;
			java_chain(s, "Deopt.", jc, sizeof(jc));
			if (!strcmp(jc, "Deopt.main;Deopt.run;Deopt.spin") ||
			    !strcmp(jc, "Deopt.main;Deopt.run;Deopt.spin;Deopt.leaf"))
				logical += n;
			else if (getenv("HS_DUMP"))
				printf("off %llu %s\n", (unsigned long long)n,
				       strstr(s, "start_thread") ? strstr(s, "start_thread") : s);
			/* in the deopt blob, or returning into a deopt
			 * handler (a Deopt frame without line) */
			if (strstr(s, ";[stub: DeoptimizationBlob]") ||
			    frame_without_line(s, " (Deopt.java)"))
				deopt += n;
		}
		if (getenv("HS_DUMP"))
			h_dump_top(&r.f, "java", 10);
		test_note("%s: %llu samples of the java thread, %.1f%% complete, %.1f%% "
			  "main;run;spin[;leaf], %.1f%% deoptimizing; err_hotspot_read=%lld",
			  jdks[j].name, (unsigned long long)total,
			  h_pct(complete, total),
			  h_pct(logical, total),
			  h_pct(deopt, total),
			  h_summary_value(r.err, "err_hotspot_read"));
		ASSERT_GE(total, 100, "samples");
		ASSERT_GE(h_pct(complete, total), 95.0,
			  ">= 95% complete (Java to Deopt.main, native to start_thread)");
		ASSERT_GE(h_pct(logical, total), 90.0,
			  ">= 90% with the logical chain main;run;spin[;leaf]");
next:
		h_run_free(&r);
	}
}

/* pprof and OTLP: a compiled frame whose code inlined other methods is
 * one Location with a Line each, innermost first, as a native frame's
 * DWARF inline chain is (decoded by protoc against the upstream protos):
 * C2 inlines work into each leaf of Split's chains. */
static void leaf_inlines_work(const char *kind, const char *decoded,
			      const void *ctx)
{
	(void)kind;
	(void)ctx;
	ASSERT_TRUE(strstr(decoded, "inline=Split.work;Split.heavyLeaf\n") ||
		    strstr(decoded, "inline=Split.work;Split.mediumLeaf\n") ||
		    strstr(decoded, "inline=Split.work;Split.lightLeaf\n"),
		    "a leaf's Location: work, then the leaf");
}

TEST_ROOT(hotspot_inline_chain_one_location)
{
	size_t j;

	if (!fix_upstream_protos()) {
		test_skip("no upstream .proto files (run 'make deps' as root)");
		return;
	}
	for (j = 0; j < sizeof(jdks) / sizeof(jdks[0]); j++) {
		char java[512], cache[600];
		const char *dir;
		pid_t w;

		snprintf(java, sizeof(java), "%s/bin/java", jdks[j].home);
		if (access(java, X_OK)) {
			test_note("%s: SKIP, %s is not installed", jdks[j].name, java);
			continue;
		}
		dir = compile_java(&jdks[j], (int)j, "Split");
		if (!ASSERT_NOT_NULL(dir, "javac"))
			continue;
		snprintf(cache, sizeof(cache), "%s/hs-cache", test_tmpdir());
		{
			char *wargv[] = { java, "-cp", (char *)dir, "Split", "30",
					  NULL };
			const char *extra[] = { "-cache-dir", cache, NULL };

			w = h_spawn(wargv);
			/* C2 compiles the leaves within a second or two */
			sleep(3);
			if (ASSERT_GT(w, 0, "java started")) {
				h_each_decoded(w, extra, leaf_inlines_work, NULL);
				kill(w, SIGKILL);
				h_wait(w, 5);
			}
		}
	}
}
