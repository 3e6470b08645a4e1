/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The persistent cache: an LMDB environment of records keyed by a file's
 * 128-bit file id and a record kind.  This module is the only code that
 * includes lmdb.h; the rest of the daemon sees byte blobs.
 *
 * Each value carries a format version and a checksum: a record of another
 * version or with a bad checksum reads as absent (and is counted), never as
 * data.  The cache is bounded by size; when a write does not fit, the least
 * recently used records are evicted.  A store that cannot be opened or
 * written (read-only directory, full disk, corrupted file) never fails the
 * caller: store_open() returns an error that the daemon logs once before
 * running without a cache, and put errors are counted.
 *
 * Several processes may use one directory at once (LMDB's own locking).
 */
#ifndef EP_STORE_H
#define EP_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum store_kind {
	STORE_KIND_DELTAS = 1,	/* dt_file_serialize() bytes, or empty = no CFI */
	STORE_KIND_PYTHON = 2,	/* interpreter offsets for CPython */
	STORE_KIND_SYMBOLS = 3, /* on-host symbol table */
	STORE_KIND_FILEINFO = 4, /* per-file facts (build id, kind) */
	STORE_KIND_MAX = 16,
};

struct store_opts {
	uint64_t max_bytes; /* size limit; 0 = default (1 GiB) */
	bool read_only;
};

struct store_stats {
	uint64_t records;     /* records per all kinds */
	uint64_t bytes_used;  /* pages in use * page size */
	uint64_t max_bytes;
	uint64_t hits, misses;
	uint64_t puts, put_errors;
	uint64_t evictions;   /* records evicted to make room */
	uint64_t corrupt;     /* records dropped: bad checksum or version */
	uint64_t per_kind[STORE_KIND_MAX];
};

struct store;

/* Open (creating with mode 0700) the store in dir.  Returns 0, or a
 * negative errno with a message already logged; *out is NULL then. */
int store_open(const char *dir, const struct store_opts *opts,
	       struct store **out);
void store_free(struct store *s);

/* Look a record up.  On success *val is a malloc'd copy (caller frees)
 * and 0 is returned; -ENOENT when absent, stale or corrupt. */
int store_get(struct store *s, const uint8_t id[16], enum store_kind kind,
	      void **val, size_t *len);
/* Insert or replace a record; evicts the least recently used records when
 * the store is full.  Returns 0 or a negative errno (counted). */
int store_put(struct store *s, const uint8_t id[16], enum store_kind kind,
	      const void *val, size_t len);
int store_del(struct store *s, const uint8_t id[16], enum store_kind kind);

void store_get_stats(struct store *s, struct store_stats *out);
/* Check every record; remove bad ones.  Returns the number removed, or a
 * negative errno. */
int store_verify(struct store *s, uint64_t *checked);
/* Remove every record. */
int store_clear(struct store *s);

#endif
