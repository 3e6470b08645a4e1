// SPDX-License-Identifier: Apache-2.0
/*
 * A CPU-bound workload with a known split of its CPU time: 60% under
 * chain_a, 30% under chain_b, 10% under chain_c, each a distinct call
 * chain down to its own leaf.  Each round gives the chains 6, 3 and 1 ms
 * of the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so the split holds
 * whatever the CPU speed, cache effects or other load.
 * Usage: split SECONDS   (prints rounds=N, blocks=N and cpu_s=S at exit)
 *
 * rounds counts CPU time, not work: interrupt time (a profiler's sample
 * handler) is charged to the interrupted thread when the kernel does not
 * account IRQ time apart, so a profiler's cost shows as fewer blocks of
 * the inner loop per CPU second, not as fewer rounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* noipa: no inlining, no cloning, and no pure/const deduction that would
 * let the compiler merge repeated calls */
#define NOINLINE __attribute__((noipa))
/* -DFAR_TEXT: chain_b's functions in their own section, which a linker
 * given --section-start=fartext=ADDR puts in a second text segment */
#ifdef FAR_TEXT
#define FAR __attribute__((section("fartext")))
#else
#define FAR
#endif

static volatile unsigned long sink;
static unsigned long blocks; /* inner-loop blocks done: the useful work */

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Spin until the thread has used `slice` seconds of CPU; the clock reads
 * happen here, under the chain being measured. */
NOINLINE static unsigned long spin(double slice)
{
	double end = cpu_now() + slice;
	unsigned long x = 0, i;

	do {
		for (i = 0; i < 20000; i++)
			x += i * i ^ (x >> 3);
		blocks++;
	} while (cpu_now() < end);
	return x;
}

NOINLINE unsigned long leaf_a(double s) { return spin(s) + 1; }
NOINLINE unsigned long mid_a(double s) { return leaf_a(s) + 1; }
NOINLINE unsigned long chain_a(double s) { return mid_a(s) + 1; }

FAR NOINLINE unsigned long leaf_b(double s) { return spin(s) + 2; }
FAR NOINLINE unsigned long mid_b(double s) { return leaf_b(s) + 2; }
FAR NOINLINE unsigned long chain_b(double s) { return mid_b(s) + 2; }

NOINLINE unsigned long leaf_c(double s) { return spin(s) + 3; }
NOINLINE unsigned long mid_c(double s) { return leaf_c(s) + 3; }
NOINLINE unsigned long chain_c(double s) { return mid_c(s) + 3; }

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10, end = now() + secs;
	double cpu0 = cpu_now();
	unsigned long rounds = 0;

	while (now() < end) {
		sink += chain_a(0.006);
		sink += chain_b(0.003);
		sink += chain_c(0.001);
		rounds++;
	}
	/* throughput, for the overhead benchmark */
	printf("rounds=%lu blocks=%lu cpu_s=%.4f\n", rounds, blocks,
	       cpu_now() - cpu0);
	return 0;
}
