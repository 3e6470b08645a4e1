/* SPDX-License-Identifier: Apache-2.0 */
/* V8's module (interp_v8*.c): what its tests and fuzz target reach. */
#ifndef EP_INTERP_V8_H
#define EP_INTERP_V8_H

#include <stdint.h>
#include <sys/types.h>

#include "interp.h"

/* The layout of one V8 build, from its v8dbg_* symbols: what names a
 * frame.  Offsets are of tagged objects (a field is at ptr - 1 + off). */
struct v8_layout {
	uint16_t map;			 /* HeapObject::map */
	uint16_t map_type;		 /* Map::instance_type (u16) */
	uint16_t fn_shared;		 /* JSFunction::shared */
	uint16_t sfi_name;		 /* SharedFunctionInfo::name_or_scope_info */
	uint16_t sfi_script;		 /* SharedFunctionInfo::script_or_debug_info */
	uint16_t script_name;		 /* Script::name */
	uint16_t str_length;		 /* String::length (u32) */
	uint16_t seq1_chars, seq2_chars; /* SeqOneByteString, SeqTwoByteString */
	uint16_t cons_first, cons_second; /* ConsString */
	uint16_t thin_actual;		 /* ThinString::actual */
	uint16_t fixed_data;		 /* FixedArray::data: ScopeInfo's slots */
	uint16_t si_ncontextlocals;	 /* ScopeInfo slot indices */
	uint16_t si_first_vars;
	uint16_t first_nonstring;	 /* instance types below it are strings */
	uint16_t not_string_mask;	 /* IsNotStringMask */
	uint16_t enc_mask, one_byte_tag; /* StringEncodingMask, OneByteStringTag */
	uint16_t repr_mask;		 /* StringRepresentationMask */
	uint16_t seq_tag, cons_tag, thin_tag;
	uint16_t type_sfi, type_script, type_scope_info; /* instance types */
	uint16_t sfi_function_data;	 /* SharedFunctionInfo::function_data */
	uint16_t bca_positions;		 /* BytecodeArray::source_position_table */
	uint16_t bca_data;		 /* BytecodeArray: its first bytecode */
	uint16_t script_source;		 /* Script::source */
	uint16_t type_bytecode_array, type_byte_array;
	uint16_t code_bytecode; /* Code::bytecode_or_interpreter_data (baseline) */
	uint16_t type_code;
	uint16_t type_trusted_byte_array; /* V8 12: where positions live */
	/* compiled code: Code's fields (its instructions follow its header
	 * up to V8 11.0: code_header; since, they follow the header of an
	 * InstructionStream that points back to the Code, and the Code
	 * keeps their address at code_instr_start) */
	uint16_t code_deopt, code_positions, code_instr_start, code_header;
	uint16_t code_instr_size, code_flags; /* int32, uint32 */
	uint16_t istream_header, type_istream;
	uint16_t kind_mask, kind_baseline; /* Code::flags: its kind */
	/* DeoptimizationData's slots: inlined function count, the literal
	 * array (the inlined SharedFunctionInfos first), InliningPositions */
	uint16_t deopt_count_idx, deopt_literals_idx, deopt_inlining_idx;
	uint16_t type_sfi_wrapper, sfi_wrapper_shared; /* V8 13 */
	uint16_t bca_length;		 /* BytecodeArray::length (Smi) */
	/* V8's Bytecodes::kBytecodeSizes[3][bc_count] (0: not known): a
	 * baseline frame's pc maps to its bytecode through them */
	uint16_t bc_count;
	uint8_t bc_sizes[3 * 256];
};

/* Name one V8 frame (bpf/v8.h: payload = the JSFunction, the frame's
 * BytecodeArray slot; data = its bytecode offset or its pc) from memory
 * read through read: the function's name ("<anonymous>" when V8 has
 * none), its script's name, and the line: of the bytecode being run in
 * an interpreted frame, of the pc's source position in optimized code,
 * else of the function's start (0 when V8 kept none).  An optimized
 * frame whose pc is in code inlined from other functions gives them
 * too: out[0..max) innermost first, the frame's own function last.
 * Returns how many (>= 1), or a negative errno when the object is not a
 * JSFunction of this layout. */
struct v8_sym_stats;
int v8_frame_symbolize(interp_read_fn read, void *arg, pid_t pid,
		       const struct v8_layout *l, const struct interp_frame *f,
		       struct interp_symbol *out, unsigned max,
		       struct v8_sym_stats *st);

/* What naming frames read (st of v8_frame_symbolize; NULL: not kept):
 * a frame's chain reads each script's source once, up to the furthest
 * position of it there (at most INTERP_CHAIN_MAX levels, V8_SOURCE_MAX
 * characters). */
struct v8_sym_stats {
	uint64_t source_reads;	/* script sources read to count lines */
	uint64_t source_shared; /* lines counted in a source read for an
				 * other level of the same chain */
};

/* What detection keeps for a file (its store record; ELF addresses).  The
 * unit tests read a stored one with fix_record (interp_fixture.h). */
#define V8_INFO_FORMAT 5
struct v8_info {
	uint32_t format;
	uint16_t major, minor, build, patch;
	/* V8's register codes of the interpreter's bytecode offset and
	 * array (-2: not known) */
	int8_t reg_bc_offset, reg_bc_array;
	/* BytecodeArray::wrapper (V8 12 on; 0: none): the source position
	 * table follows it */
	uint16_t bca_wrapper;
	uint64_t blob_lo, blob_hi;
	int8_t off_function, off_context, off_bytecode_array,
		off_bytecode_offset;
	uint32_t missing;
	struct v8_layout l;
	uint16_t pad2;
};
_Static_assert(sizeof(struct v8_info) == 920, "v8_info layout");

#endif
