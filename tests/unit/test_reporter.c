// SPDX-License-Identifier: Apache-2.0
/*
 * Reporter encoders: folded (exact text), names, and pprof read back by
 * `go tool pprof`, a consumer we did not write.
 */
#include "test.h"

#include <stdlib.h>
#include <unistd.h>

#include "rep_fixture.h"
#include "reporter.h"

static const char fixture_folded[] =
	"app-writer;main;write;entry_SYSCALL_64_[k];ksys_write_[k] 4\n"
	"app;main;compute 8\n"
	"app;main;compute;app+0x1234 2\n"
	"python3;_PyEval_EvalFrameDefault;<module> (main.py:10);"
	"Worker.run (worker.py:42) 6\n";

TEST(reporter_folded_fixture)
{
	char *out = NULL;
	size_t len = 0;

	ASSERT_OK(rep_encode_folded(fix_batch(), &out, &len), "encode");
	ASSERT_STREQ(out, fixture_folded, "folded text");
	ASSERT_EQ(len, strlen(fixture_folded), "length");
	free(out);
}

/* Order and merging do not depend on the order of the samples. */
TEST(reporter_folded_stable_order)
{
	struct rep_batch b = *fix_batch();
	struct rep_sample rev[8];
	char *out = NULL;
	size_t len, i;

	for (i = 0; i < b.n_samples; i++)
		rev[i] = b.samples[b.n_samples - 1 - i];
	b.samples = rev;
	ASSERT_OK(rep_encode_folded(&b, &out, &len), "encode");
	ASSERT_STREQ(out, fixture_folded, "reversed samples");
	free(out);
}

TEST(reporter_folded_kernel_above_user_and_escaping)
{
	static const struct rep_mapping m[] = {
		{ .path = "/opt/lib/libweird;name.so" },
	};
	static const struct rep_location l[] = {
		{ FRAME_NATIVE, REP_NONE, 0x10, "outer", NULL, 0 },
		{ FRAME_NATIVE, 0, 0xbeef, NULL, NULL, 0 },
		{ FRAME_KERNEL, REP_NONE, 0xffffffff81000000, "do_syscall_64", NULL, 0 },
		{ FRAME_KERNEL, REP_NONE, 0xffffffff81000100, NULL, NULL, 0 },
		{ FRAME_NATIVE, REP_NONE, 0x20, "op;er\nator<a>", NULL, 0 },
		{ FRAME_ERROR, REP_NONE, 0, "no_unwind_info", NULL, 0 },
		{ FRAME_INTERP(INTERP_PYTHON), REP_NONE, 0, "f", "/a/b/mod.py", 0 },
	};
	/* Kernel frames given at the root end: they must still be drawn
	 * above (after) the user frames, in their own order. */
	static const uint32_t s0[] = { 1, 0, 3, 2 };
	static const uint32_t s1[] = { 5, 4, 6 };
	static const struct rep_stack st[] = { { 4, s0 }, { 3, s1 } };
	static const struct rep_process p[] = { { .pid = 1 } };
	static const struct rep_sample s[] = {
		{ .stack = 0, .tid = 1, .thread_name = "a;b", .count = 1 },
		{ .stack = 0, .tid = 2, .thread_name = "a;b", .count = 2, .cpu = 3 },
		{ .stack = 1, .tid = 1, .thread_name = NULL, .count = 1 },
		{ .stack = 1, .tid = 1, .thread_name = "zero", .count = 0 },
	};
	struct rep_batch b = {
		.n_mappings = 1, .mappings = m, .n_locations = 7, .locations = l,
		.n_stacks = 2, .stacks = st, .n_processes = 1, .processes = p,
		.n_samples = 4, .samples = s,
	};
	char *out = NULL, name[64];
	size_t len;

	ASSERT_OK(rep_encode_folded(&b, &out, &len), "encode");
	ASSERT_STREQ(out,
		     "[unknown];f (mod.py);op:er?ator<a>;[no_unwind_info] 1\n"
		     "a:b;outer;libweird:name.so+0xbeef;do_syscall_64_[k];"
		     "0xffffffff81000100_[k] 3\n",
		     "kernel after user, ';' and newline replaced, merged tids");
	free(out);

	rep_location_name(&b, &l[6], name, 5);
	ASSERT_STREQ(name, "f (m", "truncated to the buffer");
}

