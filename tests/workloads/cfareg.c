// SPDX-License-Identifier: Apache-2.0
/*
 * Stacks through CFI that keeps the CFA in rax and in r15 (cfareg.S): 60%
 * of the thread's CPU time in spin_in_rax, a leaf; 40% in work_r15, called
 * through call_via_r15, which saves and clobbers r15.
 * Usage: cfareg SECONDS
 */
#include <stdio.h>

#include "common.h"

void spin_in_rax(long n);
void call_via_r15(void (*fn)(long), long arg);

static volatile unsigned long sink;

/* Clobbers r15 on purpose: its prologue saves it (with CFI), and while it
 * runs r15 no longer holds call_via_r15's CFA. */
NOINLINE void work_r15(long n)
{
	unsigned long x = 0;
	long i;

	for (i = 0; i < n; i++) {
		__asm__ volatile("mov %1, %%r15; add %%r15, %0"
				 : "+r"(x)
				 : "r"((unsigned long)i * 7)
				 : "r15");
	}
	sink = x;
}

NOINLINE static void phase_rax(double slice)
{
	double end = wl_cpu_now() + slice;

	do
		spin_in_rax(200000);
	while (wl_cpu_now() < end);
}

NOINLINE static void phase_r15(double slice)
{
	double end = wl_cpu_now() + slice;

	do
		call_via_r15(work_r15, 200000);
	while (wl_cpu_now() < end);
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_secs(argc, argv, 5);
	unsigned long rounds = 0;

	while (wl_now() < end) {
		phase_rax(0.006);
		phase_r15(0.004);
		rounds++;
	}
	printf("rounds=%lu\n", rounds);
	return 0;
}
