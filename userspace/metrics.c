// SPDX-License-Identifier: Apache-2.0
#include "metrics.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "budget.h"
#include "metrics_list.h"

/* ---- the BPF counters ------------------------------------------------------ */

#define METRIC_NAME_(name, desc) [METRIC_##name] = #name,
#define METRIC_HELP_(name, desc) [METRIC_##name] = desc,
static const char *const names[METRIC_CORE_COUNT] = { METRICS_LIST(METRIC_NAME_) };
static const char *const help[METRIC_CORE_COUNT] = { METRICS_LIST(METRIC_HELP_) };

/* The core counters here, the interpreters' from their modules. */
const char *metric_name(unsigned id)
{
	const char *n = id < METRIC_CORE_COUNT ? names[id] :
						 interp_metric_name(id);

	return n ? n : "?";
}

bool metric_defined(unsigned id)
{
	return id < METRIC_CORE_COUNT || interp_metric_name(id) != NULL;
}

const char *metric_help(unsigned id)
{
	const char *n = id < METRIC_CORE_COUNT ? help[id] :
						 interp_metric_help(id);

	return n ? n : "?";
}

/* ---- the list ------------------------------------------------------------ */

struct agent_metric {
	const char *name, *type, *labels, *help, *key;
};

#define AGENT_METRIC_(name, type, labels, help, key, source)                   \
	{ #name, #type, labels, help, key },
static const struct agent_metric agent_metrics[] = { AGENT_METRICS(AGENT_METRIC_) };
#define N_AGENT_METRICS (sizeof(agent_metrics) / sizeof(agent_metrics[0]))

/* Where one metric's series go: the Prometheus text or the summary. */
struct mo {
	FILE *f;
	bool prom;
	bool started; /* the summary has a key already */
	const struct agent_metric *m;
};

/* A summary key, lowercase (the BPF side's names are upper case). */
static void put_key(struct mo *o, const char *key)
{
	if (o->started)
		fputc(' ', o->f);
	o->started = true;
	for (; *key; key++)
		fputc(tolower((unsigned char)*key), o->f);
	fputc('=', o->f);
}

/* A number as both outputs write it: integers whole, the rest with the
 * digits that matter (seconds to the ns; the summary to a tenth). */
static void put_number(FILE *f, double v, bool prom)
{
	if (v == floor(v) && fabs(v) < 1e15)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, prom ? "%.9g" : "%.1f", v);
}

/* A summary key alone (no Prometheus series): a total of a family's
 * series, or a figure under the name the summary had before the list. */
static void put_summary(struct mo *o, const char *key, double kv)
{
	if (!o->prom) {
		put_key(o, key);
		put_number(o->f, kv, false);
	}
}

/*
 * One series: labels are its Prometheus labels without the braces (NULL
 * for none), v its value; key its summary key (NULL or "": none), kv the
 * value the summary shows.
 */
static void put(struct mo *o, const char *labels, double v, const char *key,
		double kv)
{
	if (o->prom) {
		fprintf(o->f, "ebpf_profiler_%s", o->m->name);
		if (labels)
			fprintf(o->f, "{%s}", labels);
		fputc(' ', o->f);
		put_number(o->f, v, true);
		fputc('\n', o->f);
	} else if (key && *key) {
		put_summary(o, key, kv);
	}
}

/* A summary key and a text value (no Prometheus series). */
static void put_text(struct mo *o, const char *key, const char *text)
{
	if (!o->prom) {
		put_key(o, key);
		fputs(text, o->f);
	}
}

/* A series of a family with one label: label="value", summary key
 * <key>_<value> unless key is given ("": none). */
static void put_label(struct mo *o, const char *value, double v,
		      const char *key)
{
	char labels[160], k[96];

	snprintf(labels, sizeof(labels), "%s=\"%s\"", o->m->labels, value);
	if (!key) {
		snprintf(k, sizeof(k), "%s_%s", o->m->key, value);
		key = k;
	}
	put(o, labels, v, key, v);
}

/* ---- the families with labels (SERIES in the list) ------------------------- */