TEST(reporter_frame_kind_names)
{
	ASSERT_STREQ(rep_frame_kind_name(FRAME_NATIVE), "native", "native");
	ASSERT_STREQ(rep_frame_kind_name(FRAME_KERNEL), "kernel", "kernel");
	ASSERT_STREQ(rep_frame_kind_name(FRAME_INTERP(INTERP_PYTHON)), "cpython", "python");
	ASSERT_STREQ(rep_frame_kind_name(FRAME_ERROR), "abort-marker", "error");
}

/* The fixture's pprof read by protoc with google/pprof's own profile.proto
 * (`make deps` fetches it): labels and counts as in the OTLP request. */
TEST(reporter_pprof_upstream_proto)
{
	char path[512], *out = malloc(1 << 16);
	void *buf = NULL;
	size_t len;

	ASSERT_OK(rep_encode_pprof(fix_batch(), &buf, &len), "encode");
	snprintf(path, sizeof(path), "%s/cpu.pb.gz", test_tmpdir());
	ASSERT_OK(fix_write_file(path, buf, len), "write");
	fix_assert_strict_fixture("pprof", path, out, 1 << 16,
				  "protoc --decode, upstream profile.proto");
	free(buf);
	free(out);
}

/* ---- UTF-8 ----------------------------------------------------------- */

/* rep_utf8_fix() against Python's decode(errors="replace"), which follows
 * the same maximal-subpart rule: hand-picked edges (cut characters,
 * overlongs, surrogates, past U+10FFFF, stray continuation bytes) and
 * random bytes leaning to the high half. */
TEST(reporter_utf8_fix_python_oracle)
{
	static const char *const edge[] = {
		"", "plain", "aaaaaaaaaaaaaa\xc3", "caf\xc3\xa9", "\xe2\x82",
		"\xe2\x82\xac\xe2", "\xf0\x9f\x98", "\xf0\x9f\x98\x80", "\xc0\xaf",
		"\xc1\xbf", "\xe0\x80\xaf", "\xe0\x9f\xbf", "\xed\xa0\x80",
		"\xed\x9f\xbf", "\xf4\x90\x80\x80", "\xf4\x8f\xbf\xbf", "\xf5\x80",
		"\xff\xfe", "\x80\x80x", "\xc3(", "\xe1\x80(", "\xf1\x80\x80(",
	};
	enum { N_RANDOM = 3000, MAX_LEN = 12 };
	char in[MAX_LEN + 1], *want = malloc(1 << 20), *got = malloc(1 << 20);
	char path[512], cmd[1024];
	size_t i, j, n, off = 0;
	unsigned seed = 14;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/utf8.hex", test_tmpdir());
	f = fopen(path, "w");
	if (!ASSERT_NOT_NULL(f, "open") || !want || !got)
		goto out;
	for (i = 0; i < sizeof(edge) / sizeof(edge[0]) + N_RANDOM; i++) {
		const char *s = in;
		char fixed[3 * MAX_LEN + 1];

		if (i < sizeof(edge) / sizeof(edge[0])) {
			s = edge[i];
		} else {
			n = rand_r(&seed) % (MAX_LEN + 1);
			for (j = 0; j < n; j++) {
				unsigned r = rand_r(&seed);

				in[j] = (char)(r & 1 ? 0x80 | (r >> 1) % 0x80 :
						       1 + (r >> 1) % 0x7f);
			}
			in[n] = 0;
		}
		for (j = 0; s[j]; j++)
			fprintf(f, "%02x", (unsigned char)s[j]);
		fputc('\n', f);
		n = rep_utf8_fix(fixed, sizeof(fixed), s);
		ASSERT_EQ(n, strlen(fixed), "the length it needs is what it wrote");
		for (j = 0; j < n; j++)
			off += sprintf(got + off, "%02x", (unsigned char)fixed[j]);
		got[off++] = '\n';
	}
	got[off] = 0;
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import sys\n"
		 "for l in open(sys.argv[1]):\n"
		 " print(bytes.fromhex(l.strip()).decode(\"utf-8\", \"replace\")"
		 ".encode().hex())' %s",
		 path);
	rc = fix_run(cmd, want, 1 << 20);
	ASSERT_EQ(rc, 0, "python3");
	ASSERT_STREQ(got, want, "the same bytes as Python's replace");
out:
	free(want);
	free(got);
}

