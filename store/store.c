// SPDX-License-Identifier: Apache-2.0
/*
 * The persistent cache on LMDB.
 *
 * Layout.  One environment per directory, four named databases:
 *   rec    key (16-byte file id, 1-byte kind) -> record header + payload
 *   atime  key -> the record's last-use tick (u64)
 *   lru    (tick, big-endian u64; key) -> empty: records oldest first
 *   meta   "layout" u32, "clock" u64 (the last tick), "limit" u64,
 *          "counts" (records and payload bytes per kind)
 * Ticks come from a counter in meta rather than the wall clock: write
 * transactions are serialized across processes, so the counter orders
 * every use by every process, and it never goes backwards.  The access
 * time lives outside the record so that touching a record does not copy
 * its payload.
 *
 * Reads.  store_get() runs in a read transaction (pooled: renewing one
 * avoids the lock-file mutex that beginning one takes) and only notes the
 * key in memory; the next write transaction of this process applies the
 * notes in a batch.  A bad record noted the same way is deleted then.
 *
 * Writes.  One write transaction at a time per process (a mutex), and
 * across processes an OFD lock on store.lock taken with a timeout first,
 * so that a stopped process holding LMDB's writer mutex (which has no
 * timeout) cannot block the daemon: the put fails with -EBUSY instead.
 *
 * Bounds.  The map is the limit, so the file never passes it.  Before a
 * put, when the live pages would pass the limit less a reserve (an
 * eighth; see reserve_bytes()), the oldest ticks are evicted in
 * transactions of their own, each followed by a small commit so that the
 * freed pages become reusable (see evict_batch()).  When the put still
 * hits MDB_MAP_FULL (no free run long enough, a reader pinning old pages)
 * it evicts more the same way and retries, twice the amount each round.
 *
 * Trust.  A corrupted LMDB file can make LMDB read out of bounds or
 * abort.  So an existing file is first opened and walked in a child
 * process (probe()); a crash or an inconsistency there means the file is
 * moved aside before this process maps it.  Every record also carries a
 * checksum over its key, header and payload.
 */
#include "store.h"

#include <linux/types.h>

#include "profiler.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "fuzzing.h"
#include "log.h"

#define KEY_LEN 17			/* file id, kind */
#define LRU_KEY_LEN (8 + KEY_LEN)	/* big-endian tick, key */
#define REC_MAGIC 0x43535045u		/* "EPSC" read little-endian */
/* The databases and their keys.  A directory of another layout is
 * emptied on open (unless read-only, where it reads as empty). */
#define LAYOUT_VERSION 1
#define NUM_METAS 2			/* LMDB's two meta pages */
#define MIN_LIMIT_PAGES 128
#define MAX_READERS 1022
#define POOL_MAX 64			/* idle read transactions kept */
#define PENDING_MAX 1024		/* noted uses and drops per batch */
#define PENDING_SLOTS (2 * PENDING_MAX)
#define EVICT_ROUNDS 8
#define EMERGENCY_PAGES 16		/* see evict_batch() */
/* Bytes evicted per transaction: bounds the pages its copy-on-write and
 * its free-list record need. */
#define EVICT_BATCH_BYTES (4u << 20)
/* Opening waits for LMDB's lock file only while another process sets
 * it up; longer than this many lock timeouts, it is held. */
#define PROBE_OPEN_TIMEOUTS 5
#define PROBE_WALK_TIMEOUT_MS 120000

/* Host byte order, like LMDB's own file: the cache is not portable
 * between architectures and does not need to be. */
struct rec_hdr {
	uint32_t magic;
	uint16_t version; /* STORE_FORMAT_VERSION */
	uint8_t kind;	  /* equals the key's kind */
	uint8_t flags;	  /* 0 */
	uint32_t len;	  /* payload bytes that follow */
	uint32_t sum;	  /* XXH3 of key, this header with sum 0, payload
			   * (its low 32 bits) */
};
_Static_assert(sizeof(struct rec_hdr) == 16, "rec_hdr layout");

struct meta_counts {
	uint64_t n[STORE_KIND_MAX];
	uint64_t bytes[STORE_KIND_MAX];
};

enum pend_op { PEND_TOUCH = 1, PEND_DROP = 2 };

struct pending {
	uint8_t key[KEY_LEN];
	uint8_t op;
};

struct store {
	char *dir;
	MDB_env *env;
	MDB_dbi dbi_rec, dbi_atime, dbi_lru, dbi_meta;
	bool have_dbs; /* false: a read-only store without our databases */
	bool read_only;
	bool no_sync;
	bool registered;
	unsigned psize;
	uint64_t limit;	    /* bytes */
	uint64_t map_bytes; /* what we ask LMDB to map */
	unsigned lock_timeout_ms;
	int lock_fd; /* store.lock, -1 when read-only */
	dev_t dev;
	ino_t ino;

	pthread_rwlock_t map_lock; /* shared by every txn; exclusive to remap */
	pthread_mutex_t write_lock;
	pthread_mutex_t pend_lock;
	pthread_mutex_t pool_lock;
	bool locks_init;

	struct pending *pend, *pend_work; /* PENDING_MAX each */
	uint16_t *pend_slot;		  /* PENDING_SLOTS, index + 1 */
	unsigned n_pend;

	MDB_txn **pool;
	unsigned n_pool;

	bool broken; /* LMDB panicked: every call fails with -EIO */
	uint64_t hits, misses, puts, put_errors, evictions, corrupt,
		touches_dropped;
};

#define CNT_ADD(p, v) __atomic_add_fetch(&(p), (v), __ATOMIC_RELAXED)
#define CNT_GET(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)

/* ---- fault injection (tests) ------------------------------------------- */

static long fail_alloc_at;
static long fail_lmdb_at;
static int fail_lmdb_err;

void store_test_fail_alloc(long nth)
{
	__atomic_store_n(&fail_alloc_at, nth, __ATOMIC_RELAXED);
}

void store_test_fail_lmdb(long nth, int err)
{
	switch (err) {
	case STORE_FAULT_MAP_FULL:
		err = MDB_MAP_FULL;
		break;
	case STORE_FAULT_CORRUPTED:
		err = MDB_CORRUPTED;
		break;
	case STORE_FAULT_PANIC:
		err = MDB_PANIC;
		break;
	}
	fail_lmdb_err = err;
	__atomic_store_n(&fail_lmdb_at, nth, __ATOMIC_RELAXED);
}

