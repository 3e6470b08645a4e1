/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The `cache` subcommand: fill, inspect, check and empty the store.
 *
 *   ebpf-profiler cache warm   [-cache-dir DIR] [-cache-size SIZE] [-j N]
 *                              [-one-file-system] PATH...
 *   ebpf-profiler cache stats  [-cache-dir DIR]
 *   ebpf-profiler cache verify [-cache-dir DIR]
 *   ebpf-profiler cache clear  [-cache-dir DIR]
 *
 * Flags take one dash or two.  warm walks the PATHs (files and trees; no
 * symbolic link is followed below a PATH), extracts the stack deltas of
 * every ELF file not cached yet on all CPUs, and stores them: it is how
 * a golden image gets its cache at build time.  Files that fail to parse
 * are counted, not fatal.  Results go to stdout as key=value lines; a
 * progress line goes to stderr when it is a terminal.
 */
#ifndef EP_CACHE_CMD_H
#define EP_CACHE_CMD_H

struct store;

#include <stddef.h>
#include <stdint.h>

/* argv[0] is "cache", argv[1] the action.  Returns the exit code: 0, or 1
 * after one line on stderr saying what went wrong. */
int cache_cmd_main(int argc, char **argv);

/* How warm computes a file's record; tests pass their own. */
struct cache_extractor {
	/* Extract the open ELF file fd (path for messages and debug links)
	 * into a malloc'd buffer for the store; *len 0 and *buf NULL when
	 * the file has no unwind information.  Must be thread-safe.
	 * Returns 0 or a negative errno (-ENOEXEC: not a usable ELF). */
	int (*extract)(int fd, const char *path, void **buf, size_t *len);
	/* Optional: store what is not a file on disk (the vDSO, the kernel
	 * types for CO-RE), once per warm run.  Returns 0 or a negative
	 * errno (reported, not fatal). */
	int (*warm_extra)(struct store *s);
	/* Optional: after a file's record is stored, keep what else the
	 * daemon finds in a file (interpreter runtimes).  Thread-safe.
	 * Returns how many runtimes the file holds. */
	unsigned (*warm_file)(const uint8_t id[16], const char *path, int fd);
};

/* cache_cmd_main() with the extractor given. */
int cache_cmd_run(int argc, char **argv, const struct cache_extractor *ex);

#endif
