/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The record queue: copies of ring-buffer records, first in first out,
 * from the tracer's drain thread to the main thread.  Bounded by bytes:
 * a record that does not fit is dropped and counted, so the drain thread
 * never waits for the main thread and the BPF rings never wait for
 * either.  Thread-safe (one mutex); no dependency on the daemon.
 */
#ifndef EP_RECQ_H
#define EP_RECQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct recq;

/* One record, owned by whoever popped it (recq_release). */
struct recq_rec {
	struct recq_rec *next;
	uint32_t type; /* the caller's: which ring it came from */
	uint32_t len;  /* bytes in data */
	uint64_t data[]; /* 8-byte aligned, as the ring's records */
};

struct recq_stats {
	uint64_t pushed;
	uint64_t drops;	     /* records refused: the bound reached */
	uint64_t bytes;	     /* queued now */
	uint64_t bytes_max;  /* the most ever queued */
	uint64_t max_bytes;  /* the bound */
};

/* max_bytes: the bound on the records queued, their headers included. */
int recq_new(size_t max_bytes, struct recq **out);
/* Frees the records still queued; NULL is fine. */
void recq_free(struct recq *q);
/* Copy a record in.  Returns 0, or -ENOSPC (counted in drops) when it
 * does not fit, or -ENOMEM. */
int recq_push(struct recq *q, uint32_t type, const void *data, uint32_t len);
/* Take the oldest record, waiting up to timeout_ms for one (0: do not
 * wait).  NULL when there is none. */
struct recq_rec *recq_pop(struct recq *q, int timeout_ms);
/* Free a popped record. */
void recq_release(struct recq *q, struct recq_rec *r);
/* Wake a recq_pop that waits (it returns what there is). */
void recq_wake(struct recq *q);
void recq_get_stats(struct recq *q, struct recq_stats *out);

#endif
