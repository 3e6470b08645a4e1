// SPDX-License-Identifier: Apache-2.0
/*
 * The one-way pipeline's queues: the record queue from the drain thread
 * (bounds, drops, order, across threads), the process manager's request
 * queue (merging, the bound, the drop counter, the budget), and the
 * pipeline's records that wait for their process' sync.
 */
#include "test.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpfmaps_mem.h"
#include "exemgr.h"
#include "pipeline.h"
#include "procmgr.h"
#include "recq.h"

static uint64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

TEST(recq_bound_drops_order)
{
	struct recq *q = NULL;
	struct recq_stats st;
	struct recq_rec *r;
	uint32_t i, pushed = 0, popped = 0;
	uint64_t t0;
	char buf[100];

	if (!ASSERT_OK(recq_new(4096, &q), "recq_new"))
		return;
	/* records of 1..100 bytes, numbered in their first byte */
	for (i = 0; i < 200; i++) {
		memset(buf, (int)i, sizeof(buf));
		if (recq_push(q, 7, buf, 1 + i % 100) == 0)
			pushed++;
		else
			break;
	}
	recq_get_stats(q, &st);
	test_note("%u records fit in 4096 bytes, %llu queued", pushed,
		  (unsigned long long)st.bytes);
	ASSERT_GT(pushed, 10, "some fit");
	ASSERT_LT(pushed, 200, "not all fit");
	ASSERT_LE(st.bytes, 4096, "the bound holds");
	ASSERT_EQ(recq_push(q, 7, buf, 100), -ENOSPC, "a full queue refuses");
	recq_get_stats(q, &st);
	ASSERT_EQ(st.drops, 2, "both refusals counted");
	ASSERT_EQ(st.pushed, pushed, "pushed");
	/* first in, first out, whole */
	while ((r = recq_pop(q, 0))) {
		ASSERT_EQ(r->type, 7, "type");
		ASSERT_EQ(r->len, 1 + popped % 100, "length");
		ASSERT_EQ(((unsigned char *)r->data)[0], popped, "order");
		ASSERT_EQ(((unsigned char *)r->data)[r->len - 1], popped, "content");
		recq_release(q, r);
		popped++;
	}
	ASSERT_EQ(popped, pushed, "every record popped");
	recq_get_stats(q, &st);
	ASSERT_EQ(st.bytes, 0, "empty");
	ASSERT_GT(st.bytes_max, 3000, "the high-water mark");
	ASSERT_OK(recq_push(q, 1, buf, 8), "room again once popped");
	r = recq_pop(q, 0);
	ASSERT_TRUE(r != NULL, "popped");
	recq_release(q, r);
	/* an empty queue waits its timeout, and no longer */
	t0 = mono_ms();
	ASSERT_TRUE(recq_pop(q, 150) == NULL, "nothing");
	ASSERT_GE(mono_ms() - t0, 140, "waited the timeout");
	ASSERT_LT(mono_ms() - t0, 1000, "not much longer");
	/* records still queued are the queue's to free (LeakSanitizer) */
	recq_push(q, 1, buf, 50);
	recq_free(q);
}

struct producer {
	struct recq *q;
	uint32_t n;
	uint32_t refused;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	uint32_t i;

	for (i = 0; i < p->n; i++)
		if (recq_push(p->q, 1, &i, sizeof(i)))
			p->refused++;
	return NULL;
}

/* The drain thread's side and the main thread's, at once: every record
 * arrives once, in order, or is counted as dropped. */
