// SPDX-License-Identifier: Apache-2.0
/*
 * Perl frames named from process memory (interp_perl.c,
 * perl_frame_name): the input is the frame's data word and a memory image
 * read in place of the process, whose start holds the frame's CV and COP
 * addresses; every pointer after them (the CV's body, its glob or name
 * HEK, the stash and its aux struct, the COP's file) is followed as in a
 * live process, which may hold anything.  The offsets of each version
 * and build covered, chosen by the data word's high half.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "interp_perl.h"

/* The layout: the data word's high half, 0 for 5.36 threaded (the seeds'),
 * then each version covered, threaded and not. */
static const struct perl_offsets *layout(uint64_t word)
{
	uint32_t sel = (uint32_t)(word >> 32);

	if (!sel)
		return perl_offsets_of(5, 36, true);
	sel--;
	return perl_offsets_of(5, 30 + 2 * ((sel >> 1) % 6), sel & 1);
}

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
	if (perl_frame_name(fz_image_read, &im, 1, layout(f.data), &f, &out) == 0 &&
	    (strlen(out.name) >= sizeof(out.name) ||
	     strlen(out.file) >= sizeof(out.file)))
		__builtin_trap();
	return 0;
}
