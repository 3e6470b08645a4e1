// SPDX-License-Identifier: Apache-2.0
#include "interp_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfmap.h"
#include "interp.h"
#include "test.h"

int fix_detect_fd(unsigned kind, const char *path, int fd, void **data,
		  size_t *len)
{
	struct interp_file f = { .path = path, .fd = fd };
	int err;

	*data = NULL;
	*len = 0;
	/* the manager's answer for a file that is not ELF */
	err = elfm_open_fd(fd, &f.elf);
	if (err)
		return err == -ENOEXEC ? -ENOENT : err;
	/* and for one cut short while it was read (elfm_damaged): -EIO */
	return elfm_release(f.elf,
			    interp_module(kind)->detect(NULL, &f, data, len));
}

int fix_detect(unsigned kind, const char *path, void **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = fix_detect_fd(kind, path, fd, data, len);
	close(fd);
	return err;
}

int fix_record(unsigned kind, const void *data, size_t len, void *info,
	       size_t size)
{
	const struct interp_module *m = interp_module(kind);

	if (size != m->record_size || interp_record_check(m, data, len))
		return -EINVAL;
	memcpy(info, data, size);
	return 0;
}

bool fix_installed_record(unsigned kind, const char *path, const char *how,
			  const char *found, void *info, size_t size)
{
	void *data = NULL;
	size_t len = 0;
	bool ok;

	if (access(path, R_OK)) {
		test_skip("%s: %s (%s)", path, strerror(errno), how);
		return false;
	}
	ASSERT_OK(fix_detect(kind, path, &data, &len), found);
	ok = ASSERT_OK(fix_record(kind, data, len, info, size), "its record");
	free(data);
	return ok;
}

bool fix_arm64_file(const char *env, const char *rel, char *path, size_t cap)
{
	const char *v = getenv(env), *dir = getenv("EP_ARM64_DIR");
	const char *base = strrchr(rel, '/');

	if (v && *v) {
		snprintf(path, cap, "%s", v);
		return access(path, R_OK) == 0;
	}
	/* an x86 host's own /usr/bin holds its amd64 builds, never these */
	snprintf(path, cap, "/%s", rel);
	if (strstr(rel, "/aarch64-linux-gnu/") && access(path, R_OK) == 0)
		return true;
	snprintf(path, cap, "%s/%s",
		 dir && *dir ? dir : "/var/cache/ebpf-profiler-test/arm64",
		 base ? base + 1 : rel);
	if (access(path, R_OK) == 0)
		return true;
	snprintf(path, cap, "%s/tests/qemu/cache/arm64/rt-root/%s",
		 test_srcdir(), rel);
	return access(path, R_OK) == 0;
}
