// SPDX-License-Identifier: Apache-2.0
/*
 * Native unwinding without frame pointers, in the host kernel: workloads
 * built with -O2 -fomit-frame-pointer (and Debian's libc, which has no
 * frame pointers), each with a known stack.
 */
#include <elf.h>
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

	h_profiled(rc, err);
	free(err);
	return rc == 0;
}

/* Profile workload name, run for secs seconds, for duration. */
static bool profile_named(const char *name, const char *secs,
			  const char *duration, struct folded *f)
{
	char *wargv[] = { (char *)h_workload(name), (char *)secs, NULL };

	return profile(wargv, duration, f);
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

/* Samples whose stack has substring a, and b unless NULL, and a frame
 * named frame unless NULL (any comm). */
static uint64_t count_having(const struct folded *f, const char *a,
			     const char *b, const char *frame)
{
	uint64_t n = 0, c;
	const char *s;
	int i;

	h_for_each_line(f, i, s, c)
		if (strstr(s, a) && (!b || strstr(s, b)) &&
		    (!frame || h_count_frame(s, frame)))
			n += c;
	return n;
}

/* Report and check that part of the samples of (comm's, or a kind of
 * them) are at least pct percent of them: what they are. */
static void check_part(const struct folded *f, const char *comm,
		       uint64_t part, uint64_t of, unsigned pct,
		       const char *what)
{
	test_note("%s: %llu of %llu samples (%.2f%%)", what,
		  (unsigned long long)part, (unsigned long long)of,
		  h_pct(part, of));
	if (!ASSERT_GE(part * 100, of * pct, what))
		h_dump_top(f, comm, 8);
}

/* Share (0..1) of comm's samples with a frame that names no function, only
 * an address in a file ("split-lld-pie+0x174b7"): a file mapped with a
 * wrong load bias symbolizes nothing. */
static double unnamed_share(const struct folded *f, const char *comm)
{
	uint64_t n = 0, total = h_count_comm(f, comm);
	int i;

	for (i = 0; i < f->n; i++)
		if (!strncmp(f->lines[i].stack, comm, strlen(comm)) &&
		    f->lines[i].stack[strlen(comm)] == ';' &&
		    strstr(f->lines[i].stack + strlen(comm), "+0x"))
			n += f->lines[i].count;
	return total ? (double)n / total : 0;
}

/* The 60/30/10 split of bin (split.c, or rust/split.rs whose functions
 * are named "split::chain_a"...): the stacks reach the entry, the chains
 * have their shares within 3 points, and every frame is named. */
static void split_test_ns(const char *bin, const char *comm, const char *ns)
{
	char root[64], chain[3][128], want_main[64];
	char *wargv[] = { (char *)h_workload(bin), "12", NULL };
	const char *names[3] = { "a", "b", "c" };
	const double want[3] = { 60, 30, 10 };
	struct folded f;
	uint64_t total;
	int i;

	if (access(wargv[0], X_OK)) {
		test_skip("%s not built: %s", bin,
			  strstr(bin, "lld") ? "no ld.lld (make deps installs lld)" :
			  strstr(bin, "mold") ? "no ld.mold (make deps installs mold)" :
			  strstr(bin, "rust") ? "no rustc (rustup: ~/.cargo/bin/rustc)" :
						"see the workloads build");
		return;
	}
	if (!profile(wargv, "6s", &f))
		return;
	total = h_count_comm(&f, comm);
	ASSERT_GE(total, 1500, "samples");
	snprintf(root, sizeof(root), "%s;_start", comm);
	snprintf(want_main, sizeof(want_main), "%smain", ns);
	check_share(&f, comm, root, 0.99, "reach the process entry (_start)");
	check_share(&f, comm, want_main, 0.99, "reach main");
	for (i = 0; i < 3; i++) {
		double s;

		snprintf(chain[i], sizeof(chain[i]),
			 "%smain;%schain_%s;%smid_%s;%sleaf_%s", ns, ns, names[i],
			 ns, names[i], ns, names[i]);
		s = 100 * h_share(&f, comm, chain[i]);
		test_note("chain_%s: %.1f%% (want %.0f)", names[i], s, want[i]);
		ASSERT_NEAR(s, want[i], 3, chain[i]);
	}
	{
		double u = unnamed_share(&f, comm);

		test_note("stacks with an unnamed frame (file+0x...): %.2f%%", 100 * u);
		if (!ASSERT_LT(u * 10000, 100, "< 1% of stacks have an unnamed frame"))
			h_dump_top(&f, comm, 8);
	}
	h_free_folded(&f);
}

static void split_test(const char *bin, const char *comm)
{
	split_test_ns(bin, comm, "");
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

/* Other linkers and layouts (issue 14): lld and mold start the text
 * segment inside the read-only segment's last file page, so a text
 * mapping's offset lies in two PT_LOADs. */
TEST_ROOT(native_split_lld_pie)
{
	split_test("split-lld-pie", "split-lld-pie");
}

TEST_ROOT(native_split_lld_nopie)
{
	split_test("split-lld-nopie", "split-lld-nopie");
}

TEST_ROOT(native_split_mold_pie)
{
	split_test("split-mold-pie", "split-mold-pie");
}

TEST_ROOT(native_split_mold_nopie)
{
	split_test("split-mold-nopie", "split-mold-nopi");
}

/* Split text: chain_b's functions in a second executable segment, which
 * lld starts on the file page of the first: two r-x mappings of one file
 * page, told apart by each other. */
TEST_ROOT(native_split_lld_splittext)
{
	split_test("split-lld-splittext", "split-lld-split");
}

/* The first line of cmd's output into buf. */
static bool run_line(const char *cmd, char *buf, size_t len)
{
	FILE *p = popen(cmd, "r");
	bool ok = p && fgets(buf, (int)len, p);

	if (p)
		pclose(p);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

/* `ebpf-profiler deltas -pid` names the functions at pcs of a process
 * with split text, at the ELF addresses nm gives; the bias is the
 * kernel's (the process' AT_ENTRY - readelf's e_entry). */
TEST(native_deltas_pid_split_text)
{
	const char *bin = h_workload("split-lld-splittext");
	const char *fns[2] = { "chain_a", "leaf_b" };
	char *wargv[] = { (char *)bin, "10", NULL };
	char cmd[2048], line[1024], out[2][1024];
	unsigned long long entry, at_entry = 0, elf[2];
	pid_t pid;
	int i;

	if (access(bin, X_OK)) {
		test_skip("split-lld-splittext not built: no ld.lld (make deps installs lld)");
		return;
	}
	snprintf(cmd, sizeof(cmd), "readelf -hW %s | awk '/Entry point/ { print $4 }'", bin);
	if (!ASSERT_TRUE(run_line(cmd, line, sizeof(line)), "e_entry"))
		return;
	entry = strtoull(line, NULL, 16);
	for (i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"%s\" { print $1 }'", bin,
			 fns[i]);
		if (!ASSERT_TRUE(run_line(cmd, line, sizeof(line)), fns[i]))
			return;
		elf[i] = strtoull(line, NULL, 16);
	}
	pid = h_spawn(wargv);
	if (!ASSERT_GT(pid, 0, "workload"))
		return;
	usleep(200000);
	{
		char path[64];
		uint64_t av[2];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
		f = fopen(path, "re");
		while (f && fread(av, sizeof(av), 1, f) == 1 && av[0] != AT_NULL)
			if (av[0] == AT_ENTRY)
				at_entry = av[1];
		if (f)
			fclose(f);
	}
	if (ASSERT_NEQ(at_entry, 0, "the process' AT_ENTRY")) {
		unsigned long long bias = at_entry - entry;

		for (i = 0; i < 2; i++) {
			char want[256];

			snprintf(cmd, sizeof(cmd), "%s deltas -pid %d 0x%llx", test_bin(),
				 (int)pid, bias + elf[i] + 1);
			ASSERT_TRUE(run_line(cmd, out[i], sizeof(out[i])), cmd);
			test_note("%s", out[i]);
			snprintf(want, sizeof(want), " 0x%llx (bias 0x%llx) %s+0x1: ",
				 elf[i] + 1, bias, fns[i]);
			ASSERT_TRUE(strstr(out[i], want) != NULL, want);
		}
	}
	kill(pid, SIGKILL);
	h_wait(pid, 10);
}

/* Text on 2 MiB pages (-z max-page-size=2M): file offsets and addresses
 * agree modulo 2 MiB, not only 4 KiB. */
TEST_ROOT(native_split_hugepage)
{
	split_test("split-hugepage", "split-hugepage");
}

/* No .eh_frame: CFI only from .debug_frame (crt1's _start has none). */
TEST_ROOT(native_split_debugframe)
{
	split_test("split-debugframe", "split-debugfram");
}

/* Rust with the machine's rustc defaults (rustc 1.90+ links with its own
 * lld: the layout of native_split_lld_pie). */
TEST_ROOT(native_rust_split)
{
	char cmd[600], buf[256] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "readelf -p .comment %s 2>/dev/null | grep -o 'Linker: [^(]*'; "
		 "readelf -lW %s 2>/dev/null | awk '$1 == \"LOAD\" && $8 == \"E\" "
		 "{ print ($2 ~ /000$/) ? \"text on its own page\" : "
		 "\"text shares a page\"; exit }'",
		 h_workload("rust-split"), h_workload("rust-split"));
	p = popen(cmd, "r");
	if (p) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, p);

		buf[n] = 0;
		for (n = 0; buf[n]; n++)
			if (buf[n] == '\n')
				buf[n] = ' ';
		pclose(p);
	}
	test_note("rust-split: %s", buf);
	split_test_ns("rust-split", "rust-split", "split::");
}

