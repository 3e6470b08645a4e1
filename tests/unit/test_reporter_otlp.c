// SPDX-License-Identifier: Apache-2.0
/*
 * OTLP encoding, checked by consumers we did not write: protoc --decode_raw
 * (no schema), and otlp_check.py, a wire decoder with the reference field
 * numbers that also checks the dictionary rules and what receivers need.
 */
#include "test.h"

#include <stdlib.h>
#include <unistd.h>

#include "rep_fixture.h"
#include "rep_internal.h"
#include "reporter.h"

TEST(reporter_otlp_encode)
{
	/* Field numbers from the reference tables, seen without a schema:
	 * Profile.period = 6, Sample.values = 4 (packed [5]), the
	 * resource's KeyValue.key = 1 with AnyValue.int_value = 3,
	 * InstrumentationScope.name = 1. */
	static const struct test_needle raw[] = {
		{ "      6: 50000000\n", "period = 6" },
		{ "        4: \"\\005\"\n", "values = 4" },
		{ "      1: \"process.pid\"\n      2 {\n        3: 100\n",
		  "process.pid int" },
		{ "1: \"ebpf-profiler\"", "scope name" },
		/* The dictionary (2) ends the request; its string table (5)
		 * holds the attribute keys. */
		{ "\n2 {\n  1: \"\"\n", "dictionary = 2, mapping_table[0] empty first" },
		{ "  5: \"profile.frame.type\"\n", "string_table = 5" },
		{ "  5: \"process.executable.build_id.htlhash\"\n", "htlhash key" },
		{ "\"0123456789abcdeffedcba9876543210\"", "htlhash value, lowercase hex" },
	};
	static const struct test_needle schema[] = {
		{ "stack_table {", "stack_table" },
		{ "timestamps_unix_nano: 1795342500500000000", "timestamps" },
		{ "container.id", "container.id" },
	};
	char path[512], cmd[1024], *out = malloc(1 << 16);
	void *buf = NULL;
	size_t len;
	int rc;

	ASSERT_OK(rep_encode_otlp(fix_batch(), &buf, &len), "encode");
	snprintf(path, sizeof(path), "%s/req.bin", test_tmpdir());
	ASSERT_OK(fix_write_file(path, buf, len), "write");
	test_note("otlp: %zu bytes for the fixture's 5 samples", len);

	if (test_start_subtest("otlp_check")) {
		rc = fix_otlp_check(path, out, 1 << 16);
		ASSERT_EQ(rc, 0, out);
		ASSERT_STREQ(out, otlp_fixture_dump, "decoded request");
	}
	if (test_start_subtest("decode_raw")) {
		snprintf(cmd, sizeof(cmd), "protoc --decode_raw < %s", path);
		rc = fix_run(cmd, out, 1 << 16);
		ASSERT_EQ(rc, 0, "protoc --decode_raw");
		ASSERT_CONTAINS(out, raw);
	}
	if (test_start_subtest("decode_schema")) {
		snprintf(cmd, sizeof(cmd),
			 "protoc -I%s/userspace/reporter/proto "
			 "--decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest "
			 "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto < %s",
			 test_srcdir(), path);
		rc = fix_run(cmd, out, 1 << 16);
		ASSERT_EQ(rc, 0, "protoc --decode");
		ASSERT_CONTAINS(out, schema);
		ASSERT_EQ(fix_count(out, "resource_profiles {"), 2, "one per process");
	}
	/* The same with opentelemetry-proto's own files (v1.11, the v1.10
	 * wire layout), which `make deps` fetches. */
	if (test_start_subtest("decode_upstream")) {
		fix_assert_strict_fixture("otlp", path, out, 1 << 16,
					  "protoc --decode, upstream protos");
	}
	free(buf);
	free(out);
}

/* Samples with the same identity (stack, attributes) in one process are
 * merged, their timestamps appended. */
TEST(reporter_otlp_merges_identical_samples)
{
	struct rep_batch b = *fix_batch();
	struct rep_sample s[2];
	char path[512], *out = malloc(1 << 16);
	void *buf = NULL;
	size_t len;

	s[0] = b.samples[4];
	s[1] = b.samples[4];
	s[1].count = 2;
	s[1].n_timestamps = 2;
	b.samples = s;
	b.n_samples = 2;
	ASSERT_OK(rep_encode_otlp(&b, &buf, &len), "encode");
	snprintf(path, sizeof(path), "%s/req.bin", test_tmpdir());
	ASSERT_OK(fix_write_file(path, buf, len), "write");
	ASSERT_EQ(fix_otlp_check(path, out, 1 << 16), 0, out);
	ASSERT_STREQ(out,
		     "resource 200 python3.11 container=0123456789ab shape=timestamps\n"
		     "  python3 tid=200 cpu=0: _PyEval_EvalFrameDefault;<module> (main.py:10);"
		     "Worker.run (worker.py:42) 8\n",
		     "one sample, 6 + 2 timestamps");
	free(buf);
	free(out);
}

