/* SPDX-License-Identifier: Apache-2.0 */
/* -cgroup arguments to the cgroup ids the BPF filter compares. */
#ifndef EP_CGROUP_H
#define EP_CGROUP_H

#include <stdint.h>

/*
 * paths[i] to ids[i], for n paths: a cgroup v2 directory's inode number is
 * its id.  A path is a directory of the cgroup v2 mount
 * (/sys/fs/cgroup/system.slice/x.service), or a path inside the hierarchy
 * as /proc/PID/cgroup shows it (/system.slice/x.service).  Returns 0, or
 * -ENOENT after one message naming the path.
 */
int cgroup_ids(const char *const *paths, int n, uint64_t *ids);

#endif
