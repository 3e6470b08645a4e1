// SPDX-License-Identifier: Apache-2.0
/*
 * Native unwinding without frame pointers, in the host kernel: workloads
 * built with -O2 -fomit-frame-pointer (and Debian's libc, which has no
 * frame pointers), each with a known stack.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/types.h>

#include "../unit/test.h"
#include "profiler.h"
#include "harness.h"

#define HZ "999"

/* Profile a workload; on failure print the profiler's stderr. */
static bool profile(char *const wargv[], const char *duration, struct folded *f)
{
	char *err = NULL;
	int rc = h_profile_workload(wargv, duration, HZ, NULL, f, &err);

	if (!ASSERT_EQ(rc, 0, "profiler exit code"))
		printf("%s\n", err ? err : "");
	free(err);
	return rc == 0;
}

/* Report and check the share of samples with needle. */
static void check_share(const struct folded *f, const char *comm,
			const char *needle, double min, const char *what)
{
	double s = h_share(f, comm, needle);

	test_note("%s: %.2f%% of %llu samples have \"%s\"", what, 100 * s,
		  (unsigned long long)h_count_comm(f, comm), needle);
	if (!ASSERT_GE(s * 10000, min * 10000, what))
		h_dump_top(f, comm, 8);
}

static void split_test(const char *bin, const char *comm)
{
	char root[64], chain[3][64];
	char *wargv[] = { (char *)h_workload(bin), "12", NULL };
	const char *names[3] = { "a", "b", "c" };
	const double want[3] = { 60, 30, 10 };
	struct folded f;
	uint64_t total;
	int i;

	if (!profile(wargv, "6s", &f))
		return;
	total = h_count_comm(&f, comm);
	ASSERT_GE(total, 1500, "samples");
	snprintf(root, sizeof(root), "%s;_start", comm);
	check_share(&f, comm, root, 0.99, "reach the process entry (_start)");
	check_share(&f, comm, "main", 0.99, "reach main");
	for (i = 0; i < 3; i++) {
		double s;

		snprintf(chain[i], sizeof(chain[i]), "main;chain_%s;mid_%s;leaf_%s",
			 names[i], names[i], names[i]);
		s = 100 * h_share(&f, comm, chain[i]);
		test_note("chain_%s: %.1f%% (want %.0f)", names[i], s, want[i]);
		ASSERT_NEAR(s, want[i], 3, chain[i]);
	}
	h_free_folded(&f);
}

TEST_ROOT(native_split_pie)
{
	split_test("split-nofp-pie", "split-nofp-pie");
}

TEST_ROOT(native_split_nopie)
{
	split_test("split-nofp-nopie", "split-nofp-nopi");
}

TEST_ROOT(native_split_static)
{
	split_test("split-nofp-static", "split-nofp-stat");
}

TEST_ROOT(native_qsort_comparator_crosses_libc)
{
	char *wargv[] = { (char *)h_workload("qsort"), "10", NULL };
	struct folded f;

	if (!profile(wargv, "4s", &f))
		return;
	ASSERT_GE(h_count_with(&f, "qsort", "compare;weigh"), 500,
		  "samples in the comparator");
	check_share(&f, "qsort", "qsort;_start", 0.99, "reach _start");
	check_share(&f, "qsort", "main;sort_rounds", 0.99, "reach main");
	/* the comparator's callers are libc's sort internals, then main */
	{
		uint64_t cmp = h_count_with(&f, "qsort", "compare"), both = 0;
		int i;

		for (i = 0; i < f.n; i++)
			if (strstr(f.lines[i].stack, ";main;sort_rounds;") &&
			    h_count_frame(f.lines[i].stack, "compare"))
				both += f.lines[i].count;
		test_note("comparator samples: %llu, with main;sort_rounds below: %llu",
			  (unsigned long long)cmp, (unsigned long long)both);
		ASSERT_GE(both * 100, cmp * 99, "comparator stacks cross libc to main");
	}
	h_free_folded(&f);
}

