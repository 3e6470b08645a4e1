// SPDX-License-Identifier: Apache-2.0
/*
 * interp_read_cstr, the runtimes' reader of C strings, on this process'
 * own memory through process_vm_readv (no root needed): a string that
 * ends a few bytes before unmapped memory is read whole, one that runs
 * into it is a fault, one longer than the buffer is cut.
 */
#include <errno.h>
#include <stdlib.h>
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

/* interp_read_paged: reads served from whole pages, one system call per
 * page, the same bytes as the memory; what the pages cannot serve goes to
 * the reader below. */
TEST(interp_read_paged_pages_and_fallback)
{
	struct interp_pages *c = calloc(1, sizeof(*c));
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *p, buf[600];
	char out[32];
	int i;

	ASSERT_TRUE(c != NULL, "calloc");
	ASSERT_TRUE(page >= INTERP_PAGE_SIZE, "pages of 4 KiB at least");
	c->read = interp_read_process;
	c->pid = getpid();
	p = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(p != MAP_FAILED, "mmap");
	ASSERT_EQ(munmap(p + 2 * page, page), 0, "munmap the third page");
	for (i = 0; i < 2 * page; i++)
		p[i] = (uint8_t)(i * 7 + i / 251);

	/* 400 small reads over the first two pages, some across their
	 * border: each as the memory holds it, two pages read in all */
	for (i = 0; i < 400; i++) {
		uint64_t off = ((uint64_t)i * 523) % (2 * page - 600);
		size_t len = 1 + (size_t)(i * 37) % 599;

		ASSERT_EQ(interp_read_paged(c, getpid(),
					    (uint64_t)(uintptr_t)(p + off), buf,
					    len), 0, "a read inside the mapping");
		ASSERT_TRUE(memcmp(buf, p + off, len) == 0,
			    "the bytes of the memory");
	}
	ASSERT_EQ(c->misses, 2, "one page read per page");
	ASSERT_EQ(c->reads, 400, "every read counted");

	/* the mapping's end: the third page cannot be read, so a read
	 * running into it fails as the reader below fails, and a string
	 * that ends before it is still read whole (through the reader
	 * below, by smaller reads) */
	ASSERT_EQ(interp_read_paged(c, getpid(),
				    (uint64_t)(uintptr_t)(p + 2 * page - 8),
				    buf, 16), -EFAULT, "into unmapped memory");
	memcpy(p + 2 * page - 6, "hello", 6);
	{
		const struct interp_reader r = { interp_read_paged, c,
						 getpid() };

		/* the cached copy of the second page is older than the
		 * string: a new cache, as for a new attach */
		memset(c->addr, 0, sizeof(c->addr));
		ASSERT_EQ(interp_read_cstr(&r, (uint64_t)(uintptr_t)(p + 2 * page - 6),
					   out, sizeof(out)), 5,
			  "a string at the mapping's end");
		ASSERT_STREQ(out, "hello", "read whole");
	}
	/* another process: straight to the reader below */
	ASSERT_EQ(interp_read_paged(c, getppid(), 0, buf, 8) < 0, 1,
		  "another pid reads through the reader below");
	munmap(p, 2 * page);
	free(c);
}
