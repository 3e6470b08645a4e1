/* SPDX-License-Identifier: Apache-2.0 */
#ifndef EP_METRICS_HTTP_H
#define EP_METRICS_HTTP_H

#include <stddef.h>
#include <stdint.h>

/*
 * A minimal HTTP server for Prometheus: GET /metrics returns the last text
 * published.  Runs on its own thread; the daemon publishes a snapshot once
 * a second, so a scrape never touches the daemon's structures.  Clients
 * are served at once by one poll() loop, at most 32 of them, each with
 * 2 s in all to send its request and take the answer.
 */
struct metrics_server;

/* addr: "HOST:PORT", ":PORT" or "PORT" (the last two bind to 127.0.0.1).
 * Returns 0 or a negative errno (after one clear message). */
int metrics_server_start(const char *addr, struct metrics_server **out);
/* Replace the served text (copied). */
void metrics_server_publish(struct metrics_server *s, const char *text,
			    size_t len);
/* The bound port (useful with port 0). */
int metrics_server_port(struct metrics_server *s);
void metrics_server_stop(struct metrics_server *s);

struct metrics_server_stats {
	uint64_t served;   /* answers sent whole */
	uint64_t timeouts; /* clients closed at their 2 s deadline */
	uint64_t evicted;  /* clients closed for a newer one (32 at once) */
};
/* Safe from any thread. */
void metrics_server_stats(struct metrics_server *s,
			  struct metrics_server_stats *out);

#endif
