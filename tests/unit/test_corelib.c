// SPDX-License-Identifier: Apache-2.0
/* userspace/core: the hash map, growable arrays, the arena, the interner,
 * libraries loaded at run time. */
#include "test.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fault.h"
#include "arena.h"
#include "arr.h"
#include "dlib.h"
#include "hashmap.h"
#include "intern.h"
#include "sorted.h"

TEST(hashmap_put_get_delete_many)
{
	struct hm m;
	uint64_t v, i;

	hm_init(&m);
	for (i = 0; i < 100000; i++)
		ASSERT_OK(hm_put(&m, i * 7919, i), "put");
	ASSERT_EQ(m.count, 100000, "count");
	for (i = 0; i < 100000; i += 2)
		ASSERT_TRUE(hm_del(&m, i * 7919), "del");
	for (i = 0; i < 100000; i++) {
		bool found = hm_get(&m, i * 7919, &v);
		if (i % 2 == 0)
			ASSERT_FALSE(found, "deleted");
		else if (ASSERT_TRUE(found, "kept"))
			ASSERT_EQ(v, i, "value");
	}
	hm_free(&m);
}

/* Deleting from clusters that wrap around the table's end keeps every
 * other member reachable, and iteration sees each live key once. */
TEST(hashmap_delete_wrapping_clusters_and_iterate)
{
	struct hm m;
	uint64_t k, v, sum = 0, i, n = 0;
	uint32_t it = 0;

	hm_init(&m);
	ASSERT_FALSE(hm_get(&m, 1, NULL), "empty get");
	ASSERT_FALSE(hm_del(&m, 1), "empty del");
	/* 12 keys in a 16-slot table: long clusters, some wrapping */
	for (i = 0; i < 12; i++)
		ASSERT_OK(hm_put(&m, i, i + 100), "put");
	ASSERT_EQ(m.cap, 16, "cap");
	ASSERT_OK(hm_put(&m, 3, 7), "replace");
	ASSERT_EQ(m.count, 12, "replace keeps count");
	for (i = 0; i < 12; i += 3)
		ASSERT_TRUE(hm_del(&m, i), "del");
	for (i = 0; i < 12; i++)
		ASSERT_EQ(hm_get(&m, i, &v), i % 3 != 0, "present");
	while (hm_next(&m, &it, &k, &v)) {
		n++;
		sum += k;
	}
	ASSERT_EQ(n, 8, "iterated");
	ASSERT_EQ(sum, 66 - (0 + 3 + 6 + 9), "keys");
	hm_clear(&m);
	ASSERT_EQ(m.count, 0, "cleared");
	ASSERT_FALSE(hm_get(&m, 1, NULL), "cleared get");
	ASSERT_OK(hm_put(&m, 1, 2), "put after clear");
	hm_free(&m);
}

/* hm_slot finds or adds in one search: a new key reads 0 and is added
 * once, an old one gives its value's slot, writes through it stick, and
 * growth past 3/4 keeps every key. */
TEST(hashmap_slot_get_or_insert)
{
	struct hm m;
	uint64_t *s, v, i;
	bool added;

	hm_init(&m);
	for (i = 0; i < 1000; i++) {
		s = hm_slot(&m, i * 31, &added);
		if (!ASSERT_TRUE(s != NULL, "slot"))
			break;
		ASSERT_TRUE(added, "new key added");
		ASSERT_EQ(*s, 0, "new slot reads 0");
		*s = i + 1;
	}
	ASSERT_EQ(m.count, 1000, "count");
	for (i = 0; i < 1000; i++) {
		s = hm_slot(&m, i * 31, &added);
		if (!ASSERT_TRUE(s != NULL, "slot again"))
			break;
		ASSERT_FALSE(added, "old key not added");
		ASSERT_EQ(*s, i + 1, "old value");
	}
	ASSERT_EQ(m.count, 1000, "count unchanged");
	ASSERT_TRUE(hm_slot(&m, 5, NULL) != NULL, "added may be NULL");
	ASSERT_TRUE(hm_get(&m, 5, &v), "slot key is present");
	ASSERT_EQ(v, 0, "its value");
	ASSERT_OK(hm_put(&m, 5, 9), "put replaces");
	ASSERT_EQ(m.count, 1001, "put on present key keeps count");
	hm_free(&m);
}

/* A map of pointers gives back the pointer put, and NULL for a key that
 * is not there (deleted or never put). */
