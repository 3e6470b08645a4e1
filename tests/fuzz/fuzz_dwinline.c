// SPDX-License-Identifier: Apache-2.0
/*
 * Inline-chain tables (dwinline.c): a blob from the cache through
 * dwi_load, and an ELF image through dwi_build_fd (our walk of libdw's
 * DIEs and line tables).  Whatever is accepted is looked up at
 * addresses from the input's tail, and a built table must load again
 * from its own blob.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwinline.h"
#include "fuzz.h"

static void lookups(const struct dwi_table *t, const uint8_t *data,
		    size_t size)
{
	struct dwi_frame f[8];
	uint64_t addr;
	size_t i;

	for (i = 0; i + 8 <= size && i < 256; i += 8) {
		memcpy(&addr, data + size - 8 - i, 8);
		dwi_lookup(t, addr, f, 8);
		dwi_lookup(t, addr & 0xffffff, f, 2);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwi_opts o = { .max_bytes = 1U << 20 };
	struct dwi_table *t = NULL, *u = NULL;
	const void *blob;
	size_t len;
	int fd;

	if (dwi_load(data, size, &t) == 0) {
		lookups(t, data, size);
		dwi_free(t);
		return 0;
	}
	if (size < 4 || memcmp(data, "\177ELF", 4) != 0)
		return 0;
	fd = fz_memfd(data, size);
	if (fd < 0)
		return 0;
	if (dwi_build_fd(fd, &o, &t) == 0) {
		lookups(t, data, size);
		blob = dwi_blob(t, &len);
		if (dwi_load(blob, len, &u) != 0)
			abort();	/* our own blob refused */
		dwi_free(u);
		dwi_free(t);
	}
	close(fd);
	return 0;
}
