/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An arena: many small allocations freed at once.  Memory never moves
 * (pointers stay valid until arena_free or arena_reset), comes from
 * chunks of 256 KiB (a larger request gets a chunk of its own), and an
 * object is aligned as its size allows: to the largest power of two that
 * divides the element size, at most alignof(max_align_t), which is every
 * alignment an object of that size can need.
 *
 * Not thread-safe.  A zeroed struct arena is an empty arena.
 */
#ifndef EP_ARENA_H
#define EP_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *head;
	size_t bytes; /* held from malloc, chunk headers included */
};

/* n elements of size bytes, uninitialised; NULL when n * size overflows
 * or memory is short.  n == 0 gives a valid pointer (not NULL). */
void *arena_alloc(struct arena *a, size_t n, size_t size);
/* The same, zeroed. */
void *arena_calloc(struct arena *a, size_t n, size_t size);
/* A copy of s (NUL-terminated), or NULL. */
char *arena_strdup(struct arena *a, const char *s);
/* Free every allocation but keep the newest chunk for reuse. */
void arena_reset(struct arena *a);
/* Free everything; the arena is empty and usable again. */
void arena_free(struct arena *a);

#endif
