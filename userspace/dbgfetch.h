/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Debug files from debuginfod servers (DEBUGINFOD_URLS), through
 * libdebuginfod, loaded with dlopen: a host without the library runs as
 * before, without this source.  It is debugfind's fetch hook
 * (dbgf_set_fetch), asked last, after the local directories.
 *
 * A download takes from milliseconds to minutes, and the hook is asked
 * on the threads that name frames and extract files, so the hook never
 * downloads: it opens the file when the client's cache holds it, answers
 * -ENOENT for a build id whose fetch failed, and otherwise queues the
 * build id for the one worker thread and answers -EAGAIN ("later").
 * Callers that can wait (inlcache.h) ask again once dbgd_generation()
 * has moved; the others take the answer as "no debug file".
 *
 * Bounded: one download at a time, at most max_per_minute started per
 * minute, max_queue build ids waiting (more are counted and asked again
 * later), max_seconds and max_bytes per file (a progress callback aborts
 * past either), max_failed failures remembered.  Every outcome is
 * counted (dbgd_get_stats).  The files stay in the client's cache,
 * DEBUGINFOD_CACHE_PATH, by default under the daemon's cache directory.
 */
#ifndef EP_DBGFETCH_H
#define EP_DBGFETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dbgd;

#define DBGD_MAX_SECONDS 30
#define DBGD_MAX_BYTES (1ULL << 30)
#define DBGD_MAX_QUEUE 64
#define DBGD_MAX_PER_MINUTE 32
#define DBGD_MAX_FAILED 4096

struct dbgd_opts {
	/* DEBUGINFOD_CACHE_PATH when the environment has none (created
	 * 0700); NULL: libdebuginfod's default (under $HOME). */
	const char *cache_path;
	uint32_t max_seconds;	 /* per file; 0: DBGD_MAX_SECONDS */
	uint64_t max_bytes;	 /* per file; 0: DBGD_MAX_BYTES */
	uint32_t max_queue;	 /* 0: DBGD_MAX_QUEUE */
	uint32_t max_per_minute; /* 0: DBGD_MAX_PER_MINUTE */
};

struct dbgd_stats {
	uint64_t fetched;	/* downloads that gave a file */
	uint64_t cache_hits;	/* hook answers from the client's cache */
	uint64_t not_found;	/* the servers have no such build id */
	uint64_t timeouts;	/* over max_seconds */
	uint64_t too_big;	/* over max_bytes */
	uint64_t errors;	/* any other failure (server down, ...) */
	uint64_t queue_full;	/* build ids not queued: the queue was full */
	uint64_t queued;	/* waiting or downloading now */
	uint64_t fetch_ns;	/* time spent downloading */
};

/*
 * Start the client and its worker.  Call before other threads run: it
 * sets DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT and DEBUGINFOD_MAXSIZE
 * in the environment when they are unset.  Returns 0, -ENOENT when
 * DEBUGINFOD_URLS is unset or empty (off), -ENOSYS when libdebuginfod
 * cannot be loaded, or a negative errno.
 */
int dbgd_new(const struct dbgd_opts *o, struct dbgd **out);
/* Stops the worker (a download in progress is aborted). */
void dbgd_free(struct dbgd *d);

/* The hook (dbgf_fetch_fn; arg: the struct dbgd): an fd of the debug
 * file, -EAGAIN (queued, ask again), or -ENOENT.  Thread safe. */
int dbgd_fetch(const uint8_t *id, size_t id_len, void *arg);

/* Queue a fetch of the debug file of the ELF file open at fd, when it
 * has no .debug_info and none under the build-id directory, so the file
 * is there before its first frame is named.  Cheap; never blocks. */
void dbgd_prefetch_fd(struct dbgd *d, int fd);

/* True while build ids wait or download and the last was queued less
 * than DBGD_BUSY_NS ago: callers hold work back while it is true (the
 * pipeline, its records), so a host whose queue never empties (hundreds
 * of files at start, 32 downloads a minute) is not held back for long. */
#define DBGD_BUSY_NS (5000000000ULL)
bool dbgd_busy(struct dbgd *d);
/* Moves each time a download ends, whatever its outcome. */
uint64_t dbgd_generation(struct dbgd *d);
void dbgd_get_stats(struct dbgd *d, struct dbgd_stats *out);

#endif
