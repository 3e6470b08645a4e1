// SPDX-License-Identifier: Apache-2.0
/*
 * Off-CPU samples beside CPU ones in one batch: the CPU outputs stay what
 * they were, folded and SVG put the off-CPU time in name.offcpu.* in
 * microseconds, pprof adds the off_cpu/nanoseconds type and OTLP a second
 * Profile, both read by protoc with the upstream protos.
 */
#include <stdlib.h>
#include <string.h>

#include "rep_fixture.h"
#include "reporter.h"
#include "test.h"

/* The fixture and two off-CPU samples: 2500.4 us on its stack 1, 1 us on
 * its stack 0, and one of 0.4 us that rounds away in folded. */
static void offcpu_batch(struct rep_batch *b, struct rep_sample *s)
{
	const struct rep_batch *f = fix_batch();

	*b = *f;
	memcpy(s, f->samples, f->n_samples * sizeof(*s));
	s[f->n_samples] = (struct rep_sample){
		.kind = REP_SAMPLE_OFFCPU, .value = 2500400, .process = 0,
		.stack = 1, .tid = 100, .thread_name = "app", .cpu = 1,
		.count = 3 };
	s[f->n_samples + 1] = (struct rep_sample){
		.kind = REP_SAMPLE_OFFCPU, .value = 1000, .process = 1,
		.stack = 3, .tid = 200, .thread_name = "python3", .cpu = 0,
		.count = 1 };
	s[f->n_samples + 2] = (struct rep_sample){
		.kind = REP_SAMPLE_OFFCPU, .value = 400, .process = 1,
		.stack = 0, .tid = 200, .thread_name = "python3", .cpu = 0,
		.count = 1 };
	b->samples = s;
	b->n_samples = f->n_samples + 3;
}

static long long folded_total(const char *text)
{
	long long n = 0;
	const char *p = text, *sp;

	while (*p) {
		const char *nl = strchr(p, '\n');

		if (!nl)
			break;
		sp = memrchr(p, ' ', nl - p);
		if (sp)
			n += atoll(sp + 1);
		p = nl + 1;
	}
	return n;
}

TEST(reporter_offcpu_kinds)
{
	struct rep_sample s[16];
	struct rep_batch b;
	char path[512], *want = NULL, *data = NULL, *out = malloc(1 << 16);
	struct rep_sink *sink;
	size_t len, wlen;

	offcpu_batch(&b, s);
	if (test_start_subtest("folded")) {
		snprintf(path, sizeof(path), "%s/p.folded", test_tmpdir());
		ASSERT_OK(rep_file_sink_open(path, false, &sink), "open");
		ASSERT_OK(rep_sink_write(sink, &b), "write");
		rep_sink_close(sink, 0);
		ASSERT_OK(rep_encode_folded(fix_batch(), &want, &wlen), "encode");
		if (ASSERT_OK(fix_read_file(path, &data, &len), "p.folded"))
			ASSERT_STREQ(data, want, "the CPU file: CPU samples only");
		free(data);
		data = NULL;
		snprintf(path, sizeof(path), "%s/p.offcpu.folded", test_tmpdir());
		if (ASSERT_OK(fix_read_file(path, &data, &len), "p.offcpu.folded")) {
			test_note("p.offcpu.folded:\n%s", data);
			ASSERT_EQ(folded_total(data), 2501, "microseconds, rounded");
		}
		free(data);
		data = NULL;
		free(want);
	}
	if (test_start_subtest("svg")) {
		snprintf(path, sizeof(path), "%s/p.svg", test_tmpdir());
		ASSERT_OK(rep_file_sink_open(path, false, &sink), "open");
		ASSERT_OK(rep_sink_write(sink, &b), "write");
		rep_sink_close(sink, 0);
		snprintf(path, sizeof(path), "%s/p.offcpu.svg", test_tmpdir());
		if (ASSERT_OK(fix_read_file(path, &data, &len), "p.offcpu.svg"))
			ASSERT_TRUE(strstr(data, "Off-CPU") != NULL, "its title");
		free(data);
		data = NULL;
	}
	if (test_start_subtest("pprof")) {
		snprintf(path, sizeof(path), "%s/p.pb.gz", test_tmpdir());
		ASSERT_OK(rep_file_sink_open(path, false, &sink), "open");
		ASSERT_OK(rep_sink_write(sink, &b), "write");
		rep_sink_close(sink, 0);
		if (!fix_upstream_protos()) {
			test_skip("no upstream .proto files (make deps)");
		} else {
			snprintf(out, 1 << 16,
				 "gzip -dc %s | protoc --decode_raw | grep -c off_cpu",
				 path);
			fix_run(out, out, 1 << 16);
			ASSERT_GE(atoi(out), 1, "the off_cpu sample type");
			ASSERT_EQ(fix_strict_decode("pprof", path, out, 1 << 16), 0,
				  "protoc decodes it");
			test_note("%s", out);
		}
	}
	if (test_start_subtest("otlp")) {
		snprintf(path, sizeof(path), "%s/p.otlp", test_tmpdir());
		ASSERT_OK(rep_file_sink_open(path, false, &sink), "open");
		ASSERT_OK(rep_sink_write(sink, &b), "write");
		rep_sink_close(sink, 0);
		if (ASSERT_OK(fix_read_file(path, &data, &len), "p.otlp"))
			ASSERT_TRUE(memmem(data, len, "off_cpu", 7) != NULL,
				    "the off_cpu sample type");
		free(data);
		data = NULL;
		if (!fix_upstream_protos()) {
			test_skip("no upstream .proto files (make deps)");
		} else {
			ASSERT_EQ(fix_strict_decode("otlp", path, out, 1 << 16), 0,
				  "protoc decodes it");
			test_note("%s", out);
			/* the second Profile: app's off-CPU sample on CPU 1
			 * (no CPU sample there), its value the nanoseconds */
			ASSERT_TRUE(strstr(out, "tid=100 cpu=1 samples=1 count=2500400"),
				    "app's off-CPU nanoseconds");
		}
	}
	free(out);
}
