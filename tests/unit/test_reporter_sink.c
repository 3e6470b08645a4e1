// SPDX-License-Identifier: Apache-2.0
/*
 * Reporter sinks: files by extension (atomic, rotated), OTLP options from
 * the environment, and the OTLP sink against receivers we did not write:
 * Python's http.server and a real gRPC server (grpcio) on loopback, plain
 * and gzip, failing on purpose, down and then up.
 */
#include "test.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rep_fixture.h"
#include "rep_internal.h"
#include "reporter.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- file sinks ----------------------------------------------------------- */

static int count_dir(const char *dir, const char *prefix)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)))
			n++;
	closedir(d);
	return n;
}

TEST(reporter_file_sinks)
{
	static const char *const names[] = { "p.folded", "p.pb.gz", "p.pprof", "p.svg",
					     "p.otlp" };
	char path[512], *data = NULL, *out = malloc(1 << 16);
	struct rep_sink *s = NULL;
	struct rep_stats st;
	size_t i, len;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", test_tmpdir(), names[i]);
		if (!ASSERT_OK(rep_file_sink_open(path, false, &s), names[i]))
			continue;
		/* Twice: the second replaces the first. */
		ASSERT_OK(rep_sink_write(s, fix_batch()), names[i]);
		ASSERT_OK(rep_sink_write(s, fix_batch()), names[i]);
		rep_sink_stats(s, &st);
		ASSERT_EQ(st.batches, 2, "batches");
		ASSERT_EQ(st.samples, 40, "samples: 2 x 20 events");
		ASSERT_EQ(st.write_errors, 0, "write errors");
		rep_sink_close(s, 0);
		if (!ASSERT_OK(fix_read_file(path, &data, &len), names[i]))
			continue;
		ASSERT_EQ(st.bytes, 2 * len, "bytes");
		if (i == 0)
			ASSERT_TRUE(strstr(data, "app;main;compute 8\n") != NULL, "folded");
		else if (i <= 2)
			ASSERT_TRUE((unsigned char)data[0] == 0x1f &&
					    (unsigned char)data[1] == 0x8b,
				    "pprof is gzip'd");
		else if (i == 3)
			ASSERT_TRUE(strstr(data, "<svg ") != NULL, "svg");
		else {
			ASSERT_EQ(fix_otlp_check(path, out, 1 << 16), 0, out);
			ASSERT_STREQ(out, otlp_fixture_dump, "otlp file = request body");
		}
		free(data);
		data = NULL;
	}
	ASSERT_EQ(count_dir(test_tmpdir(), ".p."), 0, "no temporary files left");
	ASSERT_EQ(rep_file_sink_open("/tmp/x.txt", false, &s), -EINVAL, "unknown extension");
	ASSERT_EQ(rep_file_sink_open("/tmp/.folded", false, &s), -EINVAL, "no name");
	free(out);
}

TEST(reporter_file_sink_rotate_and_errors)
{
	struct rep_batch b = *fix_batch();
	char path[512];
	struct rep_sink *s;
	struct rep_stats st;
	struct stat sb;

	snprintf(path, sizeof(path), "%s/profile.pb.gz", test_tmpdir());
	if (!ASSERT_OK(rep_file_sink_open(path, true, &s), "open"))
		return;
	ASSERT_OK(rep_sink_write(s, &b), "write 1");
	b.start_ns += 5000000000ULL;
	ASSERT_OK(rep_sink_write(s, &b), "write 2");
	rep_sink_close(s, 0);
	snprintf(path, sizeof(path), "%s/profile-20261122T101500Z.pb.gz", test_tmpdir());
	ASSERT_OK(stat(path, &sb), "first interval's file");
	ASSERT_EQ(sb.st_mode & 0777, 0644, "readable");
	snprintf(path, sizeof(path), "%s/profile-20261122T101505Z.pb.gz", test_tmpdir());
	ASSERT_OK(stat(path, &sb), "second interval's file");
	ASSERT_EQ(count_dir(test_tmpdir(), "profile"), 2, "two files");
	ASSERT_EQ(count_dir(test_tmpdir(), ".profile"), 0, "no temporary files");

	snprintf(path, sizeof(path), "%s/missing/dir/p.folded", test_tmpdir());
	if (!ASSERT_OK(rep_file_sink_open(path, false, &s), "open"))
		return;
	ASSERT_EQ(rep_sink_write(s, fix_batch()), -ENOENT, "no directory");
	rep_sink_stats(s, &st);
	ASSERT_EQ(st.write_errors, 1, "counted");
	ASSERT_EQ(st.batches, 0, "not written");
	rep_sink_close(s, 0);
}

