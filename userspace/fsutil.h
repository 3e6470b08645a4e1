/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Opening files whose paths other users control.  The daemon runs as
 * root and opens paths it reads from processes and from ELF files: a
 * debug file next to a binary, a mapping's path in the process's root,
 * /proc/PID/map_files links, the trees `cache warm` walks.  open() alone
 * would block forever on a FIFO and would run a device driver's open (a
 * symlink to /dev/watchdog arms the watchdog).  This opens the path
 * without opening the file (O_PATH), checks that it is a regular file,
 * then opens that very inode.
 */
#ifndef EP_FSUTIL_H
#define EP_FSUTIL_H

/* Open path read-only (O_CLOEXEC) if it is, after symlinks, a regular
 * file.  Returns the fd, -ENOEXEC for anything else (FIFO, socket,
 * device, directory: none is opened), or -errno. */
int fs_open_regular(const char *path);

struct stat;
/* Its two halves, for a caller that may need no more than the stat:
 * path opened O_PATH (nothing of the file is opened) if it is a regular
 * file, *st its stat (the fd, -ENOEXEC or -errno); then a read-only
 * descriptor of the very inode that O_PATH descriptor holds (-errno). */
int fs_path_regular(const char *path, struct stat *st);
int fs_reopen(int pfd);

#include <stddef.h>

/* write() all of p, retrying on EINTR and short writes.  0 or -errno. */
int fs_write_all(int fd, const void *p, size_t n);

#endif