/* Every counter with its help in a comment; the summary names the errors
 * err_<reason> (as it did before the list), the rest bpf_<event>, and
 * keeps the names ring losses had. */
static void series_bpf_events(const struct metrics_snap *s, struct mo *o)
{
	unsigned i;

	for (i = 0; i < METRIC_COUNT; i++) {
		const char *n = metric_name(i);
		char k[96];

		if (!metric_defined(i))
			continue;
		if (o->prom)
			fprintf(o->f, "# event %s: %s\n", n, metric_help(i));
		if (!strncmp(n, "ERR_", 4))
			snprintf(k, sizeof(k), "err_%s", n + 4);
		else
			snprintf(k, sizeof(k), "bpf_%s", n);
		put_label(o, n, (double)s->bpf[i], k);
	}
	put_summary(o, "ringbuf_full", (double)s->bpf[METRIC_RINGBUF_FULL]);
	put_summary(o, "events_full", (double)s->bpf[METRIC_EVENTS_FULL]);
	put_summary(o, "events_lost", (double)s->bpf[METRIC_EVENTS_FULL]);
}

static void series_unwind_errors(const struct metrics_snap *s, struct mo *o)
{
	unsigned i;

	for (i = 0; i < METRIC_COUNT; i++)
		if (!strncmp(metric_name(i), "ERR_", 4))
			put_label(o, metric_name(i) + 4, (double)s->ts.errors_by_code[i],
				  "");
	put_summary(o, o->m->key, (double)s->ts.unwind_errors);
}

static void series_map_full(const struct metrics_snap *s, struct mo *o)
{
	unsigned k;

	put_label(o, "mappings", (double)s->ps.trie_full, "mappings_full");
	put_label(o, "delta_rows", (double)s->es.rows_full, "rows_full");
	put_label(o, "delta_pages", (double)s->es.pages_full, "pages_full");
	put_label(o, "rules", (double)s->es.rules_full, "rules_full");
	/* per interpreter runtime, labelled by its table's name */
	for (k = 1; k < INTERP_COUNT; k++) {
		const char *map = interp_module(k)->map_name;
		char key[64];

		if (!map)
			continue;
		snprintf(key, sizeof(key), "%s_full", map);
		put_label(o, map, (double)s->is[k].map_full, key);
	}
}

static void series_over_share(const struct metrics_snap *s, struct mo *o)
{
	static const char *const limit[2] = { "file", "owner" };
	unsigned t, l;

	for (t = 0; t < EXE_TABLE_COUNT; t++) {
		char labels[96], key[64];

		for (l = 0; l < 2; l++) {
			snprintf(labels, sizeof(labels), "table=\"%s\",limit=\"%s\"",
				 exe_table_name(t), limit[l]);
			put(o, labels, (double)s->es.over_share[t][l], NULL, 0);
		}
		snprintf(key, sizeof(key), "over_share_%s", exe_table_name(t));
		put_summary(o, key, (double)exe_over_share(&s->es, t));
	}
}

/* One series per interpreter runtime: a field of its stats. */
static void per_runtime(const struct metrics_snap *s, struct mo *o, size_t field)
{
	unsigned k;

	for (k = 1; k < INTERP_COUNT; k++)
		put_label(o, interp_name(k),
			  (double)*(const uint64_t *)((const char *)&s->is[k] + field),
			  NULL);
}

static void series_interp_symbolized(const struct metrics_snap *s, struct mo *o)
{
	unsigned k, r;

	for (k = 1; k < INTERP_COUNT; k++)
		for (r = 0; r < 2; r++) {
			const char *rt = interp_name(k);
			const char *res = r ? "failed" : "ok";
			uint64_t v = r ? s->is[k].symbolize_fail : s->is[k].symbolize_ok;
			char labels[96], key[96];

			snprintf(labels, sizeof(labels),
				 "runtime=\"%s\",result=\"%s\"", rt, res);
			snprintf(key, sizeof(key), "%s_%s_%s", o->m->key, rt, res);
			put(o, labels, (double)v, key, (double)v);
		}
}

