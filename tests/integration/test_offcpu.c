// SPDX-License-Identifier: Apache-2.0
/*
 * Off-CPU profiling against the time a workload measured itself: the
 * offcpu workload's threads block 60% of their blocked time under chain_a
 * (nanosleep, a futex wait) and 40% under chain_b (a pipe read), move to
 * another CPU every round, and time each blocking call with
 * CLOCK_MONOTONIC.  At -off-cpu-threshold 1 every switch is recorded, so
 * the profile's time must match theirs.  And a CPython thread's off-CPU
 * stacks carry its Python frames, as its CPU samples do.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/rep_fixture.h"
#include "../unit/test.h"
#include "harness.h"

#define GO "/usr/lib/go-1.19/bin/go"
#define WL_SECONDS "3"

struct wl_totals {
	long long a_ns, b_ns, rounds, migrations;
};

/*
 * Start the workload (it waits for SIGUSR1), start the profiler on it
 * with the off-CPU program and output into path, start the workload, and
 * wait for both.  The profiler runs past the workload's end, so every
 * blocking call the workload timed is in the profile.
 */
static bool run_offcpu(const char *path, struct wl_totals *t)
{
	char totals[512], errp[512], pidbuf[16], *txt;
	char *wargv[] = { (char *)h_workload("offcpu"), WL_SECONDS, totals,
			  NULL };
	const char *args[] = { "-v", "-pid", pidbuf, "-off-cpu-threshold", "1",
			       "-duration", "7s", "-output", path, NULL };
	pid_t w, p;
	int st, rc;

	snprintf(totals, sizeof(totals), "%s/totals.txt", test_tmpdir());
	snprintf(errp, sizeof(errp), "%s/profiler.err", test_tmpdir());
	/* a previous run's "started in" would start the workload before
	 * its handler is in place (SIGUSR1 would kill it) */
	unlink(errp);
	unlink(totals);
	w = h_spawn(wargv);
	if (w < 0)
		return false;
	snprintf(pidbuf, sizeof(pidbuf), "%d", w);
	p = h_profile_started(args, errp, 30);
	if (p < 0) {
		kill(w, SIGKILL);
		h_wait(w, 5);
		txt = h_slurp(errp);
		printf("profiler did not start:\n%s\n", txt ? txt : "");
		free(txt);
		return false;
	}
	kill(w, SIGUSR1);
	st = h_wait(w, 30);
	rc = h_wait(p, 30);
	if (rc != 0) {
		txt = h_slurp(errp);
		printf("profiler failed (wait status %d):\n%s\n", rc,
		       txt ? txt : "");
		free(txt);
		return false;
	}
	if (st != 0) {
		printf("workload failed (wait status %d)\n", st);
		return false;
	}
	txt = h_slurp(totals);
	memset(t, 0, sizeof(*t));
	if (!txt || sscanf(txt, "a_ns=%lld b_ns=%lld rounds=%lld migrations=%lld",
			   &t->a_ns, &t->b_ns, &t->rounds, &t->migrations) != 4) {
		free(txt);
		return false;
	}
	free(txt);
	txt = h_slurp(errp);
	test_note("workload: a %.3f s, b %.3f s blocked, %lld rounds, %lld migrations; "
		  "profiler offcpu_kept=%lld offcpu_full=%lld",
		  t->a_ns / 1e9, t->b_ns / 1e9, t->rounds, t->migrations,
		  h_summary_value(txt ? txt : "", "bpf_offcpu_kept"),
		  h_summary_value(txt ? txt : "", "bpf_offcpu_full"));
	free(txt);
	return true;
}

/* The last frame of a folded stack. */
static const char *leaf(const char *stack)
{
	const char *p = strrchr(stack, ';');

	return p ? p + 1 : stack;
}

