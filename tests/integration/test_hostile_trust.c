// SPDX-License-Identifier: Apache-2.0
/*
 * Issue 16, cases 4 to 6: what user `nobody` can try against the daemon
 * (root) through what the daemon trusts: a mapped
 * file swapped for a link to a root-only file, idle connections to the
 * metrics endpoint, a cache directory of its own with a planted link.
 * Each case asserts what the issue asks of all: a CPU-bound victim keeps
 * at least 90% of its samples (against the CPU time it had while
 * sampled: the host is shared and loaded), the daemon's peak RSS stays under 200 MB, no output holds a
 * string of a file nobody cannot read, and the case's counter moved.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <unistd.h>

#include "../unit/test.h"
#include "harness.h"

#define HZ 99
#define NOBODY 65534
#define RSS_MAX_KB (200 * 1024)

/* ---- helpers ------------------------------------------------------------ */

/* A directory under test_tmpdir() where nobody may create files (the
 * tmpdir itself made traversable, not writable). */
static const char *nobody_dir(void)
{
	static char dir[512];

	snprintf(dir, sizeof(dir), "%s/nobody", test_tmpdir());
	chmod(test_tmpdir(), 0711);
	mkdir(dir, 0777);
	chmod(dir, 0777);
	return dir;
}

/* A directory only root can read, and a file in it holding token. */
static void root_only_file(const char *name, const char *token, char *path,
			   size_t len)
{
	char dir[256];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/rootonly", test_tmpdir());
	mkdir(dir, 0700);
	snprintf(path, len, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%s\n", token);
		fclose(f);
	}
	chmod(path, 0600);
}

/* In a child: quiet, then nobody. */
static void as_nobody(void)
{
	h_quiet_child(NULL);
	h_drop_to(NOBODY, NOBODY);
}

static void stop_pid(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* Compile src (a C text) into out with cc and flags. */
static bool build(const char *name, const char *src, const char *flags,
		  const char *out)
{
	char path[512], cmd[2048];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.c", test_tmpdir(), name);
	f = fopen(path, "w");
	if (!f)
		return false;
	fputs(src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -O1 -w %s -o %s %s 2>&1", flags, out,
		 path);
	return system(cmd) == 0;
}

/* One run of the daemon (root) with a CPU-bound victim (root,
 * split-nofp-pie under a name of its own) beside whatever the case
 * started as nobody.  It profiles the victim and the hostile process by
 * pid: the host is shared with other tests, some of them hostile to the
 * daemon on purpose, which a whole-system run would count here. */
struct run {
	const char *name;
	const char *const *extra; /* more daemon flags, or NULL */
	bool no_map_files;	  /* without CAP_CHECKPOINT_RESTORE, SYS_ADMIN */
	int seconds;
	pid_t also;		  /* profiled with the victim (0: none) */
	/* out */
	pid_t daemon, victim;
	char vcomm[16];
	double t0_ms, cpu0;
	char out[512], errpath[512];
	char *err;
	struct folded f;
	uint64_t victim_samples;
	double victim_expected;
};

static bool run_start(struct run *r)
{
	char dur[16], hz[16], cache[512];
	char vsecs[16], vpath[600], cmd[1400], pids[32];
	const char *argv[64];
	double t_end;
	int n = 0;

	snprintf(r->out, sizeof(r->out), "%s/%s.folded", test_tmpdir(), r->name);
	snprintf(r->errpath, sizeof(r->errpath), "%s/%s.err", test_tmpdir(), r->name);
	snprintf(cache, sizeof(cache), "%s/cache-%s", test_tmpdir(), r->name);
	snprintf(dur, sizeof(dur), "%ds", r->seconds);
	snprintf(hz, sizeof(hz), "%d", HZ);
	snprintf(vsecs, sizeof(vsecs), "%d", r->seconds + 120);
	/* a name of its own: other tests on the host may run the same
	 * workload, and the folded output counts by name */
	snprintf(r->vcomm, sizeof(r->vcomm), "victim-%d", (int)getpid() % 100000);
	snprintf(vpath, sizeof(vpath), "%s/%s", test_tmpdir(), r->vcomm);
	snprintf(cmd, sizeof(cmd), "cp %s %s", h_workload("split-nofp-pie"), vpath);
	if (system(cmd))
		return false;
	{
		char *vargv[] = { vpath, vsecs, NULL };

		r->victim = h_spawn(vargv);
	}
	/* ahead of the host's other load, so that its CPU time (what its
	 * samples are held to) is large enough to measure */
	setpriority(PRIO_PROCESS, (id_t)r->victim, -10);
	argv[n++] = test_bin();
	argv[n++] = "-v";
	argv[n++] = "-duration";
	argv[n++] = dur;
	argv[n++] = "-samples-per-second";
	argv[n++] = hz;
	argv[n++] = "-output";
	argv[n++] = r->out;
	/* the victim and the hostile process, not the whole host: other
	 * tests run there, some of them hostile to the daemon on purpose */
	snprintf(pids, sizeof(pids), "%d", (int)r->victim);
	if (r->also > 0)
		snprintf(pids + strlen(pids), sizeof(pids) - strlen(pids), ",%d",
			 (int)r->also);
	argv[n++] = "-pid";
	argv[n++] = pids;
	if (!r->extra || strcmp(r->extra[0], "-cache-dir")) {
		argv[n++] = "-cache-dir";
		argv[n++] = cache;
	}
	while (r->extra && *r->extra && n < 62)
		argv[n++] = *r->extra++;
	argv[n] = NULL;
	r->daemon = fork();
	if (r->daemon == 0) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 0);
		dup2(fd, 1);
		fd = open(r->errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 2);
		/* root without these two: no /proc/PID/map_files, the
		 * fallback the README documents */
		if (r->no_map_files &&
		    (prctl(PR_CAPBSET_DROP, CAP_CHECKPOINT_RESTORE) ||
		     prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN)))
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	t_end = h_now_ms() + 120000;
	while (h_now_ms() < t_end) {
		char *e = h_slurp(r->errpath);
		bool started = e && strstr(e, "started in");

		free(e);
		if (started) {
			r->t0_ms = h_now_ms();
			r->cpu0 = h_cpu_s(r->victim);
			return true;
		}
		if (waitpid(r->daemon, NULL, WNOHANG) == r->daemon)
			break;
		usleep(2000);
	}
	stop_pid(r->daemon);
	r->daemon = -1;
	r->err = h_slurp(r->errpath);
	printf("%s", r->err ? r->err : "");
	return false;
}

