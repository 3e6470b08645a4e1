// SPDX-License-Identifier: Apache-2.0
/*
 * The record format: the key (file id, kind), the header each stored
 * value starts with, its checksum, and the removal of a record with its
 * index entries and counts.
 */
#include "store_int.h"

#include <linux/types.h>

#include "profiler.h"

#include <errno.h>
#include <string.h>
#include <xxhash.h>

#include "fuzzing.h"

void st_make_key(uint8_t key[KEY_LEN], const uint8_t id[16],
		 unsigned kind)
{
	memcpy(key, id, 16);
	key[16] = (uint8_t)kind;
}

bool st_kind_ok(unsigned kind)
{
	return kind > 0 && kind < STORE_KIND_MAX;
}

int st_rec_get(struct store *s, const uint8_t id[16], unsigned kind,
	       uint8_t key[KEY_LEN], MDB_txn **txn, MDB_val *v)
{
	MDB_val k = { KEY_LEN, key };
	int err;

	st_make_key(key, id, kind);
	err = st_txn_begin(s, false, txn);
	if (err)
		return err;
	err = st_lmdb_err(mdb_get(*txn, s->dbi_rec, &k, v));
	if (err) {
		st_rtxn_end(s, *txn);
		*txn = NULL;
	}
	return err;
}

const char *store_kind_name(unsigned kind)
{
	switch (kind) {
#define STORE_KIND_NAME_(name, val, label)                                     \
	case val:                                                              \
		return label;
		STORE_KINDS(STORE_KIND_NAME_)
#undef STORE_KIND_NAME_
#define STORE_KIND_INTERP_NAME_(NAME, name, type)                              \
	case STORE_KIND_INTERP_BASE + INTERP_##NAME:                           \
		return #name;
		INTERPRETERS(STORE_KIND_INTERP_NAME_)
#undef STORE_KIND_INTERP_NAME_
	default:
		return NULL;
	}
}

void st_put_be64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

uint64_t st_get_be64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* XXH3 rather than a CRC: every cache hit checks its whole record at
 * start-up, and XXH3 reads megabytes about four times faster than zlib's
 * crc32 on this class of machine. */
uint32_t st_rec_sum(const uint8_t key[KEY_LEN], const struct rec_hdr *h,
		    const void *payload)
{
	uint8_t head[KEY_LEN + sizeof(*h)];
	struct rec_hdr z = *h;

	z.sum = 0;
	memcpy(head, key, KEY_LEN);
	memcpy(head + KEY_LEN, &z, sizeof(z));
	/* the head's hash seeds the payload's: one pass, no state */
	return (uint32_t)XXH3_64bits_withSeed(payload, h->len,
					      XXH3_64bits(head, sizeof(head)));
}

/* Why a stored value is not a valid record of key, or NULL.  With
 * full, the checksum is checked too. */
const char *st_rec_check(const uint8_t key[KEY_LEN], const MDB_val *v,
			 bool full)
{
	struct rec_hdr h;

	if (v->mv_size < sizeof(h))
		return "truncated header";
	memcpy(&h, v->mv_data, sizeof(h)); /* LMDB aligns data to 2 only */
	if (h.magic != REC_MAGIC)
		return "bad magic";
	if (h.version != STORE_FORMAT_VERSION)
		return "other format version";
	if (h.kind != key[16] || h.flags)
		return "bad header";
	if (h.len != v->mv_size - sizeof(h))
		return "bad length";
	if (full &&
	    h.sum != st_rec_sum(key, &h,
				(const uint8_t *)v->mv_data + sizeof(h)) &&
	    !FUZZING_CRC_ADVISORY)
		return "checksum mismatch";
	return NULL;
}

void st_key_hex(const uint8_t key[KEY_LEN], char out[33])
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 16; i++) {
		out[2 * i] = hex[key[i] >> 4];
		out[2 * i + 1] = hex[key[i] & 15];
	}
	out[32] = 0;
}

static void counts_sub(struct meta_counts *c, unsigned kind, size_t vsize)
{
	uint64_t len = vsize >= sizeof(struct rec_hdr) ?
			       vsize - sizeof(struct rec_hdr) : 0;

	if (!st_kind_ok(kind))
		return;
	c->n[kind] -= c->n[kind] ? 1 : 0;
	c->bytes[kind] -= c->bytes[kind] < len ? c->bytes[kind] : len;
}

/* Remove key's record and index entries; *freed (may be NULL) gets the
 * value's size.  -ENOENT when there was no record. */
int st_rec_remove(struct wctx *w, const uint8_t key[KEY_LEN],
		  size_t *freed)
{
	struct store *s = w->s;
	MDB_val k = { KEY_LEN, (void *)key }, v;
	int err, had;

	had = st_lmdb_err(mdb_get(w->txn, s->dbi_rec, &k, &v));
	if (had && had != -ENOENT)
		return had;
	if (!had) {
		counts_sub(&w->counts, key[16], v.mv_size);
		if (freed)
			*freed = v.mv_size;
		err = st_w_del(w->txn, s->dbi_rec, &k);
		if (err)
			return err;
	}
	err = st_index_remove(w, key);
	return err ? err : had;
}