TEST_ROOT(offcpu_split_time_and_stacks)
{
	const char *path = test_tmppath("p.folded");
	const char *opath = test_tmppath("p.offcpu.folded");
	long long a_us = 0, b_us = 0, want_a, want_b, got, want;
	int i, complete = 0, chains = 0;
	struct wl_totals t;
	struct folded f;

	if (!ASSERT_TRUE(run_offcpu(path, &t), "profile the workload"))
		return;
	ASSERT_EQ(access(path, R_OK), 0, "the CPU profile is written");
	if (!ASSERT_OK(h_read_folded(opath, &f), "name.offcpu.folded beside it"))
		return;
	for (i = 0; i < f.n; i++) {
		const struct folded_line *l = &f.lines[i];
		bool a, b;

		if (strncmp(l->stack, "ocworker;", 9))
			continue;
		a = strstr(l->stack, ";chain_a;") != NULL;
		b = strstr(l->stack, ";chain_b;") != NULL;
		if (!a && !b)
			continue;
		chains++;
		if (a)
			a_us += (long long)l->count;
		else
			b_us += (long long)l->count;
		/* the user part from the thread's start, the kernel part
		 * down to the scheduler */
		if (strstr(l->stack, ";start_thread;worker_main;") &&
		    strstr(l->stack, ";schedule_[k];") &&
		    !strcmp(leaf(l->stack), "__schedule_[k]"))
			complete++;
		else
			test_note("incomplete: %.600s", l->stack);
	}
	want_a = t.a_ns / 1000;
	want_b = t.b_ns / 1000;
	test_note("off-CPU profile: chain_a %.3f s, chain_b %.3f s (%d stacks)",
		  a_us / 1e6, b_us / 1e6, chains);
	ASSERT_GT(t.migrations, 10, "the threads moved between CPUs");
	/* the workload's own split is the design's 60/40 */
	ASSERT_NEAR(want_a * 10000 / (want_a + want_b), 6000, 500,
		    "the workload blocks 60% under chain_a");
	if (!ASSERT_GT(a_us + b_us, 0, "off-CPU time under the chains"))
		goto out;
	/* the profile's split: within 3 points of the measured one */
	ASSERT_NEAR(a_us * 10000 / (a_us + b_us),
		    want_a * 10000 / (want_a + want_b), 300,
		    "chain_a's share of the off-CPU time (x10000)");
	/* total off-CPU time: within 5% of the measured blocked time */
	got = a_us + b_us;
	want = want_a + want_b;
	ASSERT_NEAR(got * 10000 / want, 10000, 500,
		    "off-CPU time / measured blocked time (x10000)");
	ASSERT_GE(chains, 3, "nanosleep, futex and pipe-read stacks");
	ASSERT_EQ(complete, chains,
		  "every stack complete: start_thread down to __schedule");
out:
	h_free_folded(&f);
}

/* pprof: a third sample type, off_cpu/nanoseconds, that go tool pprof
 * reads; OTLP: a second Profile that strict protoc decodes. */
TEST_ROOT(offcpu_pprof_and_otlp)
{
	char cmd[1200], *out = malloc(1 << 16);
	struct wl_totals t;

	if (!out)
		return;
	if (test_start_subtest("pprof")) {
		const char *path = test_tmppath("p.pb.gz");

		if (access(GO, X_OK)) {
			test_skip("golang-1.19 is not installed");
		} else if (ASSERT_TRUE(run_offcpu(path, &t), "profile")) {
			snprintf(cmd, sizeof(cmd),
				 "HOME=%s GOCACHE=%s/gocache %s tool pprof "
				 "-sample_index=off_cpu -unit=ms -top -nodecount=40 %s 2>&1",
				 test_tmpdir(), test_tmpdir(), GO, path);
			fix_run(cmd, out, 1 << 16);
			test_note("go tool pprof -sample_index=off_cpu -top:\n%.2000s",
				  out);
			ASSERT_TRUE(strstr(out, "Type: off_cpu"),
				    "an off_cpu sample type");
			ASSERT_TRUE(strstr(out, "chain_a") && strstr(out, "chain_b"),
				    "both chains");
			ASSERT_TRUE(strstr(out, "__schedule"), "the kernel part");
		}
	}
	if (test_start_subtest("otlp")) {
		const char *path = test_tmppath("p.otlp");
		int rc;

		if (!fix_upstream_protos()) {
			test_skip("no upstream .proto files (run 'make deps' as root)");
		} else if (ASSERT_TRUE(run_offcpu(path, &t), "profile")) {
			rc = fix_strict_decode("otlp", path, out, 1 << 16);
			test_note("strict decode:\n%.1500s", out);
			ASSERT_EQ(rc, 0, "protoc decodes it, every sample has its CPU");
			ASSERT_TRUE(strstr(out, "thread='ocworker'"),
				    "the workers' samples");
			/* the string table is plain in the request body */
			snprintf(cmd, sizeof(cmd), "grep -c off_cpu %s", path);
			fix_run(cmd, out, 1 << 16);
			ASSERT_GE(atoi(out), 1, "an off_cpu sample type");
		}
	}
	free(out);
}