/* Wait for the run's end; read what it wrote; the checks every case
 * makes: the victim's samples, the daemon's peak RSS, and no string of
 * a root-only file (forbidden, NULL-terminated) anywhere in its output. */
static void run_finish(struct run *r, const char *const *forbidden)
{
	/* a second before the daemon's end, which counts from its start
	 * line: this process may see that line late on a loaded host */
	double left = r->t0_ms + (r->seconds - 1) * 1000.0 - h_now_ms(), cpu1;
	long long rss;
	int i, j;

	if (left > 0)
		usleep((useconds_t)(left * 1000));
	/* stopped, it takes no CPU time and no samples more: what it had
	 * between the two readings was all sampled */
	kill(r->victim, SIGSTOP);
	cpu1 = h_cpu_s(r->victim);
	ASSERT_TRUE(WIFEXITED(h_wait(r->daemon, 60)), "the daemon exits");
	stop_pid(r->victim);
	r->err = h_slurp(r->errpath);
	h_read_folded(r->out, &r->f);
	r->victim_samples = h_count_comm(&r->f, r->vcomm);
	r->victim_expected = (cpu1 - r->cpu0) * HZ;
	rss = h_summary_value(r->err, "rss_max_kb");
	test_note("%s: victim %llu samples of %.0f expected (%.1f%%), daemon "
		  "peak RSS %.1f MB, %llu samples in all",
		  r->name, (unsigned long long)r->victim_samples,
		  r->victim_expected,
		  100.0 * r->victim_samples / (r->victim_expected ? r->victim_expected : 1),
		  rss / 1024.0, (unsigned long long)r->f.total);
	test_note("%s: lost=%lld unwind_errors=%lld", r->name,
		  h_summary_value(r->err, "lost"),
		  h_summary_value(r->err, "unwind_errors"));
	ASSERT_GE(r->victim_expected, 30, "the victim had CPU time enough to measure");
	ASSERT_GE(r->victim_samples * 10.0, r->victim_expected * 9,
		  "the victim keeps 90% of its samples");
	ASSERT_GT(rss, 0, "rss_max_kb in the summary");
	ASSERT_LT(rss, RSS_MAX_KB, "the daemon's peak RSS under 200 MB");
	for (i = 0; forbidden && forbidden[i]; i++) {
		bool found = r->err && strstr(r->err, forbidden[i]);

		for (j = 0; j < r->f.n && !found; j++)
			found = strstr(r->f.lines[j].stack, forbidden[i]) != NULL;
		if (!ASSERT_FALSE(found, "no string of a root-only file in the output"))
			printf("      found: %s\n", forbidden[i]);
	}
}

