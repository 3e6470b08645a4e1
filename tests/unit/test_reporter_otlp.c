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
#include "reporter.h"

TEST(reporter_otlp_encode)
{
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
		/* Field numbers from the reference tables, seen without a schema:
		 * Profile.period = 6, Sample.values = 4 (packed [5]), the
		 * resource's KeyValue.key = 1 with AnyValue.int_value = 3,
		 * InstrumentationScope.name = 1. */
		ASSERT_TRUE(strstr(out, "      6: 50000000\n") != NULL, "period = 6");
		ASSERT_TRUE(strstr(out, "        4: \"\\005\"\n") != NULL, "values = 4");
		ASSERT_TRUE(strstr(out, "      1: \"process.pid\"\n      2 {\n        3: 100\n") != NULL,
			    "process.pid int");
		ASSERT_TRUE(strstr(out, "1: \"ebpf-profiler\"") != NULL, "scope name");
		/* The dictionary (2) ends the request; its string table (5)
		 * holds the attribute keys. */
		ASSERT_TRUE(strstr(out, "\n2 {\n  1: \"\"\n") != NULL,
			    "dictionary = 2, mapping_table[0] empty first");
		ASSERT_TRUE(strstr(out, "  5: \"profile.frame.type\"\n") != NULL,
			    "string_table = 5");
		ASSERT_TRUE(strstr(out, "  5: \"process.executable.build_id.htlhash\"\n") != NULL,
			    "htlhash key");
		ASSERT_TRUE(strstr(out, "\"0123456789abcdeffedcba9876543210\"") != NULL,
			    "htlhash value, lowercase hex");
	}
	if (test_start_subtest("decode_schema")) {
		snprintf(cmd, sizeof(cmd),
			 "protoc -I%s/userspace/reporter/proto "
			 "--decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest "
			 "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto < %s",
			 test_srcdir(), path);
		rc = fix_run(cmd, out, 1 << 16);
		ASSERT_EQ(rc, 0, "protoc --decode");
		ASSERT_TRUE(strstr(out, "stack_table {") != NULL, "stack_table");
		ASSERT_TRUE(strstr(out, "timestamps_unix_nano: 1795342500500000000") != NULL,
			    "timestamps");
		ASSERT_TRUE(strstr(out, "container.id") != NULL, "container.id");
		ASSERT_EQ(fix_count(out, "resource_profiles {"), 2, "one per process");
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
