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
/* The same with stderr into stderr_path (stdout to /dev/null). */
pid_t h_spawn_err(char *const argv[], const char *stderr_path);
/* The same as user uid and group gid (h_drop_to in the child). */
pid_t h_spawn_as(char *const argv[], const char *stderr_path, uid_t uid,
		 gid_t gid);
/* In a child, before exec: stdin and stdout to /dev/null, stderr into
 * stderr_path (NULL: /dev/null); all kept when EP_TEST_VERBOSE is set. */
void h_quiet_child(const char *stderr_path);
/* In a child: become uid and gid, with no supplementary groups; exit
 * 126 when it cannot. */
void h_drop_to(uid_t uid, gid_t gid);
/* Wait for pid, with a timeout in seconds; kills it on timeout.
 * Returns the exit status (waitpid form) or -1. */
int h_wait(pid_t pid, int timeout_s);
/* Run the profiler with args (NULL-terminated, without argv[0]) and wait;
 * stderr is captured into *err (malloc'd, may be NULL).  Returns the exit
 * code, or -1. */
int h_profile(const char *const *args, char **err, int timeout_s);
/* Profile running process pid for duration at hz into out (-output: the
 * format by its name), with extra flags (NULL-terminated, at most 16;
 * may be NULL), waiting at most timeout_s; stderr as h_profile.  Returns
 * the exit code, or -1. */
int h_profile_pid(pid_t pid, const char *duration, const char *hz,
		  const char *const *extra, const char *out, char **err,
		  int timeout_s);
/* pprof, then OTLP, of running process w: profiled 3 s at 499 Hz with
 * extra arguments (NULL-terminated, at most 16) into a file each, decoded
 * strictly (fix_strict_decode: protoc with the upstream protos), then
 * check(kind, the decoder's output, ctx).  A run or decode that fails is a
 * failed assertion, and that kind is not checked. */
void h_each_decoded(pid_t w, const char *const *extra,
		    void (*check)(const char *kind, const char *decoded,
				  const void *ctx),
		    const void *ctx);
/* The same over workload NAME (h_workload) started with one argument,
 * "20" (seconds), and killed after; a visible SKIP when it is not built or
 * the upstream .proto files are missing. */
void h_workload_decoded(const char *name, const char *const *extra,
			void (*check)(const char *kind, const char *decoded,
				      const void *ctx),
			const void *ctx);
/* h_workload_decoded checking that a frame with inlined functions is one
 * Location with several Lines, innermost first: each of chains
 * (NULL-terminated, "inner;outer") is one Location's lines, and absent
 * (NULL: no check), a function with one line, is named in no chain nor
 * anywhere else of the decoder's output. */
void h_workload_inlined(const char *name, const char *const *extra,
			const char *const *chains, const char *absent);
/* Start the profiler in the background; returns its pid. */
pid_t h_profile_bg(const char *const *args, const char *stderr_path);
/* The same, then wait until it says it is sampling ("started in": args
 * must have -v), at most timeout_s.  Returns its pid, or -1 when it died
 * or did not start in time (then it is killed). */
pid_t h_profile_started(const char *const *args, const char *stderr_path,
			int timeout_s);
/* The same, and *started_ms (h_now_ms()) when it said so, polled every
 * 2 ms: sampling began at most that long before (-duration counts from
 * there). */
pid_t h_profile_started_at(const char *const *args, const char *stderr_path,
			   int timeout_s, double *started_ms);
/* The pid of parent's child whose comm is comm (gcc's cc1), waiting up to
 * timeout_ms for it to appear; -1 if none did. */
pid_t h_find_child(pid_t parent, const char *comm, int timeout_ms);
/* VmRSS of pid in KiB, or -1. */
long h_rss_kb(pid_t pid);
/* CPU seconds pid has used (user + system, /proc/PID/stat), or -1. */
double h_cpu_s(pid_t pid);

int h_read_folded(const char *path, struct folded *f);
void h_free_folded(struct folded *f);
/* Read the files a continuous run rotated out of -output path
 * ("dir/p.folded" gives "dir/p-<time>.folded"; path itself too when it
 * exists) into one f.  Returns how many files, or a negative errno. */
int h_read_folded_rotated(const char *path, struct folded *f);
/* Whether a folded stack's comm (first element) is comm. */
bool h_comm_is(const char *stack, const char *comm);
/* The comm of a process running the program at path: its base name, cut
 * as the kernel cuts it (15 bytes). */
void h_comm_of(const char *path, char *comm, size_t n);
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
/* A profile of one workload run and what the profiler wrote on stderr
 * (its exit summary); h_run_free frees both. */
struct h_run {
	struct folded f;
	char *err;
};

/* h_profile_workload into run; true when there is a profile to look at.
 * An exit code other than 0 is a failed assertion, with the profiler's
 * stderr printed. */
bool h_run_workload(char *const wargv[], const char *duration,
		    const char *hz, const char *const *extra,
		    struct h_run *run);
/* Whether the profiler's exit code rc is 0; if not, a failed assertion
 * and its stderr err printed. */
bool h_profiled(int rc, const char *err);
void h_run_free(struct h_run *run);

/* Each line of folded f: i its index, s its stack, c its count. */
#define h_for_each_line(f, i, s, c)                                            \
	for ((i) = 0; (i) < (f)->n && ((s) = (f)->lines[(i)].stack,            \
				       (c) = (f)->lines[(i)].count, 1);        \
	     (i)++)

/* Whether folded stack s is of comm and contains needle (as a string, not
 * whole frames as in h_count_with); NULL for either: any. */