static void run_free(struct run *r)
{
	h_free_folded(&r->f);
	free(r->err);
}

/* ---- case 4: a link swapped under the fallback path -------------------- */

static const char lib_src[] =
	"#include <time.h>\n"
	"#define CAT_(a, b) a##b\n"
	"#define CAT(a, b) CAT_(a, b)\n"
	"static volatile unsigned long sink;\n"
	"__attribute__((noinline)) void CAT(PFX, inner)(void)\n"
	"{ for (int i = 0; i < 200000; i++) sink += i; }\n"
	"void CAT(PFX, spin)(double secs)\n"
	"{\n"
	"	struct timespec a, b;\n"
	"	clock_gettime(CLOCK_MONOTONIC, &a);\n"
	"	do {\n"
	"		CAT(PFX, inner)();\n"
	"		clock_gettime(CLOCK_MONOTONIC, &b);\n"
	"	} while (b.tv_sec - a.tv_sec + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);\n"
	"}\n";

/* Map the library, then put a link to the root-only one where the
 * daemon's fallback looks: "<path> (deleted)", the name /proc/PID/maps
 * gives a mapped file once it is unlinked. */
static const char swap_src[] =
	"#include <dlfcn.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <unistd.h>\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	char link[4200];\n"
	"	void *h = dlopen(argv[1], RTLD_NOW);\n"
	"	void (*spin)(double);\n"
	"	if (!h) return 2;\n"
	"	spin = (void (*)(double))dlsym(h, \"decoyfn_spin\");\n"
	"	if (!spin) return 3;\n"
	"	snprintf(link, sizeof(link), \"%s (deleted)\", argv[1]);\n"
	"	if (unlink(argv[1]) || symlink(argv[2], link)) return 4;\n"
	"	spin(atof(argv[3]));\n"
	"	return 0;\n"
	"}\n";

TEST_ROOT(hostile_trust_map_files_swap)
{
	const char *nd = nobody_dir();
	char decoy[512], secret[512], swap[512], maps[64], secs[16];
	static const char *const forbidden[] = { "rootsec_", NULL };
	struct run r = { .name = "swap", .no_map_files = true, .seconds = 5 };
	char *text;
	pid_t h;
	bool swapped;

	snprintf(decoy, sizeof(decoy), "%s/libdecoy.so", nd);
	snprintf(swap, sizeof(swap), "%s/hostile_swap", nd);
	root_only_file("libsecret.so", "", secret, sizeof(secret));
	/* the same code under names of the same length: a file swapped in
	 * would name the decoy's pcs with the secret's symbols */
	if (!ASSERT_TRUE(build("decoy", lib_src, "-shared -fPIC -DPFX=decoyfn_", decoy) &&
				 build("secret", lib_src, "-shared -fPIC -DPFX=rootsec_", secret) &&
				 build("swap", swap_src, "-ldl", swap),
			 "cc builds the decoy, the secret and the swapper"))
		return;
	chmod(secret, 0600);
	chmod(decoy, 0644);
	snprintf(secs, sizeof(secs), "%d", r.seconds + 60);
	{
		char *argv[] = { swap, decoy, secret, secs, NULL };

		h = h_spawn_as(argv, NULL, NOBODY, NOBODY);
	}
	usleep(300000);
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)h);
	text = h_slurp(maps);
	swapped = text && strstr(text, "libdecoy.so (deleted)");
	free(text);
	if (!ASSERT_TRUE(swapped, "nobody mapped the decoy and put the link in place"))
		goto out;
	r.also = h;
	if (!ASSERT_TRUE(run_start(&r), "the daemon starts without map_files"))
		goto out;
	run_finish(&r, forbidden);
	test_note("mapping_mismatch=%lld; the swapper's samples %llu",
		  h_summary_value(r.err, "mapping_mismatch"),
		  (unsigned long long)h_count_comm(&r.f, "hostile_swap"));
	ASSERT_GE(h_summary_value(r.err, "mapping_mismatch"), 1,
		  "the swapped file refused and counted");
	/* its frames walked by frame pointer, unnamed */
	ASSERT_GE(h_count_comm(&r.f, "hostile_swap"), 5,
		  "the swapper itself was sampled");
out:
	stop_pid(h);
	run_free(&r);
}

/* ---- case 5: idle and slow clients of the metrics endpoint ------------- */

/* Hold n connections to port for secs seconds: a fifth ask and never
 * read (small receive buffer), the rest send nothing or half a request
 * line.  With reopen, each one the server closes is opened again. */
