// SPDX-License-Identifier: Apache-2.0
/*
 * ebpf-profiler: the daemon.  Wires the tracer (BPF), the process and
 * executable managers, the trace pipeline and the reporter sinks, and runs
 * the poll loop until -duration or a signal.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "cache_cmd.h"
#include "cgroup.h"
#include "cmd_deltas.h"
#include "config.h"
#include "elfmap.h"
#include "exemgr.h"
#include "hashmap.h"
#include "interp.h"
#include "kbtf_cache.h"
#include "ksyms.h"
#include "log.h"
#include "metrics.h"
#include "pipeline.h"
#include "procmgr.h"
#include "reporter.h"
#include "store.h"
#include "tracer.h"

#define MAX_SINKS 4

struct daemon {
	struct config cfg;
	struct tracer *tr;
	struct inl_cache *inl;	/* -inline-frames */
	struct exe_mgr *em;
	struct pm *pm;
	struct tp *tp;
	struct ksyms_async *ks;
	struct store *store;
	struct interp_mgr *im;
	/* sinks written every interval (OTLP, rotated files) from tp, which
	 * is reset each time; the file of a whole run (-duration, or no
	 * rotation) from tp_run, or from tp when there is no interval sink */
	struct rep_sink *sinks[MAX_SINKS];
	int n_sinks;
	struct rep_sink *run_sink;
	struct tp *tp_run;
	struct hm pids_seen;
	uint64_t t_start;
	uint64_t startup_ns;
	uint64_t load_ns; /* of startup_ns: loading the processes (the part
			   * the cache speeds up; it overlaps the BPF load) */
	struct kbtf_cache ktypes; /* the kernel types CO-RE relocates against */
	uint64_t events[8];
	uint64_t samples_total;
	bool sampling_on;
	uint64_t sampling_toggles;
	struct metrics_server *metrics;
	/* why the cache is off ("disabled", "untrusted_dir", "link",
	 * "error"), NULL when it is on */
	const char *cache_off;
	uint64_t service_ns_max; /* the longest pm_service step */
};

/* The poll loop serves sync requests this long at a time, then polls. */
#define SERVICE_BUDGET_NS (50ULL * 1000000ULL)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void on_trace(void *arg, const struct trace_hdr *h, const __u64 *words)
{
	struct daemon *d = arg;

	hm_put(&d->pids_seen, h->pid, 1);
	tp_add_trace(d->tp, h, words);
	if (d->tp_run)
		tp_add_trace(d->tp_run, h, words);
}

static void on_event(void *arg, const struct pid_event *ev)
{
	struct daemon *d = arg;

	if (ev->type < 8)
		d->events[ev->type]++;
	/* only asked here: the poll loop does it (serve_requests) */
	switch (ev->type) {
	case PEV_EXEC:
		pm_request(d->pm, (pid_t)ev->pid, PM_REQ_EXEC);
		break;
	case PEV_EXIT:
		pm_request(d->pm, (pid_t)ev->pid, PM_REQ_EXIT);
		break;
	case PEV_UNKNOWN_PID:
	case PEV_UNKNOWN_PC:
		pm_request(d->pm, (pid_t)ev->pid, PM_REQ_SYNC);
		break;
	}
}

/* The poll loop's step for the process manager: the sync requests the
 * callbacks queued, within budget_ns (0: all of them), then the records
 * that waited for them; force: every waiting record (an interval's cut). */
static void serve_requests(struct daemon *d, uint64_t budget_ns, bool force)
{
	uint64_t t0 = exe_now_ns(), dt;

	if (pm_pending(d->pm))
		pm_service(d->pm, budget_ns);
	dt = exe_now_ns() - t0;
	if (dt > d->service_ns_max)
		d->service_ns_max = dt;
	tp_retry(d->tp, force);
	if (d->tp_run)
		tp_retry(d->tp_run, force);
}

static int check_pids(const struct config *c)
{
	char path[32];
	int i;

	for (i = 0; i < c->n_pids; i++) {
		snprintf(path, sizeof(path), "/proc/%u", c->pids[i]);
		if (access(path, F_OK)) {
			fprintf(stderr, "ebpf-profiler: no such process: %u\n",
				c->pids[i]);
			return -ESRCH;
		}
	}
	return 0;
}

static void raise_limits(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
	/* kernels before 5.11 charge BPF maps to RLIMIT_MEMLOCK */
	r.rlim_cur = r.rlim_max = RLIM_INFINITY;
	setrlimit(RLIMIT_MEMLOCK, &r);
}

static bool continuous(const struct daemon *d)
{
	return d->cfg.duration_ns == 0;
}

static int open_sinks(struct daemon *d)
{
	struct rep_otlp_opts oo = { 0 };
	int err;

	if (d->cfg.output) {
		/* continuous mode rotates the file every interval; a run with
		 * -duration writes the whole run into one file */
		bool rotate = continuous(d) && d->cfg.reporter_interval_ns > 0;
		struct rep_sink *s = NULL;

		err = rep_file_sink_open(d->cfg.output, rotate, &s);
		if (err) {
			fprintf(stderr,
				"ebpf-profiler: -output %s: unknown format (use .folded, .pb.gz, .pprof, .svg or .otlp)\n",
				d->cfg.output);
			return err;
		}
		if (rotate)
			d->sinks[d->n_sinks++] = s;
		else
			d->run_sink = s;
	}
	oo.endpoint = d->cfg.collection_agent;
	if (d->cfg.collection_agent)
		oo.protocol = "grpc";
	oo.insecure = d->cfg.disable_tls;
	rep_otlp_opts_from_env(&oo);
	if (oo.endpoint && *oo.endpoint) {
		err = rep_otlp_sink_open(&oo, &d->sinks[d->n_sinks]);
		if (err) {
			fprintf(stderr, "ebpf-profiler: OTLP exporter to %s: %s\n",
				oo.endpoint, strerror(-err));
			return err;
		}
		d->n_sinks++;
	}
	return 0;
}

