/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The binary search of address tables (symbols, inline scopes): arrays
 * sorted by a 64-bit address that starts each element, where what covers
 * an address is the last element that starts at or below it.
 */
#ifndef EP_FLOOR_H
#define EP_FLOOR_H

#include <stddef.h>
#include <stdint.h>

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