static void series_process_events(const struct metrics_snap *s, struct mo *o)
{
	static const char *const type[] = { [PEV_EXEC] = "exec",
					    [PEV_EXIT] = "exit",
					    [PEV_UNKNOWN_PID] = "unknown_pid",
					    [PEV_UNKNOWN_PC] = "unknown_pc" };
	unsigned i;

	for (i = PEV_EXEC; i <= PEV_UNKNOWN_PC; i++)
		put_label(o, type[i], (double)s->events[i], NULL);
}

/* A series a program of the uint64_t at off in its statistics (struct
 * tracer_prog_stats), their sum in the summary. */
static void series_per_prog(const struct metrics_snap *s, struct mo *o,
			    size_t off)
{
	uint64_t sum = 0, v;
	int i;

	for (i = 0; i < s->n_progs; i++) {
		memcpy(&v, (const char *)&s->progs[i] + off, sizeof(v));
		put_label(o, s->progs[i].name, (double)v, "");
		sum += v;
	}
	put_summary(o, o->m->key, (double)sum);
}

/* Besides the time, the cost per run of the entry program and per trace
 * sent (the unwinding's; idle and filtered samples are cheap), when the
 * kernel keeps program statistics.  The off-CPU program runs per context
 * switch: its cost is its own figure, not the samples'. */
static void series_bpf_run_seconds(const struct metrics_snap *s, struct mo *o)
{
	uint64_t run_ns = 0, samples = 0, sw_runs = 0, sw_ns = 0;
	int i;

	for (i = 0; i < s->n_progs; i++) {
		put_label(o, s->progs[i].name, s->progs[i].run_time_ns / 1e9, "");
		if (!strcmp(s->progs[i].name, "offcpu_switch")) {
			sw_runs = s->progs[i].run_cnt;
			sw_ns = s->progs[i].run_time_ns;
			continue;
		}
		run_ns += s->progs[i].run_time_ns;
		if (!strcmp(s->progs[i].name, "sample"))
			samples = s->progs[i].run_cnt;
	}
	put_summary(o, o->m->key, run_ns / 1e6);
	if (samples)
		put_summary(o, "bpf_ns_per_sample", (double)run_ns / samples);
	if (samples && s->bpf[METRIC_SAMPLES_SENT])
		put_summary(o, "bpf_ns_per_trace",
		    (double)run_ns / s->bpf[METRIC_SAMPLES_SENT]);
	if (sw_runs) {
		put_summary(o, "bpf_switches", (double)sw_runs);
		put_summary(o, "bpf_ns_per_switch", (double)sw_ns / sw_runs);
	}
}

/* set by the Makefile; other builds of this file (the fuzz targets) have
 * no version of their own */
#ifndef EP_VERSION
#define EP_VERSION "unknown"
#endif
#ifndef EP_GIT_REV
#define EP_GIT_REV "unknown"
#endif

static void series_build_info(const struct metrics_snap *s, struct mo *o)
{
	(void)s;
	put(o, "version=\"" EP_VERSION "\",revision=\"" EP_GIT_REV "\"", 1, NULL, 0);
	put_text(o, o->m->key, EP_VERSION);
}

/* The summary: the total, and the reasons that counted any. */
static void series_over_budget(const struct metrics_snap *s, struct mo *o)
{
	unsigned i;

	(void)s;
	put_summary(o, o->m->key, (double)budget_total());
	for (i = 0; i < BUDGET_COUNT; i++) {
		char key[64];

		snprintf(key, sizeof(key), "over_budget_%s", budget_name(i));
		put_label(o, budget_name(i), (double)budget_count(i),
			  budget_count(i) ? key : "");
	}
}

static void series_mapping_mismatch(const struct metrics_snap *s, struct mo *o)
{
	uint64_t all = 0;
	unsigned i;

	for (i = PM_MISMATCH_NONE + 1; i < PM_MISMATCH_COUNT; i++) {
		put_label(o, pm_mismatch_name(i), (double)s->ps.mismatch[i], "");
		all += s->ps.mismatch[i];
	}
	put_summary(o, o->m->key, (double)all);
}