bool h_stack_has(const char *s, const char *comm, const char *needle);
/* Each line of folded f for which h_stack_has(s, comm, needle), as
 * h_for_each_line ("{} else": an else after the loop is still the
 * caller's). */
#define h_for_each_line_of(f, comm, needle, i, s, c)                           \
	h_for_each_line(f, i, s, c)                                            \
		if (!h_stack_has(s, comm, needle)) {                           \
		} else

/* n as a percentage of total (0 when total is 0), for notes and for
 * the assertions that compare a percentage. */
double h_pct(uint64_t n, uint64_t total);
/* Add c to n[k] for each of the nk chains that stack s contains;
 * returns how many it contains. */
int h_tally(const char *s, uint64_t c, const char *const *chain, int nk,
	     uint64_t *n);
/* The 60/30/10 split of three chains' samples n out of total: each
 * share within 3 points of want (per mille, truncated).  Returns whether
 * all three were. */
bool h_assert_split(const uint64_t n[3], uint64_t total,
		    const double want[3]);
/* Count the frames named name in one folded stack (the comm, the first
 * element, is not a frame). */
int h_count_frame(const char *stack, const char *name);
/* Share (0..1) of comm's samples whose stack has needle; prints the top
 * stacks when below min. */
double h_share(const struct folded *f, const char *comm, const char *needle);
/* A value of "key=value" in a summary line, or -1. */
long long h_summary_value(const char *summary, const char *key);
/* A counter of the profiler's exit summary and what it must be: its
 * value op want, op one of "==", ">=" and ">", or NULL to note it only. */
struct h_counter {
	const char *key, *op;
	long long want;
	const char *what;
};
/* Note the n counters of c as key=value on one line, then assert each
 * that has an op. */
void h_check_counters(const char *summary, const struct h_counter *c,
		      size_t n);
/* A BPF counter (KEY=N) of -v's "bpf counters:" line, which leaves out
 * the counters that stayed 0: 0 when absent. */
long long h_bpf_counter(const char *err, const char *key);
/* Path of a workload binary. */
const char *h_workload(const char *name);
/* Path of a script of the sources' tests/workloads/<lang>/ (8 buffers
 * in turn, shared with h_workload: valid for the next 7 calls of either). */
const char *h_script(const char *lang, const char *script);
/* The value of environment variable var, or NULL after a SKIP "<var>
 * unset: <why>" when it is unset or empty. */
const char *h_env_or_skip(const char *var, const char *why);
/* Whether the program bin can be run; if not, a SKIP "<bin> is not
 * installed<hint>". */
bool h_have(const char *bin, const char *hint);
/* An interpreter the tests run: its program, the comm of its processes
 * and "<comm>;_start;", how a complete native stack starts. */
struct h_interp {
	const char *bin;
	char comm[32], comm_start[48];
};
/* Run the interpreter at bin from now on. */
void h_interp_use(struct h_interp *ip, const char *bin);
/* A subtest of another build's test: its name, the test it runs, and an
 * environment variable it needs set (NULL: none). */
struct h_build_case {
	const char *name;
	void (*run)(void);
	const char *needs;
};
/* Another build of interpreter ip, named by environment variable var (a
 * SKIP "<var> unset: <why>" without it) and checked with h_have (hint):
 * each of the n cases as a subtest, then back to the default build def. */
void h_other_build(struct h_interp *ip, const char *def, const char *var,
		   const char *why, const char *hint,
		   const struct h_build_case *cases, size_t n);
/* Milliseconds since an arbitrary start. */
double h_now_ms(void);
/* The whole file, NUL-terminated (malloc'd), or NULL. */
char *h_slurp(const char *path);
/* What shell command cmd writes on stdout, NUL-terminated (malloc'd), or
 * NULL when it could not be started. */
char *h_cmd_output(const char *cmd);
/* The shell command printf writes from fmt, for h_cmd_output or system()
 * (a static buffer, valid until the next call): "false", which fails and
 * writes nothing, when it would be longer than 4095 bytes. */
const char *h_cmdf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- daemon operations ------------------------------------------------- */

/* A TCP port free on 127.0.0.1 right now. */
int h_free_port(void);
/* GET path from 127.0.0.1:port.  Returns the HTTP status (or -1) and the
 * body in *body (malloc'd, NUL-terminated; may be NULL). */
int h_http_get(int port, const char *path, char **body);
/* The value of one Prometheus sample, named with its labels exactly as
 * written ("ebpf_profiler_exports_total{result=\"ok\"}"), or -1. */
double h_metric(const char *text, const char *series);
/* Check a Prometheus text exposition: every line a HELP, a TYPE or a
 * sample that parses; HELP and TYPE before a family's samples; a family's
 * samples together; counters end in _total; no series twice; every name
 * starts with prefix.  Returns the number of samples, or -1 with the
 * first problem in why. */
int h_prom_check(const char *text, const char *prefix, char *why, size_t len);

/* BPF objects a process holds (from /proc/PID/fdinfo). */
struct h_bpf_ids {
	uint32_t progs[64], maps[128], links[64];
	int n_progs, n_maps, n_links;
};
int h_bpf_ids_of(pid_t pid, struct h_bpf_ids *ids);
/* How many of ids still exist in the kernel (bpftool prog/map/link show
 * id N), waiting up to 3 s for the RCU-deferred frees. */
int h_bpf_ids_alive(const struct h_bpf_ids *ids);

/* Where cgroup v2 is mounted (false: not mounted). */
bool h_cgroup2_mount(char *out, size_t len);

#endif