TEST(recq_two_threads)
{
	struct producer p = { .n = 200000 };
	struct recq_stats st;
	struct recq_rec *r;
	uint32_t got = 0, last = 0, out_of_order = 0;
	pthread_t th;

	if (!ASSERT_OK(recq_new(64 << 10, &p.q), "recq_new"))
		return;
	if (!ASSERT_OK(pthread_create(&th, NULL, produce, &p), "thread"))
		goto out;
	for (;;) {
		r = recq_pop(p.q, 200);
		if (!r)
			break;
		uint32_t v;

		memcpy(&v, r->data, sizeof(v));
		if (got && v <= last)
			out_of_order++;
		last = v;
		got++;
		recq_release(p.q, r);
	}
	pthread_join(th, NULL);
	recq_get_stats(p.q, &st);
	test_note("%u records: %u popped, %u refused, at most %llu bytes queued",
		  p.n, got, p.refused, (unsigned long long)st.bytes_max);
	ASSERT_EQ(out_of_order, 0, "first in, first out");
	ASSERT_EQ(got + p.refused, p.n, "each popped or refused");
	ASSERT_EQ(st.drops, p.refused, "drops counted");
	ASSERT_LE(st.bytes_max, 64 << 10, "the bound held");
out:
	recq_free(p.q);
}

struct pm_fixture {
	struct bpfmaps *bm;
	struct exe_mgr *em;
	struct pm *pm;
};

static bool fixture(struct pm_fixture *f)
{
	memset(f, 0, sizeof(*f));
	return ASSERT_OK(bm_mem_new(DELTA_ROWS_DEFAULT, &f->bm), "maps") &&
	       ASSERT_OK(exe_mgr_new(f->bm, NULL, &f->em), "exe manager") &&
	       ASSERT_OK(pm_new(f->em, f->bm, &f->pm), "process manager");
}

static void fixture_free(struct pm_fixture *f)
{
	pm_free(f->pm);
	exe_mgr_free(f->em);
	bm_mem_free(f->bm);
}

/* A pid no process has (pid_max is at most 2^22). */
#define NO_PID(i) ((pid_t)(5000000 + (i)))

TEST(pm_requests_merge_bound_drops)
{
	struct pm_fixture f;
	struct pm_stats ps;
	struct pm_proc *p;
	pid_t self = getpid();
	int i;

	if (!fixture(&f))
		goto out;
	ASSERT_OK(pm_request(f.pm, self, PM_REQ_SYNC), "request");
	ASSERT_OK(pm_request(f.pm, self, PM_REQ_SYNC), "again");
	ASSERT_OK(pm_request(f.pm, self, PM_REQ_EXEC), "an exec");
	ASSERT_EQ(pm_pending(f.pm), 1, "one entry per pid");
	ASSERT_TRUE(pm_is_pending(f.pm, self), "pending");
	ASSERT_TRUE(pm_find(f.pm, self) == NULL, "nothing read yet");
	for (i = 1; i < PM_REQ_MAX; i++)
		ASSERT_OK(pm_request(f.pm, NO_PID(i), PM_REQ_SYNC), "fill");
	ASSERT_EQ(pm_pending(f.pm), PM_REQ_MAX, "full");
	ASSERT_EQ(pm_request(f.pm, NO_PID(0), PM_REQ_SYNC), -ENOSPC,
		  "past the bound: refused");
	ASSERT_OK(pm_request(f.pm, NO_PID(7), PM_REQ_EXIT),
		  "a pid already queued merges even when full");
	pm_get_stats(f.pm, &ps);
	ASSERT_EQ(ps.requests, PM_REQ_MAX, "queued");
	ASSERT_EQ(ps.requests_merged, 3, "merged");
	ASSERT_EQ(ps.requests_dropped, 1, "requests_dropped");
	ASSERT_EQ(ps.requests_pending, PM_REQ_MAX, "pending");

	/* the first request is served first, even with no budget left */
	ASSERT_EQ(pm_service(f.pm, 1), 1, "one at least");
	p = pm_find(f.pm, self);
	ASSERT_TRUE(p && p->synced, "the first pid synced");
	ASSERT_FALSE(pm_is_pending(f.pm, self), "no longer pending");
	ASSERT_EQ(pm_service(f.pm, 0), PM_REQ_MAX - 1, "the rest, no limit");
	pm_get_stats(f.pm, &ps);
	ASSERT_EQ(ps.requests_served, PM_REQ_MAX, "served");
	ASSERT_EQ(ps.requests_pending, 0, "none left");
	ASSERT_EQ(ps.sync_errors, PM_REQ_MAX - 1, "gone pids counted");
	ASSERT_OK(pm_request(f.pm, NO_PID(0), PM_REQ_SYNC), "room again");
	/* an exit marks a known process */
	ASSERT_OK(pm_request(f.pm, self, PM_REQ_EXIT), "exit");
	pm_service(f.pm, 0);
	p = pm_find(f.pm, self);
	ASSERT_TRUE(p && p->exited, "exit served");
out:
	fixture_free(&f);
}

