/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The persistent cache: an LMDB environment of records keyed by a file's
 * 128-bit file id and a record kind.  This module is the only code that
 * includes lmdb.h; the rest of the daemon sees byte blobs.
 *
 * Each value carries a format version and a checksum: a record of another
 * version or with a bad checksum reads as absent (and is counted), never as
 * data, and is removed by the next write transaction.  The cache is bounded
 * by size; when a write does not fit, the least recently used records are
 * evicted.  A store that cannot be opened or written (read-only directory,
 * full disk, corrupted file) never fails the caller: store_open() either
 * repairs the directory (a corrupted data file is moved aside) or returns
 * an error that it has already logged, and the daemon runs without a
 * cache; put errors are counted.
 *
 * Several processes may use one directory at once (LMDB's own locking),
 * and every function may be called from several threads at once.  One
 * process must not open the same directory twice (LMDB forbids it):
 * store_open() refuses with -EBUSY.
 *
 * Reads do not write: store_get() records which keys it read in memory,
 * and the access times are written by the next write of this process, by
 * store_flush(), or by store_free().
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
	X(SYMBOLS, 3, "symbols")   /* on-host symbol table */                  \
	X(FILEINFO, 4, "fileinfo") /* per-file facts (build id, kind) */ \
	X(KTYPES, 5, "kernel-types") /* kbtf_minimize(), by kbtf_key() */

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

/* "deltas", ..., or NULL for a kind without a name. */
const char *store_kind_name(unsigned kind);

struct store_opts {
	/* Size limit.  0: the limit recorded in the directory by the last
	 * opener that gave one, else STORE_DEFAULT_MAX_BYTES.  A nonzero
	 * value is recorded (unless read_only). */
	uint64_t max_bytes;
	bool read_only;
	/* Skip fsync at commit; store_flush() and store_free() sync.  For
	 * bulk fills (cache warm): a crash of the machine (not of the
	 * process) may leave a damaged file, which the next store_open()
	 * detects and moves aside. */
	bool no_sync;
	/* How long a write waits for another process's write transaction
	 * before giving up with -EBUSY; 0 = 2000 ms. */
	unsigned lock_timeout_ms;
};

struct store_stats {
	uint64_t records;	/* records of all kinds */
	uint64_t bytes_used;	/* pages in use * page size */
	uint64_t max_bytes;	/* the limit in force */
	uint64_t file_bytes;	/* size of the data file (its high-water mark) */
	uint64_t payload_bytes; /* sum of record payloads */
	bool read_only;
	/* This process only, since store_open(): */
	uint64_t hits, misses;
	uint64_t puts, put_errors;
	uint64_t evictions;	 /* records evicted to make room */
	uint64_t corrupt;	 /* records dropped: bad checksum or version */
	uint64_t touches_dropped; /* access times not recorded (queue full) */
	/* Whole directory, per kind (index = enum store_kind): */
	uint64_t per_kind[STORE_KIND_MAX];
	uint64_t per_kind_bytes[STORE_KIND_MAX];
};

struct store;

/*
 * Open (creating it and its parents with mode 0700) the store in dir; dir
 * NULL means STORE_DEFAULT_DIR, opts NULL the defaults.  Before trusting
 * an existing data file it is checked in a child process (a corrupted
 * LMDB file can crash the reader); a damaged file is renamed to
 * data.mdb.corrupt and the store starts empty.  A directory that cannot
 * be written but holds a store opens read-only (puts fail with -EROFS).
 * The directory must be trusted: it and every directory above it owned
 * by root (or this process' user) and not writable by group or others
 * (a sticky directory above it is fine), and lock.mdb and data.mdb, when
 * present, plain files with one link (LMDB opens them by name and would
 * follow a link).
 * Returns 0, or a negative errno with one line already logged (-EBUSY:
 * another process holds the directory, or this one has it open already;
 * -EUCLEAN: corrupted and cannot be repaired now; -EPERM: the directory
 * is not trusted; -ELOOP: lock.mdb or data.mdb is a link); *out is NULL
 * then.
 */
int store_open(const char *dir, const struct store_opts *opts,
	       struct store **out);
/* Write pending access times, sync, close.  NULL is a no-op. */
void store_free(struct store *s);

/* Look a record up.  On success *val is a malloc'd copy that the caller
 * frees (NULL when *len is 0) and 0 is returned; -ENOENT when absent,
 * stale or corrupt; another negative errno when the store is unusable. */
int store_get(struct store *s, const uint8_t id[16], enum store_kind kind,
	      void **val, size_t *len);
/* Look a record up and hand its checksummed payload to fn without a
 * copy: val points into the store's map and is valid only during the call
 * (a read transaction is open; fn must not use the store).  Alignment is
 * LMDB's: 2 bytes for small records, 8 past the record header for large
 * ones.  Returns what fn returned, -ENOENT when absent, stale or corrupt,
 * or another negative errno. */
typedef int store_read_fn(void *arg, const void *val, size_t len);
int store_read(struct store *s, const uint8_t id[16], enum store_kind kind,
	       store_read_fn *fn, void *arg);
/* Whether a valid-looking record exists (header checked, payload not
 * checksummed: store_verify() does that).  Counts as a use for the LRU.
 * Returns 0 when present, -ENOENT, or another negative errno. */
int store_has(struct store *s, const uint8_t id[16], enum store_kind kind);
/* Insert or replace a record; evicts the least recently used records when
 * the store is full.  Returns 0 or a negative errno (counted): -E2BIG when
 * the record is larger than half the limit, -ENOSPC when it cannot fit,
 * -EROFS for a read-only store, -EBUSY when another process kept the
 * write lock longer than lock_timeout_ms. */
int store_put(struct store *s, const uint8_t id[16], enum store_kind kind,
	      const void *val, size_t len);
/* Remove a record.  Returns 0, -ENOENT, or a negative errno. */
int store_del(struct store *s, const uint8_t id[16], enum store_kind kind);

/* Write the access times store_get() collected (one write transaction),
 * and sync when opened with no_sync.  The daemon calls this now and then
 * (every reporter interval is plenty); gets also flush by themselves when
 * the in-memory queue fills.  Returns 0 or a negative errno. */
int store_flush(struct store *s);

void store_get_stats(struct store *s, struct store_stats *out);
/* Puts that failed since store_open() (a cheap read of the counter
 * store_get_stats() reports too); 0 for NULL. */
uint64_t store_put_errors(struct store *s);
/* Check every record (header, version, checksum) and the access-time
 * index; remove bad records and repair the index.  Returns the number of
 * records removed, or a negative errno; *checked (may be NULL) gets the
 * number of records read. */
int store_verify(struct store *s, uint64_t *checked);
/* Remove every record.  Returns 0 or a negative errno. */
int store_clear(struct store *s);

#endif
