// SPDX-License-Identifier: Apache-2.0
/* File IDs against an independent implementation (Python's hashlib). */
#include "test.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fileid.h"

static void oracle(const char *path, char out[40])
{
	char cmd[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import hashlib,struct,sys,os\n"
		 "d=open(sys.argv[1],\"rb\").read()\n"
		 "h=hashlib.sha256(d[:4096]+d[-4096:]+struct.pack(\">Q\",len(d)))\n"
		 "print(h.hexdigest()[:32])' %s",
		 path);
	out[0] = 0;
	p = popen(cmd, "r");
	if (!p)
		return;
	if (!fgets(out, 40, p))
		out[0] = 0;
	pclose(p);
}

TEST(fileid_matches_sha256_oracle)
{
	const char *files[] = { "/bin/ls", "/lib/x86_64-linux-gnu/libc.so.6",
				"/etc/hostname" };
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct file_id id;
		char hex[33], want[40];
		int fd = open(files[i], O_RDONLY | O_CLOEXEC);

		if (!ASSERT_GE(fd, 0, files[i]))
			continue;
		ASSERT_OK(fileid_from_fd(fd, &id), "fileid_from_fd");
		close(fd);
		fileid_hex(&id, hex);
		oracle(files[i], want);
		want[strcspn(want, "\n")] = 0;
		ASSERT_STREQ(hex, want, files[i]);
		want[16] = 0;
		ASSERT_EQ(fileid_hi64(&id), strtoull(want, NULL, 16), "hi64");
	}
}

TEST(fileid_hi64_is_big_endian_prefix)
{
	struct file_id id;
	int i;

	for (i = 0; i < 16; i++)
		id.b[i] = (uint8_t)(i + 1);
	ASSERT_EQ(fileid_hi64(&id), 0x0102030405060708ULL, "hi64");
}