/* ---- OTLP options ---------------------------------------------------------- */

static void clear_env(void)
{
	static const char *const v[] = { "ENDPOINT", "PROTOCOL", "HEADERS", "TIMEOUT",
					 "COMPRESSION", "INSECURE", "CERTIFICATE" };
	char name[64];
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		snprintf(name, sizeof(name), "OTEL_EXPORTER_OTLP_%s", v[i]);
		unsetenv(name);
		snprintf(name, sizeof(name), "OTEL_EXPORTER_OTLP_PROFILES_%s", v[i]);
		unsetenv(name);
	}
}

/* Set each { name, value } of v, the environment a subtest reads. */
static void set_env(const char *const v[][2], size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		setenv(v[i][0], v[i][1], 1);
}

static void check_target(const struct rep_otlp_opts *o, const char *url, bool grpc,
			 bool tls, bool gzip)
{
	struct rep_otlp_target t;

	if (!ASSERT_OK(rep_otlp_target(o, &t), url))
		return;
	ASSERT_STREQ(t.url, url, "url");
	ASSERT_EQ(t.grpc, grpc, url);
	ASSERT_EQ(t.tls, tls, url);
	ASSERT_EQ(t.gzip, gzip, url);
	free(t.url);
}

#define GRPC_EXPORT "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"

