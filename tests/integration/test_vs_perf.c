// SPDX-License-Identifier: Apache-2.0
/*
 * Differential test against perf on programs nobody here wrote: Debian's
 * python3, perl, sqlite3, xz, openssl and gcc's cc1.  perf's DWARF unwinder
 * (`perf record --call-graph dwarf`, unwinding after the fact from a copy
 * of the user stack) is the oracle.
 *
 * Both profile the same process over the same stretch of time: perf
 * attaches first (-p, with CLOCK_MONOTONIC time stamps), then ours
 * (-pid, -duration); perf's samples outside the 12 s our profiler sampled
 * are left out, so a program that changes phases (a compiler) is compared
 * on the same work.  tests/integration/vs_perf.py reads both profiles and
 * says how it makes them comparable (aliases, frames without a name,
 * Python frames); per program it checks:
 *
 * - completeness: the share of samples whose user stack reaches the entry
 *   (_start, or clone3 for a thread): ours at least perf's less 2 points;
 * - the 10 frames with the highest inclusive share (the share of samples
 *   whose stack holds the frame), leaving out the trunk that both put on
 *   over 97% of the stacks (which agree within 3 points by construction):
 *   ours within 3 points of perf's for each.
 *
 * Rates: both 999 Hz for 12 s, perf with a 16 KiB stack copy, and for cc1
 * 64 KiB (dwarf,65528, perf's largest: cc1's stacks reach 60 KiB, and with
 * 8 KiB, perf's default, 13% of cc1's samples fall short of the entry,
 * with 16 KiB 9%); the copies make perf.data about 200 MB a program
 * (800 MB for cc1), deleted after each test.  The shares are sampling estimates: with n samples a side
 * a share near 50% differs between two independent profiles by about
 * 100 * sqrt(0.5 / n) points: 0.65 at n = 12000 (a thread busy for the
 * 12 s), 1.1 at n = 4000 (one that got a third of a CPU on a loaded
 * machine); the note gives it for the largest gap.
 * EP_VS_PERF_HZ and EP_VS_PERF_STACK change perf's rate and stack copy.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/test.h"
#include "harness.h"

#define WINDOW_S 12
#define OURS_HZ "999"
#define PERF_HZ "999"
#define PERF_STACK "16384"
#define PERF_STACK_DEEP "65528"
#define PERF "/usr/bin/perf"

struct vp_result {
	long long ours_n, perf_n;
	double ours_c, perf_c, perf_first, perf_last;
	char worst[512];
	double w_ours, w_perf, w_diff, w_sigma;
	bool have_worst;
};

static bool have(const char *path)
{
	return access(path, X_OK) == 0;
}

static bool need(const char *path)
{
	if (!have(path)) {
		test_skip("%s is not installed", path);
		return false;
	}
	if (!have(PERF)) {
		test_skip("perf is not installed (linux-perf)");
		return false;
	}
	return true;
}

static void print_file(const char *path)
{
	char *s = h_slurp(path);

	printf("%s", s ? s : "");
	free(s);
}

static bool parse(const char *path, struct vp_result *r)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, *o;
	size_t cap = 0;
	int got = 0;

	memset(r, 0, sizeof(*r));
	if (!f)
		return false;
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "ours samples=%lld complete=%lf", &r->ours_n,
			   &r->ours_c) == 2)
			got++;
		else if (sscanf(line,
				"perf samples=%lld complete=%lf first=%lf last=%lf",
				&r->perf_n, &r->perf_c, &r->perf_first,
				&r->perf_last) == 4)
			got++;
		else if (!strncmp(line, "worst ", 6) && (o = strstr(line, " ours=")) &&
			 sscanf(o, " ours=%lf perf=%lf diff=%lf sigma=%lf",
				&r->w_ours, &r->w_perf, &r->w_diff,
				&r->w_sigma) == 4) {
			/* a C++ name may hold spaces: it ends at " ours=" */
			*o = 0;
			snprintf(r->worst, sizeof(r->worst), "%s", line + 6);
			r->have_worst = true;
		}
	}
	free(line);
	fclose(f);
	return got == 2;
}

/*
 * Profile target (its threads too) with perf and with ours at once, compare
 * and check.  what names it in the notes; loop, when the program is an
 * interpreter we unwind, is its loop function: perf sees that where we
 * show the frames it runs.
 */
