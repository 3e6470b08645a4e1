// SPDX-License-Identifier: Apache-2.0
#include "intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arr.h"
#include "hashmap.h"

/* 16 bytes: the key itself is found through by_id, its length in front
 * of it. */
struct intern_slot {
	uint64_t hash;
	uint32_t id1; /* id + 1; 0: empty */
	uint32_t pad;
};

static size_t key_len(const char *k)
{
	size_t len;

	memcpy(&len, k - sizeof(size_t), sizeof(len));
	return len;
}

/* Where key is, or the empty slot it would go to; t->cap is not 0. */
static struct intern_slot *lookup(const struct intern *t, uint64_t h,
				  const void *key, size_t len)
{
	size_t mask = t->cap - 1, j;

	for (j = h & mask;; j = (j + 1) & mask) {
		struct intern_slot *s = &t->slots[j];
		const char *k;

		if (!s->id1)
			return s;
		if (s->hash != h)
			continue;
		k = t->by_id[s->id1 - 1];
		if (key_len(k) == len && !memcmp(k, key, len))
			return s;
	}
}

static int grow(struct intern *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256, i;
	struct intern_slot *slots;

	if (cap < t->cap || cap > SIZE_MAX / sizeof(*slots))
		return -ENOMEM;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		const struct intern_slot *s = &t->slots[i];
		size_t j;

		if (!s->id1)
			continue;
		for (j = s->hash & (cap - 1); slots[j].id1; j = (j + 1) & (cap - 1))
			;
		slots[j] = *s;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

int64_t intern_find(const struct intern *t, const void *key, size_t len)
{
	const struct intern_slot *s;

	if (!t->cap)
		return -1;
	s = lookup(t, hm_hash(key, len, 0), key, len);
	return s->id1 ? (int64_t)s->id1 - 1 : -1;
}

int64_t intern_add(struct intern *t, const void *key, size_t len, bool *added)
{
	uint64_t h = hm_hash(key, len, 0);
	struct intern_slot *s;
	char *copy;

	if (added)
		*added = false;
	if ((t->n + 1) * 4 > t->cap * 3 && grow(t))
		return -ENOMEM;
	s = lookup(t, h, key, len);
	if (s->id1)
		return s->id1 - 1;
	if (t->n >= INT32_MAX ||
	    ARR_PUSH(t->by_id, t->n, t->by_id_cap, ARR_NO_LIMIT))
		return -ENOMEM;
	/* the length in front, a NUL behind, in words: 8-byte aligned */
	if (len > SIZE_MAX - 2 * sizeof(size_t))
		return -ENOMEM;
	copy = arena_alloc(&t->keys, len / sizeof(size_t) + 2, sizeof(size_t));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, &len, sizeof(len));
	copy += sizeof(size_t);
	memcpy(copy, key, len);
	copy[len] = 0;
	t->by_id[t->n] = copy;
	s->hash = h;
	s->id1 = (uint32_t)++t->n;
	if (added)
		*added = true;
	return s->id1 - 1;
}

const void *intern_key(const struct intern *t, uint32_t id, size_t *len)
{
	const char *k;

	if (id >= t->n)
		return NULL;
	k = t->by_id[id];
	if (len)
		*len = key_len(k);
	return k;
}

void intern_clear(struct intern *t)
{
	if (t->slots)
		memset(t->slots, 0, t->cap * sizeof(*t->slots));
	t->n = 0;
	arena_reset(&t->keys);
}

void intern_free(struct intern *t)
{
	free(t->slots);
	free(t->by_id);
	arena_free(&t->keys);
	memset(t, 0, sizeof(*t));
}