TEST_ROOT(native_signal_handler_crosses_trampoline)
{
	char *wargv[] = { (char *)h_workload("signal"), "10", NULL };
	struct folded f;
	uint64_t work, full = 0;
	int i;

	if (!profile(wargv, "4s", &f))
		return;
	work = h_count_with(&f, "signal", "handler;handler_work");
	for (i = 0; i < f.n; i++) {
		const char *s = f.lines[i].stack;
		if (h_count_frame(s, "handler_work") &&
		    strstr(s, "signal;_start;") && strstr(s, ";main;wait_loop;"))
			full += f.lines[i].count;
	}
	test_note("handler samples: %llu, complete through the trampoline: %llu",
		  (unsigned long long)work, (unsigned long long)full);
	ASSERT_GE(work, 300, "samples in the handler");
	ASSERT_GE(full * 100, work * 98,
		  "handler stacks go on through the signal frame to main and _start");
	if (full * 100 < work * 98)
		h_dump_top(&f, "signal", 8);
	h_free_folded(&f);
}

/* Recursion depth deep: every frame is kept, down to _start. */
static void recursion_test(int depth)
{
	char depth_s[16];
	char *wargv[] = { (char *)h_workload("recurse"), "10", depth_s, NULL };
	struct folded f;
	uint64_t burn = 0, deep = 0;
	int i, maxd = 0;

	snprintf(depth_s, sizeof(depth_s), "%d", depth);
	if (!profile(wargv, "3s", &f))
		return;
	for (i = 0; i < f.n; i++) {
		const char *s = f.lines[i].stack;
		int d = h_count_frame(s, "recurse");

		if (!h_count_frame(s, "burn"))
			continue;
		burn += f.lines[i].count;
		if (d > maxd)
			maxd = d;
		if (d == depth && strstr(s, "recurse;_start;") &&
		    strstr(s, ";main;recurse"))
			deep += f.lines[i].count;
	}
	test_note("samples in burn: %llu, with all %d frames and _start: %llu (max depth seen %d)",
		  (unsigned long long)burn, depth, (unsigned long long)deep, maxd);
	ASSERT_GE(burn, 1000, "samples");
	ASSERT_GE(deep * 100, burn * 99, "all recursion frames");
	h_free_folded(&f);
}

TEST_ROOT(native_recursion_300_deep)
{
	recursion_test(300);
}

/* The frame limit: 1000 frames of recursion are all kept (the reference
 * agent stops near 145). */
TEST_ROOT(native_recursion_1000_deep)
{
	recursion_test(1000);
}

TEST_ROOT(native_threads_end_in_clone3)
{
	char *wargv[] = { (char *)h_workload("threads"), "10", NULL };
	struct folded f;

	if (!profile(wargv, "3s", &f))
		return;
	ASSERT_GE(h_count_with(&f, "threads", "thread_burn"), 1000, "samples");
	/* glibc 2.34+ creates threads with clone3 (symbol __clone3) */
	check_share(&f, "threads", "threads;__clone3;start_thread;thread_main;thread_burn",
		    0.99, "thread stacks root at clone3;start_thread");
	h_free_folded(&f);
}

TEST_ROOT(native_dlopen_after_start)
{
	char lib[512];
	char *wargv[] = { (char *)h_workload("dlopen"), "6", "1.5", lib, NULL };
	struct folded f;
	uint64_t in, full = 0;
	int i;

	snprintf(lib, sizeof(lib), "%s", h_workload("libplugin.so"));
	if (!profile(wargv, "5s", &f))
		return;
	in = h_count_with(&f, "dlopen", "plugin_inner");
	for (i = 0; i < f.n; i++)
		if (strstr(f.lines[i].stack, "dlopen;_start;") &&
		    strstr(f.lines[i].stack, ";main;run_plugin;plugin_burn;plugin_inner"))
			full += f.lines[i].count;
	test_note("samples in the library: %llu, complete: %llu",
		  (unsigned long long)in, (unsigned long long)full);
	ASSERT_GE(in, 1000, "samples in the dlopen'ed library");
	ASSERT_GE(full * 100, in * 97, "complete, named stacks through the new library");
	if (full * 100 < in * 97)
		h_dump_top(&f, "dlopen", 8);
	h_free_folded(&f);
}

