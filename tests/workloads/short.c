// SPDX-License-Identifier: Apache-2.0
/* A short-lived process: burns SECONDS of CPU under main -> short_work ->
 * short_leaf, then exits.  Usage: short SECONDS */
#include "common.h"

static volatile unsigned long sink;

NOINLINE static void short_leaf(double end)
{
	while (wl_cpu_now() < end)
		sink++;
}

NOINLINE static void short_work(double secs)
{
	short_leaf(wl_cpu_now() + secs);
}

int main(int argc, char **argv)
{
	short_work(wl_secs(argc, argv, 0.2));
	return 0;
}
