/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Growable arrays: a pointer and a capacity kept by the caller, grown by
 * doubling.  Every size is checked: n * size overflowing size_t, a
 * capacity past what its variable's type holds, or past the caller's
 * limit is -ENOMEM, like a failed allocation, and leaves the array as it
 * was.  New elements are not initialised.
 *
 *	struct row *rows = NULL;
 *	uint32_t n = 0, cap = 0;
 *
 *	if (ARR_PUSH(rows, n, cap, MAX_ROWS))
 *		return -ENOMEM;
 *	rows[n++] = r;
 */
#ifndef EP_ARR_H
#define EP_ARR_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* No limit but the capacity variable's type. */
#define ARR_NO_LIMIT SIZE_MAX

/*
 * Make *pp (an array of elements of size bytes holding *cap of them)
 * hold at least need: the capacity doubles (from 4 elements) up to
 * limit.  pp is the address of the caller's pointer.  Returns 0, or
 * -ENOMEM with *pp and *cap unchanged.
 */
int arr_grow(void *pp, size_t *cap, size_t need, size_t size, size_t limit);

/* The largest value an unsigned variable v's type holds. */
#define ARR_TYPE_MAX_(v) ((size_t)(__typeof__(v))-1 > SIZE_MAX / 2 ?          \
				  SIZE_MAX : (size_t)(__typeof__(v))-1)

/* Room for need elements in arr (capacity variable cap, of any unsigned
 * type); 0 or -ENOMEM. */
#define ARR_RESERVE(arr, cap, need, limit)                                     \
	({                                                                     \
		size_t c_ = (cap), l_ = (limit);                               \
		int e_ = 0;                                                    \
		_Static_assert((__typeof__(cap))-1 > 0, "unsigned capacity");  \
		if ((size_t)(need) > c_) {                                     \
			if (l_ > ARR_TYPE_MAX_(cap))                           \
				l_ = ARR_TYPE_MAX_(cap);                       \
			e_ = arr_grow(&(arr), &c_, (need), sizeof(*(arr)), l_); \
			if (!e_)                                               \
				(cap) = (__typeof__(cap))c_;                   \
		}                                                              \
		e_;                                                            \
	})

/* Room for one more after n elements; 0 or -ENOMEM. */
#define ARR_PUSH(arr, n, cap, limit)                                           \
	ARR_RESERVE(arr, cap, (size_t)(n) + 1, limit)

#endif
