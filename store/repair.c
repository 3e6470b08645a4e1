// SPDX-License-Identifier: Apache-2.0
/*
 * Repair: store_verify() checks every record and the access-time index
 * and mends them; a data file the probe found damaged is moved aside
 * (with a fresh lock file) before the store opens.
 */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* Opening waits for LMDB's lock file only while another process sets
 * it up; longer than this many lock timeouts, it is held. */
#define PROBE_OPEN_TIMEOUTS 5 /* (store.h) */

struct keylist {
	uint8_t (*k)[LRU_KEY_LEN];
	size_t n, cap;
};

static int keylist_add(struct keylist *l, const void *key, size_t len)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		void *p;

		if (cap > SIZE_MAX / sizeof(*l->k))
			return -ENOMEM;
		p = st_realloc(l->k, cap * sizeof(*l->k));
		if (!p)
			return -ENOMEM;
		l->k = p;
		l->cap = cap;
	}
	memset(l->k[l->n], 0, LRU_KEY_LEN);
	memcpy(l->k[l->n++], key, len < LRU_KEY_LEN ? len : LRU_KEY_LEN);
	return 0;
}

/* Walk the records: check each one, recount, list the bad ones and the
 * ones without an access time. */
static int verify_records(struct wctx *w, uint64_t *checked,
			  struct keylist *bad, struct keylist *no_atime)
{
	struct store *s = w->s;
	MDB_cursor *cur;
	MDB_val k, v, a;
	int err;

	memset(&w->counts, 0, sizeof(w->counts));
	err = st_lmdb_err(mdb_cursor_open(w->txn, s->dbi_rec, &cur));
	if (err)
		return err;
	while (!(err = st_lmdb_err(mdb_cursor_get(cur, &k, &v, MDB_NEXT)))) {
		const uint8_t *key = k.mv_data;

		(*checked)++;
		if (k.mv_size != KEY_LEN || !st_kind_ok(key[16]) ||
		    st_rec_check(key, &v, true)) {
			err = keylist_add(bad, k.mv_data, k.mv_size);
		} else {
			w->counts.n[key[16]]++;
			w->counts.bytes[key[16]] +=
				v.mv_size - sizeof(struct rec_hdr);
			err = st_lmdb_err(mdb_get(w->txn, s->dbi_atime, &k,
						  &a));
			if (err == -ENOENT)
				err = keylist_add(no_atime, key, KEY_LEN);
		}
		if (err)
			break;
	}
	mdb_cursor_close(cur);
	return err == -ENOENT ? 0 : err;
}

/* List index entries that do not match: lru entries without the same
 * tick in atime, atime entries without a record or without an lru entry
 * (both removed: the record, if any, then gets a fresh tick). */
static int verify_index(struct wctx *w, struct keylist *stray_lru,
			struct keylist *stray_atime)
{
	struct store *s = w->s;
	MDB_cursor *cur;
	MDB_val k, v, x;
	uint64_t tick;
	int err;

	err = st_lmdb_err(mdb_cursor_open(w->txn, s->dbi_lru, &cur));
	if (err)
		return err;
	while (!(err = st_lmdb_err(mdb_cursor_get(cur, &k, &v, MDB_NEXT)))) {
		MDB_val ak = { KEY_LEN, (uint8_t *)k.mv_data + 8 };

		if (k.mv_size != LRU_KEY_LEN ||
		    mdb_get(w->txn, s->dbi_atime, &ak, &x) ||
		    x.mv_size != sizeof(tick) ||
		    (memcpy(&tick, x.mv_data, sizeof(tick)),
		     tick != st_get_be64(k.mv_data)))
			err = keylist_add(stray_lru, k.mv_data, k.mv_size);
		if (err)
			break;
	}
	mdb_cursor_close(cur);
	if (err != -ENOENT)
		return err;
	err = st_lmdb_err(mdb_cursor_open(w->txn, s->dbi_atime, &cur));
	if (err)
		return err;
	while (!(err = st_lmdb_err(mdb_cursor_get(cur, &k, &v, MDB_NEXT)))) {
		uint8_t lk[LRU_KEY_LEN];
		MDB_val lv = { sizeof(lk), lk };
		bool ok = k.mv_size == KEY_LEN && v.mv_size == sizeof(tick) &&
			  !mdb_get(w->txn, s->dbi_rec, &k, &x);

		if (ok) {
			memcpy(&tick, v.mv_data, sizeof(tick));
			st_put_be64(lk, tick);
			memcpy(lk + 8, k.mv_data, KEY_LEN);
			ok = !mdb_get(w->txn, s->dbi_lru, &lv, &x);
		}
		if (!ok)
			err = keylist_add(stray_atime, k.mv_data, k.mv_size);
		if (err)
			break;
	}
	mdb_cursor_close(cur);
	return err == -ENOENT ? 0 : err;
}

struct verify_arg {
	uint64_t checked;
	struct keylist bad, no_atime, stray_lru, stray_atime;
};

