// SPDX-License-Identifier: Apache-2.0
#include "recq.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct recq {
	pthread_mutex_t lock;
	pthread_cond_t more; /* a record was pushed, or recq_wake */
	struct recq_rec *head, *tail;
	uint64_t wakes;	     /* recq_wake calls, so a waiter sees one */
	struct recq_stats st;
};

static size_t rec_bytes(uint32_t len)
{
	return sizeof(struct recq_rec) + (((size_t)len + 7) & ~(size_t)7);
}

int recq_new(size_t max_bytes, struct recq **out)
{
	struct recq *q = calloc(1, sizeof(*q));
	pthread_condattr_t ca;

	*out = NULL;
	if (!q)
		return -ENOMEM;
	/* timed waits on the monotonic clock: a clock step is no wait */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->more, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&q->lock, NULL);
	q->st.max_bytes = max_bytes;
	*out = q;
	return 0;
}

void recq_free(struct recq *q)
{
	struct recq_rec *r, *n;

	if (!q)
		return;
	for (r = q->head; r; r = n) {
		n = r->next;
		free(r);
	}
	pthread_cond_destroy(&q->more);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

int recq_push(struct recq *q, uint32_t type, const void *data, uint32_t len)
{
	size_t bytes = rec_bytes(len);
	struct recq_rec *r;

	/* copied before the lock is taken: the main thread pops meanwhile */
	r = malloc(bytes);
	if (!r)
		return -ENOMEM;
	r->next = NULL;
	r->type = type;
	r->len = len;
	memcpy(r->data, data, len);
	pthread_mutex_lock(&q->lock);
	if (q->st.bytes + bytes > q->st.max_bytes) {
		q->st.drops++;
		pthread_mutex_unlock(&q->lock);
		free(r);
		return -ENOSPC;
	}
	if (q->tail)
		q->tail->next = r;
	else
		q->head = r;
	q->tail = r;
	q->st.pushed++;
	q->st.bytes += bytes;
	if (q->st.bytes > q->st.bytes_max)
		q->st.bytes_max = q->st.bytes;
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

struct recq_rec *recq_pop(struct recq *q, int timeout_ms)
{
	struct recq_rec *r;
	struct timespec until;
	uint64_t wakes;

	pthread_mutex_lock(&q->lock);
	if (!q->head && timeout_ms > 0) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += timeout_ms / 1000;
		until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		wakes = q->wakes;
		while (!q->head && q->wakes == wakes &&
		       pthread_cond_timedwait(&q->more, &q->lock, &until) == 0)
			;
	}
	r = q->head;
	if (r) {
		q->head = r->next;
		if (!q->head)
			q->tail = NULL;
		r->next = NULL;
		q->st.bytes -= rec_bytes(r->len);
	}
	pthread_mutex_unlock(&q->lock);
	return r;
}

void recq_release(struct recq *q, struct recq_rec *r)
{
	(void)q;
	free(r);
}

void recq_wake(struct recq *q)
{
	pthread_mutex_lock(&q->lock);
	q->wakes++;
	pthread_cond_broadcast(&q->more);
	pthread_mutex_unlock(&q->lock);
}

void recq_get_stats(struct recq *q, struct recq_stats *out)
{
	pthread_mutex_lock(&q->lock);
	*out = q->st;
	pthread_mutex_unlock(&q->lock);
}
