// SPDX-License-Identifier: Apache-2.0
/*
 * Daemon operations: continuous mode and a clean stop, the Prometheus
 * endpoint, probabilistic sampling, the in-kernel pid and cgroup filters,
 * configuration from a file and the environment, and the OTLP resource
 * attributes (container.id, host, OS) in a real export.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/test.h"
#include "harness.h"

/* Start a workload: `name SECONDS`. */
static pid_t workload(const char *name, const char *secs)
{
	char *argv[] = { (char *)h_workload(name), (char *)secs, NULL };

	return h_spawn(argv);
}

static void stop_pid(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		h_wait(pid, 5);
	}
}

/* Wait until the daemon serves metrics (it has attached). */
static bool wait_metrics(int port, int timeout_ms)
{
	double end = h_now_ms() + timeout_ms;

	while (h_now_ms() < end) {
		char *body = NULL;
		int st = h_http_get(port, "/metrics", &body);

		free(body);
		if (st == 200)
			return true;
		usleep(100000);
	}
	return false;
}

/* Start split-fp for secs seconds (its pid in *w), then the daemon in
 * continuous mode at 99 Hz with -output out and the extra args (at most
 * 20; may be NULL), serving metrics on port, and wait until it does (it
 * has loaded and is attaching).  Returns the daemon's pid, or 0 after a
 * failed assertion, the workload then stopped and *w 0. */
static pid_t start_daemon(const char *out, const char *const *extra,
			  const char *errpath, int port, const char *secs,
			  pid_t *w)
{
	const char *argv[20 + 7] = { "-output", out };
	char portarg[16];
	int n = 2, k;
	pid_t d;

	*w = workload("split-fp", secs);
	for (k = 0; extra && extra[k] && k < 20; k++)
		argv[n++] = extra[k];
	snprintf(portarg, sizeof(portarg), "%d", port);
	argv[n++] = "-samples-per-second";
	argv[n++] = "99";
	argv[n++] = "-metrics-address";
	argv[n++] = portarg;
	argv[n] = NULL;
	d = h_profile_bg(argv, errpath);

	if (!ASSERT_TRUE(wait_metrics(port, 15000), "daemon up")) {
		stop_pid(d);
		stop_pid(*w);
		*w = 0;
		return 0;
	}
	return d;
}

/* Send sig and check a clean exit. */
static bool stop_daemon(pid_t d, int sig)
{
	int st;

	kill(d, sig);
	st = h_wait(d, 30);
	return ASSERT_TRUE(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
			   "exit 0 on the signal");
}

/* Sum of counts per rotated file "stem-*.folded" in dir, in name order
 * (names carry the interval's start, so that is time order).  comm NULL:
 * every sample.  Returns the number of files. */
static int rotated_counts(const char *dir, const char *stem, const char *comm,
			  uint64_t *counts, int max)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort), i, k = 0;
	size_t sl = strlen(stem);

	for (i = 0; i < n; i++) {
		const char *nm = names[i]->d_name;

		if (!strncmp(nm, stem, sl) && nm[sl] == '-' &&
		    strstr(nm, ".folded") && !strstr(nm, ".tmp") && k < max) {
			char path[600];
			struct folded f;

			snprintf(path, sizeof(path), "%s/%s", dir, nm);
			if (h_read_folded(path, &f) == 0) {
				counts[k++] = comm ? h_count_comm(&f, comm) : f.total;
				h_free_folded(&f);
			}
		}
		free(names[i]);
	}
	free(names);
	return k;
}

/* SIGTERM and SIGINT in continuous mode: the last interval is written,
 * every sample is in some file, exit 0, and no program, map or link the
 * daemon held is left in the kernel.  The objects are the daemon's own
 * (its fdinfo), so other profilers on the machine do not matter. */
