// SPDX-License-Identifier: Apache-2.0
/*
 * The metrics list (metrics_list.h): the Prometheus text and the exit
 * summary written from a snapshot show every metric, and the README's
 * table is the one the list generates.
 */
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "metrics_check.h"
#include "../integration/harness.h"

typedef void (*writer_fn)(FILE *f, const struct metrics_snap *s);

/* What fn wrote from s (fn NULL: the README table), NUL-terminated
 * (malloc'd), or NULL. */
static char *written(writer_fn fn, const struct metrics_snap *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (fn)
		fn(f, s);
	else
		metrics_write_markdown(f);
	fclose(f);
	return buf;
}

TEST(metrics_list_writers)
{
	/* the keys tests and users read keep their names; the series
	 * scrapers read too */
	static const struct {
		bool prom;
		const char *text, *what;
	} want[] = {
		{ false, " err_read_fault=7 ", "err_read_fault" },
		{ false, " requests_dropped=3 ", "requests_dropped" },
		{ false, " waited=5 ", "waited" },
		{ false, " startup_ms=250 ", "startup_ms in ms" },
		{ false, " exports_ok=9 ", "exports_ok" },
		{ false, " bpf_ns_per_sample=2000 ", "bpf_ns_per_sample" },
		{ true, "\nebpf_profiler_startup_seconds 0.25\n", "startup_seconds in s" },
		{ true, "\nebpf_profiler_bpf_events_total{event=\"ERR_READ_FAULT\"} 7\n",
		  "a BPF counter" },
		{ true, "\n# event ERR_READ_FAULT: unwind: reading user memory failed\n",
		  "its help (metric_help) before it" },
		{ true, "\nebpf_profiler_exports_total{result=\"ok\"} 9\n",
		  "a labelled series" },
	};
	struct metrics_snap *s = calloc(1, sizeof(*s));
	char *prom = NULL, *sum = NULL, why[256] = "";
	size_t i;
	int n;

	if (!ASSERT_NOT_NULL(s, "snapshot"))
		return;
	/* figures that show where they land */
	s->ts.samples = 1234;
	s->bpf[METRIC_ERR_READ_FAULT] = 7;
	s->ps.requests_dropped = 3;
	s->ts.waited = 5;
	s->startup_ns = 250000000;
	s->n_progs = 1;
	s->progs[0] = (struct tracer_prog_stats){ .name = "sample", .run_cnt = 100,
						  .run_time_ns = 200000 };
	s->rs.send_ok = 9;
	prom = written(metrics_write_prom, s);
	sum = written(metrics_write_summary, s);
	if (!ASSERT_TRUE(prom && sum, "written"))
		goto out;
	n = h_prom_check(prom, "ebpf_profiler_", why, sizeof(why));
	if (!ASSERT_GT(n, 100, "valid Prometheus text"))
		printf("      %s\n", why);
	n = metrics_check_all(prom, sum, why, sizeof(why));
	test_note("%d metrics; %zu bytes of Prometheus text, a summary of %zu",
		  n, strlen(prom), strlen(sum));
	if (!ASSERT_GT(n, 40, "every metric in both outputs"))
		printf("      %s\n", why);
	ASSERT_TRUE(!strncmp(sum, "samples=1234 ", 13), "the summary starts with samples=");
	ASSERT_TRUE(strchr(sum, '\n') == sum + strlen(sum) - 1, "the summary is one line");
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ASSERT_TRUE(strstr(want[i].prom ? prom : sum, want[i].text) != NULL,
			    want[i].what);
out:
	free(prom);
	free(sum);
	free(s);
}

/* The text between the README's markers. */
static char *readme_table(const char *readme)
{
	const char *begin = strstr(readme, "<!-- metrics-table:");
	const char *end = strstr(readme, "<!-- end metrics-table -->");

	if (!begin || !end)
		return NULL;
	begin = strstr(begin, "-->\n");
	if (!begin || begin > end)
		return NULL;
	begin += 4;
	return strndup(begin, (size_t)(end - begin));
}

TEST(metrics_readme_table)
{
	char path[512], *readme = NULL, *have = NULL, *want = written(NULL, NULL);
	size_t i, line = 1;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/README.md", test_srcdir());
	f = fopen(path, "re");
	if (!ASSERT_NOT_NULL(f, "README.md"))
		goto out;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	readme = calloc(1, (size_t)n + 1);
	if (readme && fread(readme, 1, (size_t)n, f) != (size_t)n)
		readme[0] = 0;
	fclose(f);
	have = readme ? readme_table(readme) : NULL;
	if (!ASSERT_TRUE(have && want, "the README's markers"))
		goto out;
	for (i = 0; have[i] && have[i] == want[i]; i++)
		line += have[i] == '\n';
	if (!ASSERT_TRUE(!strcmp(have, want),
			 "the README's table is the generated one"))
		printf("      line %zu of the table differs; regenerate it with "
		       "./ebpf-profiler metrics-table\n", line);
out:
	free(readme);
	free(have);
	free(want);
}