/* True when the countdown c reaches this call. */
static bool countdown(long *c)
{
	long v = __atomic_load_n(c, __ATOMIC_RELAXED);

	while (v > 0) {
		if (__atomic_compare_exchange_n(c, &v, v - 1, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return v == 1;
	}
	return false;
}

static void *st_malloc(size_t n)
{
	return countdown(&fail_alloc_at) ? NULL : malloc(n);
}

static void *st_calloc(size_t n, size_t size)
{
	return countdown(&fail_alloc_at) ? NULL : calloc(n, size);
}

/* An injected LMDB failure, as LMDB itself would return it. */
static int lmdb_fault(void)
{
	return countdown(&fail_lmdb_at) ? fail_lmdb_err : 0;
}

/* ---- errors ------------------------------------------------------------ */

/* LMDB's codes (positive errno, or its own negative range) to -errno. */
static int lmdb_err(int rc)
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

static const char *err_str(int err)
{
	return strerror(err < 0 ? -err : err);
}

/* Note a fatal error: LMDB refuses every later transaction of this
 * environment, so stop trying (and say so once). */
static int note_err(struct store *s, int err)
{
	if (err == -EIO && !__atomic_exchange_n(&s->broken, true,
						__ATOMIC_RELAXED))
		log_error("store: %s: fatal I/O error; running without a cache "
			  "until restart",
			  s->dir);
	return err;
}

/* ---- small helpers ----------------------------------------------------- */

static void make_key(uint8_t key[KEY_LEN], const uint8_t id[16],
		     unsigned kind)
{
	memcpy(key, id, 16);
	key[16] = (uint8_t)kind;
}

static bool kind_ok(unsigned kind)
{
	return kind > 0 && kind < STORE_KIND_MAX;
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

static void put_be64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get_be64(const uint8_t *p)
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
static uint32_t rec_sum(const uint8_t key[KEY_LEN], const struct rec_hdr *h,
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
static const char *rec_check(const uint8_t key[KEY_LEN], const MDB_val *v,
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
	    h.sum != rec_sum(key, &h, (const uint8_t *)v->mv_data + sizeof(h)) &&
	    !FUZZING_CRC_ADVISORY)
		return "checksum mismatch";
	return NULL;
}

static void key_hex(const uint8_t key[KEY_LEN], char out[33])
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 16; i++) {
		out[2 * i] = hex[key[i] >> 4];
		out[2 * i + 1] = hex[key[i] & 15];
	}
	out[32] = 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* "dir/name" in buf; -ENAMETOOLONG when it does not fit. */
static int join(char *buf, size_t size, const char *dir, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* ---- transactions ------------------------------------------------------ */

/* Begin a transaction, holding map_lock shared until txn_end(): when
 * another process grew the file past our map, remap (exclusively) and
 * try again.  Read transactions come from the pool. */
static int txn_begin(struct store *s, bool write, MDB_txn **out)
{
	MDB_txn *txn;
	int rc, tries;

	*out = NULL;
	if (__atomic_load_n(&s->broken, __ATOMIC_RELAXED))
		return -EIO;
	if (write && (rc = lmdb_fault()))
		return note_err(s, lmdb_err(rc));
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
	return note_err(s, lmdb_err(rc));
}

/* End a read transaction by committing it: the way that keeps the
 * database handles opened in it. */
static int rtxn_commit(struct store *s, MDB_txn *txn)
{
	int rc = mdb_txn_commit(txn);

	pthread_rwlock_unlock(&s->map_lock);
	return lmdb_err(rc);
}

/* Return a read transaction to the pool. */
static void rtxn_end(struct store *s, MDB_txn *txn)
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

static void wtxn_abort(struct store *s, MDB_txn *txn)
{
	mdb_txn_abort(txn);
	pthread_rwlock_unlock(&s->map_lock);
}

static int wtxn_commit(struct store *s, MDB_txn *txn)
{
	int rc = lmdb_fault();

	if (rc)
		mdb_txn_abort(txn);
	else
		rc = mdb_txn_commit(txn);
	pthread_rwlock_unlock(&s->map_lock);
	return note_err(s, lmdb_err(rc));
}

static int w_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *k, MDB_val *v,
		 unsigned flags)
{
	int rc = lmdb_fault();

	return lmdb_err(rc ? rc : mdb_put(txn, dbi, k, v, flags));
}

static int w_del(MDB_txn *txn, MDB_dbi dbi, MDB_val *k)
{
	int rc = lmdb_fault();

	return lmdb_err(rc ? rc : mdb_del(txn, dbi, k, NULL));
}

/* ---- the cross-process write lock ---------------------------------------- */

/*
 * Byte 0 of store.lock is the write lock.  A process that waits for it
 * holds a shared lock on byte 1 meanwhile, and a process about to take
 * byte 0 that sees a waiter there naps first: without that, a process
 * that writes back to back (cache warm) takes the lock again microseconds
 * after it let it go, and a polling waiter (the daemon) starves.
 */
#define LOCK_BYTE_WRITE 0
#define LOCK_BYTE_WAITERS 1
#define LOCK_NAP_MS 2

static int file_lock(int fd, short type, off_t byte)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = byte, .l_len = 1 };

	if (fcntl(fd, F_OFD_SETLK, &fl) < 0)
		return errno == EACCES ? -EAGAIN : -errno;
	return 0;
}

static bool others_waiting(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = LOCK_BYTE_WAITERS, .l_len = 1 };

	return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

/* Take the write lock of this process and of the directory, waiting at
 * most timeout_ms (0: do not wait) for the directory's. */
static int write_begin(struct store *s, unsigned timeout_ms)
{
	uint64_t deadline;
	bool waiting = false;
	int err;

	if (s->read_only)
		return -EROFS;
	if (timeout_ms) {
		pthread_mutex_lock(&s->write_lock);
	} else if (pthread_mutex_trylock(&s->write_lock)) {
		return -EBUSY;
	}
	deadline = now_ms() + timeout_ms;
	if (timeout_ms && others_waiting(s->lock_fd))
		sleep_ms(LOCK_NAP_MS); /* their turn first */
	while ((err = file_lock(s->lock_fd, F_WRLCK, LOCK_BYTE_WRITE)) ==
		       -EAGAIN ||
	       err == -EINTR) {
		if (now_ms() >= deadline) {
			err = -EBUSY;
			break;
		}
		if (!waiting)
			waiting = !file_lock(s->lock_fd, F_RDLCK,
					     LOCK_BYTE_WAITERS);
		sleep_ms(1);
	}
	if (waiting)
		file_lock(s->lock_fd, F_UNLCK, LOCK_BYTE_WAITERS);
	if (err)
		pthread_mutex_unlock(&s->write_lock);
	return err;
}

static void write_end(struct store *s)
{
	file_lock(s->lock_fd, F_UNLCK, LOCK_BYTE_WRITE);
	pthread_mutex_unlock(&s->write_lock);
}

/* ---- pending uses and drops ---------------------------------------------- */

static uint32_t key_hash(const uint8_t key[KEY_LEN])
{
	uint32_t h;

	/* File ids are SHA-256 output: any four bytes are a good hash. */
	memcpy(&h, key, sizeof(h));
	return h ^ key[16] * 0x9e3779b1u;
}

/* Note a use or a drop of key for the next write transaction.  Returns
 * the number of notes queued, or 0 when the queue was full. */
