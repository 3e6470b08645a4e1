/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one place separate debug files are found: by build id under the
 * debug directory (<debug_dir>/.build-id/xx/yyyy.debug), then by the
 * .gnu_debuglink name (next to the file, in its .debug/ directory, and
 * under <debug_dir>/<its directory>/), then through a fetch hook (a
 * debuginfod client, when one is set).  Every module that wants a debug
 * file (stack deltas from .debug_frame, symbols from .symtab) asks here.
 *
 * The names come from the user's file and the user's directories, so the
 * finder is built for root reading hostile input: see debugfind.c.
 */
#ifndef EP_DEBUGFIND_H
#define EP_DEBUGFIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elfmap.h"

/* Where the administrator installs debug files. */
#define DBGF_DEBUG_DIR "/usr/lib/debug"

/*
 * Find and open the separate debug file of e.  A candidate found by
 * build id must carry the same build id; one found by name must match
 * the debuglink CRC-32, and is then not used when larger than 512 MiB
 * (a CRC reads it whole) or sparse.  Paths never leave those
 * directories: no symlink is followed in <dir> or on the way to it
 * (openat2 RESOLVE_NO_SYMLINKS, or O_NOFOLLOW per component before Linux
 * 5.6), and none out of debug_dir; only regular files are opened.
 * Refusals are counted in budget.h.
 *
 * path is e's absolute path, or NULL to look by build id only; debug_dir
 * NULL means DBGF_DEBUG_DIR.  On success returns 0, *out is the mapped
 * debug file (the caller frees it with elfm_free) and found (if
 * non-NULL) its path.  -ENOENT when there is none, -EAGAIN when the
 * fetch hook has queued a download (there may be one later).
 */
int dbgf_open(const struct elfm *e, const char *path, const char *debug_dir,
	      struct elfm **out, char *found, size_t found_len);

/* dbgf_open, giving a descriptor open on the debug file it found (the
 * caller closes it; for readers that need one, such as libdw through
 * elfm_libelf), or a negative errno. */
int dbgf_open_fd(const struct elfm *e, const char *path, const char *debug_dir);

/*
 * The path a debug file of that build id has under debug_dir (NULL:
 * DBGF_DEBUG_DIR), whether or not it exists.  Returns 0, or -EINVAL
 * when the id is shorter than 2 or longer than 64 bytes, -ENAMETOOLONG
 * when it does not fit in cap.
 */
int dbgf_build_id_path(const uint8_t *id, size_t id_len,
		       const char *debug_dir, char *buf, size_t cap);

/*
 * A source of debug files by build id past the local ones: a debuginfod
 * client (dbgfetch.h).  fn returns a file descriptor open for reading
 * (the finder closes it), or a negative errno (-EAGAIN: ask again
 * later, passed to the caller; any other: none); the file is checked as
 * one found by build id (regular, not sparse, the same build id).  It is
 * asked last, on the threads that extract and name frames, so it must
 * not block (dbgfetch.h downloads on its own thread).  Set once before any thread uses the finder; NULL (the default)
 * turns it off.
 */
typedef int (*dbgf_fetch_fn)(const uint8_t *id, size_t id_len, void *arg);
void dbgf_set_fetch(dbgf_fetch_fn fn, void *arg);

/* For tests: take the path a kernel without openat2 (before 5.6) takes. */
extern bool dbgf_no_openat2;

#endif
