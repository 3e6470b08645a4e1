// SPDX-License-Identifier: Apache-2.0
/*
 * V8 frames named from process memory (interp_v8_names.c, v8_frame_symbolize): the
 * input is a memory image read in place of the process, with the frame's
 * JSFunction (tagged: + 1) at the image's start, and node 20's layout
 * (V8 11.3, as its v8dbg_* symbols give it).  Every pointer the image
 * holds (SharedFunctionInfo, maps, ScopeInfo, strings of every shape,
 * Script) is followed as the module follows them in a live process,
 * which may hold anything.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "interp_v8.h"
#include "v8.h"

static const struct v8_layout node20 = {
	.map = 0, .map_type = 12, .fn_shared = 24, .sfi_name = 16,
	.sfi_script = 32, .script_name = 16, .str_length = 12,
	.seq1_chars = 16, .seq2_chars = 16, .cons_first = 16,
	.cons_second = 24, .thin_actual = 16, .fixed_data = 16,
	.si_ncontextlocals = 2, .si_first_vars = 3, .first_nonstring = 128,
	.not_string_mask = 0xff80, .enc_mask = 8, .one_byte_tag = 8,
	.repr_mask = 7, .seq_tag = 0, .cons_tag = 1, .thin_tag = 5,
	.type_sfi = 262, .type_script = 167, .type_scope_info = 261,
	.sfi_function_data = 8, .bca_positions = 32, .bca_data = 54,
	.script_source = 8, .type_bytecode_array = 191, .type_byte_array = 190,
	.type_code = 245,
	/* compiled code, as detection sets it for V8 11.3 */
	.code_deopt = 16, .code_positions = 24, .code_instr_start = 40,
	.code_instr_size = 56, .code_flags = 48, .istream_header = 16,
	.type_istream = 252, .kind_mask = 15, .kind_baseline = 11,
	.deopt_count_idx = 1, .deopt_literals_idx = 2, .deopt_inlining_idx = 7,
	.sfi_wrapper_shared = 8, .bca_length = 8,
	/* baseline frames: a bytecode table of 200 (sizes 1 to 3) */
	.bc_count = 200, .bc_sizes = { [0 ... 199] = 1, [200 ... 399] = 2,
				       [400 ... 599] = 3 },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct interp_frame f = { .kind = INTERP_V8, .n_payload = 2,
				  .payload = { FZ_IMAGE_BASE + 1 } };
	struct interp_symbol out;
	struct fz_image im = { data, size };

	struct interp_symbol chain[4];
	struct v8_sym_stats st = { 0 };
	int n, i;

	if (v8_frame_symbolize(fz_image_read, &im, 1, &node20, &f, &out, 1, NULL) == 1) {
		/* the strings are terminated within their buffers */
		if (strlen(out.name) >= sizeof(out.name) ||
		    strlen(out.file) >= sizeof(out.file) || !out.name[0])
			__builtin_trap();
	}
	/* the same image as a frame of JIT code at a pc inside it: the code
	 * around the pc (an InstructionStream's header and its Code), the
	 * position table, the deoptimization data, its InliningPositions
	 * and literal array, as the image has them */
	if (size < 16)
		return 0;
	f.data = V8_FRAME_PC(FZ_IMAGE_BASE + (size & ~(size_t)7) - 8);
	n = v8_frame_symbolize(fz_image_read, &im, 1, &node20, &f, chain, 4,
			       &st);
	if (n > 4 || n == 0)
		__builtin_trap();
	/* a level's line is from a source read for it or shared: never
	 * more shared than levels after the first */
	if (n > 0 && st.source_shared >= (uint64_t)n)
		__builtin_trap();
	for (i = 0; i < n; i++)
		if (strlen(chain[i].name) >= sizeof(chain[i].name) ||
		    strlen(chain[i].file) >= sizeof(chain[i].file) ||
		    !chain[i].name[0])
			__builtin_trap();
	return 0;
}
