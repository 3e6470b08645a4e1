/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An interner: byte strings (any bytes, any length) to dense ids 0, 1,
 * 2... in the order they were first added.  The table keeps its own copy
 * of each key, 8-byte aligned and followed by a NUL (so string keys stay
 * C strings), that does not move until intern_clear or intern_free: a
 * caller may point at it instead of keeping the key itself.  Keys are
 * hashed with hm_hash and compared whole, so colliding hashes stay two
 * entries.
 *
 * Not thread-safe.  A zeroed struct intern is an empty table.
 */
#ifndef EP_INTERN_H
#define EP_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

struct intern_slot;

struct intern {
	struct intern_slot *slots;
	size_t cap, n;
	const void **by_id; /* the stored keys */
	size_t by_id_cap;
	struct arena keys;
};

/* The id of key, or -1 when it was never added. */
int64_t intern_find(const struct intern *t, const void *key, size_t len);
/* The id of key, added with the next id when new (*added tells which;
 * added may be NULL).  Returns the id or -ENOMEM, in which case nothing
 * was added.  At most INT32_MAX keys. */
int64_t intern_add(struct intern *t, const void *key, size_t len,
		   bool *added);
/* The stored key of id and its length (len may be NULL); NULL for an id
 * not handed out. */
const void *intern_key(const struct intern *t, uint32_t id, size_t *len);
/* The stored keys by id, as an array of n pointers. */
static inline const void *const *intern_keys(const struct intern *t,
					     size_t *n)
{
	*n = t->n;
	return t->by_id;
}
/* Forget every key (ids start at 0 again), keeping the tables' memory. */
void intern_clear(struct intern *t);
void intern_free(struct intern *t);

#endif