TEST_ROOT(native_cxx_sort_lambda_and_exceptions)
{
	char *wargv[] = { (char *)h_workload("cxx"), "10", NULL };
	struct folded f;
	uint64_t lambda, throws;
	int i;

	if (!profile(wargv, "4s", &f))
		return;
	/* the lambda is inlined into std::sort's helpers, whose demangled
	 * names carry its type */
	lambda = 0;
	for (i = 0; i < f.n; i++)
		if (strstr(f.lines[i].stack, ";main;sort_phase(") &&
		    strstr(f.lines[i].stack, "{lambda(unsigned int, unsigned int)#1}"))
			lambda += f.lines[i].count;
	throws = h_count_with(&f, "cxx", "throw_phase(double)");
	test_note("samples: lambda %llu, exception phase %llu",
		  (unsigned long long)lambda, (unsigned long long)throws);
	ASSERT_GE(lambda, 500, "samples in std::sort with the lambda (demangled)");
	ASSERT_GE(throws, 200, "samples in the exception phase");
	check_share(&f, "cxx", "cxx;_start", 0.99, "reach _start");
	check_share(&f, "cxx", "main", 0.99, "reach main");
	ASSERT_GE(h_count_with(&f, "cxx", "_Unwind_RaiseException"), 20,
		  "stacks through the unwinder (libgcc_s)");
	h_free_folded(&f);
}

/* A Go stack is complete when it starts at a goroutine's or thread's
 * entry: runtime.goexit (goroutines), runtime.mstart or rt0_go (threads). */
static uint64_t go_complete(const struct folded *f, const char *comm)
{
	/* .symtab names assembly functions with their ABI (".abi0");
	 * .gopclntab, all a stripped binary has, does not */
	static const char *const roots[] = { "runtime.goexit.abi0",
					     "runtime.mstart.abi0",
					     "runtime.rt0_go.abi0", "runtime.goexit",
					     "runtime.mstart", "runtime.rt0_go" };
	char pat[64];
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(pat, sizeof(pat), "%s;%s", comm, roots[i]);
		n += h_count_with(f, comm, pat);
	}
	return n;
}

static void go_split(const char *bin)
{
	char *wargv[] = { (char *)h_workload(bin), "12", NULL };
	const char *chains[3] = { "main.main;main.chainA;main.midA;main.leafA",
				  "main.main;main.chainB;main.midB;main.leafB",
				  "main.main;main.chainC;main.midC;main.leafC" };
	const double want[3] = { 60, 30, 10 };
	uint64_t total, in_main, complete;
	char comm[16];
	struct folded f;
	int i;

	if (access(wargv[0], X_OK)) {
		test_skip("%s not built (no golang-1.19)", bin);
		return;
	}
	snprintf(comm, sizeof(comm), "%s", bin);
	if (!profile(wargv, "6s", &f))
		return;
	total = h_count_comm(&f, comm);
	in_main = h_count_with(&f, comm, "runtime.main;main.main");
	complete = go_complete(&f, comm);
	test_note("samples %llu, complete %.2f%%, under main.main %.2f%%",
		  (unsigned long long)total, 100.0 * complete / (total ? total : 1),
		  100.0 * in_main / (total ? total : 1));
	ASSERT_GE(total, 1500, "samples");
	if (!ASSERT_GE(complete * 100, total * 99,
		       "stacks start at runtime.goexit/mstart/rt0_go"))
		h_dump_top(&f, comm, 8);
	/* the runtime's own threads (sysmon, GC) are not under main.main */
	ASSERT_GE(in_main * 100, total * 95, "the main goroutine dominates");
	for (i = 0; i < 3; i++) {
		double s = 100.0 * h_count_with(&f, comm, chains[i]) /
			   (in_main ? in_main : 1);

		test_note("%s: %.1f%% (want %.0f)", chains[i] + 10, s, want[i]);
		ASSERT_NEAR(s, want[i], 3, chains[i]);
	}
	/* the frameless leaf keeps its caller */
	{
		uint64_t mix = h_count_with(&f, comm, "main.mix"), ok = 0;

		ok += h_count_with(&f, comm, "main.leafA;main.mix");
		ok += h_count_with(&f, comm, "main.leafB;main.mix");
		ok += h_count_with(&f, comm, "main.leafC;main.mix");
		test_note("in the frameless leaf main.mix: %llu, with its caller: %llu",
			  (unsigned long long)mix, (unsigned long long)ok);
		ASSERT_GE(mix, 500, "samples in main.mix");
		ASSERT_GE(ok * 100, mix * 99, "main.mix under its caller");
	}
	h_free_folded(&f);
}

