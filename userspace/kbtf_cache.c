// SPDX-License-Identifier: Apache-2.0
#include "kbtf_cache.h"

#include <stdlib.h>
#include <string.h>

#include "exemgr.h"
#include "kbtf.h"
#include "log.h"
#include "store.h"

void kbtf_cache_find(struct kbtf_cache *kc, struct store *st, const void *obj,
		     size_t obj_len)
{
	uint64_t t0 = exe_now_ns();
	int err;

	kc->from = "kernel";
	kc->keyed = kbtf_key(obj, obj_len, &kc->key) == 0;
	if (st && kc->keyed &&
	    store_get(st, kc->key.b, STORE_KIND_KTYPES, &kc->types, &kc->len) == 0 &&
	    kc->len) {
		kc->from = "cache";
		return;
	}
	kbtf_cache_release(kc);
	err = kbtf_build(obj, obj_len, &kc->types, &kc->len);
	if (err) {
		log_info("kernel types: cannot cut them down (%s): CO-RE reads "
			 "the whole BTF", strerror(-err));
		return;
	}
	kc->fresh = true;
	kc->from = "built";
	log_debug("kernel types: %zu bytes built in %.1f ms", kc->len,
		  (exe_now_ns() - t0) / 1e6);
}

void kbtf_cache_settle(struct kbtf_cache *kc, struct store *st, bool rejected)
{
	if (rejected) {
		kc->from = "kernel";
		if (st && kc->keyed)
			store_del(st, kc->key.b, STORE_KIND_KTYPES);
	} else if (kc->fresh && st && kc->keyed) {
		store_put(st, kc->key.b, STORE_KIND_KTYPES, kc->types, kc->len);
	}
	kbtf_cache_release(kc);
}

void kbtf_cache_release(struct kbtf_cache *kc)
{
	free(kc->types);
	kc->types = NULL;
	kc->len = 0;
}
