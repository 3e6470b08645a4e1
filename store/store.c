// SPDX-License-Identifier: Apache-2.0
/*
 * The persistent cache on LMDB: the public reads and writes, clear and
 * stats.  store_int.h describes the layout and names the file of each
 * concern.
 */
#include "store_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "log.h"

#define EVICT_ROUNDS 8

/* What a lookup does with the record it finds. */
struct reader {
	bool copy;	     /* into a malloc'd *val, *len */
	store_read_fn *fn; /* or hand it to fn (both checksum it) */
	void *arg;
	int ret;
};

static int lookup(struct store *s, const uint8_t id[16], enum store_kind kind,
		  struct reader *rd, void **val, size_t *len)
{
	bool copy = rd && rd->copy, full = rd != NULL;
	uint8_t key[KEY_LEN];
	const char *bad;
	MDB_txn *txn;
	MDB_val v;
	int err;

	if (!st_kind_ok(kind))
		return -EINVAL;
	if (!s->have_dbs) {
		CNT_ADD(s->misses, 1);
		return -ENOENT;
	}
	err = st_rec_get(s, id, kind, key, &txn, &v);
	if (err) {
		/* st_txn_begin() noted its own errors: noting one again
		 * changes nothing */
		if (err == -ENOENT)
			CNT_ADD(s->misses, 1);
		return st_note_err(s, err);
	}
	bad = st_rec_check(key, &v, full);
	if (bad) {
		char hex[33];

		st_rtxn_end(s, txn);
		st_key_hex(key, hex);
		CNT_ADD(s->corrupt, 1);
		CNT_ADD(s->misses, 1);
		log_warn_once("store: %s: record %s/%s: %s; dropping it (and "
			      "counting others like it quietly)",
			      s->dir, hex,
			      store_kind_name(kind) ?: "?", bad);
		st_pend_add(s, key, PEND_DROP);
		return -ENOENT;
	}
	if (copy) {
		size_t n = v.mv_size - sizeof(struct rec_hdr);
		void *buf = NULL;

		if (n) {
			buf = st_malloc(n);
			if (!buf) {
				st_rtxn_end(s, txn);
				return -ENOMEM;
			}
			memcpy(buf, (const uint8_t *)v.mv_data +
					    sizeof(struct rec_hdr),
			       n);
		}
		*val = buf;
		*len = n;
	} else if (rd) {
		rd->ret = rd->fn(rd->arg,
				 (const uint8_t *)v.mv_data + sizeof(struct rec_hdr),
				 v.mv_size - sizeof(struct rec_hdr));
	}
	st_rtxn_end(s, txn);
	CNT_ADD(s->hits, 1);
	/* Three quarters full: write the batch now if nobody is writing. */
	if (st_pend_add(s, key, PEND_TOUCH) >= PENDING_MAX * 3 / 4 &&
	    st_write_begin(s, 0) == 0) {
		st_write_txn(s, NULL, NULL);
		st_write_end(s);
	}
	return 0;
}

int store_get(struct store *s, const uint8_t id[16], enum store_kind kind,
	      void **val, size_t *len)
{
	struct reader rd = { .copy = true };

	*val = NULL;
	*len = 0;
	return lookup(s, id, kind, &rd, val, len);
}

int store_read(struct store *s, const uint8_t id[16], enum store_kind kind,
	       store_read_fn *fn, void *arg)
{
	struct reader rd = { .fn = fn, .arg = arg };
	int err = lookup(s, id, kind, &rd, NULL, NULL);

	return err ? err : rd.ret;
}

int store_has(struct store *s, const uint8_t id[16], enum store_kind kind)
{
	return lookup(s, id, kind, NULL, NULL, NULL);
}

void store_release_pages(struct store *s)
{
	unsigned long long start, end, ino;
	unsigned major, minor;
	mdb_filehandle_t fd;
	struct stat st;
	char line[512];
	FILE *f;

	if (!s || !s->env || s->broken || mdb_env_get_fd(s->env, &fd) ||
	    fstat(fd, &st) < 0)
		return;
	/* LMDB tells its map's address only when it is fixed: find the
	 * mappings of the data file */
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	/* shared: a remap (exclusive) cannot move the map meanwhile */
	pthread_rwlock_rdlock(&s->map_lock);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %*s %*x %x:%x %llu", &start, &end,
			   &major, &minor, &ino) == 5 &&
		    makedev(major, minor) == st.st_dev && ino == st.st_ino)
			madvise((void *)(uintptr_t)start, end - start,
				MADV_DONTNEED);
	pthread_rwlock_unlock(&s->map_lock);
	fclose(f);
}

/* ---- public: writes ----------------------------------------------------- */

/* The record: the old one out, the new one in. */
int st_op_put(struct wctx *w, void *arg)
{
	const struct put_arg *a = arg;
	struct store *s = w->s;
	MDB_val k = { KEY_LEN, (void *)a->key }, v;
	struct rec_hdr h = { .magic = REC_MAGIC,
			     .version = STORE_FORMAT_VERSION,
			     .kind = a->key[16],
			     .len = (uint32_t)a->len };
	int err;

	err = st_rec_remove(w, a->key, NULL);
	if (err && err != -ENOENT)
		return err;
	/* Reserve the space and write into the map: one copy. */
	v.mv_size = (a->raw ? 0 : sizeof(h)) + a->len;
	v.mv_data = NULL;
	err = st_lmdb_fault();
	err = st_lmdb_err(err ? err : mdb_put(w->txn, s->dbi_rec, &k, &v,
					   MDB_RESERVE));
	if (err)
		return err;
	if (a->raw) {
		if (a->len)
			memcpy(v.mv_data, a->val, a->len);
	} else {
		h.sum = st_rec_sum(a->key, &h, a->val);
		memcpy(v.mv_data, &h, sizeof(h));
		if (a->len)
			memcpy((uint8_t *)v.mv_data + sizeof(h), a->val,
			       a->len);
	}
	w->counts.n[h.kind]++;
	w->counts.bytes[h.kind] += v.mv_size > sizeof(h) ?
					   v.mv_size - sizeof(h) : 0;
	return st_atime_set(w, a->key);
}