/* An exec forgets the old image and reads nothing: the new one loads
 * on its first sample (a SYNC request), or together with the exec when
 * a sample asked first. */
TEST(pm_exec_forgets_and_reads_nothing)
{
	struct pm_fixture f;
	struct pm_stats ps;
	struct pm_proc *p;
	pid_t self = getpid();
	uint32_t key = (uint32_t)self;
	struct pid_info pi;
	uint64_t syncs;

	if (!fixture(&f))
		goto out;
	if (!ASSERT_OK(pm_sync(f.pm, self), "loaded"))
		goto out;
	ASSERT_OK(bm_lookup(f.bm, BM_PID_INFO, &key, &pi), "pid_info written");
	pm_get_stats(f.pm, &ps);
	syncs = ps.syncs;
	ASSERT_TRUE(ps.mappings > 0 && ps.procs == 1, "mappings held");
	ASSERT_OK(pm_request(f.pm, self, PM_REQ_EXEC), "an exec");
	ASSERT_EQ(pm_service(f.pm, 0), 1, "served");
	pm_get_stats(f.pm, &ps);
	ASSERT_EQ(ps.syncs, syncs, "no maps read");
	ASSERT_TRUE(pm_find(f.pm, self) == NULL, "the process is forgotten");
	ASSERT_EQ(ps.procs, 0, "procs");
	ASSERT_EQ(ps.mappings, 0, "no mapping held");
	ASSERT_EQ(ps.trie_entries, 0, "its trie entries removed");
	ASSERT_EQ(bm_lookup(f.bm, BM_PID_INFO, &key, &pi), -ENOENT,
		  "pid_info removed");
	/* a sample asked, then the exec came: both in one entry, the new
	 * image read after the old one was forgotten */
	ASSERT_OK(pm_request(f.pm, self, PM_REQ_SYNC), "a sample");
	ASSERT_OK(pm_request(f.pm, self, PM_REQ_EXEC), "an exec");
	ASSERT_EQ(pm_service(f.pm, 0), 1, "one entry");
	p = pm_find(f.pm, self);
	ASSERT_TRUE(p && p->synced, "loaded again");
	pm_get_stats(f.pm, &ps);
	ASSERT_EQ(ps.syncs, syncs + 1, "one read");
	/* an exec of a process never loaded: nothing to do */
	ASSERT_OK(pm_request(f.pm, NO_PID(1), PM_REQ_EXEC), "unknown");
	ASSERT_EQ(pm_service(f.pm, 0), 1, "served");
	pm_get_stats(f.pm, &ps);
	ASSERT_EQ(ps.syncs, syncs + 1, "still one read");
out:
	fixture_free(&f);
}

/* A mapping that shrinks in place (its last page unmapped) keeps its
 * trie entry: the old mapping's prefixes, which include the new one's
 * first block, are removed before the new one's are written. */
