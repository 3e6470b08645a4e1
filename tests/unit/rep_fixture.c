// SPDX-License-Identifier: Apache-2.0
#include "rep_fixture.h"

#include "test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct rep_process procs[] = {
	{ .pid = 100, .exe_path = "/usr/bin/app", .exe_name = "app" },
	{ .pid = 200, .exe_path = "/usr/bin/python3.11", .exe_name = "python3.11",
	  .container_id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" },
};

static const struct rep_mapping maps[] = {
	{ .start = 0x555555554000, .limit = 0x555555564000, .file_offset = 0,
	  .bias = 0x555555554000, .path = "/usr/bin/app",
	  .file_id = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
		       0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10 },
	  .gnu_build_id = "4f1a2b3c4d5e6f708192a3b4c5d6e7f801234567" },
	{ .start = 0x7f0000028000, .limit = 0x7f000017d000, .file_offset = 0x28000,
	  .bias = 0x7f0000000000, .path = "/usr/lib/x86_64-linux-gnu/libc.so.6",
	  .file_id = { 0xaa, 0xbb, 0xcc, 0xdd, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 } },
	{ .start = 0x400000, .limit = 0x700000, .file_offset = 0, .bias = 0,
	  .path = "/usr/bin/python3.11",
	  .file_id = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		       0x99, 0, 0, 0, 0, 0, 0, 0x42 } },
};

static const struct rep_location locs[] = {
	/* 0 */ { FRAME_NATIVE, 0, 0x1100, "main", NULL, 0 },
	/* 1 */ { FRAME_NATIVE, 0, 0x1200, "compute", NULL, 0 },
	/* 2 */ { FRAME_NATIVE, 0, 0x1234, NULL, NULL, 0 },
	/* 3 */ { FRAME_NATIVE, 1, 0x114a00, "write", NULL, 0 },
	/* 4 */ { FRAME_KERNEL, REP_NONE, 0xffffffff81e00000, "entry_SYSCALL_64", NULL, 0 },
	/* 5 */ { FRAME_KERNEL, REP_NONE, 0xffffffff813a1230, "ksys_write", NULL, 0 },
	/* 6 */ { FRAME_INTERP(INTERP_PYTHON), REP_NONE, 10, "<module>", "/srv/main.py", 10 },
	/* 7 */ { FRAME_INTERP(INTERP_PYTHON), REP_NONE, 42, "Worker.run", "/srv/worker.py", 42 },
	/* 8 */ { FRAME_NATIVE, 2, 0x5a1b20, "_PyEval_EvalFrameDefault", NULL, 0 },
};

static const uint32_t st0[] = { 1, 0 };
static const uint32_t st1[] = { 2, 1, 0 };
static const uint32_t st2[] = { 5, 4, 3, 0 };
static const uint32_t st3[] = { 7, 6, 8 };
static const struct rep_stack stacks[] = {
	{ 2, st0 }, { 3, st1 }, { 4, st2 }, { 3, st3 },
};

#define T(n) (FIX_START_NS + (n) * FIX_PERIOD_NS)
static const uint64_t ts0[] = { T(0), T(1), T(2), T(3), T(4) };
static const uint64_t ts4[] = { T(10), T(11), T(12), T(13), T(14), T(15) };

static const struct rep_sample samples[] = {
	{ .process = 0, .stack = 0, .tid = 100, .thread_name = "app", .cpu = 0,
	  .count = 5, .n_timestamps = 5, .timestamps = ts0 },
	{ .process = 0, .stack = 0, .tid = 101, .thread_name = "app", .cpu = 1,
	  .count = 3 },
	{ .process = 0, .stack = 1, .tid = 100, .thread_name = "app", .cpu = 0,
	  .count = 2 },
	{ .process = 0, .stack = 2, .tid = 102, .thread_name = "app-writer",
	  .cpu = 1, .count = 4 },
	{ .process = 1, .stack = 3, .tid = 200, .thread_name = "python3", .cpu = 0,
	  .count = 6, .n_timestamps = 6, .timestamps = ts4 },
};

