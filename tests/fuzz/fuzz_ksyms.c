// SPDX-License-Identifier: Apache-2.0
/*
 * /proc/kallsyms text (ksyms.c), read from a memfd as the daemon reads
 * the real file, then looked up at the addresses the input names and
 * across the address space.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "ksyms.h"

static volatile size_t sink;

static void lookup(const struct ksyms *k, uint64_t a)
{
	const char *name, *mod;
	uint64_t off;

	name = ksyms_lookup(k, a, &off, &mod);
	if (name)
		sink = strlen(name) + (mod ? strlen(mod) : 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksyms *k = NULL;
	char path[64], *text, *p;
	int fd = fz_memfd(data, size);
	unsigned i;

	if (fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (ksyms_load(path, &k) == 0) {
		ksyms_count(k);
		text = malloc(size + 1);
		if (text) {
			memcpy(text, data, size);
			text[size] = 0;
			for (p = text; p && *p; p = strchr(p + 1, '\n'))
				lookup(k, strtoull(p, NULL, 16) + 1);
			free(text);
		}
		for (i = 0; i < 64; i++)
			lookup(k, UINT64_MAX / 64 * i);
		ksyms_free(k);
	}
	close(fd);
	return 0;
}
