/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the C workloads: timing and a CPU-time burner. */
#ifndef WL_COMMON_H
#define WL_COMMON_H

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

/* noipa: no inlining, cloning or pure/const merging of calls */
#define NOINLINE __attribute__((noipa))

static inline double wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline double wl_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline double wl_secs(int argc, char **argv, double def)
{
	return argc > 1 ? atof(argv[1]) : def;
}

/* Run fn on n threads (at most 8), its argument the thread's index, and
 * wait for them to end. */
static inline void wl_run_threads(long n, void *(*fn)(void *))
{
	pthread_t t[8];
	long i;

	for (i = 0; i < n && i < 8; i++)
		pthread_create(&t[i], NULL, fn, (void *)i);
	for (i = 0; i < n && i < 8; i++)
		pthread_join(t[i], NULL);
}

#endif