TEST(hashmap_pointer_values)
{
	static int objs[64];
	struct hm m;
	uint64_t i;

	hm_init(&m);
	for (i = 0; i < 64; i++)
		ASSERT_OK(hm_put(&m, i << 32 | 5, (uintptr_t)&objs[i]), "put");
	ASSERT_TRUE(hm_del(&m, 7ULL << 32 | 5), "del");
	for (i = 0; i < 64; i++)
		ASSERT_EQ((uintptr_t)hm_get_ptr(&m, i << 32 | 5),
			  i == 7 ? 0 : (uintptr_t)&objs[i], "the pointer put");
	ASSERT_EQ((uintptr_t)hm_get_ptr(&m, 64ULL << 32 | 5), 0, "never put");
	hm_free(&m);
}

TEST(hashmap_hash_seeded)
{
	const char a[] = "libc.so.6";

	ASSERT_EQ(hm_hash(a, 9, 0), hm_hash(a, 9, 0), "stable");
	ASSERT_NEQ(hm_hash(a, 9, 0), hm_hash(a, 9, 1), "seed");
	ASSERT_NEQ(hm_hash(a, 9, 0), hm_hash(a, 8, 0), "length");
}

TEST(arr_grows_and_keeps)
{
	uint32_t *a = NULL, n = 0, cap = 0, i;

	for (i = 0; i < 1000; i++) {
		if (!ASSERT_OK(ARR_PUSH(a, n, cap, ARR_NO_LIMIT), "push"))
			break;
		a[n++] = i * 3;
	}
	ASSERT_EQ(n, 1000, "n");
	ASSERT_EQ(cap, 1024, "doubled from 4");
	for (i = 0; i < n; i++)
		if (a[i] != i * 3)
			break;
	ASSERT_EQ(i, 1000, "contents kept");
	/* reserve below the capacity does nothing */
	ASSERT_OK(ARR_RESERVE(a, cap, 10, 10), "reserve within");
	ASSERT_EQ(cap, 1024, "cap kept");
	free(a);
}

TEST(arr_limits_and_overflow)
{
	struct big {
		char b[1 << 20];
	} *bp = NULL;
	uint64_t *p = NULL;
	uint8_t *s = NULL, sn = 0, scap = 0;
	size_t cap = 0, bcap = 0;

	/* the caller's limit: the capacity stops there, then -ENOMEM */
	ASSERT_OK(ARR_RESERVE(p, cap, 5, 100), "5");
	ASSERT_EQ(cap, 8, "4, doubled");
	ASSERT_OK(ARR_RESERVE(p, cap, 33, 100), "33");
	ASSERT_EQ(cap, 64, "doubled");
	ASSERT_OK(ARR_RESERVE(p, cap, 65, 100), "65");
	ASSERT_EQ(cap, 100, "capped at the limit");
	ASSERT_EQ(ARR_RESERVE(p, cap, 101, 100), -ENOMEM, "past the limit");
	ASSERT_EQ(cap, 100, "unchanged");
	/* n * size overflowing size_t fails without an allocation */
	ASSERT_EQ(ARR_RESERVE(p, cap, SIZE_MAX / 4, ARR_NO_LIMIT), -ENOMEM,
		  "n * 8 overflows");
	ASSERT_EQ(ARR_RESERVE(bp, bcap, (SIZE_MAX >> 20) + 1, ARR_NO_LIMIT),
		  -ENOMEM, "n * 1 MiB overflows");
	ASSERT_TRUE(bp == NULL && bcap == 0, "unchanged");
	ASSERT_EQ(arr_grow(&p, &cap, 3, 0, ARR_NO_LIMIT), 0, "within cap");
	ASSERT_EQ(arr_grow(&p, &cap, 300, 0, ARR_NO_LIMIT), -ENOMEM, "size 0");
	/* the capacity variable's type is a limit too */
	while (!ARR_PUSH(s, sn, scap, ARR_NO_LIMIT))
		s[sn++] = 1;
	ASSERT_EQ(sn, 255, "uint8_t capacity");
	ASSERT_EQ(scap, 255, "cap");
	/* a failed allocation leaves the array as it was */
	alloc_fail(1, false);
	ASSERT_EQ(ARR_RESERVE(p, cap, 400, ARR_NO_LIMIT), -ENOMEM, "no memory");
	alloc_fail(0, false);
	ASSERT_EQ(cap, 100, "unchanged after ENOMEM");
	p[99] = 7;
	free(p);
	free(s);
}

