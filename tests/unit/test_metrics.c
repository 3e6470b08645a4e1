// SPDX-License-Identifier: Apache-2.0
/*
 * The metrics server: clients that connect and say nothing, or ask and
 * never read, must not delay another client's scrape; they are closed at
 * their deadline or for newer clients, and counted.
 */
#include "test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "metrics.h"

static double ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int dial(int port, int rcvbuf)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* GET path; the whole answer's size in *len (head and body), the status
 * returned (-1 on error). */
static int get(int port, const char *path, size_t *len)
{
	char req[256], buf[65536];
	int fd = dial(port, 0), status = -1;
	struct timeval tv = { .tv_sec = 5 };
	ssize_t n;

	*len = 0;
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
	if (write(fd, req, strlen(req)) == (ssize_t)strlen(req)) {
		while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
			if (!*len) {
				buf[n] = 0;
				if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
					status = -1;
			}
			*len += (size_t)n;
		}
	}
	close(fd);
	return status;
}

TEST(metrics_server_idle_and_slow_clients)
{
	struct metrics_server *s = NULL;
	struct metrics_server_stats st;
	int idle[40], slow[4], port, i;
	size_t big_len = 4 << 20, len;
	char *big = malloc(big_len);
	double t;

	if (!ASSERT_OK(metrics_server_start("127.0.0.1:0", &s), "start"))
		goto out;
	port = metrics_server_port(s);
	/* an answer far larger than the socket buffers of a client that
	 * does not read */
	memset(big, 'x', big_len);
	big[big_len - 1] = '\n';
	metrics_server_publish(s, big, big_len);

	/* 40 idle: more than the 32 served at once */
	for (i = 0; i < 40; i++)
		idle[i] = dial(port, 0);
	/* 4 ask and never read */
	for (i = 0; i < 4; i++) {
		slow[i] = dial(port, 2048);
		if (slow[i] >= 0)
			(void)!write(slow[i], "GET /metrics HTTP/1.0\r\n\r\n", 25);
	}
	usleep(100000);
	t = ms_now();
	ASSERT_EQ(get(port, "/metrics", &len), 200, "a scrape among them");
	t = ms_now() - t;
	test_note("4 MiB scrape beside 40 idle and 4 stalled clients: %.0f ms", t);
	ASSERT_GT(len, big_len, "the whole answer");
	ASSERT_LT(t, 1000, "not delayed by the others (2 s each before)");
	ASSERT_EQ(get(port, "/other", &len), 404, "another path");
	metrics_server_stats(s, &st);
	/* 45 connections for 32 slots (the second get finds a free one) */
	ASSERT_GE(st.evicted, 40 + 4 + 1 - 32, "the oldest closed for newer clients");
	/* the rest run out of time */
	usleep(2300000);
	metrics_server_stats(s, &st);
	test_note("served %llu, closed: %llu for time, %llu for newer clients",
		  (unsigned long long)st.served, (unsigned long long)st.timeouts,
		  (unsigned long long)st.evicted);
	ASSERT_EQ(st.served, 2, "served: the two gets");
	ASSERT_EQ(st.evicted + st.timeouts, 40 + 4, "every idle or stalled client closed");
	t = ms_now();
	ASSERT_EQ(get(port, "/metrics", &len), 200, "a scrape afterwards");
	ASSERT_LT(ms_now() - t, 1000, "at once");
	for (i = 0; i < 40; i++)
		if (idle[i] >= 0)
			close(idle[i]);
	for (i = 0; i < 4; i++)
		if (slow[i] >= 0)
			close(slow[i]);
out:
	metrics_server_stop(s);
	free(big);
}