/*
 * Interpreter frames: a CPython thread sleeping in time.sleep() under
 * wait_here() is unwound at its switch-out as its CPU samples are, so its
 * off-CPU time carries the Python frames between the native ones.
 */
TEST_ROOT(offcpu_python_frames)
{
	static const char script[] =
		"import time\n"
		"def wait_here():\n"
		"    time.sleep(0.003)\n"
		"def outer():\n"
		"    end = time.time() + 6\n"
		"    while time.time() < end:\n"
		"        wait_here()\n"
		"outer()\n";
	const char *py = "/usr/bin/python3.11";
	char spath[512], path[512], opath[512], pidbuf[16], *err = NULL;
	const char *args[] = { "-pid", pidbuf, "-off-cpu-threshold", "1",
			       "-duration", "2s", "-output", path, NULL };
	char *wargv[] = { (char *)py, spath, NULL };
	uint64_t all, in_py;
	struct folded f;
	pid_t w;
	int rc;

	if (access(py, X_OK)) {
		test_skip("no %s", py);
		return;
	}
	snprintf(spath, sizeof(spath), "%s/sleeper.py", test_tmpdir());
	snprintf(path, sizeof(path), "%s/p.folded", test_tmpdir());
	snprintf(opath, sizeof(opath), "%s/p.offcpu.folded", test_tmpdir());
	if (!ASSERT_OK(fix_write_file(spath, script, sizeof(script) - 1), "script"))
		return;
	w = h_spawn(wargv);
	usleep(300000);
	snprintf(pidbuf, sizeof(pidbuf), "%d", w);
	rc = h_profile(args, &err, 60);
	kill(w, SIGKILL);
	h_wait(w, 5);
	if (!ASSERT_EQ(rc, 0, "profile"))
		printf("%s\n", err ? err : "");
	free(err);
	if (!ASSERT_OK(h_read_folded(opath, &f), "p.offcpu.folded"))
		return;
	all = h_count_comm(&f, "python3.11");
	in_py = h_count_with(&f, "python3.11",
			     "outer (sleeper.py:7);wait_here (sleeper.py:3)");
	test_note("python3.11: %.3f s off the CPU, %.3f s under wait_here",
		  all / 1e6, in_py / 1e6);
	/* 2 s of a thread that sleeps nearly all the time */
	ASSERT_GE(all, 1800000, "the thread's off-CPU time, in microseconds");
	ASSERT_GE(in_py * 10000 / (all ? all : 1), 9500,
		  "under the Python frames (x10000)");
	h_free_folded(&f);
}

/*
 * -cgroup filters off-CPU recording as it does CPU samples: the offcpu
 * workload in a cgroup of its own, pingpong (switching all the time)
 * outside it; only the first has off-CPU time in the profile.
 */
