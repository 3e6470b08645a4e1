/* SPDX-License-Identifier: Apache-2.0 */
/* What the C benchmarks share: a clock and a sort order for timings. */
#ifndef EP_BENCH_H
#define EP_BENCH_H

#include <time.h>

/* Seconds on the monotonic clock. */
static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* qsort order of doubles, smallest first (for medians). */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#endif
