// SPDX-License-Identifier: Apache-2.0
/*
 * Ruby in the host kernel: Debian's ruby (3.1, libruby-3.1 stripped, the
 * VM's thread-local execution context through the DTV), with and without
 * YJIT, on scripts with known stacks (tests/workloads/ruby).  A stack is
 * complete when its Ruby frames reach the script's own frame ("<main>
 * (file.rb:line)") and its native frames reach _start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include "../unit/test.h"
#include "harness.h"

#define RUBY "/usr/bin/ruby"
#define HZ "499"

/* Profile a script for 6 s; false (after a skip or a failure) when
 * there is no profile to look at. */
static bool profile_ruby(const char *script, bool yjit, struct h_run *r)
{
	char *argv[5] = { RUBY };
	int n = 1;

	if (yjit)
		argv[n++] = "--yjit";
	argv[n++] = (char *)h_script("ruby", script);
	argv[n++] = "30";
	argv[n] = NULL;
	if (!h_have(RUBY, " (make deps installs ruby)"))
		return false;
	return h_run_workload(argv, "6s", HZ, NULL, r);
}

static void split_60_30_10(bool yjit)
{
	static const char *const chain[3] = {
		";Object#chain_60 (split.rb:31);Burner#heavy (split.rb:26);"
		"Burner#spin (split.rb:",
		";Object#chain_30 (split.rb:32);Burner#medium (split.rb:27);"
		"Burner#spin (split.rb:",
		";Object#chain_10 (split.rb:34);Object#rec (split.rb:33);"
		"Object#rec (split.rb:33);Object#rec (split.rb:33);"
		"Burner#light (split.rb:28);Burner#spin (split.rb:",
	};
	static const double want[3] = { 60, 30, 10 };
	uint64_t total = 0, complete = 0, n[3] = { 0 };
	struct h_run r = { 0 };
	const char *s;
	uint64_t c;
	int i;

	if (!profile_ruby("split.rb", yjit, &r))
		goto out;
	/* the script's loop (YJIT's start-up compiles before it) */
	h_for_each_line_of(&r.f, "ruby", ";Object#run (split.rb:", i, s, c) {
		total += c;
		if (!strncmp(s, "ruby;_start;", 12) &&
		    strstr(s, ";ruby_run_node;") &&
		    strstr(s, ";<main> (split.rb:46);Object#run (split.rb:"))
			complete += c;
		h_tally(s, c, chain, 3, n);
	}
	test_note("%s: %llu samples, %.1f%% complete; heavy %.1f%% medium "
		  "%.1f%% light %.1f%%; err_ruby_read=%lld err_ruby_no_ec=%lld",
		  yjit ? "yjit" : "interpreter", (unsigned long long)total,
		  h_pct(complete, total), h_pct(n[0], total),
		  h_pct(n[1], total), h_pct(n[2], total),
		  h_summary_value(r.err, "err_ruby_read"),
		  h_summary_value(r.err, "err_ruby_no_ec"));
	/* what the daemon saw of the process, when its loop was seen too
	 * rarely (twice in fresh-clone CI runs, right after the kernel
	 * matrix: 31 and 33 samples, thousands on the retry) */
	if (!ASSERT_GE(total, 300, "samples"))
		test_note("ruby's samples %llu; syncs=%lld waited=%lld "
			  "wait_expired=%lld bpf_unsynced=%lld "
			  "interp_processes_ruby=%lld",
			  (unsigned long long)h_count_comm(&r.f, "ruby"),
			  h_summary_value(r.err, "syncs"),
			  h_summary_value(r.err, "waited"),
			  h_summary_value(r.err, "wait_expired"),
			  h_summary_value(r.err, "bpf_unsynced"),
			  h_summary_value(r.err, "interp_processes_ruby"));
	if (!ASSERT_GE(h_pct(complete, total), 95.0,
		       ">= 95% complete (Ruby to <main>, native to _start)"))
		h_dump_top(&r.f, "ruby", 8);
	if (!h_assert_split(n, total, want))
		h_dump_top(&r.f, "ruby", 8);
out:
	h_run_free(&r);
}

TEST_ROOT(ruby_split_60_30_10)
{
	split_60_30_10(false);
}

/* YJIT keeps the control frames; its code runs in anonymous memory. */
TEST_ROOT(ruby_split_60_30_10_yjit)
{
	split_60_30_10(true);
}

/* Blocks yielded from C: Integer#times and Array#each (the C functions'
 * frames, named by class and method, between the caller and its block),
 * and sort_by's block. */
static const struct {
	const char *what, *needle;
} block_cases[] = {
	{ "Integer#times block",
	  ";Object#times_caller (blocks.rb:19);Integer#times;" },
	{ "Array#each block",
	  ";Object#each_caller (blocks.rb:25);Array#each [rb_ary_each];" },
	{ "sort_by block",
	  ";Object#sorter (blocks.rb:31);Enumerable#sort_by;"
	  "Array#each [rb_ary_each];" },
};
static const char *const block_frames[] = {
	";block in Object#times_caller (blocks.rb:19);Object#weigh (blocks.rb:",
	";block (2 levels) in Object#each_caller (blocks.rb:25);"
	"Object#weigh (blocks.rb:",
	";block in Object#sorter (blocks.rb:31);Object#weigh (blocks.rb:",
};

