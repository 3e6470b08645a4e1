// SPDX-License-Identifier: Apache-2.0
/*
 * Perl in the host kernel: Debian's /usr/bin/perl (5.36, threaded,
 * stripped) on scripts with known stacks (tests/workloads/perl).  A stack
 * is complete when its Perl frames reach the program's own frame ("main
 * (file.pl:line)") and its native frames reach _start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include "../unit/test.h"
#include "harness.h"

#define PERL "/usr/bin/perl"
#define HZ "499"

/* The perl run: Debian's, or another build (EP_PERL_BIN). */
static struct h_interp perl = { PERL, "perl", "perl;_start;" };

/* Profile a script for 6 s; false (after a skip or a failure) when
 * there is no profile to look at. */
static bool profile_perl(const char *script, struct h_run *r)
{
	char *argv[] = { (char *)perl.bin, (char *)h_script("perl", script),
			 "30", NULL };

	if (!h_have(perl.bin, ""))
		return false;
	return h_run_workload(argv, "6s", HZ, NULL, r);
}

static void split_test(void)
{
	static const char *const chain[3] = { ";main::heavy (split.pl:",
					      ";main::medium (split.pl:",
					      ";main::light (split.pl:" };
	static const double want[3] = { 60, 30, 10 };
	uint64_t total = 0, complete = 0, n[3] = { 0 }, rec = 0, c;
	struct h_run r = { 0 };
	const char *s;
	int i;

	if (!profile_perl("split.pl", &r))
		goto out;
	h_for_each_line_of(&r.f, perl.comm, NULL, i, s, c) {
		total += c;
		if (!strncmp(s, perl.comm_start, strlen(perl.comm_start)) &&
		    strstr(s, ";main (split.pl:") &&
		    strstr(s, ";main::run (split.pl:"))
			complete += c;
		h_tally(s, c, chain, 3, n);
		if (strstr(s, ";main::chain_10 (split.pl:31);main::rec (split.pl:30);"
			      "main::rec (split.pl:30);main::rec (split.pl:30);"
			      "main::light (split.pl:27)"))
			rec += c;
	}
	test_note("%llu samples, %.1f%% complete; heavy %.1f%% medium %.1f%% "
		  "light %.1f%% (through the recursion %.1f%%); err_perl_read=%lld",
		  (unsigned long long)total, h_pct(complete, total),
		  h_pct(n[0], total), h_pct(n[1], total), h_pct(n[2], total),
		  h_pct(rec, total), h_summary_value(r.err, "err_perl_read"));
	ASSERT_GE(total, 300, "samples");
	if (!ASSERT_GE(h_pct(complete, total), 95.0,
		       ">= 95% complete (Perl to main, native to _start)"))
		h_dump_top(&r.f, perl.comm, 8);
	h_assert_split(n, total, want);
	ASSERT_GE(1000 * rec, 900 * n[2], "the recursive sub's frames, each named");
out:
	h_run_free(&r);
}

TEST_ROOT(perl_split_60_30_10)
{
	split_test();
}

/* Perl called back from C (a sort block), a map block, a sub called
 * through a code reference, in a package. */