TEST(pm_sync_mapping_shrunk_in_place_keeps_its_entry)
{
	const long pg = sysconf(_SC_PAGESIZE);
	struct pm_fixture f;
	struct mapping_key k;
	struct mapping_info v;
	uintptr_t a;
	void *r = MAP_FAILED;
	int fd = -1;

	if (!fixture(&f))
		goto out;
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	/* 3 pages of the runner's file at a 4-page boundary: blocks of 2
	 * pages and 1, then of 2 pages alone */
	r = mmap(NULL, 8 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_GE(fd, 0, "the runner's file") ||
	    !ASSERT_TRUE(r != MAP_FAILED, "an address range"))
		goto out;
	a = ((uintptr_t)r + 4 * pg - 1) & ~(uintptr_t)(4 * pg - 1);
	if (!ASSERT_TRUE(mmap((void *)a, 3 * pg, PROT_READ | PROT_EXEC,
			      MAP_PRIVATE | MAP_FIXED, fd, 0) != MAP_FAILED,
			 "3 executable pages"))
		goto out;
	k = (struct mapping_key){ .prefixlen = 32 + 64 - __builtin_ctzl(2 * pg),
				  .pid_be = htobe32((uint32_t)getpid()),
				  .addr_be = htobe64(a) };
	ASSERT_OK(pm_sync(f.pm, getpid()), "loaded");
	ASSERT_OK(bm_lookup(f.bm, BM_MAPPINGS, &k, &v), "the first block's entry");
	ASSERT_EQ(v.end, a + 3 * pg, "the 3-page mapping");
	munmap((void *)(a + 2 * pg), pg);
	ASSERT_OK(pm_sync(f.pm, getpid()), "loaded again");
	ASSERT_OK(bm_lookup(f.bm, BM_MAPPINGS, &k, &v),
		  "the first block's entry, kept");
	ASSERT_EQ(v.end, a + 2 * pg, "now the 2-page mapping's");
	k.prefixlen = 32 + 64 - __builtin_ctzl(pg);
	k.addr_be = htobe64(a + 2 * pg);
	ASSERT_EQ(bm_lookup(f.bm, BM_MAPPINGS, &k, &v), -ENOENT,
		  "the unmapped page's entry removed");
out:
	if (r != MAP_FAILED)
		munmap(r, 8 * pg);
	if (fd >= 0)
		close(fd);
	fixture_free(&f);
}

/* 2 ms of work, 8 ms asleep, for ever: a runtime's duty cycle, asleep
 * at most instants the scan could look. */
static void work_and_sleep(void)
{
	for (;;) {
		struct timespec t0, t;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000000000L +
			       (t.tv_nsec - t0.tv_nsec) <
		       2000000L);
		usleep(8000);
	}
}

/* At start-up only the busy processes load: a spinning child does, and
 * so does one that works a fifth of the time (asleep whenever it is
 * looked at, but it used a share of a CPU since it started); a sleeping
 * one waits for its first sample. */
TEST(pm_scan_running_loads_the_busy_not_the_sleeping)
{
	struct pm_fixture f;
	struct pm_stat st;
	struct pm_stats ps;
	pid_t busy, idle, duty;
	int n, i;

	busy = fork();
	if (busy == 0)
		for (;;)
			__asm__ volatile("" ::: "memory");
	idle = fork();
	if (idle == 0) {
		pause();
		_exit(0);
	}
	duty = fork();
	if (duty == 0)
		work_and_sleep();
	if (!ASSERT_GT(busy, 0, "fork") || !ASSERT_GT(idle, 0, "fork") ||
	    !ASSERT_GT(duty, 0, "fork"))
		goto kill;
	/* the sleeper asleep; the spinner runnable whenever it is looked
	 * at; the worker has used a few clock ticks */
	for (i = 0; i < 100 && pm_proc_state(idle) != 'S'; i++)
		usleep(10000);
	for (i = 0; i < 200 && (pm_proc_stat(duty, &st) || st.ticks < 3); i++)
		usleep(10000);
	ASSERT_OK(pm_proc_stat(idle, &st), "the sleeper's stat read");
	ASSERT_EQ(st.ticks, 0, "the sleeper used no CPU");
	ASSERT_TRUE(st.start > 0, "a start time");
	if (!fixture(&f))
		goto kill;
	n = pm_scan_running(f.pm, NULL);
	pm_get_stats(f.pm, &ps);
	test_note("%d busy processes loaded of %llu (%llu running, %llu busy, "
		  "%llu ran during the scan)",
		  n, (unsigned long long)ps.scan_listed,
		  (unsigned long long)ps.scan_running,
		  (unsigned long long)ps.scan_busy,
		  (unsigned long long)ps.scan_grew);
	ASSERT_GE(n, 2, "at least the spinner and the worker");
	ASSERT_TRUE(pm_find(f.pm, busy) && pm_find(f.pm, busy)->synced,
		    "the spinner loaded");
	ASSERT_TRUE(pm_find(f.pm, duty) && pm_find(f.pm, duty)->synced,
		    "the worker loaded");
	ASSERT_TRUE(pm_find(f.pm, idle) == NULL, "the sleeper not read");
	ASSERT_EQ(ps.scan_capped, 0, "none past the bound");
	fixture_free(&f);
	/* told to stop at once: nothing loads, the busy ones are queued */
	if (!fixture(&f))
		goto kill;
	{
		const bool stop = true;

		n = pm_scan_running(f.pm, &stop);
	}
	ASSERT_EQ(n, 0, "nothing loaded");
	ASSERT_TRUE(pm_is_pending(f.pm, busy) && pm_is_pending(f.pm, duty),
		    "the busy ones queued");
	ASSERT_TRUE(!pm_is_pending(f.pm, idle), "not the sleeper");
	fixture_free(&f);
kill:
	if (busy > 0)
		kill(busy, SIGKILL);
	if (idle > 0)
		kill(idle, SIGKILL);
	if (duty > 0)
		kill(duty, SIGKILL);
	waitpid(busy, NULL, 0);
	waitpid(idle, NULL, 0);
	waitpid(duty, NULL, 0);
}

