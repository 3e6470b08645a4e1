/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading a mapped file past its end raises SIGBUS, and the files we map
 * (executables and libraries of every process, through /proc/PID/map_files)
 * belong to others: any user can map a file and truncate it while we parse
 * it.  The handler puts a page of zeros where the file ended and lets the
 * read go on: the bounds-checked parsers then see garbage and fail, and
 * the daemon lives.  Other SIGBUS (a hardware memory error) keep their
 * default action.
 */
#ifndef EP_SIGBUS_H
#define EP_SIGBUS_H

#include <stdint.h>

/* Install the handler (process-wide, idempotent).  Returns 0 or -errno. */
int sigbus_guard_install(void);
/* Pages of truncated files replaced by zeros so far. */
uint64_t sigbus_guard_count(void);

#endif
