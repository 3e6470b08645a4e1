// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the parsers of untrusted bytes in stack-delta
 * extraction: the input is an ELF image (dt_extract_mem: ELF headers,
 * .eh_frame, .eh_frame_hdr, .debug_frame, compressed sections, .gopclntab)
 * and, at once, a serialized table (dt_file_deserialize).  Built and run
 * by tests/fuzz/fuzz.mk (make fuzz); seeds: small ELF files of the
 * machine and the tables extracted from them.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "deltas.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dt_extract_opts o = { .no_debuglink = true };
	struct dt_file *f = NULL, *g = NULL;
	void *buf = NULL;
	size_t len;

	if (dt_extract_mem(data, size, &o, &f) == 0 && f) {
		/* Whatever came out must serialize and read back. */
		if (dt_file_serialize(f, &buf, &len) == 0 &&
		    dt_file_deserialize(buf, len, &g) != 0)
			abort();
		free(buf);
		dt_file_free(g);
		dt_file_free(f);
	}
	if (dt_file_deserialize(data, size, &g) == 0)
		dt_file_free(g);
	return 0;
}