TEST(reporter_utf8_fix_never_cuts_a_character)
{
	char buf[16];

	ASSERT_EQ(rep_utf8_fix(buf, 5, "ab\xe2\x82\xac"), 5, "needs 5");
	ASSERT_STREQ(buf, "ab", "the euro sign does not fit in 4 bytes");
	ASSERT_EQ(rep_utf8_fix(buf, 6, "ab\xe2\x82\xac"), 5, "needs 5");
	ASSERT_STREQ(buf, "ab\xe2\x82\xac", "fits with its NUL");
	/* Nothing after a character that did not fit, even a short one. */
	ASSERT_EQ(rep_utf8_fix(buf, 4, "a\xff" "b"), 5, "needs 5");
	ASSERT_STREQ(buf, "a", "stays a prefix");
	ASSERT_EQ(rep_utf8_fix(NULL, 0, "\xff\xff"), 6, "measure only");
	/* The kernel's 15-byte comm cut "aaaaaaaaaaaaaa\xc3\xa9". */
	rep_utf8_fix(buf, sizeof(buf), "aaaaaaaaaaaaaa\xc3");
	ASSERT_STREQ(buf, "aaaaaaaaaaaaaa", "too long for 16 bytes: cut before");
}

/* A display name cut by the caller's buffer ends on a whole character. */
TEST(reporter_location_name_cut_on_a_character)
{
	static const struct rep_location l = { FRAME_NATIVE, REP_NONE, 0,
					       "\xc3\xa9\xc3\xa9\xc3\xa9", NULL, 0 };
	struct rep_batch b = { 0 };
	char name[6];

	rep_location_name(&b, &l, name, sizeof(name));
	ASSERT_STREQ(name, "\xc3\xa9\xc3\xa9", "two whole characters of 2.5");
}

/* -folded-lines: a native frame with a line (from DWARF) shows it, one
 * without keeps its name; off, native frames are functions only (an
 * interpreter frame has its line either way). */
TEST(reporter_location_name_native_lines)
{
	static const struct rep_location l[] = {
		{ FRAME_NATIVE, REP_NONE, 0x10, "inlined_a", "/src/w/inline.c", 39 },
		{ FRAME_NATIVE, REP_NONE, 0x10, "leaf", NULL, 0 },
		{ FRAME_INTERP(INTERP_PYTHON), REP_NONE, 0x10, "run", "/app/x.py", 7 },
	};
	static const char *const want[2][3] = {
		{ "inlined_a", "leaf", "run (x.py:7)" },
		{ "inlined_a (inline.c:39)", "leaf", "run (x.py:7)" },
	};
	struct rep_batch b = { 0 };
	char name[128];
	int on, i;

	for (on = 0; on < 2; on++) {
		b.native_lines = on;
		for (i = 0; i < 3; i++) {
			rep_location_name(&b, &l[i], name, sizeof(name));
			ASSERT_STREQ(name, want[on][i], "name");
		}
	}
}

/* One stack of one thread on two CPUs is two samples (each with its
 * cpu.logical_number) but one folded line: folded shows no CPU. */
TEST(reporter_folded_merges_cpus)
{
	static const struct rep_location l[] = {
		{ FRAME_NATIVE, REP_NONE, 0x10, "hop_burn", NULL, 0 },
	};
	static const uint32_t s0[] = { 0 };
	static const struct rep_stack st[] = { { 1, s0 } };
	static const struct rep_process p[] = { { .pid = 7 } };
	static const struct rep_sample s[] = {
		{ .stack = 0, .tid = 7, .thread_name = "hop", .cpu = 0, .count = 3 },
		{ .stack = 0, .tid = 7, .thread_name = "hop", .cpu = 1, .count = 4 },
	};
	struct rep_batch b = {
		.n_locations = 1, .locations = l, .n_stacks = 1, .stacks = st,
		.n_processes = 1, .processes = p, .n_samples = 2, .samples = s,
	};
	char *out = NULL;
	size_t len;

	ASSERT_OK(rep_encode_folded(&b, &out, &len), "encode");
	ASSERT_STREQ(out, "hop;hop_burn 7\n", "one line, 3 + 4");
	free(out);
}

/* ---- pprof through go tool pprof ------------------------------------ */

#define GO "/usr/lib/go-1.19/bin/go"

struct top_row {
	long flat, cum;
	char name[128];
};