TEST_ROOT(native_go_split)
{
	go_split("go-split");
}

TEST_ROOT(native_go_split_stripped)
{
	go_split("go-split-stripped");
}

/* Processes that start after the profiler and live 0.2 s. */
TEST_ROOT(native_short_lived_processes)
{
	char out[512], errp[512], *err = NULL;
	const char *args[] = { "-duration", "30s", "-samples-per-second", HZ,
			       "-output", out, "-v", NULL };
	double cpu = 0;
	struct folded f;
	uint64_t got, full;
	pid_t prof;
	int i, status;

	snprintf(out, sizeof(out), "%s/short.folded", test_tmpdir());
	snprintf(errp, sizeof(errp), "%s/short.err", test_tmpdir());
	prof = h_profile_started(args, errp, 60);
	if (!ASSERT_GT(prof, 0, "profiler started"))
		return;
	for (i = 0; i < 20; i++) {
		char *wargv[] = { (char *)h_workload("short"), "0.2", NULL };
		struct rusage ru;
		pid_t w = h_spawn(wargv);

		if (w < 0 || wait4(w, &status, 0, &ru) != w)
			break;
		cpu += ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
		       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	}
	kill(prof, SIGTERM);
	status = h_wait(prof, 60);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "profiler exit");
	if (!ASSERT_OK(h_read_folded(out, &f), "read output"))
		return;
	got = h_count_comm(&f, "short");
	full = h_count_with(&f, "short", "short;_start");
	{
		uint64_t named = 0;
		int j;

		for (j = 0; j < f.n; j++)
			if (!strncmp(f.lines[j].stack, "short;_start;", 13) &&
			    strstr(f.lines[j].stack, ";main;short_work;short_leaf"))
				named += f.lines[j].count;
		full = named;
	}
	test_note("20 processes of 0.2 s: %.2f CPU s, expected %.0f samples at %s Hz, "
		  "got %llu (%.1f%%), complete %llu (%.1f%%)",
		  cpu, cpu * atoi(HZ), HZ, (unsigned long long)got,
		  100.0 * got / (cpu * atoi(HZ)), (unsigned long long)full,
		  100.0 * full / (cpu * atoi(HZ)));
	ASSERT_GE(full, 0.9 * cpu * atoi(HZ),
		  ">= 90% of their CPU time in the profile with complete stacks");
	if (full < 0.9 * cpu * atoi(HZ))
		h_dump_top(&f, "short", 8);
	h_free_folded(&f);
	free(err);
}

/* ---- a large C++ program: clang -O2 --------------------------------------
 * clang's cc1 runs in libclang-cpp and libLLVM, about 2 M rows of stack
 * deltas between them (issue 14: they did not fit in the old fixed array,
 * and every clang stack stopped at its first frame). */

#define CLANG "/usr/bin/clang-14"

