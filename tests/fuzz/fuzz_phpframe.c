// SPDX-License-Identifier: Apache-2.0
/*
 * PHP frames named from process memory (interp_php.c, php_frame_name):
 * the input is the frame (its data word, the op_array filename offset)
 * and a memory image read in place of the process; the frame's
 * zend_function is at the image's start.  Every pointer the image holds
 * (names, class, file) is followed as the module follows them in a live
 * process, which may hold anything.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "interp_php.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct interp_frame f = { .kind = INTERP_PHP, .n_payload = 1,
				  .payload = { FZ_IMAGE_BASE } };
	struct interp_symbol out;
	struct fz_image im;
	uint16_t off;

	if (size < 10)
		return 0;
	memcpy(&f.data, data, 8);
	off = (uint16_t)(data[8] | data[9] << 8);
	im.p = data + 10;
	im.len = size - 10;
	if (php_frame_name(fz_image_read, &im, 1, off, &f, &out) == 0) {
		/* the strings are terminated within their buffers */
		if (strlen(out.name) >= sizeof(out.name) ||
		    strlen(out.file) >= sizeof(out.file))
			__builtin_trap();
	}
	return 0;
}
