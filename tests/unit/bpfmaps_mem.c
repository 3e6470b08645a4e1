// SPDX-License-Identifier: Apache-2.0
/*
 * The in-memory bpfmaps implementation (bpfmaps_mem.h): hash tables that
 * grow, with tombstones, and rows in malloc'd chunks.  Tests only: the
 * daemon's maps are the tracer's.
 */
#include "bpfmaps_mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

/* Open addressing with tombstones; keys and values inline. */
struct mem_table {
	uint8_t *slots; /* [state u8][key][val] */
	uint32_t cap, count, used;
	size_t ks, vs;
};

struct mem_ctx {
	struct mem_table t[BM_COUNT];
};

#define SLOT_EMPTY 0
#define SLOT_FULL 1
#define SLOT_DEAD 2

static uint8_t *slot(struct mem_table *t, uint32_t i)
{
	return t->slots + (size_t)i * (1 + t->ks + t->vs);
}

static int mem_grow(struct mem_table *t)
{
	struct mem_table n = *t;
	uint32_t i;

	n.cap = t->cap ? t->cap * 2 : 64;
	n.slots = calloc(n.cap, 1 + n.ks + n.vs);
	if (!n.slots)
		return -ENOMEM;
	n.count = n.used = 0;
	for (i = 0; i < t->cap; i++) {
		uint8_t *s = slot(t, i);
		if (s[0] == SLOT_FULL) {
			uint32_t j = hm_hash(s + 1, n.ks, 0) & (n.cap - 1);
			while (slot(&n, j)[0] != SLOT_EMPTY)
				j = (j + 1) & (n.cap - 1);
			memcpy(slot(&n, j), s, 1 + n.ks + n.vs);
			n.count++;
			n.used++;
		}
	}
	free(t->slots);
	*t = n;
	return 0;
}

static uint8_t *mem_find(struct mem_table *t, const void *key)
{
	uint32_t i, n;

	if (!t->cap)
		return NULL;
	i = hm_hash(key, t->ks, 0) & (t->cap - 1);
	for (n = 0; n < t->cap; n++, i = (i + 1) & (t->cap - 1)) {
		uint8_t *s = slot(t, i);
		if (s[0] == SLOT_EMPTY)
			return NULL;
		if (s[0] == SLOT_FULL && !memcmp(s + 1, key, t->ks))
			return s;
	}
	return NULL;
}

static int mem_update(void *ctx, enum bm_map m, const void *key,
		      const void *val)
{
	struct mem_table *t = &((struct mem_ctx *)ctx)->t[m];
	uint8_t *s = mem_find(t, key);
	uint32_t i;

	if (!t->ks)
		return -ENOENT; /* an interpreter's slot never bound */
	if (!s) {
		if ((t->used + 1) * 4 >= t->cap * 3 && mem_grow(t))
			return -ENOMEM;
		i = hm_hash(key, t->ks, 0) & (t->cap - 1);
		while (slot(t, i)[0] == SLOT_FULL)
			i = (i + 1) & (t->cap - 1);
		s = slot(t, i);
		if (s[0] == SLOT_EMPTY)
			t->used++;
		s[0] = SLOT_FULL;
		memcpy(s + 1, key, t->ks);
		t->count++;
	}
	memcpy(s + 1 + t->ks, val, t->vs);
	return 0;
}

static int mem_remove(void *ctx, enum bm_map m, const void *key)
{
	struct mem_table *t = &((struct mem_ctx *)ctx)->t[m];
	uint8_t *s = mem_find(t, key);

	if (!s)
		return -ENOENT;
	s[0] = SLOT_DEAD;
	t->count--;
	return 0;
}

static int mem_lookup(void *ctx, enum bm_map m, const void *key, void *val)
{
	struct mem_table *t = &((struct mem_ctx *)ctx)->t[m];
	uint8_t *s = mem_find(t, key);

	if (!s)
		return -ENOENT;
	memcpy(val, s + 1 + t->ks, t->vs);
	return 0;
}

static int mem_chunk_new(void *ctx, uint32_t idx, struct row_block **mem)
{
	(void)ctx;
	(void)idx;
	*mem = calloc(DELTA_CHUNK_BLOCKS, sizeof(**mem));
	return *mem ? 0 : -ENOMEM;
}

static int mem_chunks_new(void *ctx, const uint32_t *idx, uint32_t n,
			  struct row_block **mem, uint32_t *done)
{
	for (*done = 0; *done < n; ++*done)
		if (mem_chunk_new(ctx, idx[*done], &mem[*done]))
			return -ENOMEM;
	return 0;
}

static void mem_chunk_drop(void *ctx, uint32_t idx, struct row_block *mem)
{
	(void)ctx;
	(void)idx;
	free(mem);
}

static int mem_bind(void *ctx, enum bm_map m, const char *name,
		    size_t key_size, size_t val_size)
{
	struct mem_table *t = &((struct mem_ctx *)ctx)->t[m];

	(void)name;
	if (m < BM_INTERP_BASE || !key_size || !val_size)
		return -EINVAL;
	if (t->cap && (t->ks != key_size || t->vs != val_size))
		return -EINVAL;
	t->ks = key_size;
	t->vs = val_size;
	return 0;
}

static const struct bpfmaps_ops mem_ops = {
	.bind = mem_bind,
	.update = mem_update,
	.remove = mem_remove,
	.lookup = mem_lookup,
	.chunk_new = mem_chunk_new,
	.chunks_new = mem_chunks_new,
	.chunk_drop = mem_chunk_drop,
};

int bm_mem_new(uint32_t max_rows, struct bpfmaps **out)
{
	struct bpfmaps *bm = calloc(1, sizeof(*bm));
	struct mem_ctx *c = calloc(1, sizeof(*c));
	int i;

	*out = NULL;
	if (!bm || !c)
		goto nomem;
	for (i = 0; i < BM_COUNT; i++) {
		c->t[i].ks = bm_key_size[i];
		c->t[i].vs = bm_val_size[i];
		bm->max_entries[i] = 1 << 20;
	}
	bm->max_entries[BM_RULES] = MAX_RULES;
	bm->max_chunks = bm_chunks_for(max_rows);
	bm->chunks = calloc(bm->max_chunks, sizeof(*bm->chunks));
	bm->rules = calloc(MAX_RULES, sizeof(*bm->rules));
	if (!bm->chunks || !bm->rules)
		goto nomem;
	bm->ops = &mem_ops;
	bm->ctx = c;
	*out = bm;
	return 0;
nomem:
	if (bm) {
		free(bm->chunks);
		free(bm->rules);
	}
	free(bm);
	free(c);
	return -ENOMEM;
}

void bm_mem_free(struct bpfmaps *bm)
{
	struct mem_ctx *c;
	uint32_t i;

	if (!bm)
		return;
	c = bm->ctx;
	for (i = 0; i < BM_COUNT; i++)
		free(c->t[i].slots);
	free(c);
	for (i = 0; i < bm->max_chunks; i++)
		free(bm->chunks[i]);
	free(bm->chunks);
	free(bm->rules);
	free(bm);
}
