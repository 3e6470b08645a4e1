// SPDX-License-Identifier: Apache-2.0
#include "hashmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

void hm_init(struct hm *m)
{
	memset(m, 0, sizeof(*m));
}

void hm_free(struct hm *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	hm_init(m);
}

void hm_clear(struct hm *m)
{
	if (m->used)
		memset(m->used, 0, m->cap);
	m->count = 0;
}

static int grow(struct hm *m)
{
	struct hm n;
	uint32_t i;

	n.cap = m->cap ? m->cap * 2 : 16;
	if (n.cap < m->cap)
		return -ENOMEM;
	n.keys = malloc(sizeof(*n.keys) * n.cap);
	n.vals = malloc(sizeof(*n.vals) * n.cap);
	n.used = calloc(n.cap, 1);
	n.count = 0;
	if (!n.keys || !n.vals || !n.used) {
		free(n.keys);
		free(n.vals);
		free(n.used);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++)
		if (m->used[i])
			hm_put(&n, m->keys[i], m->vals[i]);
	hm_free(m);
	*m = n;
	return 0;
}

/* Where key is, or the empty slot it would go to; m->cap is not 0. */
static uint32_t probe(const struct hm *m, uint64_t key)
{
	uint32_t i = hm_mix(key) & (m->cap - 1);

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

uint64_t *hm_slot(struct hm *m, uint64_t key, bool *added)
{
	uint32_t i = 0;	/* an empty table always grows below */

	if (added)
		*added = false;
	if (m->cap) {
		i = probe(m, key);
		if (m->used[i])
			return &m->vals[i];
	}
	/* absent: grow first when the insert would pass 3/4, then find the
	 * empty slot again (the table moved) */
	if (((uint64_t)m->count + 1) * 4 > (uint64_t)m->cap * 3) {
		if (grow(m))
			return NULL;
		i = probe(m, key);
	}
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = 0;
	m->count++;
	if (added)
		*added = true;
	return &m->vals[i];
}

int hm_put(struct hm *m, uint64_t key, uint64_t val)
{
	uint64_t *v = hm_slot(m, key, NULL);

	if (!v)
		return -ENOMEM;
	*v = val;
	return 0;
}

static bool find(const struct hm *m, uint64_t key, uint32_t *pos)
{
	if (!m->cap)
		return false;
	*pos = probe(m, key);
	return m->used[*pos];
}

bool hm_get(const struct hm *m, uint64_t key, uint64_t *val)
{
	uint32_t i;

	if (!find(m, key, &i))
		return false;
	if (val)
		*val = m->vals[i];
	return true;
}

void *hm_get_ptr(const struct hm *m, uint64_t key)
{
	uint32_t i;

	return find(m, key, &i) ? (void *)(uintptr_t)m->vals[i] : NULL;
}

bool hm_del(struct hm *m, uint64_t key)
{
	uint32_t i, j, mask = m->cap - 1;

	if (!find(m, key, &i))
		return false;
	/* backward shift: move later members of the cluster into the hole
	 * when their home slot is not between the hole and them */
	j = i;
	for (;;) {
		uint32_t home;

		j = (j + 1) & mask;
		if (!m->used[j])
			break;
		home = hm_mix(m->keys[j]) & mask;
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->used[i] = 0;
	m->count--;
	return true;
}

bool hm_next(const struct hm *m, uint32_t *iter, uint64_t *key, uint64_t *val)
{
	while (*iter < m->cap) {
		uint32_t i = (*iter)++;
		if (m->used[i]) {
			if (key)
				*key = m->keys[i];
			if (val)
				*val = m->vals[i];
			return true;
		}
	}
	return false;
}

uint64_t hm_hash(const void *data, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(data, len, seed);
}
