/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel types CO-RE relocates against, through the store: taken from
 * the cache, else cut from the kernel's BTF (kbtf.h) and stored once the
 * programs loaded with them; types the kernel rejected are deleted, so the
 * next start cuts them again.
 */
#ifndef EP_KBTF_CACHE_H
#define EP_KBTF_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "fileid.h"

struct store;

struct kbtf_cache {
	void *types; /* malloc'd, NULL: libbpf reads the whole BTF */
	size_t len;
	struct file_id key; /* of the BPF object and the kernel */
	bool keyed, fresh;
	const char *from; /* "cache", "built", "kernel" (the whole BTF) */
};

/* Find the types for the BPF object obj (st may be NULL: no cache). */
void kbtf_cache_find(struct kbtf_cache *kc, struct store *st, const void *obj,
		     size_t obj_len);
/* After the load: keep types that worked (store them when built now),
 * drop those the kernel rejected; frees kc->types either way. */
void kbtf_cache_settle(struct kbtf_cache *kc, struct store *st, bool rejected);
/* Frees kc->types (safe twice). */
void kbtf_cache_release(struct kbtf_cache *kc);

#endif
