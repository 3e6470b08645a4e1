// SPDX-License-Identifier: Apache-2.0
#include "metrics_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/* Connections served at once.  One more evicts the oldest: a user who
 * holds connections open cannot keep a scraper out, only make each of
 * its own connections short-lived. */
#define MAX_CLIENTS 32
/* A client has this long in all, to send its request and to take the
 * answer; the server waits on every client at once (poll), so an idle or
 * slow one costs a slot, never another client's time. */
#define CLIENT_MS 2000
/* The request head we read: "GET /metrics HTTP/1.1" and a few headers. */
#define REQ_MAX 2048

struct client {
	int fd;
	uint64_t since_ms, deadline_ms;
	size_t n;	 /* request bytes read */
	char *out;	 /* the answer, once the request is read */
	size_t out_len, out_off;
	char req[REQ_MAX];
};

struct metrics_server {
	int fd;
	int stop_pipe[2];
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	char *text;
	size_t len;
	int port;
	struct client clients[MAX_CLIENTS];
	unsigned n_clients;
	/* read by other threads: atomics */
	uint64_t served, timeouts, evicted;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static void client_close(struct metrics_server *s, unsigned i)
{
	close(s->clients[i].fd);
	free(s->clients[i].out);
	s->clients[i] = s->clients[--s->n_clients];
}

/* The answer to the request in c->req: the last published text for
 * GET /metrics, 404 for anything else.  Returns false without memory. */
static bool client_answer(struct metrics_server *s, struct client *c)
{
	char hdr[256];
	bool ok = !strncmp(c->req, "GET /metrics ", 13) ||
		  !strncmp(c->req, "GET /metrics?", 13);
	size_t hl, len;

	pthread_mutex_lock(&s->lock);
	len = ok && s->text ? s->len : 0;
	if (ok)
		hl = (size_t)snprintf(hdr, sizeof(hdr),
				      "HTTP/1.0 200 OK\r\nContent-Type: text/plain; "
				      "version=0.0.4\r\nContent-Length: %zu\r\n"
				      "Connection: close\r\n\r\n",
				      len);
	else
		hl = (size_t)snprintf(hdr, sizeof(hdr),
				      "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n"
				      "Connection: close\r\n\r\n");
	c->out = malloc(hl + len);
	if (c->out) {
		memcpy(c->out, hdr, hl);
		if (len)
			memcpy(c->out + hl, s->text, len);
		c->out_len = hl + len;
	}
	pthread_mutex_unlock(&s->lock);
	return c->out != NULL;
}

/* Read or write what the socket takes now.  Returns false when the
 * client is done (answered, gone or in error). */
static bool client_step(struct metrics_server *s, struct client *c)
{
	ssize_t r;

	if (!c->out) {
		r = read(c->fd, c->req + c->n, sizeof(c->req) - 1 - c->n);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		if (r <= 0)
			return false;
		c->n += (size_t)r;
		c->req[c->n] = 0;
		/* the head ends, or is as long as we read */
		if (!strstr(c->req, "\r\n\r\n") && !strstr(c->req, "\n\n") &&
		    c->n < sizeof(c->req) - 1)
			return true;
		if (!client_answer(s, c))
			return false;
	}
	while (c->out_off < c->out_len) {
		r = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
			 MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return true;
		if (r <= 0)
			return false;
		c->out_off += (size_t)r;
	}
	count(&s->served);
	return false;
}

static void client_accept(struct metrics_server *s)
{
	struct client *c;
	unsigned i, oldest = 0;
	int fd;

	fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (s->n_clients == MAX_CLIENTS) {
		for (i = 1; i < s->n_clients; i++)
			if (s->clients[i].since_ms < s->clients[oldest].since_ms)
				oldest = i;
		client_close(s, oldest);
		count(&s->evicted);
	}
	c = &s->clients[s->n_clients++];
	memset(c, 0, offsetof(struct client, req));
	c->req[0] = 0;
	c->fd = fd;
	c->since_ms = now_ms();
	c->deadline_ms = c->since_ms + CLIENT_MS;
}

static void *server_main(void *arg)
{
	struct metrics_server *s = arg;
	struct pollfd p[2 + MAX_CLIENTS];

	p[0] = (struct pollfd){ .fd = s->fd, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = s->stop_pipe[0], .events = POLLIN };
	for (;;) {
		uint64_t now = now_ms(), next = UINT64_MAX;
		unsigned i, n = s->n_clients;
		int timeout;

		/* the clients out of time go first */
		for (i = 0; i < s->n_clients;) {
			if (s->clients[i].deadline_ms <= now) {
				client_close(s, i);
				count(&s->timeouts);
				continue;
			}
			if (s->clients[i].deadline_ms < next)
				next = s->clients[i].deadline_ms;
			i++;
		}
		n = s->n_clients;
		for (i = 0; i < n; i++)
			p[2 + i] = (struct pollfd){
				.fd = s->clients[i].fd,
				.events = s->clients[i].out ? POLLOUT : POLLIN,
			};
		timeout = next == UINT64_MAX ? -1 : (int)(next - now);
		if (poll(p, 2 + n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		/* from the last, so that closing (which moves the last
		 * client into the hole) leaves the rest to visit in place */
		for (i = n; i-- > 0;)
			if (p[2 + i].revents && !client_step(s, &s->clients[i]))
				client_close(s, i);
		if (p[0].revents & POLLIN)
			client_accept(s);
	}
	while (s->n_clients)
		client_close(s, 0);
	return NULL;
}

void metrics_server_stats(struct metrics_server *s, struct metrics_server_stats *out)
{
	out->served = __atomic_load_n(&s->served, __ATOMIC_RELAXED);
	out->timeouts = __atomic_load_n(&s->timeouts, __ATOMIC_RELAXED);
	out->evicted = __atomic_load_n(&s->evicted, __ATOMIC_RELAXED);
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
	s->fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		       0);
	if (s->fd < 0 ||
	    setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s->fd, res->ai_addr, res->ai_addrlen) || listen(s->fd, 64) ||
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
