// SPDX-License-Identifier: Apache-2.0
#include "harness.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <mntent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../unit/rep_fixture.h"
#include "../unit/test.h"

double h_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void h_quiet_child(const char *stderr_path)
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
	return h_spawn_err(argv, NULL);
}

void h_drop_to(uid_t uid, gid_t gid)
{
	if (setgroups(0, NULL) || setgid(gid) || setuid(uid))
		_exit(126);
}

/* argv in a quiet child, as uid and gid when drop. */
static pid_t spawn(char *const argv[], const char *stderr_path, bool drop,
		   uid_t uid, gid_t gid)
{
	pid_t pid = fork();

	if (pid == 0) {
		h_quiet_child(stderr_path);
		if (drop)
			h_drop_to(uid, gid);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

pid_t h_spawn_err(char *const argv[], const char *stderr_path)
{
	return spawn(argv, stderr_path, false, 0, 0);
}

pid_t h_spawn_as(char *const argv[], const char *stderr_path, uid_t uid,
		 gid_t gid)
{
	return spawn(argv, stderr_path, true, uid, gid);
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

	argv[n++] = test_bin();
	while (*args && n < 63)
		argv[n++] = *args++;
	argv[n] = NULL;
	return h_spawn_err((char *const *)argv, stderr_path);
}

/* All of stream f (NULL: none), NUL-terminated (malloc'd; "" when
 * empty), then f closed by close_f. */
static char *read_all(FILE *f, int (*close_f)(FILE *))
{
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, 0, f) < 0) {
		free(buf);
		buf = strdup("");
	}
	close_f(f);
	return buf;
}

char *h_slurp(const char *path)
{
	return read_all(fopen(path, "r"), fclose);
}

char *h_cmd_output(const char *cmd)
{
	return read_all(popen(cmd, "r"), pclose);
}