TEST_ROOT(ops_signal_flushes_and_detaches)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = { { "sigterm", SIGTERM }, { "sigint", SIGINT } };
	static const char *const each_second[] = { "-reporter-interval", "1s",
						   NULL };
	size_t s;

	for (s = 0; s < sizeof(sigs) / sizeof(sigs[0]); s++) {
		char out[512], errpath[512], stem[32], *err = NULL;
		uint64_t counts[64], sum = 0;
		struct h_bpf_ids ids;
		pid_t w, d;
		int nfiles, i, port = h_free_port();

		if (!test_start_subtest(sigs[s].name))
			continue;
		snprintf(stem, sizeof(stem), "cont%zu", s);
		snprintf(out, sizeof(out), "%s/%s.folded", test_tmpdir(), stem);
		snprintf(errpath, sizeof(errpath), "%s/%s.err", test_tmpdir(), stem);
		d = start_daemon(out, each_second, errpath, port, "15", &w);
		if (!d)
			continue;
		sleep(3);
		h_bpf_ids_of(d, &ids);
		test_note("%s: the daemon holds %d programs, %d maps, %d links",
			  sigs[s].name, ids.n_progs, ids.n_maps, ids.n_links);
		ASSERT_GE(ids.n_progs, 4, "programs (sample, unwind_native, on_exec, on_exit)");
		ASSERT_GE(ids.n_links, 2, "links (tracepoints, perf events)");
		ASSERT_GE(ids.n_maps, 8, "maps");
		stop_daemon(d, sigs[s].sig);
		stop_pid(w);
		err = h_slurp(errpath);
		nfiles = rotated_counts(test_tmpdir(), stem, NULL, counts, 64);
		for (i = 0; i < nfiles; i++)
			sum += counts[i];
		test_note("%s: %d files, %llu samples in them, summary samples=%lld",
			  sigs[s].name, nfiles, (unsigned long long)sum,
			  h_summary_value(err, "samples"));
		ASSERT_GE(nfiles, 3, "rotated files, the last one written on exit");
		ASSERT_GT(sum, 100, "samples in the files");
		ASSERT_EQ((long long)sum, h_summary_value(err, "samples"),
			  "every sample of the run is in a file (flushed on exit)");
		ASSERT_EQ(h_bpf_ids_alive(&ids), 0,
			  "none of the daemon's programs, maps and links left (bpftool show id)");
		free(err);
	}
}

/* The Prometheus endpoint: format, the counters the brief names, that
 * they move, 404 elsewhere, and a bare port bound to loopback only. */
TEST_ROOT(ops_metrics_endpoint)
{
	static const char *const want[] = {
		"ebpf_profiler_samples_total",
		"ebpf_profiler_samples_lost_total",
		"ebpf_profiler_unwind_errors_total{reason=\"READ_FAULT\"}",
		"ebpf_profiler_map_entries{map=\"mappings\"}",
		"ebpf_profiler_map_capacity{map=\"delta_rows\"}",
		"ebpf_profiler_map_allocated{map=\"delta_rows\"}",
		"ebpf_profiler_map_full_total{map=\"delta_rows\"}",
		"ebpf_profiler_processes",
		"ebpf_profiler_files",
		"ebpf_profiler_extraction_seconds_total",
		"ebpf_profiler_cache_hits_total",
		"ebpf_profiler_cache_misses_total",
		"ebpf_profiler_exports_total{result=\"ok\"}",
		"ebpf_profiler_exports_total{result=\"failed\"}",
		"ebpf_profiler_queue_drops_total",
		"ebpf_profiler_agent_cpu_seconds_total",
		"ebpf_profiler_agent_resident_memory_bytes",
	};
	char why[256], *m1 = NULL, *m2 = NULL, *body = NULL, line[256];
	int port = h_free_port(), n, st;
	double s1, s2;
	size_t i;
	pid_t w, d;
	FILE *f;
	bool loopback = false, any = false;

	d = start_daemon(test_tmppath("m.folded"), NULL, NULL, port, "15", &w);
	if (!d)
		goto out;
	sleep(2);
	ASSERT_EQ(h_http_get(port, "/metrics", &m1), 200, "GET /metrics");
	sleep(2);
	ASSERT_EQ(h_http_get(port, "/metrics", &m2), 200, "GET /metrics again");
	if (!m1 || !m2)
		goto out;
	n = h_prom_check(m2, "ebpf_profiler_", why, sizeof(why));
	test_note("%d series; %s", n, n < 0 ? why : "the exposition parses");
	ASSERT_GT(n, 20, "valid Prometheus text");
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!ASSERT_GE(h_metric(m2, want[i]), 0, want[i]))
			printf("      missing: %s\n", want[i]);
	s1 = h_metric(m1, "ebpf_profiler_samples_total");
	s2 = h_metric(m2, "ebpf_profiler_samples_total");
	test_note("samples_total %.0f -> %.0f in 2 s; agent cpu %.2f s, rss %.1f MB",
		  s1, s2, h_metric(m2, "ebpf_profiler_agent_cpu_seconds_total"),
		  h_metric(m2, "ebpf_profiler_agent_resident_memory_bytes") / 1048576);
	ASSERT_GE(s2 - s1, 50, "samples_total moves while a workload runs");
	ASSERT_GE(h_metric(m2, "ebpf_profiler_bpf_events_total{event=\"SAMPLES\"}") -
			  h_metric(m1, "ebpf_profiler_bpf_events_total{event=\"SAMPLES\"}"),
		  50, "the BPF sample counter moves");
	ASSERT_GT(h_metric(m2, "ebpf_profiler_processes"), 0, "processes tracked");
	ASSERT_EQ(h_metric(m2, "ebpf_profiler_sampling_enabled"), 1, "sampling on");

	st = h_http_get(port, "/other", &body);
	ASSERT_EQ(st, 404, "GET /other");
	free(body);
	body = NULL;

	/* a bare port: the listening socket is 127.0.0.1:port, nothing else
	 * (read from /proc/net/tcp{,6}, no traffic to other addresses) */
	f = fopen("/proc/net/tcp", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned a, p, state;

		if (sscanf(line, " %*d: %8X:%4X %*8X:%*4X %2X", &a, &p, &state) == 3 &&
		    (int)p == port && state == 0x0A) {
			any = true;
			loopback = a == 0x0100007F;
		}
	}
	if (f)
		fclose(f);
	ASSERT_TRUE(any && loopback, "a bare port listens on 127.0.0.1");
	f = fopen("/proc/net/tcp6", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned p, state;

		if (sscanf(line, " %*d: %*32[0-9A-F]:%4X %*32[0-9A-F]:%*4X %2X", &p,
			   &state) == 2 && (int)p == port && state == 0x0A)
			ASSERT_TRUE(false, "no IPv6 listener on the port");
	}
	if (f)
		fclose(f);

	stop_daemon(d, SIGTERM);
	d = 0;
	ASSERT_LT(h_http_get(port, "/metrics", NULL), 0, "endpoint closed after exit");
