// SPDX-License-Identifier: Apache-2.0
#include "alloc_fault.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "test.h"

/* The real functions, which -Wl,--wrap names __real_*. */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_reallocarray(void *p, size_t n, size_t size);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_reallocarray(void *p, size_t n, size_t size);
char *__wrap_strdup(const char *s);

static long countdown; /* > 0: armed */
static bool persistent, tripped;
static long failed;

void alloc_fail(long nth, bool persist)
{
	__atomic_store_n(&failed, 0, __ATOMIC_RELAXED);
	persistent = persist;
	tripped = false;
	__atomic_store_n(&countdown, nth, __ATOMIC_RELAXED);
}

long alloc_failed(void)
{
	return __atomic_load_n(&failed, __ATOMIC_RELAXED);
}

/* Should this allocation fail?  Several threads may allocate. */
static bool fail_now(void)
{
	long v = __atomic_load_n(&countdown, __ATOMIC_RELAXED);

	if (tripped && persistent) {
		__atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
		errno = ENOMEM;
		return true;
	}
	while (v > 0) {
		if (__atomic_compare_exchange_n(&countdown, &v, v - 1, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			if (v != 1)
				return false;
			tripped = true;
			__atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
			errno = ENOMEM;
			return true;
		}
	}
	return false;
}

void *__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __real_realloc(p, n);
}

void *__wrap_reallocarray(void *p, size_t n, size_t size)
{
	return fail_now() ? NULL : __real_reallocarray(p, n, size);
}

char *__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

int alloc_fail_each(const char *what, int (*op)(void *arg), void *arg,
		    bool persist, const int *ok, int max)
{
	int n, err, i;
	bool good, hit;

	for (n = 1; n <= max; n++) {
		alloc_fail(n, persist);
		err = op(arg);
		hit = alloc_failed() > 0;
		alloc_fail(0, false);
		if (!hit)
			break; /* it needed fewer than n allocations */
		good = err == 0 || err == -ENOMEM;
		for (i = 0; ok && ok[i] && !good; i++)
			good = err == ok[i];
		if (!good) {
			test_fail(__FILE__, __LINE__,
				  "%s: allocation %d failing%s: returned %d (%s)",
				  what, n, persist ? " and after" : "", err,
				  strerror(err < 0 ? -err : err));
			break;
		}
	}
	return n;
}
