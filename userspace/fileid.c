// SPDX-License-Identifier: Apache-2.0
#include "fileid.h"

/* OpenSSL's SHA256_* functions, deprecated in 3.0 in favour of EVP but
 * kept: EVP's first digest in a process sets up the default provider,
 * about 1.3 ms on the start-up path here; these need no set-up and no
 * allocation. */
#define OPENSSL_SUPPRESS_DEPRECATED

#include <errno.h>
#include <openssl/sha.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK 4096

static int pread_full(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO; /* the file shrank under us */
		done += n;
	}
	return 0;
}

/* SHA-256 over up to two pieces and the big-endian length. */
static int digest(const void *a, size_t alen, const void *b, size_t blen,
		  uint64_t len, struct file_id *out)
{
	uint8_t be[8], md[SHA256_DIGEST_LENGTH];
	SHA256_CTX ctx;
	int i, ok;

	for (i = 0; i < 8; i++)
		be[i] = (uint8_t)(len >> (56 - 8 * i));
	ok = SHA256_Init(&ctx) && SHA256_Update(&ctx, a, alen) &&
	     SHA256_Update(&ctx, b, blen) &&
	     SHA256_Update(&ctx, be, sizeof(be)) && SHA256_Final(md, &ctx);
	if (!ok)
		return -EIO;
	memcpy(out->b, md, sizeof(out->b));
	return 0;
}

int fileid_from_fd(int fd, struct file_id *out)
{
	uint8_t head[CHUNK], tail[CHUNK];
	struct stat st;
	size_t n;
	int err;

	if (fstat(fd, &st) < 0)
		return -errno;
	n = st.st_size < CHUNK ? (size_t)st.st_size : CHUNK;
	err = pread_full(fd, head, n, 0);
	if (!err)
		err = pread_full(fd, tail, n, st.st_size - n);
	if (err)
		return err;
	return digest(head, n, tail, n, st.st_size, out);
}

int fileid_from_mem(const void *data, size_t len, struct file_id *out)
{
	size_t n = len < CHUNK ? len : CHUNK;

	return digest(data, n, (const uint8_t *)data + len - n, n, len, out);
}

uint64_t fileid_hi64(const struct file_id *id)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | id->b[i];
	return v;
}

void fileid_hex(const struct file_id *id, char out[33])
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 16; i++) {
		out[2 * i] = hex[id->b[i] >> 4];
		out[2 * i + 1] = hex[id->b[i] & 15];
	}
	out[32] = 0;
}
