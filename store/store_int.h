/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the files of store/ share; nothing outside store/ includes this.
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
 * eighth; see reserve_bytes() in evict.c), the oldest ticks are evicted in
 * transactions of their own, each followed by a small commit so that the
 * freed pages become reusable (see evict_batch()).  When the put still
 * hits MDB_MAP_FULL (no free run long enough, a reader pinning old pages)
 * it evicts more the same way and retries, twice the amount each round.
 *
 * Trust.  A corrupted LMDB file can make LMDB read out of bounds or
 * abort.  So an existing file is first opened and walked in a child
 * process (st_probe()); a crash or an inconsistency there means the file
 * is moved aside before this process maps it.  Every record also carries a
 * checksum over its key, header and payload.
 *
 * The files, one concern each:
 *   store.c   the public reads and writes, clear, stats
 *   open.c    store_open() and store_free(): trust checks, the registry
 *             of open directories, the databases
 *   record.c  the record format: key, header, checksum, record removal
 *   txn.c     transactions, LMDB's error codes, the write context
 *   lock.c    the cross-process write lock on store.lock
 *   touch.c   the access-time index and the batch of noted uses
 *   evict.c   the size bound: eviction oldest first
 *   probe.c   the integrity probe, in a child process
 *   repair.c  store_verify(), and moving a damaged file aside
 *   fault.c   the fault injection of store_test.h
 *
 * Functions shared between the files are named st_*; the rest are static.
 */
#ifndef EP_STORE_INT_H
#define EP_STORE_INT_H

#include <lmdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "store.h"

#define KEY_LEN 17			/* file id, kind */
#define LRU_KEY_LEN (8 + KEY_LEN)	/* big-endian tick, key */
#define REC_MAGIC 0x43535045u		/* "EPSC" read little-endian */
/* The databases and their keys.  A directory of another layout is
 * emptied on open (unless read-only, where it reads as empty). */
#define LAYOUT_VERSION 1
#define NUM_METAS 2			/* LMDB's two meta pages */
/* store.h states the bounds marked "(store.h)": keep in sync. */
#define POOL_MAX 64		/* idle read transactions kept (store.h) */
#define PENDING_MAX 1024	/* noted uses and drops per batch (store.h) */
#define PENDING_SLOTS (2 * PENDING_MAX)

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

/* One write transaction in progress (txn.c): the clock and the counts
 * are read at its start and written at its commit. */
struct wctx {
	struct store *s;
	MDB_txn *txn;
	uint64_t clock;
	struct meta_counts counts;
	uint64_t evicted;
};

typedef int write_op(struct wctx *w, void *arg);

/* store.c: the argument of st_op_put(), the write of one record. */
struct put_arg {
	const uint8_t *key;
	const void *val;
	size_t len;
	bool raw; /* val is the whole stored value, header included */
};
int st_op_put(struct wctx *w, void *arg);

/* fault.c: allocations and LMDB writes that tests can make fail. */
void *st_malloc(size_t n);
void *st_calloc(size_t n, size_t size);
void *st_realloc(void *p, size_t n);
int st_lmdb_fault(void);

/* record.c */
void st_make_key(uint8_t key[KEY_LEN], const uint8_t id[16], unsigned kind);
bool st_kind_ok(unsigned kind);
/* The record of (id, kind) in a read transaction; key gets its key.  On
 * 0, *txn is open (st_rtxn_end() it) and v points into the map until
 * then; on an error (-ENOENT: no such record) nothing is left open. */
int st_rec_get(struct store *s, const uint8_t id[16], unsigned kind,
	       uint8_t key[KEY_LEN], MDB_txn **txn, MDB_val *v);
void st_put_be64(uint8_t *p, uint64_t v);
uint64_t st_get_be64(const uint8_t *p);
uint32_t st_rec_sum(const uint8_t key[KEY_LEN], const struct rec_hdr *h,
		    const void *payload);
const char *st_rec_check(const uint8_t key[KEY_LEN], const MDB_val *v,
			 bool full);
void st_key_hex(const uint8_t key[KEY_LEN], char out[33]);
int st_rec_remove(struct wctx *w, const uint8_t key[KEY_LEN], size_t *freed);

/* txn.c */
int st_lmdb_err(int rc);
const char *st_err_str(int err);
int st_note_err(struct store *s, int err);
int st_txn_begin(struct store *s, bool write, MDB_txn **out);
int st_rtxn_commit(struct store *s, MDB_txn *txn);
void st_rtxn_end(struct store *s, MDB_txn *txn);
void st_wtxn_abort(struct store *s, MDB_txn *txn);
int st_wtxn_commit(struct store *s, MDB_txn *txn);
int st_w_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *k, MDB_val *v,
	     unsigned flags);
int st_w_del(MDB_txn *txn, MDB_dbi dbi, MDB_val *k);
int st_meta_get(struct store *s, MDB_txn *txn, const char *name, void *out,
		size_t size);
int st_meta_put(struct store *s, MDB_txn *txn, const char *name,
		const void *val, size_t size);
int st_write_txn(struct store *s, write_op *op, void *arg);
int st_write_locked(struct store *s, write_op *op, void *arg);

/* lock.c */
uint64_t st_now_ms(void);
int st_file_lock(int fd, short type, off_t byte);
int st_write_begin(struct store *s, unsigned timeout_ms);
void st_write_end(struct store *s);

/* touch.c */
unsigned st_pend_add(struct store *s, const uint8_t key[KEY_LEN],
		     enum pend_op op);
int st_apply_pending(struct wctx *w);
int st_atime_set(struct wctx *w, const uint8_t key[KEY_LEN]);
int st_index_remove(struct wctx *w, const uint8_t key[KEY_LEN]);

/* evict.c */
uint64_t st_pages_in_use(struct store *s, MDB_txn *txn);
uint64_t st_need_bytes(struct store *s, size_t len);
uint64_t st_room_needed(struct store *s, size_t len);
int st_evict_round(struct store *s, uint64_t target);

/* probe.c: how far the child got, and the verdict. */
enum probe_stage { PROBE_OPENING = 1, PROBE_WALKING, PROBE_DONE };

enum probe_result {
	PROBE_OK,
	PROBE_BAD,     /* the file is damaged (or the lock file) */
	PROBE_TIMEOUT, /* blocked: someone holds the lock file */
	PROBE_ERRNO,   /* could not check: *err says why */
};

extern const char *const st_db_names[4]; /* rec, atime, lru, meta */
enum probe_result st_probe(const char *dir, unsigned open_timeout_ms,
			   int *stage, int *err);

/* repair.c */
int st_check_and_repair(struct store *s, bool suspect);

/* open.c */
int st_join(char *buf, size_t size, const char *dir, const char *name);

#endif
