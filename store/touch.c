// SPDX-License-Identifier: Apache-2.0
/*
 * Access times.  Reads note the keys they used (and the bad records they
 * met) in a bounded in-memory batch; the next write transaction of this
 * process applies the batch to the atime and lru databases.
 */
#include "store_int.h"

#include <errno.h>
#include <string.h>

static uint32_t key_hash(const uint8_t key[KEY_LEN])
{
	uint32_t h;

	/* File ids are SHA-256 output: any four bytes are a good hash. */
	memcpy(&h, key, sizeof(h));
	return h ^ key[16] * 0x9e3779b1u;
}

/* Note a use or a drop of key for the next write transaction.  Returns
 * the number of notes queued, or 0 when the queue was full. */
unsigned st_pend_add(struct store *s, const uint8_t key[KEY_LEN],
		     enum pend_op op)
{
	uint32_t i = key_hash(key) % PENDING_SLOTS;
	unsigned n = 0;

	if (s->read_only)
		return 0;
	pthread_mutex_lock(&s->pend_lock);
	for (;; i = (i + 1) % PENDING_SLOTS) {
		struct pending *p;

		if (!s->pend_slot[i]) {
			if (s->n_pend == PENDING_MAX)
				break;
			p = &s->pend[s->n_pend++];
			memcpy(p->key, key, KEY_LEN);
			p->op = (uint8_t)op;
			s->pend_slot[i] = (uint16_t)s->n_pend;
			n = s->n_pend;
			break;
		}
		p = &s->pend[s->pend_slot[i] - 1];
		if (memcmp(p->key, key, KEY_LEN) == 0) {
			if (op == PEND_DROP)
				p->op = PEND_DROP;
			n = s->n_pend;
			break;
		}
	}
	pthread_mutex_unlock(&s->pend_lock);
	if (!n && op == PEND_TOUCH)
		CNT_ADD(s->touches_dropped, 1);
	return n;
}

/* Move the queue to pend_work (the caller holds write_lock). */
static unsigned pend_take(struct store *s)
{
	unsigned n;

	pthread_mutex_lock(&s->pend_lock);
	n = s->n_pend;
	memcpy(s->pend_work, s->pend, n * sizeof(*s->pend));
	s->n_pend = 0;
	memset(s->pend_slot, 0, PENDING_SLOTS * sizeof(*s->pend_slot));
	pthread_mutex_unlock(&s->pend_lock);
	return n;
}

static int lru_del(struct wctx *w, const uint8_t key[KEY_LEN], uint64_t tick)
{
	uint8_t lk[LRU_KEY_LEN];
	MDB_val k = { sizeof(lk), lk };
	int err;

	st_put_be64(lk, tick);
	memcpy(lk + 8, key, KEY_LEN);
	err = st_w_del(w->txn, w->s->dbi_lru, &k);
	return err == -ENOENT ? 0 : err;
}

/* Give key a new tick (its atime entry and its lru entry). */
int st_atime_set(struct wctx *w, const uint8_t key[KEY_LEN])
{
	struct store *s = w->s;
	uint8_t lk[LRU_KEY_LEN];
	MDB_val k = { KEY_LEN, (void *)key }, v, lv = { 0, lk };
	uint64_t old, tick = ++w->clock;
	int err;

	err = st_lmdb_err(mdb_get(w->txn, s->dbi_atime, &k, &v));
	if (!err && v.mv_size == sizeof(old)) {
		memcpy(&old, v.mv_data, sizeof(old));
		err = lru_del(w, key, old);
	} else if (err == -ENOENT || !err) {
		err = 0;
	}
	if (err)
		return err;
	v.mv_size = sizeof(tick);
	v.mv_data = &tick;
	err = st_w_put(w->txn, s->dbi_atime, &k, &v, 0);
	if (err)
		return err;
	st_put_be64(lk, tick);
	memcpy(lk + 8, key, KEY_LEN);
	k.mv_size = sizeof(lk);
	k.mv_data = lk;
	return st_w_put(w->txn, s->dbi_lru, &k, &lv, 0);
}

/* Remove key's access time and its lru entry (absent ones are fine). */
int st_index_remove(struct wctx *w, const uint8_t key[KEY_LEN])
{
	MDB_val k = { KEY_LEN, (void *)key }, v;
	uint64_t tick;
	int err;

	err = st_lmdb_err(mdb_get(w->txn, w->s->dbi_atime, &k, &v));
	if (err)
		return err == -ENOENT ? 0 : err;
	if (v.mv_size == sizeof(tick)) {
		memcpy(&tick, v.mv_data, sizeof(tick));
		err = lru_del(w, key, tick);
	}
	return err ? err : st_w_del(w->txn, w->s->dbi_atime, &k);
}

/* Apply the noted uses and drops (best effort: a failed batch is lost). */
int st_apply_pending(struct wctx *w)
{
	struct store *s = w->s;
	unsigned i, n = pend_take(s);
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		const struct pending *p = &s->pend_work[i];
		MDB_val k = { KEY_LEN, (void *)p->key }, v;

		err = st_lmdb_err(mdb_get(w->txn, s->dbi_rec, &k, &v));
		if (err == -ENOENT) { /* evicted or deleted since */
			err = 0;
			continue;
		}
		if (err)
			break;
		if (p->op == PEND_DROP) {
			/* Another process may have rewritten it since. */
			if (st_rec_check(p->key, &v, true))
				err = st_rec_remove(w, p->key, NULL);
		} else {
			err = st_atime_set(w, p->key);
		}
	}
	if (err && i < n)
		CNT_ADD(s->touches_dropped, n - i);
	return err;
}

int store_flush(struct store *s)
{
	unsigned n;
	int err;

	if (s->read_only || !s->have_dbs)
		return 0;
	pthread_mutex_lock(&s->pend_lock);
	n = s->n_pend;
	pthread_mutex_unlock(&s->pend_lock);
	if (n && (err = st_write_locked(s, NULL, NULL)))
		return err;
	if (!s->no_sync)
		return 0;
	return st_note_err(s, st_lmdb_err(mdb_env_sync(s->env, 1)));
}
