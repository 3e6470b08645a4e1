/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Allocation failures for tests, in the manner of SQLite's fault
 * injection.  The runner is linked with -Wl,--wrap for malloc, calloc,
 * realloc, reallocarray and strdup, so every allocation that the daemon's
 * code and the tests make passes through here (libraries' own allocations
 * inside libelf, LMDB or libc do not).  Inert until a test arms it.
 */
#ifndef EP_TEST_ALLOC_FAULT_H
#define EP_TEST_ALLOC_FAULT_H

#include <stdbool.h>

/* From now on the nth allocation (1 = the next) fails, and with persist
 * every one after it too (a machine out of memory); 0 disarms. */
void alloc_fail(long nth, bool persist);
/* Allocations failed since the last alloc_fail(). */
long alloc_failed(void);

/*
 * Run op(arg) with the 1st, 2nd, 3rd... allocation failing, until a run
 * in which no injected failure happened, or max runs.  Each run must
 * return 0 or one of the codes in ok[] (terminated by 0; -ENOMEM is
 * always fine): other results are test failures, named by what.  A crash
 * or (under LeakSanitizer) a leak on a failure path fails the test too.
 * Returns the number of runs.
 */
int alloc_fail_each(const char *what, int (*op)(void *arg), void *arg,
		    bool persist, const int *ok, int max);

#endif