int store_put(struct store *s, const uint8_t id[16], enum store_kind kind,
	      const void *val, size_t len)
{
	uint8_t key[KEY_LEN];
	struct put_arg arg = { key, val, len };
	uint64_t room;
	int err, round;

	if (!st_kind_ok(kind) || (len && !val))
		return -EINVAL;
	if (len > s->limit / 2 || len > UINT32_MAX - sizeof(struct rec_hdr)) {
		CNT_ADD(s->put_errors, 1);
		return -E2BIG;
	}
	st_make_key(key, id, kind);
	err = st_write_begin(s, s->lock_timeout_ms);
	if (err)
		goto out;
	room = st_room_needed(s, len);
	if (room && (err = st_evict_round(s, room)) < 0)
		goto unlock;
	for (round = 0;; round++) {
		/* MDB_MAP_FULL, or a full disk at commit. */
		err = st_write_txn(s, st_op_put, &arg);
		if (err != -ENOSPC || round == EVICT_ROUNDS)
			break;
		err = st_evict_round(s, (st_need_bytes(s, len) << round) +
					     s->limit / 64);
		log_debug("store: %s: put of %zu bytes: map full, round %d "
			  "evicted %d",
			  s->dir, len, round, err);
		if (err <= 0) { /* nothing left to evict, or an error */
			err = err ? err : -ENOSPC;
			break;
		}
	}
unlock:
	st_write_end(s);
out:
	if (err) {
		CNT_ADD(s->put_errors, 1);
		if (err == -ENOSPC)
			log_warn_once("store: %s: put: no room for %zu bytes "
				      "(limit %llu, or the disk is full); "
				      "counting such failures quietly",
				      s->dir, len, (unsigned long long)s->limit);
		else if (err == -EBUSY)
			log_warn_once("store: %s: put: another process held the "
				      "write lock over %u ms; counting such "
				      "failures quietly",
				      s->dir, s->lock_timeout_ms);
		return err;
	}
	CNT_ADD(s->puts, 1);
	return 0;
}

static int op_del(struct wctx *w, void *key)
{
	return st_rec_remove(w, key, NULL);
}

int store_del(struct store *s, const uint8_t id[16], enum store_kind kind)
{
	uint8_t key[KEY_LEN];

	if (!st_kind_ok(kind))
		return -EINVAL;
	st_make_key(key, id, kind);
	return st_write_locked(s, op_del, key);
}

static int op_clear(struct wctx *w, void *arg)
{
	MDB_dbi dbis[] = { w->s->dbi_rec, w->s->dbi_atime, w->s->dbi_lru };
	size_t i;
	int err = 0;

	(void)arg;
	for (i = 0; !err && i < sizeof(dbis) / sizeof(dbis[0]); i++) {
		err = st_lmdb_fault();
		err = st_lmdb_err(err ? err : mdb_drop(w->txn, dbis[i], 0));
	}
	memset(&w->counts, 0, sizeof(w->counts));
	return err;
}

int store_clear(struct store *s)
{
	if (!s->have_dbs)
		return s->read_only ? -EROFS : 0;
	return st_write_locked(s, op_clear, NULL);
}

uint64_t store_put_errors(struct store *s)
{
	return s ? CNT_GET(s->put_errors) : 0;
}

void store_get_stats(struct store *s, struct store_stats *out)
{
	struct meta_counts c;
	MDB_txn *txn;
	MDB_stat st;
	struct stat fst;
	char path[PATH_MAX];
	unsigned i;

	memset(out, 0, sizeof(*out));
	out->max_bytes = s->limit;
	out->read_only = s->read_only;
	out->hits = CNT_GET(s->hits);
	out->misses = CNT_GET(s->misses);
	out->puts = CNT_GET(s->puts);
	out->put_errors = CNT_GET(s->put_errors);
	out->evictions = CNT_GET(s->evictions);
	out->corrupt = CNT_GET(s->corrupt);
	out->touches_dropped = CNT_GET(s->touches_dropped);
	if (st_join(path, sizeof(path), s->dir, "data.mdb") == 0 &&
	    stat(path, &fst) == 0)
		out->file_bytes = (uint64_t)fst.st_size;
	if (st_txn_begin(s, false, &txn))
		return;
	out->bytes_used = st_pages_in_use(s, txn) * s->psize;
	if (s->have_dbs) {
		if (mdb_stat(txn, s->dbi_rec, &st) == 0)
			out->records = st.ms_entries;
		if (st_meta_get(s, txn, "counts", &c, sizeof(c)) == 0) {
			for (i = 0; i < STORE_KIND_MAX; i++) {
				out->per_kind[i] = c.n[i];
				out->per_kind_bytes[i] = c.bytes[i];
				out->payload_bytes += c.bytes[i];
			}
		}
	}
	st_rtxn_end(s, txn);
}