static void series_cache_enabled(const struct metrics_snap *s, struct mo *o)
{
	put_label(o, s->cache_off ? s->cache_off : "none", s->cache_off ? 0 : 1, "");
	put_text(o, o->m->key, s->cache_off ? "off" : "on");
	put_text(o, "cache_off_reason", s->cache_off ? s->cache_off : "none");
}

/* ---- the writers ----------------------------------------------------------- */

#define VALUE(e) put(o, NULL, (double)(e), o->m->key, (double)(e))
#define SCALED(e, k) put(o, NULL, (double)(e), o->m->key, (double)(e) * (k))
#define SERIES(fn) series_##fn(s, o)
#define LABELS(...) (__VA_ARGS__)
#define LABEL(value, e) put_label(o, value, (double)(e), NULL)
#define LABEL_KEY(value, e, key) put_label(o, value, (double)(e), key)
#define PER_RUNTIME(field) per_runtime(s, o, offsetof(struct interp_stats, field))
#define PER_PROG(field)                                                        \
	series_per_prog(s, o, offsetof(struct tracer_prog_stats, field))
#define AGENT_METRIC_WRITE_(n_, t_, l_, h_, k_, source)                        \
	o->m = &agent_metrics[i++];                                            \
	if (o->prom)                                                           \
		fprintf(o->f, "# HELP ebpf_profiler_%s %s\n"                   \
			      "# TYPE ebpf_profiler_%s %s\n",                  \
			o->m->name, o->m->help, o->m->name, o->m->type);       \
	source;

static void write_all(const struct metrics_snap *s, struct mo *o)
{
	size_t i = 0;

	AGENT_METRICS(AGENT_METRIC_WRITE_)
}

#undef VALUE
#undef SCALED
#undef SERIES
#undef LABELS
#undef LABEL
#undef LABEL_KEY
#undef PER_RUNTIME
#undef PER_PROG

void metrics_write_prom(FILE *f, const struct metrics_snap *s)
{
	struct mo o = { .f = f, .prom = true };

	write_all(s, &o);
}

void metrics_write_summary(FILE *f, const struct metrics_snap *s)
{
	struct mo o = { .f = f };

	write_all(s, &o);
	fputc('\n', f);
}

void metrics_snap_self(struct metrics_snap *s)
{
	struct rusage ru;
	long pages = 0, resident = 0;
	FILE *sm = fopen("/proc/self/statm", "re");

	if (sm) {
		if (fscanf(sm, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(sm);
	}
	s->rss_bytes = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
	getrusage(RUSAGE_SELF, &ru);
	s->cpu_ns = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
		    (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	s->rss_max_bytes = (uint64_t)ru.ru_maxrss * 1024;
}

/* A table cell: | stays a cell's end, so it is escaped. */
static void md_cell(FILE *f, const char *text)
{
	for (; *text; text++) {
		if (*text == '|')
			fputc('\\', f);
		fputc(*text, f);
	}
}

void metrics_write_markdown(FILE *f)
{
	size_t i;
	unsigned k;

	fprintf(f, "| metric | type | summary | |\n|---|---|---|---|\n");
	for (i = 0; i < N_AGENT_METRICS; i++) {
		const struct agent_metric *m = &agent_metrics[i];

		fprintf(f, "| `%s%s%s%s` | %s | `%s` | ", m->name,
			*m->labels ? "{" : "", m->labels, *m->labels ? "}" : "",
			m->type, m->key);
		md_cell(f, m->help);
		fprintf(f, " |\n");
	}
	fprintf(f, "\nThe BPF counters, `bpf_events_total{event}` (the interpreters' "
		   "counters after the core ones):\n\n| event | |\n|---|---|\n");
	for (k = 0; k < METRIC_COUNT; k++) {
		if (!metric_defined(k))
			continue;
		fprintf(f, "| `%s` | ", metric_name(k));
		md_cell(f, metric_help(k));
		fprintf(f, " |\n");
	}
}

int metrics_table_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	metrics_write_markdown(stdout);
	return fflush(stdout) ? 1 : 0;
}
