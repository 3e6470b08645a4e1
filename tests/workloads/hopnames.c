// SPDX-License-Identifier: Apache-2.0
/*
 * Two threads burning CPU in hop_burn(), each moving to the next CPU every
 * 20 ms (sched_setaffinity), so one stack of one thread runs on every CPU
 * in an interval.  One thread's name is cut by the kernel inside a
 * character: "hopname-aaaaaa" + "é" is 16 bytes and a comm holds 15, so the
 * comm ends in the lead byte 0xc3 alone, which is not UTF-8.  The other is
 * "hopname-ok".  Usage: hopnames SECONDS
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common.h"

static volatile unsigned long sink;
static double end;

NOINLINE static void hop_burn(double until)
{
	while (wl_now() < until)
		sink++;
}

NOINLINE static void *hop_main(void *arg)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), cpu = (long)arg;

	/* PR_SET_NAME truncates to 15 bytes where pthread_setname_np would
	 * refuse the name. */
	prctl(PR_SET_NAME, cpu ? "hopname-ok" : "hopname-aaaaaa\xc3\xa9");
	while (wl_now() < end) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu++ % (ncpu > 0 ? ncpu : 1), &set);
		sched_setaffinity(0, sizeof(set), &set);
		hop_burn(wl_now() + 0.02);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	end = wl_now() + wl_secs(argc, argv, 10);
	wl_run_threads(2, hop_main);
	return 0;
}
