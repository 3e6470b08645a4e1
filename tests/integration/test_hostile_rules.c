// SPDX-License-Identifier: Apache-2.0
/*
 * Issue 16, case 3 (blind): an unprivileged user maps files built to fill
 * the shared rule table (three of 30 K distinct rules each, and three of
 * 7 K that pass a file's share but not their owner's), against the
 * whole-system daemon.  A program started afterwards must still unwind,
 * the daemon must stay small and keep its samples, and the refusals must
 * be counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/test.h"
#include "harness.h"

/* nobody: the hostile user */
#define HOSTILE_UID 65534
#define HZ 199
#define VICTIM_SECONDS 4

/* Defined in tests/unit/test_exemgr.c. */
int exemgr_test_rules_lib(const char *dir, const char *name, unsigned n,
			  unsigned first, char *out, size_t len);

/* The hostile program: dlopen every library, then burn a few ms in each
 * in turn every 100 ms (so the daemon sees their code run), until
 * SECONDS.  Also tries to read the secret, which nobody cannot. */
static const char hold_src[] =
	"#include <dlfcn.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <time.h>\n"
	"#include <unistd.h>\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	void (*spin[16])(long);\n"
	"	int i, n = 0;\n"
	"	time_t end = time(NULL) + atoi(argv[1]);\n"
	"	FILE *s = fopen(argv[2], \"r\");\n"
	"	if (s)\n"
	"		return 3; /* the test's setup is wrong */\n"
	"	for (i = 3; i < argc && n < 16; i++) {\n"
	"		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);\n"
	"		if (!h)\n"
	"			return 2;\n"
	"		spin[n++] = (void (*)(long))dlsym(h, \"rules_spin\");\n"
	"	}\n"
	"	while (time(NULL) < end) {\n"
	"		for (i = 0; i < n; i++)\n"
	"			spin[i](2000000);\n"
	"		usleep(100000);\n"
	"	}\n"
	"	return 0;\n"
	"}\n";

static void hr_stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		h_wait(pid, 5);
	}
}

/* One Prometheus sample from the daemon's endpoint, or -1. */
static double hr_metric(int port, const char *series)
{
	char *body = NULL;
	double v = -1;

	if (h_http_get(port, "/metrics", &body) == 200 && body)
		v = h_metric(body, series);
	free(body);
	return v;
}

/* Run argv as uid HOSTILE_UID (group too, no supplementary groups). */
static pid_t hr_spawn_as_nobody(char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0 && !getenv("EP_TEST_VERBOSE")) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (setgroups(0, NULL) || setgid(HOSTILE_UID) ||
		    setuid(HOSTILE_UID))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Wait for pid up to timeout_s, with its resource usage. */
static int hr_wait_usage(pid_t pid, int timeout_s, struct rusage *ru)
{
	double end = h_now_ms() + timeout_s * 1000.0;
	int st;

	while (h_now_ms() < end) {
		pid_t r = wait4(pid, &st, WNOHANG, ru);

		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		usleep(20000);
	}
	hr_stop(pid);
	return -1;
}

/* Does any of the files hold needle? */
static bool hr_any_contains(const char *const *paths, int n,
			    const char *needle)
{
	int i;

	for (i = 0; i < n; i++) {
		char *s = paths[i] ? h_slurp(paths[i]) : NULL;
		bool hit = s && strstr(s, needle);

		free(s);
		if (hit)
			return true;
	}
	return false;
}

