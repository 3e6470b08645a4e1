/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A synthetic batch with known stacks and counts for the reporter tests,
 * and helpers to run the consumers we did not write.
 *
 *   pid 100 /usr/bin/app:  app;main;compute                 8 (tids 100, 101)
 *                          app;main;compute;app+0x1234      2
 *                          app-writer;main;write;entry_SYSCALL_64_[k];ksys_write_[k] 4
 *   pid 200 python3.11:    python3;_PyEval_EvalFrameDefault;<module> (main.py:10);
 *                          Worker.run (worker.py:42)        6 (with timestamps)
 */
#ifndef EP_REP_FIXTURE_H
#define EP_REP_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "reporter.h"

#define FIX_START_NS 1795342500000000000ULL /* 2026-11-22T10:15:00Z */
#define FIX_PERIOD_NS 50000000ULL	    /* 20 Hz */

const struct rep_batch *fix_batch(void);

/* Run a shell command, capture stdout (up to cap-1 bytes, NUL-terminated).
 * Returns the exit status, or -1. */
int fix_run(const char *cmd, char *out, size_t cap);
/* Write / read a whole file; 0 or -errno. */
int fix_write_file(const char *path, const void *p, size_t n);
int fix_read_file(const char *path, char **out, size_t *n);
/* Count occurrences of needle in hay. */
int fix_count(const char *hay, const char *needle);
/* A loopback TCP port nobody listens on (bound, read, closed). */
int fix_free_port(void);

/* What otlp_check.py prints for the fixture's request. */
extern const char otlp_fixture_dump[];
/* Run tests/unit/otlp_check.py on a request body; its exit status. */
int fix_otlp_check(const char *path, char *out, size_t cap);

/* What strict_decode.py prints for the fixture, OTLP and pprof alike. */
extern const char strict_fixture_dump[];
/* Where `make deps` puts the upstream .proto files (ci/deps.sh); the
 * variable EP_UPSTREAM_PROTOS overrides it. */
#define FIX_UPSTREAM_PROTOS "/var/cache/ebpf-profiler-test/protos"
/* That directory when it holds google/pprof's profile.proto and
 * opentelemetry-proto's profiles protos, else NULL (the caller skips). */
const char *fix_upstream_protos(void);
/* Run tests/unit/strict_decode.py KIND ("pprof" or "otlp") on a file:
 * protoc --decode with the upstream protos, every sample's CPU.  Its exit
 * status, or -1 without the protos. */
int fix_strict_decode(const char *kind, const char *path, char *out, size_t cap);
/* Assert (what) that fix_strict_decode of path, written from the
 * fixture's batch, prints strict_fixture_dump; a SKIP without the
 * protos.  out: cap bytes of room. */
void fix_assert_strict_fixture(const char *kind, const char *path, char *out,
			       size_t cap, const char *what);

#endif
