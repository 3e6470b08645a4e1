/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store's hooks for tests and fuzzing, implemented in store/fault.c.
 * Only tests, fuzz targets and fault.c include this header; the daemon
 * never calls these functions.
 *
 * The fault settings are process-wide (every store of the process) and
 * atomic, so a test may arm them while other threads use a store; a test
 * that arms one disarms it (nth 0) before it ends.
 */
#ifndef EP_STORE_TEST_H
#define EP_STORE_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* From now on, the nth allocation (1 = the next) made by the store fails
 * (as malloc() returning NULL would); 0 turns it off.  Counts the
 * allocations of every store of this process, not those of LMDB. */
void store_test_fail_alloc(long nth);

/* The values of err, besides a positive errno, for store_test_fail_lmdb():
 * the LMDB conditions MDB_MAP_FULL, MDB_CORRUPTED and MDB_PANIC. */
enum {
	STORE_FAULT_MAP_FULL = -1,
	STORE_FAULT_CORRUPTED = -2,
	STORE_FAULT_PANIC = -3,
};

/* The nth LMDB write operation (begin, put, del, drop, commit) from now
 * on fails with err: a positive errno as a failed write gives (EIO,
 * ENOSPC), or one of the STORE_FAULT_* conditions.  nth 0 turns it off. */
void store_test_fail_lmdb(long nth, int err);

/* Write val as the stored value of a record, as is (no header added, no
 * check): what a damaged or forged record does to the readers.  Takes
 * the write lock like store_put() but never evicts.  Returns 0, -EINVAL
 * (bad kind, val NULL with len, len over half the limit), or a negative
 * errno from the write. */
int store_test_put_raw(struct store *s, const uint8_t id[16],
		       enum store_kind kind, const void *val, size_t len);

/* Read a stored value back as is (header included, nothing checked, not
 * counted as a use).  *val is malloc'd (the caller frees it; never NULL
 * on success, even for len 0) and *len its size.  Returns 0, -ENOENT,
 * -EINVAL (bad kind, or no databases), -ENOMEM, or a negative errno. */
int store_test_get_raw(struct store *s, const uint8_t id[16],
		       enum store_kind kind, void **val, size_t *len);

#endif