/* A C file of n functions that keeps clang -O2 busy for seconds. */
static bool write_big_c(const char *path, int n)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f)
		return false;
	for (i = 0; i < n; i++) {
		fprintf(f,
			"int f%d(int *a, int n, int k)\n{\n\tint s = %d;\n"
			"\tfor (int j = 0; j < n; j++) {\n"
			"\t\tswitch ((a[j] + k) & 7) {\n"
			"\t\tcase 0: s += a[j] * %d; break;\n"
			"\t\tcase 1: s ^= a[j] << %d; break;\n"
			"\t\tcase 2: s -= a[(j + %d) %% n]; break;\n"
			"\t\tcase 3: if (s > a[j]) s = s / 3 + a[j]; else s *= 5; break;\n",
			i, i, i % 13 + 1, i % 5, i % 7);
		if (i)
			fprintf(f, "\t\tdefault: s += f%d(a, n / 2, k + 1);\n", i - 1);
		else
			fprintf(f, "\t\tdefault: s += k;\n");
		fprintf(f, "\t\t}\n\t}\n\treturn s;\n}\n\n");
	}
	return fclose(f) == 0;
}

/* Profile clang -O2 compiling a large file, by pid, with extra flags;
 * the profiler's stderr in *err, and with metrics the /metrics text 4 s
 * into the run.  Returns the profiler's exit code, or -1 when clang is
 * missing (skipped) or did not start. */
static int profile_clang(const char *const *extra, struct folded *f, char **err,
			 char **metrics)
{
	char src[512], obj[512], out[512], cache[512], errp[512], port[16];
	const char *args[32] = { "-duration", "8s", "-samples-per-second", "99",
				 "-cache-dir", cache, "-output", out };
	char *cargv[] = { CLANG, "-O2", "-fintegrated-cc1", "-c", src, "-o",
			  obj, NULL };
	char pid[16];
	pid_t c, d;
	int n = 8, rc = -1, status;

	*err = NULL;
	if (access(CLANG, X_OK)) {
		test_skip("%s is not installed (apt-get install clang-14)", CLANG);
		return -1;
	}
	snprintf(src, sizeof(src), "%s/big.c", test_tmpdir());
	snprintf(obj, sizeof(obj), "%s/big.o", test_tmpdir());
	snprintf(out, sizeof(out), "%s/clang.folded", test_tmpdir());
	snprintf(cache, sizeof(cache), "%s/cache", test_tmpdir());
	snprintf(errp, sizeof(errp), "%s/clang-profiler.err", test_tmpdir());
	snprintf(port, sizeof(port), "%d", h_free_port());
	/* 3000 functions: about 17 CPU s of -O2 here, longer than the
	 * profile even on an idle machine */
	if (!ASSERT_TRUE(write_big_c(src, 3000), "write big.c"))
		return -1;
	c = h_spawn(cargv);
	if (!ASSERT_GT(c, 0, "clang started"))
		return -1;
	usleep(300000); /* its libraries mapped */
	snprintf(pid, sizeof(pid), "%d", (int)c);
	args[n++] = "-pid";
	args[n++] = pid;
	if (metrics) {
		args[n++] = "-metrics-address";
		args[n++] = port;
	}
	while (extra && *extra && n < 31)
		args[n++] = *extra++;
	args[n] = NULL;
	d = h_profile_bg(args, errp);
	if (d > 0 && metrics) {
		sleep(4); /* started, files loaded, sampling */
		h_http_get(atoi(port), "/metrics", metrics);
	}
	status = d > 0 ? h_wait(d, 120) : -1;
	if (status >= 0 && WIFEXITED(status))
		rc = WEXITSTATUS(status);
	*err = h_slurp(errp);
	kill(c, SIGKILL);
	h_wait(c, 10);
	if (rc == 0 && !ASSERT_OK(h_read_folded(out, f), "read output"))
		rc = -1;
	return rc;
}

/* A profile of clang and its summary's numbers. */
struct clang_run {
	struct folded f;
	char *err, *metrics;
	long long samples, complete, rows, rows_full;
};

