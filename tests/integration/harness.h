/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers for the integration tests: start workloads, run the profiler
 * binary on them, read its folded output, and measure stacks.
 */
#ifndef EP_HARNESS_H
#define EP_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct folded_line {
	char *stack; /* "comm;root;...;leaf" */
	uint64_t count;
};

struct folded {
	struct folded_line *lines;
	int n;
	uint64_t total;
};

/* Start argv[0] with argv; returns the pid or -1.  stdout/stderr go to
 * /dev/null unless EP_TEST_VERBOSE is set. */
pid_t h_spawn(char *const argv[]);
/* Wait for pid, with a timeout in seconds; kills it on timeout.
 * Returns the exit status (waitpid form) or -1. */
int h_wait(pid_t pid, int timeout_s);
/* Run the profiler with args (NULL-terminated, without argv[0]) and wait;
 * stderr is captured into *err (malloc'd, may be NULL).  Returns the exit
 * code, or -1. */
int h_profile(const char *const *args, char **err, int timeout_s);
/* Start the profiler in the background; returns its pid. */
pid_t h_profile_bg(const char *const *args, const char *stderr_path);
/* The same, then wait until it says it is sampling ("started in": args
 * must have -v), at most timeout_s.  Returns its pid, or -1 when it died
 * or did not start in time (then it is killed). */
pid_t h_profile_started(const char *const *args, const char *stderr_path,
			int timeout_s);
/* VmRSS of pid in KiB, or -1. */
long h_rss_kb(pid_t pid);
/* A file's contents, NUL-terminated and malloc'd, or NULL. */
char *h_read_file(const char *path);

int h_read_folded(const char *path, struct folded *f);
void h_free_folded(struct folded *f);
/* Sum of counts of lines whose comm (first element) is comm. */
uint64_t h_count_comm(const struct folded *f, const char *comm);
/* Sum of counts of lines with comm that contain every needle (as whole
 * ";"-separated frames, ";"-joined sequence allowed: "a;b" must appear as
 * consecutive frames). */
uint64_t h_count_with(const struct folded *f, const char *comm,
		      const char *needle);
/* Print the top n lines of comm to stdout (for failure diagnostics). */
void h_dump_top(const struct folded *f, const char *comm, int n);
/* Start the workload wargv, profile it by pid for `duration` at hz (extra
 * profiler flags in extra, NULL-terminated, may be NULL), kill it, and
 * read the folded output into f.  Returns the profiler's exit code. */
int h_profile_workload(char *const wargv[], const char *duration,
		       const char *hz, const char *const *extra,
		       struct folded *f, char **err);
/* Count the frames named name in one folded stack (the comm, the first
 * element, is not a frame). */
int h_count_frame(const char *stack, const char *name);
/* Share (0..1) of comm's samples whose stack has needle; prints the top
 * stacks when below min. */
double h_share(const struct folded *f, const char *comm, const char *needle);
/* A value of "key=value" in a summary line, or -1. */
long long h_summary_value(const char *summary, const char *key);
/* Path of a workload binary. */
const char *h_workload(const char *name);
/* Milliseconds since an arbitrary start. */
double h_now_ms(void);

#endif
