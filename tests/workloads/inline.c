// SPDX-License-Identifier: Apache-2.0
/*
 * Inline frames (issue 23): CPU time split 60/40 between two
 * always_inline functions that the compiler folds into one caller, each
 * calling the same out-of-line leaf.  Without DWARF a profiler sees
 * main;caller;leaf for both; with the inline chains it sees
 * main;caller;inlined_a;leaf (60%) and main;caller;inlined_b;leaf (40%).
 * Built -O2 -g (tests/workloads/workloads.mk).  Each round gives the two
 * 6 and 4 ms of the thread's CPU time, so the split holds whatever the
 * load.
 * Usage: inline SECONDS   (prints rounds=N at exit)
 *
 * The lines marked CALL_A and CALL_B are the call sites a test finds in
 * this file to check the line numbers of the inline chain.
 */
#include <stdio.h>

#include "common.h"

#define ALWAYS_INLINE __attribute__((always_inline)) inline

static volatile unsigned long sink;

/* all the CPU time is here, in a frame of its own */
NOINLINE static unsigned long leaf(double slice)
{
	double end = wl_cpu_now() + slice;
	unsigned long x = 0, i;

	do {
		for (i = 0; i < 20000; i++)
			x += i * i ^ (x >> 3);
	} while (wl_cpu_now() < end);
	return x;
}

static ALWAYS_INLINE unsigned long inlined_a(double s)
{
	return leaf(s) * 3 + 1; /* CALL_A */
}

static ALWAYS_INLINE unsigned long inlined_b(double s)
{
	return leaf(s) * 5 + 2; /* CALL_B */
}

NOINLINE static unsigned long caller(double a, double b)
{
	unsigned long x = inlined_a(a);

	return x + inlined_b(b);
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_secs(argc, argv, 10);
	unsigned long rounds = 0;

	while (wl_now() < end) {
		sink += caller(0.006, 0.004);
		rounds++;
	}
	printf("rounds=%lu\n", rounds);
	return 0;
}
