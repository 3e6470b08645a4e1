// SPDX-License-Identifier: Apache-2.0
/*
 * Faults the daemon must survive: it keeps running, its memory stays
 * bounded, it exits 0 on SIGTERM or at -duration, and whatever it had to
 * drop shows in its exit summary.
 *
 *   an exec storm (thousands of short processes) under whole-system
 *     profiling, with the daemon's RSS sampled throughout;
 *   a collector that is unreachable for the whole run;
 *   processes that exit, or are killed, while the start-up scan reads
 *     them;
 *   an executable replaced (a package upgrade's rename) or deleted while
 *     it runs: still unwound and named, through /proc/PID/map_files.
 *
 * Allocation failures in the parsers and the store are unit tests
 * (tests/unit/test_alloc_faults.c, test_store.c): they need no root.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/test.h"
#include "harness.h"

/* The bound the daemon's RSS must stay under in every fault. */
#define RSS_LIMIT_KB (100 * 1024)

/* The summary's counters every run must print. */
static void check_summary(const char *err)
{
	static const char *const keys[] = { "samples",	     "lost",
					    "events_lost",   "processes",
					    "unwind_errors", "exports_failed",
					    "queue_drops",   "rss_max_kb" };
	size_t i;

	if (!ASSERT_TRUE(err && strstr(err, "samples="), "summary on stderr"))
		return;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		ASSERT_GE(h_summary_value(err, keys[i]), 0, keys[i]);
	ASSERT_LT(h_summary_value(err, "rss_max_kb"), RSS_LIMIT_KB,
		  "peak RSS (getrusage) under 100 MB");
}


/* ---- exec storm ---------------------------------------------------------- */

/* Fork and exec /bin/true, up to 8 at a time, for secs seconds; write
 * how many were started to fd.  Runs in its own process, so that its
 * waitpid(-1) sees only its children. */
static void storm(int fd, double secs)
{
	double end = h_now_ms() + secs * 1000;
	int running = 0;
	long n = 0;

	while (h_now_ms() < end) {
		pid_t pid;

		while (running >= 8 && waitpid(-1, NULL, 0) > 0)
			running--;
		pid = fork();
		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (pid > 0) {
			running++;
			n++;
		}
	}
	while (waitpid(-1, NULL, 0) > 0)
		;
	if (write(fd, &n, sizeof(n)) != sizeof(n))
		_exit(1);
	_exit(0);
}

TEST_ROOT(faults_exec_storm)
{
	char out[512], errp[512], *err = NULL;
	const char *args[] = { "-samples-per-second", "99", "-output", out,
			       "-v", NULL };
	long rss, peak = 0, n = 0;
	int fds[2], status, samples_rss = 0;
	pid_t prof, st;
	struct folded f = { 0 };

	snprintf(out, sizeof(out), "%s/storm.folded", test_tmpdir());
	snprintf(errp, sizeof(errp), "%s/storm.err", test_tmpdir());
	prof = h_profile_started(args, errp, 60);
	if (!ASSERT_GT(prof, 0, "profiler started") ||
	    !ASSERT_OK(pipe(fds), "pipe"))
		return;
	st = fork();
	if (st == 0) {
		close(fds[0]);
		storm(fds[1], 12);
	}
	close(fds[1]);
	/* the daemon's RSS, every 100 ms while the storm lasts */
	while (waitpid(st, &status, WNOHANG) == 0) {
		rss = h_rss_kb(prof);
		if (rss > peak)
			peak = rss;
		samples_rss++;
		usleep(100000);
	}
	if (read(fds[0], &n, sizeof(n)) != sizeof(n))
		n = 0;
	close(fds[0]);
	sleep(1);
	rss = h_rss_kb(prof);
	ASSERT_EQ(kill(prof, 0), 0, "the daemon is still running");
	kill(prof, SIGTERM);
	status = h_wait(prof, 60);
	err = h_slurp(errp);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "exit 0 on SIGTERM");
	check_summary(err);
	if (ASSERT_GT(h_read_folded_rotated(out, &f), 0, "output written"))
		test_note("samples of /bin/true in the profile: %llu",
			  (unsigned long long)h_count_comm(&f, "true"));
	test_note("%ld processes in 12 s; daemon RSS peak %ld KiB (%d readings), "
		  "%ld KiB after; summary: samples=%lld lost=%lld events_lost=%lld "
		  "processes=%lld syncs=%lld exec events=%lld rss_max_kb=%lld",
		  n, peak, samples_rss, rss, h_summary_value(err, "samples"),
		  h_summary_value(err, "lost"),
		  h_summary_value(err, "events_lost"),
		  h_summary_value(err, "processes"),
		  h_summary_value(err, "syncs"),
		  h_summary_value(err, "process_events_exec"),
		  h_summary_value(err, "rss_max_kb"));
	ASSERT_GE(n, 2000, "thousands of processes");
	ASSERT_GT(peak, 0, "RSS read during the storm");
	ASSERT_LT(peak, RSS_LIMIT_KB, "RSS under 100 MB during the storm");
	ASSERT_GT(h_summary_value(err, "samples"), 0, "samples");
	/* an exec is an event only for a process loaded before it (BPF
	 * had its pid_info): every one follows a load, and a storm of
	 * children never sampled sends next to none */
	ASSERT_LE(h_summary_value(err, "process_events_exec"),
		  h_summary_value(err, "syncs"), "exec events only after loads");
	ASSERT_LT(h_summary_value(err, "process_events_exec") +
			  h_bpf_counter(err, "EVENTS_FULL"),
		  n / 10, "not an event per exec");
	h_free_folded(&f);
	free(err);
}

