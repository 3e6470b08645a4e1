// SPDX-License-Identifier: Apache-2.0
#include "interp_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "interp.h"

int fix_detect(unsigned kind, const char *path, void **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = interp_module(kind)->detect(NULL, path, fd, data, len);
	close(fd);
	return err;
}