/* profile_clang() and the summary read; false when skipped or the
 * profiler failed (its stderr printed).  clang_run_free() after. */
static bool run_clang(const char *const *extra, bool metrics,
		      struct clang_run *r)
{
	const char *summary;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = profile_clang(extra, &r->f, &r->err, metrics ? &r->metrics : NULL);
	if (rc < 0 && test_skipped())
		return false;
	if (!ASSERT_EQ(rc, 0, "profiler exit code")) {
		printf("%s\n", r->err ? r->err : "");
		return false;
	}
	summary = strstr(r->err, "samples=") ? strstr(r->err, "samples=") : "";
	r->samples = h_summary_value(summary, "samples");
	r->complete = h_summary_value(summary, "complete");
	r->rows = h_summary_value(summary, "rows");
	r->rows_full = h_summary_value(summary, "rows_full");
	test_note("%lld samples, %lld complete (%.2f%%), rows=%lld, rows_full=%lld",
		  r->samples, r->complete,
		  r->samples > 0 ? 100.0 * r->complete / r->samples : 0.0,
		  r->rows, r->rows_full);
	return true;
}

static void clang_run_free(struct clang_run *r)
{
	h_free_folded(&r->f);
	free(r->err);
	free(r->metrics);
}

/* With the default bound, libLLVM and libclang-cpp load and clang's
 * stacks are complete (>= 99% reach _start). */
TEST_ROOT(native_clang_O2_compile_complete_stacks)
{
	struct clang_run r;

	if (run_clang(NULL, false, &r)) {
		ASSERT_EQ(r.rows_full, 0, "no file refused");
		ASSERT_GE(r.samples, 150, "samples");
		if (!ASSERT_GE(r.complete * 100, r.samples * 99,
			       ">= 99% complete stacks"))
			h_dump_top(&r.f, "clang-14", 8);
		ASSERT_GE(h_share(&r.f, "clang-14", "clang-14;_start"), 0.99,
			  "folded stacks from _start");
	}
	clang_run_free(&r);
}

/* Does a line of err name file (a path's tail) as not fitting? */
static bool warned_full(const char *err, const char *file)
{
	const char *p = err;

	while (p && (p = strstr(p, file))) {
		const char *eol = strchr(p, '\n'), *fit = strstr(p, "does not fit");

		if (fit && (!eol || fit < eol))
			return true;
		p = eol;
	}
	return false;
}

/* A bound of one chunk (256 K rows): libLLVM and libclang-cpp do not fit.
 * Each is counted (summary and metric) and named in a warning, and walked
 * by frame pointer, which they do not keep: clang's stacks are then
 * incomplete. */
TEST_ROOT(native_clang_rows_bound_reached_counted_and_named)
{
	const char *extra[] = { "-max-delta-rows", "256K", NULL };
	struct clang_run r;
	const char *m;

	if (run_clang(extra, true, &r)) {
		m = r.metrics ? r.metrics : "";
		ASSERT_GE(r.rows_full, 2, "libLLVM and libclang-cpp counted");
		ASSERT_EQ(h_metric(m, "ebpf_profiler_map_full_total{map=\"delta_rows\"}"),
			  (double)r.rows_full, "the metric");
		ASSERT_EQ(h_metric(m, "ebpf_profiler_map_capacity{map=\"delta_rows\"}"),
			  (double)DELTA_CHUNK_ROWS, "the bound, in the metrics");
		ASSERT_TRUE(warned_full(r.err, "/libLLVM-14.so.1 ("),
			    "libLLVM named in a warning");
		ASSERT_TRUE(warned_full(r.err, "/libclang-cpp.so.14 ("),
			    "libclang-cpp named in a warning");
		ASSERT_GE(r.samples, 150, "samples kept");
		ASSERT_LT(r.complete * 2, r.samples,
			  "fewer than half complete: frame pointers");
	}
	clang_run_free(&r);
}
