// SPDX-License-Identifier: Apache-2.0
/*
 * The daemon's OTLP export end to end, against receivers we did not write
 * the protocol stack of: grpcio (Debian's python3-grpcio) and Python's
 * http.server, with every request checked by an independent wire decoder
 * (tests/unit/otlp_check.py).  Also a receiver that is down, then up.
 */
#include <arpa/inet.h>
#include <dirent.h>
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

static bool have_grpcio(void)
{
	return system("/usr/bin/python3 -c 'import grpc' >/dev/null 2>&1") == 0;
}

/* Start the test receiver; returns its pid, *port set (0: chosen by it). */
static pid_t start_receiver(const char *kind, int port, const char *dir,
			    int *bound)
{
	char script[512], portbuf[16], portfile[600];
	char *argv[] = { "/usr/bin/python3", script, (char *)kind, portbuf,
			 (char *)dir, "--max-seconds", "60", NULL };
	pid_t pid;
	int i;

	snprintf(script, sizeof(script), "%s/tests/unit/otlp_receiver.py",
		 test_srcdir());
	snprintf(portbuf, sizeof(portbuf), "%d", port);
	snprintf(portfile, sizeof(portfile), "%s/port", dir);
	unlink(portfile);
	pid = h_spawn(argv);
	for (i = 0; i < 100; i++) {
		FILE *f = fopen(portfile, "r");

		if (f) {
			int ok = fscanf(f, "%d", bound) == 1;
			fclose(f);
			if (ok)
				return pid;
		}
		usleep(100000);
	}
	kill(pid, SIGKILL);
	return -1;
}

/* Check every request in dir; returns how many, and appends the checker's
 * dumps to *dump (malloc'd). */
static int check_requests(const char *dir, char **dump, int *bad)
{
	char cmd[1200], buf[8192];
	size_t len = 0;
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;

	*dump = NULL;
	*bad = 0;
	while (d && (e = readdir(d))) {
		FILE *p;
		size_t got;
		int status;

		if (strncmp(e->d_name, "req-", 4) || !strstr(e->d_name, ".bin"))
			continue;
		n++;
		snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s/tests/unit/otlp_check.py %s/%s 2>&1",
			 test_srcdir(), dir, e->d_name);
		p = popen(cmd, "r");
		while (p && (got = fread(buf, 1, sizeof(buf), p)) > 0) {
			*dump = realloc(*dump, len + got + 1);
			memcpy(*dump + len, buf, got);
			len += got;
			(*dump)[len] = 0;
		}
		status = p ? pclose(p) : -1;
		if (status != 0)
			(*bad)++;
	}
	if (d)
		closedir(d);
	return n;
}

static void export_test(const char *kind)
{
	char dir[512], endpoint[64], *err = NULL, *dump = NULL;
	char *wargv[] = { (char *)h_workload("split-nofp-pie"), "20", NULL };
	const char *grpc_extra[] = { "-collection-agent", endpoint, "-disable-tls",
				     "-reporter-interval", "1s", NULL };
	const char *http_extra[] = { "-reporter-interval", "1s", NULL };
	struct folded f;
	int port = 0, n, bad, rc;
	pid_t rcv;

	snprintf(dir, sizeof(dir), "%s/%s", test_tmpdir(), kind);
	mkdir(dir, 0755);
	rcv = start_receiver(kind, 0, dir, &port);
	if (!ASSERT_GT(rcv, 0, "receiver started"))
		return;
	if (!strcmp(kind, "grpc")) {
		snprintf(endpoint, sizeof(endpoint), "127.0.0.1:%d", port);
		rc = h_profile_workload(wargv, "4s", "99", grpc_extra, &f, &err);
	} else {
		/* the standard variables alone */
		snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%d", port);
		setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint, 1);
		setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", 1);
		rc = h_profile_workload(wargv, "4s", "99", http_extra, &f, &err);
		unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
		unsetenv("OTEL_EXPORTER_OTLP_PROTOCOL");
	}
	ASSERT_EQ(rc, 0, "profiler exit code");
	test_note("%s", err ? err : "");
	kill(rcv, SIGTERM);
	h_wait(rcv, 10);
	n = check_requests(dir, &dump, &bad);
	test_note("%s: %d requests, %d rejected by the checker", kind, n, bad);
	ASSERT_GE(n, 3, "one request per interval");
	ASSERT_EQ(bad, 0, "every request passes the independent checker");
	ASSERT_GE(h_summary_value(err, "exports_ok"), 3, "exports_ok=");
	ASSERT_TRUE(dump && strstr(dump, "main;chain_a;mid_a;leaf_a;spin"),
		    "the workload's stacks arrive");
	ASSERT_TRUE(dump && strstr(dump, "split-nofp-pie"), "its resource");
	if (!dump || !strstr(dump, "main;chain_a"))
		printf("%.2000s\n", dump ? dump : "");
	free(dump);
	free(err);
	h_free_folded(&f);
}

TEST_ROOT(otlp_export_grpc_real_server)
{
	if (!have_grpcio()) {
		test_skip("python3-grpcio is not installed");
		return;
	}
	export_test("grpc");
}

TEST_ROOT(otlp_export_http_from_env)
{
	export_test("http");
}

/* A receiver that is down, then comes up: no crash, data flows again. */
TEST_ROOT(otlp_receiver_down_then_up)
{
	char dir[512], endpoint[64], errp[600], *dump = NULL;
	const char *args[] = { "-collection-agent", endpoint, "-disable-tls",
			       "-reporter-interval", "1s", "-duration", "9s",
			       NULL };
	int port = h_free_port(), bound = 0, n, bad, status;
	pid_t prof, rcv;
	FILE *e;
	char line[4096] = "";

	if (!have_grpcio()) {
		test_skip("python3-grpcio is not installed");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/late", test_tmpdir());
	mkdir(dir, 0755);
	snprintf(endpoint, sizeof(endpoint), "127.0.0.1:%d", port);
	snprintf(errp, sizeof(errp), "%s/late.err", test_tmpdir());
	prof = h_profile_bg(args, errp);
	sleep(4); /* nobody listens yet */
	rcv = start_receiver("grpc", port, dir, &bound);
	ASSERT_EQ(bound, port, "receiver on the port the daemon uses");
	status = h_wait(prof, 60);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit 0");
	kill(rcv, SIGTERM);
	h_wait(rcv, 10);
	n = check_requests(dir, &dump, &bad);
	e = fopen(errp, "r");
	while (e && fgets(line, sizeof(line), e))
		if (strstr(line, "samples="))
			break;
	if (e)
		fclose(e);
	test_note("requests after the receiver came up: %d; %s", n, line);
	ASSERT_GE(n, 2, "data flows again");
	ASSERT_EQ(bad, 0, "valid requests");
	ASSERT_GE(h_summary_value(line, "exports_failed"), 1,
		  "the failed attempts are counted");
	free(dump);
}