/* Every record so far into the aggregate: what the rings hold, then the
 * syncs they ask for, then the records that waited for them. */
static void flush_records(struct daemon *d)
{
	tracer_flush(d->tr);
	serve_requests(d, 0, true);
}

/* The interval's batch to the interval sinks; then a new interval. */
static void write_sinks(struct daemon *d, bool final)
{
	struct rep_batch b;
	int i;

	if (!d->n_sinks)
		return;
	tp_batch(d->tp, &b);
	for (i = 0; i < d->n_sinks; i++)
		rep_sink_write(d->sinks[i], &b);
	if (!final)
		tp_reset(d->tp);
}

/* The whole run to its file. */
static void write_run(struct daemon *d)
{
	struct rep_batch b;

	if (!d->run_sink)
		return;
	tp_batch(d->tp_run ? d->tp_run : d->tp, &b);
	rep_sink_write(d->run_sink, &b);
}

/* Folded stacks to stdout when no sink was asked for. */
static void write_stdout(struct daemon *d)
{
	struct rep_batch b;
	char *buf = NULL;
	size_t len = 0;

	tp_batch(d->tp, &b);
	if (rep_encode_folded(&b, &buf, &len) == 0) {
		fwrite(buf, 1, len, stdout);
		fflush(stdout);
	}
	free(buf);
}

/* The shared tables' fair shares (issue 16): files refused for taking
 * more than theirs, by table, and the rules taken back from unloaded
 * files.  Part of the summary line. */
static void print_summary_shares(const struct exe_stats *es)
{
	unsigned t;

	for (t = 0; t < EXE_TABLE_COUNT; t++)
		fprintf(stderr, "over_share_%s=%" PRIu64 " ", exe_table_name(t),
			exe_over_share(es, t));
	fprintf(stderr, "rules_used=%" PRIu64 " rules_freed=%" PRIu64
			" rules_full=%" PRIu64 " ",
		es->rules_used, es->rules_freed, es->rules_full);
}

/* The counters of every sink, summed. */
static void sink_totals(struct daemon *d, struct rep_stats *t)
{
	struct rep_stats rs;
	int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i <= d->n_sinks; i++) {
		struct rep_sink *s = i < d->n_sinks ? d->sinks[i] : d->run_sink;

		if (!s)
			continue;
		rep_sink_stats(s, &rs);
		t->send_ok += rs.send_ok;
		t->send_fail += rs.send_fail;
		t->queue_drops += rs.queue_drops;
		t->write_errors += rs.write_errors;
	}
}

/* What other users could try (issue 16): files refused for not being
 * what the maps line names, the cache's state, the metrics clients cut
 * off. */
static void print_summary_trust(struct daemon *d, const struct pm_stats *ps)
{
	struct metrics_server_stats ms = { 0 };
	uint64_t mism = 0;
	unsigned i;

	for (i = PM_MISMATCH_NONE + 1; i < PM_MISMATCH_COUNT; i++)
		mism += ps->mismatch[i];
	if (d->metrics)
		metrics_server_stats(d->metrics, &ms);
	fprintf(stderr,
		" mapping_mismatch=%" PRIu64 " cache=%s cache_off_reason=%s"
		" cache_put_errors=%" PRIu64 " metrics_timeouts=%" PRIu64
		" metrics_evicted=%" PRIu64,
		mism, d->cache_off ? "off" : "on",
		d->cache_off ? d->cache_off : "none",
		store_put_errors(d->store), ms.timeouts, ms.evicted);
}

