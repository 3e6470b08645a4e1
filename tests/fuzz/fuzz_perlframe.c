// SPDX-License-Identifier: Apache-2.0
/*
 * Perl frames named from process memory (interp_perl.c,
 * perl_frame_name): the input is the frame's data word and a memory image
 * read in place of the process, whose start holds the frame's CV and COP
 * addresses; every pointer after them (the CV's body, its glob or name
 * HEK, the stash and its aux struct, the COP's file) is followed as in a
 * live process, which may hold anything.  Perl 5.36's offsets.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "interp_perl.h"

static const struct perl_offsets o536 = {
	.i_curcop = 0xd0, .i_curstackinfo = 0xe0, .si_cxstack = 0x08,
	.si_prev = 0x10, .si_cxix = 0x20, .si_type = 0x2c, .cx_size = 0x68,
	.cx_oldcop = 0x10, .cx_cv = 0x48, .cop_line = 0x24, .cop_file = 0x30,
	.cv_stash = 0x20, .cv_gv = 0x38, .cv_flags = 0x5c, .gv_gp = 0x10,
	.gp_egv = 0x38, .gv_namehek = 0x20, .gv_stash = 0x28, .hv_max = 0x18,
	.hv_array = 0x10, .hv_aux = 0x20, .aux_name = 0, .aux_name_count = 0x1c,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct interp_frame f = { .kind = INTERP_PERL, .n_payload = 2 };
	struct interp_symbol out;
	struct fz_image im;

	if (size < 24)
		return 0;
	memcpy(&f.data, data, 8);
	memcpy(&f.payload[0], data + 8, 8);
	memcpy(&f.payload[1], data + 16, 8);
	im.p = data + 24;
	im.len = size - 24;
	if (perl_frame_name(fz_image_read, &im, 1, &o536, &f, &out) == 0 &&
	    (strlen(out.name) >= sizeof(out.name) ||
	     strlen(out.file) >= sizeof(out.file)))
		__builtin_trap();
	return 0;
}