out:
	stop_pid(d);
	stop_pid(w);
	free(m1);
	free(m2);
}

/* Probabilistic mode, threshold 50, decided each second and exported each
 * second: whole intervals are on or off.  Over 12 intervals the chance
 * that all draws agree is 2^-11. */
TEST_ROOT(ops_probabilistic_on_off)
{
	static const char *const prob[] = { "-reporter-interval", "1s",
					    "-probabilistic-threshold", "50",
					    "-probabilistic-interval", "1s",
					    NULL };
	char *m = NULL, errpath[512];
	uint64_t counts[64];
	int port = h_free_port(), nfiles, on = 0, off = 0, partial = 0, i;
	pid_t w, d;

	snprintf(errpath, sizeof(errpath), "%s/prob.err", test_tmpdir());
	d = start_daemon(test_tmppath("prob.folded"), prob, errpath, port, "25",
			 &w);
	if (!d)
		goto out;
	sleep(12);
	ASSERT_EQ(h_http_get(port, "/metrics", &m), 200, "GET /metrics");
	stop_daemon(d, SIGTERM);
	d = 0;
	nfiles = rotated_counts(test_tmpdir(), "prob", "split-fp", counts, 64);
	{
		char buf[512] = "";
		size_t len = 0;

		for (i = 0; i < nfiles; i++) {
			len += snprintf(buf + len, sizeof(buf) - len, " %llu",
					(unsigned long long)counts[i]);
			if (len >= sizeof(buf))
				break;
		}
		test_note("samples of the workload per 1 s interval:%s", buf);
	}
	/* an interval on for a whole second has up to 99 samples of the
	 * workload (fewer when the machine is busy); a switch inside an
	 * interval would leave a few; the first and last are partial */
	for (i = 0; i < nfiles; i++) {
		if (counts[i] == 0)
			off++;
		else if (counts[i] >= 10)
			on++;
		else if (i > 0 && i < nfiles - 1)
			partial++;
	}
	test_note("%d files: %d on, %d off, toggles=%.0f", nfiles, on, off,
		  h_metric(m, "ebpf_profiler_sampling_toggles_total"));
	ASSERT_GE(nfiles, 10, "one file per interval");
	ASSERT_GE(on, 1, "intervals with sampling on");
	ASSERT_GE(off, 1, "intervals with sampling off: not one sample");
	ASSERT_EQ(partial, 0, "no interval half on: the switch happens at the cut");
	ASSERT_GE(h_metric(m, "ebpf_profiler_sampling_toggles_total"), 1,
		  "sampling_toggles_total");
	ASSERT_TRUE(h_metric(m, "ebpf_profiler_sampling_enabled") == 0 ||
			    h_metric(m, "ebpf_profiler_sampling_enabled") == 1,
		    "sampling_enabled is 0 or 1");
out:
	stop_pid(d);
	stop_pid(w);
	free(m);
}

static bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	bool ok;

	if (!f)
		return false;
	ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok;
}

static bool move_to_cgroup(const char *cg, pid_t pid)
{
	char path[1024], buf[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(buf, sizeof(buf), "%d\n", (int)pid);
	return write_file(path, buf);
}

/* A cgroup v2 directory of the test's, and one below it. */
struct test_cgroup {
	char mnt[256], parent[600], child[800];
};

/* Make the cgroups mnt/rel and mnt/rel/leaf: false, the test skipped,
 * where cgroup v2 is not mounted or they cannot be made. */
static bool cgroup_make(struct test_cgroup *cg, const char *rel,
			const char *leaf)
{
	if (!h_cgroup2_mount(cg->mnt, sizeof(cg->mnt))) {
		test_skip("cgroup v2 is not mounted");
		return false;
	}
	snprintf(cg->parent, sizeof(cg->parent), "%s%s", cg->mnt, rel);
	snprintf(cg->child, sizeof(cg->child), "%s/%s", cg->parent, leaf);
	if (mkdir(cg->parent, 0755) || mkdir(cg->child, 0755)) {
		test_skip("cannot create a cgroup under %s: %s", cg->mnt,
			  strerror(errno));
		rmdir(cg->parent);
		return false;
	}
	return true;
}

/* Remove both; the child is empty once its processes are reaped. */
static void cgroup_remove(const struct test_cgroup *cg)
{
	int i;

	for (i = 0; i < 50 && rmdir(cg->child) && errno == EBUSY; i++)
		usleep(100000);
	rmdir(cg->parent);
}

/* Profile the whole machine for 3 s with one -cgroup value. */
static int profile_cgroup(const char *cg, struct folded *f, char **err)
{
	const char *out = test_tmppath("cg.folded");
	const char *args[] = { "-cgroup", cg, "-duration", "3s",
			       "-samples-per-second", "99", "-output", out, NULL };
	int rc = h_profile(args, err, 60);

	memset(f, 0, sizeof(*f));
	if (rc == 0)
		h_read_folded(out, f);
	return rc;
}

/* The cgroup filter, in the kernel: a workload moved into a cgroup v2
 * child appears, one outside does not; the parent selects its subtree. */
TEST_ROOT(ops_cgroup_filter)
{
	struct test_cgroup cg;
	char rel[64];
	struct folded f;
	char *err = NULL;
	pid_t in = 0, out = 0;
	int i;
	/* the workload's cgroup, and "/ep-test-N" as /proc/PID/cgroup
	 * writes it: its parent selects its subtree */
	const struct {
		const char *name, *path, *inside, *only;
		bool subtree;
	} sel[] = {
		{ "exact_cgroup_path", cg.child, "the workload inside",
		  "nothing but the cgroup's samples" },
		{ "parent_as_in_proc_cgroup", rel, "the workload below",
		  "nothing but the subtree's samples", true },
	};

	snprintf(rel, sizeof(rel), "/ep-test-%d", (int)getpid());
	if (!cgroup_make(&cg, rel, "inner"))
		return;
	in = workload("split-fp", "20");
	out = workload("split-nofp-pie", "20");
	if (!ASSERT_TRUE(move_to_cgroup(cg.child, in), "move the workload in"))
		goto cleanup;
	usleep(200000);

	for (i = 0; i < 2; i++) {
		uint64_t inside, outside;

		if (!test_start_subtest(sel[i].name))
			continue;
		ASSERT_EQ(profile_cgroup(sel[i].path, &f, &err), 0,
			  "exit code");
		inside = h_count_comm(&f, "split-fp");
		outside = h_count_comm(&f, "split-nofp-pie");
		test_note("%s: inside: %llu samples, outside: %llu, all: %llu",
			  sel[i].path, (unsigned long long)inside,
			  (unsigned long long)outside,
			  (unsigned long long)f.total);
		ASSERT_GE(inside, 60, sel[i].inside);
		if (sel[i].subtree)
			ASSERT_EQ(outside, 0, "not the one outside");
		ASSERT_EQ(f.total, inside, sel[i].only);
		h_free_folded(&f);
		free(err);
	}
	if (test_start_subtest("v1_directory_refused")) {
		static const char *const v1[] = { "/sys/fs/cgroup/cpu", "/sys/fs/cgroup" };

		for (i = 0; i < 2; i++) {
			const char *args[] = { "-cgroup", v1[i], "-duration", "1s", NULL };
			struct stat stt;

			if (!strcmp(v1[i], cg.mnt) || stat(v1[i], &stt))
				continue;
			ASSERT_EQ(h_profile(args, &err, 30), 1, v1[i]);
			ASSERT_TRUE(err && strstr(err, "no such cgroup v2 directory"),
				    "clear message");
			free(err);
		}
	}
cleanup:
	stop_pid(in);
	stop_pid(out);
	cgroup_remove(&cg);
	ASSERT_NEQ(access(cg.parent, F_OK), 0, "test cgroup removed");
}

/* -pid twice: both processes, not a third. */
TEST_ROOT(ops_pid_repeatable)
{
	const char *out = test_tmppath("pids.folded");
	char pa[16], pb[16], *err = NULL;
	pid_t a = workload("split-fp", "15"), b = workload("split-nofp-pie", "15"),
	      c = workload("split-nofp-nopie", "15");
	struct folded f = { 0 };

	snprintf(pa, sizeof(pa), "%d", a);
	snprintf(pb, sizeof(pb), "%d", b);
	usleep(200000);
	{
		const char *args[] = { "-pid", pa, "-pid", pb, "-duration", "3s",
				       "-samples-per-second", "99", "-output", out,
				       NULL };

		ASSERT_EQ(h_profile(args, &err, 60), 0, "exit code");
	}
	h_read_folded(out, &f);
	test_note("a=%llu b=%llu c=%llu total=%llu",
		  (unsigned long long)h_count_comm(&f, "split-fp"),
		  (unsigned long long)h_count_comm(&f, "split-nofp-pie"),
		  (unsigned long long)h_count_comm(&f, "split-nofp-nopi"),
		  (unsigned long long)f.total);
	ASSERT_GE(h_count_comm(&f, "split-fp"), 50, "first -pid");
	ASSERT_GE(h_count_comm(&f, "split-nofp-pie"), 50, "second -pid");
	ASSERT_EQ(h_count_comm(&f, "split-nofp-nopi"), 0, "not the third process");
	ASSERT_EQ(f.total, h_count_comm(&f, "split-fp") + h_count_comm(&f, "split-nofp-pie"),
		  "nothing else");
	h_free_folded(&f);
	free(err);
	stop_pid(a);
	stop_pid(b);
	stop_pid(c);
}

/* Profile pid for 3 s with the environment and file as set; returns the
 * sampling rate seen: samples per CPU second of the workload. */
static double observed_hz(pid_t pid, const char *output, const char *const *extra)
{
	char pidarg[16], *err = NULL;
	const char *args[16] = { "-pid", pidarg, "-duration", "3s" };
	struct folded f;
	double c0, c1, hz = -1;
	int n = 4, rc;

	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	while (extra && *extra && n < 14)
		args[n++] = *extra++;
	args[n] = NULL;
	c0 = h_cpu_s(pid);
	rc = h_profile(args, &err, 60);
	c1 = h_cpu_s(pid);
	if (ASSERT_EQ(rc, 0, "exit code") && h_read_folded(output, &f) == 0) {
		/* the CPU time includes the start-up, before sampling: a few
		 * percent low at most */
		hz = c1 > c0 ? f.total / (c1 - c0) : -1;
		h_free_folded(&f);
	} else if (err) {
		printf("%s", err);
	}
	free(err);
	return hz;
}

/* Precedence end to end: command line, then EBPF_PROFILER_*, then the
 * -config file (also named by EBPF_PROFILER_CONFIG).  The rate decides
 * the sample count, per CPU second of the workload. */
TEST_ROOT(ops_config_file_and_env_precedence)
{
	const char *cfg = test_tmppath("ebpf-profiler.conf");
	const char *out_file = test_tmppath("from-file.folded");
	const char *out_cli = test_tmppath("from-cli.folded");
	const char *const file[] = { "-config", cfg, NULL };
	const char *const cli[] = { "-config", cfg, "-samples-per-second",
				    "100", "-output", out_cli, NULL };
	/* each source of the rate (an environment variable set for the
	 * run, NULL: none) and the rate seen */
	const struct {
		const char *name, *var, *value;
		const char *const *extra;
		const char *out;
		double want, tol;
		const char *what;
	} cases[] = {
		{ "file", NULL, NULL, file, out_file, 200, 40,
		  "the file's rate, and its output" },
		{ "env_config_names_the_file", "EBPF_PROFILER_CONFIG", cfg,
		  NULL, out_file, 200, 40,
		  "the file named by the environment" },
		{ "env_beats_file", "EBPF_PROFILER_SAMPLES_PER_SECOND", "50",
		  file, out_file, 50, 12, "the environment's rate" },
		{ "cli_beats_env_and_file", "EBPF_PROFILER_SAMPLES_PER_SECOND",
		  "50", cli, out_cli, 100, 20, "the command line's rate" },
	};
	char text[1024];
	pid_t w = workload("split-fp", "30");
	double hz;
	size_t i;

	snprintf(text, sizeof(text),
		 "# written by the test\n"
		 "samples-per-second = 200\n"
		 "output %s\n"
		 "--reporter-interval 1s\n",
		 out_file);
	if (!ASSERT_TRUE(write_file(cfg, text), "config file"))
		goto out;
	usleep(200000);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!test_start_subtest(cases[i].name))
			continue;
		if (cases[i].var)
			setenv(cases[i].var, cases[i].value, 1);
		hz = observed_hz(w, cases[i].out, cases[i].extra);
		if (cases[i].var)
			unsetenv(cases[i].var);
		test_note("%s: %.0f samples per CPU second (want %.0f)",
			  cases[i].name, hz, cases[i].want);
		ASSERT_NEAR(hz, cases[i].want, cases[i].tol, cases[i].what);
	}
	if (test_start_subtest("bad_env_value_named")) {
		const char *args[] = { "-duration", "1s", NULL };
		char *err = NULL;

		setenv("EBPF_PROFILER_SAMPLES_PER_SECOND", "fast", 1);
		ASSERT_EQ(h_profile(args, &err, 30), 1, "exit code");
		unsetenv("EBPF_PROFILER_SAMPLES_PER_SECOND");
		ASSERT_TRUE(err && strstr(err, "EBPF_PROFILER_SAMPLES_PER_SECOND"),
			    "the message names the variable");
		free(err);
	}
