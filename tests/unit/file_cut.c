// SPDX-License-Identifier: Apache-2.0
#include "file_cut.h"

#include <unistd.h>

#include "elfmap.h"

int __real_elfm_open_fd(int fd, struct elfm **out);
int __wrap_elfm_open_fd(int fd, struct elfm **out);

static off_t cut_to = -1;
static bool cut_done;

void file_cut_after_open(off_t size)
{
	cut_to = size;
	if (size >= 0)
		cut_done = false;
}

bool file_cut_done(void)
{
	return cut_done;
}

int __wrap_elfm_open_fd(int fd, struct elfm **out)
{
	int err = __real_elfm_open_fd(fd, out);

	if (!err && cut_to >= 0 && !ftruncate(fd, cut_to)) {
		cut_done = true;
		cut_to = -1;
	}
	return err;
}