TEST_ROOT(native_qsort_comparator_crosses_libc)
{
	struct folded f;

	if (!profile_named("qsort", "10", "4s", &f))
		return;
	ASSERT_GE(h_count_with(&f, "qsort", "compare;weigh"), 500,
		  "samples in the comparator");
	check_share(&f, "qsort", "qsort;_start", 0.99, "reach _start");
	check_share(&f, "qsort", "main;sort_rounds", 0.99, "reach main");
	/* the comparator's callers are libc's sort internals, then main */
	check_part(&f, "qsort",
		   count_having(&f, ";main;sort_rounds;", NULL, "compare"),
		   h_count_with(&f, "qsort", "compare"), 99,
		   "comparator stacks cross libc to main");
	h_free_folded(&f);
}

TEST_ROOT(native_signal_handler_crosses_trampoline)
{
	struct folded f;
	uint64_t work, full;

	if (!profile_named("signal", "10", "4s", &f))
		return;
	work = h_count_with(&f, "signal", "handler;handler_work");
	full = count_having(&f, "signal;_start;", ";main;wait_loop;",
			    "handler_work");
	ASSERT_GE(work, 300, "samples in the handler");
	check_part(&f, "signal", full, work, 98,
		   "handler stacks go on through the signal frame to main and _start");
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

/* The per-CPU rule cache (-rule-cache-entries) answers most lookups of a
 * recursion, whose return addresses recur from sample to sample, and the
 * per-CPU mapping cache (-map-cache-entries) the first mapping lookup of
 * each sample; the stacks they give are the ones the full searches give:
 * with both off, the same 300 frames down to _start, and the same share
 * of them. */
static double deep_share(const struct folded *f, uint64_t *burn)
{
	uint64_t deep = 0;
	int i;

	*burn = 0;
	for (i = 0; i < f->n; i++) {
		const char *s = f->lines[i].stack;

		if (!h_count_frame(s, "burn"))
			continue;
		*burn += f->lines[i].count;
		if (h_count_frame(s, "recurse") == 300 &&
		    strstr(s, "recurse;_start;") && strstr(s, ";main;recurse"))
			deep += f->lines[i].count;
	}
	return *burn ? (double)deep / *burn : 0;
}


TEST_ROOT(native_rule_cache_same_stacks)
{
	char *wargv[] = { (char *)h_workload("recurse"), "10", "300", NULL };
	const char *on[] = { "-v", NULL };
	const char *off[] = { "-v", "-rule-cache-entries", "0",
			      "-map-cache-entries", "0", NULL };
	const char *const *runs[2] = { on, off };
	double share[2] = { 0, 0 };
	long long hits[2] = { -1, -1 }, frames[2] = { 0, 0 };
	long long map_hits[2] = { -1, -1 }, trail[2] = { -1, -1 };
	long long pid_hits[2] = { -1, -1 }, memo[2] = { -1, -1 };
	uint64_t samples[2] = { 0, 0 };
	int r;

	for (r = 0; r < 2; r++) {
		struct folded f;
		uint64_t burn;
		char *err = NULL;
		int rc = h_profile_workload(wargv, "3s", HZ, runs[r], &f, &err);

		if (!h_profiled(rc, err)) {
			free(err);
			return;
		}
		share[r] = deep_share(&f, &burn);
		samples[r] = h_count_comm(&f, "recurse");
		hits[r] = h_bpf_counter(err, "RULE_CACHE_HITS");
		map_hits[r] = h_bpf_counter(err, "MAP_CACHE_HITS");
		trail[r] = h_bpf_counter(err, "TRAIL_HITS");
		pid_hits[r] = h_bpf_counter(err, "PID_CACHE_HITS");
		memo[r] = h_bpf_counter(err, "PAGE_MEMO_HITS");
		frames[r] = err ? h_summary_value(err, "FRAMES_NATIVE") : 0;
		test_note("caches %s: %llu samples in burn, %.2f%% with all 300 frames; %lld of %lld native frames from the rule cache, %lld from the trail; %lld mapping lookups from the mapping cache; %lld samples took the process' state from the CPU's last; %lld searches read the page's entry from the CPU's copy (%llu samples of recurse)",
			  r ? "off" : "on", (unsigned long long)burn,
			  100 * share[r], hits[r], frames[r], trail[r],
			  map_hits[r], pid_hits[r], memo[r],
			  (unsigned long long)samples[r]);
		ASSERT_GE(burn, 500, "samples");
		h_free_folded(&f);
		free(err);
	}
	ASSERT_GE(share[0] * 10000, 9900, "cache on: all frames");
	ASSERT_GE(share[1] * 10000, 9900, "cache off: all frames");
	ASSERT_GE((hits[0] + trail[0]) * 10, frames[0] * 9,
		  "cache on: >= 90% of lookups hit (the rule cache or the trail)");
	/* the trail holds a sample's first 32 lookups: the frames under
	 * the leaf, the same from one sample to the next */
	ASSERT_GE(trail[0], (long long)samples[0] * 16,
		  "cache on: the trail answers 16 lookups a sample at least");
	ASSERT_EQ(hits[1], 0, "cache off: no hits");
	ASSERT_EQ(trail[1], 0, "cache off: no trail");
	/* the leaf's pcs in burn miss the rule cache at first and search
	 * the same page again */
	ASSERT_GE(memo[0], 1, "cache on: the page entries' copies are read");
	ASSERT_EQ(memo[1], 0, "cache off: no page entry copies");
	/* every sample looks its first pc's mapping up: all but the first
	 * of each CPU's are in the cache (the whole system's samples count
	 * too, so this is a floor) */
	ASSERT_GE(map_hits[0] * 10, (long long)samples[0] * 9,
		  "mapping cache on: >= 90% of samples find their mapping there");
	ASSERT_EQ(map_hits[1], 0, "mapping cache off: no hits");
	/* one busy process: most of its CPU's samples follow one of its
	 * own (pid_epoch; not one of the caches the flags turn off) */
	for (r = 0; r < 2; r++)
		ASSERT_GE(pid_hits[r] * 2, (long long)samples[r],
			  "half the samples at least take the process' state from the CPU's last");
}

TEST_ROOT(native_threads_end_in_clone3)
{
	struct folded f;

	if (!profile_named("threads", "10", "3s", &f))
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
	uint64_t in, full;

	snprintf(lib, sizeof(lib), "%s", h_workload("libplugin.so"));
	if (!profile(wargv, "5s", &f))
		return;
	in = h_count_with(&f, "dlopen", "plugin_inner");
	full = count_having(&f, "dlopen;_start;",
			    ";main;run_plugin;plugin_burn;plugin_inner", NULL);
	ASSERT_GE(in, 1000, "samples in the dlopen'ed library");
	check_part(&f, "dlopen", full, in, 97,
		   "complete, named stacks through the new library");
	h_free_folded(&f);
}

TEST_ROOT(native_cxx_sort_lambda_and_exceptions)
{
	struct folded f;
	uint64_t lambda, throws;
	int i;

	if (!profile_named("cxx", "10", "4s", &f))
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
	/* At the end of a throw, libgcc's __builtin_eh_return writes the
	 * landing pad over _Unwind_RaiseException's return address before
	 * it moves the stack there: for those few instructions the stack
	 * does not describe itself, to any unwinder (perf's included).  The
	 * landing pad's frame then follows _Unwind_RaiseException directly,
	 * without __cxa_throw: those samples are left out. */
	{
		uint64_t redirected = 0, total = h_count_comm(&f, "cxx"), ok = 0;

		for (i = 0; i < f.n; i++) {
			const char *st = f.lines[i].stack;

			if (strstr(st, "throw_phase(double);_Unwind_RaiseException"))
				redirected += f.lines[i].count;
			else if (strncmp(st, "cxx;_start;", 11) == 0 &&
				 strstr(st, ";main;"))
				ok += f.lines[i].count;
		}
		test_note("reach _start and main: %.2f%% of %llu samples, leaving out "
			  "%llu in the landing-pad redirect of eh_return",
			  100.0 * ok / ((total - redirected) ? total - redirected : 1),
			  (unsigned long long)(total - redirected),
			  (unsigned long long)redirected);
		ASSERT_LT(redirected * 100, total * 3, "redirect window small");
		if (!ASSERT_GE(ok * 100, (total - redirected) * 99,
			       "the other stacks reach _start and main"))
			h_dump_top(&f, "cxx", 8);
	}
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
					     "runtime.mstart", "runtime.rt0_go",
					     "runtime.mcall" };
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
	/* the samples before a process' sync waited for the poll loop to
	 * serve it (the ring callbacks read no /proc): named all the same */
	static const struct h_counter counters[] = {
		{ "waited", ">", 0, "waited" },
		{ "wait_expired" },
		{ "requests_dropped", "==", 0, "requests_dropped" },
		{ "record_queue_drops", "==", 0, "record_queue_drops" },
		{ "service_ms_max" },
	};
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
	err = h_slurp(errp);
	if (ASSERT_TRUE(err != NULL, "summary"))
		h_check_counters(err, counters,
				 sizeof(counters) / sizeof(counters[0]));
	h_free_folded(&f);
	free(err);
}