out:
	stop_pid(w);
}

/* Run python3 on a snippet with argv; its stdout (malloc'd). */
static char *python_out(const char *code, const char *arg)
{
	char path[512], cmd[2400], *text;

	snprintf(path, sizeof(path), "%s/snippet.py", test_tmpdir());
	if (!write_file(path, code))
		return NULL;
	snprintf(cmd, sizeof(cmd), "cd %s/tests/unit && /usr/bin/python3 %s %s > %s.out 2>&1",
		 test_srcdir(), path, arg, path);
	if (system(cmd) == -1)
		return NULL;
	snprintf(cmd, sizeof(cmd), "%s.out", path);
	text = h_slurp(cmd);
	return text;
}

/* Every resource's attributes, one "pid key=value" a line. */
static const char dump_attrs_py[] =
	"import sys, glob\n"
	"sys.path.insert(0, '.')\n"
	"import otlp_check as o\n"
	"for path in sorted(glob.glob(sys.argv[1] + '/req-*.bin')):\n"
	"    req = open(path, 'rb').read()\n"
	"    for rp in o.get(req, 1):\n"
	"        a = {}\n"
	"        for kv in o.get(o.one(rp, 1, b''), 1):\n"
	"            a[o.one(kv, 1, b'').decode()] = o.anyvalue(o.one(kv, 2, b''))\n"
	"        for k in sorted(a):\n"
	"            print(a.get('process.pid'), '%s=%s' % (k, a[k]))\n";

