// SPDX-License-Identifier: Apache-2.0
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int fs_path_regular(const char *path, struct stat *st)
{
	int pfd = open(path, O_PATH | O_CLOEXEC), err;

	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st) < 0)
		err = -errno;
	else if (!S_ISREG(st->st_mode))
		err = -ENOEXEC;
	else
		return pfd;
	close(pfd);
	return err;
}

int fs_reopen(int pfd)
{
	char self[32];
	int fd;

	/* the inode pfd holds, not whatever the path names by now */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int fs_open_regular(const char *path)
{
	struct stat st;
	int pfd = fs_path_regular(path, &st), fd;

	if (pfd < 0)
		return pfd;
	fd = fs_reopen(pfd);
	close(pfd);
	return fd;
}

int fs_write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}