static void print_summary(struct daemon *d)
{
	uint64_t m[METRIC_COUNT] = { 0 };
	struct tracer_drain_stats ds;
	struct tp_stats ts;
	struct exe_stats es;
	struct pm_stats ps;
	struct rep_stats rs;
	double secs = (exe_now_ns() - d->t_start) / 1e9;
	int i;

	tracer_read_metrics(d->tr, m);
	tracer_drain_stats(d->tr, &ds);
	tp_get_stats(d->tp, &ts);
	exe_get_stats(d->em, &es);
	pm_get_stats(d->pm, &ps);
	sink_totals(d, &rs);
	fprintf(stderr,
		"samples=%" PRIu64 " lost=%" PRIu64 " events_lost=%" PRIu64
		" processes=%u unwind_errors=%" PRIu64
		" complete=%" PRIu64 " truncated=%" PRIu64 " unsynced=%" PRIu64
		" kernel_only=%" PRIu64 " extracted=%" PRIu64 " cache_hits=%" PRIu64
		" startup_ms=%.0f load_ms=%.0f files=%" PRIu64 " rows=%" PRIu64
		" rows_full=%" PRIu64 " syncs=%" PRIu64
		" exports_ok=%" PRIu64 " exports_failed=%" PRIu64 " queue_drops=%" PRIu64
		" ringbuf_full=%" PRIu64 " events_full=%" PRIu64
		" record_queue_drops=%" PRIu64 " drain_stall_ms=%.1f"
		" service_ms_max=%.1f requests_dropped=%" PRIu64
		" waited=%" PRIu64 " wait_full=%" PRIu64 " wait_expired=%" PRIu64
		" seconds=%.1f ",
		ts.samples, m[METRIC_RINGBUF_FULL] + ts.dropped_full + ds.trace_drops,
		m[METRIC_EVENTS_FULL], d->pids_seen.count, ts.unwind_errors, ts.complete, ts.truncated,
		ts.unsynced, ts.kernel_only, es.extracted, es.cache_hits,
		d->startup_ns / 1e6, d->load_ns / 1e6, es.files, es.rows_used,
		es.rows_full, ps.syncs, rs.send_ok,
		rs.send_fail, rs.queue_drops, m[METRIC_RINGBUF_FULL],
		m[METRIC_EVENTS_FULL], ds.queue_drops, ds.stall_ns_max / 1e6,
		d->service_ns_max / 1e6, ps.requests_dropped, ts.waited,
		ts.wait_full, ts.wait_expired, secs);
	print_summary_shares(&es);
	/* every way unwinding failed, by name (recovered by a frame-pointer
	 * step or not): the BPF side's per-CPU counters */
	for (i = 0; i < METRIC_COUNT; i++) {
		const char *n = metric_name(i);
		char lower[64];
		size_t k;

		if (strncmp(n, "ERR_", 4))
			continue;
		for (k = 0; n[4 + k] && k < sizeof(lower) - 1; k++)
			lower[k] = (char)tolower((unsigned char)n[4 + k]);
		lower[k] = 0;
		fprintf(stderr, "err_%s=%" PRIu64 " ", lower, m[i]);
	}
	{
		/* the agent's own cost, and the BPF cost per sample when the
		 * kernel keeps program statistics (kernel.bpf_stats_enabled) */
		struct tracer_prog_stats pst[16];
		uint64_t run_ns = 0, samples = 0;
		struct rusage ru;
		int np = tracer_prog_stats(d->tr, pst, 16);

		for (i = 0; i < np; i++) {
			run_ns += pst[i].run_time_ns;
			if (d->cfg.verbose)
				fprintf(stderr, "prog %s: runs=%" PRIu64 " ns=%" PRIu64 "\n",
					pst[i].name, pst[i].run_cnt, pst[i].run_time_ns);
			if (!strcmp(pst[i].name, "sample"))
				samples = pst[i].run_cnt;
		}
		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "agent_cpu_ms=%.0f rss_max_kb=%ld",
			(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
				(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3,
			ru.ru_maxrss);
		/* per run of the entry program, and per trace sent (the
		 * unwinding cost; idle and filtered samples are cheap) */
		if (samples)
			fprintf(stderr, " bpf_samples=%" PRIu64 " bpf_ns_per_sample=%.0f",
				samples, (double)run_ns / samples);
		if (samples && m[METRIC_SAMPLES_SENT])
			fprintf(stderr, " bpf_ns_per_trace=%.0f",
				(double)run_ns / m[METRIC_SAMPLES_SENT]);
		/* files given up on (budget.h), by reason when any */
		fprintf(stderr, " files_over_budget=%" PRIu64, budget_total());
		for (i = 0; i < BUDGET_COUNT; i++)
			if (budget_count(i))
				fprintf(stderr, " over_budget_%s=%" PRIu64,
					budget_name(i), budget_count(i));
		print_summary_trust(d, &ps);
		fprintf(stderr, "\n");
	}
	if (d->cfg.verbose) {
		fprintf(stderr, "bpf counters:");
		for (i = 0; i < METRIC_COUNT; i++)
			if (m[i])
				fprintf(stderr, " %s=%" PRIu64, metric_name(i), m[i]);
		fprintf(stderr, "\n");
	}
}

/* One series per interpreter runtime: a field of its stats. */
static void interp_series(FILE *f, const char *name, const char *type,
			  const char *help, const struct interp_stats *is,
			  size_t field)
{
	unsigned k;

	fprintf(f, "# HELP ebpf_profiler_%s %s\n# TYPE ebpf_profiler_%s %s\n",
		name, help, name, type);
	for (k = 1; k < INTERP_COUNT; k++)
		fprintf(f, "ebpf_profiler_%s{runtime=\"%s\"} %" PRIu64 "\n", name,
			interp_module(k)->name,
			*(const uint64_t *)((const char *)&is[k] + field));
}

/* The Prometheus text of every counter the daemon keeps. */
static void publish_metrics(struct daemon *d)
{
	static const char *const ev_names[] = { "", "exec", "exit", "unknown_pid",
						"unknown_pc" };
	uint64_t m[METRIC_COUNT] = { 0 };
	struct bpfmaps *bm = tracer_maps(d->tr);
	struct tracer_drain_stats ds;
	struct tp_stats ts;
	struct exe_stats es;
	struct interp_stats is[INTERP_COUNT];
	struct pm_stats ps;
	struct rep_stats rs;
	char *buf = NULL;
	unsigned k;
	size_t len = 0;
	FILE *f;
	int i;

	if (!d->metrics)
		return;
	f = open_memstream(&buf, &len);
	if (!f)
		return;
	tracer_read_metrics(d->tr, m);
	tp_get_stats(d->tp, &ts);
	exe_get_stats(d->em, &es);
	pm_get_stats(d->pm, &ps);
	for (k = 1; k < INTERP_COUNT; k++)
		interp_get_stats(d->im, k, &is[k]);
	tracer_drain_stats(d->tr, &ds);
#define P(name, type, help, fmt, ...)                                          \
	fprintf(f, "# HELP ebpf_profiler_" name " " help "\n"                   \
		   "# TYPE ebpf_profiler_" name " " type "\n"                   \
		   "ebpf_profiler_" name fmt "\n", __VA_ARGS__)
	P("samples_total", "counter", "Samples aggregated.", " %" PRIu64, ts.samples);
	P("samples_lost_total", "counter",
	  "Samples lost: ring buffer full, record queue full or aggregation tables full.",
	  " %" PRIu64, m[METRIC_RINGBUF_FULL] + ds.trace_drops + ts.dropped_full);
	P("samples_complete_total", "counter",
	  "Samples whose user stack reached the process or thread entry.",
	  " %" PRIu64, ts.complete);
	P("samples_unsynced_total", "counter",
	  "Samples of processes not loaded yet (frame-pointer walk).", " %" PRIu64,
	  ts.unsynced);
	fprintf(f, "# HELP ebpf_profiler_bpf_events_total BPF per-CPU counters.\n"
		   "# TYPE ebpf_profiler_bpf_events_total counter\n");
	for (i = 0; i < METRIC_COUNT; i++)
		if (metric_defined(i))
			fprintf(f, "ebpf_profiler_bpf_events_total{event=\"%s\"} %" PRIu64 "\n",
				metric_name(i), m[i]);
	fprintf(f, "# HELP ebpf_profiler_unwind_errors_total Stacks that ended in an error, by reason.\n"
		   "# TYPE ebpf_profiler_unwind_errors_total counter\n");
	for (i = 0; i < METRIC_COUNT; i++)
		if (!strncmp(metric_name(i), "ERR_", 4))
			fprintf(f, "ebpf_profiler_unwind_errors_total{reason=\"%s\"} %" PRIu64 "\n",
				metric_name(i) + 4, ts.errors_by_code[i]);
	fprintf(f, "# HELP ebpf_profiler_map_entries Entries the daemon keeps in each BPF map.\n"
		   "# TYPE ebpf_profiler_map_entries gauge\n"
		   "ebpf_profiler_map_entries{map=\"mappings\"} %" PRIu64 "\n"
		   "ebpf_profiler_map_entries{map=\"delta_rows\"} %" PRIu64 "\n"
		   "ebpf_profiler_map_entries{map=\"rules\"} %" PRIu64 "\n",
		ps.trie_entries, es.rows_used, es.rules_used);
	fprintf(f, "# HELP ebpf_profiler_map_capacity Capacity of each BPF map.\n"
		   "# TYPE ebpf_profiler_map_capacity gauge\n"
		   "ebpf_profiler_map_capacity{map=\"mappings\"} %u\n"
		   "ebpf_profiler_map_capacity{map=\"delta_rows\"} %" PRIu64 "\n"
		   "ebpf_profiler_map_capacity{map=\"rules\"} %u\n",
		bm->max_entries[BM_MAPPINGS], es.rows_cap, bm->max_entries[BM_RULES]);
	fprintf(f, "# HELP ebpf_profiler_map_allocated Entries allocated in the kernel for a map that grows as needed, up to its capacity.\n"
		   "# TYPE ebpf_profiler_map_allocated gauge\n"
		   "ebpf_profiler_map_allocated{map=\"delta_rows\"} %" PRIu64 "\n",
		es.rows_alloc);
	fprintf(f, "# HELP ebpf_profiler_map_full_total Updates refused because a map was full.\n"
		   "# TYPE ebpf_profiler_map_full_total counter\n"
		   "ebpf_profiler_map_full_total{map=\"mappings\"} %" PRIu64 "\n"
		   "ebpf_profiler_map_full_total{map=\"delta_rows\"} %" PRIu64 "\n"
		   "ebpf_profiler_map_full_total{map=\"delta_pages\"} %" PRIu64 "\n"
		   "ebpf_profiler_map_full_total{map=\"rules\"} %" PRIu64 "\n",
		ps.trie_full, es.rows_full, es.pages_full, es.rules_full);
	/* per interpreter runtime, labelled by its -tracers name */
	for (k = 1; k < INTERP_COUNT; k++)
		if (interp_module(k)->map_name)
			fprintf(f, "ebpf_profiler_map_full_total{map=\"%s\"} %" PRIu64 "\n",
				interp_module(k)->map_name, is[k].map_full);
	fprintf(f, "# HELP ebpf_profiler_files_over_share_total Files walked by frame pointer because they would take more than their share of a table (limit: the file's own, or its owner's with the owner's other files).\n"
		   "# TYPE ebpf_profiler_files_over_share_total counter\n");
	for (k = 0; k < EXE_TABLE_COUNT; k++)
		fprintf(f, "ebpf_profiler_files_over_share_total{table=\"%s\",limit=\"file\"} %" PRIu64 "\n"
			   "ebpf_profiler_files_over_share_total{table=\"%s\",limit=\"owner\"} %" PRIu64 "\n",
			exe_table_name(k), es.over_share[k][0],
			exe_table_name(k), es.over_share[k][1]);
	P("rules_freed_total", "counter",
	  "Unwind rules taken back from unloaded files.", " %" PRIu64,
	  es.rules_freed);
	interp_series(f, "interp_processes", "gauge",
		      "Processes whose frames of this runtime are unwound.", is,
		      offsetof(struct interp_stats, procs));
	interp_series(f, "interp_files_detected_total", "counter",
		      "Files found to hold this runtime.", is,
		      offsetof(struct interp_stats, files));
	interp_series(f, "interp_files_unsupported_total", "counter",
		      "Files holding a version or build of this runtime not supported (its module names which).",
		      is, offsetof(struct interp_stats, files_unsupported));
	interp_series(f, "interp_attach_errors_total", "counter",
		      "Processes of this runtime not unwound: layout refused or table full.",
		      is, offsetof(struct interp_stats, attach_errors));
	fprintf(f, "# HELP ebpf_profiler_interp_frames_symbolized_total Interpreter frames named, or not (the process was gone or its memory unreadable).\n"
		   "# TYPE ebpf_profiler_interp_frames_symbolized_total counter\n");
	for (k = 1; k < INTERP_COUNT; k++)
		fprintf(f, "ebpf_profiler_interp_frames_symbolized_total{runtime=\"%s\",result=\"ok\"} %" PRIu64 "\n"
			   "ebpf_profiler_interp_frames_symbolized_total{runtime=\"%s\",result=\"failed\"} %" PRIu64 "\n",
			interp_module(k)->name, is[k].symbolize_ok,
			interp_module(k)->name, is[k].symbolize_fail);
	P("processes", "gauge", "Processes tracked.", " %" PRIu64, ps.procs);
	P("files", "gauge", "Executable files tracked.", " %" PRIu64, es.files);
	P("files_loaded", "gauge", "Files with stack deltas in the BPF maps.",
	  " %" PRIu64, es.loaded);
	P("extracted_files_total", "counter", "Files whose stack deltas were computed.",
	  " %" PRIu64, es.extracted);
	P("extraction_seconds_total", "counter", "Time spent extracting stack deltas.",
	  " %.6f", es.extract_ns / 1e9);
	P("cache_hits_total", "counter", "Files whose stack deltas came from the cache.",
	  " %" PRIu64, es.cache_hits);
	P("cache_misses_total", "counter", "Files looked up in the cache and not found.",
	  " %" PRIu64, d->store ? es.extracted : 0);
	fprintf(f, "# HELP ebpf_profiler_process_events_total Process events from BPF.\n"
		   "# TYPE ebpf_profiler_process_events_total counter\n");
	for (i = 1; i <= PEV_UNKNOWN_PC; i++)
		fprintf(f, "ebpf_profiler_process_events_total{type=\"%s\"} %" PRIu64 "\n",
			ev_names[i], d->events[i]);
	P("syncs_total", "counter", "Reads of /proc/PID/maps.", " %" PRIu64, ps.syncs);
	fprintf(f, "# HELP ebpf_profiler_sync_requests_total Process sync requests the callbacks queued, by result.\n"
		   "# TYPE ebpf_profiler_sync_requests_total counter\n"
		   "ebpf_profiler_sync_requests_total{result=\"queued\"} %" PRIu64 "\n"
		   "ebpf_profiler_sync_requests_total{result=\"merged\"} %" PRIu64 "\n"
		   "ebpf_profiler_sync_requests_total{result=\"dropped\"} %" PRIu64 "\n"
		   "ebpf_profiler_sync_requests_total{result=\"served\"} %" PRIu64 "\n",
		ps.requests, ps.requests_merged, ps.requests_dropped,
		ps.requests_served);
	P("sync_requests_pending", "gauge", "Process sync requests waiting for the poll loop.",
	  " %" PRIu64, ps.requests_pending);
	P("sync_requests_capacity", "gauge", "Bound on the sync requests queued at once.",
	  " %d", PM_REQ_MAX);
	P("service_seconds_max", "gauge",
	  "Longest step of the poll loop serving sync requests (reading /proc, extracting files).",
	  " %.6f", d->service_ns_max / 1e9);
	fprintf(f, "# HELP ebpf_profiler_waiting_records_total Records of processes not loaded yet, kept until their sync, by outcome.\n"
		   "# TYPE ebpf_profiler_waiting_records_total counter\n"
		   "ebpf_profiler_waiting_records_total{result=\"waited\"} %" PRIu64 "\n"
		   "ebpf_profiler_waiting_records_total{result=\"full\"} %" PRIu64 "\n"
		   "ebpf_profiler_waiting_records_total{result=\"expired\"} %" PRIu64 "\n",
		ts.waited, ts.wait_full, ts.wait_expired);
	P("drain_stall_seconds_max", "gauge",
	  "Longest time the BPF ring buffers went undrained.", " %.6f",
	  ds.stall_ns_max / 1e9);
	P("record_queue_drops_total", "counter",
	  "Ring records dropped: the queue from the drain thread was full.",
	  " %" PRIu64, ds.queue_drops);
	P("record_queue_bytes", "gauge", "Bytes in the queue from the drain thread.",
	  " %" PRIu64, ds.queue_bytes);
	P("record_queue_bytes_max", "gauge",
	  "The most bytes ever in the queue from the drain thread.", " %" PRIu64,
	  ds.queue_bytes_max);
	P("record_queue_capacity_bytes", "gauge",
	  "Bound on the queue from the drain thread.", " %" PRIu64, ds.queue_bound);
	sink_totals(d, &rs);
	fprintf(f, "# HELP ebpf_profiler_exports_total OTLP exports by result.\n"
		   "# TYPE ebpf_profiler_exports_total counter\n"
		   "ebpf_profiler_exports_total{result=\"ok\"} %" PRIu64 "\n"
		   "ebpf_profiler_exports_total{result=\"failed\"} %" PRIu64 "\n",
		rs.send_ok, rs.send_fail);
	P("queue_drops_total", "counter",
	  "Batches dropped because the export queue was full.", " %" PRIu64,
	  rs.queue_drops);
	P("file_write_errors_total", "counter", "Output file writes that failed.",
	  " %" PRIu64, rs.write_errors);
	P("sampling_enabled", "gauge", "1 when sampling is on (probabilistic mode).",
	  " %d", d->sampling_on ? 1 : 0);
	P("sampling_toggles_total", "counter", "Probabilistic on/off switches.",
	  " %" PRIu64, d->sampling_toggles);
	P("startup_seconds", "gauge", "Time from start until every process was loaded.",
	  " %.3f", d->startup_ns / 1e9);
	P("file_read_faults_total", "counter",
	  "Pages of files truncated while mapped, read as zeros.", " %" PRIu64,
	  elfm_fault_count());
	{
		/* the agent's own cost, the figures its budget is about */
		struct tracer_prog_stats pst[16];
		int np = tracer_prog_stats(d->tr, pst, 16);
		struct rusage ru;
		long pages = 0, resident = 0;
		FILE *sm = fopen("/proc/self/statm", "re");

		if (sm) {
			if (fscanf(sm, "%ld %ld", &pages, &resident) != 2)
				resident = 0;
			fclose(sm);
		}
		getrusage(RUSAGE_SELF, &ru);
		P("agent_cpu_seconds_total", "counter",
		  "CPU time of the agent's process, user and system.", " %.3f",
		  ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			  (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
		P("agent_resident_memory_bytes", "gauge",
		  "Resident memory of the agent's process (with the mmap'ed BPF maps).",
		  " %ld", resident * sysconf(_SC_PAGESIZE));
		fprintf(f, "# HELP ebpf_profiler_bpf_runs_total Runs of each BPF program (needs kernel.bpf_stats_enabled=1).\n"
			   "# TYPE ebpf_profiler_bpf_runs_total counter\n");
		for (i = 0; i < np; i++)
			fprintf(f, "ebpf_profiler_bpf_runs_total{program=\"%s\"} %" PRIu64 "\n",
				pst[i].name, pst[i].run_cnt);
		fprintf(f, "# HELP ebpf_profiler_bpf_run_seconds_total Time in each BPF program, tail calls included (needs kernel.bpf_stats_enabled=1).\n"
			   "# TYPE ebpf_profiler_bpf_run_seconds_total counter\n");
		for (i = 0; i < np; i++)
			fprintf(f, "ebpf_profiler_bpf_run_seconds_total{program=\"%s\"} %.9f\n",
				pst[i].name, pst[i].run_time_ns / 1e9);
	}
	P("build_info", "gauge", "Version of the agent.",
	  "{version=\"%s\",revision=\"%s\"} 1", EP_VERSION, EP_GIT_REV);
	fprintf(f, "# HELP ebpf_profiler_files_over_budget_total Files given up on (no names, no debug file, a section left out), by the budget they were over.\n"
		   "# TYPE ebpf_profiler_files_over_budget_total counter\n");
	for (i = 0; i < BUDGET_COUNT; i++)
		fprintf(f, "ebpf_profiler_files_over_budget_total{reason=\"%s\"} %" PRIu64 "\n",
			budget_name(i), budget_count(i));
	{
		struct metrics_server_stats ms;

		metrics_server_stats(d->metrics, &ms);
		fprintf(f, "# HELP ebpf_profiler_mapping_mismatch_total Files opened for a mapping and refused: not the file the maps line names.\n"
			   "# TYPE ebpf_profiler_mapping_mismatch_total counter\n");
		for (i = PM_MISMATCH_NONE + 1; i < PM_MISMATCH_COUNT; i++)
			fprintf(f, "ebpf_profiler_mapping_mismatch_total{reason=\"%s\"} %" PRIu64 "\n",
				pm_mismatch_name(i), ps.mismatch[i]);
		P("cache_enabled", "gauge",
		  "1 when the cache is in use; else why not (disabled, untrusted_dir, link, error).",
		  "{reason=\"%s\"} %d", d->cache_off ? d->cache_off : "none",
		  d->cache_off ? 0 : 1);
		P("cache_put_errors_total", "counter", "Cache writes that failed.",
		  " %" PRIu64, store_put_errors(d->store));
		P("metrics_scrapes_total", "counter", "Answers the metrics endpoint sent whole.",
		  " %" PRIu64, ms.served);
		fprintf(f, "# HELP ebpf_profiler_metrics_clients_closed_total Metrics clients closed before an answer: out of time (2 s) or for a newer one (32 at once).\n"
			   "# TYPE ebpf_profiler_metrics_clients_closed_total counter\n"
			   "ebpf_profiler_metrics_clients_closed_total{reason=\"timeout\"} %" PRIu64 "\n"
			   "ebpf_profiler_metrics_clients_closed_total{reason=\"evicted\"} %" PRIu64 "\n",
			ms.timeouts, ms.evicted);
	}
#undef P
	fclose(f);
	metrics_server_publish(d->metrics, buf, len);
	free(buf);
}

/* Probabilistic profiling: every interval, sampling is on with
 * threshold% probability (the reference agent's meaning). */
static bool probabilistic_draw(const struct daemon *d)
{
	return (uint32_t)(random() % 100) < (uint32_t)d->cfg.probabilistic_threshold;
}

static void set_sampling(struct daemon *d, bool on)
{
	if (on == d->sampling_on)
		return;
	tracer_enable(d->tr, on);
	d->sampling_on = on;
	d->sampling_toggles++;
	log_info("probabilistic: sampling %s", on ? "on" : "off");
}

/* Open the cache and find the kernel types (a thread's start routine). */
static void *prepare(void *arg)
{
	struct daemon *d = arg;
	struct store_opts so = { .max_bytes = d->cfg.cache_size };

	int err = d->cfg.no_cache ? 0 : store_open(d->cfg.cache_dir, &so, &d->store);

	if (err)
		log_warn("running without the cache");
	d->cache_off = d->cfg.no_cache ? "disabled" :
		       err == -EPERM	 ? "untrusted_dir" :
		       err == -ELOOP	 ? "link" :
		       err		 ? "error" :
					   NULL;
	{
		size_t olen;
		const void *obj = tracer_object(&olen);

		kbtf_cache_find(&d->ktypes, d->store, obj, olen);
	}
	return NULL;
}

/* Load the processes (a thread's start routine): -pid's few, or all that
 * run now.  It fills the maps while the verifier checks the programs. */
static void *load_processes(void *arg)
{
	struct daemon *d = arg;
	uint64_t t0 = exe_now_ns();

	/* pid_t and uint32_t may alias: the same size, signed and not */
	if (d->cfg.n_pids)
		pm_sync_many(d->pm, (const pid_t *)d->cfg.pids, d->cfg.n_pids);
	else
		pm_scan_all(d->pm);
	d->load_ns = exe_now_ns() - t0;
	return NULL;
}

static int run(struct daemon *d)
{
	pthread_t prep_thread, load_thread;
	bool prep_started, load_started;
	struct tracer_opts to = { 0 };
	struct tp_opts po = { 0 };
	uint64_t cg[CONFIG_MAX_LIST];
	uint64_t now, next_report, next_gc, next_prob, next_flush, deadline;
	int err, n;

	/* handlers first: a signal during start-up (loading takes a while on
	 * slow machines) must still stop us cleanly; a background job of a
	 * shell starts with SIGINT ignored, which this also overrides */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	err = check_pids(&d->cfg);
	if (!err)
		err = cgroup_ids(d->cfg.cgroups, d->cfg.n_cgroups, cg);
	if (err)
		return err;
	raise_limits();
	hm_init(&d->pids_seen);
	d->t_start = exe_now_ns();

	to.samples_per_second = d->cfg.samples_per_second;
	to.pids = d->cfg.pids;
	to.n_pids = d->cfg.n_pids;
	to.cgroup_ids = cg;
	to.n_cgroups = d->cfg.n_cgroups;
	to.ringbuf_bytes = d->cfg.ringbuf_bytes;
	to.map_scale_factor = d->cfg.map_scale_factor;
	to.max_delta_rows = d->cfg.max_delta_rows;
	to.max_frames = d->cfg.max_frames;
	to.rule_cache_entries = (uint32_t)d->cfg.rule_cache_entries;
	to.log_level = d->cfg.bpf_log_level;
	/* validate -tracers before loading anything */
	err = interp_parse_tracers(d->cfg.tracers, &to.interps);
	if (err)
		return err;
	/* Start-up runs on two threads.  The cache opens on one (its
	 * integrity check runs in a child process) and finds the kernel
	 * types, while this one creates the BPF maps.  Then the processes
	 * load into the maps on a thread while the verifier checks the
	 * programs here.  Kernel symbols load once sampling is live. */
	err = ksyms_async_new("/proc/kallsyms", &d->ks);
	if (err)
		return err;
	prep_started = pthread_create(&prep_thread, NULL, prepare, d) == 0;
	err = tracer_open(&to, on_trace, on_event, d, &d->tr);
	if (prep_started)
		pthread_join(prep_thread, NULL);
	else if (!err)
		prepare(d);
	if (err)
		return err;
	log_debug("start-up: maps created, cache open, kernel types (%s) at %.0f ms",
		  d->ktypes.from, (exe_now_ns() - d->t_start) / 1e6);
	err = exe_mgr_new(tracer_maps(d->tr), d->store, &d->em);
	if (!err && d->cfg.fp_only)
		exe_mgr_set_fp_only(d->em, true);
	if (!err)
		err = pm_new(d->em, tracer_maps(d->tr), &d->pm);
	if (!err)
		err = interp_mgr_new(tracer_maps(d->tr), d->store, d->cfg.tracers,
				     &d->im);
	if (err)
		return err;
	exe_mgr_set_detect(d->em, interp_detect, d->im);
	pm_set_synced_hook(d->pm, interp_synced, d->im);
	pm_set_forget_hook(d->pm, interp_forget, d->im);
	po.interp_frame = interp_symbolize;
	po.interp_arg = d->im;
	po.period_ns = 1000000000ULL / d->cfg.samples_per_second;
	po.send_error_frames = d->cfg.send_error_frames;
	/* inline frames (issue 23): one cache for both pipelines, which run
	 * on this thread */
	if (!err && d->cfg.inline_frames)
		err = inl_new(NULL, &d->inl);
	po.inlines = d->inl;
	if (!err)
		err = tp_new(d->pm, d->em, d->ks, &po, &d->tp);
	if (!err)
		err = open_sinks(d);
	/* a whole-run file beside interval sinks aggregates on its own */
	if (!err && d->run_sink && d->n_sinks)
		err = tp_new(d->pm, d->em, d->ks, &po, &d->tp_run);
	if (err)
		return err;

	if (d->cfg.metrics_address) {
		err = metrics_server_start(d->cfg.metrics_address, &d->metrics);
		if (err)
			return err;
	}

	/* Load what runs now (or -pid's processes) while the programs load,
	 * so none of their samples is unsynced.  A process that execs after
	 * its maps were read and before the exec tracepoint attaches keeps
	 * its old mappings until its first sample with an unknown pc makes
	 * us read them again. */
	load_started = pthread_create(&load_thread, NULL, load_processes, d) == 0;
	err = tracer_load(d->tr, d->ktypes.types, d->ktypes.len);
	if (load_started)
		pthread_join(load_thread, NULL);
	else if (!err)
		load_processes(d);
	if (err)
		return err;
	kbtf_cache_settle(&d->ktypes, d->store, tracer_types_rejected(d->tr));
	log_debug("start-up: programs and processes loaded at %.0f ms",
		  (exe_now_ns() - d->t_start) / 1e6);
	err = tracer_attach(d->tr);
	if (err)
		return err;
	d->sampling_on = true;
	d->startup_ns = exe_now_ns() - d->t_start;
	ksyms_async_start(d->ks);
	log_info("started in %.0f ms: %d programs, %d perf events, kernel types "
		 "from %s",
		 d->startup_ns / 1e6, tracer_nprogs(d->tr), tracer_nevents(d->tr),
		 d->ktypes.from);

	/* -duration counts from when sampling is live */
	now = exe_now_ns();
	deadline = d->cfg.duration_ns ? d->t_start + d->startup_ns +
						 d->cfg.duration_ns :
					 0;
	next_report = now + d->cfg.reporter_interval_ns;
	next_gc = now + 1000000000ULL;
	next_flush = now + 10000000000ULL;
	next_prob = now + d->cfg.probabilistic_interval_ns;
	if (d->cfg.probabilistic_threshold < 100)
		set_sampling(d, probabilistic_draw(d));
	publish_metrics(d);
	while (!stop) {
		bool prob_due, on = d->sampling_on;
		int timeout = 100;

		now = exe_now_ns();
		if (deadline) {
			if (now >= deadline)
				break;
			if (deadline - now < 100000000ULL)
				timeout = (int)((deadline - now) / 1000000) + 1;
		}
		n = tracer_poll(d->tr, timeout);
		if (n < 0 && n != -EINTR) {
			log_error("polling the ring buffers: %s", strerror(-n));
			break;
		}
		serve_requests(d, SERVICE_BUDGET_NS, false);
		now = exe_now_ns();
		/* with equal intervals the decision and the export are due
		 * together: stop before the cut, start after it, so an
		 * interval is wholly on or wholly off */
		prob_due = d->cfg.probabilistic_threshold < 100 && now >= next_prob;
		if (prob_due) {
			on = probabilistic_draw(d);
			if (!on)
				set_sampling(d, false);
			next_prob = now + d->cfg.probabilistic_interval_ns;
		}
		if (d->n_sinks && now >= next_report) {
			/* records still in the ring belong to this interval,
			 * with the names their syncs give */
			flush_records(d);
			write_sinks(d, false);
			next_report = now + d->cfg.reporter_interval_ns;
		}
		if (prob_due && on)
			set_sampling(d, true);
		if (now >= next_gc) {
			pm_gc(d->pm, now, 2000000000ULL);
			exe_gc(d->em, now, 60000000000ULL);
			publish_metrics(d);
			if (elfm_fault_count())
				log_warn_once("a file was truncated while it was read "
					      "(mapped): its pages read as zeros and "
					      "its tables were discarded");
			next_gc = now + 1000000000ULL;
		}
		if (d->store && now >= next_flush) {
			/* batched access times, for the cache's LRU */
			store_flush(d->store);
			next_flush = now + 10000000000ULL;
		}
	}
	/* drain what is left in the rings */
	tracer_enable(d->tr, false);
	flush_records(d);
	write_sinks(d, true);
	write_run(d);
	if (!d->n_sinks && !d->run_sink)
		write_stdout(d);
	/* the sinks deliver what they can first: the summary then counts
	 * what they had to drop */
	for (n = 0; n < d->n_sinks; n++)
		rep_sink_finish(d->sinks[n], 5000);
	print_summary(d);
	return 0;
}

static void cleanup(struct daemon *d)
{
	int i;

	metrics_server_stop(d->metrics);
	for (i = 0; i < d->n_sinks; i++)
		rep_sink_close(d->sinks[i], 5000);
	rep_sink_close(d->run_sink, 5000);
	tp_free(d->tp);
	tp_free(d->tp_run);
	inl_free(d->inl);
	pm_free(d->pm);
	interp_mgr_free(d->im);
	exe_mgr_free(d->em);
	tracer_free(d->tr); /* detaches everything */
	store_free(d->store);
	kbtf_cache_release(&d->ktypes);
	ksyms_async_free(d->ks);
	hm_free(&d->pids_seen);
}

int main(int argc, char **argv)
{
	struct daemon d = { 0 };
	int err;

	if (argc > 1 && !strcmp(argv[1], "cache"))
		return cache_cmd_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "deltas"))
		return deltas_cmd_main(argc - 1, argv + 1);
	config_init(&d.cfg);
	if (config_parse(&d.cfg, argc, argv))
		return 1;
	if (d.cfg.help) {
		config_usage(stdout);
		return 0;
	}
	if (d.cfg.version) {
		printf("ebpf-profiler %s (%s)\n", EP_VERSION, EP_GIT_REV);
		return 0;
	}
	log_set_level(d.cfg.verbose ? LOG_DEBUG : LOG_WARN);
	if (d.cfg.verbose && !getenv("EBPF_PROFILER_DEBUG"))
		log_set_level(LOG_INFO);
	srandom((unsigned)time(NULL) ^ (unsigned)getpid());
	err = run(&d);
	cleanup(&d);
	return err ? 1 : 0;
}