/* ---- collector unreachable ------------------------------------------------ */

/* A TCP port on 127.0.0.1 that nothing listens on (it was free a moment
 * ago), or 0. */
static int closed_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

TEST_ROOT(faults_collector_unreachable)
{
	static const struct h_counter counters[] = {
		{ "exports_ok", "==", 0, "nothing delivered" },
		{ "exports_failed", ">=", 2, "failed attempts counted" },
		/* a batch a second for 6 s, none delivered: all counted as
		 * dropped (still queued at exit) */
		{ "queue_drops", ">=", 5, "undelivered batches counted" },
		{ "samples", ">", 0, "samples" },
		{ "seconds" },
		{ "rss_max_kb" },
	};
	char agent[64], *err = NULL;
	const char *args[] = { "-collection-agent", agent, "-disable-tls",
			       "-reporter-interval", "1s",
			       "-samples-per-second", "99", "-duration", "6s",
			       NULL };
	char *wargv[] = { (char *)h_workload("split-fp"), "20", NULL };
	int port = closed_port(), rc;
	pid_t w;

	if (!ASSERT_GT(port, 0, "a free port"))
		return;
	snprintf(agent, sizeof(agent), "127.0.0.1:%d", port);
	w = h_spawn(wargv); /* something to sample, so batches have data */
	rc = h_profile(args, &err, 90);
	kill(w, SIGKILL);
	h_wait(w, 5);
	ASSERT_EQ(rc, 0, "exit 0");
	check_summary(err);
	h_check_counters(err, counters, sizeof(counters) / sizeof(counters[0]));
	free(err);
}

/* ---- processes that exit while scanned --------------------------------------- */

TEST_ROOT(faults_exit_during_scan)
{
	enum { N = 600 };
	char out[512], errp[512], *err = NULL, secs[N][16];
	const char *args[] = { "-samples-per-second", "99", "-duration", "5s",
			       "-output", out, "-v", NULL };
	char *wargv[] = { (char *)h_workload("split-fp"), "20", NULL };
	static pid_t kids[N];
	struct folded f = { 0 };
	int i, status, started = 0;
	pid_t prof, w;

	snprintf(out, sizeof(out), "%s/scan.folded", test_tmpdir());
	snprintf(errp, sizeof(errp), "%s/scan.err", test_tmpdir());
	w = h_spawn(wargv);
	/* processes that end on their own over the next 2 s */
	for (i = 0; i < N; i++) {
		char *sargv[] = { "/bin/sleep", secs[i], NULL };

		snprintf(secs[i], sizeof(secs[i]), "%.3f", (i % 200) / 100.0);
		kids[i] = h_spawn(sargv);
		started += kids[i] > 0;
	}
	prof = h_profile_bg(args, errp);
	/* and half of them killed at once while the daemon starts */
	usleep(150000);
	for (i = 0; i < N; i += 2)
		if (kids[i] > 0)
			kill(kids[i], SIGKILL);
	for (i = 0; i < N; i++)
		if (kids[i] > 0)
			h_wait(kids[i], 10);
	status = h_wait(prof, 90);
	kill(w, SIGKILL);
	h_wait(w, 5);
	err = h_slurp(errp);
	ASSERT_TRUE(status >= 0 && WIFEXITED(status) &&
			    WEXITSTATUS(status) == 0,
		    "exit 0");
	check_summary(err);
	test_note("%d processes ending or killed during start-up; "
		  "startup_ms=%lld syncs=%lld processes=%lld samples=%lld",
		  started, h_summary_value(err, "startup_ms"),
		  h_summary_value(err, "syncs"),
		  h_summary_value(err, "processes"),
		  h_summary_value(err, "samples"));
	/* the rest of the machine is still profiled correctly */
	if (ASSERT_OK(h_read_folded(out, &f), "output")) {
		uint64_t total = h_count_comm(&f, "split-fp");

		ASSERT_GE(total, 200, "samples of the workload");
		ASSERT_GE(h_count_with(&f, "split-fp", "main") * 100,
			  total * 95, ">= 95% of its samples reach main");
	}
	h_free_folded(&f);
	free(err);
}