/* A function of this binary to sample. */
__attribute__((noinline)) static int pipe_probe_fn(int x)
{
	return x * 3 + 1;
}

static const char *leaf_name(const struct rep_batch *b, uint32_t sample)
{
	const struct rep_stack *s = &b->stacks[b->samples[sample].stack];

	return s->n ? b->locations[s->locations[0]].function : NULL;
}

/* The record h (one frame, w) of an empty pipeline waits (waits); once
 * the loop served its process' request and the pipeline retried, nothing
 * waits (served).  b gets the batch. */
static void wait_then_serve(struct tp *tp, struct pm *pm,
			    const struct trace_hdr *h, const __u64 *w,
			    struct rep_batch *b, const char *waits,
			    const char *served)
{
	tp_add_trace(tp, h, w);
	ASSERT_EQ(tp_waiting(tp), 1, waits);
	pm_service(pm, 0);
	tp_retry(tp, false);
	ASSERT_EQ(tp_waiting(tp), 0, served);
	tp_batch(tp, b);
}

/* A record of a process not loaded waits for its sync, is named once
 * the loop served it, and never triggers the sync itself. */
TEST(pipeline_record_waits_for_sync)
{
	struct trace_hdr h = { .pid = (uint32_t)getpid(), .tid = (uint32_t)gettid(),
			       .flags = TRACE_F_UNSYNCED, .n_user = 1,
			       .n_frames = 1, .comm = "pipe-test" };
	struct tp_opts o = { .period_ns = 1000000 };
	__u64 w = FRAME_WORD(FRAME_RAW, 0,
			     (uint64_t)(uintptr_t)pipe_probe_fn + 2);
	struct pm_fixture f;
	struct rep_batch b;
	struct tp_stats ts;
	struct pm_stats ps;
	struct tp *tp = NULL;
	const char *name;

	pipe_probe_fn(1);
	if (!fixture(&f) || !ASSERT_OK(tp_new(f.pm, f.em, NULL, &o, &tp), "tp"))
		goto out;
	tp_add_trace(tp, &h, &w);
	tp_add_trace(tp, &h, &w);
	pm_get_stats(f.pm, &ps);
	ASSERT_EQ(ps.syncs, 0, "the callback read nothing");
	ASSERT_EQ(pm_pending(f.pm), 1, "one request for both");
	ASSERT_EQ(tp_waiting(tp), 2, "both wait");
	tp_retry(tp, false);
	ASSERT_EQ(tp_waiting(tp), 2, "still waiting: not served");
	tp_batch(tp, &b);
	ASSERT_EQ(b.n_samples, 0, "nothing aggregated yet");

	ASSERT_EQ(pm_service(f.pm, 50000000), 1, "the loop serves it");
	tp_retry(tp, false);
	ASSERT_EQ(tp_waiting(tp), 0, "none waits");
	tp_batch(tp, &b);
	if (ASSERT_EQ(b.n_samples, 1, "one sample") &&
	    ASSERT_EQ(b.samples[0].count, 2, "of two records")) {
		name = leaf_name(&b, 0);
		test_note("leaf: %s", name ? name : "(null)");
		ASSERT_TRUE(name && !strcmp(name, "pipe_probe_fn"),
			    "named through the synced mappings");
	}
	tp_get_stats(tp, &ts);
	ASSERT_EQ(ts.waited, 2, "waited");
	ASSERT_EQ(ts.unsynced, 2, "unsynced");
	ASSERT_EQ(ts.samples, 2, "samples");

	/* a synced process: named at once, no request */
	tp_reset(tp);
	tp_add_trace(tp, &h, &w);
	ASSERT_EQ(tp_waiting(tp), 0, "no wait once synced");
	ASSERT_EQ(pm_pending(f.pm), 0, "no request");
	tp_batch(tp, &b);
	ASSERT_EQ(b.n_samples, 1, "aggregated at once");

	/* a request pending for it (an exec, a pc in no known mapping): the
	 * record waits for that sync too */
	tp_reset(tp);
	ASSERT_OK(pm_request(f.pm, getpid(), PM_REQ_SYNC), "request");
	h.flags = 0;
	wait_then_serve(tp, f.pm, &h, &w, &b, "waits for the pending request",
			"served: aggregated");
	ASSERT_EQ(b.n_samples, 1, "one sample");
	h.flags = TRACE_F_UNSYNCED;

	/* a process that is gone: its request fails, the record is named
	 * as well as it can be; an interval's cut takes what still waits */
	tp_reset(tp);
	h.pid = (uint32_t)NO_PID(1);
	wait_then_serve(tp, f.pm, &h, &w, &b, "waits",
			"done with once its request failed");
	if (ASSERT_EQ(b.n_samples, 1, "aggregated")) {
		name = leaf_name(&b, 0);
		ASSERT_TRUE(name && !strcmp(name, "[unknown]"), "[unknown]");
	}
	h.pid = (uint32_t)NO_PID(2);
	tp_add_trace(tp, &h, &w);
	tp_retry(tp, true);
	ASSERT_EQ(tp_waiting(tp), 0, "forced at the cut");
	tp_batch(tp, &b);
	ASSERT_EQ(b.n_samples, 2, "in this interval");
out:
	tp_free(tp);
	fixture_free(&f);
}