TEST_ROOT(hostile_rules_table_kept_for_others)
{
	char dir[2048], hold[4096], src[4096], libs[6][4096], secret[4096];
	char portarg[16], marker[64], series[128], *summary = NULL, *err = NULL;
	const char *tmp = test_tmpdir(), *out = test_tmppath("p.folded"),
		   *errpath = test_tmppath("daemon.err"),
		   *metrics_path = test_tmppath("metrics.txt");
	char *vargv[] = { (char *)h_workload("split-nofp-pie"), "4", NULL };
	struct folded f = { 0 };
	struct rusage ru;
	pid_t d = 0, hp = 0, v = 0;
	double cpu_s, t0;
	long long over_file, over_owner, rss_kb;
	uint64_t vsamples;
	int port = h_free_port(), i, st;
	FILE *fp;

	if (access(vargv[0], X_OK)) {
		test_skip("%s not built", vargv[0]);
		return;
	}
	/* a directory nobody can write and read, on a path it can walk */
	snprintf(dir, sizeof(dir), "%s/nobody", tmp);
	if (!ASSERT_OK(chmod(tmp, 0755), "chmod tmpdir") ||
	    !ASSERT_OK(mkdir(dir, 0777), "mkdir") ||
	    !ASSERT_OK(chmod(dir, 0777), "chmod 0777"))
		return;
	/* a file nobody cannot read: its contents must not appear anywhere */
	snprintf(marker, sizeof(marker), "i16-rules-secret-%d", (int)getpid());
	snprintf(secret, sizeof(secret), "%s/secret", tmp);
	fp = fopen(secret, "w");
	if (!ASSERT_TRUE(fp != NULL, "secret"))
		return;
	fprintf(fp, "%s\n", marker);
	fclose(fp);
	chmod(secret, 0600);

	snprintf(src, sizeof(src), "%s/hold.c", dir);
	snprintf(hold, sizeof(hold), "%s/hold", dir);
	fp = fopen(src, "w");
	if (!ASSERT_TRUE(fp != NULL, "hold.c"))
		return;
	fputs(hold_src, fp);
	fclose(fp);
	{
		char *cargv[] = { "gcc", "-O1", "-o", hold, src, "-ldl", NULL };

		st = h_wait(h_spawn(cargv), 60);
		if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			test_skip("gcc could not build the hostile program");
			return;
		}
	}
	/* three of 30 K distinct rules, three of 7 K: all distinct, and
	 * distinct from any real file's (CFA offsets past 100 KiB); the
	 * user's own files */
	for (i = 0; i < 6; i++) {
		char nm[16];
		unsigned n = i < 3 ? 30000 : 7000;
		unsigned first = i < 3 ? 20000 + 30000 * i : 120000 + 7000 * (i - 3);

		snprintf(nm, sizeof(nm), "rules%d", i);
		if (exemgr_test_rules_lib(dir, nm, n, first, libs[i],
					  sizeof(libs[i]))) {
			test_skip("gcc could not build %s", nm);
			return;
		}
		if (!ASSERT_OK(chown(libs[i], HOSTILE_UID, HOSTILE_UID), "chown"))
			return;
	}

	snprintf(portarg, sizeof(portarg), "%d", port);
	{
		char hz[16];
		const char *args[] = { "-samples-per-second", hz, "-output", out,
				       "-reporter-interval", "60s",
				       "-metrics-address", portarg, NULL };

		snprintf(hz, sizeof(hz), "%d", HZ);
		d = h_profile_bg(args, errpath);
	}
	t0 = h_now_ms();
	while (hr_metric(port, "ebpf_profiler_samples_total") < 0 &&
	       h_now_ms() - t0 < 20000)
		usleep(100000);
	if (!ASSERT_GE(hr_metric(port, "ebpf_profiler_samples_total"), 0,
		       "daemon up"))
		goto out;
	sleep(1); /* attached */

	/* the hostile user maps its files; wait until the daemon refused
	 * the three large ones */
	{
		char *hargv[10] = { hold, "30", secret };

		for (i = 0; i < 6; i++)
			hargv[3 + i] = libs[i];
		hargv[9] = NULL;
		hp = hr_spawn_as_nobody(hargv);
	}
	snprintf(series, sizeof(series),
		 "ebpf_profiler_files_over_share_total{table=\"rules\",limit=\"file\"}");
	t0 = h_now_ms();
	while (hr_metric(port, series) < 3 && h_now_ms() - t0 < 20000)
		usleep(200000);
	test_note("hostile files refused after %.1f s", (h_now_ms() - t0) / 1e3);
	if (!ASSERT_GE(hr_metric(port, series), 3, "three files over a file's share"))
		goto out;

	/* a normal program started afterwards */
	v = h_spawn(vargv);
	st = hr_wait_usage(v, VICTIM_SECONDS + 20, &ru);
	v = 0;
	ASSERT_TRUE(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		    "victim ran");
	cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	{
		char *body = NULL;

		if (h_http_get(port, "/metrics", &body) == 200 && body &&
		    (fp = fopen(metrics_path, "w"))) {
			fputs(body, fp);
			fclose(fp);
		}
		free(body);
	}
	hr_stop(hp);
	hp = 0;
	kill(d, SIGTERM);
	st = h_wait(d, 60);
	d = 0;
	ASSERT_TRUE(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		    "daemon exit 0");

	err = h_slurp(errpath);
	summary = err && strstr(err, "samples=") ? strstr(err, "samples=") : "";
	over_file = h_summary_value(summary, "over_share_rules");
	rss_kb = h_summary_value(summary, "rss_max_kb");
	if (!ASSERT_GE(h_read_folded_rotated(out, &f), 1, "folded output"))
		goto out;
	vsamples = h_count_comm(&f, "split-nofp-pie");
	{
		char *m = h_slurp(metrics_path);

		over_owner = m ? (long long)h_metric(m, "ebpf_profiler_files_over_share_total{table=\"rules\",limit=\"owner\"}") : -1;
		free(m);
	}
	test_note("victim: %" PRIu64 " samples for %.2f CPU s at %d Hz (%.1f%%); "
		  "%.2f%% reach _start",
		  vsamples, cpu_s, HZ, 100.0 * vsamples / (cpu_s * HZ),
		  100 * h_share(&f, "split-nofp-pie", "split-nofp-pie;_start"));
	test_note("over_share_rules=%lld (owner limit %lld) rules_used=%lld "
		  "rss_max_kb=%lld",
		  over_file, over_owner, h_summary_value(summary, "rules_used"),
		  rss_kb);
	/* the assertions compare integers: in tenths and ten-thousandths */
	ASSERT_GE(vsamples * 10, (long long)(9 * cpu_s * HZ),
		  "victim keeps >= 90% of its samples (per CPU second)");
	if (!ASSERT_GE((long long)(10000 * h_share(&f, "split-nofp-pie",
						   "split-nofp-pie;_start")),
		       9900, "victim's stacks >= 99% complete"))
		h_dump_top(&f, "split-nofp-pie", 8);
	ASSERT_GE(over_file, 4, "summary: three large files and one over its owner's share");
	ASSERT_GE(over_owner, 1, "metric: a file over its owner's share");
	ASSERT_GT(rss_kb, 0, "rss in the summary");
	ASSERT_LT(rss_kb, 200 * 1024, "daemon's peak RSS < 200 MB");
	{
		const char *paths[] = { errpath, metrics_path };
		bool leak = hr_any_contains(paths, 2, marker);

		for (i = 0; i < f.n; i++)
			leak |= strstr(f.lines[i].stack, marker) != NULL;
		ASSERT_FALSE(leak, "no output holds the unreadable file's contents");
	}
out:
	hr_stop(v);
	hr_stop(hp);
	if (d > 0) {
		kill(d, SIGTERM);
		h_wait(d, 30);
	}
	h_free_folded(&f);
	free(err);
}
