// SPDX-License-Identifier: Apache-2.0
#include "metrics.h"

#include "interp.h"

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

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

struct metrics_server {
	int fd;
	int stop_pipe[2];
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	char *text;
	size_t len;
	int port;
};

/* A client has this long to send its request, and again to take the
 * answer: one thread serves every client, so a slow one must not hold
 * it (the bound is on the whole request, not on each read). */
#define CLIENT_MS 2000

static long ms_left(const struct timespec *end)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (end->tv_sec - now.tv_sec) * 1000 +
	       (end->tv_nsec - now.tv_nsec) / 1000000;
}

static void serve_one(struct metrics_server *s, int c)
{
	char req[2048], hdr[256], *body = NULL;
	size_t n = 0, len = 0;
	struct pollfd p = { .fd = c, .events = POLLIN };
	struct timeval tv = { CLIENT_MS / 1000, 0 };
	struct timespec end;
	long left;
	bool ok;

	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += CLIENT_MS / 1000;
	/* read the request head, bounded in size and time */
	while (n < sizeof(req) - 1 && (left = ms_left(&end)) > 0 &&
	       poll(&p, 1, (int)left) > 0) {
		ssize_t r = read(c, req + n, sizeof(req) - 1 - n);
		if (r <= 0)
			break;
		n += r;
		req[n] = 0;
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[n] = 0;
	ok = !strncmp(req, "GET /metrics ", 13) || !strncmp(req, "GET /metrics?", 13);
	if (ok) {
		pthread_mutex_lock(&s->lock);
		if (s->text) {
			body = malloc(s->len);
			if (body) {
				memcpy(body, s->text, s->len);
				len = s->len;
			}
		}
		pthread_mutex_unlock(&s->lock);
		snprintf(hdr, sizeof(hdr),
			 "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
			 len);
	} else {
		snprintf(hdr, sizeof(hdr),
			 "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n"
			 "Connection: close\r\n\r\n");
	}
	if (write(c, hdr, strlen(hdr)) > 0 && body)
		(void)!write(c, body, len);
	free(body);
}

static void *server_main(void *arg)
{
	struct metrics_server *s = arg;
	struct pollfd p[2] = { { .fd = s->fd, .events = POLLIN },
			       { .fd = s->stop_pipe[0], .events = POLLIN } };

	for (;;) {
		int c;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		serve_one(s, c);
		close(c);
	}
	return NULL;
}

int metrics_server_start(const char *addr, struct metrics_server **out)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	struct metrics_server *s;
	char host[256] = "127.0.0.1", port[16];
	const char *colon = strrchr(addr, ':');
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int one = 1, err;

	*out = NULL;
	if (colon) {
		size_t hl = colon - addr;
		if (hl >= sizeof(host))
			return -EINVAL;
		if (hl) {
			/* [::1]:9090 */
			if (addr[0] == '[' && colon[-1] == ']') {
				memcpy(host, addr + 1, hl - 2);
				host[hl - 2] = 0;
			} else {
				memcpy(host, addr, hl);
				host[hl] = 0;
			}
		}
		snprintf(port, sizeof(port), "%s", colon + 1);
	} else {
		snprintf(port, sizeof(port), "%s", addr);
	}
	err = getaddrinfo(host, port, &hints, &res);
	if (err) {
		fprintf(stderr, "ebpf-profiler: -metrics-address %s: %s\n", addr,
			gai_strerror(err));
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		freeaddrinfo(res);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->stop_pipe[0] = s->stop_pipe[1] = -1;
	s->fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0 ||
	    setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s->fd, res->ai_addr, res->ai_addrlen) || listen(s->fd, 16) ||
	    pipe2(s->stop_pipe, O_CLOEXEC)) {
		err = -errno;
		fprintf(stderr, "ebpf-profiler: -metrics-address %s: %s\n", addr,
			strerror(-err));
		freeaddrinfo(res);
		metrics_server_stop(s);
		return err;
	}
	freeaddrinfo(res);
	if (getsockname(s->fd, (struct sockaddr *)&ss, &sl) == 0)
		s->port = ntohs(ss.ss_family == AF_INET6 ?
					((struct sockaddr_in6 *)&ss)->sin6_port :
					((struct sockaddr_in *)&ss)->sin_port);
	err = -pthread_create(&s->thread, NULL, server_main, s);
	s->running = !err;
	if (err) {
		metrics_server_stop(s);
		return err;
	}
	*out = s;
	return 0;
}

void metrics_server_publish(struct metrics_server *s, const char *text,
			    size_t len)
{
	char *copy = malloc(len ? len : 1);

	if (!copy)
		return;
	memcpy(copy, text, len);
	pthread_mutex_lock(&s->lock);
	free(s->text);
	s->text = copy;
	s->len = len;
	pthread_mutex_unlock(&s->lock);
}

int metrics_server_port(struct metrics_server *s)
{
	return s->port;
}

void metrics_server_stop(struct metrics_server *s)
{
	if (!s)
		return;
	if (s->running) {
		(void)!write(s->stop_pipe[1], "x", 1);
		pthread_join(s->thread, NULL);
	}
	if (s->fd >= 0)
		close(s->fd);
	if (s->stop_pipe[0] >= 0)
		close(s->stop_pipe[0]);
	if (s->stop_pipe[1] >= 0)
		close(s->stop_pipe[1]);
	pthread_mutex_destroy(&s->lock);
	free(s->text);
	free(s);
}
