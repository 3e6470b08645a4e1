// SPDX-License-Identifier: Apache-2.0
/*
 * HotSpot's userland reader (interp_hotspot.c) on a memory image read in
 * place of the JVM's process, which may hold anything.  The first byte
 * chooses what is fuzzed:
 *   even: one frame named (hs_frame_name) with JDK 17's offsets; then
 *         8 bytes of bcp (or pc); the Method is at the image's start;
 *         bit 1 of the first byte: JDK 21+ streams; bit 2: a compiled
 *         frame, its nmethod at the image's start too (its PcDescs and
 *         scopes where the image says);
 *   odd:  the VM's tables read (hs_read_vm), the HS_SYMBOLS variables
 *         being the image's first words; a frame is then named with the
 *         offsets found, its Method at the image's start.
 */
#include <stdint.h>
#include <string.h>

#include <linux/types.h>

#include "fuzz.h"
#include "hotspot.h"
#include "interp_hotspot.h"

static void name_one(const struct hs_vm *vm, uint64_t bcp,
		     const struct fz_image *im, bool compiled)
{
	struct interp_frame f = { .kind = INTERP_HOTSPOT, .n_payload = 2,
				  .data = bcp,
				  .payload = { FZ_IMAGE_BASE, bcp + 1 } };

	if (compiled)
		f.payload[1] = FZ_IMAGE_BASE | HOTSPOT_COMPILED;
	struct interp_symbol out;

	if (hs_frame_name(fz_image_read, (void *)im, 1, vm, &f, &out) == 0 &&
	    (strlen(out.name) >= sizeof(out.name) ||
	     strlen(out.file) >= sizeof(out.file)))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* JDK 17's offsets (tests/unit/test_hotspot.c checks them live) */
	struct hs_vm vm = {
		.method_const = 8, .cm_constants = 8, .cm_code_size = 32,
		.cm_name_index = 34, .cm_sig_index = 36, .cm_flags = 28,
		.cm_flags_size = 2, .cp_holder = 24, .cp_source_file = 54,
		.klass_name = 24, .sym_length = 4, .sym_body = 6,
		.size_cm = 48, .size_cp = 72, .has_linenumber = 1,
		.blob_code_begin = 32, .cm_scopes_data = 120,
		.nm_deps_off = 272, .nm_scopes_pcs_off = 268, .pcd_pc = 0,
		.pcd_scope = 4, .size_pcdesc = 16,
		.found = ~0ull, /* every field present: JDK 17's layout */
	};
	uint64_t sym[HS_SYM_COUNT], bcp;
	struct fz_image im;
	unsigned i;

	if (size < 9)
		return 0;
	memcpy(&bcp, data + 1, 8);
	im.p = data + 9;
	im.len = size - 9;
	if (!(data[0] & 1)) {
		vm.u5_excess = (data[0] >> 1) & 1;
		name_one(&vm, bcp, &im, data[0] & 4);
		return 0;
	}
	for (i = 0; i < HS_SYM_COUNT; i++)
		sym[i] = FZ_IMAGE_BASE + 8 * i;
	memset(&vm, 0, sizeof(vm));
	if (hs_read_vm(fz_image_read, &im, 1, sym, &vm) == 0)
		name_one(&vm, bcp, &im, data[0] & 2);
	return 0;
}