static const struct rep_batch batch = {
	.start_ns = FIX_START_NS,
	.end_ns = FIX_START_NS + 5000000000ULL,
	.period_ns = FIX_PERIOD_NS,
	.host_name = "testhost",
	.os_type = "linux",
	.kernel_release = "6.1.0-test-amd64",
	.n_mappings = 3, .n_locations = 9, .n_stacks = 4, .n_processes = 2,
	.n_samples = 5,
	.mappings = maps, .locations = locs, .stacks = stacks,
	.processes = procs, .samples = samples,
};

const struct rep_batch *fix_batch(void)
{
	return &batch;
}

int fix_run(const char *cmd, char *out, size_t cap)
{
	size_t n = 0, r;
	FILE *p = popen(cmd, "r");
	int st;

	if (!p)
		return -1;
	while (out && n + 1 < cap && (r = fread(out + n, 1, cap - 1 - n, p)) > 0)
		n += r;
	if (out && cap)
		out[n] = 0;
	/* Drain what did not fit so the child is not killed by SIGPIPE. */
	{
		char sink[4096];

		while (fread(sink, 1, sizeof(sink), p) > 0)
			;
	}
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int fix_write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t w;

	if (fd < 0)
		return -errno;
	w = write(fd, p, n);
	close(fd);
	return w == (ssize_t)n ? 0 : -EIO;
}

int fix_read_file(const char *path, char **out, size_t *n)
{
	FILE *f = fopen(path, "rb");
	long len;
	char *p;

	if (!f)
		return -errno;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc(len + 1);
	if (!p || fread(p, 1, len, f) != (size_t)len) {
		free(p);
		fclose(f);
		return -EIO;
	}
	p[len] = 0;
	fclose(f);
	*out = p;
	*n = len;
	return 0;
}

int fix_count(const char *hay, const char *needle)
{
	int n = 0;
	size_t l = strlen(needle);

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += l;
	}
	return n;
}

int fix_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (fd < 0)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

const char otlp_fixture_dump[] =
	"resource 100 app shape=values\n"
	"  app tid=100 cpu=0: main;compute 5\n"
	"  app tid=100 cpu=0: main;compute;app+0x1234 2\n"
	"  app tid=101 cpu=1: main;compute 3\n"
	"  app-writer tid=102 cpu=1: main;write;entry_SYSCALL_64_[k];"
	"ksys_write_[k] 4\n"
	"resource 200 python3.11 container=0123456789ab shape=timestamps\n"
	"  python3 tid=200 cpu=0: _PyEval_EvalFrameDefault;<module> (main.py:10);"
	"Worker.run (worker.py:42) 6\n";

const char strict_fixture_dump[] =
	"thread='app' tid=100 cpu=0 samples=2 count=7\n"
	"thread='app' tid=101 cpu=1 samples=1 count=3\n"
	"thread='app-writer' tid=102 cpu=1 samples=1 count=4\n"
	"thread='python3' tid=200 cpu=0 samples=1 count=6\n";

int fix_otlp_check(const char *path, char *out, size_t cap)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s/tests/unit/otlp_check.py %s 2>&1",
		 test_srcdir(), path);
	return fix_run(cmd, out, cap);
}

const char *fix_upstream_protos(void)
{
	static const char *const need[] = {
		"pprof/profile.proto",
		"otel/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto",
	};
	const char *d = getenv("EP_UPSTREAM_PROTOS");
	char path[1024];
	size_t i;

	if (!d)
		d = FIX_UPSTREAM_PROTOS;
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", d, need[i]);
		if (access(path, R_OK))
			return NULL;
	}
	return d;
}

int fix_strict_decode(const char *kind, const char *path, char *out, size_t cap)
{
	const char *protos = fix_upstream_protos();
	char cmd[2048];

	if (!protos)
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 %s/tests/unit/strict_decode.py %s %s %s 2>&1",
		 test_srcdir(), kind, path, protos);
	return fix_run(cmd, out, cap);
}

void fix_assert_strict_fixture(const char *kind, const char *path, char *out,
			       size_t cap, const char *what)
{
	if (fix_strict_decode(kind, path, out, cap) == -1)
		test_skip("no upstream .proto files (make deps)");
	else
		ASSERT_STREQ(out, strict_fixture_dump, what);
}
