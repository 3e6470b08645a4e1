// SPDX-License-Identifier: Apache-2.0
/* Recursion DEPTH deep (default 300): main -> recurse x DEPTH -> burn.
 * Usage: recurse SECONDS [DEPTH] */
#include "common.h"


static volatile unsigned long sink;

NOINLINE static unsigned long burn(double end)
{
	unsigned long x = 0;

	while (wl_now() < end)
		x++;
	return x;
}

/* not a tail call: the result is used after the call */
NOINLINE static unsigned long recurse(int n, double end)
{
	if (n == 0)
		return burn(end);
	return recurse(n - 1, end) + (unsigned long)n;
}

int main(int argc, char **argv)
{
	int depth = argc > 2 ? atoi(argv[2]) : 300;

	sink = recurse(depth - 1, wl_now() + wl_secs(argc, argv, 10));
	return 0;
}