TEST(reporter_otlp_options)
{
	struct rep_otlp_opts o;

	clear_env();
	if (test_start_subtest("defaults")) {
		o = (struct rep_otlp_opts){ 0 };
		ASSERT_OK(rep_otlp_opts_from_env(&o), "empty environment");
		ASSERT_TRUE(o.endpoint == NULL, "no endpoint");
		check_target(&o, "http://localhost:4318/v1development/profiles", false, false,
			     true);
		/* -collection-agent host:port: gRPC, TLS unless -disable-tls. */
		o = (struct rep_otlp_opts){ .endpoint = "collector:4317" };
		check_target(&o, "https://collector:4317" GRPC_EXPORT, true, true, true);
		o.insecure = true;
		check_target(&o, "http://collector:4317" GRPC_EXPORT, true, false, true);
		o = (struct rep_otlp_opts){ .endpoint = "https://c.example:4318/base/",
					    .compression = "none" };
		check_target(&o, "https://c.example:4318/base/v1development/profiles", false,
			     true, false);
		o = (struct rep_otlp_opts){ .endpoint = "http://c:4317/ignored",
					    .protocol = "grpc" };
		check_target(&o, "http://c:4317" GRPC_EXPORT, true, false, true);
	}
	if (test_start_subtest("environment")) {
		static const char *const env[][2] = {
			{ "OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel:4318" },
			{ "OTEL_EXPORTER_OTLP_HEADERS", "api-key=s%20cret,tenant=a" },
			{ "OTEL_EXPORTER_OTLP_TIMEOUT", "2500" },
			{ "OTEL_EXPORTER_OTLP_COMPRESSION", "none" },
			{ "OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL", "http/protobuf" },
			{ "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc" },
		};
		static const char *const per_signal[][2] = {
			{ "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "otel:4317" },
			{ "OTEL_EXPORTER_OTLP_INSECURE", "TRUE" },
			{ "OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL", "grpc" },
		};

		set_env(env, ARRAY_SIZE(env));
		o = (struct rep_otlp_opts){ 0 };
		ASSERT_OK(rep_otlp_opts_from_env(&o), "from env");
		ASSERT_STREQ(o.endpoint, "http://otel:4318", "endpoint");
		ASSERT_FALSE(o.endpoint_as_is, "base endpoint: path appended");
		ASSERT_STREQ(o.protocol, "http/protobuf", "PROFILES_ wins");
		ASSERT_STREQ(o.headers, "api-key=s%20cret,tenant=a", "headers");
		ASSERT_EQ(o.timeout_ms, 2500, "timeout");
		ASSERT_STREQ(o.compression, "none", "compression");
		check_target(&o, "http://otel:4318/v1development/profiles", false, false, false);

		/* Flags win over the environment. */
		o = (struct rep_otlp_opts){ .endpoint = "agent:4317", .protocol = "grpc",
					    .timeout_ms = 100, .compression = "gzip" };
		ASSERT_OK(rep_otlp_opts_from_env(&o), "from env");
		ASSERT_STREQ(o.endpoint, "agent:4317", "flag endpoint");
		ASSERT_EQ(o.timeout_ms, 100, "flag timeout");
		check_target(&o, "https://agent:4317" GRPC_EXPORT, true, true, true);

		/* A per-signal endpoint is used as is; INSECURE for host:port. */
		set_env(per_signal, ARRAY_SIZE(per_signal));
		o = (struct rep_otlp_opts){ 0 };
		ASSERT_OK(rep_otlp_opts_from_env(&o), "from env");
		ASSERT_TRUE(o.endpoint_as_is, "as is");
		ASSERT_TRUE(o.insecure, "insecure");
		check_target(&o, "http://otel:4317" GRPC_EXPORT, true, false, false);
		setenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "https://p.example/custom/path", 1);
		setenv("OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL", "http/protobuf", 1);
		o = (struct rep_otlp_opts){ 0 };
		ASSERT_OK(rep_otlp_opts_from_env(&o), "from env");
		check_target(&o, "https://p.example/custom/path", false, true, false);
		clear_env();
	}
	if (test_start_subtest("bad_values")) {
		static const char *const env[][2] = {
			{ "OTEL_EXPORTER_OTLP_PROTOCOL", "http/json" },
			{ "OTEL_EXPORTER_OTLP_TIMEOUT", "10s" },
			{ "OTEL_EXPORTER_OTLP_INSECURE", "maybe" },
			{ "OTEL_EXPORTER_OTLP_COMPRESSION", "zstd" },
			{ "OTEL_EXPORTER_OTLP_HEADERS", "a=b" },
		};
		struct rep_otlp_target t;

		set_env(env, ARRAY_SIZE(env));
		o = (struct rep_otlp_opts){ 0 };
		ASSERT_EQ(rep_otlp_opts_from_env(&o), -EINVAL, "invalid values");
		ASSERT_TRUE(!o.protocol && !o.timeout_ms && !o.insecure && !o.compression,
			    "invalid values ignored");
		ASSERT_STREQ(o.headers, "a=b", "valid ones still applied");
		clear_env();
		o = (struct rep_otlp_opts){ .endpoint = "ftp://x:1" };
		ASSERT_EQ(rep_otlp_target(&o, &t), -EINVAL, "scheme");
		o = (struct rep_otlp_opts){ .endpoint = "x:1", .protocol = "http/json" };
		ASSERT_EQ(rep_otlp_target(&o, &t), -EINVAL, "protocol");
	}
}

