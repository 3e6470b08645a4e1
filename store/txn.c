// SPDX-License-Identifier: Apache-2.0
/*
 * Transactions: LMDB's error codes translated at the edge, read
 * transactions from a pool, write operations that fault injection can
 * fail, and the write context (clock and counts) of one write
 * transaction.
 */
#include "store_int.h"

#include <errno.h>
#include <string.h>

#include "log.h"

/* LMDB's codes (positive errno, or its own negative range) to -errno. */
int st_lmdb_err(int rc)
{
	switch (rc) {
	case MDB_SUCCESS:
		return 0;
	case MDB_NOTFOUND:
		return -ENOENT;
	case MDB_KEYEXIST:
		return -EEXIST;
	case MDB_MAP_FULL:
	case MDB_DBS_FULL:
	case MDB_PAGE_FULL:
		return -ENOSPC;
	case MDB_TXN_FULL:
	case MDB_CURSOR_FULL:
		return -E2BIG;
	case MDB_READERS_FULL:
	case MDB_TLS_FULL:
	case MDB_MAP_RESIZED:
		return -EAGAIN;
	case MDB_PAGE_NOTFOUND:
	case MDB_CORRUPTED:
	case MDB_INVALID:
	case MDB_VERSION_MISMATCH:
	case MDB_INCOMPATIBLE:
		return -EUCLEAN;
	case MDB_PANIC:
		return -EIO;
	case MDB_BAD_RSLOT:
	case MDB_BAD_TXN:
	case MDB_BAD_VALSIZE:
	case MDB_BAD_DBI:
		return -EINVAL;
	default:
		return rc > 0 ? -rc : -EIO;
	}
}

const char *st_err_str(int err)
{
	return strerror(err < 0 ? -err : err);
}

/* Note a fatal error: LMDB refuses every later transaction of this
 * environment, so stop trying (and say so once). */
int st_note_err(struct store *s, int err)
{
	if (err == -EIO && !__atomic_exchange_n(&s->broken, true,
						__ATOMIC_RELAXED))
		log_error("store: %s: fatal I/O error; running without a cache "
			  "until restart",
			  s->dir);
	return err;
}

/* ---- transactions ------------------------------------------------------ */

/* Begin a transaction, holding map_lock shared until it ends (st_rtxn_end(),
 * st_rtxn_commit(), st_wtxn_abort(), st_wtxn_commit()): when another
 * process grew the file past our map, remap (exclusively) and try again.
 * Read transactions come from the pool. */
int st_txn_begin(struct store *s, bool write, MDB_txn **out)
{
	MDB_txn *txn;
	int rc, tries;

	*out = NULL;
	if (__atomic_load_n(&s->broken, __ATOMIC_RELAXED))
		return -EIO;
	if (write && (rc = st_lmdb_fault()))
		return st_note_err(s, st_lmdb_err(rc));
	for (tries = 0;; tries++) {
		pthread_rwlock_rdlock(&s->map_lock);
		txn = NULL;
		if (!write) {
			pthread_mutex_lock(&s->pool_lock);
			if (s->n_pool)
				txn = s->pool[--s->n_pool];
			pthread_mutex_unlock(&s->pool_lock);
		}
		if (txn) {
			rc = mdb_txn_renew(txn);
			if (rc) {
				mdb_txn_abort(txn);
				txn = NULL;
			}
		} else {
			rc = mdb_txn_begin(s->env, NULL, write ? 0 : MDB_RDONLY,
					   &txn);
		}
		if (!rc) {
			*out = txn;
			return 0;
		}
		pthread_rwlock_unlock(&s->map_lock);
		if (rc != MDB_MAP_RESIZED || tries)
			break;
		/* Another process grew the file past our map: remap, with
		 * no transaction of ours running.  LMDB rounds the size up
		 * to the data in the file. */
		pthread_rwlock_wrlock(&s->map_lock);
		rc = mdb_env_set_mapsize(s->env, s->map_bytes);
		pthread_rwlock_unlock(&s->map_lock);
		if (rc)
			break;
	}
	return st_note_err(s, st_lmdb_err(rc));
}

/* End a read transaction by committing it: the way that keeps the
 * database handles opened in it. */
int st_rtxn_commit(struct store *s, MDB_txn *txn)
{
	int rc = mdb_txn_commit(txn);

	pthread_rwlock_unlock(&s->map_lock);
	return st_lmdb_err(rc);
}

