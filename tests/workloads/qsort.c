// SPDX-License-Identifier: Apache-2.0
/* A comparator called back from libc's qsort: main -> sort_rounds -> qsort
 * -> (libc) -> compare -> weigh.  Usage: qsort SECONDS */
#include <stdlib.h>

#include "common.h"

static volatile unsigned long sink;

NOINLINE static int weigh(int v)
{
	unsigned long x = (unsigned)v, i;

	for (i = 0; i < 200; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink += x;
	return v;
}

NOINLINE static int compare(const void *a, const void *b)
{
	int x = weigh(*(const int *)a), y = weigh(*(const int *)b);

	return (x > y) - (x < y);
}

NOINLINE static void sort_rounds(int *v, int n, double end)
{
	int i;

	while (wl_now() < end) {
		for (i = 0; i < n; i++)
			v[i] = rand();
		qsort(v, n, sizeof(*v), compare);
	}
}

int main(int argc, char **argv)
{
	static int v[20000];

	sort_rounds(v, 20000, wl_now() + wl_secs(argc, argv, 10));
	return 0;
}