static int op_verify(struct wctx *w, void *arg)
{
	struct verify_arg *a = arg;
	struct store *s = w->s;
	size_t i;
	int err;

	err = verify_records(w, &a->checked, &a->bad, &a->no_atime);
	for (i = 0; !err && i < a->bad.n; i++) {
		MDB_val k = { KEY_LEN, a->bad.k[i] };

		/* Counts were recomputed from the good records only. */
		err = st_w_del(w->txn, s->dbi_rec, &k);
		if (!err)
			err = st_index_remove(w, a->bad.k[i]);
	}
	if (!err)
		err = verify_index(w, &a->stray_lru, &a->stray_atime);
	for (i = 0; !err && i < a->stray_lru.n; i++) {
		MDB_val k = { LRU_KEY_LEN, a->stray_lru.k[i] };

		err = st_w_del(w->txn, s->dbi_lru, &k);
	}
	for (i = 0; !err && i < a->stray_atime.n; i++) {
		MDB_val k = { KEY_LEN, a->stray_atime.k[i] }, x;

		err = st_index_remove(w, a->stray_atime.k[i]);
		if (!err && !mdb_get(w->txn, s->dbi_rec, &k, &x))
			err = st_atime_set(w, a->stray_atime.k[i]);
	}
	for (i = 0; !err && i < a->no_atime.n; i++)
		err = st_atime_set(w, a->no_atime.k[i]);
	return err;
}

int store_verify(struct store *s, uint64_t *checked)
{
	struct verify_arg a = { 0 };
	size_t bad;
	int err;

	if (checked)
		*checked = 0;
	if (!s->have_dbs)
		return s->read_only ? -EROFS : 0;
	err = st_write_locked(s, op_verify, &a);
	bad = a.bad.n;
	free(a.bad.k);
	free(a.no_atime.k);
	free(a.stray_lru.k);
	free(a.stray_atime.k);
	if (err)
		return err;
	CNT_ADD(s->corrupt, bad);
	if (checked)
		*checked = a.checked;
	if (bad)
		log_warn("store: %s: verify: removed %zu bad records of %llu",
			 s->dir, bad, (unsigned long long)a.checked);
	return bad > INT_MAX ? INT_MAX : (int)bad;
}

/* ---- repair ------------------------------------------------------------- */

/* Truncate lock.mdb and, with data too, move data.mdb aside as
 * data.mdb.corrupt, but only when no process has the environment open
 * (LMDB holds a read lock on the lock file's first byte for as long as
 * the environment is open; we take a write lock there).  Returns 0,
 * -EBUSY when it is in use, or a negative errno. */
static int repair(const char *dir, bool data)
{
	char lpath[PATH_MAX], dpath[PATH_MAX], cpath[PATH_MAX];
	int fd, err;

	if ((err = st_join(lpath, sizeof(lpath), dir, "lock.mdb")) ||
	    (err = st_join(dpath, sizeof(dpath), dir, "data.mdb")) ||
	    (err = st_join(cpath, sizeof(cpath), dir, "data.mdb.corrupt")))
		return err;
	fd = open(lpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	/* LMDB's own lock, byte 0 of lock.mdb: see mdb_env_excl_lock(). */
	err = st_file_lock(fd, F_WRLCK, 0);
	if (err == -EAGAIN)
		err = -EBUSY;
	if (!err && data && rename(dpath, cpath) < 0 && errno != ENOENT)
		err = -errno;
	/* Whoever opens next starts a fresh lock file. */
	if (!err && ftruncate(fd, 0) < 0)
		err = -errno;
	close(fd); /* drops the lock */
	return err;
}

/* The probe, and the repair it calls for: a fresh lock file first (it
 * may be the damaged one), then the data file moved aside.  suspect: an
 * LMDB assertion marked the file, move it aside without asking.
 * Returns 0 when the file (if any) can be trusted now. */
int st_check_and_repair(struct store *s, bool suspect)
{
	const char *why = "an LMDB assertion failed on it";
	enum probe_result r = PROBE_BAD;
	int stage = 0, err = 0, tries;

	for (tries = suspect ? 1 : 0; tries < 2; tries++) {
		if (!suspect) {
			r = st_probe(s->dir,
				     PROBE_OPEN_TIMEOUTS * s->lock_timeout_ms,
				     &stage, &err);
			if (r == PROBE_OK) {
				if (tries)
					log_warn("store: %s: its lock file was "
						 "damaged; reset it",
						 s->dir);
				return 0;
			}
			why = err == -EUCLEAN ? "inconsistent" :
			      stage >= PROBE_WALKING ?
						"reading it crashed" :
						"opening it failed or crashed";
		}
		if (r == PROBE_TIMEOUT) {
			log_error("store: %s: blocked on its lock file (another "
				  "process holds it?); running without a cache",
				  s->dir);
			return -EBUSY;
		}
		if (r == PROBE_ERRNO) {
			log_error("store: %s: cannot open: %s; running without "
				  "a cache",
				  s->dir, st_err_str(err));
			return err;
		}
		if (s->read_only) {
			log_error("store: %s: data.mdb is damaged (%s) and the "
				  "store is read-only; running without a cache",
				  s->dir, why);
			return -EUCLEAN;
		}
		err = repair(s->dir, tries > 0);
		if (err == -EBUSY) {
			log_error("store: %s: data.mdb is damaged (%s) but in "
				  "use by another process; running without a "
				  "cache",
				  s->dir, why);
			return -EUCLEAN;
		}
		if (err) {
			log_error("store: %s: data.mdb is damaged (%s) and "
				  "cannot be moved aside: %s",
				  s->dir, why, st_err_str(err));
			return err;
		}
	}
	log_warn("store: %s: data.mdb was damaged (%s); moved to "
		 "data.mdb.corrupt, starting empty",
		 s->dir, why);
	return 0;
}
