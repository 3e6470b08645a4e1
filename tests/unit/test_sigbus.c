// SPDX-License-Identifier: Apache-2.0
/* A mapped file truncated under us: the read sees zeros, no SIGBUS. */
#include "test.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elfmap.h"
#include "sigbus.h"

TEST(sigbus_truncated_mapping_reads_zeros)
{
	const char *path = test_tmppath("shrinks");
	long page = sysconf(_SC_PAGESIZE);
	uint64_t before;
	volatile const uint8_t *p;
	uint8_t buf[64];
	size_t i;
	int fd;

	ASSERT_OK(sigbus_guard_install(), "install");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!ASSERT_GE(fd, 0, "open"))
		return;
	memset(buf, 0xab, sizeof(buf));
	for (i = 0; i < (size_t)(3 * page) / sizeof(buf); i++)
		ASSERT_EQ(write(fd, buf, sizeof(buf)), sizeof(buf), "write");
	p = mmap(NULL, 3 * page, PROT_READ, MAP_PRIVATE, fd, 0);
	if (!ASSERT_TRUE(p != MAP_FAILED, "mmap"))
		goto out;
	ASSERT_EQ(p[page + 1], 0xab, "before the truncation");
	ASSERT_OK(ftruncate(fd, page / 2), "truncate");
	before = sigbus_guard_count();
	ASSERT_EQ(p[2 * page + 7], 0, "past the new end: zeros");
	ASSERT_EQ(p[page + 1], 0, "the other page past the end");
	ASSERT_EQ(sigbus_guard_count() - before, 2, "two pages replaced");
	ASSERT_EQ(p[1], 0xab, "the part still in the file");
	munmap((void *)p, 3 * page);
out:
	close(fd);
}

/* The ELF reader over a file truncated after it was mapped: an error or
 * garbage, never a crash. */
TEST(sigbus_elf_truncated_while_mapped)
{
	const char *path = test_tmppath("libc-copy.so");
	struct elfm *e = NULL;
	const Elf64_Shdr *sh;
	const uint8_t *bytes;
	size_t len, i;
	unsigned long sum = 0;
	char cmd[512];
	int fd;

	ASSERT_OK(sigbus_guard_install(), "install");
	snprintf(cmd, sizeof(cmd), "cp /lib/x86_64-linux-gnu/libc.so.6 %s", path);
	if (system(cmd)) {
		test_skip("no libc to copy");
		return;
	}
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (!ASSERT_GE(fd, 0, "open") || !ASSERT_OK(elfm_open_fd(fd, &e), "map"))
		goto out;
	sh = elfm_section(e, ".eh_frame");
	ASSERT_OK(ftruncate(fd, 4096), "truncate under the mapping");
	if (sh && elfm_section_bytes(e, sh, &bytes, &len) == 0)
		for (i = 0; i < len; i += 512)
			sum += bytes[i];
	ASSERT_EQ(sum, 0, ".eh_frame reads as zeros");
	elfm_free(e);
out:
	close(fd);
}
