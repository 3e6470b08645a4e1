// SPDX-License-Identifier: Apache-2.0
/*
 * Every metric of the list (userspace/metrics_list.h) in a running
 * daemon's /metrics, with HELP, TYPE and a value, and in its exit summary;
 * the figures of both agree with a workload's samples.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/metrics_check.h"
#include "../unit/test.h"
#include "harness.h"

TEST_ROOT(metrics_scrape_every_metric)
{
	char portarg[16], errpath[512], why[256] = "", *prom = NULL, *err = NULL;
	char *wargv[] = { (char *)h_workload("split-fp"), "10", NULL };
	const char *summary;
	int port = h_free_port(), n, st;
	double scraped;
	long long final;
	pid_t w, d = -1;

	snprintf(portarg, sizeof(portarg), "%d", port);
	snprintf(errpath, sizeof(errpath), "%s/scrape.err", test_tmpdir());
	w = h_spawn(wargv);
	if (!ASSERT_GT(w, 0, "workload"))
		return;
	{
		const char *args[] = { "-v", "-metrics-address", portarg, "-duration",
				       "4s", "-samples-per-second", "99", "-output",
				       test_tmppath("scrape.folded"), NULL };

		d = h_profile_started(args, errpath, 60);
	}
	if (!ASSERT_GT(d, 0, "daemon started"))
		goto out;
	/* the text is published at the start and every second */
	sleep(2);
	ASSERT_EQ(h_http_get(port, "/metrics", &prom), 200, "GET /metrics");
	st = h_wait(d, 60);
	d = -1;
	ASSERT_TRUE(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit 0");
	err = h_slurp(errpath);
	summary = err ? strstr(err, "\nsamples=") : NULL;
	if (!ASSERT_TRUE(prom && summary, "a scrape and a summary"))
		goto out;
	summary++;
	n = h_prom_check(prom, "ebpf_profiler_", why, sizeof(why));
	test_note("%d series; %s", n, n < 0 ? why : "the exposition parses");
	ASSERT_GT(n, 100, "valid Prometheus text");
	n = metrics_check_all(prom, summary, why, sizeof(why));
	test_note("%d metrics checked%s%s", n, n < 0 ? ": " : "", n < 0 ? why : "");
	ASSERT_GT(n, 40, "every metric: HELP, TYPE, a value and a summary key");
	/* the same figure in both: the scrape came first, so it counts no
	 * more samples than the summary, and a workload was running */
	scraped = h_metric(prom, "ebpf_profiler_samples_total");
	final = h_summary_value(summary, "samples");
	test_note("samples_total %.0f at the scrape, samples=%lld at the exit",
		  scraped, final);
	ASSERT_GT(scraped, 20, "samples counted by the scrape");
	ASSERT_GE(final, (long long)scraped, "the summary counts them all");
	ASSERT_GT(h_metric(prom, "ebpf_profiler_bpf_events_total{event=\"SAMPLES\"}"),
		  20, "the BPF counter");
	ASSERT_TRUE(strstr(prom, "\n# event SAMPLES: ") != NULL,
		    "a BPF counter's help");
	ASSERT_GE(h_summary_value(summary, "bpf_samples"), final,
		  "every sample aggregated ran the BPF entry program");
out:
	if (d > 0) {
		kill(d, SIGKILL);
		h_wait(d, 5);
	}
	kill(w, SIGKILL);
	h_wait(w, 5);
	free(prom);
	free(err);
}