static void callbacks_test(void)
{
	/* Debian 13's 5.40 does not export Perl_pp_sort: its frame is an
	 * address there, sort's all the same */
	const bool pp_sort_named = perl.bin == (const char *)PERL;
	const struct {
		const char *what, *needle;
	} cases[] = {
		{ "sort block", pp_sort_named ?
					";main::sorter (callbacks.pl:26);Perl_pp_sort;" :
					";main::sorter (callbacks.pl:26);" },
		{ "map block", ";main::mapper (callbacks.pl:31);main::weigh (callbacks.pl:" },
		{ "code reference", ";main::via_ref (callbacks.pl:36);Pkg::target (callbacks.pl:11);main::weigh" },
	};
	const char *const needles[3] = { cases[0].needle, cases[1].needle,
					 cases[2].needle };
	uint64_t weigh = 0, sort_ok = 0, sort_all = 0, n[3] = { 0 }, c;
	struct h_run r = { 0 };
	const char *s, *a, *b;
	int i, k;

	if (!profile_perl("callbacks.pl", &r))
		goto out;
	h_for_each_line_of(&r.f, perl.comm, ";main::weigh (callbacks.pl:",
			   i, s, c) {
		weigh += c;
		h_tally(s, c, needles, 3, n);
		/* the comparator between sort's native frames and weigh */
		if ((b = strstr(s, ";main::by_weight (callbacks.pl:"))) {
			sort_all += c;
			a = strstr(s, cases[0].needle);
			if (a && a < b)
				sort_ok += c;
		}
	}
	test_note("%llu samples in weigh: under sort %.1f%% (comparator placed "
		  "%.1f%%), map %.1f%%, code ref %.1f%%",
		  (unsigned long long)weigh, h_pct(n[0], weigh),
		  h_pct(sort_ok, sort_all), h_pct(n[1], weigh), h_pct(n[2], weigh));
	ASSERT_GE(weigh, 300, "samples in weigh");
	for (k = 0; k < 3; k++)
		if (!ASSERT_GE(n[k], 20, cases[k].what))
			h_dump_top(&r.f, perl.comm, 8);
	ASSERT_GE(1000 * sort_ok, 950 * sort_all,
		  "the comparator under sort's frames, in >= 95% of its samples");
	ASSERT_GE(h_pct(n[0] + n[1] + n[2], weigh), 95.0,
		  "every sample of weigh under one of the three callers");
out:
	h_run_free(&r);
}

/* ithreads: each thread runs its own interpreter, found through its TSD
 * slot (PL_thr_key) as the process' glibc lays it out: each thread's
 * frames are its own. */
TEST_ROOT(perl_callbacks_between_frames)
{
	callbacks_test();
}

/*
 * Another perl build, named by EP_PERL_BIN (with PERL5LIB for its own
 * modules): the split and the callbacks.  How 5.32 and 5.40 were checked
 * live: Debian 11's and 13's perl-base unpacked (README, Perl).
 */
TEST_ROOT(perl_other_build)
{
	static const struct h_build_case cases[] = {
		{ "split", split_test },
		{ "callbacks", callbacks_test },
	};

	h_other_build(&perl, PERL, "EP_PERL_BIN",
		      "no perl build other than Debian's 5.36 to run", "",
		      cases, sizeof(cases) / sizeof(cases[0]));
}

TEST_ROOT(perl_ithreads_each_its_own_interpreter)
{
	static const char *const mine[3] = {
		";main::worker_a (threads.pl:15);main::burn_a (threads.pl:12);",
		";main::worker_b (threads.pl:16);main::burn_b (threads.pl:13);",
		";main::main_loop (threads.pl:17);main::burn_main (threads.pl:14);",
	};
	uint64_t total = 0, n[3] = { 0 }, mixed = 0, c;
	struct h_run r = { 0 };
	const char *s;
	int i, k;

	if (!profile_perl("threads.pl", &r))
		goto out;
	h_for_each_line_of(&r.f, perl.comm, ";main::spin (threads.pl:",
			   i, s, c) {
		total += c;
		if (h_tally(s, c, mine, 3, n) != 1)
			mixed += c;
	}
	test_note("%llu samples in spin: thread a %.1f%%, thread b %.1f%%, main "
		  "%.1f%%, in none or several %.1f%%",
		  (unsigned long long)total, h_pct(n[0], total), h_pct(n[1], total),
		  h_pct(n[2], total), h_pct(mixed, total));
	ASSERT_GE(total, 300, "samples in spin");
	for (k = 0; k < 3; k++)
		ASSERT_GE(100 * n[k], 15 * total, "each thread's own frames");
	if (!ASSERT_LE(100 * mixed, 2 * total, "no thread shows another's frames"))
		h_dump_top(&r.f, perl.comm, 8);
out:
	h_run_free(&r);
}