/* ---- sizes for a typical batch --------------------------------------------- */

/*
 * A machine-wide 5 s interval at 20 Hz on 8 CPUs (800 events): 20 processes
 * of 3 threads, each mapping its executable and the shared libc/libm/ld.so
 * at its own addresses, 60 hot stacks per process of 12-40 frames (a third
 * entering the kernel), every event timestamped.
 */
struct typical {
	struct rep_batch b;
	struct rep_process procs[20];
	struct rep_mapping maps[80];
	struct rep_location *locs;
	struct rep_stack stacks[20 * 60];
	uint32_t *stack_locs;
	struct rep_sample *samples;
	uint64_t *ts;
	char names[600][24];
	char paths[20][32], exes[20][16];
};

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static struct typical *typical_batch(void)
{
	static const char *const libs[] = { "/usr/lib/x86_64-linux-gnu/libc.so.6",
					    "/usr/lib/x86_64-linux-gnu/libm.so.6",
					    "/usr/lib64/ld-linux-x86-64.so.2" };
	struct typical *t = calloc(1, sizeof(*t));
	uint32_t seed = 42, p, i, j, nl = 0, ns = 0, nsl = 0, nsmp = 0, nts = 0;

	t->locs = calloc(20 * 200 + 64, sizeof(*t->locs));
	t->stack_locs = calloc(20 * 60 * 40, sizeof(*t->stack_locs));
	t->samples = calloc(800, sizeof(*t->samples));
	t->ts = calloc(800, sizeof(*t->ts));
	for (i = 0; i < 600; i++)
		snprintf(t->names[i], sizeof(t->names[i]), "%s_%u",
			 i < 100 ? "__libc_fn" : i < 200 ? "ksys_fn" : "app_function", i);
	/* Kernel locations, shared by everyone: 64 of them. */
	for (i = 0; i < 64; i++)
		t->locs[nl++] = (struct rep_location){ FRAME_KERNEL, REP_NONE,
						       0xffffffff81000000ULL + i * 0x400,
						       t->names[100 + i], NULL, 0 };
	for (p = 0; p < 20; p++) {
		uint32_t base = nl;

		snprintf(t->paths[p], sizeof(t->paths[p]), "/usr/bin/service%u", p);
		snprintf(t->exes[p], sizeof(t->exes[p]), "service%u", p);
		t->procs[p] = (struct rep_process){ .pid = 1000 + p, .exe_path = t->paths[p],
						    .exe_name = t->exes[p] };
		t->maps[p * 4] = (struct rep_mapping){ .start = 0x555500000000ULL + p * 0x1000000,
						       .limit = 0x555500800000ULL + p * 0x1000000,
						       .bias = 0x555500000000ULL + p * 0x1000000,
						       .path = t->paths[p],
						       .gnu_build_id = "0011223344556677889900aabbccddeeff001122" };
		t->maps[p * 4].file_id[0] = (uint8_t)p;
		for (j = 0; j < 3; j++) {
			struct rep_mapping *m = &t->maps[p * 4 + 1 + j];

			*m = (struct rep_mapping){ .start = 0x7f0000000000ULL + p * 0x10000000 + j * 0x1000000,
						   .bias = 0x7f0000000000ULL + p * 0x10000000 + j * 0x1000000,
						   .path = libs[j] };
			m->limit = m->start + 0x200000;
			m->file_id[0] = 0xa0 + j;
		}
		/* 150 locations: 50 in libs (symbolized), 100 in the executable
		 * (a third without a symbol). */
		for (i = 0; i < 150; i++) {
			struct rep_location *l = &t->locs[nl++];

			if (i < 50) {
				*l = (struct rep_location){ FRAME_NATIVE, p * 4 + 1 + i % 3,
							    0x28000 + i * 0x130, t->names[i], NULL, 0 };
			} else {
				*l = (struct rep_location){ FRAME_NATIVE, p * 4,
							    0x1000 + i * 0x50,
							    i % 3 ? t->names[200 + (p * 17 + i) % 400] : NULL,
							    NULL, 0 };
			}
		}
		for (i = 0; i < 60; i++) {
			struct rep_stack *st = &t->stacks[ns++];
			uint32_t depth = 12 + lcg(&seed) % 29, k = 0;
			uint32_t *sl = &t->stack_locs[nsl];

			if (i % 3 == 0) /* leaf first: kernel frames */
				for (j = 0; j < 6; j++)
					sl[k++] = lcg(&seed) % 64;
			while (k < depth)
				sl[k++] = base + lcg(&seed) % 150;
			st->n = k;
			st->locations = sl;
			nsl += k;
		}
	}
	/* 800 events over 300 distinct (process, stack, thread, cpu). */
	for (i = 0; i < 300; i++) {
		struct rep_sample *s = &t->samples[nsmp++];

		p = lcg(&seed) % 20;
		*s = (struct rep_sample){ .process = p, .stack = p * 60 + lcg(&seed) % 60,
					  .tid = 1000 + p * 10 + lcg(&seed) % 3,
					  .thread_name = t->exes[p], .cpu = (int32_t)(lcg(&seed) % 8),
					  .count = i < 200 ? 3 : 2, .timestamps = &t->ts[nts] };
		s->n_timestamps = (uint32_t)s->count;
		for (j = 0; j < s->count; j++)
			t->ts[nts++] = FIX_START_NS + lcg(&seed) % 5000000000u;
	}
	t->b = (struct rep_batch){ .start_ns = FIX_START_NS,
				   .end_ns = FIX_START_NS + 5000000000ULL,
				   .period_ns = FIX_PERIOD_NS, .host_name = "host",
				   .os_type = "linux", .kernel_release = "6.1.0-amd64",
				   .n_mappings = 80, .mappings = t->maps, .n_locations = nl,
				   .locations = t->locs, .n_stacks = ns, .stacks = t->stacks,
				   .n_processes = 20, .processes = t->procs,
				   .n_samples = nsmp, .samples = t->samples };
	return t;
}

