// SPDX-License-Identifier: Apache-2.0
/*
 * PHP frames named from process memory (interp_php.c, php_frame_name):
 * the input is the frame (its data word, the op_array filename offset)
 * and a memory image read in place of the process; the frame's
 * zend_function is at the image's start.  Every pointer the image holds
 * (names, class, file) is followed as the module follows them in a live
 * process, which may hold anything.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "interp_php.h"

#define BASE 0x10000ULL

struct image {
	const uint8_t *p;
	size_t len;
};

static int read_image(void *arg, pid_t pid, uint64_t addr, void *buf,
		      size_t len)
{
	const struct image *im = arg;

	(void)pid;
	if (addr < BASE || addr - BASE > im->len || len > im->len - (addr - BASE))
		return -EFAULT;
	memcpy(buf, im->p + (addr - BASE), len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct interp_frame f = { .kind = INTERP_PHP, .n_payload = 1,
				  .payload = { BASE } };
	struct interp_symbol out;
	struct image im;
	uint16_t off;

	if (size < 10)
		return 0;
	memcpy(&f.data, data, 8);
	off = (uint16_t)(data[8] | data[9] << 8);
	im.p = data + 10;
	im.len = size - 10;
	if (php_frame_name(read_image, &im, 1, off, &f, &out) == 0) {
		/* the strings are terminated within their buffers */
		if (strlen(out.name) >= sizeof(out.name) ||
		    strlen(out.file) >= sizeof(out.file))
			__builtin_trap();
	}
	return 0;
}
