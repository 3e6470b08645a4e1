// SPDX-License-Identifier: Apache-2.0
/*
 * The daemon's file outputs read by consumers we did not write: go tool
 * pprof for .pb.gz, xmllint for .svg, protoc --decode_raw for .otlp, and
 * protoc --decode with the upstream .proto files, strict about UTF-8.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit/rep_fixture.h"
#include "../unit/test.h"
#include "harness.h"

#define GO "/usr/lib/go-1.19/bin/go"

/* Profile workload (run for 10 s) into test_tmppath(name): that path,
 * or NULL after a failed assertion. */
static const char *profiled(const char *workload, const char *name)
{
	char *wargv[] = { (char *)h_workload(workload), "10", NULL }, *err = NULL;
	const char *path = test_tmppath(name);
	pid_t w = h_spawn(wargv);
	int rc;

	usleep(200000);
	rc = h_profile_pid(w, "3s", "499", NULL, path, &err, 60);
	kill(w, SIGKILL);
	h_wait(w, 5);
	if (rc)
		printf("%s\n", err ? err : "");
	free(err);
	return ASSERT_TRUE(rc == 0, "profile") ? path : NULL;
}

/* The same for the split workload whose frames the tests below name. */
static const char *profiled_split(const char *name)
{
	return profiled("split-nofp-pie", name);
}

/* What a consumer's output must contain (absent: must not). */
struct want {
	const char *needle, *what;
	bool absent;
};

/* Run shell command cmd and check its output against the n wants, after
 * a note of it titled note (NULL: none). */
static void check_output(const char *cmd, const char *note,
			 const struct want *want, size_t n)
{
	char *out = h_cmd_output(cmd);
	size_t i;

	if (note)
		test_note("%s:\n%.1500s", note, out ? out : "");
	for (i = 0; i < n; i++)
		ASSERT_TRUE(out &&
			    !strstr(out, want[i].needle) == want[i].absent,
			    want[i].what);
	free(out);
}

TEST_ROOT(output_pprof_go_tool)
{
	static const struct want top[] = {
		{ "Type: cpu", "a CPU profile" },
		{ "chain_a", "chain_a listed" },
		{ "leaf_b", "leaf_b listed" },
		{ "__libc_start_main", "libc frames named" },
	};
	const char *path;

	if (access(GO, X_OK)) {
		test_skip("golang-1.19 is not installed");
		return;
	}
	path = profiled_split("p.pb.gz");
	if (path)
		check_output(h_cmdf("HOME=%s GOCACHE=%s/gocache %s tool pprof "
				    "-top -nodecount=30 %s 2>&1",
				    test_tmpdir(), test_tmpdir(), GO, path),
			     "go tool pprof -top", top,
			     sizeof(top) / sizeof(top[0]));
}

TEST_ROOT(output_svg_xmllint)
{
	static const struct want xml = { "XML-OK", "the SVG parses as XML" };
	static const struct want names = {
		"chain_a", "the SVG names the workload's frames"
	};
	const char *path = profiled_split("p.svg");

	if (!path)
		return;
	check_output(h_cmdf("xmllint --noout %s 2>&1 && echo XML-OK", path),
		     NULL, &xml, 1);
	check_output(h_cmdf("grep -o -m 1 'chain_a' %s", path), NULL, &names,
		     1);
}

TEST_ROOT(output_otlp_file_decode_raw)
{
	/* dictionary (2) with its string table (5): the workload's names */
	static const struct want raw[] = {
		{ "2 {", "a dictionary" },
		{ "\"chain_a\"", "strings decoded" },
		{ "\"profile.frame.type\"", "frame types" },
	};
	static const struct want checker[] = {
		{ "ERROR", "the independent checker agrees", true },
		{ "main;chain_a;mid_a;leaf_a;spin", "the stacks" },
	};
	const char *path = profiled_split("p.otlp");

	if (!path)
		return;
	check_output(h_cmdf("protoc --decode_raw < %s 2>&1 | head -c 200000",
			    path),
		     NULL, raw, sizeof(raw) / sizeof(raw[0]));
	check_output(h_cmdf("/usr/bin/python3 %s/tests/unit/otlp_check.py "
			    "%s 2>&1", test_srcdir(), path),
		     NULL, checker, sizeof(checker) / sizeof(checker[0]));
}

/* The upstream .proto files are there, or the test is skipped, saying why. */
static bool have_upstream_protos(void)
{
	const char *d = getenv("EP_UPSTREAM_PROTOS");

	if (fix_upstream_protos())
		return true;
	test_skip("no upstream .proto files in %s (run 'make deps' as root)",
		  d ? d : FIX_UPSTREAM_PROTOS);
	return false;
}

/* How many different cpu=N values the lines of thread (as strict_decode.py
 * prints it) have. */
static int distinct_cpus(const char *out, const char *thread)
{
	bool seen[1024] = { false };
	const char *p = out;
	int n = 0, cpu;

	while ((p = strstr(p, thread))) {
		p += strlen(thread);
		if (sscanf(p, " tid=%*d cpu=%d", &cpu) == 1 && cpu >= 0 &&
		    cpu < 1024 && !seen[cpu]) {
			seen[cpu] = true;
			n++;
		}
	}
	return n;
}

