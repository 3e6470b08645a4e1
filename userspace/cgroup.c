// SPDX-License-Identifier: Apache-2.0
#include "cgroup.h"

#include <errno.h>
#include <linux/magic.h>
#include <mntent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

/* Where cgroup v2 is mounted: /sys/fs/cgroup on a unified hierarchy,
 * /sys/fs/cgroup/unified on a hybrid one (systemd's legacy layout).
 * Returns false when there is no cgroup v2 mount. */
static bool cgroup2_mount(char *out, size_t len)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *m;
	bool found = false;

	if (!f)
		return false;
	while (!found && (m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(out, len, "%s", m->mnt_dir);
			found = true;
		}
	endmntent(f);
	return found;
}

static bool is_cgroup2_dir(const char *path, struct stat *st)
{
	struct statfs fs;

	return stat(path, st) == 0 && S_ISDIR(st->st_mode) &&
	       statfs(path, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

/*
 * -cgroup PATH to a cgroup id: a cgroup v2 directory's inode number is
 * its id.  PATH is a directory of the cgroup v2 mount
 * (/sys/fs/cgroup/system.slice/x.service), or a path inside the hierarchy
 * as /proc/PID/cgroup shows it (/system.slice/x.service).  A cgroup v1
 * directory is refused: its inode is no cgroup id, so the filter would
 * silently drop every sample.
 */
int cgroup_ids(const char *const *paths, int n, uint64_t *ids)
{
	char mnt[512] = "";
	bool have_mnt = cgroup2_mount(mnt, sizeof(mnt));
	int i;

	for (i = 0; i < n; i++) {
		const char *arg = paths[i];
		char path[4096];
		struct stat st;

		path[0] = 0;
		if (is_cgroup2_dir(arg, &st))
			snprintf(path, sizeof(path), "%s", arg);
		else if (have_mnt) {
			snprintf(path, sizeof(path), "%s%s%s", mnt,
				 arg[0] == '/' ? "" : "/", arg);
			if (!is_cgroup2_dir(path, &st))
				path[0] = 0;
		}
		if (!path[0]) {
			if (have_mnt)
				fprintf(stderr,
					"ebpf-profiler: -cgroup %s: no such cgroup v2 directory (cgroup v2 is mounted at %s)\n",
					arg, mnt);
			else
				fprintf(stderr,
					"ebpf-profiler: -cgroup %s: cgroup v2 is not mounted\n",
					arg);
			return -ENOENT;
		}
		ids[i] = st.st_ino;
	}
	return 0;
}