/* Parse `go tool pprof -top` rows: "flat flat% sum% cum cum% name". */
static int parse_top(char *text, struct top_row *rows, int max)
{
	char *line, *save = NULL;
	int n = 0;

	for (line = strtok_r(text, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		struct top_row r;

		if (sscanf(line, " %ld %*s %*s %ld %*s %127[^\n]", &r.flat, &r.cum,
			   r.name) == 3)
			rows[n++] = r;
	}
	return n;
}

static const struct top_row *find_row(const struct top_row *rows, int n,
				      const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

/* Run `go tool pprof ARGS -symbolize=none PATH` into out; its exit status. */
static int go_pprof(const char *args, const char *path, char *out, size_t cap)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "TZ=UTC HOME=%1$s GOCACHE=%1$s/gocache %2$s tool pprof %3$s "
		 "-symbolize=none %4$s 2>&1",
		 test_tmpdir(), GO, args, path);
	return fix_run(cmd, out, cap);
}

TEST(reporter_pprof_go_tool)
{
	static const struct {
		const char *name;
		long flat, cum;
	} want[] = {
		{ "compute", 8, 10 },  { "main", 0, 14 },
		{ "ksys_write", 4, 4 }, { "entry_SYSCALL_64", 0, 4 },
		{ "write", 0, 4 },	{ "Worker.run", 6, 6 },
		{ "<module>", 0, 6 },	{ "_PyEval_EvalFrameDefault", 0, 6 },
	};
	static const struct test_needle cpu[] = {
		{ "Type: cpu", "Type: cpu" },
		{ "Total samples = 1000ms", "20 x 50ms" },
		{ "Time: Nov 22, 2026 at 10:15am (UTC)", "start time" },
		{ "Duration: 5s", "duration" },
	};
	static const struct test_needle labels[] = {
		{ "process.pid:  200", "pid label" },
		{ "thread.id:  102", "tid label" },
		{ "cpu.logical_number:  0", "cpu 0 kept" },
	};
	char path[512], *out = malloc(1 << 16);
	struct top_row rows[64];
	void *buf = NULL;
	size_t len, i;
	int n, rc;

	if (access(GO, X_OK)) {
		test_skip("%s not installed (Debian golang-1.19-go)", GO);
		free(out);
		return;
	}
	ASSERT_OK(rep_encode_pprof(fix_batch(), &buf, &len), "encode");
	ASSERT_EQ(((unsigned char *)buf)[0], 0x1f, "gzip magic");
	snprintf(path, sizeof(path), "%s/cpu.pb.gz", test_tmpdir());
	ASSERT_OK(fix_write_file(path, buf, len), "write");
	test_note("pprof: %zu bytes for %u samples", len, fix_batch()->n_samples);

	/* Counts: the samples index. */
	rc = go_pprof("-top -sample_index=samples", path, out, 1 << 16);
	ASSERT_EQ(rc, 0, "go tool pprof exit status");
	ASSERT_TRUE(strstr(out, "Type: samples") != NULL, out);
	n = parse_top(out, rows, 64);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct top_row *r = find_row(rows, n, want[i].name);

		if (!ASSERT_NOT_NULL(r, want[i].name))
			continue;
		ASSERT_EQ(r->flat, want[i].flat, want[i].name);
		ASSERT_EQ(r->cum, want[i].cum, want[i].name);
	}

	/* Time: the default (last) sample type, 50 ms a sample. */
	rc = go_pprof("-top", path, out, 1 << 16);
	ASSERT_EQ(rc, 0, "go tool pprof exit status (cpu)");
	ASSERT_CONTAINS(out, cpu);

	/* Labels and the unsymbolized frame. */
	rc = go_pprof("-traces", path, out, 1 << 16);
	ASSERT_EQ(rc, 0, "go tool pprof -traces");
	ASSERT_TRUE(strstr(out, "thread.name:") && strstr(out, "app-writer"),
		    "thread.name label");
	ASSERT_CONTAINS(out, labels);
	ASSERT_TRUE(strstr(out, "Build ID: 4f1a2b3c4d5e6f708192a3b4c5d6e7f801234567") ||
			    strstr(out, "4f1a2b3c4d5e6f708192a3b4c5d6e7f801234567"),
		    "build id");
	if (test_start_subtest("raw")) {
		rc = go_pprof("-raw", path, out, 1 << 16);
		ASSERT_EQ(rc, 0, "go tool pprof -raw");
		/* The unnamed frame keeps its runtime address: bias + 0x1234. */
		ASSERT_TRUE(strstr(out, "0x555555555234") != NULL, "runtime address");
		ASSERT_TRUE(strstr(out, "/usr/bin/app") != NULL, "mapping file");
	}
	free(buf);
	free(out);
}
