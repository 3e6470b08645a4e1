// SPDX-License-Identifier: Apache-2.0
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../unit/test.h"

double h_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void quiet_child(const char *stderr_path)
{
	int fd;

	if (getenv("EP_TEST_VERBOSE"))
		return;
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		if (!stderr_path)
			dup2(fd, 2);
		close(fd);
	}
	if (stderr_path) {
		fd = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 2);
			close(fd);
		}
	}
}

pid_t h_spawn(char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		quiet_child(NULL);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

int h_wait(pid_t pid, int timeout_s)
{
	double end = h_now_ms() + timeout_s * 1000.0;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1;
		if (h_now_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		usleep(10000);
	}
}

pid_t h_profile_bg(const char *const *args, const char *stderr_path)
{
	const char *argv[64];
	int n = 0;
	pid_t pid;

	argv[n++] = test_bin();
	while (*args && n < 63)
		argv[n++] = *args++;
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		quiet_child(stderr_path);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

char *h_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, 0, f) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	return buf;
}

int h_profile(const char *const *args, char **err, int timeout_s)
{
	char path[256];
	pid_t pid;
	int status;

	snprintf(path, sizeof(path), "%s/profiler-stderr.txt", test_tmpdir());
	pid = h_profile_bg(args, path);
	if (pid < 0)
		return -1;
	status = h_wait(pid, timeout_s);
	if (err)
		*err = h_read_file(path);
	if (status < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

pid_t h_profile_started(const char *const *args, const char *stderr_path,
			int timeout_s)
{
	pid_t pid = h_profile_bg(args, stderr_path);
	double t0 = h_now_ms();

	if (pid < 0)
		return -1;
	while (h_now_ms() - t0 < timeout_s * 1000.0) {
		char *err = h_read_file(stderr_path);
		bool started = err && strstr(err, "started in");

		free(err);
		if (started)
			return pid;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1; /* it died */
		usleep(50000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

long h_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

int h_read_folded(const char *path, struct folded *f)
{
	FILE *fp = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int cap_lines = 0;

	memset(f, 0, sizeof(*f));
	if (!fp)
		return -errno;
	while ((n = getline(&line, &cap, fp)) > 0) {
		char *sp;

		line[strcspn(line, "\n")] = 0;
		sp = strrchr(line, ' ');
		if (!sp)
			continue;
		*sp = 0;
		if (f->n == cap_lines) {
			cap_lines = cap_lines ? cap_lines * 2 : 256;
			f->lines = realloc(f->lines, cap_lines * sizeof(*f->lines));
		}
		f->lines[f->n].stack = strdup(line);
		f->lines[f->n].count = strtoull(sp + 1, NULL, 10);
		f->total += f->lines[f->n].count;
		f->n++;
	}
	free(line);
	fclose(fp);
	return 0;
}

void h_free_folded(struct folded *f)
{
	int i;

	for (i = 0; i < f->n; i++)
		free(f->lines[i].stack);
	free(f->lines);
	memset(f, 0, sizeof(*f));
}

static bool comm_is(const char *stack, const char *comm)
{
	size_t n = strlen(comm);

	return !comm || (strncmp(stack, comm, n) == 0 && stack[n] == ';');
}

/* needle appears as whole frames: bounded by ';' or the ends */
static bool has_frames(const char *stack, const char *needle)
{
	size_t n = strlen(needle);
	const char *p = stack;

	while ((p = strstr(p, needle))) {
		bool start = p == stack || p[-1] == ';';
		bool end = p[n] == 0 || p[n] == ';';

		if (start && end)
			return true;
		p++;
	}
	return false;
}

uint64_t h_count_comm(const struct folded *f, const char *comm)
{
	uint64_t c = 0;
	int i;

	for (i = 0; i < f->n; i++)
		if (comm_is(f->lines[i].stack, comm))
			c += f->lines[i].count;
	return c;
}

uint64_t h_count_with(const struct folded *f, const char *comm,
		      const char *needle)
{
	uint64_t c = 0;
	int i;

	for (i = 0; i < f->n; i++)
		if (comm_is(f->lines[i].stack, comm) &&
		    has_frames(f->lines[i].stack, needle))
			c += f->lines[i].count;
	return c;
}

static int cmp_count(const void *a, const void *b)
{
	const struct folded_line *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

void h_dump_top(const struct folded *f, const char *comm, int n)
{
	struct folded_line *c = malloc(f->n * sizeof(*c));
	int i, k = 0;

	if (!c)
		return;
	for (i = 0; i < f->n; i++)
		if (comm_is(f->lines[i].stack, comm))
			c[k++] = f->lines[i];
	qsort(c, k, sizeof(*c), cmp_count);
	for (i = 0; i < k && i < n; i++)
		printf("      %6llu %s\n", (unsigned long long)c[i].count,
		       c[i].stack);
	free(c);
}

long long h_summary_value(const char *summary, const char *key)
{
	char pat[64];
	const char *p;

	if (!summary)
		return -1;
	snprintf(pat, sizeof(pat), "%s=", key);
	p = summary;
	while ((p = strstr(p, pat))) {
		if (p == summary || p[-1] == ' ' || p[-1] == '\n')
			return strtoll(p + strlen(pat), NULL, 10);
		p++;
	}
	return -1;
}

const char *h_workload(const char *name)
{
	static char buf[8][512];
	static int slot;
	char *b = buf[slot++ & 7];

	snprintf(b, 512, "%s/%s", test_workloads(), name);
	return b;
}

int h_profile_workload(char *const wargv[], const char *duration,
		       const char *hz, const char *const *extra,
		       struct folded *f, char **err)
{
	char out[512], pidbuf[16];
	const char *args[32];
	pid_t w = h_spawn(wargv);
	int rc, n = 0;

	memset(f, 0, sizeof(*f));
	if (err)
		*err = NULL;
	if (w < 0)
		return -1;
	usleep(200000); /* started and running its loop */
	snprintf(pidbuf, sizeof(pidbuf), "%d", w);
	snprintf(out, sizeof(out), "%s/w%d.folded", test_tmpdir(), w);
	args[n++] = "-pid";
	args[n++] = pidbuf;
	args[n++] = "-duration";
	args[n++] = duration;
	args[n++] = "-samples-per-second";
	args[n++] = hz;
	args[n++] = "-output";
	args[n++] = out;
	while (extra && *extra && n < 30)
		args[n++] = *extra++;
	args[n] = NULL;
	rc = h_profile(args, err, 120);
	kill(w, SIGKILL);
	h_wait(w, 5);
	if (rc == 0)
		h_read_folded(out, f);
	return rc;
}

int h_count_frame(const char *stack, const char *name)
{
	size_t n = strlen(name);
	const char *p = strchr(stack, ';'); /* not the comm */
	int c = 0;

	if (!p)
		return 0;
	p++;

	while ((p = strstr(p, name))) {
		if (p[-1] == ';' && (p[n] == ';' || p[n] == 0))
			c++;
		p += n;
	}
	return c;
}

double h_share(const struct folded *f, const char *comm, const char *needle)
{
	uint64_t total = h_count_comm(f, comm);

	return total ? (double)h_count_with(f, comm, needle) / total : 0;
}