static void hold_connections(int port, int n, int secs, bool reopen)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct pollfd p[64];
	double end = h_now_ms() + secs * 1000.0;
	int i, small = 1024, slow = reopen ? n - n / 5 : n;
	bool first = true;

	for (i = 0; i < n; i++)
		p[i].fd = -1;
	while (h_now_ms() < end) {
		for (i = 0; i < n && (first || reopen); i++) {
			if (p[i].fd >= 0)
				continue;
			p[i].fd = socket(AF_INET, SOCK_STREAM, 0);
			p[i].events = POLLIN;
			if (i >= slow)
				setsockopt(p[i].fd, SOL_SOCKET, SO_RCVBUF, &small,
					   sizeof(small));
			if (connect(p[i].fd, (struct sockaddr *)&a, sizeof(a))) {
				close(p[i].fd);
				p[i].fd = -1;
				continue;
			}
			if (i >= slow)
				(void)!write(p[i].fd, "GET /metrics HTTP/1.0\r\n\r\n", 25);
			else if (i % 2)
				(void)!write(p[i].fd, "GET /met", 8);
		}
		first = false;
		/* a closed one reads as EOF; the slow readers' answers stay
		 * unread */
		poll(p, (nfds_t)n, 100);
		for (i = 0; i < n; i++) {
			char c;

			if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (i >= slow && recv(p[i].fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0)
				continue;
			close(p[i].fd);
			p[i].fd = -1;
		}
		usleep(100000);
	}
	for (i = 0; i < n; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
}

TEST_ROOT(hostile_trust_metrics_idle_clients)
{
	char portarg[16], secret[512], token[64];
	const char *forbidden[] = { token, NULL };
	const char *extra[] = { "-metrics-address", portarg, NULL };
	struct run r = { .name = "metrics", .extra = extra, .seconds = 9 };
	double worst = 0, t;
	int port = h_free_port(), scrapes = 0, ok = 0, st;
	char *body = NULL, path[600];
	pid_t h = -1;

	snprintf(token, sizeof(token), "ROOTONLY-%d-metrics", (int)getpid());
	root_only_file("secret.txt", token, secret, sizeof(secret));
	snprintf(portarg, sizeof(portarg), "%d", port);
	if (!ASSERT_TRUE(run_start(&r), "the daemon starts"))
		goto out;
	h = fork();
	if (h == 0) {
		as_nobody();
		/* the sixteen idle connections, held; then 48 (more
		 * than are served at once), reopened as they are closed */
		hold_connections(port, 16, 3, false);
		hold_connections(port, 48, r.seconds - 3, true);
		_exit(0);
	}
	usleep(500000);
	/* scrape while they hold their connections: each answer at once */
	while (h_now_ms() < r.t0_ms + (r.seconds - 2) * 1000.0) {
		t = h_now_ms();
		st = h_http_get(port, "/metrics", &body);
		t = h_now_ms() - t;
		scrapes++;
		ok += st == 200 && body && strstr(body, "ebpf_profiler_samples_total");
		if (t > worst)
			worst = t;
		free(body);
		body = NULL;
		usleep(250000);
	}
	/* a path naming a root-only file is not served */
	snprintf(path, sizeof(path), "/..%s", secret);
	st = h_http_get(port, path, &body);
	ASSERT_EQ(st, 404, "any other path: 404");
	ASSERT_TRUE(!body || !strstr(body, token), "nothing of the file");
	free(body);
	body = NULL;
	/* the counters, from the endpoint itself (published each second) */
	sleep(1);
	st = h_http_get(port, "/metrics", &body);
	ASSERT_EQ(st, 200, "the last scrape");
	if (getenv("EP_TEST_VERBOSE") && body) {
		FILE *dump = fopen(test_tmppath("last.metrics"), "w");

		if (dump) {
			fputs(body, dump);
			fclose(dump);
		}
	}
	test_note("%d scrapes, %d answered, the slowest in %.0f ms; closed: "
		  "%.0f for time, %.0f for a newer client",
		  scrapes, ok, worst,
		  h_metric(body ? body : "",
			   "ebpf_profiler_metrics_clients_closed_total{reason=\"timeout\"}"),
		  h_metric(body ? body : "",
			   "ebpf_profiler_metrics_clients_closed_total{reason=\"evicted\"}"));
	ASSERT_GE(scrapes, 10, "scrapes");
	ASSERT_EQ(ok, scrapes, "every scrape answered, with the metrics");
	ASSERT_LT(worst, 1000, "the slowest scrape under 1 s (was 24 s)");
	ASSERT_GE(h_metric(body ? body : "",
			   "ebpf_profiler_metrics_clients_closed_total{reason=\"timeout\"}"),
		  16, "the idle clients closed at their deadline, counted in /metrics");
	ASSERT_GT(h_metric(body ? body : "",
			   "ebpf_profiler_metrics_clients_closed_total{reason=\"evicted\"}"),
		  0, "clients over the bound closed for newer ones, counted");
	free(body);
	run_finish(&r, forbidden);
	test_note("summary: metrics_timeouts=%lld metrics_evicted=%lld",
		  h_summary_value(r.err, "metrics_timeouts"),
		  h_summary_value(r.err, "metrics_evicted"));
	ASSERT_GE(h_summary_value(r.err, "metrics_timeouts"), 16, "timeouts in the summary");
	ASSERT_GT(h_summary_value(r.err, "metrics_evicted"), 0, "evictions in the summary");
out:
	stop_pid(h);
	run_free(&r);
}

/* ---- case 6: a cache directory nobody made ----------------------------- */

/* The summary's cache_off_reason (a word, not a number). */
static bool summary_word(const char *err, const char *key, const char *want)
{
	char pat[128];

	snprintf(pat, sizeof(pat), " %s=%s ", key, want);
	return err && strstr(err, pat);
}

static bool file_is(const char *path, const char *text, const struct stat *was)
{
	struct stat st;
	char *now = h_slurp(path);
	bool same = now && !strcmp(now, text) && stat(path, &st) == 0 &&
		    st.st_size == was->st_size &&
		    st.st_mtim.tv_sec == was->st_mtim.tv_sec &&
		    st.st_mtim.tv_nsec == was->st_mtim.tv_nsec &&
		    st.st_uid == 0;

	free(now);
	return same;
}

TEST_ROOT(hostile_trust_cache_dir)
{
	const char *nd = nobody_dir();
	char target[512], token[64], want[80], cdir[512], rdir[512], lnk[600];
	const char *forbidden[] = { token, NULL };
	const char *extra[] = { "-cache-dir", cdir, NULL };
	struct run r = { .name = "cache_nobody", .extra = extra, .seconds = 4 };
	struct run r2 = { .name = "cache_link", .extra = NULL, .seconds = 4 };
	const char *extra2[] = { "-cache-dir", rdir, NULL };
	struct stat was;
	pid_t h;
	int status;

	snprintf(token, sizeof(token), "ROOTONLY-%d-cache", (int)getpid());
	snprintf(want, sizeof(want), "%s\n", token);
	root_only_file("target", token, target, sizeof(target));
	stat(target, &was);
	/* nobody makes the cache directory the daemon will be told to use,
	 * with lock.mdb a link to a root-owned file */
	snprintf(cdir, sizeof(cdir), "%s/cache", nd);
	h = fork();
	if (h == 0) {
		char l[600];

		as_nobody();
		snprintf(l, sizeof(l), "%s/lock.mdb", cdir);
		_exit(mkdir(cdir, 0755) || symlink(target, l) ? 1 : 0);
	}
	waitpid(h, &status, 0);
	if (!ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			 "nobody made the directory and the link"))
		return;
	if (!ASSERT_TRUE(run_start(&r), "the daemon starts"))
		goto out;
	run_finish(&r, forbidden);
	test_note("nobody's directory: cache=%s, reason %s",
		  summary_word(r.err, "cache", "off") ? "off" : "on?",
		  summary_word(r.err, "cache_off_reason", "untrusted_dir") ?
			  "untrusted_dir" : "?");
	ASSERT_TRUE(summary_word(r.err, "cache", "off") &&
			    summary_word(r.err, "cache_off_reason", "untrusted_dir"),
		    "cache=off cache_off_reason=untrusted_dir in the summary");
	ASSERT_TRUE(r.err && strstr(r.err, "owned by another user"),
		    "a clear error naming why");
	ASSERT_TRUE(file_is(target, want, &was), "the root-owned file untouched");

	/* root's own directory, where a link was left: refused too */
	snprintf(rdir, sizeof(rdir), "%s/rootcache", test_tmpdir());
	mkdir(rdir, 0700);
	snprintf(lnk, sizeof(lnk), "%s/lock.mdb", rdir);
	if (!ASSERT_OK(symlink(target, lnk), "a link in root's directory"))
		goto out;
	r2.extra = extra2;
	if (!ASSERT_TRUE(run_start(&r2), "the daemon starts"))
		goto out;
	run_finish(&r2, forbidden);
	ASSERT_TRUE(summary_word(r2.err, "cache_off_reason", "link"),
		    "cache=off cache_off_reason=link");
	ASSERT_TRUE(file_is(target, want, &was), "the root-owned file untouched");
out:
	run_free(&r);
	run_free(&r2);
}
