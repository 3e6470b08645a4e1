// SPDX-License-Identifier: Apache-2.0
/*
 * The tracer's rings: the drain thread that empties both into the queue,
 * and tracer_poll and tracer_flush, which hand the records to the
 * callbacks on the main thread.
 */
#include "tracer.h"
#include "tracer_int.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "exemgr.h"
#include "recq.h"

/* The drain thread empties the rings this often (trace records do not
 * wake it: BPF_RB_NO_WAKEUP), and a flush waits at most this long. */
#define DRAIN_PERIOD_MS 20
/* Records dispatched by one tracer_poll: the loop serves syncs between. */
#define POLL_MAX_RECORDS 4096

enum { REC_TRACE = 1, REC_EVENT = 2 };

/* ---- ring buffers --------------------------------------------------------- */

static int dispatch_trace(struct tracer *t, const void *data, size_t size)
{
	const struct trace_hdr *h = data;

	if (size < sizeof(*h) ||
	    sizeof(*h) + ((size_t)h->n_kernel + h->n_user +
			  ((h->flags & TRACE_F_OFFCPU) ? 1 : 0)) * 8 > size)
		return 0; /* cannot happen: the BPF side writes both */
	t->on_trace(t->arg, h, (const __u64 *)(h + 1));
	return 0;
}

static int dispatch_event(struct tracer *t, const void *data, size_t size)
{
	if (size >= sizeof(struct pid_event))
		t->on_event(t->arg, data);
	return 0;
}

/* The rings' callbacks: on the drain thread, a copy into the queue (a
 * full queue drops the record, counted); before it runs, the caller's
 * callbacks directly. */
int tr_on_trace_rec(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;

	if (t->threaded) {
		if (recq_push(t->q, REC_TRACE, data, (uint32_t)size))
			__atomic_fetch_add(&t->trace_drops, 1, __ATOMIC_RELAXED);
		return 0;
	}
	return dispatch_trace(t, data, size);
}

int tr_on_event_rec(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;

	if (t->threaded) {
		recq_push(t->q, REC_EVENT, data, (uint32_t)size);
		return 0;
	}
	return dispatch_event(t, data, size);
}

/* Empty both rings: a pass.  The stall is the time since the last pass
 * ended: how long a record could wait in a ring. */
static int drain_pass(struct tracer *t)
{
	int n = ring_buffer__consume(t->rb);
	uint64_t now = exe_now_ns(), stall;

	if (t->last_pass_ns) {
		stall = now - t->last_pass_ns;
		if (stall > __atomic_load_n(&t->stall_ns_max, __ATOMIC_RELAXED))
			__atomic_store_n(&t->stall_ns_max, stall,
					 __ATOMIC_RELAXED);
	}
	t->last_pass_ns = now;
	return n;
}

static void *drain_main(void *arg)
{
	struct tracer *t = arg;

	while (!__atomic_load_n(&t->drain_stop, __ATOMIC_ACQUIRE)) {
		/* woken by event records; trace records wait for the
		 * timeout */
		ring_buffer__poll(t->rb, DRAIN_PERIOD_MS);
		drain_pass(t);
		pthread_mutex_lock(&t->drain_lock);
		t->passes++;
		pthread_cond_broadcast(&t->drained);
		pthread_mutex_unlock(&t->drain_lock);
	}
	return NULL;
}

void tr_stop_drain(struct tracer *t)
{
	if (!t->threaded)
		return;
	__atomic_store_n(&t->drain_stop, true, __ATOMIC_RELEASE);
	pthread_join(t->drain, NULL);
	t->threaded = false;
	/* what came after the last pass is the caller's, directly */
}

int tr_start_drain(struct tracer *t)
{
	uint64_t qb = (uint64_t)t->rb_bytes * 8;
	sigset_t all, old;
	int err;

	if (qb < (16u << 20))
		qb = 16u << 20;
	err = recq_new(qb, &t->q);
	if (err)
		return err;
	t->last_pass_ns = exe_now_ns();
	t->threaded = true;
	/* signals go to the main thread: the thread starts with them all
	 * blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&t->drain, NULL, drain_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		t->threaded = false;
	return err;
}

/* The queue's records to the callbacks, in the order they were drained. */
static int dispatch_queued(struct tracer *t, int timeout_ms)
{
	struct recq_rec *r;
	int n = 0;

	while (n < POLL_MAX_RECORDS &&
	       (r = recq_pop(t->q, n ? 0 : timeout_ms))) {
		if (r->type == REC_TRACE)
			dispatch_trace(t, r->data, r->len);
		else
			dispatch_event(t, r->data, r->len);
		recq_release(t->q, r);
		n++;
	}
	return n;
}

int tracer_poll(struct tracer *t, int timeout_ms)
{
	int n, m;

	if (t->threaded)
		return dispatch_queued(t, timeout_ms);
	n = ring_buffer__poll(t->rb, timeout_ms);
	/* trace records do not wake us (BPF_RB_NO_WAKEUP): drain them */
	if (n < 0 && n != -EINTR)
		return n;
	m = drain_pass(t);
	if (m < 0)
		return m;
	/* records the drain thread queued before it stopped */
	if (t->q)
		m += dispatch_queued(t, 0);
	return (n > 0 ? n : 0) + m;
}

int tracer_flush(struct tracer *t)
{
	struct timespec until;
	uint64_t want;
	int n, total = 0;

	if (t->threaded) {
		/* a pass that starts after this call: it sees every record
		 * written so far */
		pthread_mutex_lock(&t->drain_lock);
		want = t->passes + 2;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 1;
		while (t->passes < want &&
		       pthread_cond_timedwait(&t->drained, &t->drain_lock,
					      &until) == 0)
			;
		pthread_mutex_unlock(&t->drain_lock);
	}
	while ((n = tracer_poll(t, 0)) > 0)
		total += n;
	return n < 0 ? n : total;
}

void tracer_drain_stats(struct tracer *t, struct tracer_drain_stats *out)
{
	struct recq_stats qs = { 0 };

	if (t->q)
		recq_get_stats(t->q, &qs);
	out->threaded = t->threaded;
	out->stall_ns_max = __atomic_load_n(&t->stall_ns_max, __ATOMIC_RELAXED);
	out->queue_drops = qs.drops;
	out->trace_drops = __atomic_load_n(&t->trace_drops, __ATOMIC_RELAXED);
	out->queue_bytes = qs.bytes;
	out->queue_bytes_max = qs.bytes_max;
	out->queue_bound = qs.max_bytes;
}