/* ---- executables replaced or deleted while they run --------------------------- */

static bool copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;
	bool ok = in >= 0;

	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ok = ok && out >= 0;
	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ok;
}

/* Replace path the way a package upgrade does: a new file renamed over
 * it (the running process keeps the old inode, which has no name now). */
static bool replace(const char *path, const char *with)
{
	char tmp[600];

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	return copy_file(with, tmp) && rename(tmp, path) == 0;
}

/* Run a copy of the frameless split workload from tmp/name, do what to
 * its file, profile it, and check its stacks are complete and named. */
static void vanished_one(const char *name, bool upgrade)
{
	char path[512], out[512], errp[512], pidbuf[16], *err = NULL;
	const char *args[] = { "-pid", pidbuf, "-duration", "4s",
			       "-samples-per-second", "999", "-output", out,
			       "-v", NULL };
	char *wargv[] = { path, "30", NULL };
	struct folded f = { 0 };
	uint64_t total, main_, a;
	pid_t w, prof;
	int status;

	snprintf(path, sizeof(path), "%s/%s", test_tmpdir(), name);
	snprintf(out, sizeof(out), "%s/%s.folded", test_tmpdir(), name);
	snprintf(errp, sizeof(errp), "%s/%s.err", test_tmpdir(), name);
	if (!ASSERT_TRUE(copy_file(h_workload("split-nofp-pie"), path),
			 "copy the workload"))
		return;
	w = h_spawn(wargv);
	usleep(200000);
	if (upgrade)
		ASSERT_TRUE(replace(path, "/bin/true"), "replaced");
	else
		ASSERT_OK(unlink(path), "deleted");
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)w);
	prof = h_profile_started(args, errp, 60);
	if (prof > 0) {
		/* and again while the daemon has it open */
		sleep(1);
		if (upgrade)
			ASSERT_TRUE(replace(path, "/bin/sh"), "replaced again");
		status = h_wait(prof, 60);
		ASSERT_TRUE(status >= 0 && WIFEXITED(status) &&
				    WEXITSTATUS(status) == 0,
			    "exit 0");
	} else {
		ASSERT_GT(prof, 0, "profiler started");
	}
	kill(w, SIGKILL);
	h_wait(w, 5);
	err = h_slurp(errp);
	check_summary(err);
	if (!ASSERT_OK(h_read_folded(out, &f), "output"))
		goto out;
	total = h_count_comm(&f, name);
	main_ = h_count_with(&f, name, "main");
	a = h_count_with(&f, name, "main;chain_a");
	test_note("%s: samples=%llu reach main %.1f%%, chain_a %.1f%%", name,
		  (unsigned long long)total, 100.0 * main_ / (total ? total : 1),
		  100.0 * a / (total ? total : 1));
	if (!ASSERT_GE(total, 1000, "samples of the workload"))
		goto out;
	/* frameless code: complete only with its stack deltas, named only
	 * with its symbols, both read from the old inode */
	ASSERT_GE(main_ * 100, total * 95, ">= 95% reach main");
	ASSERT_NEAR(100.0 * a / total, 60, 5, "chain_a share");
	if (main_ * 100 < total * 95)
		h_dump_top(&f, name, 8);