/* CFI that keeps the CFA in rax (a leaf: the sample's registers) and in
 * r15 (restored from the frame of a callee that saves and clobbers it):
 * OpenSSL's and ld.so's assembly.  Both functions realign the stack, so
 * no frame-pointer or rsp-based guess gets through them. */
TEST_ROOT(native_cfa_in_other_registers)
{
	struct folded f;
	double rax, r15;

	if (!profile_named("cfareg", "12", "6s", &f))
		return;
	ASSERT_GE(h_count_comm(&f, "cfareg"), 1500, "samples");
	check_share(&f, "cfareg", "cfareg;_start", 0.99, "reach _start");
	rax = 100 * h_share(&f, "cfareg", "main;phase_rax;spin_in_rax");
	r15 = 100 * h_share(&f, "cfareg", "main;phase_r15;call_via_r15;work_r15");
	test_note("CFA in rax: %.1f%% (want 60), CFA in r15: %.1f%% (want 40)",
		  rax, r15);
	ASSERT_NEAR(rax, 60, 3, "main;phase_rax;spin_in_rax");
	ASSERT_NEAR(r15, 40, 3, "main;phase_r15;call_via_r15;work_r15");
	h_free_folded(&f);
}

/* OpenSSL's AES-GCM (what HTTPS servers run): aesni_gcm_encrypt keeps its
 * CFA in rax and the GHASH/CTR routines under it are hand-written
 * assembly without frame pointers. */
