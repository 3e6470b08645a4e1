// SPDX-License-Identifier: Apache-2.0
/*
 * The debuginfod client (dbgfetch.h) against a local HTTP server that
 * answers as debuginfod does (GET /buildid/HEX/debuginfo), one build id
 * per behaviour: a small file, a missing one, one past the byte bound,
 * one that never finishes.  Each ends counted under its outcome, within
 * its bound, and the hook never waits for any of them.
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dbgfetch.h"

/* The server: ids ending in 01 give 4 KiB, 02 are not found, 03 give
 * 3 MiB (Content-Length said, so the library may refuse at once, and
 * sent slowly so the progress callback can too), 04 stall 60 s. */
static const char server_py[] =
	"import http.server, os, socketserver, time\n"
	"class H(http.server.BaseHTTPRequestHandler):\n"
	"    def log_message(self, *a): pass\n"
	"    def do_GET(self):\n"
	"        p = self.path.split('/')\n"
	"        if len(p) < 4 or p[1] != 'buildid' or p[3] != 'debuginfo':\n"
	"            self.send_error(404); return\n"
	"        k = p[2][-2:]\n"
	"        if k == '01':\n"
	"            body = b'\\x7fELF' + b'd' * 4092\n"
	"        elif k == '03':\n"
	"            body = b'x' * (3 << 20)\n"
	"        elif k == '04':\n"
	"            time.sleep(60); body = b''\n"
	"        else:\n"
	"            self.send_error(404); return\n"
	"        self.send_response(200)\n"
	"        self.send_header('Content-Length', str(len(body)))\n"
	"        self.end_headers()\n"
	"        for i in range(0, len(body), 65536):\n"
	"            self.wfile.write(body[i:i + 65536])\n"
	"            if k == '03': time.sleep(0.01)\n"
	"class S(socketserver.ThreadingMixIn, http.server.HTTPServer):\n"
	"    daemon_threads = True\n"
	"s = S(('127.0.0.1', 0), H)\n"
	"os.write(1, b'%d\\n' % s.server_address[1])\n" /* one write */
	"s.serve_forever()\n";

