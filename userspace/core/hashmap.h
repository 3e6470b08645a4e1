/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A hash map from 64-bit keys to 64-bit values: open addressing, linear
 * probing, backward-shift deletion (no tombstones), at most 3/4 full.
 * Keys are mixed (hm_mix) before use, so sequential ids spread.  A
 * composite key is hashed by the caller (hm_hash) and compared by the
 * caller; byte keys that need no caller-side storage go to intern.h.
 *
 * Not thread-safe.  A zeroed struct hm is an empty map.
 */
#ifndef EP_HASHMAP_H
#define EP_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hm {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	uint32_t cap, count;
};

void hm_init(struct hm *m);
/* Frees the tables; the map is empty and usable again. */
void hm_free(struct hm *m);
/* Insert or replace.  Returns 0 or -ENOMEM (the map is unchanged). */
int hm_put(struct hm *m, uint64_t key, uint64_t val);
/* Lookup or insert in one search: the value slot of key, the key added
 * with value 0 when absent (*added tells which; added may be NULL).  NULL
 * is -ENOMEM (only when absent; the map is unchanged).  The pointer is
 * good until the next hm_put, hm_slot or hm_del. */
uint64_t *hm_slot(struct hm *m, uint64_t key, bool *added);
/* True when key is present; its value in *val (val may be NULL). */
bool hm_get(const struct hm *m, uint64_t key, uint64_t *val);
/* For a map whose values are pointers (put as (uintptr_t)p): the one at
 * key, NULL when key is absent. */
void *hm_get_ptr(const struct hm *m, uint64_t key);
/* True when key was present.  Moves other entries: an iteration in
 * progress may then see one twice or miss one. */
bool hm_del(struct hm *m, uint64_t key);
/* Empty, keeping the tables' memory. */
void hm_clear(struct hm *m);
/* Iterate: for (i = 0; hm_next(m, &i, &k, &v);) -- key, val may be NULL */
bool hm_next(const struct hm *m, uint32_t *iter, uint64_t *key, uint64_t *val);

/* The one hash of bytes for in-memory tables (XXH3, 64 bits).  Never
 * stored: it may change between versions. */
uint64_t hm_hash(const void *data, size_t len, uint64_t seed);
/* Mix a 64-bit integer. */
static inline uint64_t hm_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