TEST_ROOT(offcpu_cgroup_filter)
{
	char mnt[256], cg[600], procs[700], pidbuf[16], path[512], opath[512];
	char *wargv[] = { (char *)h_workload("offcpu"), "6", "/dev/null", NULL };
	char *pargv[] = { (char *)h_workload("pingpong"), "6", NULL };
	const char *args[] = { "-cgroup", cg, "-off-cpu-threshold", "1",
			       "-duration", "2s", "-output", path, NULL };
	char *err = NULL;
	struct folded f;
	pid_t in, out;
	int i, rc;

	if (!h_cgroup2_mount(mnt, sizeof(mnt))) {
		test_skip("cgroup v2 is not mounted");
		return;
	}
	snprintf(cg, sizeof(cg), "%s/ep-offcpu-%d", mnt, (int)getpid());
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	snprintf(path, sizeof(path), "%s/p.folded", test_tmpdir());
	snprintf(opath, sizeof(opath), "%s/p.offcpu.folded", test_tmpdir());
	if (mkdir(cg, 0755)) {
		test_skip("cannot create a cgroup under %s: %s", mnt, strerror(errno));
		return;
	}
	in = h_spawn(wargv);
	out = h_spawn(pargv);
	snprintf(pidbuf, sizeof(pidbuf), "%d\n", (int)in);
	usleep(100000);
	/* in the cgroup before its threads start: they inherit it */
	if (ASSERT_OK(fix_write_file(procs, pidbuf, strlen(pidbuf)), "move it in")) {
		kill(in, SIGUSR1);
		rc = h_profile(args, &err, 60);
		if (!ASSERT_EQ(rc, 0, "profile"))
			printf("%s\n", err ? err : "");
		if (ASSERT_OK(h_read_folded(opath, &f), "p.offcpu.folded")) {
			test_note("ocworker %.3f s, pingpong %.3f s, all %.3f s",
				  h_count_comm(&f, "ocworker") / 1e6,
				  h_count_comm(&f, "pingpong") / 1e6,
				  f.total / 1e6);
			ASSERT_GE(h_count_comm(&f, "ocworker"), 1000000,
				  "the workers inside (us)");
			ASSERT_EQ(h_count_comm(&f, "pingpong"), 0,
				  "nothing of the load outside");
			ASSERT_EQ(f.total, h_count_comm(&f, "ocworker") +
						   h_count_comm(&f, "ochelper") +
						   h_count_comm(&f, "offcpu"),
				  "nothing but the cgroup's threads");
			h_free_folded(&f);
		}
		free(err);
	}
	kill(in, SIGKILL);
	kill(out, SIGKILL);
	h_wait(in, 5);
	h_wait(out, 5);
	for (i = 0; i < 50 && rmdir(cg) && errno == EBUSY; i++)
		usleep(100000);
	ASSERT_NEQ(access(cg, F_OK), 0, "test cgroup removed");
}

/*
 * The per-thread map is bounded: four offcpu workloads keep 24 threads
 * blocked most of the time; at P = 1 with room for 16 waiting threads the
 * map fills, and a full map costs records, counted, not the run.
 */
TEST_ROOT(offcpu_bounded_map)
{
	char *wargv[] = { (char *)h_workload("offcpu"), "4", "/dev/null", NULL };
	char path[512], *err = NULL;
	const char *args[] = { "-off-cpu-threshold", "1", "-off-cpu-max-threads",
			       "16", "-duration", "2s", "-output", path, NULL };
	long long full, kept, recs;
	pid_t w[4];
	int i, rc;

	snprintf(path, sizeof(path), "%s/p.folded", test_tmpdir());
	for (i = 0; i < 4; i++)
		w[i] = h_spawn(wargv);
	/* past their start, where SIGUSR1 is blocked and waited for */
	usleep(300000);
	for (i = 0; i < 4; i++)
		kill(w[i], SIGUSR1);
	rc = h_profile(args, &err, 60);
	for (i = 0; i < 4; i++) {
		kill(w[i], SIGKILL);
		h_wait(w[i], 5);
	}
	if (!ASSERT_EQ(rc, 0, "profile")) {
		printf("%s\n", err ? err : "");
		free(err);
		return;
	}
	full = h_summary_value(err, "bpf_offcpu_full");
	kept = h_summary_value(err, "bpf_offcpu_kept");
	recs = h_summary_value(err, "offcpu");
	test_note("offcpu_kept=%lld offcpu_full=%lld offcpu=%lld", kept, full, recs);
	ASSERT_GT(full, 0, "switch-outs lost to the full map, counted");
	ASSERT_GT(recs, 0, "records still written");
	ASSERT_LE(recs, kept, "no record without a kept stack");
	free(err);
}