/* Interning by whole keys: every distinct frame, stack and sample is its
 * own entry, and an equal one is found again. */
TEST(pipeline_interns_exact_keys)
{
	struct trace_hdr h = { .pid = 0, .tid = 0, .flags = TRACE_F_KERNEL_ONLY,
			       .n_kernel = 2, .comm = "kthread" };
	struct tp_opts o = { .period_ns = 1000000 };
	struct pm_fixture f;
	struct rep_batch b;
	struct tp *tp = NULL;
	__u64 w[2];
	uint32_t i, round, bad = 0, n = 50000;

	if (!fixture(&f) || !ASSERT_OK(tp_new(f.pm, f.em, NULL, &o, &tp), "tp"))
		goto out;
	/* stacks (a, a + 1): every location but the ends in two stacks */
	for (round = 0; round < 2; round++)
		for (i = 0; i < n; i++) {
			w[0] = 0xffffffff81000000ULL + i;
			w[1] = w[0] + 1;
			h.tid = i % 7;
			tp_add_trace(tp, &h, w);
		}
	tp_batch(tp, &b);
	ASSERT_EQ(b.n_locations, n + 1, "one location per address");
	ASSERT_EQ(b.n_stacks, n, "one stack per pair");
	ASSERT_EQ(b.n_samples, n, "the second round found every sample");
	for (i = 0; i < b.n_samples; i++) {
		const struct rep_stack *s = &b.stacks[b.samples[i].stack];

		if (b.samples[i].count != 2 || s->n != 2 ||
		    b.locations[s->locations[1]].address !=
			    b.locations[s->locations[0]].address + 1)
			bad++;
	}
	ASSERT_EQ(bad, 0, "each sample: two records, its own frames");
out:
	tp_free(tp);
	fixture_free(&f);
}