/* OTLP over HTTP to a test receiver, configured by the environment as a
 * DaemonSet would: container.id from the workload's cgroup, host.name,
 * os.type and the kernel release on the resource. */
TEST_ROOT(ops_otlp_resource_attributes)
{
	static const char id[] =
		"4f1c0ffee0ddba11deadbeefcafe0123456789abcdef0123456789abcdef0123";
	char slice[64], scope[128], rdir[512], cmd[2048], want[256];
	char endpoint[64], pidarg[16], *attrs = NULL, *err = NULL, *port_s = NULL;
	struct test_cgroup cg;
	struct utsname u;
	pid_t w = 0, rcv = 0;
	int i;

	snprintf(slice, sizeof(slice), "/ep-test-%d.slice", (int)getpid());
	snprintf(scope, sizeof(scope), "cri-containerd-%s.scope", id);
	if (!cgroup_make(&cg, slice, scope))
		return;
	snprintf(rdir, sizeof(rdir), "%s/otlp", test_tmpdir());
	mkdir(rdir, 0755);
	snprintf(cmd, sizeof(cmd),
		 "exec /usr/bin/python3 %s/tests/unit/otlp_receiver.py http 0 %s "
		 "--max-seconds 60", test_srcdir(), rdir);
	rcv = fork();
	if (rcv == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	snprintf(cmd, sizeof(cmd), "%s/port", rdir);
	for (i = 0; i < 300 && !(port_s = h_slurp(cmd)); i++)
		usleep(50000);
	if (!ASSERT_NOT_NULL(port_s, "receiver listening"))
		goto out;
	w = workload("split-fp", "15");
	if (!ASSERT_TRUE(move_to_cgroup(cg.child, w), "workload into the container cgroup"))
		goto out;
	snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%d", atoi(port_s));
	snprintf(pidarg, sizeof(pidarg), "%d", (int)w);
	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint, 1);
	setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", 1);
	setenv("EBPF_PROFILER_REPORTER_INTERVAL", "1s", 1);
	{
		const char *args[] = { "-pid", pidarg, "-duration", "3s", NULL };

		ASSERT_EQ(h_profile(args, &err, 60), 0, "exit code");
	}
	unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	unsetenv("OTEL_EXPORTER_OTLP_PROTOCOL");
	unsetenv("EBPF_PROFILER_REPORTER_INTERVAL");
	test_note("exports_ok=%lld exports_failed=%lld",
		  h_summary_value(err, "exports_ok"), h_summary_value(err, "exports_failed"));
	ASSERT_GE(h_summary_value(err, "exports_ok"), 2, "exports every second");
	ASSERT_EQ(h_summary_value(err, "exports_failed"), 0, "no failed export");
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 %s/tests/unit/otlp_check.py %s/req-1.bin | grep ERROR",
		 test_srcdir(), rdir);
	ASSERT_NEQ(system(cmd), 0, "the first request passes otlp_check.py (no ERROR)");
	attrs = python_out(dump_attrs_py, rdir);
	if (!ASSERT_NOT_NULL(attrs, "decoded"))
		goto out;
	snprintf(want, sizeof(want), "%d container.id=%s\n", (int)w, id);
	ASSERT_TRUE(strstr(attrs, want) != NULL, "container.id from /proc/PID/cgroup");
	uname(&u);
	snprintf(want, sizeof(want), "%d os.version=%s\n", (int)w, u.release);
	ASSERT_TRUE(strstr(attrs, want) != NULL, "the kernel release");
	snprintf(want, sizeof(want), "%d os.type=linux\n", (int)w);
	ASSERT_TRUE(strstr(attrs, want) != NULL, "os.type");
	snprintf(want, sizeof(want), "%d host.name=%s\n", (int)w, u.nodename);
	ASSERT_TRUE(strstr(attrs, want) != NULL, "host.name");
	if (!strstr(attrs, "container.id="))
		printf("      attributes:\n%s", attrs);