/*
 * hopnames: two threads moving between CPUs every 20 ms, one named so that
 * the kernel's 15-byte comm ends inside a character.  Decoded by protoc with
 * the upstream google/pprof and opentelemetry-proto (v1.11 = the v1.10 wire
 * layout) files, which, like upb and Go, refuse invalid UTF-8 in a string
 * field; every sample must carry cpu.logical_number, and a thread's stack
 * shows up once per CPU it ran on.  Folded shows no CPU: one line a stack.
 */
TEST_ROOT(output_strict_decoders)
{
	static const struct {
		const char *kind, *file;
	} fmts[] = { { "pprof", "p.pb.gz" }, { "otlp", "p.otlp" } };
	/* strict_decode.py prints names with Python's ascii() */
	static const char bad[] = "thread='hopname-aaaaaa\\ufffd'";
	static const char ok[] = "thread='hopname-ok'";
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char *out = malloc(1 << 16);
	const char *path;
	size_t i;
	int rc;

	if (!have_upstream_protos()) {
		free(out);
		return;
	}
	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		if (!test_start_subtest(fmts[i].kind))
			continue;
		path = profiled("hopnames", fmts[i].file);
		if (!path)
			continue;
		rc = fix_strict_decode(fmts[i].kind, path, out, 1 << 16);
		test_note("%s:\n%.1500s", fmts[i].kind, out);
		ASSERT_EQ(rc, 0, "protoc decodes it and every sample has its CPU");
		ASSERT_TRUE(strstr(out, bad), "the cut name ends in U+FFFD");
		ASSERT_TRUE(strstr(out, ok), "the other thread");
		if (ncpu >= 2) {
			ASSERT_GE(distinct_cpus(out, bad), 2, "one thread, several CPUs");
			ASSERT_GE(distinct_cpus(out, ok), 2, "the other, several CPUs");
		}
	}
	if (test_start_subtest("folded")) {
		struct folded f;
		int j, k, dup = 0;

		path = profiled("hopnames", "p.folded");
		if (!path)
			goto out;
		ASSERT_EQ(fix_run(h_cmdf("/usr/bin/python3 -c 'import sys; "
					 "open(sys.argv[1], encoding=\"utf-8\")"
					 ".read()' %s", path),
				  NULL, 0),
			  0, "the file is UTF-8");
		ASSERT_OK(h_read_folded(path, &f), "read");
		for (j = 0; j < f.n; j++)
			for (k = j + 1; k < f.n; k++)
				dup += !strcmp(f.lines[j].stack, f.lines[k].stack);
		ASSERT_EQ(dup, 0, "one line a stack, whatever the CPUs");
		ASSERT_GT(h_count_with(&f, "hopname-aaaaaa\xef\xbf\xbd", "hop_main;hop_burn"),
			  0, "the cut name, U+FFFD-terminated");
		h_free_folded(&f);
	}
out:
	free(out);
}

/*
 * anonexec: parent and child run the same code from anonymous memory at
 * the same address.  A pc in no known file is one location per process (and
 * per label), not one location the first process named for all.
 */
TEST_ROOT(output_unknown_frames_per_process)
{
	char *wargv[] = { (char *)h_workload("anonexec"), "10", NULL };
	char path[512], childf[64], pids[2][16], *out = malloc(1 << 16), *p;
	const char *args[] = { "-pid", pids[0], "-pid", pids[1], "-duration", "3s",
			       "-samples-per-second", "499", "-output", path,
			       NULL };
	int child = 0, frames = 0, per_process = 0, rc;
	pid_t w;
	FILE *f;

	if (!have_upstream_protos()) {
		free(out);
		return;
	}
	w = h_spawn(wargv);
	usleep(300000);
	snprintf(childf, sizeof(childf), "/proc/%d/task/%d/children", w, w);
	f = fopen(childf, "r");
	if (f) {
		if (fscanf(f, "%d", &child) != 1)
			child = 0;
		fclose(f);
	}
	snprintf(pids[0], sizeof(pids[0]), "%d", w);
	snprintf(pids[1], sizeof(pids[1]), "%d", child);
	snprintf(path, sizeof(path), "%s/p.pb.gz", test_tmpdir());
	if (ASSERT_GT(child, 0, "the child runs") &&
	    ASSERT_EQ(h_profile(args, NULL, 60), 0, "profile")) {
		rc = fix_strict_decode("pprof", path, out, 1 << 16);
		ASSERT_EQ(rc, 0, "protoc decodes it");
		/* The loop is at 0x7e5e00000000..0f. */
		for (p = out; (p = strstr(p, "address=0x7e5e000000")); p++) {
			frames++;
			per_process += !strncmp(strchr(p, ' '), " locations=2\n", 13);
		}
		test_note("%d addresses in the anonymous code, %d with a location "
			  "in each process", frames, per_process);
		if (!frames || 2 * per_process < frames)
			printf("%.3000s\n", out);
		ASSERT_GT(frames, 0, "frames in the anonymous code");
		/* an address sampled in one process only (a loaded machine
		 * gives a process few samples in 3 s) has one location; keyed
		 * by pc alone, no address would ever have two */
		ASSERT_GE(2 * per_process, frames,
			  "a location in each process, for most addresses");
	}
	if (child > 0)
		kill(child, SIGKILL);
	kill(w, SIGKILL);
	h_wait(w, 5);
	free(out);
}
