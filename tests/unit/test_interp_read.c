// SPDX-License-Identifier: Apache-2.0
/*
 * interp_read_cstr, the runtimes' reader of C strings, on this process'
 * own memory through process_vm_readv (no root needed): a string that
 * ends a few bytes before unmapped memory is read whole, one that runs
 * into it is a fault, one longer than the buffer is cut.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test.h"
#include "interp.h"

TEST(interp_read_cstr_mapping_end)
{
	const struct interp_reader r = { interp_read_process, NULL, getpid() };
	long page = sysconf(_SC_PAGESIZE);
	char out[INTERP_CSTR_CHUNK * 2 + 1], *p, *s;
	int len;

	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(p != MAP_FAILED, "mmap");
	ASSERT_EQ(munmap(p + page, page), 0, "munmap the second page");
	memset(p, 'x', page);

	/* 5 characters and the NUL: the last 6 bytes of the mapping */
	s = p + page - 6;
	memcpy(s, "hello", 6);
	len = interp_read_cstr(&r, (uint64_t)(uintptr_t)s, out, sizeof(out));
	ASSERT_EQ(len, 5, "a string ending at the mapping's end: its length");
	ASSERT_STREQ(out, "hello", "read whole");

	/* no NUL before the mapping ends */
	p[page - 1] = 'y';
	len = interp_read_cstr(&r, (uint64_t)(uintptr_t)s, out, sizeof(out));
	ASSERT_EQ(len, -EFAULT, "a string that runs into unmapped memory");
	ASSERT_STREQ(out, "helloy", "what was read is kept");

	/* longer than the buffer: cut to its size */
	p[100] = 0;
	len = interp_read_cstr(&r, (uint64_t)(uintptr_t)p, out, 8);
	ASSERT_EQ(len, -ENAMETOOLONG, "a string longer than the buffer");
	ASSERT_STREQ(out, "xxxxxxx", "its first 7 bytes");
	len = interp_read_cstr(&r, (uint64_t)(uintptr_t)p, out, sizeof(out));
	ASSERT_EQ(len, 100, "100 bytes into 128, over two chunks");
	len = interp_read_cstr(&r, (uint64_t)(uintptr_t)(p + 40), out,
			       sizeof(out));
	ASSERT_EQ(len, 60, "60 bytes, from inside a chunk");
	ASSERT_EQ(interp_read_cstr(&r, 0, out, sizeof(out)), -EFAULT,
		  "address 0");
	munmap(p, page);
}