out:
	h_free_folded(&f);
	free(err);
}

TEST_ROOT(faults_file_replaced_while_mapped)
{
	if (test_start_subtest("upgraded"))
		vanished_one("victim-upgraded", true);
	if (test_start_subtest("deleted"))
		vanished_one("victim-deleted", false);
}

/* ---- the start-up scan: busy processes load, sleepers do not ------------------ */

/*
 * A Python loop that works about 1 ms every 10 ms is asleep at nearly
 * every instant the start-up scan could look, but it used a share of a
 * CPU since it started: the scan loads it (its main thread's state alone
 * would leave it to its first sample).  A process asleep since it started
 * is not read at all.  The scan's choices are its debug lines.
 */
TEST_ROOT(startup_scan_loads_busy_sleepers)
{
	char out[512], errp[512], *err = NULL, want[96];
	const char *args[] = { "-samples-per-second", "99", "-duration", "2s",
			       "-output", out, "-v", NULL };
	char *pyargv[] = { "/usr/bin/python3", "-c",
			   "import time\nwhile 1:\n sum(range(30000)); "
			   "time.sleep(0.008)",
			   NULL };
	char *sargv[] = { "/bin/sleep", "60", NULL };
	struct folded f = { 0 };
	pid_t py, sl, prof;
	int status;

	if (access(pyargv[0], X_OK)) {
		test_skip("no /usr/bin/python3");
		return;
	}
	snprintf(out, sizeof(out), "%s/scanbusy.folded", test_tmpdir());
	snprintf(errp, sizeof(errp), "%s/scanbusy.err", test_tmpdir());
	py = h_spawn(pyargv);
	sl = h_spawn(sargv);
	/* long enough to use a few clock ticks */
	usleep(1500000);
	setenv("EBPF_PROFILER_DEBUG", "1", 1);
	prof = h_profile_bg(args, errp);
	unsetenv("EBPF_PROFILER_DEBUG");
	status = h_wait(prof, 90);
	err = h_slurp(errp);
	kill(py, SIGKILL);
	kill(sl, SIGKILL);
	h_wait(py, 5);
	h_wait(sl, 5);
	ASSERT_TRUE(status >= 0 && WIFEXITED(status) &&
			    WEXITSTATUS(status) == 0,
		    "exit 0");
	if (!ASSERT_TRUE(err != NULL, "stderr"))
		return;
	test_note("scan: listed=%lld running=%lld busy=%lld ran=%lld "
		  "capped=%lld; startup_ms=%lld load_ms=%lld syncs=%lld",
		  h_summary_value(err, "scan_listed"),
		  h_summary_value(err, "scan_running"),
		  h_summary_value(err, "scan_busy"),
		  h_summary_value(err, "scan_ran"),
		  h_summary_value(err, "scan_capped"),
		  h_summary_value(err, "startup_ms"),
		  h_summary_value(err, "load_ms"),
		  h_summary_value(err, "syncs"));
	snprintf(want, sizeof(want), "start-up scan: pid %d ", (int)py);
	ASSERT_TRUE(strstr(err, want) != NULL,
		    "the scan chose the Python loop");
	snprintf(want, sizeof(want), "pid %d (python3) loaded", (int)py);
	ASSERT_TRUE(strstr(err, want) != NULL, "and it loaded");
	snprintf(want, sizeof(want), "start-up scan: pid %d ", (int)sl);
	ASSERT_TRUE(strstr(err, want) == NULL, "not the sleeper");
	snprintf(want, sizeof(want), "pid %d (sleep) loaded", (int)sl);
	ASSERT_TRUE(strstr(err, want) == NULL, "the sleeper never read");
	ASSERT_GE(h_summary_value(err, "scan_listed"), 3, "processes listed");
	ASSERT_EQ(h_summary_value(err, "scan_capped"), 0, "none past the bound");
	/* and its samples are named as Python frames */
	if (ASSERT_OK(h_read_folded(out, &f), "output")) {
		uint64_t total = h_count_comm(&f, "python3");

		test_note("%llu samples of python3", (unsigned long long)total);
		ASSERT_GE(total, 1, "the loop was sampled");
	}
	h_free_folded(&f);
	free(err);
}