/* Return a read transaction to the pool. */
void st_rtxn_end(struct store *s, MDB_txn *txn)
{
	mdb_txn_reset(txn);
	pthread_mutex_lock(&s->pool_lock);
	if (s->n_pool < POOL_MAX) {
		s->pool[s->n_pool++] = txn;
		txn = NULL;
	}
	pthread_mutex_unlock(&s->pool_lock);
	if (txn)
		mdb_txn_abort(txn);
	pthread_rwlock_unlock(&s->map_lock);
}

void st_wtxn_abort(struct store *s, MDB_txn *txn)
{
	mdb_txn_abort(txn);
	pthread_rwlock_unlock(&s->map_lock);
}

int st_wtxn_commit(struct store *s, MDB_txn *txn)
{
	int rc = st_lmdb_fault();

	if (rc)
		mdb_txn_abort(txn);
	else
		rc = mdb_txn_commit(txn);
	pthread_rwlock_unlock(&s->map_lock);
	return st_note_err(s, st_lmdb_err(rc));
}

int st_w_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *k, MDB_val *v,
	     unsigned flags)
{
	int rc = st_lmdb_fault();

	return st_lmdb_err(rc ? rc : mdb_put(txn, dbi, k, v, flags));
}

int st_w_del(MDB_txn *txn, MDB_dbi dbi, MDB_val *k)
{
	int rc = st_lmdb_fault();

	return st_lmdb_err(rc ? rc : mdb_del(txn, dbi, k, NULL));
}

/* ---- write context ------------------------------------------------------ */

int st_meta_get(struct store *s, MDB_txn *txn, const char *name,
		void *out, size_t size)
{
	MDB_val k = { strlen(name), (void *)name }, v;
	int err = st_lmdb_err(mdb_get(txn, s->dbi_meta, &k, &v));

	if (err)
		return err;
	if (v.mv_size != size)
		return -EUCLEAN;
	memcpy(out, v.mv_data, size);
	return 0;
}

int st_meta_put(struct store *s, MDB_txn *txn, const char *name,
		const void *val, size_t size)
{
	MDB_val k = { strlen(name), (void *)name }, v = { size, (void *)val };

	return st_w_put(txn, s->dbi_meta, &k, &v, 0);
}

static int wctx_begin(struct store *s, struct wctx *w)
{
	int err;

	memset(w, 0, sizeof(*w));
	w->s = s;
	err = st_txn_begin(s, true, &w->txn);
	if (err)
		return err;
	err = st_meta_get(s, w->txn, "clock", &w->clock, sizeof(w->clock));
	if (err == -ENOENT || err == -EUCLEAN)
		err = 0, w->clock = 0;
	if (!err) {
		err = st_meta_get(s, w->txn, "counts", &w->counts,
				  sizeof(w->counts));
		if (err == -ENOENT || err == -EUCLEAN)
			err = 0, memset(&w->counts, 0, sizeof(w->counts));
	}
	if (err) {
		st_wtxn_abort(s, w->txn);
		w->txn = NULL;
	}
	return err;
}

/* Write the clock (so that every commit writes, which is what makes
 * pages freed two commits ago reusable) and the counts; commit. */
static int wctx_commit(struct wctx *w)
{
	struct store *s = w->s;
	int err;

	err = st_meta_put(s, w->txn, "clock", &w->clock, sizeof(w->clock));
	if (!err)
		err = st_meta_put(s, w->txn, "counts", &w->counts,
				  sizeof(w->counts));
	if (err) {
		st_wtxn_abort(s, w->txn);
		return err;
	}
	err = st_wtxn_commit(s, w->txn);
	if (!err && w->evicted)
		CNT_ADD(s->evictions, w->evicted);
	return err;
}

/* One write transaction: the noted uses, then op (if any), commit.  The
 * caller holds the write lock. */
int st_write_txn(struct store *s, write_op *op, void *arg)
{
	struct wctx w;
	int err;

	err = wctx_begin(s, &w);
	if (err)
		return err;
	err = st_apply_pending(&w);
	if (!err && op)
		err = op(&w, arg);
	if (err) {
		st_wtxn_abort(s, w.txn);
		return err;
	}
	return wctx_commit(&w);
}

/* The same, taking the write lock (waiting lock_timeout_ms at most). */
int st_write_locked(struct store *s, write_op *op, void *arg)
{
	int err;

	err = st_write_begin(s, s->lock_timeout_ms);
	if (err)
		return err;
	err = st_write_txn(s, op, arg);
	st_write_end(s);
	return err;
}