TEST_ROOT(native_openssl_aes_gcm)
{
	char *wargv[] = { "/usr/bin/openssl", "speed", "-seconds", "20", "-bytes",
			  "16384", "-evp", "aes-256-gcm", NULL };
	struct folded f;

	if (access(wargv[0], X_OK))
		test_skip("no %s", wargv[0]);
	if (test_skipped() || !profile(wargv, "5s", &f))
		return;
	ASSERT_GE(h_count_comm(&f, "openssl"), 1000, "samples");
	/* stripped: _start shows as an address, __libc_start_main by name */
	check_share(&f, "openssl", "__libc_start_main;__libc_start_call_main", 0.99,
		    "reach __libc_start_main");
	check_share(&f, "openssl", "EVP_EncryptUpdate", 0.80,
		    "under EVP_EncryptUpdate");
	h_free_folded(&f);
}

/* Go's stack switches: GC assist and background marking run on the g0
 * stack through runtime.systemstack, stack growth through
 * runtime.morestack; the goroutine's stack goes on from its saved
 * context (curg.sched), as Go's own traceback does.  Goroutines recurse
 * 3000 deep, past the 1024-frame limit: those stacks are cut and counted
 * as truncated, not complete. */
TEST_ROOT(native_go_stack_switches)
{
	char *wargv[] = { (char *)h_workload("go-alloc"), "12", NULL };
	uint64_t total, complete, sys = 0, sys_ok = 0, grow = 0, grow_ok = 0;
	char *err = NULL;
	long long truncated;
	struct folded f;
	int i, rc;

	if (access(wargv[0], X_OK)) {
		test_skip("go-alloc not built (no golang-1.19)");
		return;
	}
	rc = h_profile_workload(wargv, "6s", HZ, NULL, &f, &err);
	if (!h_profiled(rc, err)) {
		free(err);
		return;
	}
	truncated = h_summary_value(err, "truncated");
	free(err);
	total = h_count_comm(&f, "go-alloc");
	complete = go_complete(&f, "go-alloc");
	for (i = 0; i < f.n; i++) {
		const char *s = f.lines[i].stack;
		bool root = strstr(s, "go-alloc;runtime.goexit") ||
			    strstr(s, "go-alloc;runtime.mstart") ||
			    strstr(s, "go-alloc;runtime.rt0_go") ||
			    strstr(s, "go-alloc;runtime.mcall");

		if (strstr(s, ";runtime.systemstack")) {
			sys += f.lines[i].count;
			/* on through systemstack_switch to the goroutine */
			if (root && strstr(s, "runtime.systemstack_switch"))
				sys_ok += f.lines[i].count;
		}
		if (strstr(s, ";runtime.morestack")) {
			grow += f.lines[i].count;
			if (strstr(s, "main.recurse;runtime.morestack"))
				grow_ok += f.lines[i].count;
		}
	}
	test_note("samples %llu: complete %.2f%%, truncated %lld (%.2f%%); "
		  "through systemstack %llu (%.2f%% back to the goroutine), "
		  "through morestack %llu (%.2f%% under the growing function)",
		  (unsigned long long)total, 100.0 * complete / (total ? total : 1),
		  truncated, 100.0 * truncated / (total ? total : 1),
		  (unsigned long long)sys, 100.0 * sys_ok / (sys ? sys : 1),
		  (unsigned long long)grow, 100.0 * grow_ok / (grow ? grow : 1));
	ASSERT_GE(total, 1500, "samples");
	ASSERT_GE(truncated, 20, "recursion past the frame limit counted as truncated");
	if (!ASSERT_GE((complete + truncated) * 100, total * 99,
		       "every stack complete or counted as truncated"))
		h_dump_top(&f, "go-alloc", 8);
	ASSERT_GE(sys, 100, "samples under systemstack");
	ASSERT_GE(sys_ok * 100, sys * 99, "systemstack stacks reach the goroutine's root");
	ASSERT_GE(grow, 5, "samples under morestack");
	ASSERT_GE(grow_ok * 100, grow * 95, "morestack under the function that grew");
	h_free_folded(&f);
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
	if (!h_profiled(rc, r->err)) {
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
		/* scaled: the assertions compare integers */
		ASSERT_GE(h_share(&r.f, "clang-14", "clang-14;_start") * 10000,
			  9900, "folded stacks from _start");
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