TEST_ROOT(ruby_block_between_frames)
{
	uint64_t weigh = 0, n[3] = { 0 }, placed[3] = { 0 };
	struct h_run r = { 0 };
	const char *s, *a, *b;
	uint64_t c;
	int i, k;

	if (!profile_ruby("blocks.rb", false, &r))
		goto out;
	h_for_each_line_of(&r.f, "ruby", ";Object#weigh (blocks.rb:", i, s, c) {
		weigh += c;
		for (k = 0; k < 3; k++) {
			a = strstr(s, block_cases[k].needle);
			b = strstr(s, block_frames[k]);
			if (b)
				n[k] += c;
			/* the caller and the C function above the block */
			if (a && b && a < b)
				placed[k] += c;
		}
	}
	test_note("%llu samples in weigh: times block %.1f%% (placed %.1f%%), "
		  "each block %.1f%% (placed %.1f%%), sort_by block %.1f%% "
		  "(placed %.1f%%)",
		  (unsigned long long)weigh, h_pct(n[0], weigh),
		  h_pct(placed[0], n[0]), h_pct(n[1], weigh),
		  h_pct(placed[1], n[1]), h_pct(n[2], weigh),
		  h_pct(placed[2], n[2]));
	ASSERT_GE(weigh, 300, "samples in weigh");
	for (k = 0; k < 2; k++) {
		if (!ASSERT_GE(n[k], 20, block_cases[k].what))
			h_dump_top(&r.f, "ruby", 8);
		ASSERT_GE(h_pct(placed[k], n[k]), 95.0,
			  "the C function between its caller and the block");
	}
	ASSERT_GE(h_pct(n[0] + n[1] + n[2], weigh), 95.0,
		  "every sample of weigh under one of the three blocks");
out:
	h_run_free(&r);
}

/* sort_by with a Ruby block: the C functions (Enumerable#sort_by by its
 * method's name, Array#each also by its exported C function's,
 * rb_ary_each) between the Ruby frames, and the native frames of
 * rb_yield between them and the block. */
TEST_ROOT(ruby_sort_by_cfunc_named)
{
	uint64_t block = 0, placed = 0, yield = 0;
	struct h_run r = { 0 };
	const char *s, *a, *b, *y;
	uint64_t c;
	int i;

	if (!profile_ruby("blocks.rb", false, &r))
		goto out;
	h_for_each_line(&r.f, i, s, c) {
		if (strncmp(s, "ruby;", 5) || !(b = strstr(s, block_frames[2])))
			continue;
		block += c;
		a = strstr(s, block_cases[2].needle);
		if (a && a < b)
			placed += c;
		y = a ? strstr(a, ";rb_yield;") : NULL;
		if (y && y < b)
			yield += c;
	}
	test_note("%llu samples in sort_by's block: under Object#sorter;"
		  "Enumerable#sort_by;Array#each [rb_ary_each] %.1f%%, rb_yield between %.1f%%",
		  (unsigned long long)block, h_pct(placed, block),
		  h_pct(yield, block));
	ASSERT_GE(block, 100, "samples in sort_by's block");
	if (!ASSERT_GE(h_pct(placed, block), 95.0,
		       "sort_by and each named between sorter and the block"))
		h_dump_top(&r.f, "ruby", 8);
	ASSERT_GE(h_pct(yield, block), 95.0,
		  "the native rb_yield between the C function and the block");
out:
	h_run_free(&r);
}

/* Ruby threads: each has its own execution context (the thread-local
 * ruby_current_ec, through each thread's DTV), so each thread's samples
 * show its own frames, and a thread's stack reaches its native start. */
TEST_ROOT(ruby_threads_each_its_own_ec)
{
	static const char *const mine[3] = {
		";Object#worker_a (threads.rb:23);Object#burn_a (threads.rb:20);",
		";Object#worker_b (threads.rb:24);Object#burn_b (threads.rb:21);",
		";<main> (threads.rb:29);Object#main_loop (threads.rb:25);"
		"Object#burn_main (threads.rb:22);",
	};
	uint64_t total = 0, n[3] = { 0 }, mixed = 0;
	struct h_run r = { 0 };
	const char *s;
	uint64_t c;
	int i, k;

	if (!profile_ruby("threads.rb", false, &r))
		goto out;
	h_for_each_line_of(&r.f, NULL, ";Object#spin (threads.rb:", i, s, c) {
		int hits;

		total += c;
		hits = h_tally(s, c, mine, 3, n);
		/* a worker's frames start at its thread's entry */
		if (hits != 1 ||
		    (!strstr(s, mine[2]) &&
		     (!strstr(s, ";start_thread;") ||
		      !strstr(s, ";block in <main> (threads.rb:28);"))))
			mixed += c;
	}
	test_note("%llu samples in spin: thread a %.1f%%, thread b %.1f%%, main "
		  "%.1f%%, in none, several or misplaced %.1f%%",
		  (unsigned long long)total, h_pct(n[0], total),
		  h_pct(n[1], total), h_pct(n[2], total),
		  h_pct(mixed, total));
	ASSERT_GE(total, 300, "samples in spin");
	for (k = 0; k < 3; k++)
		ASSERT_GE(100 * n[k], 15 * total, "each thread's own frames");
	if (!ASSERT_LE(100 * mixed, 2 * total,
		       "no thread shows another's frames"))
		h_dump_top(&r.f, "ruby", 8);
out:
	h_run_free(&r);
}