TEST(arena_alignment_and_reuse)
{
	static const size_t sizes[] = { 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48 };
	struct arena a = { 0 };
	size_t i, j;
	char *s;

	for (j = 0; j < 50; j++)
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			size_t sz = sizes[i], want = sz & -sz;
			uintptr_t p = (uintptr_t)arena_alloc(&a, 3, sz);

			if (want > alignof(max_align_t))
				want = alignof(max_align_t);
			ASSERT_TRUE(p, "alloc");
			if (p % want) {
				ASSERT_EQ(p % want, 0, "aligned");
				break;
			}
			/* the next one-byte object can land right behind */
			arena_alloc(&a, 1, 1);
		}
	ASSERT_TRUE(arena_alloc(&a, 0, 8) != NULL, "empty");
	ASSERT_TRUE(arena_alloc(&a, 1, 0) != NULL, "size 0");
	ASSERT_TRUE(arena_alloc(&a, SIZE_MAX / 2, 4) == NULL, "n * size overflows");
	ASSERT_TRUE(arena_calloc(&a, SIZE_MAX, SIZE_MAX) == NULL, "overflows");
	ASSERT_TRUE(arena_alloc(&a, SIZE_MAX - 8, 1) == NULL, "too big");
	/* a large request gets its own chunk, zeroed by calloc */
	{
		unsigned char *big = arena_calloc(&a, 1, 1 << 20);
		size_t nz = 0;

		ASSERT_TRUE(big != NULL, "big");
		for (i = 0; big && i < (1 << 20); i++)
			nz += big[i] != 0;
		ASSERT_EQ(nz, 0, "zeroed");
		ASSERT_GE(a.bytes, (size_t)(1 << 20) + 256 * 1024, "bytes");
	}
	s = arena_strdup(&a, "perf_event");
	ASSERT_STREQ(s, "perf_event", "strdup");
	arena_reset(&a);
	ASSERT_LE(a.bytes, 256 * 1024 + 64, "one chunk kept");
	ASSERT_TRUE(arena_alloc(&a, 10, 8) != NULL, "after reset");
	arena_free(&a);
	ASSERT_EQ(a.bytes, 0, "freed");
	arena_reset(&a);
	ASSERT_TRUE(arena_strdup(&a, "") != NULL, "after free");
	arena_free(&a);
}

TEST(intern_dedup_dense_ids_stable_keys)
{
	struct intern t = { 0 };
	const char *first = NULL;
	char buf[32];
	uint32_t i;
	size_t len;
	bool added;

	ASSERT_EQ(intern_find(&t, "x", 1), -1, "empty find");
	ASSERT_TRUE(intern_key(&t, 0, NULL) == NULL, "empty key");
	for (i = 0; i < 5000; i++) {
		int n = snprintf(buf, sizeof(buf), "func_%u", i);

		ASSERT_EQ(intern_add(&t, buf, n, &added), i, "dense id");
		ASSERT_TRUE(added, "added");
		if (!i)
			first = intern_key(&t, 0, NULL);
	}
	/* dedup: same bytes, same id, nothing added */
	ASSERT_EQ(intern_add(&t, "func_42", 7, &added), 42, "dedup");
	ASSERT_FALSE(added, "not added");
	ASSERT_EQ(intern_find(&t, "func_4999", 9), 4999, "find");
	ASSERT_EQ(intern_find(&t, "func_5000", 9), -1, "find missing");
	/* a prefix is another key; so is the empty one */
	ASSERT_EQ(intern_add(&t, "func_4", 5, NULL), 5000, "prefix");
	ASSERT_EQ(intern_add(&t, "", 0, NULL), 5001, "empty key");
	/* keys do not move as the table grows, end in a NUL, are aligned */
	ASSERT_TRUE(first == intern_key(&t, 0, &len), "stable");
	ASSERT_EQ(len, 6, "len");
	ASSERT_STREQ(first, "func_0", "C string");
	ASSERT_EQ((uintptr_t)intern_key(&t, 5000, NULL) % 8, 0, "aligned");
	ASSERT_TRUE(intern_key(&t, 5002, NULL) == NULL, "unknown id");
	/* binary keys with NULs inside */
	{
		const uint32_t k1[3] = { 1, 0, 2 }, k2[3] = { 1, 0, 3 };

		ASSERT_EQ(intern_add(&t, k1, sizeof(k1), NULL), 5002, "bin");
		ASSERT_EQ(intern_add(&t, k2, sizeof(k2), NULL), 5003, "bin 2");
		ASSERT_EQ(intern_find(&t, k1, sizeof(k1)), 5002, "bin find");
	}
	intern_clear(&t);
	ASSERT_EQ(intern_find(&t, "func_1", 6), -1, "cleared");
	ASSERT_EQ(intern_add(&t, "func_1", 6, NULL), 0, "ids restart");
	intern_free(&t);
}

static int intern_many(void *arg)
{
	struct intern *t = arg;
	char buf[16];
	int i, n;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < 600; i++) {
		int64_t id;

		n = snprintf(buf, sizeof(buf), "k%d", i);
		id = intern_add(t, buf, n, NULL);
		if (id < 0) {
			/* nothing half-added: the table stays consistent */
			if (intern_find(t, buf, n) != -1 || t->n != (size_t)i)
				id = -EINVAL;
			intern_free(t);
			return (int)id;
		}
	}
	intern_free(t);
	return 0;
}

