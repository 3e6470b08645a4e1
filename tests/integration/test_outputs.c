// SPDX-License-Identifier: Apache-2.0
/*
 * The daemon's file outputs read by consumers we did not write: go tool
 * pprof for .pb.gz, xmllint for .svg, protoc --decode_raw for .otlp.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit/test.h"
#include "harness.h"

#define GO "/usr/lib/go-1.19/bin/go"

/* Profile split-nofp-pie into path. */
static bool profile_to(const char *path)
{
	char pidbuf[16], *err = NULL;
	char *wargv[] = { (char *)h_workload("split-nofp-pie"), "10", NULL };
	pid_t w = h_spawn(wargv);
	const char *args[] = { "-pid", pidbuf, "-duration", "3s",
			       "-samples-per-second", "499", "-output", path,
			       NULL };
	int rc;

	usleep(200000);
	snprintf(pidbuf, sizeof(pidbuf), "%d", w);
	rc = h_profile(args, &err, 60);
	kill(w, SIGKILL);
	h_wait(w, 5);
	if (rc)
		printf("%s\n", err ? err : "");
	free(err);
	return rc == 0;
}

static char *run(const char *cmd)
{
	char *out = NULL;
	size_t len = 0;
	FILE *p = popen(cmd, "r");

	if (!p)
		return NULL;
	if (getdelim(&out, &len, 0, p) < 0) {
		free(out);
		out = strdup("");
	}
	pclose(p);
	return out;
}

TEST_ROOT(output_pprof_go_tool)
{
	char path[512], cmd[1200], *out;

	if (access(GO, X_OK)) {
		test_skip("golang-1.19 is not installed");
		return;
	}
	snprintf(path, sizeof(path), "%s/p.pb.gz", test_tmpdir());
	if (!ASSERT_TRUE(profile_to(path), "profile"))
		return;
	snprintf(cmd, sizeof(cmd),
		 "HOME=%s GOCACHE=%s/gocache %s tool pprof -top -nodecount=30 %s 2>&1",
		 test_tmpdir(), test_tmpdir(), GO, path);
	out = run(cmd);
	test_note("go tool pprof -top:\n%.1500s", out ? out : "");
	ASSERT_TRUE(out && strstr(out, "Type: cpu"), "a CPU profile");
	ASSERT_TRUE(out && strstr(out, "chain_a"), "chain_a listed");
	ASSERT_TRUE(out && strstr(out, "leaf_b"), "leaf_b listed");
	ASSERT_TRUE(out && strstr(out, "__libc_start_main"), "libc frames named");
	free(out);
}

TEST_ROOT(output_svg_xmllint)
{
	char path[512], cmd[1200], *out;

	snprintf(path, sizeof(path), "%s/p.svg", test_tmpdir());
	if (!ASSERT_TRUE(profile_to(path), "profile"))
		return;
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s 2>&1 && echo XML-OK", path);
	out = run(cmd);
	ASSERT_TRUE(out && strstr(out, "XML-OK"), "the SVG parses as XML");
	free(out);
	snprintf(cmd, sizeof(cmd), "grep -c 'chain_a' %s", path);
	out = run(cmd);
	ASSERT_TRUE(out && atoi(out) >= 1, "the SVG names the workload's frames");
	free(out);
}

TEST_ROOT(output_otlp_file_decode_raw)
{
	char path[512], cmd[1200], *out;

	snprintf(path, sizeof(path), "%s/p.otlp", test_tmpdir());
	if (!ASSERT_TRUE(profile_to(path), "profile"))
		return;
	snprintf(cmd, sizeof(cmd), "protoc --decode_raw < %s 2>&1 | head -c 200000", path);
	out = run(cmd);
	/* dictionary (2) with its string table (5): the workload's names */
	ASSERT_TRUE(out && strstr(out, "2 {"), "a dictionary");
	ASSERT_TRUE(out && strstr(out, "\"chain_a\""), "strings decoded");
	ASSERT_TRUE(out && strstr(out, "\"profile.frame.type\""), "frame types");
	free(out);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s/tests/unit/otlp_check.py %s 2>&1",
		 test_srcdir(), path);
	out = run(cmd);
	ASSERT_TRUE(out && !strstr(out, "ERROR"), "the independent checker agrees");
	ASSERT_TRUE(out && strstr(out, "main;chain_a;mid_a;leaf_a;spin"), "the stacks");
	free(out);
}
