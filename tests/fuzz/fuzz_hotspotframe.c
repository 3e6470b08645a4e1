// SPDX-License-Identifier: Apache-2.0
/*
 * HotSpot's userland reader (interp_hotspot_*.c) on a memory image read in
 * place of the JVM's process, which may hold anything.  The first byte
 * chooses what is fuzzed:
 *   even: one frame named (hs_frame_names) with JDK 17's offsets; then
 *         8 bytes of bcp (or pc; its top byte also gives how many names
 *         the frame may give, 1 to 16); the Method is at the image's
 *         start;
 *         bit 1 of the first byte: JDK 21+ streams;
 *         bit 2: a compiled frame, its nmethod at the image's start too
 *         (its PcDescs, scopes and metadata where the image says);
 *         bit 3: a compiled frame whose nmethod the target lays out at
 *         HS_FZ_NM (its code, PcDescs, scopes and metadata in fixed
 *         places, their bytes the fuzzer's), so that the scope chain is
 *         reached at once; bit 4 then: JDK 25's layout (immutable and
 *         mutable data) instead of JDK 17's;
 *   odd:  the VM's tables read (hs_read_vm), the HS_SYMBOLS variables
 *         being the image's first words; a frame is then named with the
 *         offsets found, its Method at the image's start.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/types.h>

#include "fuzz.h"
#include "hotspot.h"
#include "hotspot_offsets.h"
#include "interp_hotspot.h"

/* The laid-out nmethod: at HS_FZ_NM in an image of HS_FZ_LEN bytes
 * (after the seed's Method and its Symbols, so that the fuzzer reaches
 * its bytes growing the seed a little); its PcDescs at +136, metadata
 * at +280 (8 words, up to the scopes), scopes at +344, code at +1024
 * (never read: the pcs are offsets into it), its deopt handler 240
 * bytes into the code.  Every header field of either layout lies
 * outside the regions but JDK 25's at 176 to 203, among the PcDescs. */
#define HS_FZ_LEN 2048
#define HS_FZ_NM 544
#define HS_FZ_PCS 136
#define HS_FZ_PCS_END 200
#define HS_FZ_META 280
#define HS_FZ_SCOPES 344
#define HS_FZ_CODE 1024
#define HS_FZ_DEOPT 240

static void name_one(const struct hs_vm *vm, uint64_t bcp,
		     const struct fz_image *im, uint64_t nm, unsigned max)
{
	struct interp_frame f = { .kind = INTERP_HOTSPOT, .n_payload = 2,
				  .data = bcp,
				  .payload = { FZ_IMAGE_BASE, bcp + 1 } };
	struct interp_symbol out[INTERP_CHAIN_MAX], one;
	int n, i;

	if (nm)
		f.payload[1] = nm | HOTSPOT_COMPILED;
	n = hs_frame_names(fz_image_read, (void *)im, 1, vm, &f, out, max);
	if (n > (int)max || n == 0)
		__builtin_trap();
	for (i = 0; i < n; i++)
		if (strnlen(out[i].name, sizeof(out[i].name)) >= sizeof(out[i].name) ||
		    strnlen(out[i].file, sizeof(out[i].file)) >= sizeof(out[i].file))
			__builtin_trap();
	/* the frame's own method alone: the chain's last */
	if (hs_frame_name(fz_image_read, (void *)im, 1, vm, &f, &one) == 0 &&
	    n > 0 && n < (int)max && strcmp(one.name, out[n - 1].name))
		__builtin_trap();
}

static void put(uint8_t *img, size_t at, uint64_t v, size_t width)
{
	memcpy(img + at, &v, width);
}

/* The nmethod at HS_FZ_NM laid out for vm's layout: JDK 17's, or JDK
 * 25's put in its place. */
static void lay_out(uint8_t *img, struct hs_vm *vm, bool jdk25)
{
	uint8_t *nm = img + HS_FZ_NM;
	uint64_t base = FZ_IMAGE_BASE + HS_FZ_NM;

	if (!jdk25) {
		put(nm, vm->blob_code_begin, base + HS_FZ_CODE, 8);
		put(nm, vm->cm_scopes_data, base + HS_FZ_SCOPES, 8);
		put(nm, vm->nm_scopes_pcs_off, HS_FZ_PCS, 4);
		put(nm, vm->nm_deps_off, HS_FZ_PCS_END, 4);
		put(nm, vm->nm_metadata_off, HS_FZ_META, 4);
		put(nm, vm->cm_deopt_begin, base + HS_FZ_CODE + HS_FZ_DEOPT, 8);
		return;
	}
	hs_offsets_nm25(vm);
	/* immutable data: the pcs then the scopes; mutable data: 64
	 * bytes of relocations, then the metadata */
	put(nm, vm->blob_code_offset, HS_FZ_CODE, 4);
	put(nm, vm->nm_immutable, base, 8);
	put(nm, vm->nm_scopes_pcs_off, HS_FZ_PCS, 4);
	put(nm, vm->nm_scopes_data_off, HS_FZ_SCOPES, 4);
	put(nm, vm->blob_mutable, base + HS_FZ_META - 64, 8);
	put(nm, vm->blob_reloc_size, 64, 4);
	put(nm, vm->blob_mutable_size, 64 + HS_FZ_SCOPES - HS_FZ_META, 4);
	put(nm, vm->nm_deopt_off, HS_FZ_CODE + HS_FZ_DEOPT, 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* JDK 17's offsets, its nmethod layout */
	struct hs_vm vm = hs_offsets_jdk17();
	static uint8_t img[HS_FZ_LEN];
	uint64_t sym[HS_SYM_COUNT], bcp;
	unsigned i, max;
	struct fz_image im;

	if (size < 9)
		return 0;
	memcpy(&bcp, data + 1, 8);
	max = 1 + (unsigned)(bcp >> 56) % INTERP_CHAIN_MAX;
	im.p = data + 9;
	im.len = size - 9;
	if (!(data[0] & 1)) {
		vm.u5_excess = (data[0] >> 1) & 1;
		if (data[0] & 8) {
			memset(img, 0, sizeof(img));
			memcpy(img, im.p, im.len < sizeof(img) ? im.len : sizeof(img));
			lay_out(img, &vm, data[0] & 16);
			im.p = img;
			im.len = sizeof(img);
			/* a pc in the code, near the PcDescs' offsets */
			name_one(&vm, FZ_IMAGE_BASE + HS_FZ_NM + HS_FZ_CODE + (bcp & 0xff),
				 &im, FZ_IMAGE_BASE + HS_FZ_NM, max);
		} else {
			name_one(&vm, bcp, &im, data[0] & 4 ? FZ_IMAGE_BASE : 0,
				 max);
		}
		return 0;
	}
	for (i = 0; i < HS_SYM_COUNT; i++)
		sym[i] = FZ_IMAGE_BASE + 8 * i;
	memset(&vm, 0, sizeof(vm));
	if (hs_read_vm(fz_image_read, &im, 1, sym, &vm) == 0)
		name_one(&vm, bcp, &im, data[0] & 2 ? FZ_IMAGE_BASE : 0, max);
	return 0;
}
