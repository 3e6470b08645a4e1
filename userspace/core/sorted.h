/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sorted tables: the three-way compare of their qsort() comparators, and
 * the binary search of address tables (symbols, inline scopes): arrays
 * sorted by a 64-bit address that starts each element, where what covers
 * an address is the last element that starts at or below it.
 */
#ifndef EP_SORTED_H
#define EP_SORTED_H

#include <stddef.h>
#include <stdint.h>

/* -1, 0 or 1 as a is below, equal to or above b: integers of any width
 * and signedness (a difference could overflow).  Chained with ?: for a
 * comparator of several keys; CMP3(b, a) sorts a key descending. */
#define CMP3(a, b) (((a) > (b)) - ((a) < (b)))

/* The index of the last of n elements (stride bytes apart from base,
 * sorted by the uint64_t each starts with) whose leading uint64_t is
 * <= key; -1 when none is. */
static inline int64_t floor_u64(const void *base, uint32_t n, size_t stride,
				uint64_t key)
{
	const char *p = base;
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (*(const uint64_t *)(p + (size_t)mid * stride) <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int64_t)lo - 1;
}

#endif
