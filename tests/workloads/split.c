// SPDX-License-Identifier: Apache-2.0
/*
 * A CPU-bound workload with a known split: 60% of its time under
 * chain_a, 30% under chain_b, 10% under chain_c, each a distinct call chain
 * down to its own leaf.  Usage: split SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* noipa: no inlining, no cloning, and no pure/const deduction that would
 * let the compiler merge repeated calls */
#define NOINLINE __attribute__((noipa))

static volatile unsigned long sink;

/* About 1 ms of arithmetic per unit on this class of machine; the split
 * only depends on the ratio of units. */
NOINLINE static unsigned long spin(unsigned long n)
{
	unsigned long x = 0, i;

	for (i = 0; i < n; i++)
		x += i * i ^ (x >> 3);
	return x;
}

NOINLINE unsigned long leaf_a(unsigned long n) { return spin(n) + 1; }
NOINLINE unsigned long mid_a(unsigned long n) { return leaf_a(n) + 1; }
NOINLINE unsigned long chain_a(unsigned long n) { return mid_a(n) + 1; }

NOINLINE unsigned long leaf_b(unsigned long n) { return spin(n) + 2; }
NOINLINE unsigned long mid_b(unsigned long n) { return leaf_b(n) + 2; }
NOINLINE unsigned long chain_b(unsigned long n) { return mid_b(n) + 2; }

NOINLINE unsigned long leaf_c(unsigned long n) { return spin(n) + 3; }
NOINLINE unsigned long mid_c(unsigned long n) { return leaf_c(n) + 3; }
NOINLINE unsigned long chain_c(unsigned long n) { return mid_c(n) + 3; }

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10, end = now() + secs;
	unsigned long unit = 200000, rounds = 0;

	while (now() < end) {
		int i;

		for (i = 0; i < 6; i++)
			sink += chain_a(unit);
		for (i = 0; i < 3; i++)
			sink += chain_b(unit);
		sink += chain_c(unit);
		rounds++;
	}
	/* throughput, for the overhead benchmark */
	printf("rounds=%lu\n", rounds);
	return 0;
}
