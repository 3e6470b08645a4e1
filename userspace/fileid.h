/* SPDX-License-Identifier: Apache-2.0 */
/*
 * File IDs exactly as the reference agent defines them, so backends can
 * symbolize what we send: SHA-256 over the first 4096 bytes, the last 4096
 * bytes (they may overlap) and the file length as a big-endian 64-bit
 * integer, truncated to 128 bits.  BPF keeps the high 64 bits (the first 8
 * bytes, read big-endian).  (The reference agent's kernel ids, FNV-128a of
 * the build id's hex string, are not made: no output names a kernel file.)
 */
#ifndef EP_FILEID_H
#define EP_FILEID_H

#include <stddef.h>
#include <stdint.h>

struct file_id {
	uint8_t b[16];
};

/* Hash the open file fd (read with pread; the offset is not used).
 * Returns 0 or a negative errno. */
int fileid_from_fd(int fd, struct file_id *out);
/* Same for a file in memory (the vDSO image).  Returns 0 or -ENOMEM. */
int fileid_from_mem(const void *data, size_t len, struct file_id *out);
/* The 64 bits BPF keys on. */
uint64_t fileid_hi64(const struct file_id *id);
/* 32 lowercase hex digits and a NUL. */
void fileid_hex(const struct file_id *id, char out[33]);

#endif
