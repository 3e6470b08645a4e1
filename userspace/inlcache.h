/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The inline-chain tables (dwinline.h) of the files being symbolized:
 * built on a file's first native frame, then kept for the run, by file
 * id.  Bounded in files and bytes; a file past either bound, without
 * DWARF, or whose table failed, is remembered as "none" and named from
 * its ELF symbols as before.
 *
 * The file holding a file's DWARF: the file itself when it has
 * .debug_info (built -g, not stripped), else its separate debug file from
 * the project's one finder (debugfind.h: build-id directory,
 * .gnu_debuglink, the fetch hook); a callback may replace that (tests).
 * Not thread safe: the trace pipeline's thread only.
 */
#ifndef EP_INLCACHE_H
#define EP_INLCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dwinline.h"
#include "exemgr.h"

struct inl_cache;
struct store;

/* An fd open on the file that holds f's .debug_info (the caller closes
 * it after the call), or a negative errno when f has none. */
typedef int (*inl_debug_fd_fn)(void *arg, const struct exe_file *f);

/* Files with a table held at most (tables are built once per file). */
#define INL_MAX_FILES 4096
/* All tables together: libc's is 2.7 MiB, so 256 MiB hold a busy host's
 * libraries with room. */
#define INL_MAX_BYTES (256U << 20)
/* A table takes at most this long to build (libc: 0.4 s; the largest
 * .debug_info here, 12 MiB: 0.8 s); the frames of a file past it are
 * named from its ELF symbols.  Builds run on the thread that names
 * frames. */
#define INL_MAX_BUILD_NS (2000000000ULL)
/* Frames of one chain kept (dwi_lookup keeps the outermost). */
#define INL_MAX_FRAMES 16

struct inl_opts {
	size_t max_bytes;	/* 0: INL_MAX_BYTES */
	uint32_t max_files;	/* 0: INL_MAX_FILES */
	size_t file_max_bytes;	/* one table, 0: DWI_DEFAULT_MAX_BYTES */
	uint64_t max_build_ns;	/* one table, 0: INL_MAX_BUILD_NS */
	inl_debug_fd_fn debug_fd; /* NULL: the file, else debugfind */
	void *arg;
	/* A debug file that may come later (debugfind's -EAGAIN: a
	 * debuginfod download queued, dbgfetch.h): the file is tried again
	 * once fetch_gen() has moved; inl_busy() is fetch_busy().  NULL:
	 * -EAGAIN is "none". */
	uint64_t (*fetch_gen)(void *fetch_arg);
	bool (*fetch_busy)(void *fetch_arg);
	void *fetch_arg;
	/* The persistent cache (not owned; NULL: none): a file's table is
	 * read from it by file id (STORE_KIND_INLINE) before DWARF is
	 * parsed, through dwi_load's checks, and a table built is put
	 * there, so a restart (or a host sharing the cache) parses no
	 * DWARF again.  A record dwi_load refuses is counted and rebuilt. */
	struct store *store;
};

struct inl_stats {
	uint64_t tables;	/* files with a table now */
	uint64_t funcs_only;	/* of which functions only: over budget */
	uint64_t no_dwarf;	/* files without DWARF (or no debug file) */
	uint64_t errors;	/* tables that failed (EFBIG, EINVAL, ...) */
	uint64_t timeouts;	/* tables given up past max_build_ns */
	uint64_t full;		/* files left out: bound on files or bytes */
	uint64_t bytes;		/* bytes the tables hold */
	uint64_t build_ns;	/* time spent building */
	uint64_t pending;	/* files waiting for a debug file download */
	uint64_t built;		/* tables built from DWARF */
	uint64_t from_store;	/* tables read from the persistent cache */
	uint64_t store_rejected; /* records dwi_load refused (then rebuilt) */
	uint64_t store_errors;	/* tables the cache did not take */
};

int inl_new(const struct inl_opts *o, struct inl_cache **out);
void inl_free(struct inl_cache *c);
/*
 * The frames at f's ELF address addr (for a return address: addr - 1),
 * innermost first, into out (INL_MAX_FRAMES); 0 when f's DWARF does not
 * cover addr.  Builds f's table on first use.  The strings live as long
 * as the cache.
 */
int inl_lookup(struct inl_cache *c, const struct exe_file *f, uint64_t addr,
	       struct dwi_frame *out);
/* True while a debug file some table may need is being downloaded: the
 * pipeline keeps records back meanwhile, so their frames are named with
 * it (bounded there). */
bool inl_busy(struct inl_cache *c);
void inl_get_stats(const struct inl_cache *c, struct inl_stats *out);

#endif