static void compare(const char *what, pid_t target, const char *loop,
		    const char *stack_bytes)
{
	char pidbuf[16], cmd[2048], win[2][32], cg[64], duration[16];
	const char *hz = getenv("EP_VS_PERF_HZ") ?: PERF_HZ;
	const char *stack = getenv("EP_VS_PERF_STACK") ?: stack_bytes;
	const char *perf_data = test_tmppath("perf.data");
	const char *perf_err = test_tmppath("perf.err");
	const char *perf_txt = test_tmppath("perf.txt");
	const char *ours_out = test_tmppath("ours.folded");
	const char *ours_err = test_tmppath("ours.err");
	const char *cmp = test_tmppath("compare.txt");
	char *pargv[] = { PERF, "record", "-q", "-e", "cpu-clock", "-F", (char *)hz,
			  "-k", "CLOCK_MONOTONIC", "-m", "16M", "--call-graph",
			  cg, "-p", pidbuf, "-o", (char *)perf_data,
			  NULL };
	const char *oargs[] = { "-pid", pidbuf, "-duration", duration,
				"-samples-per-second", OURS_HZ, "-output",
				ours_out, "-v", NULL };
	struct vp_result r;
	double t0 = 0;
	pid_t perf, ours;
	int status;
	bool alive;

	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)target);
	snprintf(cg, sizeof(cg), "dwarf,%s", stack);
	snprintf(duration, sizeof(duration), "%ds", WINDOW_S);
	perf = h_spawn_err(pargv, perf_err);
	if (!ASSERT_GT(perf, 0, "perf record started"))
		return;
	usleep(800000); /* perf's events are on */
	if (waitpid(perf, &status, WNOHANG) == perf) {
		ASSERT_TRUE(false, "perf record runs");
		print_file(perf_err);
		return;
	}
	ours = h_profile_started_at(oargs, ours_err, 60, &t0);
	if (ASSERT_GT(ours, 0, "our profiler started")) {
		status = h_wait(ours, WINDOW_S + 60);
		if (!ASSERT_TRUE(status >= 0 && WIFEXITED(status) &&
					 WEXITSTATUS(status) == 0,
				 "our profiler's exit code"))
			print_file(ours_err);
	}
	alive = kill(target, 0) == 0;
	kill(perf, SIGINT);
	status = h_wait(perf, 60);
	if (ours <= 0)
		return;
	if (!ASSERT_TRUE(alive, "the workload ran through the window"))
		return;
	snprintf(cmd, sizeof(cmd),
		 PERF " script -i %s -F comm,tid,time,ip,sym,dso --demangle "
		 "--no-inline > %s 2>>%s",
		 perf_data, perf_txt, perf_err);
	if (!ASSERT_EQ(system(cmd), 0, "perf script")) {
		print_file(perf_err);
		return;
	}
	/* ours sampled from (at most 2 ms before) t0 for WINDOW_S */
	snprintf(win[0], sizeof(win[0]), "%.4f", t0 / 1e3 - 0.002);
	snprintf(win[1], sizeof(win[1]), "%.4f", t0 / 1e3 - 0.002 + WINDOW_S);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 %s/tests/integration/vs_perf.py %s %s "
		 "--window %s %s %s%s > %s 2>&1",
		 test_srcdir(), ours_out, perf_txt, win[0], win[1],
		 loop ? "--interp-loop " : "", loop ? loop : "", cmp);
	if (!ASSERT_EQ(system(cmd), 0, "vs_perf.py") || !parse(cmp, &r)) {
		print_file(cmp);
		return;
	}
	test_note("%s: complete ours %.2f%% of %lld, perf %.2f%% of %lld "
		  "(%s at %s Hz)",
		  what, r.ours_c, r.ours_n, r.perf_c, r.perf_n, cg, hz);
	if (r.have_worst)
		test_note("%s: top-10 largest gap %.2f points: %s (ours %.2f%%, "
			  "perf %.2f%%; sampling noise %.2f)",
			  what, r.w_diff, r.worst, r.w_ours, r.w_perf, r.w_sigma);
	ASSERT_GE(r.ours_n, 500, "our samples");
	ASSERT_GE(r.perf_n, 500, "perf's samples in the window");
	/* perf sampled through the whole of our window (the figures are
	 * doubles: ASSERT_GE and the like compare integers) */
	ASSERT_TRUE(r.perf_first <= t0 / 1e3 + 0.05 &&
			    r.perf_last >= t0 / 1e3 + WINDOW_S - 0.05,
		    "perf sampled through our window");
	/* else the oracle says nothing (without libc6-dbg no clone3 name) */
	ASSERT_TRUE(r.perf_c >= 90, "perf's completeness over 90%");
	if (!ASSERT_TRUE(r.ours_c >= r.perf_c - 2,
			 "our completeness at least perf's less 2 points") |
	    !ASSERT_TRUE(r.have_worst && r.w_diff <= 3,
			 "top-10 inclusive shares within 3 points of perf's"))
		print_file(cmp);
}

/* Start argv, profile it, kill it. */
static void run(const char *what, char *const argv[], const char *loop)
{
	pid_t w = h_spawn(argv);

	if (!ASSERT_GT(w, 0, "workload started"))
		return;
	usleep(500000); /* past its start-up */
	compare(what, w, loop, PERF_STACK);
	kill(w, SIGKILL);
	h_wait(w, 10);
}

static const char *workload(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/tests/workloads/vs_perf/%s",
		 test_srcdir(), name);
	return path;
}