const char *h_cmdf(const char *fmt, ...)
{
	static char cmd[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	/* a cut command would run something else */
	if (n < 0 || (size_t)n >= sizeof(cmd)) {
		printf("      command longer than %zu bytes: %.200s...\n",
		       sizeof(cmd), cmd);
		return "false";
	}
	return cmd;
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
		*err = h_slurp(path);
	if (status < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int h_profile_pid(pid_t pid, const char *duration, const char *hz,
		  const char *const *extra, const char *out, char **err,
		  int timeout_s)
{
	const char *args[16 + 9];
	char pidbuf[16];
	int n = 0, e;

	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	args[n++] = "-pid";
	args[n++] = pidbuf;
	args[n++] = "-duration";
	args[n++] = duration;
	args[n++] = "-samples-per-second";
	args[n++] = hz;
	args[n++] = "-output";
	args[n++] = out;
	for (e = 0; extra && extra[e] && e < 16; e++)
		args[n++] = extra[e];
	args[n] = NULL;
	return h_profile(args, err, timeout_s);
}

void h_each_decoded(pid_t w, const char *const *extra,
		    void (*check)(const char *kind, const char *decoded,
				  const void *ctx),
		    const void *ctx)
{
	static const char *const kinds[][2] = { { "pprof", "d.pb.gz" },
						{ "otlp", "d.otlp" } };
	char *out = malloc(1 << 16);
	unsigned k;

	if (!ASSERT_TRUE(out != NULL, "memory"))
		return;
	for (k = 0; k < 2; k++) {
		const char *path = test_tmppath(kinds[k][1]);
		int rc = h_profile_pid(w, "3s", "499", extra, path, NULL, 60);

		if (!ASSERT_EQ(rc, 0, "profiler exit code"))
			continue;
		rc = fix_strict_decode(kinds[k][0], path, out, 1 << 16);
		test_note("%s, strict decode:\n%.800s", kinds[k][0], out);
		if (ASSERT_EQ(rc, 0, "protoc decodes it"))
			check(kinds[k][0], out, ctx);
		if (k == 1) {
			/* what a collector checks: every location's frame
			 * type among the semantic conventions' values, ...;
			 * and "test", the test runtime's (a test-only
			 * unwinder, off unless asked for). */
			char cmd[1024], *chk;

			snprintf(cmd, sizeof(cmd),
				 "OTLP_CHECK_EXTRA_FRAME_TYPES=test /usr/bin/python3 "
				 "%s/tests/unit/otlp_check.py %s 2>&1",
				 test_srcdir(), path);
			chk = h_cmd_output(cmd);
			if (!ASSERT_TRUE(chk && !strstr(chk, "ERROR"),
					 "otlp_check.py finds no error"))
				test_note("otlp_check.py:\n%.2000s", chk ? chk : "");
			free(chk);
		}
	}
	free(out);
}

void h_workload_decoded(const char *name, const char *const *extra,
			void (*check)(const char *kind, const char *decoded,
				      const void *ctx),
			const void *ctx)
{
	const char *bin = h_workload(name);
	char *wargv[] = { (char *)bin, "20", NULL };
	pid_t w;

	if (access(bin, X_OK)) {
		test_skip("%s not built: see the workloads build", name);
		return;
	}
	if (!fix_upstream_protos()) {
		test_skip("no upstream .proto files (run 'make deps' as root)");
		return;
	}
	w = h_spawn(wargv);
	if (!ASSERT_GT(w, 0, "workload started"))
		return;
	usleep(200000);
	h_each_decoded(w, extra, check, ctx);
	kill(w, SIGKILL);
	h_wait(w, 5);
}

struct inlined {
	const char *const *chains;
	const char *absent;
};

static void check_inlined(const char *kind, const char *decoded,
			  const void *ctx)
{
	const struct inlined *in = ctx;
	const char *const *chain;
	char line[256], what[300];

	(void)kind;
	for (chain = in->chains; *chain; chain++) {
		/* strict_decode.py prints a Location's lines as one
		 * "inline=" line, innermost first */
		snprintf(line, sizeof(line), "inline=%s\n", *chain);
		snprintf(what, sizeof(what), "one Location: %s", *chain);
		ASSERT_TRUE(strstr(decoded, line), what);
	}
	if (in->absent) {
		snprintf(what, sizeof(what), "%s's Location: one line, no chain",
			 in->absent);
		ASSERT_TRUE(!strstr(decoded, in->absent), what);
	}
}

void h_workload_inlined(const char *name, const char *const *extra,
			const char *const *chains, const char *absent)
{
	const struct inlined in = { chains, absent };

	h_workload_decoded(name, extra, check_inlined, &in);
}

pid_t h_profile_started(const char *const *args, const char *stderr_path,
			int timeout_s)
{
	return h_profile_started_at(args, stderr_path, timeout_s, NULL);
}

pid_t h_profile_started_at(const char *const *args, const char *stderr_path,
			   int timeout_s, double *started_ms)
{
	pid_t pid = h_profile_bg(args, stderr_path);
	double t0 = h_now_ms();

	if (pid < 0)
		return -1;
	while (h_now_ms() - t0 < timeout_s * 1000.0) {
		char *err = h_slurp(stderr_path);
		bool started = err && strstr(err, "started in");

		free(err);
		if (started) {
			if (started_ms)
				*started_ms = h_now_ms();
			return pid;
		}
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1; /* it died */
		/* finely when the caller wants the time sampling began */
		usleep(started_ms ? 2000 : 50000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

pid_t h_find_child(pid_t parent, const char *comm, int timeout_ms)
{
	double end = h_now_ms() + timeout_ms;
	char path[64], buf[4096], name[64];

	do {
		FILE *f;
		char *tok, *save = NULL;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children",
			 (int)parent, (int)parent);
		f = fopen(path, "re");
		buf[0] = 0;
		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = 0;
			fclose(f);
		}
		for (tok = strtok_r(buf, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save)) {
			snprintf(path, sizeof(path), "/proc/%s/comm", tok);
			f = fopen(path, "re");
			if (!f)
				continue;
			if (fgets(name, sizeof(name), f)) {
				name[strcspn(name, "\n")] = 0;
				if (!strcmp(name, comm)) {
					fclose(f);
					return (pid_t)atoi(tok);
				}
			}
			fclose(f);
		}
		usleep(5000);
	} while (h_now_ms() < end);
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

double h_cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* after the comm: state is field 3, utime 14, stime 15 */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
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

int h_read_folded_rotated(const char *path, struct folded *f)
{
	char dir[512], base[256], *slash, *dot;
	struct dirent *e;
	DIR *d;
	int n = 0;

	memset(f, 0, sizeof(*f));
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return -EINVAL;
	*slash = 0;
	snprintf(base, sizeof(base), "%s", slash + 1);
	dot = strrchr(base, '.');
	if (dot)
		*dot = 0;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		size_t bl = strlen(base);
		struct folded one;
		char full[1024];
		int i;

		if (strcmp(e->d_name, slash + 1) &&
		    (strncmp(e->d_name, base, bl) || e->d_name[bl] != '-' ||
		     !strstr(e->d_name + bl, ".folded")))
			continue;
		snprintf(full, sizeof(full), "%s/%s", dir, e->d_name);
		if (h_read_folded(full, &one))
			continue;
		f->lines = realloc(f->lines, (f->n + one.n + 1) * sizeof(*f->lines));
		for (i = 0; i < one.n; i++)
			f->lines[f->n++] = one.lines[i];
		f->total += one.total;
		free(one.lines);
		n++;
	}
	closedir(d);
	return n;
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

bool h_comm_is(const char *stack, const char *comm)
{
	return comm_is(stack, comm);
}

bool h_stack_has(const char *s, const char *comm, const char *needle)
{
	return (!comm || comm_is(s, comm)) && (!needle || strstr(s, needle));
}

void h_comm_of(const char *path, char *comm, size_t n)
{
	const char *base = strrchr(path, '/');

	snprintf(comm, n, "%.15s", base ? base + 1 : path);
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

long long h_bpf_counter(const char *err, const char *key)
{
	const char *p = err ? strstr(err, "bpf counters:") : NULL;
	long long v;

	if (!p)
		return 0;
	v = h_summary_value(p + strlen("bpf counters:"), key);
	return v < 0 ? 0 : v;
}

/* One of 8 path buffers in turn. */
static char *path_slot(void)
{
	static char buf[8][512];
	static int slot;

	return buf[slot++ & 7];
}

const char *h_workload(const char *name)
{
	char *b = path_slot();

	snprintf(b, 512, "%s/%s", test_workloads(), name);
	return b;
}

const char *h_script(const char *lang, const char *script)
{
	char *b = path_slot();

	snprintf(b, 512, "%s/tests/workloads/%s/%s", test_srcdir(), lang,
		 script);
	return b;
}

const char *h_env_or_skip(const char *var, const char *why)
{
	const char *v = getenv(var);

	if (v && *v)
		return v;
	test_skip("%s unset: %s", var, why);
	return NULL;
}

bool h_have(const char *bin, const char *hint)
{
	if (access(bin, X_OK) == 0)
		return true;
	test_skip("%s is not installed%s", bin, hint);
	return false;
}

void h_interp_use(struct h_interp *ip, const char *bin)
{
	ip->bin = bin;
	h_comm_of(bin, ip->comm, sizeof(ip->comm));
	snprintf(ip->comm_start, sizeof(ip->comm_start), "%s;_start;",
		 ip->comm);
}

void h_other_build(struct h_interp *ip, const char *def, const char *var,
		   const char *why, const char *hint,
		   const struct h_build_case *cases, size_t n)
{
	const char *bin = h_env_or_skip(var, why);
	size_t i;

	if (!bin)
		return;
	h_interp_use(ip, bin);
	if (h_have(bin, hint))
		for (i = 0; i < n; i++)
			if ((!cases[i].needs || getenv(cases[i].needs)) &&
			    test_start_subtest(cases[i].name))
				cases[i].run();
	h_interp_use(ip, def);
}

int h_profile_workload(char *const wargv[], const char *duration,
		       const char *hz, const char *const *extra,
		       struct folded *f, char **err)
{
	char out[512];
	pid_t w = h_spawn(wargv);
	int rc;

	memset(f, 0, sizeof(*f));
	if (err)
		*err = NULL;
	if (w < 0)
		return -1;
	usleep(200000); /* started and running its loop */
	snprintf(out, sizeof(out), "%s/w%d.folded", test_tmpdir(), w);
	rc = h_profile_pid(w, duration, hz, extra, out, err, 120);
	kill(w, SIGKILL);
	h_wait(w, 5);
	if (rc == 0)
		h_read_folded(out, f);
	return rc;
}

bool h_profiled(int rc, const char *err)
{
	if (ASSERT_EQ(rc, 0, "profiler exit code"))
		return true;
	printf("%s\n", err ? err : "");
	return false;
}

bool h_run_workload(char *const wargv[], const char *duration,
		    const char *hz, const char *const *extra,
		    struct h_run *run)
{
	int rc = h_profile_workload(wargv, duration, hz, extra, &run->f,
				    &run->err);

	return h_profiled(rc, run->err);
}

void h_run_free(struct h_run *run)
{
	free(run->err);
	run->err = NULL;
	h_free_folded(&run->f);
}

double h_pct(uint64_t n, uint64_t total)
{
	return 100.0 * n / (total ? total : 1);
}

int h_tally(const char *s, uint64_t c, const char *const *chain, int nk,
	    uint64_t *n)
{
	int k, hits = 0;

	for (k = 0; k < nk; k++)
		if (strstr(s, chain[k])) {
			n[k] += c;
			hits++;
		}
	return hits;
}

bool h_assert_split(const uint64_t n[3], uint64_t total,
		    const double want[3])
{
	bool ok = true;
	int k;

	for (k = 0; k < 3; k++)
		ok &= ASSERT_LE(abs((int)(1000.0 * n[k] / (total ? total : 1)) -
				    (int)(10 * want[k])),
				30, "the split within 3 points");
	return ok;
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

void h_check_counters(const char *summary, const struct h_counter *c,
		      size_t n)
{
	char note[1024];
	size_t i, len = 0;

	for (i = 0; i < n && len < sizeof(note); i++)
		len += snprintf(note + len, sizeof(note) - len, "%s%s=%lld",
				i ? " " : "", c[i].key,
				h_summary_value(summary, c[i].key));
	test_note("%s", note);
	for (i = 0; i < n; i++) {
		long long value = h_summary_value(summary, c[i].key);

		if (!c[i].op)
			continue;
		if (!strcmp(c[i].op, "=="))
			ASSERT_EQ(value, c[i].want, c[i].what);
		else if (!strcmp(c[i].op, ">="))
			ASSERT_GE(value, c[i].want, c[i].what);
		else if (!strcmp(c[i].op, ">"))
			ASSERT_GT(value, c[i].want, c[i].what);
		else
			ASSERT_TRUE(false, "a counter's op is ==, >= or >");
	}
}

double h_share(const struct folded *f, const char *comm, const char *needle)
{
	uint64_t total = h_count_comm(f, comm);

	return total ? (double)h_count_with(f, comm, needle) / total : 0;
}

/* ---- daemon operations ------------------------------------------------- */

static int loopback_socket(int port, bool do_bind)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if ((do_bind ? bind(fd, (struct sockaddr *)&a, sizeof(a)) :
		       connect(fd, (struct sockaddr *)&a, sizeof(a))) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int h_free_port(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = loopback_socket(0, true), port = -1;

	if (fd < 0)
		return -1;
	if (getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

int h_http_get(int port, const char *path, char **body)
{
	char req[512], *resp = NULL, *p;
	size_t len = 0, cap = 0;
	int fd = loopback_socket(port, false), status = -1;
	struct timeval tv = { .tv_sec = 5 };

	if (body)
		*body = NULL;
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	snprintf(req, sizeof(req),
		 "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n",
		 path, port);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		goto out;
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 65536;
			p = realloc(resp, cap);
			if (!p)
				goto out;
			resp = p;
		}
		n = read(fd, resp + len, cap - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (!resp)
		goto out;
	resp[len] = 0;
	if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1)
		status = -1;
	p = strstr(resp, "\r\n\r\n");
	if (body && p)
		*body = strdup(p + 4);
out:
	free(resp);
	close(fd);
	return status;
}

double h_metric(const char *text, const char *series)
{
	size_t n = strlen(series);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, series, n) && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

static bool prom_name(const char **p, char *out, size_t len)
{
	size_t n = 0;

	if (!isalpha((unsigned char)**p) && **p != '_' && **p != ':')
		return false;
	while (isalnum((unsigned char)**p) || **p == '_' || **p == ':') {
		if (n + 1 < len)
			out[n++] = **p;
		(*p)++;
	}
	out[n] = 0;
	return true;
}

/* {name="value",...}: label values may hold \\, \" and \n escapes. */
static bool prom_labels(const char **p)
{
	char name[128];

	if (**p != '{')
		return true;
	(*p)++;
	while (**p != '}') {
		if (!prom_name(p, name, sizeof(name)) || *(*p)++ != '=' ||
		    *(*p)++ != '"')
			return false;
		while (**p != '"') {
			if (!**p || **p == '\n')
				return false;
			if (**p == '\\' && !strchr("\\\"n", (*p)[1]))
				return false;
			*p += **p == '\\' ? 2 : 1;
		}
		(*p)++;
		if (**p == ',')
			(*p)++;
		else if (**p != '}')
			return false;
	}
	(*p)++;
	return true;
}

struct prom_family {
	char name[128], type[16];
	bool help, closed;
};

static void __attribute__((format(printf, 4, 5)))
prom_bad(char *why, size_t len, int lineno, const char *fmt, ...)
{
	int n = snprintf(why, len, "line %d: ", lineno);
	va_list ap;

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < len)
		vsnprintf(why + n, len - n, fmt, ap);
	va_end(ap);
}

int h_prom_check(const char *text, const char *prefix, char *why, size_t len)
{
	struct prom_family fam[256];
	char **series = NULL;
	int nfam = 0, nseries = 0, cur = -1, i, lineno = 0, ret = -1;
	const char *line = text;

#define BAD(...)                                                               \
	do {                                                                   \
		prom_bad(why, len, lineno, __VA_ARGS__);                       \
		goto out;                                                      \
	} while (0)
	while (line && *line) {
		const char *eol = strchr(line, '\n'), *p = line, *start;
		char name[128];
		int f;

		lineno++;
		if (!eol)
			BAD("no newline at the end");
		if (!strncmp(p, "# HELP ", 7) || !strncmp(p, "# TYPE ", 7)) {
			bool help = p[2] == 'H';

			p += 7;
			if (!prom_name(&p, name, sizeof(name)) || *p != ' ')
				BAD("bad %s line", help ? "HELP" : "TYPE");
			for (f = 0; f < nfam && strcmp(fam[f].name, name); f++)
				;
			if (f == nfam) {
				if (nfam == 256)
					BAD("too many families");
				memset(&fam[nfam], 0, sizeof(fam[0]));
				snprintf(fam[nfam++].name, sizeof(fam[0].name), "%s", name);
			} else if (fam[f].closed || f != cur) {
				BAD("%s of %s after its samples", help ? "HELP" : "TYPE", name);
			}
			if (help) {
				if (fam[f].help)
					BAD("second HELP for %s", name);
				fam[f].help = true;
			} else {
				if (fam[f].type[0])
					BAD("second TYPE for %s", name);
				snprintf(fam[f].type, sizeof(fam[f].type), "%.*s",
					 (int)(eol - p - 1), p + 1);
				if (strcmp(fam[f].type, "counter") &&
				    strcmp(fam[f].type, "gauge") &&
				    strcmp(fam[f].type, "untyped"))
					BAD("type %s of %s", fam[f].type, name);
			}
			if (cur >= 0 && cur != f)
				fam[cur].closed = true;
			cur = f;
		} else if (*p == '#') {
			/* a comment */
		} else {
			char *v_end, **ns;
			double v;

			start = p;
			if (!prom_name(&p, name, sizeof(name)) || !prom_labels(&p) ||
			    *p != ' ')
				BAD("cannot parse \"%.*s\"", (int)(eol - line), line);
			if (strncmp(name, prefix, strlen(prefix)))
				BAD("%s lacks the prefix %s", name, prefix);
			v = strtod(p + 1, &v_end);
			(void)v;
			if (v_end == p + 1 || (*v_end != '\n' && *v_end != ' '))
				BAD("value of %s does not parse", name);
			for (f = 0; f < nfam && strcmp(fam[f].name, name); f++)
				;
			if (f == nfam || !fam[f].help || !fam[f].type[0])
				BAD("%s has no HELP and TYPE before it", name);
			if (fam[f].closed || (cur != f))
				BAD("samples of %s are not together", name);
			if (!strcmp(fam[f].type, "counter") &&
			    (strlen(name) < 6 || strcmp(name + strlen(name) - 6, "_total")))
				BAD("counter %s does not end in _total", name);
			for (i = 0; i < nseries; i++)
				if (strlen(series[i]) == (size_t)(p - start) &&
				    !strncmp(series[i], start, p - start))
					BAD("%.*s twice", (int)(p - start), start);
			ns = realloc(series, (nseries + 1) * sizeof(*series));
			if (!ns)
				BAD("out of memory");
			series = ns;
			series[nseries++] = strndup(start, p - start);
		}
		line = eol + 1;
	}
#undef BAD
	for (i = 0; i < nfam; i++)
		if (!fam[i].type[0]) {
			snprintf(why, len, "family %s has no TYPE", fam[i].name);
			goto out;
		}
	ret = nseries;
out:
	for (i = 0; i < nseries; i++)
		free(series[i]);
	free(series);
	return ret;
}

static void add_id(uint32_t *arr, int *n, int max, uint32_t id)
{
	int i;

	for (i = 0; i < *n; i++)
		if (arr[i] == id)
			return;
	if (*n < max)
		arr[(*n)++] = id;
}

int h_bpf_ids_of(pid_t pid, struct h_bpf_ids *ids)
{
	char dir[64], path[320], line[256];
	struct dirent *e;
	DIR *d;

	memset(ids, 0, sizeof(*ids));
	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", (int)pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		FILE *f;
		unsigned id;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "prog_id: %u", &id) == 1)
				add_id(ids->progs, &ids->n_progs, 64, id);
			else if (sscanf(line, "map_id: %u", &id) == 1)
				add_id(ids->maps, &ids->n_maps, 128, id);
			else if (sscanf(line, "link_id: %u", &id) == 1)
				add_id(ids->links, &ids->n_links, 64, id);
		}
		fclose(f);
	}
	closedir(d);
	return 0;
}

static int count_alive(const char *kind, const uint32_t *arr, int n)
{
	char cmd[128];
	int i, alive = 0;

	for (i = 0; i < n; i++) {
		snprintf(cmd, sizeof(cmd), "bpftool %s show id %u >/dev/null 2>&1",
			 kind, arr[i]);
		if (system(cmd) == 0)
			alive++;
	}
	return alive;
}

int h_bpf_ids_alive(const struct h_bpf_ids *ids)
{
	int tries, alive = 0;

	for (tries = 0; tries < 30; tries++) {
		alive = count_alive("prog", ids->progs, ids->n_progs) +
			count_alive("map", ids->maps, ids->n_maps) +
			count_alive("link", ids->links, ids->n_links);
		if (!alive)
			break;
		usleep(100000);
	}
	return alive;
}

bool h_cgroup2_mount(char *out, size_t len)
{
	FILE *f = setmntent("/proc/self/mounts", "r");
	struct mntent *m;
	bool found = false;

	while (f && !found && (m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(out, len, "%s", m->mnt_dir);
			found = true;
		}
	if (f)
		endmntent(f);
	return found;
}
