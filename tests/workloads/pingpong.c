// SPDX-License-Identifier: Apache-2.0
/*
 * A context-switch-heavy load for the off-CPU benchmark: two threads pass
 * one byte back and forth through two pipes, so every round trip is two
 * blocking reads and two wake-ups.
 *
 * Usage: pingpong SECONDS [wait]
 * With "wait", starts on SIGUSR1 (at most 30 s later), so a profiler can
 * attach first.  Prints "ops_per_s=N" (round trips per second) when done.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
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
	double secs = wl_secs(argc, argv, 5), t0, end, cpu0, cpu;
	struct rusage ru;
	unsigned long long ops = 0;
	pthread_t th;
	char c = 'x';

	if (argc > 2 && !strcmp(argv[2], "wait")) {
		struct timespec max = { 30, 0 };
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		sigtimedwait(&set, NULL, &max);
	}
	if (pipe(ping) || pipe(pong))
		return 1;
	pthread_create(&th, NULL, ponger, NULL);
	getrusage(RUSAGE_SELF, &ru);
	cpu0 = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
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
	close(ping[1]);
	pthread_join(th, NULL);
	getrusage(RUSAGE_SELF, &ru);
	cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6 - cpu0;
	printf("ops_per_s=%.0f cpu_ns_per_op=%.0f\n", ops / (wl_now() - t0),
	       cpu * 1e9 / (ops ? ops : 1));
	return 0;
}
