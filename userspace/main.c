// SPDX-License-Identifier: Apache-2.0
/*
 * ebpf-profiler: the daemon.  Wires the tracer (BPF), the process and
 * executable managers, the trace pipeline and the reporter sinks, and runs
 * the poll loop until -duration or a signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cache_cmd.h"
#include "cgroup.h"
#include "cmd_deltas.h"
#include "config.h"
#include "dbgfetch.h"
#include "debugfind.h"
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
	struct dbgd *dbgd;	/* -inline-frames with DEBUGINFOD_URLS */
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
	uint64_t events[PEV_UNKNOWN_PC + 1];
	bool sampling_on;
	uint64_t sampling_toggles;
	struct metrics_server *metrics;
	/* why the cache is off ("disabled", "untrusted_dir", "link",
	 * "error"), NULL when it is on */
	const char *cache_off;
	uint64_t service_ns_max; /* the longest pm_service step */
	/* set once the programs are loaded: the start-up scan then queues
	 * what it has not loaded yet, and sampling goes live */
	bool programs_loaded;
	bool load_done; /* atomic: load_processes returned */
	uint64_t work_seen; /* syncs and file loads at the last release */
	uint64_t releases;  /* release_memory calls that gave memory back */
};

/* The poll loop serves sync requests this long at a time, then polls. */
#define SERVICE_BUDGET_NS (50ULL * 1000000ULL)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
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

	if (ev->type <= PEV_UNKNOWN_PC)
		d->events[ev->type]++;
	/* only asked here: the poll loop does it (serve_requests) */
	switch (ev->type) {
	case PEV_EXEC:
		pm_request(d->pm, (pid_t)ev->pid, PM_REQ_EXEC);
		break;
	case PEV_EXIT:
		pm_request(d->pm, (pid_t)ev->pid, PM_REQ_EXIT);
		break;
	case PEV_UNKNOWN_PID: {
		struct pm_proc *p = pm_find(d->pm, (pid_t)ev->pid);

		/* sent before the load that answers it (the start-up scan's,
		 * or another report's): reading the process again would find
		 * the same mappings.  Both clocks are CLOCK_MONOTONIC. */
		if (p && p->synced && p->synced_ns > ev->ktime)
			break;
		pm_request(d->pm, (pid_t)ev->pid, PM_REQ_SYNC);
		break;
	}
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

/* A parse's buffers are freed when it returns, but glibc keeps the
 * heap's free top and the cache's mapped pages stay resident: give both
 * back once a second when a process or a file was loaded since the last
 * time (a steady host loads nothing, and pays nothing). */
static void release_memory(struct daemon *d)
{
	struct pm_stats ps;
	struct exe_stats es;
	uint64_t work;

	pm_get_stats(d->pm, &ps);
	exe_get_stats(d->em, &es);
	work = ps.syncs + es.extracted + es.cache_hits + es.files;
	if (work == d->work_seen)
		return;
	d->work_seen = work;
	malloc_trim(0);
	store_release_pages(d->store);
	d->releases++;
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

/* Folded stacks to stdout when no sink was asked for: the CPU samples
 * (one stream has one weight; off-CPU time needs -output). */
static void write_stdout(struct daemon *d)
{
	struct rep_sample *samples = NULL;
	struct rep_batch b, v;
	char *buf = NULL;
	size_t len = 0;

	tp_batch(d->tp, &b);
	if (rep_batch_has(&b, REP_SAMPLE_OFFCPU))
		log_warn("off-CPU samples are written only with -output "
			 "(NAME.offcpu.folded beside NAME.folded)");
	if (rep_batch_view(&b, REP_SAMPLE_CPU, &v, &samples) == 0 &&
	    rep_encode_folded(&v, &buf, &len) == 0) {
		fwrite(buf, 1, len, stdout);
		fflush(stdout);
	}
	free(samples);
	free(buf);
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

/* The debuginfod client (issue 23): only for -inline-frames, only when
 * DEBUGINFOD_URLS names servers; its cache under the daemon's cache
 * directory unless DEBUGINFOD_CACHE_PATH says otherwise.  Started before
 * any other thread: it sets the library's variables in the environment.
 * Without libdebuginfod (loaded with dlopen) the daemon runs without it. */
static int start_debuginfod(struct daemon *d)
{
	struct dbgd_opts o = { 0 };
	char path[4096];
	int err;

	if (!d->cfg.inline_frames)
		return 0;
	snprintf(path, sizeof(path), "%s/debuginfod", d->cfg.cache_dir);
	o.cache_path = path;
	err = dbgd_new(&o, &d->dbgd);
	if (err == -ENOENT)
		return 0;
	if (err) {
		log_warn("debuginfod: not used: %s", err == -ENOSYS ?
			 "libdebuginfod.so.1 cannot be loaded" : strerror(-err));
		return 0;
	}
	dbgf_set_fetch(dbgd_fetch, d->dbgd);
	return 0;
}

static uint64_t fetch_gen(void *arg)
{
	return dbgd_generation(arg);
}

static bool fetch_busy(void *arg)
{
	return dbgd_busy(arg);
}

/* A new file: its runtime, and its debug file asked for now, so that it
 * is here by the time its frames are named. */
static void detect_file(void *arg, struct exe_file *f, int fd)
{
	struct daemon *d = arg;

	interp_detect(d->im, f, fd);
	if (d->dbgd && !f->is_vdso)
		dbgd_prefetch_fd(d->dbgd, fd);
}

/* Every figure the metrics are computed from (metrics_list.h), now. */
static void take_snapshot(struct daemon *d, struct metrics_snap *s)
{
	struct bpfmaps *bm = tracer_maps(d->tr);
	unsigned k;

	memset(s, 0, sizeof(*s));
	tracer_read_metrics(d->tr, s->bpf);
	tracer_drain_stats(d->tr, &s->ds);
	s->n_progs = tracer_prog_stats(d->tr, s->progs, METRICS_MAX_PROGS);
	s->cap_mappings = bm->max_entries[BM_MAPPINGS];
	s->cap_rules = bm->max_entries[BM_RULES];
	tp_get_stats(d->tp, &s->ts);
	exe_get_stats(d->em, &s->es);
	pm_get_stats(d->pm, &s->ps);
	for (k = 1; k < INTERP_COUNT; k++)
		interp_get_stats(d->im, k, &s->is[k]);
	sink_totals(d, &s->rs);
	if (d->metrics)
		metrics_server_stats(d->metrics, &s->ms);
	if (d->inl)
		inl_get_stats(d->inl, &s->inl);
	if (d->dbgd)
		dbgd_get_stats(d->dbgd, &s->dbgd);
	memcpy(s->events, d->events, sizeof(s->events));
	s->pids_seen = d->pids_seen.count;
	s->startup_ns = d->startup_ns;
	s->load_ns = d->load_ns;
	s->uptime_ns = exe_now_ns() - d->t_start;
	s->service_ns_max = d->service_ns_max;
	s->sampling_toggles = d->sampling_toggles;
	s->sampling_on = d->sampling_on;
	s->programs_kept = d->tr && tracer_programs_kept(d->tr);
	s->cache_off = d->cache_off;
	s->cache_put_errors = store_put_errors(d->store);
	s->read_faults = elfm_fault_count();
	metrics_snap_self(s);
}

/* The exit summary: every metric, one line on stderr. */
static void print_summary(struct daemon *d)
{
	struct metrics_snap *s = malloc(sizeof(*s));
	int i;

	if (!s)
		return;
	take_snapshot(d, s);
	if (d->cfg.verbose)
		for (i = 0; i < s->n_progs; i++)
			fprintf(stderr, "prog %s: runs=%" PRIu64 " ns=%" PRIu64 "\n",
				s->progs[i].name, s->progs[i].run_cnt,
				s->progs[i].run_time_ns);
	metrics_write_summary(stderr, s);
	if (d->cfg.verbose) {
		/* the counters that moved, by their BPF names */
		fprintf(stderr, "bpf counters:");
		for (i = 0; i < METRIC_COUNT; i++)
			if (s->bpf[i])
				fprintf(stderr, " %s=%" PRIu64, metric_name(i),
					s->bpf[i]);
		fprintf(stderr, "\n");
	}
	free(s);
}

/* The Prometheus text of every metric, to the server. */
static void publish_metrics(struct daemon *d)
{
	struct metrics_snap *s;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!d->metrics)
		return;
	s = malloc(sizeof(*s));
	f = s ? open_memstream(&buf, &len) : NULL;
	if (f) {
		take_snapshot(d, s);
		metrics_write_prom(f, s);
		fclose(f);
		metrics_server_publish(d->metrics, buf, len);
	}
	free(buf);
	free(s);
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

/* A start-up step run on a thread beside the caller's own work
 * (beside_start); beside_join waits for it, or, when no thread could be
 * started, runs it there if the caller's work went well. */
struct beside {
	void *(*fn)(void *);
	void *arg;
	pthread_t thread;
	bool started;
};

static void beside_start(struct beside *b, void *(*fn)(void *), void *arg)
{
	*b = (struct beside){ .fn = fn, .arg = arg };
	b->started = pthread_create(&b->thread, NULL, fn, arg) == 0;
}

static void beside_join(struct beside *b, int err)
{
	if (b->started)
		pthread_join(b->thread, NULL);
	else if (!err)
		b->fn(b->arg);
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

/* Load -pid's processes, or the whole system's busy ones (a thread's
 * start routine): it fills the maps while the verifier checks the
 * programs.  Any other process loads on its first sample (it comes
 * unsynced, walked by frame pointer, and asks), so the thousands that
 * sleep through the run cost no maps read, no file identification and
 * no memory, and start-up does not grow with them; the busy ones, which
 * are sampled first, start complete.  Those the scan has not loaded when
 * the programs are (a busy host's new files to extract) are queued for
 * the poll loop instead of holding sampling back. */
static void *load_processes(void *arg)
{
	struct daemon *d = arg;
	uint64_t t0 = exe_now_ns();

	/* the last run's chunks of rows in one update of the array of maps
	 * (one grace period, not one per chunk as files need them) */
	exe_chunks_prefill(d->em);
	/* pid_t and uint32_t may alias: the same size, signed and not */
	if (d->cfg.n_pids)
		pm_sync_many(d->pm, (const pid_t *)d->cfg.pids, d->cfg.n_pids);
	else
		pm_scan_running(d->pm, &d->programs_loaded);
	d->load_ns = exe_now_ns() - t0;
	__atomic_store_n(&d->load_done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Programs kept by the last run load in a few milliseconds, where the
 * verifier takes tens: the start-up scan goes on loading the busy
 * processes on its thread for about that long (sampling is live, the
 * records wait in the drain queue) before it queues the rest for the
 * poll loop, as it would have during the verification. */
#define KEPT_SCAN_GRACE_NS (40 * 1000000ULL)

static void scan_grace(struct daemon *d)
{
	uint64_t end = exe_now_ns() + KEPT_SCAN_GRACE_NS;

	while (!__atomic_load_n(&d->load_done, __ATOMIC_ACQUIRE) &&
	       exe_now_ns() < end && !stop)
		usleep(500);
}

/* Attach the programs: sampling is live. */
static int go_live(struct daemon *d)
{
	int err = tracer_attach(d->tr);

	if (err)
		return err;
	d->sampling_on = true;
	d->startup_ns = exe_now_ns() - d->t_start;
	log_info("started in %.0f ms: %d programs, %d perf events, kernel types "
		 "from %s%s",
		 d->startup_ns / 1e6, tracer_nprogs(d->tr), tracer_nevents(d->tr),
		 d->ktypes.from,
		 tracer_programs_kept(d->tr) ?
			 "; the programs kept verified by the last run" :
			 "");
	return 0;
}

static int run(struct daemon *d)
{
	struct beside prep, load;
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
	to.offcpu_threshold = d->cfg.off_cpu_threshold;
	to.offcpu_max_threads = (uint32_t)d->cfg.off_cpu_max_threads;
	to.rule_cache_entries = (uint32_t)d->cfg.rule_cache_entries;
	to.map_cache_entries = (uint32_t)d->cfg.map_cache_entries;
	to.log_level = d->cfg.bpf_log_level;
	to.keep_dir = d->cfg.keep_programs ? d->cfg.keep_programs_dir : NULL;
	/* validate -tracers before loading anything */
	err = interp_parse_tracers(d->cfg.tracers, &to.interps);
	if (err)
		return err;
	/* Start-up runs on two threads.  The cache opens on one (its
	 * integrity check runs in a child process) and finds the kernel
	 * types, while this one creates the BPF maps.  Then the processes
	 * load into the maps on a thread while the verifier checks the
	 * programs here.  Kernel symbols load once those are done. */
	err = start_debuginfod(d);
	if (!err)
		err = ksyms_async_new("/proc/kallsyms", &d->ks);
	if (err)
		return err;
	beside_start(&prep, prepare, d);
	err = tracer_open(&to, on_trace, on_event, d, &d->tr);
	beside_join(&prep, err);
	if (err)
		return err;
	log_debug("start-up: maps created, cache open, kernel types (%s) at %.0f ms",
		  d->ktypes.from, (exe_now_ns() - d->t_start) / 1e6);
	err = exe_mgr_new(tracer_maps(d->tr), d->store, &d->em);
	if (!err && d->cfg.fp_only)
		exe_mgr_set_fp_only(d->em, true);
	/* the chunk count is the whole host's: -pid runs leave it alone */
	if (!err && d->cfg.n_pids)
		exe_mgr_set_chunk_hint(d->em, false);
	if (!err)
		err = pm_new(d->em, tracer_maps(d->tr), &d->pm);
	if (!err)
		err = interp_mgr_new(tracer_maps(d->tr), d->store, d->cfg.tracers,
				     &d->im);
	if (err)
		return err;
	exe_mgr_set_detect(d->em, detect_file, d);
	pm_set_synced_hook(d->pm, interp_synced, d->im);
	pm_set_forget_hook(d->pm, interp_forget, d->im);
	po.interp_frame = interp_symbolize;
	po.interp_arg = d->im;
	po.period_ns = 1000000000ULL / d->cfg.samples_per_second;
	po.send_error_frames = d->cfg.send_error_frames;
	/* inline frames (issue 23): one cache for both pipelines, which run
	 * on this thread */
	if (!err && d->cfg.inline_frames) {
		struct inl_opts io = { .store = d->store };

		if (d->dbgd) {
			io.fetch_gen = fetch_gen;
			io.fetch_busy = fetch_busy;
			io.fetch_arg = d->dbgd;
		}
		err = inl_new(&io, &d->inl);
	}
	po.inlines = d->inl;
	po.native_lines = d->cfg.folded_lines;
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

	/* Load -pid's processes (or the running ones) while the programs
	 * load, so none of their samples is unsynced (the others load by
	 * first sample).  A
	 * process that execs after its maps were read and before the exec
	 * tracepoint attaches keeps its old mappings until its first sample
	 * with an unknown pc makes us read them again. */
	tracer_defer_chunks(d->tr);
	beside_start(&load, load_processes, d);
	err = tracer_load(d->tr, d->ktypes.types, d->ktypes.len);
	if (!err && !d->cfg.n_pids && tracer_programs_kept(d->tr)) {
		err = go_live(d);
		if (!err)
			scan_grace(d);
	}
	__atomic_store_n(&d->programs_loaded, true, __ATOMIC_RELEASE);
	/* The whole system's sampling goes live now: the scan queues what
	 * it has not loaded, but the load in flight (a busy host's new file
	 * can take a second to extract) finishes on its thread while the
	 * records wait in the drain queue.  -pid's processes all load
	 * first. */
	if (!err && !d->cfg.n_pids && !d->sampling_on)
		err = go_live(d);
	beside_join(&load, err);
	if (err)
		return err;
	/* kept programs were not loaded with the types: not a test of them */
	if (tracer_programs_kept(d->tr))
		kbtf_cache_release(&d->ktypes);
	else
		kbtf_cache_settle(&d->ktypes, d->store,
				  tracer_types_rejected(d->tr));
	log_debug("start-up: programs and processes loaded at %.0f ms",
		  (exe_now_ns() - d->t_start) / 1e6);
	/* the kernel's symbols (a parse of /proc/kallsyms, tens of ms of a
	 * CPU) once the start-up's loads are done, not beside them: the
	 * records wait in the drain queue until this thread serves them,
	 * and a symbolization before the parse ends waits for it */
	ksyms_async_start(d->ks);
	if (!d->sampling_on && (err = go_live(d)))
		return err;

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
	/* the start-up scan's queue first: the busy processes it had no
	 * time to load are sampled soonest */
	serve_requests(d, SERVICE_BUDGET_NS, false);
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
			release_memory(d);
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
			exe_chunks_remember(d->em);
			next_flush = now + 10000000000ULL;
		}
	}
	/* drain what is left in the rings */
	tracer_enable(d->tr, false);
	exe_chunks_remember(d->em);
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
	/* the chunks go with the maps, not one delete (one grace period)
	 * each */
	tracer_closing(d->tr);
	exe_mgr_free(d->em);
	tracer_free(d->tr); /* detaches everything */
	store_free(d->store);
	kbtf_cache_release(&d->ktypes);
	ksyms_async_free(d->ks);
	dbgf_set_fetch(NULL, NULL);
	dbgd_free(d->dbgd);
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
	if (argc > 1 && !strcmp(argv[1], "metrics-table"))
		return metrics_table_main(argc - 1, argv + 1);
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
	/* a fixed threshold: glibc's own rises with each large block freed
	 * (up to 32 MiB), after which a file's parse buffers come from the
	 * heap and stay there; mapped, they go back when freed */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	err = run(&d);
	cleanup(&d);
	return err ? 1 : 0;
}
