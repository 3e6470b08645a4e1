// SPDX-License-Identifier: Apache-2.0
/*
 * ELF symbols (symbols.c, through elfmap.c), C++ and Rust demangling of
 * the names found, and CPython detection (fix_py_detect_fd: symbols, the
 * version, 3.13's _Py_DebugOffsets read from the file) over one image.
 * A detected layout must then be accepted or refused cleanly by
 * py_ctx_add_proc, which is what the daemon does with it.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "interp_python.h"
#include "../unit/py_fixture.h"
#include "symbols.h"

static volatile size_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symb_table *t = NULL;
	struct py_ctx *ctx = NULL;
	struct py_info info;
	int fd = fz_memfd(data, size);
	uint64_t off, addr;
	const char *s;
	size_t i;

	if (fd < 0)
		return 0;
	if (symb_load_fd(fd, &t) == 0) {
		symb_count(t);
		s = symb_build_id(t);
		if (s)
			sink = strlen(s);
		/* addresses from the input's tail: usually inside symbols,
		 * since the seeds' own addresses are in it */
		for (i = 0; i + 8 <= size && i < 512; i += 8) {
			memcpy(&addr, data + size - 8 - i, 8);
			s = symb_lookup(t, addr, &off);
			if (s)
				sink = strlen(s);
		}
		symb_free(t);
	}
	if (fix_py_detect_fd(fd, "python3.13", 0, &info) == 0 &&
	    py_ctx_new(NULL, &ctx) == 0) {
		py_ctx_add_proc(ctx, 1, &info, 0);
		py_ctx_free(ctx);
	}
	close(fd);
	return 0;
}
