// SPDX-License-Identifier: Apache-2.0
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	max_align_t data[];
};

#define ARENA_CHUNK (256 * 1024)

/* The alignment an object of size bytes may need: sizeof is a multiple
 * of alignof, so the lowest set bit of size, capped. */
static size_t align_of_size(size_t size)
{
	size_t a = size & -size;

	return !a || a > _Alignof(max_align_t) ? _Alignof(max_align_t) : a;
}

void *arena_alloc(struct arena *a, size_t n, size_t size)
{
	size_t align = align_of_size(size), bytes, off = 0;
	struct arena_chunk *c = a->head;

	if (size && n > SIZE_MAX / size)
		return NULL;
	bytes = n * size;
	if (c) {
		off = (c->used + align - 1) & ~(align - 1);
		if (off >= c->used && off <= c->size && c->size - off >= bytes) {
			c->used = off + bytes;
			return (char *)c->data + off;
		}
	}
	{
		size_t csize = bytes > ARENA_CHUNK / 4 ? bytes : ARENA_CHUNK;

		if (csize > SIZE_MAX - sizeof(*c))
			return NULL;
		c = malloc(sizeof(*c) + csize);
		if (!c)
			return NULL;
		c->used = bytes;
		c->size = csize;
		a->bytes += sizeof(*c) + csize;
		/* A large request gets a private chunk, put behind the
		 * current one so that one's free space stays in use. */
		if (a->head && bytes == csize) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
		return c->data;
	}
}

void *arena_calloc(struct arena *a, size_t n, size_t size)
{
	void *p = arena_alloc(a, n, size);

	if (p)
		memset(p, 0, n * size);
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = arena_alloc(a, n, 1);

	if (p)
		memcpy(p, s, n);
	return p;
}

void arena_reset(struct arena *a)
{
	struct arena_chunk *keep = a->head, *c, *next;

	if (!keep)
		return;
	for (c = keep->next; c; c = next) {
		next = c->next;
		free(c);
	}
	keep->next = NULL;
	keep->used = 0;
	a->bytes = sizeof(*keep) + keep->size;
}

void arena_free(struct arena *a)
{
	struct arena_chunk *c = a->head, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
	a->bytes = 0;
}