static unsigned pend_add(struct store *s, const uint8_t key[KEY_LEN],
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

/* ---- write context ------------------------------------------------------ */

struct wctx {
	struct store *s;
	MDB_txn *txn;
	uint64_t clock;
	struct meta_counts counts;
	uint64_t evicted;
};

static int meta_get(struct store *s, MDB_txn *txn, const char *name,
		    void *out, size_t size)
{
	MDB_val k = { strlen(name), (void *)name }, v;
	int err = lmdb_err(mdb_get(txn, s->dbi_meta, &k, &v));

	if (err)
		return err;
	if (v.mv_size != size)
		return -EUCLEAN;
	memcpy(out, v.mv_data, size);
	return 0;
}

static int meta_put(struct store *s, MDB_txn *txn, const char *name,
		    const void *val, size_t size)
{
	MDB_val k = { strlen(name), (void *)name }, v = { size, (void *)val };

	return w_put(txn, s->dbi_meta, &k, &v, 0);
}

static int wctx_begin(struct store *s, struct wctx *w)
{
	int err;

	memset(w, 0, sizeof(*w));
	w->s = s;
	err = txn_begin(s, true, &w->txn);
	if (err)
		return err;
	err = meta_get(s, w->txn, "clock", &w->clock, sizeof(w->clock));
	if (err == -ENOENT || err == -EUCLEAN)
		err = 0, w->clock = 0;
	if (!err) {
		err = meta_get(s, w->txn, "counts", &w->counts,
			       sizeof(w->counts));
		if (err == -ENOENT || err == -EUCLEAN)
			err = 0, memset(&w->counts, 0, sizeof(w->counts));
	}
	if (err) {
		wtxn_abort(s, w->txn);
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

	err = meta_put(s, w->txn, "clock", &w->clock, sizeof(w->clock));
	if (!err)
		err = meta_put(s, w->txn, "counts", &w->counts,
			       sizeof(w->counts));
	if (err) {
		wtxn_abort(s, w->txn);
		return err;
	}
	err = wtxn_commit(s, w->txn);
	if (!err && w->evicted)
		CNT_ADD(s->evictions, w->evicted);
	return err;
}

static void counts_sub(struct meta_counts *c, unsigned kind, size_t vsize)
{
	uint64_t len = vsize >= sizeof(struct rec_hdr) ?
			       vsize - sizeof(struct rec_hdr) : 0;

	if (!kind_ok(kind))
		return;
	c->n[kind] -= c->n[kind] ? 1 : 0;
	c->bytes[kind] -= c->bytes[kind] < len ? c->bytes[kind] : len;
}

static int lru_del(struct wctx *w, const uint8_t key[KEY_LEN], uint64_t tick)
{
	uint8_t lk[LRU_KEY_LEN];
	MDB_val k = { sizeof(lk), lk };
	int err;

	put_be64(lk, tick);
	memcpy(lk + 8, key, KEY_LEN);
	err = w_del(w->txn, w->s->dbi_lru, &k);
	return err == -ENOENT ? 0 : err;
}

/* Give key a new tick (its atime entry and its lru entry). */
static int atime_set(struct wctx *w, const uint8_t key[KEY_LEN])
{
	struct store *s = w->s;
	uint8_t lk[LRU_KEY_LEN];
	MDB_val k = { KEY_LEN, (void *)key }, v, lv = { 0, lk };
	uint64_t old, tick = ++w->clock;
	int err;

	err = lmdb_err(mdb_get(w->txn, s->dbi_atime, &k, &v));
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
	err = w_put(w->txn, s->dbi_atime, &k, &v, 0);
	if (err)
		return err;
	put_be64(lk, tick);
	memcpy(lk + 8, key, KEY_LEN);
	k.mv_size = sizeof(lk);
	k.mv_data = lk;
	return w_put(w->txn, s->dbi_lru, &k, &lv, 0);
}

/* Remove key's access time and its lru entry (absent ones are fine). */
static int index_remove(struct wctx *w, const uint8_t key[KEY_LEN])
{
	MDB_val k = { KEY_LEN, (void *)key }, v;
	uint64_t tick;
	int err;

	err = lmdb_err(mdb_get(w->txn, w->s->dbi_atime, &k, &v));
	if (err)
		return err == -ENOENT ? 0 : err;
	if (v.mv_size == sizeof(tick)) {
		memcpy(&tick, v.mv_data, sizeof(tick));
		err = lru_del(w, key, tick);
	}
	return err ? err : w_del(w->txn, w->s->dbi_atime, &k);
}

/* Remove key's record and index entries; *freed (may be NULL) gets the
 * value's size.  -ENOENT when there was no record. */
static int rec_remove(struct wctx *w, const uint8_t key[KEY_LEN],
		      size_t *freed)
{
	struct store *s = w->s;
	MDB_val k = { KEY_LEN, (void *)key }, v;
	int err, had;

	had = lmdb_err(mdb_get(w->txn, s->dbi_rec, &k, &v));
	if (had && had != -ENOENT)
		return had;
	if (!had) {
		counts_sub(&w->counts, key[16], v.mv_size);
		if (freed)
			*freed = v.mv_size;
		err = w_del(w->txn, s->dbi_rec, &k);
		if (err)
			return err;
	}
	err = index_remove(w, key);
	return err ? err : had;
}

/* Apply the noted uses and drops (best effort: a failed batch is lost). */
static int apply_pending(struct wctx *w)
{
	struct store *s = w->s;
	unsigned i, n = pend_take(s);
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		const struct pending *p = &s->pend_work[i];
		MDB_val k = { KEY_LEN, (void *)p->key }, v;

		err = lmdb_err(mdb_get(w->txn, s->dbi_rec, &k, &v));
		if (err == -ENOENT) { /* evicted or deleted since */
			err = 0;
			continue;
		}
		if (err)
			break;
		if (p->op == PEND_DROP) {
			/* Another process may have rewritten it since. */
			if (rec_check(p->key, &v, true))
				err = rec_remove(w, p->key, NULL);
		} else {
			err = atime_set(w, p->key);
		}
	}
	if (err && i < n)
		CNT_ADD(s->touches_dropped, n - i);
	return err;
}

/* Pages in use by the snapshot of txn: every tree's pages (the free list's
 * own included) and the meta pages; the rest of the file is free. */
static uint64_t pages_in_use(struct store *s, MDB_txn *txn)
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

	err = lmdb_err(mdb_cursor_open(w->txn, s->dbi_lru, &cur));
	if (err)
		return err;
	while (freed < target) {
		uint8_t lk[LRU_KEY_LEN];
		MDB_val k, v;
		size_t size = 0;

		/* From the first entry each time: deleting moves cursors. */
		err = lmdb_err(mdb_cursor_get(cur, &k, &v, MDB_FIRST));
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
		err = rec_remove(w, lk + 8, &size);
		if (err == -ENOENT) { /* a stray index entry */
			err = 0;
			k.mv_data = lk;
			err = w_del(w->txn, s->dbi_lru, &k);
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
static uint64_t need_bytes(struct store *s, size_t len)
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
static uint64_t room_needed(struct store *s, size_t len)
{
	uint64_t soft = s->limit - reserve_bytes(s), used, need;
	MDB_txn *txn;

	if (txn_begin(s, false, &txn))
		return 0;
	used = pages_in_use(s, txn) * s->psize;
	rtxn_end(s, txn);
	need = need_bytes(s, len);
	return used + need <= soft ? 0 : used + need - soft + s->limit / 64;
}

typedef int write_op(struct wctx *w, void *arg);

/* One write transaction: the noted uses, then op (if any), commit.  The
 * caller holds the write lock. */
static int write_txn(struct store *s, write_op *op, void *arg)
{
	struct wctx w;
	int err;

	err = wctx_begin(s, &w);
	if (err)
		return err;
	err = apply_pending(&w);
	if (!err && op)
		err = op(&w, arg);
	if (err) {
		wtxn_abort(s, w.txn);
		return err;
	}
	return wctx_commit(&w);
}

/* The same, taking the write lock (waiting lock_timeout_ms at most). */
static int write_locked(struct store *s, write_op *op, void *arg)
{
	int err;

	err = write_begin(s, s->lock_timeout_ms);
	if (err)
		return err;
	err = write_txn(s, op, arg);
	write_end(s);
	return err;
}

/* ---- public: reads ------------------------------------------------------ */

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
	MDB_val k = { KEY_LEN, key }, v;
	const char *bad;
	MDB_txn *txn;
	int err;

	if (!kind_ok(kind))
		return -EINVAL;
	if (!s->have_dbs) {
		CNT_ADD(s->misses, 1);
		return -ENOENT;
	}
	make_key(key, id, kind);
	err = txn_begin(s, false, &txn);
	if (err)
		return err;
	err = lmdb_err(mdb_get(txn, s->dbi_rec, &k, &v));
	if (err) {
		rtxn_end(s, txn);
		if (err == -ENOENT)
			CNT_ADD(s->misses, 1);
		return note_err(s, err);
	}
	bad = rec_check(key, &v, full);
	if (bad) {
		char hex[33];

		rtxn_end(s, txn);
		key_hex(key, hex);
		CNT_ADD(s->corrupt, 1);
		CNT_ADD(s->misses, 1);
		log_warn_once("store: %s: record %s/%s: %s; dropping it (and "
			      "counting others like it quietly)",
			      s->dir, hex,
			      store_kind_name(kind) ?: "?", bad);
		pend_add(s, key, PEND_DROP);
		return -ENOENT;
	}
	if (copy) {
		size_t n = v.mv_size - sizeof(struct rec_hdr);
		void *buf = NULL;

		if (n) {
			buf = st_malloc(n);
			if (!buf) {
				rtxn_end(s, txn);
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
	rtxn_end(s, txn);
	CNT_ADD(s->hits, 1);
	/* Three quarters full: write the batch now if nobody is writing. */
	if (pend_add(s, key, PEND_TOUCH) >= PENDING_MAX * 3 / 4 &&
	    write_begin(s, 0) == 0) {
		write_txn(s, NULL, NULL);
		write_end(s);
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

/* ---- public: writes ----------------------------------------------------- */

struct put_arg {
	const uint8_t *key;
	const void *val;
	size_t len;
	bool raw; /* val is the whole stored value, header included */
};

/* The record: the old one out, the new one in. */
static int op_put(struct wctx *w, void *arg)
{
	const struct put_arg *a = arg;
	struct store *s = w->s;
	MDB_val k = { KEY_LEN, (void *)a->key }, v;
	struct rec_hdr h = { .magic = REC_MAGIC,
			     .version = STORE_FORMAT_VERSION,
			     .kind = a->key[16],
			     .len = (uint32_t)a->len };
	int err;

	err = rec_remove(w, a->key, NULL);
	if (err && err != -ENOENT)
		return err;
	/* Reserve the space and write into the map: one copy. */
	v.mv_size = (a->raw ? 0 : sizeof(h)) + a->len;
	v.mv_data = NULL;
	err = lmdb_fault();
	err = lmdb_err(err ? err : mdb_put(w->txn, s->dbi_rec, &k, &v,
					   MDB_RESERVE));
	if (err)
		return err;
	if (a->raw) {
		if (a->len)
			memcpy(v.mv_data, a->val, a->len);
	} else {
		h.sum = rec_sum(a->key, &h, a->val);
		memcpy(v.mv_data, &h, sizeof(h));
		if (a->len)
			memcpy((uint8_t *)v.mv_data + sizeof(h), a->val,
			       a->len);
	}
	w->counts.n[h.kind]++;
	w->counts.bytes[h.kind] += v.mv_size > sizeof(h) ?
					   v.mv_size - sizeof(h) : 0;
	return atime_set(w, a->key);
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

	err = write_txn(s, op_evict, &n);
	if (err == -ENOSPC) {
		/* Stuck all the same: let this eviction have a few pages past
		 * the map, then hold the map to the file again. */
		MDB_envinfo info;

		pthread_rwlock_wrlock(&s->map_lock);
		mdb_env_info(s->env, &info); /* may be past ours: see txn_begin */
		mdb_env_set_mapsize(s->env, info.me_mapsize + EMERGENCY_PAGES *
								      s->psize);
		pthread_rwlock_unlock(&s->map_lock);
		n = want;
		err = write_txn(s, op_evict, &n);
		if (!err)
			err = write_txn(s, NULL, NULL);
		pthread_rwlock_wrlock(&s->map_lock);
		mdb_env_set_mapsize(s->env, s->map_bytes);
		pthread_rwlock_unlock(&s->map_lock);
		log_debug("store: %s: evicting needed up to %d pages past the "
			  "limit",
			  s->dir, EMERGENCY_PAGES);
	} else if (!err) {
		err = write_txn(s, NULL, NULL);
	}
	return err ? err : (int)(n > INT_MAX ? INT_MAX : n);
}

/* Evict about target bytes, in batches.  Returns the number of records
 * evicted, or a negative errno. */
static int evict_round(struct store *s, uint64_t target)
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

int store_put(struct store *s, const uint8_t id[16], enum store_kind kind,
	      const void *val, size_t len)
{
	uint8_t key[KEY_LEN];
	struct put_arg arg = { key, val, len };
	uint64_t room;
	int err, round;

	if (!kind_ok(kind) || (len && !val))
		return -EINVAL;
	if (len > s->limit / 2 || len > UINT32_MAX - sizeof(struct rec_hdr)) {
		CNT_ADD(s->put_errors, 1);
		return -E2BIG;
	}
	make_key(key, id, kind);
	err = write_begin(s, s->lock_timeout_ms);
	if (err)
		goto out;
	room = room_needed(s, len);
	if (room && (err = evict_round(s, room)) < 0)
		goto unlock;
	for (round = 0;; round++) {
		/* MDB_MAP_FULL, or a full disk at commit. */
		err = write_txn(s, op_put, &arg);
		if (err != -ENOSPC || round == EVICT_ROUNDS)
			break;
		err = evict_round(s, (need_bytes(s, len) << round) +
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
	write_end(s);
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

int store_test_put_raw(struct store *s, const uint8_t id[16],
		       enum store_kind kind, const void *val, size_t len)
{
	uint8_t key[KEY_LEN];
	struct put_arg arg = { key, val, len, true };

	if (!kind_ok(kind) || (len && !val) || len > s->limit / 2)
		return -EINVAL;
	make_key(key, id, kind);
	return write_locked(s, op_put, &arg);
}

int store_test_get_raw(struct store *s, const uint8_t id[16],
		       enum store_kind kind, void **val, size_t *len)
{
	uint8_t key[KEY_LEN];
	MDB_val k = { KEY_LEN, key }, v;
	MDB_txn *txn;
	int err;

	*val = NULL;
	*len = 0;
	if (!kind_ok(kind) || !s->have_dbs)
		return -EINVAL;
	make_key(key, id, kind);
	err = txn_begin(s, false, &txn);
	if (err)
		return err;
	err = lmdb_err(mdb_get(txn, s->dbi_rec, &k, &v));
	if (!err) {
		*val = malloc(v.mv_size ? v.mv_size : 1);
		if (*val) {
			memcpy(*val, v.mv_data, v.mv_size);
			*len = v.mv_size;
		} else {
			err = -ENOMEM;
		}
	}
	rtxn_end(s, txn);
	return err;
}

static int op_del(struct wctx *w, void *key)
{
	return rec_remove(w, key, NULL);
}

int store_del(struct store *s, const uint8_t id[16], enum store_kind kind)
{
	uint8_t key[KEY_LEN];

	if (!kind_ok(kind))
		return -EINVAL;
	make_key(key, id, kind);
	return write_locked(s, op_del, key);
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
	if (n && (err = write_locked(s, NULL, NULL)))
		return err;
	return s->no_sync ? note_err(s, lmdb_err(mdb_env_sync(s->env, 1))) :
			    0;
}

/* ---- verify, clear, stats ------------------------------------------------ */

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
		p = countdown(&fail_alloc_at) ?
			    NULL :
			    realloc(l->k, cap * sizeof(*l->k));
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
	err = lmdb_err(mdb_cursor_open(w->txn, s->dbi_rec, &cur));
	if (err)
		return err;
	while (!(err = lmdb_err(mdb_cursor_get(cur, &k, &v, MDB_NEXT)))) {
		const uint8_t *key = k.mv_data;

		(*checked)++;
		if (k.mv_size != KEY_LEN || !kind_ok(key[16]) ||
		    rec_check(key, &v, true)) {
			err = keylist_add(bad, k.mv_data, k.mv_size);
		} else {
			w->counts.n[key[16]]++;
			w->counts.bytes[key[16]] +=
				v.mv_size - sizeof(struct rec_hdr);
			err = lmdb_err(mdb_get(w->txn, s->dbi_atime, &k, &a));
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

	err = lmdb_err(mdb_cursor_open(w->txn, s->dbi_lru, &cur));
	if (err)
		return err;
	while (!(err = lmdb_err(mdb_cursor_get(cur, &k, &v, MDB_NEXT)))) {
		MDB_val ak = { KEY_LEN, (uint8_t *)k.mv_data + 8 };

		if (k.mv_size != LRU_KEY_LEN ||
		    mdb_get(w->txn, s->dbi_atime, &ak, &x) ||
		    x.mv_size != sizeof(tick) ||
		    (memcpy(&tick, x.mv_data, sizeof(tick)),
		     tick != get_be64(k.mv_data)))
			err = keylist_add(stray_lru, k.mv_data, k.mv_size);
		if (err)
			break;
	}
	mdb_cursor_close(cur);
	if (err != -ENOENT)
		return err;
	err = lmdb_err(mdb_cursor_open(w->txn, s->dbi_atime, &cur));
	if (err)
		return err;
	while (!(err = lmdb_err(mdb_cursor_get(cur, &k, &v, MDB_NEXT)))) {
		uint8_t lk[LRU_KEY_LEN];
		MDB_val lv = { sizeof(lk), lk };
		bool ok = k.mv_size == KEY_LEN && v.mv_size == sizeof(tick) &&
			  !mdb_get(w->txn, s->dbi_rec, &k, &x);

		if (ok) {
			memcpy(&tick, v.mv_data, sizeof(tick));
			put_be64(lk, tick);
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
		err = w_del(w->txn, s->dbi_rec, &k);
		if (!err)
			err = index_remove(w, a->bad.k[i]);
	}
	if (!err)
		err = verify_index(w, &a->stray_lru, &a->stray_atime);
	for (i = 0; !err && i < a->stray_lru.n; i++) {
		MDB_val k = { LRU_KEY_LEN, a->stray_lru.k[i] };

		err = w_del(w->txn, s->dbi_lru, &k);
	}
	for (i = 0; !err && i < a->stray_atime.n; i++) {
		MDB_val k = { KEY_LEN, a->stray_atime.k[i] }, x;

		err = index_remove(w, a->stray_atime.k[i]);
		if (!err && !mdb_get(w->txn, s->dbi_rec, &k, &x))
			err = atime_set(w, a->stray_atime.k[i]);
	}
	for (i = 0; !err && i < a->no_atime.n; i++)
		err = atime_set(w, a->no_atime.k[i]);
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
	err = write_locked(s, op_verify, &a);
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

static int op_clear(struct wctx *w, void *arg)
{
	MDB_dbi dbis[] = { w->s->dbi_rec, w->s->dbi_atime, w->s->dbi_lru };
	size_t i;
	int err = 0;

	for (i = 0; !err && i < sizeof(dbis) / sizeof(dbis[0]); i++) {
		err = lmdb_fault();
		err = lmdb_err(err ? err : mdb_drop(w->txn, dbis[i], 0));
	}
	memset(&w->counts, 0, sizeof(w->counts));
	return err;
}

int store_clear(struct store *s)
{
	if (!s->have_dbs)
		return s->read_only ? -EROFS : 0;
	return write_locked(s, op_clear, NULL);
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
	if (join(path, sizeof(path), s->dir, "data.mdb") == 0 &&
	    stat(path, &fst) == 0)
		out->file_bytes = (uint64_t)fst.st_size;
	if (txn_begin(s, false, &txn))
		return;
	out->bytes_used = pages_in_use(s, txn) * s->psize;
	if (s->have_dbs) {
		if (mdb_stat(txn, s->dbi_rec, &st) == 0)
			out->records = st.ms_entries;
		if (meta_get(s, txn, "counts", &c, sizeof(c)) == 0) {
			for (i = 0; i < STORE_KIND_MAX; i++) {
				out->per_kind[i] = c.n[i];
				out->per_kind_bytes[i] = c.bytes[i];
				out->payload_bytes += c.bytes[i];
			}
		}
	}
	rtxn_end(s, txn);
}

/* ---- the probe ---------------------------------------------------------- */

/*
 * What the child reports: how far it got and the outcome.  A child that
 * dies (SIGSEGV, SIGBUS beyond the end of a truncated file, an LMDB
 * assertion's abort) reports by its death.
 */
enum probe_stage { PROBE_OPENING = 1, PROBE_WALKING, PROBE_DONE };

struct probe_msg {
	int stage;
	int err; /* -errno; -EUCLEAN: inconsistent */
};

enum probe_result {
	PROBE_OK,
	PROBE_BAD,     /* the file is damaged (or the lock file) */
	PROBE_TIMEOUT, /* blocked: someone holds the lock file */
	PROBE_ERRNO,   /* could not check: *err says why */
};

static const char *const db_names[] = { "rec", "atime", "lru", "meta" };

/*
 * Where LMDB mapped data.mdb in this process, from /proc/self/maps: the
 * mapping that holds addr.  Returns its start, or 0.
 */
static uintptr_t probe_map_base(const void *addr)
{
	uintptr_t a = (uintptr_t)addr, base = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;

		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 &&
		    lo <= a && a < hi && off == 0 &&
		    strstr(line, "/data.mdb")) {
			base = lo;
			break;
		}
	}
	fclose(f);
	return base;
}

/*
 * Check where LMDB put a key or value.  Inline data must lie inside its
 * page: LMDB trusts the sizes in a node when it later deletes or moves
 * it.  A value on overflow pages (LMDB 0.9, data version 1, which is
 * what we link: its data starts right after a 16-byte page header) must
 * have a header that names its own page, the overflow flag and the page
 * count its size needs: LMDB frees those pages by that header, and
 * asserts on a bad one.
 */
static bool probe_data_ok(const MDB_val *v, size_t psize, uint64_t next_pgno,
			  uintptr_t *base)
{
	uintptr_t a = (uintptr_t)v->mv_data;
	struct {
		uint64_t pgno;
		uint16_t pad, flags;
		uint32_t pages;
	} ov;
	const uint16_t p_overflow = 0x04;

	_Static_assert(sizeof(ov) == 16, "LMDB page header");
	if (a % psize != sizeof(ov))
		return a % psize + v->mv_size <= psize;
	memcpy(&ov, (const void *)(a - sizeof(ov)), sizeof(ov));
	if (!*base)
		*base = probe_map_base(v->mv_data);
	return *base && ov.flags == p_overflow &&
	       ov.pages == (v->mv_size + sizeof(ov) - 1) / psize + 1 &&
	       ov.pgno >= NUM_METAS && ov.pgno + ov.pages <= next_pgno &&
	       a - sizeof(ov) == *base + ov.pgno * psize;
}

struct probe_env {
	size_t psize;
	uint64_t next_pgno;
	uintptr_t base;
};

static int probe_walk_db(MDB_txn *txn, MDB_dbi dbi, size_t key_len,
			 struct probe_env *pe, MDB_stat *st)
{
	uint8_t prev[LRU_KEY_LEN];
	size_t prev_len = 0;
	MDB_cursor *cur;
	MDB_val k, v;
	volatile uint8_t sink;
	int rc;

	rc = mdb_stat(txn, dbi, st);
	if (rc || (rc = mdb_cursor_open(txn, dbi, &cur)))
		return lmdb_err(rc);
	while (!(rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))) {
		size_t n = k.mv_size < prev_len ? k.mv_size : prev_len;
		int c = memcmp(prev, k.mv_data, n);
		bool ascending = c < 0 || (c == 0 && prev_len < k.mv_size);

		if ((key_len && k.mv_size != key_len) ||
		    k.mv_size > sizeof(prev) || (prev_len && !ascending) ||
		    !probe_data_ok(&k, pe->psize, pe->next_pgno, &pe->base) ||
		    !probe_data_ok(&v, pe->psize, pe->next_pgno, &pe->base))
			break;
		/* Touch the value's last byte: past the end of a truncated
		 * file, that is a SIGBUS here rather than in the daemon. */
		if (v.mv_size)
			sink = ((const uint8_t *)v.mv_data)[v.mv_size - 1];
		memcpy(prev, k.mv_data, k.mv_size);
		prev_len = k.mv_size;
	}
	(void)sink;
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc ? lmdb_err(rc) : -EUCLEAN;
}

/* The free list: each entry a count then that many page numbers, all
 * below the end of the file.  Returns the number of free pages, or
 * -EUCLEAN. */
static int64_t probe_walk_free(MDB_txn *txn, uint64_t next_pgno)
{
	int64_t total = 0;
	MDB_cursor *cur;
	MDB_val k, v;
	int rc;

	rc = mdb_cursor_open(txn, 0, &cur);
	if (rc)
		return lmdb_err(rc);
	while (!(rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))) {
		const size_t *ids = v.mv_data; /* LMDB's MDB_ID: size_t */
		size_t n, i;

		if (v.mv_size < sizeof(size_t) || v.mv_size % sizeof(size_t))
			break;
		memcpy(&n, ids, sizeof(n));
		if (n != v.mv_size / sizeof(size_t) - 1)
			break;
		for (i = 1; i <= n; i++) {
			size_t pg;

			memcpy(&pg, &ids[i], sizeof(pg));
			if (pg < NUM_METAS || pg >= next_pgno)
				break;
		}
		if (i <= n)
			break;
		total += (int64_t)n;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? total : rc ? lmdb_err(rc) : -EUCLEAN;
}

/* Open and walk the environment (in the child).  Returns 0 or -errno. */
static int probe_check(MDB_env *env)
{
	uint64_t used = NUM_METAS, next_pgno;
	struct probe_env pe = { 0 };
	MDB_envinfo info;
	MDB_cursor *cur;
	MDB_txn *txn;
	MDB_stat st;
	MDB_val k, v;
	int64_t free_pages;
	int rc, err = 0, tries;
	bool exact;

	/* The end of the file as our snapshot sees it.  mdb_env_info() reads
	 * the newest meta page, which a writer in another process may have
	 * moved on since the snapshot: only when the two name the same
	 * transaction can the pages be counted exactly.  Otherwise the newer
	 * end still bounds every page number (the file only grows). */
	for (tries = 0;; tries++) {
		mdb_env_info(env, &info);
		rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
		if (rc)
			return lmdb_err(rc);
		exact = mdb_txn_id(txn) == info.me_last_txnid;
		if (exact || tries == 20)
			break;
		mdb_txn_abort(txn);
	}
	if (!exact)
		mdb_env_info(env, &info);
	mdb_env_stat(env, &st);
	next_pgno = info.me_last_pgno + 1;
	pe.psize = st.ms_psize;
	pe.next_pgno = next_pgno;
	if (mdb_stat(txn, 0, &st) == 0)
		used += st.ms_branch_pages + st.ms_leaf_pages +
			st.ms_overflow_pages;
	rc = mdb_stat(txn, 1, &st);
	if (!rc) {
		used += st.ms_branch_pages + st.ms_leaf_pages +
			st.ms_overflow_pages;
		rc = mdb_cursor_open(txn, 1, &cur);
	}
	if (rc) {
		mdb_txn_abort(txn);
		return lmdb_err(rc);
	}
	/* The main database names the others; every one must be ours. */
	while (!err && !(rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))) {
		static const size_t key_lens[] = { KEY_LEN, KEY_LEN,
						   LRU_KEY_LEN, 0 };
		char name[16];
		MDB_dbi dbi;
		size_t i;

		memset(&st, 0, sizeof(st));
		for (i = 0; i < 4; i++) {
			if (k.mv_size == strlen(db_names[i]) &&
			    memcmp(k.mv_data, db_names[i], k.mv_size) == 0)
				break;
		}
		if (i == 4) {
			err = -EUCLEAN;
			break;
		}
		memcpy(name, db_names[i], strlen(db_names[i]) + 1);
		rc = mdb_dbi_open(txn, name, 0, &dbi);
		err = rc ? lmdb_err(rc) :
			   probe_walk_db(txn, dbi, key_lens[i], &pe, &st);
		used += st.ms_branch_pages + st.ms_leaf_pages +
			st.ms_overflow_pages;
	}
	mdb_cursor_close(cur);
	if (!err && rc != MDB_NOTFOUND)
		err = rc ? lmdb_err(rc) : -EUCLEAN;
	if (!err) {
		free_pages = probe_walk_free(txn, next_pgno);
		if (free_pages < 0)
			err = (int)free_pages;
		/* What LMDB's own audit checks: every page is either in a
		 * tree or free, exactly once. */
		else if (exact && used + (uint64_t)free_pages != next_pgno)
			err = -EUCLEAN;
	}
	mdb_txn_abort(txn);
	return err;
}

static void probe_send(int fd, int stage, int err)
{
	struct probe_msg m = { stage, err };
	ssize_t n;

	do
		n = write(fd, &m, sizeof(m));
	while (n < 0 && errno == EINTR);
}

static void probe_child(const char *dir, int fd)
{
	MDB_env *env;
	int rc, null;

	/* Quiet: a crash here is an expected outcome (LMDB's assertion
	 * text, a sanitizer's report); the parent logs one line. */
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null >= 0)
		dup2(null, STDERR_FILENO);
	probe_send(fd, PROBE_OPENING, 0);
	rc = mdb_env_create(&env);
	if (!rc)
		rc = mdb_env_set_maxdbs(env, 4);
	if (!rc)
		rc = mdb_env_open(env, dir, MDB_RDONLY | MDB_NOTLS, 0600);
	if (rc) {
		probe_send(fd, PROBE_OPENING, lmdb_err(rc));
		_exit(0);
	}
	probe_send(fd, PROBE_WALKING, 0);
	probe_send(fd, PROBE_DONE, probe_check(env));
	mdb_env_close(env);
	_exit(0);
}

/* Open and walk the environment in dir in a child process.  *stage gets
 * how far the child got, *err the error it reported. */
static enum probe_result probe(const char *dir, unsigned open_timeout_ms,
			       int *stage, int *err)
{
	struct probe_msg m;
	bool died = false, done = false;
	int fds[2], status;
	uint64_t deadline;
	pid_t pid;

	*stage = 0;
	*err = 0;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		*err = -errno;
		return PROBE_ERRNO;
	}
	pid = fork();
	if (pid < 0) {
		*err = -errno;
		close(fds[0]);
		close(fds[1]);
		return PROBE_ERRNO;
	}
	if (pid == 0) {
		close(fds[0]);
		probe_child(dir, fds[1]);
	}
	close(fds[1]);
	deadline = now_ms() + open_timeout_ms;
	while (!done && !died) {
		struct pollfd pfd = { fds[0], POLLIN, 0 };
		uint64_t now = now_ms();
		ssize_t n;
		int r;

		if (now >= deadline)
			break;
		r = poll(&pfd, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n = read(fds[0], &m, sizeof(m));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(m)) { /* EOF before the verdict: it died */
			died = true;
			break;
		}
		*stage = m.stage;
		*err = m.err;
		if (m.stage == PROBE_WALKING)
			deadline = now_ms() + PROBE_WALK_TIMEOUT_MS;
		done = m.stage == PROBE_DONE || m.err;
	}
	close(fds[0]);
	if (!done && !died)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (died)
		return PROBE_BAD;
	if (!done)
		return PROBE_TIMEOUT;
	switch (*err) {
	case 0:
		return PROBE_OK;
	case -EUCLEAN:
	case -EINVAL: /* LMDB's answer to a meta page it cannot use */
	case -ENOMEM: /* a garbage map size */
		return PROBE_BAD;
	default:
		return PROBE_ERRNO;
	}
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

	if ((err = join(lpath, sizeof(lpath), dir, "lock.mdb")) ||
	    (err = join(dpath, sizeof(dpath), dir, "data.mdb")) ||
	    (err = join(cpath, sizeof(cpath), dir, "data.mdb.corrupt")))
		return err;
	fd = open(lpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	/* LMDB's own lock, byte 0 of lock.mdb: see mdb_env_excl_lock(). */
	err = file_lock(fd, F_WRLCK, 0);
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

/* ---- open and close ----------------------------------------------------- */

/* Directories open in this process: LMDB must not open one twice.  A
 * child forked since may open its own (it inherits this table). */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	struct store *s;
	pid_t pid;
} registry[16];

static int registry_add(struct store *s)
{
	pid_t pid = getpid();
	int i, free_i = -1, err = 0;

	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < 16; i++) {
		if (!registry[i].s || registry[i].pid != pid) {
			if (free_i < 0)
				free_i = i;
		} else if (registry[i].s->dev == s->dev &&
			   registry[i].s->ino == s->ino) {
			err = -EBUSY;
		}
	}
	if (!err && free_i < 0)
		err = -EMFILE;
	if (!err) {
		registry[free_i].s = s;
		registry[free_i].pid = pid;
		s->registered = true;
	}
	pthread_mutex_unlock(&registry_lock);
	return err;
}

static void registry_del(struct store *s)
{
	int i;

	if (!s->registered)
		return;
	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < 16; i++) {
		if (registry[i].s == s && registry[i].pid == getpid())
			registry[i].s = NULL;
	}
	pthread_mutex_unlock(&registry_lock);
}

static int mkdir_p(const char *dir)
{
	char path[PATH_MAX];
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != 0)
			continue;
		path[i] = 0;
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return -errno;
		path[i] = dir[i];
	}
	return 0;
}

/* Whether the directory dir (resolved) and every directory above it can be
 * changed only by root or by us: owned by root or our uid, and not
 * writable by group or others (above dir, a sticky directory such as /tmp
 * is fine: others cannot rename what they do not own there).  A cache
 * another user can write feeds the daemon stack deltas it then trusts,
 * and lets them plant links that LMDB, running as root, would follow.
 * Returns 0, -EPERM with *why and the path that failed in bad, or another
 * negative errno. */
static int dir_trusted(const char *dir, const char **why, char *bad,
		       size_t len)
{
	char real[PATH_MAX];
	uid_t me = geteuid();
	struct stat st;
	size_t i, n;

	if (!realpath(dir, real))
		return -errno;
	n = strlen(real);
	for (i = n; i > 0; i--) {
		char c = real[i];
		bool last = i == n;

		if (c != '/' && c != 0)
			continue;
		real[i] = 0;
		if (lstat(real, &st) < 0)
			return -errno;
		*why = st.st_uid != 0 && st.st_uid != me ? "owner" :
		       !(st.st_mode & (S_IWGRP | S_IWOTH)) ? NULL :
		       last || !(st.st_mode & S_ISVTX) ? "mode" :
							   NULL;
		if (*why) {
			snprintf(bad, len, "%s", real);
			return -EPERM;
		}
		real[i] = c;
	}
	if (lstat("/", &st) < 0)
		return -errno;
	*why = st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) ? "owner" :
								      NULL;
	snprintf(bad, len, "/");
	return *why ? -EPERM : 0;
}

/* LMDB opens lock.mdb and data.mdb by name and follows links: in a
 * directory only root can write they are ours, but a link left there
 * (or a file hard-linked in) would have root write through it.  Returns
 * 0, or -ELOOP naming the file in bad. */
static int files_plain(const char *dir, char *bad, size_t len)
{
	static const char *const names[] = { "lock.mdb", "data.mdb" };
	struct stat st;
	unsigned i;
	int err;

	for (i = 0; i < 2; i++) {
		if ((err = join(bad, len, dir, names[i])))
			return err;
		if (lstat(bad, &st) < 0) {
			if (errno == ENOENT)
				continue;
			return -errno;
		}
		if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
			return -ELOOP;
	}
	return 0;
}

/* An LMDB assertion is about to abort(): the file must be damaged in a
 * way the probe did not see.  Leave a mark so that the next open moves
 * it aside instead of crashing again. */
static void on_lmdb_assert(MDB_env *env, const char *msg)
{
	struct store *s = mdb_env_get_userctx(env);
	char path[PATH_MAX];
	int fd;

	if (!s || join(path, sizeof(path), s->dir, "data.mdb.suspect"))
		return;
	log_error("store: %s: LMDB assertion failed (%s); the cache will be "
		  "rebuilt on the next start",
		  s->dir, msg);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0)
		close(fd);
}

static int open_dbs(struct store *s, uint64_t want_limit)
{
	MDB_dbi *dbis[] = { &s->dbi_rec, &s->dbi_atime, &s->dbi_lru,
			    &s->dbi_meta };
	uint32_t layout = 0;
	uint64_t stored = 0;
	struct wctx w;
	MDB_txn *txn;
	int err = 0, i;

	/* Read-only first: existing databases need no write lock. */
	err = txn_begin(s, false, &txn);
	if (err)
		return err;
	for (i = 0; i < 4 && !err; i++)
		err = lmdb_err(mdb_dbi_open(txn, db_names[i], 0, dbis[i]));
	if (!err)
		err = meta_get(s, txn, "layout", &layout, sizeof(layout));
	if (!err && meta_get(s, txn, "limit", &stored, sizeof(stored)))
		stored = 0;
	if (err)
		rtxn_end(s, txn);
	else
		err = rtxn_commit(s, txn);
	if (err && err != -ENOENT && err != -EUCLEAN)
		return err;
	if (!err && layout == LAYOUT_VERSION &&
	    (!want_limit || want_limit == stored || s->read_only)) {
		s->have_dbs = true;
		if (!want_limit && stored)
			s->limit = stored;
		return 0;
	}
	if (s->read_only) {
		/* Nothing we can read: every get misses. */
		s->have_dbs = false;
		return 0;
	}
	err = write_begin(s, s->lock_timeout_ms);
	if (err)
		return err;
	err = txn_begin(s, true, &w.txn);
	for (i = 0; i < 4 && !err; i++)
		err = lmdb_err(mdb_dbi_open(w.txn, db_names[i], MDB_CREATE,
					    dbis[i]));
	if (err) {
		if (w.txn)
			wtxn_abort(s, w.txn);
		goto out;
	}
	if (meta_get(s, w.txn, "layout", &layout, sizeof(layout)) ||
	    layout != LAYOUT_VERSION) {
		if (layout)
			log_info("store: %s: layout %u, want %u: emptying",
				 s->dir, layout, LAYOUT_VERSION);
		for (i = 0; i < 4 && !err; i++)
			err = lmdb_err(mdb_drop(w.txn, *dbis[i], 0));
		layout = LAYOUT_VERSION;
		if (!err)
			err = meta_put(s, w.txn, "layout", &layout,
				       sizeof(layout));
	}
	if (!err && meta_get(s, w.txn, "limit", &stored, sizeof(stored)))
		stored = 0;
	if (!err && want_limit && want_limit != stored)
		err = meta_put(s, w.txn, "limit", &want_limit,
			       sizeof(want_limit));
	if (err) {
		wtxn_abort(s, w.txn);
		goto out;
	}
	err = wtxn_commit(s, w.txn);
	if (!err) {
		s->have_dbs = true;
		if (!want_limit && stored)
			s->limit = stored;
	}
out:
	write_end(s);
	return err;
}

static int env_open(struct store *s)
{
	unsigned flags = MDB_NOTLS | MDB_NOMETASYNC;
	int rc;

	if (s->read_only)
		flags |= MDB_RDONLY;
	if (s->no_sync)
		flags |= MDB_NOSYNC;
	rc = mdb_env_create(&s->env);
	if (rc)
		return lmdb_err(rc);
	mdb_env_set_userctx(s->env, s);
	mdb_env_set_assert(s->env, on_lmdb_assert);
	rc = mdb_env_set_maxdbs(s->env, 4);
	if (!rc)
		rc = mdb_env_set_maxreaders(s->env, MAX_READERS);
	if (!rc)
		rc = mdb_env_set_mapsize(s->env, s->map_bytes);
	if (!rc)
		rc = mdb_env_open(s->env, s->dir, flags, 0600);
	if (rc) {
		mdb_env_close(s->env);
		s->env = NULL;
	}
	return lmdb_err(rc);
}

/* The probe, and the repair it calls for: a fresh lock file first (it
 * may be the damaged one), then the data file moved aside.  suspect: an
 * LMDB assertion marked the file, move it aside without asking.
 * Returns 0 when the file (if any) can be trusted now. */
static int check_and_repair(struct store *s, bool suspect)
{
	const char *why = "an LMDB assertion failed on it";
	enum probe_result r = PROBE_BAD;
	int stage = 0, err = 0, tries;

	for (tries = suspect ? 1 : 0; tries < 2; tries++) {
		if (!suspect) {
			r = probe(s->dir,
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
				  s->dir, err_str(err));
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
				  s->dir, why, err_str(err));
			return err;
		}
	}
	log_warn("store: %s: data.mdb was damaged (%s); moved to "
		 "data.mdb.corrupt, starting empty",
		 s->dir, why);
	return 0;
}

static void store_close(struct store *s)
{
	unsigned i;

	if (s->env) {
		for (i = 0; i < s->n_pool; i++)
			mdb_txn_abort(s->pool[i]);
		mdb_env_close(s->env);
	}
}

int store_open(const char *dir, const struct store_opts *opts,
	       struct store **out)
{
	struct store_opts o = opts ? *opts : (struct store_opts){ 0 };
	char path[PATH_MAX];
	struct stat st;
	struct store *s;
	bool suspect;
	int err;

	*out = NULL;
	if (!dir)
		dir = STORE_DEFAULT_DIR;
	s = st_calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->lock_fd = -1;
	s->read_only = o.read_only;
	s->no_sync = o.no_sync;
	s->lock_timeout_ms = o.lock_timeout_ms ? o.lock_timeout_ms : 2000;
	s->psize = (unsigned)sysconf(_SC_PAGESIZE);
	s->limit = o.max_bytes ? o.max_bytes : STORE_DEFAULT_MAX_BYTES;
	if (s->limit < (uint64_t)MIN_LIMIT_PAGES * s->psize)
		s->limit = (uint64_t)MIN_LIMIT_PAGES * s->psize;
	s->limit = (s->limit + s->psize - 1) / s->psize * s->psize;
	s->map_bytes = s->limit;
	s->dir = st_malloc(strlen(dir) + 1);
	if (s->dir)
		strcpy(s->dir, dir);
	s->pend = st_calloc(PENDING_MAX, sizeof(*s->pend));
	s->pend_work = st_calloc(PENDING_MAX, sizeof(*s->pend_work));
	s->pend_slot = st_calloc(PENDING_SLOTS, sizeof(*s->pend_slot));
	s->pool = st_calloc(POOL_MAX, sizeof(*s->pool));
	if (!s->dir || !s->pend || !s->pend_work || !s->pend_slot ||
	    !s->pool) {
		err = -ENOMEM;
		goto fail;
	}
	if (pthread_rwlock_init(&s->map_lock, NULL)) {
		err = -ENOMEM;
		goto fail;
	}
	pthread_mutex_init(&s->write_lock, NULL);
	pthread_mutex_init(&s->pend_lock, NULL);
	pthread_mutex_init(&s->pool_lock, NULL);
	s->locks_init = true;

	if (!s->read_only && (err = mkdir_p(dir)) < 0 && err != -EROFS &&
	    err != -EACCES) {
		log_error("store: %s: cannot create: %s", dir, err_str(err));
		goto fail;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		err = stat(dir, &st) < 0 ? -errno : -ENOTDIR;
		log_error("store: %s: %s; running without a cache", dir,
			  err_str(err));
		goto fail;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	{
		const char *why = NULL;

		err = dir_trusted(dir, &why, path, sizeof(path));
		if (err == -EPERM)
			log_error("store: %s: refused: %s is %s; it must belong "
				  "to root (or this user) and be writable by no "
				  "one else; running without a cache",
				  dir, path,
				  !strcmp(why, "owner") ? "owned by another user" :
							  "writable by group or others");
		else if (err)
			log_error("store: %s: %s; running without a cache", dir,
				  err_str(err));
		if (!err && (err = files_plain(dir, path, sizeof(path))))
			log_error("store: %s: refused: %s %s; running without "
				  "a cache",
				  dir, path,
				  err == -ELOOP ? "is a link (or not a plain "
						  "file)" :
						  err_str(err));
		if (err)
			goto fail;
	}
	err = registry_add(s);
	if (err) {
		log_error("store: %s: %s", dir,
			  err == -EBUSY ? "already open in this process" :
					  "too many stores open");
		goto fail;
	}
	if ((err = join(path, sizeof(path), dir, "data.mdb")))
		goto fail;
	if (!s->read_only && access(dir, W_OK) < 0) {
		if (errno != EROFS && errno != EACCES) {
			err = -errno;
			goto fail;
		}
		if (stat(path, &st) < 0) {
			err = -EROFS;
			log_error("store: %s: not writable and holds no cache; "
				  "running without a cache",
				  dir);
			goto fail;
		}
		log_info("store: %s: not writable: opening read-only", dir);
		s->read_only = true;
	}

	if (stat(path, &st) == 0 && st.st_size == 0 && !s->read_only) {
		/* Nothing to trust: LMDB starts an empty file afresh. */
	} else if (stat(path, &st) == 0) {
		char mark[PATH_MAX];

		suspect = join(mark, sizeof(mark), dir, "data.mdb.suspect") ==
				  0 &&
			  access(mark, F_OK) == 0;
		err = check_and_repair(s, suspect && !s->read_only);
		if (err)
			goto fail;
		if (suspect && !s->read_only)
			unlink(mark);
	} else if (errno != ENOENT) {
		err = -errno;
		log_error("store: %s: %s", path, err_str(err));
		goto fail;
	} else if (s->read_only) {
		err = -ENOENT;
		log_error("store: %s: no cache there (read-only)", dir);
		goto fail;
	}

	if (!s->read_only) {
		if ((err = join(path, sizeof(path), dir, "store.lock")))
			goto fail;
		s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
				  0600);
		if (s->lock_fd < 0) {
			err = -errno;
			log_error("store: %s: %s", path, err_str(err));
			goto fail;
		}
	}
	err = env_open(s);
	if (err == -EACCES && !s->read_only) {
		log_info("store: %s: cannot write: opening read-only", dir);
		s->read_only = true;
		err = env_open(s);
	}
	if (err) {
		log_error("store: %s: cannot open: %s; running without a cache",
			  dir, err_str(err));
		goto fail;
	}
	if (!s->read_only) {
		int dead;

		mdb_reader_check(s->env, &dead);
	}
	err = open_dbs(s, o.max_bytes ? s->limit : 0);
	if (err) {
		log_error("store: %s: cannot open its databases: %s; running "
			  "without a cache",
			  dir, err_str(err));
		goto fail;
	}
	if (s->limit != s->map_bytes) { /* the directory's limit */
		s->map_bytes = s->limit;
		err = lmdb_err(mdb_env_set_mapsize(s->env, s->map_bytes));
		if (err) {
			log_error("store: %s: map %llu bytes: %s", dir,
				  (unsigned long long)s->map_bytes,
				  err_str(err));
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	store_free(s);
	return err;
}

void store_free(struct store *s)
{
	if (!s)
		return;
	if (s->env && !s->read_only && s->have_dbs && !s->broken)
		store_flush(s);
	store_close(s);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	registry_del(s);
	if (s->locks_init) {
		pthread_rwlock_destroy(&s->map_lock);
		pthread_mutex_destroy(&s->write_lock);
		pthread_mutex_destroy(&s->pend_lock);
		pthread_mutex_destroy(&s->pool_lock);
	}
	free(s->pool);
	free(s->pend);
	free(s->pend_work);
	free(s->pend_slot);
	free(s->dir);
	free(s);
}