/* Debian's CPython 3.11: our Python frames count as the loop perf sees. */
TEST_ROOT(vs_perf_python3)
{
	char *argv[] = { "/usr/bin/python3", (char *)workload("burn.py"), NULL };

	if (need("/usr/bin/python3"))
		run("python3", argv, "_PyEval_EvalFrameDefault");
}

TEST_ROOT(vs_perf_perl)
{
	char *argv[] = { "/usr/bin/perl", (char *)workload("burn.pl"), NULL };

	if (need("/usr/bin/perl"))
		run("perl", argv, "Perl_runops_standard");
}

TEST_ROOT(vs_perf_sqlite3)
{
	char read[600];
	char *argv[] = { "/usr/bin/sqlite3", ":memory:", read, NULL };

	snprintf(read, sizeof(read), ".read %s", workload("burn.sql"));
	if (need("/usr/bin/sqlite3"))
		run("sqlite3", argv, NULL);
}

/* Two compressing threads (clone3 at their root) on base64 of random
 * bytes: more than the window's worth. */
TEST_ROOT(vs_perf_xz)
{
	char cmd[1024];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };

	if (!need("/usr/bin/xz"))
		return;
	snprintf(cmd, sizeof(cmd), "head -c 60M /dev/urandom | base64 > %s",
		 test_tmppath("data"));
	if (!ASSERT_EQ(system(cmd), 0, "input data"))
		return;
	snprintf(cmd, sizeof(cmd), "exec /usr/bin/xz -T2 -6 -c %s > /dev/null",
		 test_tmppath("data"));
	run("xz", argv, NULL);
}

TEST_ROOT(vs_perf_openssl_aes_gcm)
{
	char *argv[] = { "/usr/bin/openssl", "speed", "-evp", "aes-256-gcm",
			 "-bytes", "16384", "-seconds", "60", NULL };

	if (need("/usr/bin/openssl"))
		run("openssl aes-256-gcm", argv, NULL);
}

TEST_ROOT(vs_perf_openssl_sha256)
{
	char *argv[] = { "/usr/bin/openssl", "speed", "-evp", "sha256",
			 "-bytes", "16384", "-seconds", "60", NULL };

	if (need("/usr/bin/openssl"))
		run("openssl sha256", argv, NULL);
}

/* A C file that keeps cc1 busy at -O2 for longer than the window: 2500
 * functions with loops, switches and calls between them. */
static bool write_big_c(const char *path)
{
	FILE *f = fopen(path, "we");
	int i, n = 2500;

	if (!f)
		return false;
	fprintf(f, "struct s { int a, b; double c; struct s *next; };\n");
	for (i = 0; i < n; i++)
		fprintf(f, "int f%d(struct s *p, int n, int k);\n", i);
	for (i = 0; i < n; i++)
		fprintf(f,
			"static int tab%d[64];\n"
			"int f%d(struct s *p, int n, int k)\n{\n"
			"\tint acc = %d;\n"
			"\tfor (int j = 0; j < n; j++) {\n"
			"\t\tswitch ((j + k) %% 7) {\n"
			"\t\tcase 0: acc += tab%d[j & 63] * %d; break;\n"
			"\t\tcase 1: acc ^= p->a << (j & 7); break;\n"
			"\t\tcase 2: if (p->next) p = p->next; else acc -= p->b; break;\n"
			"\t\tcase 3: acc += (int)(p->c * j); break;\n"
			"\t\tcase 4: tab%d[(acc + j) & 63] = acc; break;\n"
			"\t\tdefault: acc = acc * 31 + j;\n"
			"\t\t}\n"
			"\t\tif (acc > %d)\n"
			"\t\t\tacc = f%d(p, n - 1, acc & 15) + (%d & acc);\n"
			"\t}\n"
			"\treturn acc + tab%d[k & 63];\n}\n",
			i, i, i, i, i % 13 + 1, i, i * 7 + 100,
			i % 3 ? (i + 1) % n : i, i, i);
	return fclose(f) == 0;
}

/* gcc -O2 -c: the profiled process is cc1, gcc's child. */
TEST_ROOT(vs_perf_gcc_cc1)
{
	char cmd[1024];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	pid_t gcc, cc1;

	if (!need("/usr/bin/gcc") || !ASSERT_TRUE(write_big_c(test_tmppath("big.c")),
						  "big.c written"))
		return;
	/* its temporary files in our directory, removed with it */
	snprintf(cmd, sizeof(cmd), "TMPDIR=%s exec /usr/bin/gcc -O2 -c %s -o %s",
		 test_tmpdir(), test_tmppath("big.c"), test_tmppath("big.o"));
	gcc = h_spawn(argv);
	if (!ASSERT_GT(gcc, 0, "gcc started"))
		return;
	cc1 = h_find_child(gcc, "cc1", 10000);
	if (ASSERT_GT(cc1, 0, "cc1 found")) {
		usleep(500000);
		compare("cc1", cc1, NULL, PERF_STACK_DEEP);
		kill(cc1, SIGKILL);
	}
	kill(gcc, SIGKILL);
	h_wait(gcc, 10);
}
