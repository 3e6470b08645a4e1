// SPDX-License-Identifier: Apache-2.0
/*
 * A context-switch-heavy load for the off-CPU benchmark: two threads pass
 * one byte back and forth through two pipes, so every round trip is two
 * blocking reads and two wake-ups.
 *
 * Usage: pingpong SECONDS
 * Prints "ops_per_s=N" (round trips per second) when done.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "common.h"

static int ping[2], pong[2];

static void *ponger(void *arg)
{
	char c;

	while (read(ping[0], &c, 1) == 1)
		if (write(pong[1], &c, 1) != 1)
			break;
	return arg;
}

int main(int argc, char **argv)
{
	double secs = wl_secs(argc, argv, 5), t0, end;
	unsigned long long ops = 0;
	pthread_t th;
	char c = 'x';

	if (pipe(ping) || pipe(pong))
		return 1;
	pthread_create(&th, NULL, ponger, NULL);
	t0 = wl_now();
	end = t0 + secs;
	while (wl_now() < end) {
		/* a batch between clock reads: the clock is not the load */
		for (int i = 0; i < 64; i++) {
			if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
				return 1;
			ops++;
		}
	}
	printf("ops_per_s=%.0f\n", ops / (wl_now() - t0));
	close(ping[1]);
	pthread_join(th, NULL);
	return 0;
}
