/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The persistent cache: an LMDB environment of records keyed by a file's
 * 128-bit file id and a record kind.  This module is the only code that
 * includes lmdb.h; the rest of the daemon sees byte blobs.
 *
 * Records.  Each stored value carries a format version and a checksum
 * over its key, header and payload.  A record of another version or with
 * a bad checksum reads as absent (and is counted as corrupt), never as
 * data, and is removed by the next write transaction of this process.
 *
 * Failure.  A store that cannot be opened or written (read-only
 * directory, full disk, corrupted file) never fails the caller:
 * store_open() either repairs the directory (a corrupted data file is
 * moved aside) or returns an error that it has already logged, and the
 * daemon runs without a cache.  The other calls log at most once per
 * kind of failure and count every one; the per-record paths (get, read,
 * has, put) never log per call.  After a fatal LMDB error (a panic, an
 * I/O error at commit) every call fails with -EIO until the store is
 * reopened.
 *
 * Threads and processes.  Every function except store_free() may be
 * called on one store from several threads at once.  Several processes
 * may use one directory at once: LMDB's own locking, plus a write lock on
 * store.lock that a writer waits for at most lock_timeout_ms, so a
 * stopped process cannot block the daemon.  One process must not open
 * the same directory twice (LMDB forbids it): store_open() refuses with
 * -EBUSY.  A child forked after store_open() must not use the parent's
 * store (LMDB's rule); it may open the directory anew.
 *
 * Reads do not write: store_get(), store_read() and store_has() note
 * which keys they used in memory, and the access times are written by
 * the next write transaction of this process (a put, a delete, a flush,
 * store_free()).  They are hints: a write transaction that fails loses
 * the ones it carried.
 *
 * Durability.  A commit syncs the data (LMDB's MDB_NOMETASYNC: a crash of
 * the machine may lose the last commit, never damage the file) unless
 * the store was opened with no_sync.
 *
 * Bounds, and the counter that shows each one (struct store_stats); the
 * figures are constants of store/ (named here in brackets):
 *   - the data file never grows past max_bytes: LMDB's map is the limit
 *     (an eviction stuck in a full map may take 16 pages past it for one
 *     transaction [EMERGENCY_PAGES]); a put that does not fit evicts the
 *     least recently used records (evictions), and fails with -ENOSPC
 *     when it still cannot (put_errors);
 *   - one record holds at most half the limit (-E2BIG, put_errors);
 *   - the noted uses wait in a queue of 1024 keys [PENDING_MAX]; a use
 *     noted while it is full is lost (touches_dropped), so that record
 *     may be evicted earlier than its use deserved;
 *   - 64 idle read transactions are kept per store [POOL_MAX], and 1022
 *     readers per directory across processes [MAX_READERS] (LMDB's reader
 *     table: -EAGAIN past it);
 *   - 16 stores open at once per process [MAX_OPEN_STORES] (-EMFILE);
 *   - a write waits lock_timeout_ms at most for another process (-EBUSY);
 *     the check of an existing file at open waits five lock timeouts for
 *     the lock file [PROBE_OPEN_TIMEOUTS] and two minutes for the walk
 *     [PROBE_WALK_TIMEOUT_MS].
 */
#ifndef EP_STORE_H
#define EP_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_DEFAULT_DIR "/var/cache/ebpf-profiler"
#define STORE_DEFAULT_MAX_BYTES (1ULL << 30)
/* Records written with another version read as absent.  Bump it when the
 * record header changes; payload formats carry their own versions. */
#define STORE_FORMAT_VERSION 2 /* 2: XXH3 in place of CRC-32 */

/* X(name, value, label): the record kinds, and their names for output. */
#define STORE_KINDS(X)                                                         \
	X(DELTAS, 1, "deltas")     /* dt_file_serialize(), empty = no CFI */   \
	X(KTYPES, 5, "kernel-types") /* kbtf_minimize(), by kbtf_key() */ \
	X(INLINE, 6, "inline")     /* dwi_blob(): a file's inline table */ \
	X(ROW_CHUNKS, 7, "row-chunks") /* one record: exe_chunks_remember() */
/* 2 was Python's before STORE_KIND_INTERP (old records of it age out: do
 * not reuse it); 3 and 4 were declared and never stored. */

enum store_kind {
#define STORE_KIND_ENUM_(name, val, label) STORE_KIND_##name = val,
	STORE_KINDS(STORE_KIND_ENUM_)
#undef STORE_KIND_ENUM_
	/* each interpreter module's detection result (interp.h), by enum
	 * interp_kind: STORE_KIND_INTERP(kind), named as the module */
	STORE_KIND_INTERP_BASE = 32,
	STORE_KIND_MAX = 64, /* kinds are 1 .. STORE_KIND_MAX - 1 */
};
#define STORE_KIND_INTERP(interp) ((enum store_kind)(STORE_KIND_INTERP_BASE + (interp)))

/* The name of a kind for output: "deltas", ..., an interpreter module's
 * name for STORE_KIND_INTERP(), or NULL for a kind without a name.  The
 * string is static.  Needs no store; safe from any thread. */
const char *store_kind_name(unsigned kind);

/* Options of store_open(); all zero is the default of every field. */
struct store_opts {
	/* Size limit, rounded up to whole pages and to at least 128 pages
	 * [MIN_LIMIT_PAGES].
	 * 0: the limit recorded in the directory by the last opener that
	 * gave one, else STORE_DEFAULT_MAX_BYTES.  A nonzero value is
	 * recorded in the directory (unless read_only). */
	uint64_t max_bytes;
	/* Never write: puts and deletes fail with -EROFS, access times are
	 * not recorded.  Also chosen by store_open() by itself for a
	 * directory it cannot write. */
	bool read_only;
	/* Skip fsync at commit; store_flush() and store_free() sync.  For
	 * bulk fills (cache warm): a crash of the machine (not of the
	 * process) may leave a damaged file, which the next store_open()
	 * detects and moves aside. */
	bool no_sync;
	/* How long a write waits for another process's write transaction
	 * before giving up with -EBUSY; 0 = 2000 ms.  Waiting for another
	 * thread of this process has no timeout. */
	unsigned lock_timeout_ms;
};

/* What store_get_stats() reports.  The first group describes the whole
 * directory (every process's records) as of the last commit; the second
 * counts this store's calls since store_open(). */
struct store_stats {
	uint64_t records;	/* records of all kinds */
	uint64_t bytes_used;	/* pages in use * page size */
	uint64_t max_bytes;	/* the limit in force */
	uint64_t file_bytes;	/* size of the data file (its high-water mark) */
	uint64_t payload_bytes; /* sum of record payloads */
	bool read_only;		/* opened read-only, asked for or not */
	/* This store only, since store_open(): */
	uint64_t hits;		 /* lookups that found a valid record */
	uint64_t misses;	 /* lookups that did not (corrupt ones too) */
	uint64_t puts;		 /* puts that committed */
	uint64_t put_errors;	 /* puts that failed, -EINVAL aside */
	uint64_t evictions;	 /* records evicted to make room */
	uint64_t corrupt;	 /* records dropped: bad checksum or version */
	uint64_t touches_dropped; /* access times not recorded (queue full) */
	/* Whole directory, per kind (index = enum store_kind): */
	uint64_t per_kind[STORE_KIND_MAX];
	uint64_t per_kind_bytes[STORE_KIND_MAX];
};

/* An open store: opaque, created by store_open(), freed by store_free(). */
struct store;

/*
 * Open (creating it and its parents with mode 0700) the store in dir; dir
 * NULL means STORE_DEFAULT_DIR, opts NULL the defaults.  Both are copied:
 * the caller may free them on return.
 *
 * Before trusting an existing data file it is checked in a child process
 * (a corrupted LMDB file can crash the reader); a damaged file is renamed
 * to data.mdb.corrupt and the store starts empty.  A directory that
 * cannot be written but holds a store opens read-only (puts fail with
 * -EROFS).  The directory must be trusted: it and every directory above
 * it owned by root (or this process' user) and not writable by group or
 * others (a sticky directory above it is fine), and lock.mdb and
 * data.mdb, when present, plain files with one link (LMDB opens them by
 * name and would follow a link).
 *
 * Blocks for the check of an existing file (milliseconds for a healthy
 * one; bounded as the top of this file says) and for the write lock when
 * the databases must be created.  Safe to call from several threads, for
 * different directories.
 *
 * Returns 0 and the store in *out, which the caller owns and frees with
 * store_free().  Otherwise a negative errno with one line already logged,
 * and *out NULL: -EBUSY (another process holds the directory, or this one
 * has it open already), -EUCLEAN (corrupted and cannot be repaired now),
 * -EPERM (the directory is not trusted), -ELOOP (lock.mdb or data.mdb is
 * a link), -EROFS or -ENOENT (read-only, or not writable, and holding no
 * cache), -EMFILE (too many stores open in this process), -ENOMEM, or
 * the errno of a failed system call.
 */
int store_open(const char *dir, const struct store_opts *opts,
	       struct store **out);

/* Write the noted uses and sync (store_flush(), its errors ignored;
 * skipped after a fatal error), close, and free s.  No other call on s
 * may be running or follow.  NULL is a no-op. */
void store_free(struct store *s);

/*
 * Look a record up and copy its payload out.  On success *val is a
 * malloc'd copy that the caller owns and frees (NULL when *len is 0) and
 * 0 is returned; on failure *val is NULL and *len 0.
 *
 * Counts a hit or a miss, and notes the use for the LRU (see "Reads do not
 * write" above); when the queue of noted uses is three quarters full and
 * no other thread is writing, this call writes them (without waiting for
 * another process).  A corrupt record counts as corrupt and a miss, is
 * noted for removal, and is logged the first time only.
 *
 * Returns 0; -ENOENT when absent, stale or corrupt; -EINVAL for a kind
 * outside 1 .. STORE_KIND_MAX - 1; -ENOMEM; -EAGAIN when LMDB's reader
 * table is full; -EIO after a fatal error.
 */
int store_get(struct store *s, const uint8_t id[16], enum store_kind kind,
	      void **val, size_t *len);

/*
 * Look a record up and hand its checksummed payload to fn without a copy.
 * val points into the store's map and is valid only during the call: a
 * read transaction is open, and fn must not call any store_* function
 * (on any store) nor keep val.  Alignment is LMDB's: 2 bytes for small
 * records, 8 past the record header for large ones.  fn runs in the
 * calling thread, once, and only for a valid record.
 *
 * Counts and notes the use as store_get() does.  Returns what fn
 * returned, or the errors of store_get() (-ENOENT when absent, stale or
 * corrupt; fn is not called then).
 */
typedef int store_read_fn(void *arg, const void *val, size_t len);
int store_read(struct store *s, const uint8_t id[16], enum store_kind kind,
	       store_read_fn *fn, void *arg);

/* Whether a valid-looking record exists: its header is checked, its
 * payload not checksummed (store_verify() does that).  Counts a hit or a
 * miss and notes the use, as store_get() does.  Returns 0 when present,
 * or the errors of store_get(). */
int store_has(struct store *s, const uint8_t id[16], enum store_kind kind);

/*
 * Insert or replace a record; val is copied (the caller keeps it).  When
 * the store is full, evicts the least recently used records first (in
 * transactions of their own, counted as evictions).  Also writes the
 * noted uses.  Committed on return (see Durability above).
 *
 * Blocks while another thread of this process writes, and up to
 * lock_timeout_ms while another process does.
 *
 * Returns 0, or a negative errno, every one but -EINVAL counted in
 * put_errors: -EINVAL (bad kind, or val NULL with len nonzero), -E2BIG
 * (the record is larger than half the limit), -ENOSPC (it cannot fit, or
 * the disk is full), -EROFS (read-only store), -EBUSY (another process
 * kept the write lock longer than lock_timeout_ms), -EIO after a fatal
 * error.  -ENOSPC and -EBUSY are logged the first time only.
 */
int store_put(struct store *s, const uint8_t id[16], enum store_kind kind,
	      const void *val, size_t len);

/* Remove a record (and its access time); also writes the noted uses.
 * Blocks as store_put() does.  Returns 0, -ENOENT when absent, -EINVAL,
 * -EROFS, -EBUSY, or another negative errno; not counted. */
int store_del(struct store *s, const uint8_t id[16], enum store_kind kind);

/* Write the noted uses (one write transaction, when there are any), and
 * sync when opened with no_sync.  The daemon calls this now and then
 * (every reporter interval is plenty).  Blocks as store_put() does.
 * Returns 0 (also for a read-only store: nothing to do), -EBUSY, or
 * another negative errno; the uses of a failed write are lost. */
int store_flush(struct store *s);

/* Drop the pages of the data file that reads mapped from this process'
 * resident set (madvise MADV_DONTNEED on LMDB's read-only map): they stay
 * in the page cache, and the next read maps them again.  A daemon that
 * loaded many records holds tens of megabytes of them otherwise.  Safe
 * beside readers on other threads (they fault the page in again); NULL
 * or a store without a map: nothing. */
void store_release_pages(struct store *s);

/* Fill *out (all of it: fields that cannot be read stay 0).  Reads the
 * counters without a lock (each one is exact, the set not a snapshot) and
 * the directory's figures in one read transaction.  Never fails. */
void store_get_stats(struct store *s, struct store_stats *out);

/* Puts that failed since store_open(): the counter store_get_stats()
 * reports, read with one atomic load (for a metric on a hot path); 0 for
 * NULL. */
uint64_t store_put_errors(struct store *s);

/*
 * Check every record (header, version, checksum) and the access-time
 * index in one write transaction; remove bad records (counted as
 * corrupt, logged as one line) and repair the index.  Holds the write
 * lock for the whole walk: other writers of every process wait (and may
 * time out with -EBUSY), readers do not.  Memory: a list of the keys to
 * mend, grown as needed (-ENOMEM).
 *
 * Returns the number of records removed, or a negative errno (-EROFS for
 * a read-only store); *checked (may be NULL) gets the number of records
 * read, 0 on error.
 */
int store_verify(struct store *s, uint64_t *checked);

/* Remove every record of every kind, for every process that uses the
 * directory (one write transaction; the file keeps its size, its pages
 * are free for reuse).
 * Blocks as store_put() does.  Returns 0, -EROFS for a read-only store,
 * or a negative errno. */
int store_clear(struct store *s);

#endif