out:
	stop_pid(w);
	if (rcv > 0) {
		kill(rcv, SIGTERM);
		h_wait(rcv, 10);
	}
	cgroup_remove(&cg);
	free(attrs);
	free(err);
	free(port_s);
}

/* The capabilities of ci/ebpf-profiler.service as a setpriv bounding set
 * ("-all,+bpf,+perfmon,..."). */
static bool unit_caps(char *out, size_t len)
{
	char path[512], *text, *p, *eol;
	size_t n;

	snprintf(path, sizeof(path), "%s/ci/ebpf-profiler.service", test_srcdir());
	text = h_slurp(path);
	p = text ? strstr(text, "\nCapabilityBoundingSet=") : NULL;
	if (!p) {
		free(text);
		return false;
	}
	p += strlen("\nCapabilityBoundingSet=");
	eol = strchr(p, '\n');
	n = (size_t)snprintf(out, len, "-all");
	while (p < eol && n < len) {
		char *end;

		p += strspn(p, " ");
		end = p + strcspn(p, " \n");
		if (end > p && !strncmp(p, "CAP_", 4)) {
			n += (size_t)snprintf(out + n, len - n, ",+");
			for (p += 4; p < end && n + 1 < len; p++)
				out[n++] = (char)tolower((unsigned char)*p);
			out[n] = 0;
		}
		p = end;
	}
	free(text);
	return n > 4 && n < len;
}

