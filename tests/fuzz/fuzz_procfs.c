// SPDX-License-Identifier: Apache-2.0
/*
 * /proc text (procmgr.c): every line of the input as a /proc/PID/maps
 * line, and the whole input as /proc/PID/cgroup text.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "procmgr.h"

static volatile size_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *line, *next, id[65];
	uint64_t start, end, off, ino;
	char perms[5], *path;
	dev_t dev;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	if (pm_container_id(text, id))
		sink = strlen(id);
	for (line = text; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (pm_parse_maps_line(line, &start, &end, perms, &off, &dev, &ino,
				       &path) == 0)
			sink = strlen(path) + strlen(perms);
	}
	free(text);
	return 0;
}
