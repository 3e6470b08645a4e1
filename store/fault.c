// SPDX-License-Identifier: Apache-2.0
/*
 * Fault injection for the tests (store_test.h): from a given call on, an
 * allocation or an LMDB write of this module fails; and raw access to a
 * stored value, to forge damaged records.  The daemon never calls the
 * store_test_* functions; st_malloc() and its kin cost one atomic load
 * while no fault is armed.
 */
#include "store_int.h"
#include "store_test.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static long fail_alloc_at;
static long fail_lmdb_at;
static int fail_lmdb_err;

void store_test_fail_alloc(long nth)
{
	__atomic_store_n(&fail_alloc_at, nth, __ATOMIC_RELAXED);
}

void store_test_fail_lmdb(long nth, int err)
{
	switch (err) {
	case STORE_FAULT_MAP_FULL:
		err = MDB_MAP_FULL;
		break;
	case STORE_FAULT_CORRUPTED:
		err = MDB_CORRUPTED;
		break;
	case STORE_FAULT_PANIC:
		err = MDB_PANIC;
		break;
	}
	fail_lmdb_err = err;
	__atomic_store_n(&fail_lmdb_at, nth, __ATOMIC_RELAXED);
}

/* True when the countdown c reaches this call. */
static bool countdown(long *c)
{
	long v = __atomic_load_n(c, __ATOMIC_RELAXED);

	while (v > 0) {
		if (__atomic_compare_exchange_n(c, &v, v - 1, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return v == 1;
	}
	return false;
}

void *st_malloc(size_t n)
{
	return countdown(&fail_alloc_at) ? NULL : malloc(n);
}

void *st_calloc(size_t n, size_t size)
{
	return countdown(&fail_alloc_at) ? NULL : calloc(n, size);
}

void *st_realloc(void *p, size_t n)
{
	return countdown(&fail_alloc_at) ? NULL : realloc(p, n);
}

/* An injected LMDB failure, as LMDB itself would return it. */
int st_lmdb_fault(void)
{
	return countdown(&fail_lmdb_at) ? fail_lmdb_err : 0;
}

int store_test_put_raw(struct store *s, const uint8_t id[16],
		       enum store_kind kind, const void *val, size_t len)
{
	uint8_t key[KEY_LEN];
	struct put_arg arg = { key, val, len, true };

	if (!st_kind_ok(kind) || (len && !val) || len > s->limit / 2)
		return -EINVAL;
	st_make_key(key, id, kind);
	return st_write_locked(s, st_op_put, &arg);
}

int store_test_get_raw(struct store *s, const uint8_t id[16],
		       enum store_kind kind, void **val, size_t *len)
{
	uint8_t key[KEY_LEN];
	MDB_txn *txn;
	MDB_val v;
	int err;

	*val = NULL;
	*len = 0;
	if (!st_kind_ok(kind) || !s->have_dbs)
		return -EINVAL;
	err = st_rec_get(s, id, kind, key, &txn, &v);
	if (err)
		return err;
	*val = malloc(v.mv_size ? v.mv_size : 1);
	if (*val) {
		memcpy(*val, v.mv_data, v.mv_size);
		*len = v.mv_size;
	} else {
		err = -ENOMEM;
	}
	st_rtxn_end(s, txn);
	return err;
}
