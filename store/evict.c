// SPDX-License-Identifier: Apache-2.0
/*
 * The size bound: how much room a put needs, and eviction of the least
 * recently used records in batches of their own transactions.
 */
#include "store_int.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "log.h"

#define EMERGENCY_PAGES 16		/* see evict_batch() (store.h) */
/* Bytes evicted per transaction: bounds the pages its copy-on-write and
 * its free-list record need. */
#define EVICT_BATCH_BYTES (4u << 20)

/* Pages in use by the snapshot of txn: every tree's pages (the free list's
 * own included) and the meta pages; the rest of the file is free. */
uint64_t st_pages_in_use(struct store *s, MDB_txn *txn)
{
	MDB_dbi dbis[] = { 0 /* free */, 1 /* main */, s->dbi_rec,
			   s->dbi_atime, s->dbi_lru, s->dbi_meta };
	uint64_t n = NUM_METAS;
	size_t i, count = s->have_dbs ? 6 : 2;
	MDB_stat st;

	for (i = 0; i < count; i++) {
		if (mdb_stat(txn, dbis[i], &st) == 0)
			n += st.ms_branch_pages + st.ms_leaf_pages +
			     st.ms_overflow_pages;
	}
	return n;
}

/* Evict the oldest records until about target bytes are freed, or the
 * cache is empty.  Returns 0 or a negative errno. */
static int evict(struct wctx *w, uint64_t target)
{
	struct store *s = w->s;
	uint64_t freed = 0;
	MDB_cursor *cur;
	int err = 0;

	err = st_lmdb_err(mdb_cursor_open(w->txn, s->dbi_lru, &cur));
	if (err)
		return err;
	while (freed < target) {
		uint8_t lk[LRU_KEY_LEN];
		MDB_val k, v;
		size_t size = 0;

		/* From the first entry each time: deleting moves cursors. */
		err = st_lmdb_err(mdb_cursor_get(cur, &k, &v, MDB_FIRST));
		if (err == -ENOENT) {
			err = 0;
			break;
		}
		if (err)
			break;
		if (k.mv_size != sizeof(lk)) {
			err = -EUCLEAN;
			break;
		}
		memcpy(lk, k.mv_data, sizeof(lk));
		err = st_rec_remove(w, lk + 8, &size);
		if (err == -ENOENT) { /* a stray index entry */
			err = 0;
			k.mv_data = lk;
			err = st_w_del(w->txn, s->dbi_lru, &k);
		} else if (!err) {
			/* The record, its node and index entries. */
			freed += size + 3 * 64;
			w->evicted++;
		}
		if (err)
			break;
	}
	mdb_cursor_close(cur);
	return err;
}

/* Bytes a record of len bytes takes, with room for the trees to grow. */
uint64_t st_need_bytes(struct store *s, size_t len)
{
	return len + sizeof(struct rec_hdr) + 8ull * s->psize;
}

/*
 * The pages kept free inside the map.  LMDB cannot even delete in a full
 * map (copy-on-write needs fresh pages), it reuses freed pages only two
 * commits later, and a record on overflow pages needs a contiguous run
 * of them: a free list cut into small pieces cannot take it and the file
 * grows instead.  This reserve absorbs all three, and the file itself
 * never passes the limit.
 */
static uint64_t reserve_bytes(const struct store *s)
{
	uint64_t r = s->limit / 8, min = 32ull * s->psize;

	return r > min ? r : min;
}

/* Bytes to evict before a record of len bytes goes in, so that the live
 * pages stay under the limit less the reserve: what it needs plus a
 * batch, so that not every put evicts.  0 when it fits. */
uint64_t st_room_needed(struct store *s, size_t len)
{
	uint64_t soft = s->limit - reserve_bytes(s), used, need;
	MDB_txn *txn;

	if (st_txn_begin(s, false, &txn))
		return 0;
	used = st_pages_in_use(s, txn) * s->psize;
	st_rtxn_end(s, txn);
	need = st_need_bytes(s, len);
	return used + need <= soft ? 0 : used + need - soft + s->limit / 64;
}

static int op_evict(struct wctx *w, void *arg)
{
	uint64_t *target = arg;
	int err = evict(w, *target);

	*target = w->evicted;
	return err;
}

/* Evict about target bytes (at most EVICT_BATCH_BYTES) in a transaction
 * of its own and commit, then commit once more: LMDB reuses the pages a
 * commit frees only from the commit after it on.  Evicting in the put's
 * own transaction instead could leave no reusable page at all after it
 * (what it freed not reusable yet, the rest taken by the record), and
 * then not even a delete could commit again.  Returns the number of
 * records evicted, or a negative errno. */
static int evict_batch(struct store *s, uint64_t target)
{
	uint64_t n = target < EVICT_BATCH_BYTES ? target : EVICT_BATCH_BYTES;
	uint64_t want = n;
	int err;

	err = st_write_txn(s, op_evict, &n);
	if (err == -ENOSPC) {
		/* Stuck all the same: let this eviction have a few pages past
		 * the map, then hold the map to the file again. */
		MDB_envinfo info;

		pthread_rwlock_wrlock(&s->map_lock);
		mdb_env_info(s->env, &info); /* may be past ours: see st_txn_begin() */
		mdb_env_set_mapsize(s->env, info.me_mapsize + EMERGENCY_PAGES *
								      s->psize);
		pthread_rwlock_unlock(&s->map_lock);
		n = want;
		err = st_write_txn(s, op_evict, &n);
		if (!err)
			err = st_write_txn(s, NULL, NULL);
		pthread_rwlock_wrlock(&s->map_lock);
		mdb_env_set_mapsize(s->env, s->map_bytes);
		pthread_rwlock_unlock(&s->map_lock);
		log_debug("store: %s: evicting needed up to %d pages past the "
			  "limit",
			  s->dir, EMERGENCY_PAGES);
	} else if (!err) {
		err = st_write_txn(s, NULL, NULL);
	}
	return err ? err : (int)(n > INT_MAX ? INT_MAX : n);
}

/* Evict about target bytes, in batches.  Returns the number of records
 * evicted, or a negative errno. */
int st_evict_round(struct store *s, uint64_t target)
{
	uint64_t done = 0, batch;
	int n, total = 0, dead;

	mdb_reader_check(s->env, &dead); /* slots of crashed readers pin pages */
	while (done < target) {
		batch = target - done;
		n = evict_batch(s, batch);
		if (n < 0)
			return total ? total : n;
		if (n == 0)
			break;
		total += n;
		done += batch < EVICT_BATCH_BYTES ? batch : EVICT_BATCH_BYTES;
	}
	return total;
}