static pid_t start_server(int *port)
{
	int out[2];
	char buf[32] = "";
	ssize_t n;
	pid_t pid;

	if (pipe(out))
		return -1;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		dup2(out[1], 1);
		if (null >= 0)
			dup2(null, 2); /* a client that hung up: its traceback */
		close(out[0]);
		close(out[1]);
		execlp("python3", "python3", "-c", server_py, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	n = read(out[0], buf, sizeof(buf) - 1);
	close(out[0]);
	*port = n > 0 ? atoi(buf) : 0;
	if (*port <= 0 && pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Until the queue is empty, at most timeout seconds. */
static void settle(struct dbgd *d, double timeout)
{
	struct dbgd_stats st;
	double end = now_s() + timeout;

	do {
		usleep(20000);
		dbgd_get_stats(d, &st);
	} while (st.queued && now_s() < end);
}

static void unset_env(void)
{
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
	unsetenv("DEBUGINFOD_TIMEOUT");
	unsetenv("DEBUGINFOD_MAXTIME");
	unsetenv("DEBUGINFOD_MAXSIZE");
}

TEST(dbgfetch_off_without_urls)
{
	struct dbgd *d = (struct dbgd *)1;

	unsetenv("DEBUGINFOD_URLS");
	ASSERT_EQ(dbgd_new(NULL, &d), -ENOENT, "off");
	ASSERT_TRUE(d == NULL, "no client");
	setenv("DEBUGINFOD_URLS", "  ", 1);
	ASSERT_EQ(dbgd_new(NULL, &d), -ENOENT, "blank is off too");
	unset_env();
}

TEST(dbgfetch_outcomes_bounded)
{
	uint8_t id[4][20];
	struct dbgd_opts o = { .max_seconds = 2, .max_bytes = 1 << 20 };
	struct dbgd_stats st;
	struct dbgd *d = NULL;
	char url[64], cache[512], buf[8];
	double t0, took;
	int port, k, fd, err;
	pid_t srv;

	if (access("/usr/lib/x86_64-linux-gnu/libdebuginfod.so.1", R_OK)) {
		test_skip("no libdebuginfod.so.1 (libdebuginfod1)");
		return;
	}
	srv = start_server(&port);
	if (srv < 0) {
		test_skip("python3 http.server did not start");
		return;
	}
	for (k = 0; k < 4; k++) {
		memset(id[k], 0xab, sizeof(id[k]));
		id[k][19] = k + 1;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	snprintf(cache, sizeof(cache), "%s/dcache", test_tmpdir());
	setenv("DEBUGINFOD_URLS", url, 1);
	unsetenv("DEBUGINFOD_CACHE_PATH");
	o.cache_path = cache;
	err = dbgd_new(&o, &d);
	if (!ASSERT_OK(err, "dbgd_new"))
		goto out;

	/* the hook never waits: each first ask is "later" */
	t0 = now_s();
	for (k = 0; k < 4; k++)
		ASSERT_EQ(dbgd_fetch(id[k], sizeof(id[k]), d), -EAGAIN, "queued");
	ASSERT_EQ(dbgd_fetch(id[0], sizeof(id[0]), d), -EAGAIN,
		  "asked again while queued");
	ASSERT_LT((now_s() - t0) * 1000, 100, "the hook took < 100 ms");
	ASSERT_TRUE(dbgd_busy(d), "busy while queued");
	settle(d, 20);
	took = now_s() - t0;
	dbgd_get_stats(d, &st);
	test_note("%.1f s: fetched %llu, not_found %llu, too_big %llu, "
		  "timeouts %llu, errors %llu", took,
		  (unsigned long long)st.fetched,
		  (unsigned long long)st.not_found,
		  (unsigned long long)st.too_big,
		  (unsigned long long)st.timeouts,
		  (unsigned long long)st.errors);
	if (st.errors)
		test_note("server on port %d %s", port,
			  waitpid(srv, NULL, WNOHANG) == 0 ? "running" : "gone");
	ASSERT_EQ(st.queued, 0, "all done");
	ASSERT_FALSE(dbgd_busy(d), "not busy");
	ASSERT_EQ(st.fetched, 1, "the small file");
	ASSERT_EQ(st.not_found, 1, "the missing one");
	ASSERT_EQ(st.too_big, 1, "the one past 1 MiB");
	ASSERT_EQ(st.timeouts, 1, "the one that stalls, given up at 2 s");
	ASSERT_EQ(st.errors, 0, "nothing else");
	ASSERT_LT(took, 10, "the stalled download given up in time");
	ASSERT_EQ(dbgd_generation(d), 4, "one generation per ended download");

	/* now from the cache, as a file; failures stay failures */
	fd = dbgd_fetch(id[0], sizeof(id[0]), d);
	if (ASSERT_GE(fd, 0, "the fetched file, from the cache")) {
		ASSERT_EQ(read(fd, buf, 4), 4, "read");
		ASSERT_TRUE(!memcmp(buf, "\x7f" "ELF", 4), "its bytes");
		close(fd);
	}
	for (k = 1; k < 4; k++)
		ASSERT_EQ(dbgd_fetch(id[k], sizeof(id[k]), d), -ENOENT,
			  "a failure is remembered");
	dbgd_get_stats(d, &st);
	ASSERT_EQ(st.cache_hits, 1, "cache hits");
	ASSERT_GE(st.fetch_ns, 1, "time counted");
out:
	dbgd_free(d);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	unset_env();
}

/* Past max_queue, asks are counted and not queued ("later" still). */
TEST(dbgfetch_queue_bound)
{
	struct dbgd_opts o = { .max_seconds = 1, .max_queue = 2,
			       .max_per_minute = 1 };
	struct dbgd_stats st;
	struct dbgd *d = NULL;
	uint8_t id[20];
	char cache[512];
	int k;

	if (access("/usr/lib/x86_64-linux-gnu/libdebuginfod.so.1", R_OK)) {
		test_skip("no libdebuginfod.so.1 (libdebuginfod1)");
		return;
	}
	/* nothing listens there: the first fails at once; then the rate
	 * bound (1 a minute) keeps the rest queued */
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	snprintf(cache, sizeof(cache), "%s/qcache", test_tmpdir());
	o.cache_path = cache;
	if (!ASSERT_OK(dbgd_new(&o, &d), "dbgd_new"))
		goto out;
	memset(id, 0xcd, sizeof(id));
	for (k = 0; k < 8; k++) {
		id[19] = k;
		ASSERT_EQ(dbgd_fetch(id, sizeof(id), d), -EAGAIN, "later");
		usleep(k ? 0 : 300000); /* the first one started */
	}
	dbgd_get_stats(d, &st);
	test_note("queued %llu, queue_full %llu, errors %llu",
		  (unsigned long long)st.queued,
		  (unsigned long long)st.queue_full,
		  (unsigned long long)st.errors);
	ASSERT_LE(st.queued, 3, "at most the queue and one in flight");
	ASSERT_GE(st.queue_full, 5, "the rest counted");
out:
	/* stops the worker in its rate wait */
	dbgd_free(d);
	unset_env();
}
