/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A hash map from 64-bit keys to 64-bit values: open addressing, linear
 * probing, backward-shift deletion (no tombstones).  Composite keys are
 * hashed by the caller (hm_hash) and chained through the caller's arrays.
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
void hm_free(struct hm *m);
/* Returns 0 or -ENOMEM. */
int hm_put(struct hm *m, uint64_t key, uint64_t val);
bool hm_get(const struct hm *m, uint64_t key, uint64_t *val);
bool hm_del(struct hm *m, uint64_t key);
void hm_clear(struct hm *m);
/* Iterate: for (i = 0; hm_next(m, &i, &k, &v);) */
bool hm_next(const struct hm *m, uint32_t *iter, uint64_t *key, uint64_t *val);

/* 64-bit hash of bytes (FNV-1a folded with a final mix). */
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
