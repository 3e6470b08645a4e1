/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's metrics: the BPF per-CPU counters' names and help (enum
 * metric_id), and the writers of every metric in metrics_list.h: the
 * Prometheus text of /metrics, the exit summary and the README's table.
 * The HTTP server is metrics_http.h.
 */
#ifndef EP_METRICS_H
#define EP_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

#include "profiler.h"
#include "dbgfetch.h"
#include "exemgr.h"
#include "inlcache.h"
#include "interp.h"
#include "metrics_http.h"
#include "pipeline.h"
#include "procmgr.h"
#include "reporter.h"
#include "tracer.h"

/* "ERR_NO_PAGE" style name, or "?" */
const char *metric_name(unsigned id);
const char *metric_help(unsigned id);
/* Whether id names a counter (an interpreter's range has free slots). */
bool metric_defined(unsigned id);

#define METRICS_MAX_PROGS 16

/*
 * The figures every metric is computed from, taken at one moment by the
 * daemon (main.c) from its modules.  The writers read nothing else, so a
 * test can write a snapshot of its own.
 */
struct metrics_snap {
	uint64_t bpf[METRIC_COUNT]; /* the per-CPU counters, summed */
	struct tp_stats ts;
	struct exe_stats es;
	struct pm_stats ps;
	struct interp_stats is[INTERP_COUNT];
	struct tracer_drain_stats ds;
	struct rep_stats rs; /* every sink's, summed */
	struct metrics_server_stats ms;
	struct inl_stats inl; /* zeros without -inline-frames */
	struct dbgd_stats dbgd; /* zeros without a debuginfod client */
	struct tracer_prog_stats progs[METRICS_MAX_PROGS];
	int n_progs;
	uint64_t cap_mappings, cap_rules; /* BPF map capacities */
	/* the daemon's own */
	uint64_t events[PEV_UNKNOWN_PC + 1]; /* process events, by type */
	uint64_t pids_seen;
	uint64_t startup_ns, load_ns, uptime_ns, service_ns_max;
	uint64_t sampling_toggles;
	bool sampling_on;
	bool programs_kept; /* -keep-programs: the last run's set taken */
	const char *cache_off; /* why the cache is off, NULL when on */
	uint64_t cache_put_errors;
	uint64_t read_faults;
	/* the process' own cost */
	uint64_t cpu_ns, rss_bytes, rss_max_bytes;
};

/* The process' CPU time and memory into s (getrusage, /proc/self/statm). */
void metrics_snap_self(struct metrics_snap *s);

/* Every metric as Prometheus text (HELP, TYPE, samples). */
void metrics_write_prom(FILE *f, const struct metrics_snap *s);
/* Every metric as one line of key=value, ending in a newline. */
void metrics_write_summary(FILE *f, const struct metrics_snap *s);
/* The README's table of every metric and of the BPF counters. */
void metrics_write_markdown(FILE *f);
/* The `metrics-table` subcommand: metrics_write_markdown to stdout. */
int metrics_table_main(int argc, char **argv);

#endif
