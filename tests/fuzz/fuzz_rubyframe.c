// SPDX-License-Identifier: Apache-2.0
/*
 * Ruby frames named from process memory (interp_ruby_names.c,
 * ruby_frame_name): the input is the frame's data word, its two payload
 * words (an iseq and a pc, or a method entry), the address of the VM's
 * ID table (its lowest bit: read Strings as 3.2 lays them out), the IDs
 * classes are named by (two 32-bit words), then a memory image read in place of the process; every pointer (the iseq's
 * body, its label and path Strings or Arrays, its instruction table and
 * succinct index, the method entry, its class and the class's instance
 * variable table, the method definition, the ID table's Arrays) is
 * followed as in a live process, which may hold anything.  Ruby 3.1's
 * offsets.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "interp_ruby.h"

/* a C function namer that knows some addresses */
static const char *fz_cfunc(void *arg, uint64_t func)
{
	(void)arg;
	return func & 1 ? NULL : "fz_c_function";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct interp_frame f = { .kind = INTERP_RUBY, .n_payload = 2 };
	struct ruby_offsets o = ruby_offsets_3_1;
	struct ruby_namer nm = { .cfunc = fz_cfunc };
	struct interp_symbol out;
	struct fz_image im;

	uint32_t ids[2];

	if (size < 40)
		return 0;
	memcpy(&f.data, data, 8);
	memcpy(&f.payload[0], data + 8, 8);
	memcpy(&f.payload[1], data + 16, 8);
	memcpy(&nm.global_symbols, data + 24, 8);
	o.rstring_v32 = nm.global_symbols & 1;
	nm.global_symbols &= ~1ull;
	memcpy(ids, data + 32, 8);
	nm.classpath_id = ids[0];
	nm.attached_id = ids[1];
	im.p = data + 40;
	im.len = size - 40;
	if (ruby_frame_name(fz_image_read, &im, 1, &o, &nm, &f, &out) == 0 &&
	    (strlen(out.name) >= sizeof(out.name) ||
	     strlen(out.file) >= sizeof(out.file)))
		__builtin_trap();
	return 0;
}
