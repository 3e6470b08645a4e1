// SPDX-License-Identifier: Apache-2.0
/*
 * HotSpot's userland reader (interp_hotspot.c) on a memory image read in
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
#include "interp_hotspot.h"

/* The laid-out nmethod: at HS_FZ_NM in an image of HS_FZ_LEN bytes
 * (after the seed's Method and its Symbols, so that the fuzzer reaches
 * its bytes growing the seed a little); its PcDescs at +128, metadata
 * at +280 (8 words, up to the scopes), scopes at +344, code at +1024
 * (never read: the pcs are offsets into it).  Every header field of
 * either layout lies outside the regions but JDK 25's scope offsets,
 * which sit among the PcDescs. */
#define HS_FZ_LEN 2048
#define HS_FZ_NM 544
#define HS_FZ_PCS 128
#define HS_FZ_PCS_END 192
#define HS_FZ_META 280
#define HS_FZ_SCOPES 344
#define HS_FZ_CODE 1024

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

/* The nmethod at HS_FZ_NM laid out for vm's layout (JDK 17 or 25). */
static void lay_out(uint8_t *img, struct hs_vm *vm, bool jdk25)
{
	static const size_t v17[] = {
		offsetof(struct hs_vm, blob_code_begin),
		offsetof(struct hs_vm, cm_scopes_data),
		offsetof(struct hs_vm, nm_deps_off),
		offsetof(struct hs_vm, nm_scopes_pcs_off),
		offsetof(struct hs_vm, nm_metadata_off),
	};
	static const size_t v25[] = {
		offsetof(struct hs_vm, blob_code_offset),
		offsetof(struct hs_vm, nm_immutable),
		offsetof(struct hs_vm, nm_scopes_data_off),
		offsetof(struct hs_vm, nm_scopes_pcs_off),
		offsetof(struct hs_vm, blob_mutable),
		offsetof(struct hs_vm, blob_mutable_size),
		offsetof(struct hs_vm, blob_reloc_size),
	};
	uint8_t *nm = img + HS_FZ_NM;
	uint64_t base = FZ_IMAGE_BASE + HS_FZ_NM;
	unsigned i;

	vm->found = 0;
	if (!jdk25) {
		for (i = 0; i < sizeof(v17) / sizeof(v17[0]); i++)
			hs_vm_have(vm, v17[i]);
		put(nm, vm->blob_code_begin, base + HS_FZ_CODE, 8);
		put(nm, vm->cm_scopes_data, base + HS_FZ_SCOPES, 8);
		put(nm, vm->nm_scopes_pcs_off, HS_FZ_PCS, 4);
		put(nm, vm->nm_deps_off, HS_FZ_PCS_END, 4);
		put(nm, vm->nm_metadata_off, HS_FZ_META, 4);
		return;
	}
	/* JDK 25's offsets (vmstructsdump of Temurin 25) */
	vm->blob_code_offset = 36;
	vm->nm_immutable = 96;
	vm->nm_scopes_pcs_off = 196;
	vm->nm_scopes_data_off = 200;
	vm->blob_mutable = 16;
	vm->blob_reloc_size = 28;
	vm->blob_mutable_size = 48;
	for (i = 0; i < sizeof(v25) / sizeof(v25[0]); i++)
		hs_vm_have(vm, v25[i]);
	/* immutable data: the pcs then the scopes; mutable data: 64
	 * bytes of relocations, then the metadata */
	put(nm, vm->blob_code_offset, HS_FZ_CODE, 4);
	put(nm, vm->nm_immutable, base, 8);
	put(nm, vm->nm_scopes_pcs_off, HS_FZ_PCS, 4);
	put(nm, vm->nm_scopes_data_off, HS_FZ_SCOPES, 4);
	put(nm, vm->blob_mutable, base + HS_FZ_META - 64, 8);
	put(nm, vm->blob_reloc_size, 64, 4);
	put(nm, vm->blob_mutable_size, 64 + HS_FZ_SCOPES - HS_FZ_META, 4);
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
		.nm_deps_off = 272, .nm_scopes_pcs_off = 268,
		.nm_metadata_off = 260, .pcd_pc = 0,
		.pcd_scope = 4, .size_pcdesc = 16,
		.found = ~0ull, /* every field present: JDK 17's layout */
	};
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