TEST(reporter_otlp_headers)
{
	struct curl_slist *l = NULL, *p;
	char all[512] = "";

	ASSERT_OK(rep_otlp_headers("a=b, x-key = va%20lue ,,k3=%2C%3D%zz", &l), "parse");
	for (p = l; p; p = p->next) {
		strcat(all, p->data);
		strcat(all, "|");
	}
	ASSERT_STREQ(all, "a: b|x-key: va lue|k3: ,=%zz|", "decoded, trimmed");
	rep_otlp_slist_free(l);
	l = NULL;
	ASSERT_EQ(rep_otlp_headers("novalue", &l), -EINVAL, "no '='");
	ASSERT_EQ(rep_otlp_headers("a=b%0d%0aInjected: 1", &l), -EINVAL, "CR LF refused");
	ASSERT_EQ(rep_otlp_headers("=v", &l), -EINVAL, "empty key");
	rep_otlp_slist_free(l);
}

/* ---- OTLP against real receivers ----------------------------------------- */

struct receiver {
	pid_t pid;
	int port;
	char dir[512];
};

#define RECEIVER_PY "tests/unit/otlp_receiver.py"

/* Start otlp_receiver.py; extra is appended to its arguments. */
static bool receiver_start(struct receiver *r, const char *transport, int port,
			   const char *extra, const char *name)
{
	char script[512], portarg[16], cmd[2048], *p = NULL;
	double t0 = now_s();
	size_t len;

	static int seq;

	/* A directory per receiver: a stale port file must not be read. */
	snprintf(r->dir, sizeof(r->dir), "%s/%s-%d", test_tmpdir(), name, ++seq);
	if (strcmp(transport, "grpc"))
		transport = "http";
	mkdir(r->dir, 0755);
	snprintf(script, sizeof(script), "%s/" RECEIVER_PY, test_srcdir());
	snprintf(portarg, sizeof(portarg), "%d", port);
	snprintf(cmd, sizeof(cmd), "exec /usr/bin/python3 %s %s %s %s --max-seconds 120 %s",
		 script, transport, portarg, r->dir, extra ? extra : "");
	r->pid = fork();
	if (r->pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	snprintf(cmd, sizeof(cmd), "%s/port", r->dir);
	while (now_s() - t0 < 30) {
		if (!fix_read_file(cmd, &p, &len)) {
			r->port = atoi(p);
			free(p);
			return ASSERT_GT(r->port, 0, "receiver port");
		}
		if (waitpid(r->pid, NULL, WNOHANG) == r->pid) {
			test_fail(__FILE__, __LINE__, "receiver %s exited", transport);
			r->pid = 0;
			return false;
		}
		usleep(20000);
	}
	test_fail(__FILE__, __LINE__, "receiver %s did not start", transport);
	return false;
}

static void receiver_stop(struct receiver *r)
{
	if (r->pid > 0) {
		kill(r->pid, SIGTERM);
		waitpid(r->pid, NULL, 0);
		r->pid = 0;
	}
}

static int receiver_count(const struct receiver *r)
{
	return count_dir(r->dir, "req-") / 2;
}

static char *receiver_file(const struct receiver *r, int n, const char *ext,
			   size_t *len)
{
	char path[600], *p = NULL;
	size_t l;

	snprintf(path, sizeof(path), "%s/req-%d.%s", r->dir, n, ext);
	return fix_read_file(path, &p, len ? len : &l) ? NULL : p;
}

/* Poll the sink's stats until send_ok + send_rejected reaches n. */
static struct rep_stats wait_sent(struct rep_sink *s, uint64_t n, double secs)
{
	double t0 = now_s();
	struct rep_stats st;

	for (;;) {
		rep_sink_stats(s, &st);
		if (st.send_ok + st.send_rejected >= n || now_s() - t0 > secs)
			return st;
		usleep(10000);
	}
}

static void check_body(const struct receiver *r, int n)
{
	char path[600], *out = malloc(1 << 16);

	snprintf(path, sizeof(path), "%s/req-%d.bin", r->dir, n);
	ASSERT_EQ(fix_otlp_check(path, out, 1 << 16), 0, out);
	ASSERT_STREQ(out, otlp_fixture_dump, "what the receiver decoded");
	free(out);
}

static size_t fixture_request_size(void)
{
	void *buf;
	size_t len = 0;

	if (!rep_encode_otlp(fix_batch(), &buf, &len))
		free(buf);
	return len;
}

/* One batch to a receiver that accepts it; header checks on what it saw. */
static void send_fixture(const char *transport, bool gzip)
{
	struct rep_otlp_opts o = { .headers = "x-test=yes,x-tenant=t%201",
				   .compression = gzip ? "gzip" : "none",
				   .timeout_ms = 5000 };
	struct receiver r = { 0 };
	struct rep_sink *s = NULL;
	struct rep_stats st;
	char ep[64], *hdr;
	bool grpc = !strcmp(transport, "grpc");

	if (!receiver_start(&r, transport, 0, NULL, gzip ? "gz" : "plain"))
		return;
	/* gRPC as the reference agent's -collection-agent host:port. */
	if (grpc) {
		snprintf(ep, sizeof(ep), "127.0.0.1:%d", r.port);
		o.insecure = true;
	} else {
		snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", r.port);
	}
	o.endpoint = ep;
	if (!ASSERT_OK(rep_otlp_sink_open(&o, &s), "open"))
		goto out;
	ASSERT_OK(rep_sink_write(s, fix_batch()), "write");
	st = wait_sent(s, 1, 20);
	ASSERT_EQ(st.send_ok, 1, "accepted");
	ASSERT_EQ(st.send_fail, 0, "no failure");
	ASSERT_EQ(st.samples, 20, "events sent");
	ASSERT_EQ(st.queue_len, 0, "queue empty");
	test_note("%s%s: %llu bytes on the wire (raw request %zu)", transport,
		  gzip ? "+gzip" : "", (unsigned long long)st.bytes,
		  fixture_request_size());
	if (gzip)
		ASSERT_LT(st.bytes, fixture_request_size(), "compressed");
	else
		ASSERT_EQ(st.bytes, fixture_request_size() + (grpc ? 5 : 0), "raw size");
	rep_sink_close(s, 1000);
	ASSERT_EQ(receiver_count(&r), 1, "one request");
	hdr = receiver_file(&r, 1, "hdr", NULL);
	if (ASSERT_NOT_NULL(hdr, "headers")) {
		ASSERT_TRUE(strstr(hdr, "x-test: yes\n") != NULL, "user header");
		ASSERT_TRUE(strstr(hdr, "x-tenant: t 1\n") != NULL, "url-decoded header");
		ASSERT_TRUE(strstr(hdr, "user-agent: ") != NULL, "user agent");
		if (!grpc) {
			ASSERT_TRUE(strstr(hdr, "content-type: application/x-protobuf\n") != NULL,
				    "content type");
			ASSERT_EQ(strstr(hdr, "content-encoding: gzip\n") != NULL, gzip,
				  "content encoding");
		}
	}
	free(hdr);
	check_body(&r, 1);
out:
	receiver_stop(&r);
}

TEST(reporter_otlp_http_receiver)
{
	if (test_start_subtest("plain"))
		send_fixture("http", false);
	if (test_start_subtest("gzip"))
		send_fixture("http", true);
}

static bool have_grpcio(void)
{
	return fix_run("/usr/bin/python3 -c 'import grpc' 2>/dev/null", NULL, 0) == 0;
}

TEST(reporter_otlp_grpc_receiver)
{
	if (!have_grpcio()) {
		test_skip("python3-grpcio not installed for /usr/bin/python3");
		return;
	}
	if (test_start_subtest("plain"))
		send_fixture("grpc", false);
	if (test_start_subtest("gzip"))
		send_fixture("grpc", true);
}

/* A receiver that fails the first requests: retried, or dropped for good. */
static struct rep_stats failing_receiver(const char *transport, const char *fail,
					 int writes, double *secs, int *requests)
{
	struct rep_otlp_opts o = { .retry_initial_ms = 50, .retry_max_ms = 200,
				   .timeout_ms = 5000, .protocol = transport };
	struct receiver r = { 0 };
	struct rep_stats st = { 0 };
	struct rep_sink *s = NULL;
	double t0;
	char ep[64];
	int i;

	if (!receiver_start(&r, transport, 0, fail, "failing"))
		return st;
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", r.port);
	o.endpoint = ep;
	if (ASSERT_OK(rep_otlp_sink_open(&o, &s), "open")) {
		t0 = now_s();
		for (i = 0; i < writes; i++)
			ASSERT_OK(rep_sink_write(s, fix_batch()), "write");
		st = wait_sent(s, writes, 30);
		*secs = now_s() - t0;
		rep_sink_close(s, 1000);
	}
	*requests = receiver_count(&r);
	receiver_stop(&r);
	return st;
}

TEST(reporter_otlp_retry)
{
	struct rep_stats st;
	double secs = 0;
	int n = 0;

	if (test_start_subtest("http_503_retry_after")) {
		st = failing_receiver("http/protobuf", "--fail 2 --retry-after 1", 1, &secs, &n);
		ASSERT_EQ(st.send_fail, 2, "two failures");
		ASSERT_EQ(st.send_ok, 1, "then accepted");
		ASSERT_EQ(n, 3, "three requests");
		/* Backoff alone would be ~0.1 s: the wait is Retry-After's. */
		ASSERT_TRUE(secs >= 1.9, "Retry-After: 1 honoured twice");
		ASSERT_TRUE(secs < 6, "not much longer");
	}
	if (test_start_subtest("http_400_rejected")) {
		st = failing_receiver("http/protobuf", "--fail 1 --fail-code 400", 2, &secs, &n);
		ASSERT_EQ(st.send_rejected, 1, "dropped for good");
		ASSERT_EQ(st.send_ok, 1, "the next one goes");
		ASSERT_EQ(n, 2, "no retry");
	}
	if (!have_grpcio()) {
		test_skip("python3-grpcio not installed for /usr/bin/python3");
		return;
	}
	if (test_start_subtest("grpc_unavailable")) {
		st = failing_receiver("grpc", "--fail 2", 1, &secs, &n);
		ASSERT_EQ(st.send_fail, 2, "UNAVAILABLE twice");
		ASSERT_EQ(st.send_ok, 1, "then OK");
		ASSERT_EQ(n, 3, "three requests");
	}
	if (test_start_subtest("grpc_resource_exhausted")) {
		st = failing_receiver("grpc", "--fail 1 --fail-code 8", 1, &secs, &n);
		ASSERT_EQ(st.send_fail, 1, "RESOURCE_EXHAUSTED retried");
		ASSERT_EQ(st.send_ok, 1, "then OK");
	}
	if (test_start_subtest("grpc_invalid_argument")) {
		st = failing_receiver("grpc", "--fail 1 --fail-code 3", 2, &secs, &n);
		ASSERT_EQ(st.send_rejected, 1, "INVALID_ARGUMENT: dropped");
		ASSERT_EQ(st.send_ok, 1, "the next one goes");
		ASSERT_EQ(n, 2, "no retry");
	}
}

/* No receiver: the queue fills, the oldest batches go, writes never block;
 * then the receiver starts and the newest batches arrive. */
static void down_then_up(const char *transport, unsigned queue_max, size_t queue_bytes)
{
	struct rep_otlp_opts o = { .retry_initial_ms = 100, .retry_max_ms = 300,
				   .timeout_ms = 2000, .queue_max = queue_max,
				   .queue_max_bytes = queue_bytes, .protocol = transport,
				   .compression = "none" };
	struct rep_batch b = *fix_batch();
	struct receiver r = { 0 };
	struct rep_sink *s = NULL;
	struct rep_stats st;
	char ep[64], host[32];
	int port = fix_free_port(), i, got;
	double worst = 0;

	ASSERT_GT(port, 0, "a free port");
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", port);
	o.endpoint = ep;
	if (!ASSERT_OK(rep_otlp_sink_open(&o, &s), "open"))
		return;
	for (i = 0; i < 10; i++) {
		double t0 = now_s();

		snprintf(host, sizeof(host), "host-%d", i);
		b.host_name = host;
		ASSERT_OK(rep_sink_write(s, &b), "write");
		if (now_s() - t0 > worst)
			worst = now_s() - t0;
		usleep(30000);
	}
	ASSERT_TRUE(worst < 0.1, "writes do not wait for the network");
	rep_sink_stats(s, &st);
	ASSERT_EQ(st.send_ok, 0, "nothing accepted");
	ASSERT_GE(st.send_fail, 1, "attempts failed");
	ASSERT_LE(st.queue_len, 3, "queue bounded");
	ASSERT_GE(st.queue_drops, 6, "oldest dropped");
	ASSERT_GE(st.queue_drops + st.queue_len, 9, "queued, dropped, or one in flight");

	if (!receiver_start(&r, transport, port, NULL, "late"))
		goto out;
	for (i = 0; i < 2000; i++) {
		rep_sink_stats(s, &st);
		if (st.send_ok + st.queue_drops >= 10)
			break;
		usleep(10000);
	}
	test_note("%s: sent %llu, dropped %llu, failed attempts %llu", transport,
		  (unsigned long long)st.send_ok, (unsigned long long)st.queue_drops,
		  (unsigned long long)st.send_fail);
	ASSERT_GE(st.send_ok, 1, "data flows again");
	ASSERT_EQ(st.queue_len, 0, "queue drained");
	got = receiver_count(&r);
	ASSERT_EQ((uint64_t)got, st.send_ok, "receiver got what was sent");
	ASSERT_EQ(st.send_ok + st.queue_drops, 10, "sent + dropped = written");
	for (i = 1; i <= got; i++) {
		size_t len = 0;
		char *body = receiver_file(&r, i, "bin", &len);

		/* Oldest first; the survivors are the newest ones. */
		if (ASSERT_NOT_NULL(body, "body")) {
			snprintf(host, sizeof(host), "host-%d", 10 - got + i - 1);
			ASSERT_TRUE(memmem(body, len, host, strlen(host)) != NULL, host);
		}
		free(body);
	}
out:
	rep_sink_close(s, 2000);
	receiver_stop(&r);
}

TEST(reporter_otlp_receiver_down_then_up)
{
	size_t one = fixture_request_size() + 5 + 16; /* + gRPC frame + "host-N" */

	if (test_start_subtest("http_count_bound"))
		down_then_up("http/protobuf", 3, 0);
	if (test_start_subtest("http_byte_bound"))
		down_then_up("http/protobuf", 100, 3 * one);
	if (!have_grpcio()) {
		test_skip("python3-grpcio not installed for /usr/bin/python3");
		return;
	}
	if (test_start_subtest("grpc_count_bound"))
		down_then_up("grpc", 3, 0);
}

/* TLS: gRPC over ALPN h2 and HTTPS, verified against a self-signed
 * certificate for 127.0.0.1 (ca_file); without it verification fails and
 * the batch waits for a retry. */
static void send_tls(const char *transport, const char *dir, bool trust)
{
	struct rep_otlp_opts o = { .timeout_ms = 5000, .retry_initial_ms = 50 };
	bool grpc = !strcmp(transport, "grpc");
	struct receiver r = { 0 };
	struct rep_sink *s = NULL;
	struct rep_stats st;
	char ep[64], tls[1200], ca[600];

	snprintf(ca, sizeof(ca), "%s/cert.pem", dir);
	snprintf(tls, sizeof(tls), "--tls %s %s/key.pem", ca, dir);
	if (!receiver_start(&r, transport, 0, tls, "tls"))
		return;
	/* gRPC: a bare host:port means TLS; HTTP: the https scheme. */
	snprintf(ep, sizeof(ep), "%s127.0.0.1:%d", grpc ? "" : "https://", r.port);
	o.endpoint = ep;
	o.ca_file = trust ? ca : NULL;
	if (ASSERT_OK(rep_otlp_sink_open(&o, &s), "open")) {
		ASSERT_OK(rep_sink_write(s, fix_batch()), "write");
		if (trust) {
			st = wait_sent(s, 1, 20);
			ASSERT_EQ(st.send_ok, 1, "accepted over TLS");
		} else {
			double t0 = now_s();

			do {
				usleep(20000);
				rep_sink_stats(s, &st);
			} while (!st.send_fail && now_s() - t0 < 20);
			ASSERT_EQ(st.send_ok, 0, "unknown issuer refused");
			ASSERT_GE(st.send_fail, 1, "and retried");
		}
		rep_sink_close(s, 200);
	}
	if (trust)
		check_body(&r, 1);
	else
		ASSERT_EQ(receiver_count(&r), 0, "nothing got through");
	receiver_stop(&r);
}

TEST(reporter_otlp_tls)
{
	char cmd[1024];
	const char *dir = test_tmpdir();

	if (access("/usr/bin/openssl", X_OK)) {
		test_skip("openssl not installed: no certificate to test TLS with");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "openssl req -x509 -newkey rsa:2048 -nodes -keyout %1$s/key.pem "
		 "-out %1$s/cert.pem -days 2 -subj /CN=localhost "
		 "-addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1",
		 dir);
	if (!ASSERT_EQ(fix_run(cmd, NULL, 0), 0, "openssl req"))
		return;
	if (test_start_subtest("https"))
		send_tls("http", dir, true);
	if (test_start_subtest("https_untrusted"))
		send_tls("http", dir, false);
	if (!have_grpcio()) {
		test_skip("python3-grpcio not installed for /usr/bin/python3");
		return;
	}
	if (test_start_subtest("grpc_tls"))
		send_tls("grpc", dir, true);
	if (test_start_subtest("grpc_tls_untrusted"))
		send_tls("grpc", dir, false);
}

/* Closing with a dead receiver gives up after the timeout. */
TEST(reporter_otlp_close_is_bounded)
{
	struct rep_otlp_opts o = { .retry_initial_ms = 50, .timeout_ms = 10000 };
	struct rep_sink *s = NULL;
	char ep[64];
	double t0;

	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", fix_free_port());
	o.endpoint = ep;
	if (!ASSERT_OK(rep_otlp_sink_open(&o, &s), "open"))
		return;
	ASSERT_OK(rep_sink_write(s, fix_batch()), "write");
	ASSERT_OK(rep_sink_write(s, fix_batch()), "write");
	usleep(100000);
	t0 = now_s();
	rep_sink_close(s, 300);
	ASSERT_TRUE(now_s() - t0 < 2.0, "close waited about its timeout");
	rep_sink_close(NULL, 0);
}

/* Closing flushes what is queued when the receiver is there. */
TEST(reporter_otlp_close_flushes)
{
	struct rep_otlp_opts o = { .protocol = "http/protobuf" };
	struct receiver r = { 0 };
	struct rep_sink *s = NULL;
	char ep[64];
	int i;

	if (!receiver_start(&r, "http", 0, NULL, "flush"))
		return;
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", r.port);
	o.endpoint = ep;
	if (ASSERT_OK(rep_otlp_sink_open(&o, &s), "open")) {
		for (i = 0; i < 3; i++)
			ASSERT_OK(rep_sink_write(s, fix_batch()), "write");
		rep_sink_close(s, 5000);
	}
	ASSERT_EQ(receiver_count(&r), 3, "all three sent before close returned");
	receiver_stop(&r);
}