static void typical_free(struct typical *t)
{
	free(t->locs);
	free(t->stack_locs);
	free(t->samples);
	free(t->ts);
	free(t);
}

TEST(reporter_sizes_typical_batch)
{
	struct typical *t = typical_batch();
	struct rep_sample *values_only;
	void *otlp = NULL, *gz = NULL, *pprof = NULL, *otlp2 = NULL;
	size_t otlp_len, gz_len, pprof_len, otlp2_len, i;
	char path[512], *out = malloc(1 << 20);
	uint64_t events = 800;

	ASSERT_OK(rep_encode_otlp(&t->b, &otlp, &otlp_len), "otlp");
	ASSERT_OK(rep_gzip(otlp, otlp_len, 0, &gz, &gz_len), "gzip");
	ASSERT_OK(rep_encode_pprof(&t->b, &pprof, &pprof_len), "pprof");
	/* The same batch without timestamps: values-only samples. */
	values_only = calloc(t->b.n_samples, sizeof(*values_only));
	for (i = 0; i < t->b.n_samples; i++) {
		values_only[i] = t->b.samples[i];
		values_only[i].n_timestamps = 0;
	}
	t->b.samples = values_only;
	ASSERT_OK(rep_encode_otlp(&t->b, &otlp2, &otlp2_len), "otlp values-only");
	test_note("typical batch: %u samples (%llu events), %u stacks, 20 processes",
		  t->b.n_samples, (unsigned long long)events, t->b.n_stacks);
	test_note("OTLP timestamps: %zu bytes raw (%.0f B/sample, %.0f B/event), "
		  "%zu gzip'd (%.0f B/event)",
		  otlp_len, (double)otlp_len / t->b.n_samples, (double)otlp_len / events,
		  gz_len, (double)gz_len / events);
	test_note("OTLP values-only: %zu bytes raw (%.0f B/sample)", otlp2_len,
		  (double)otlp2_len / t->b.n_samples);
	test_note("pprof (gzip'd): %zu bytes (%.0f B/sample, %.0f B/event)", pprof_len,
		  (double)pprof_len / t->b.n_samples, (double)pprof_len / events);
	snprintf(path, sizeof(path), "%s/typical.bin", test_tmpdir());
	ASSERT_OK(fix_write_file(path, otlp, otlp_len), "write");
	ASSERT_EQ(fix_otlp_check(path, out, 1 << 20), 0, "typical request passes the checker");
	ASSERT_EQ(fix_count(out, "resource "), 20, "20 resources");
	ASSERT_LT(gz_len, 64 * 1024, "well under receivers' 4 MiB");
	free(values_only);
	free(otlp);
	free(otlp2);
	free(gz);
	free(pprof);
	free(out);
	typical_free(t);
}