TEST(intern_allocation_failures)
{
	struct intern t;

	ASSERT_GE(alloc_fail_each("intern", intern_many, &t, false, NULL, 50),
		  3, "runs");
}

/* floor_u64 against a linear scan: every key around every start, duplicate
 * starts (the last of them wins), an empty table, a stride with payload. */
TEST(sorted_floor_u64_against_a_scan)
{
	struct row {
		uint64_t start;
		uint32_t payload;
	} rows[64];
	uint32_t n, i, bad = 0;
	uint64_t key;

	ASSERT_EQ(floor_u64(rows, 0, sizeof(rows[0]), 5), -1, "empty table");
	for (n = 1; n <= 64; n++) {
		for (i = 0; i < n; i++) {
			/* starts 10, 10, 30, 30, 50 ... (pairs of equal starts) */
			rows[i].start = 10 + 20 * (i / 2);
			rows[i].payload = i;
		}
		for (key = 0; key < 10 + 20 * n; key++) {
			int64_t want = -1;

			for (i = 0; i < n; i++)
				if (rows[i].start <= key)
					want = i;
			if (floor_u64(rows, n, sizeof(rows[0]), key) != want)
				bad++;
		}
	}
	ASSERT_EQ(bad, 0, "floor_u64 agrees with a scan");
	rows[0].start = UINT64_MAX;
	ASSERT_EQ(floor_u64(rows, 1, sizeof(rows[0]), UINT64_MAX), 0,
		  "a start at the top of the address space");
	ASSERT_EQ(floor_u64(rows, 1, sizeof(rows[0]), UINT64_MAX - 1), -1,
		  "below it");
}

TEST(sorted_cmp3_any_width)
{
	ASSERT_EQ(CMP3(1, 2), -1, "below");
	ASSERT_EQ(CMP3(2, 2), 0, "equal");
	ASSERT_EQ(CMP3(3, 2), 1, "above");
	/* a difference would overflow or wrap here */
	int64_t smin = INT64_MIN, smax = INT64_MAX;
	uint64_t umax = UINT64_MAX, uzero = 0;
	uint32_t u32max = UINT32_MAX, u32zero = 0;

	ASSERT_EQ(CMP3(smin, smax), -1, "int64 extremes");
	ASSERT_EQ(CMP3(umax, uzero), 1, "uint64 extremes");
	ASSERT_EQ(CMP3(u32zero, u32max), -1, "uint32 extremes");
}

/* dl_open_syms against the C library itself: the first soname that loads
 * is used, every function resolved is the one dlsym finds, and a missing
 * one leaves nothing open or set.  The oracle is dlsym on a handle of our
 * own. */
TEST(dlib_open_syms_fallback_and_missing)
{
	static const char *const names[] = { "libnot-there-ep.so.9",
					     "libc.so.6" };
	static const char *const none[] = { "libnot-there-ep.so.9" };
	size_t (*my_strlen)(const char *) = NULL;
	int (*my_atoi)(const char *) = NULL;
	const struct dl_sym ok[] = { { "strlen", (void **)&my_strlen },
				     { "atoi", (void **)&my_atoi } };
	const struct dl_sym bad[] = { { "strlen", (void **)&my_strlen },
				      { "ep_no_such_function", (void **)&my_atoi } };
	const char *missing = "unset";
	void *h, *ref = dlopen("libc.so.6", RTLD_NOW | RTLD_LOCAL);

	ASSERT_NOT_NULL(ref, "libc.so.6 opens");
	h = dl_open_syms(names, 2, ok, 2, &missing);
	ASSERT_NOT_NULL(h, "the second soname loads");
	ASSERT_TRUE(missing == NULL, "nothing missing");
	ASSERT_TRUE((void *)my_strlen == dlsym(ref, "strlen"), "strlen resolved");
	ASSERT_TRUE((void *)my_atoi == dlsym(ref, "atoi"), "atoi resolved");
	ASSERT_EQ(my_strlen("four"), 4, "strlen called through the slot");
	ASSERT_EQ(my_atoi("42"), 42, "atoi called through the slot");
	dlclose(h);

	h = dl_open_syms(names, 2, bad, 2, &missing);
	ASSERT_TRUE(h == NULL, "a missing function fails the load");
	ASSERT_STREQ(missing, "ep_no_such_function", "the missing one named");
	ASSERT_TRUE(my_strlen == NULL && my_atoi == NULL, "no slot left set");

	missing = "unset";
	ASSERT_TRUE(dl_open_syms(none, 1, ok, 2, &missing) == NULL,
		    "no soname loads");
	ASSERT_TRUE(missing == NULL, "not a missing function");
	ASSERT_TRUE(dl_open_syms(none, 1, ok, 2, NULL) == NULL,
		    "missing may be NULL");
	dlclose(ref);
}