/* The daemon as the systemd unit runs it: root with only the unit's
 * capabilities (no CAP_SYS_ADMIN), no new privileges, the file system
 * read-only but for its cache and output directory, /sys read-only.  It
 * must load, sample every CPU, read another user's process (maps,
 * map_files, memory) and name kernel frames. */
TEST_ROOT(ops_runs_with_the_unit_privileges)
{
	char caps[256], cmd[4096], pidarg[16], *err = NULL;
	const char *dir = test_tmpdir(), *out = test_tmppath("unit.folded");
	struct folded f = { 0 };
	uint64_t total, named = 0, hex_kernel = 0;
	pid_t w;
	int rc, i;

	if (!ASSERT_TRUE(unit_caps(caps, sizeof(caps)), "capabilities from the unit"))
		return;
	if (system("command -v unshare >/dev/null && command -v setpriv >/dev/null")) {
		test_skip("needs unshare and setpriv (util-linux)");
		return;
	}
	/* the workload belongs to another user */
	w = fork();
	if (w == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(126);
		execl(h_workload("split-nofp-pie"), "split-nofp-pie", "20", (char *)NULL);
		_exit(127);
	}
	usleep(300000);
	if (waitpid(w, &rc, WNOHANG) == w) {
		test_skip("the workload cannot run as nobody (exit %d)", WEXITSTATUS(rc));
		return;
	}
	snprintf(pidarg, sizeof(pidarg), "%d", (int)w);
	snprintf(cmd, sizeof(cmd),
		 "unshare -m sh -c 'mount --make-rprivate / && "
		 "mount --bind %s %s && mount -o remount,bind,ro / && "
		 "mount -o remount,bind,ro /sys && "
		 "exec setpriv --bounding-set=%s --inh-caps=-all --no-new-privs "
		 "%s -duration 3s -samples-per-second 99 -output %s "
		 "-cache-dir %s/cache' > %s/unit.err 2>&1",
		 dir, dir, caps, test_bin(), out, dir, dir);
	rc = system(cmd);
	snprintf(cmd, sizeof(cmd), "%s/unit.err", dir);
	err = h_slurp(cmd);
	test_note("bounding set %s", caps);
	if (!ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "exit 0")) {
		printf("%s", err ? err : "");
		goto out;
	}
	h_read_folded(out, &f);
	total = h_count_comm(&f, "split-nofp-pie");
	for (i = 0; i < f.n; i++) {
		const char *k = f.lines[i].stack;

		if (!strncmp(k, "split-nofp-pie;", 15) && strstr(k, ";main;chain_"))
			named += f.lines[i].count;
		/* an unnamed kernel frame is ";0xffff..._[k]" */
		while ((k = strstr(k, ";0xffff"))) {
			size_t len = strcspn(k + 1, ";");

			if (len > 4 && !strncmp(k + 1 + len - 4, "_[k]", 4))
				hex_kernel += f.lines[i].count;
			k += 1 + len;
		}
	}
	test_note("samples of the other user's workload %llu, unwound and named %.1f%%, "
		  "all samples %llu",
		  (unsigned long long)total, 100.0 * named / (total ? total : 1),
		  (unsigned long long)f.total);
	ASSERT_GE(total, 100, "samples of another user's process");
	/* the samples taken before the start-up scan reached it are walked
	 * by frame pointer, which this binary lacks: a few percent */
	ASSERT_GE(named * 100, total * 80, "its stacks unwound and named (maps, memory)");
	ASSERT_EQ(hex_kernel, 0, "kernel frames named (kallsyms)");
	ASSERT_EQ(h_summary_value(err, "lost"), 0, "nothing lost");
out:
	stop_pid(w);
	h_free_folded(&f);
	free(err);
}
