// SPDX-License-Identifier: Apache-2.0
/*
 * V8's module (the walk: bpf/v8.h).  Detection, per file (node, or a
 * libnode.so that carries V8): the v8dbg_* post-mortem symbols V8 builds
 * into itself (ints in the file's data: frame slot offsets, object field
 * offsets, instance types, string tags), each under the spellings the
 * versions gave it, from .dynsym then .symtab; the version from
 * v8::internal::Version; the embedded builtins' range from the code of
 * DefaultEmbeddedBlobCode() and DefaultEmbeddedBlobCodeSize().
 * Attach, per process: the index of its layout among the few the host's
 * V8 builds have.  Names, per frame: interp_v8_names.c and
 * interp_v8_code.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfmap.h"
#include "interp.h"
#include "interp_v8.h"
#include "interp_v8_int.h"
#include "log.h"
#include "v8.h"

/*
 * A v8dbg_* field: its spellings (the type suffix changed with the
 * versions: Object, Tagged_Object_, ...), where it goes in the info, and
 * a default used when no spelling is found (-1: required).  The defaults
 * are Node 20's (V8 11.3), the layout every version from 10.2 to 13.6
 * keeps for these fields.
 */
#define SPELL_MAX 4
struct v8_sym {
	const char *names[SPELL_MAX];
	size_t off;   /* in struct v8_info */
	int size;     /* 1 (int8) or 2 (uint16) */
	int dflt;     /* -1: required */
};

#define L_(f) offsetof(struct v8_info, l.f), 2
#define I_(f) offsetof(struct v8_info, f), 1
static const struct v8_sym syms[] = {
	{ { "v8dbg_off_fp_function" }, I_(off_function), -1 },
	{ { "v8dbg_off_fp_context", "v8dbg_off_fp_context_or_frame_type" },
	  I_(off_context), -1 },
	{ { "v8dbg_off_fp_bytecode_array" }, I_(off_bytecode_array), -32 },
	{ { "v8dbg_off_fp_bytecode_offset" }, I_(off_bytecode_offset), -40 },
	{ { "v8dbg_InterpreterBytecodeOffsetRegister" }, I_(reg_bc_offset), -2 },
	{ { "v8dbg_InterpreterBytecodeArrayRegister" }, I_(reg_bc_array), -2 },
	{ { "v8dbg_class_HeapObject__map__Map",
	    "v8dbg_class_HeapObject__map__Tagged_Map_" }, L_(map), 0 },
	{ { "v8dbg_class_Map__instance_type__uint16_t" }, L_(map_type), -1 },
	{ { "v8dbg_class_JSFunction__shared__SharedFunctionInfo",
	    "v8dbg_class_JSFunction__shared__Tagged_SharedFunctionInfo_" },
	  L_(fn_shared), -1 },
	{ { "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object",
	    "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Tagged_Object_",
	    "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Tagged_NameOrScopeInfoT_" },
	  L_(sfi_name), -1 },
	{ { "v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject",
	    "v8dbg_class_SharedFunctionInfo__script_or_debug_info__Object",
	    "v8dbg_class_SharedFunctionInfo__script_or_debug_info__Tagged_HeapObject_",
	    "v8dbg_class_SharedFunctionInfo__script__Tagged_HeapObject_" },
	  L_(sfi_script), 32 },
	{ { "v8dbg_class_Script__name__Object",
	    "v8dbg_class_Script__name__Tagged_Object_" }, L_(script_name), 16 },
	{ { "v8dbg_class_String__length__int32_t",
	    "v8dbg_class_String__length__uint32_t" }, L_(str_length), 12 },
	{ { "v8dbg_class_SeqOneByteString__chars__char" }, L_(seq1_chars), 16 },
	{ { "v8dbg_class_SeqTwoByteString__chars__char" }, L_(seq2_chars), 16 },
	{ { "v8dbg_class_ConsString__first__String",
	    "v8dbg_class_ConsString__first__Tagged_String_" }, L_(cons_first), 16 },
	{ { "v8dbg_class_ConsString__second__String",
	    "v8dbg_class_ConsString__second__Tagged_String_" }, L_(cons_second), 24 },
	{ { "v8dbg_class_ThinString__actual__String",
	    "v8dbg_class_ThinString__actual__Tagged_String_" }, L_(thin_actual), 16 },
	{ { "v8dbg_class_FixedArray__data__uintptr_t" }, L_(fixed_data), 16 },
	{ { "v8dbg_scopeinfo_idx_ncontextlocals" }, L_(si_ncontextlocals), 2 },
	{ { "v8dbg_scopeinfo_idx_first_vars" }, L_(si_first_vars), 3 },
	{ { "v8dbg_FirstNonstringType" }, L_(first_nonstring), 128 },
	{ { "v8dbg_IsNotStringMask" }, L_(not_string_mask), 0xff80 },
	{ { "v8dbg_StringEncodingMask" }, L_(enc_mask), 8 },
	{ { "v8dbg_OneByteStringTag" }, L_(one_byte_tag), 8 },
	{ { "v8dbg_StringRepresentationMask" }, L_(repr_mask), 7 },
	{ { "v8dbg_SeqStringTag" }, L_(seq_tag), 0 },
	{ { "v8dbg_ConsStringTag" }, L_(cons_tag), 1 },
	{ { "v8dbg_ThinStringTag" }, L_(thin_tag), 5 },
	{ { "v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE" },
	  L_(type_sfi), -1 },
	{ { "v8dbg_type_Script__SCRIPT_TYPE" }, L_(type_script), -1 },
	{ { "v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE" }, L_(type_scope_info), 0 },
	{ { "v8dbg_class_SharedFunctionInfo__function_data__Object",
	    "v8dbg_class_SharedFunctionInfo__function_data__Tagged_Object_" },
	  L_(sfi_function_data), 8 },
	/* not among V8 11's symbols: its place since V8 9 */
	{ { "v8dbg_class_BytecodeArray__source_position_table__Object",
	    "v8dbg_class_BytecodeArray__source_position_table__Tagged_HeapObject_",
	    "v8dbg_class_BytecodeArray__source_position_table__Tagged_Object_" },
	  L_(bca_positions), 32 },
	{ { "v8dbg_class_BytecodeArray__data__uintptr_t" }, L_(bca_data), 54 },
	{ { "v8dbg_class_Script__source__Object",
	    "v8dbg_class_Script__source__Tagged_Object_" }, L_(script_source), 8 },
	{ { "v8dbg_type_BytecodeArray__BYTECODE_ARRAY_TYPE" },
	  L_(type_bytecode_array), 0 },
	{ { "v8dbg_type_ByteArray__BYTE_ARRAY_TYPE" }, L_(type_byte_array), 0 },
	{ { "v8dbg_class_Code__bytecode_or_interpreter_data__HeapObject",
	    "v8dbg_class_Code__bytecode_or_interpreter_data__Tagged_HeapObject_",
	    "v8dbg_class_Code__bytecode_or_interpreter_data__Object" },
	  L_(code_bytecode), 16 },
	{ { "v8dbg_type_Code__CODE_TYPE" }, L_(type_code), 0 },
	{ { "v8dbg_type_TrustedByteArray__TRUSTED_BYTE_ARRAY_TYPE" },
	  L_(type_trusted_byte_array), 0 },
	{ { "v8dbg_class_BytecodeArray__wrapper__Tagged_BytecodeWrapper_" },
	  offsetof(struct v8_info, bca_wrapper), 2, 0 },
	/* compiled code: what a version does not name is set from its
	 * neighbours after the lookup (v8_code_layout) */
	{ { "v8dbg_class_Code__deoptimization_data__FixedArray",
	    "v8dbg_class_Code__deoptimization_data__Tagged_FixedArray_" },
	  L_(code_deopt), 0 },
	{ { "v8dbg_class_Code__source_position_table__ByteArray",
	    "v8dbg_class_Code__source_position_table__Tagged_ByteArray_" },
	  L_(code_positions), 0 },
	{ { "v8dbg_class_Code__instruction_start__Address" },
	  L_(code_instr_start), 0 },
	/* up to V8 11.0 the instructions' place in the Code itself */
	{ { "v8dbg_class_Code__instruction_start__uintptr_t" }, L_(code_header), 0 },
	{ { "v8dbg_class_Code__instruction_size__int" }, L_(code_instr_size), 0 },
	{ { "v8dbg_class_Code__flags__uint32_t" }, L_(code_flags), 0 },
	{ { "v8dbg_class_InstructionStream__instruction_start__uintptr_t" },
	  L_(istream_header), 0 },
	{ { "v8dbg_type_InstructionStream__INSTRUCTION_STREAM_TYPE" },
	  L_(type_istream), 0 },
	{ { "v8dbg_CodeKindFieldMask" }, L_(kind_mask), 15 },
	{ { "v8dbg_CodeKindBaseline" }, L_(kind_baseline), 0 },
	{ { "v8dbg_DeoptimizationDataInlinedFunctionCountIndex" },
	  L_(deopt_count_idx), 1 },
	{ { "v8dbg_DeoptimizationDataLiteralArrayIndex" }, L_(deopt_literals_idx), 2 },
	{ { "v8dbg_DeoptimizationDataInliningPositionsIndex" },
	  L_(deopt_inlining_idx), 7 },
	{ { "v8dbg_type_SharedFunctionInfoWrapper__SHARED_FUNCTION_INFO_WRAPPER_TYPE" },
	  L_(type_sfi_wrapper), 0 },
	{ { "v8dbg_class_SharedFunctionInfoWrapper__shared_info__Tagged_SharedFunctionInfo_" },
	  L_(sfi_wrapper_shared), 8 },
	{ { "v8dbg_class_BytecodeArray__length__SMI",
	    "v8dbg_class_FixedArrayBase__length__SMI" }, L_(bca_length), 8 },
};
#undef L_
#undef I_
#define N_SYMS (sizeof(syms) / sizeof(syms[0]))

enum {
	X_MAJOR,
	X_MINOR,
	X_BUILD,
	X_PATCH,
	X_BLOB,
	X_BLOB_SIZE,
	X_BC_SIZES,
	X_COUNT,
};
static const char *const extra[X_COUNT] = {
	"_ZN2v88internal7Version6major_E",
	"_ZN2v88internal7Version6minor_E",
	"_ZN2v88internal7Version6build_E",
	"_ZN2v88internal7Version6patch_E",
	"_ZN2v88internal23DefaultEmbeddedBlobCodeEv",
	"_ZN2v88internal27DefaultEmbeddedBlobCodeSizeEv",
	"_ZN2v88internal11interpreter9Bytecodes14kBytecodeSizesE",
};

/* The n (4 or 8) little-endian bytes the file keeps at vaddr, as an
 * unsigned number; 0 when the file has none there (a symbol in .bss). */
static uint64_t file_uint(const struct elfm *e, uint64_t vaddr, size_t n)
{
	const uint8_t *p;
	size_t avail;
	uint64_t v = 0;

	if (n > sizeof(v) || elfm_vaddr_bytes(e, vaddr, n, &p, &avail))
		return 0;
	memcpy(&v, p, n);
	return v;
}

static int32_t int_at(const struct elfm *e, uint64_t vaddr)
{
	return (int32_t)(uint32_t)file_uint(e, vaddr, 4);
}

/* The target of the rip-relative lea/mov at c (its 4-byte displacement at
 * c + at, the instruction len bytes long), c being at vaddr. */
static uint64_t rip_target(const uint8_t *c, uint64_t vaddr, unsigned at,
			   unsigned len)
{
	int32_t rel;

	memcpy(&rel, c + at, 4);
	return vaddr + len + (int64_t)rel;
}

/* DefaultEmbeddedBlobCode() returns the builtins' address: mov
 * $imm32,%eax (node 20), lea blob(%rip),%rax, mov ptr(%rip),%rax (node
 * 18: ptr a pointer in the data), or, in a shared library, lea
 * ptr(%rip),%rax; mov (%rax),%rax (ptr relocated; its file bytes hold
 * its value).  DefaultEmbeddedBlobCodeSize() reads a
 * uint32: mov size(%rip),%eax, or lea size(%rip),%rax; mov (%rax),%eax. */
static int blob_range(const struct elfm *e, uint64_t code_fn, uint64_t size_fn,
		      uint64_t *lo, uint64_t *hi)
{
	const uint8_t *c;
	size_t avail;
	uint64_t addr;
	uint32_t size;

	if (!code_fn || !size_fn ||
	    elfm_vaddr_bytes(e, code_fn, 11, &c, &avail))
		return -ENOENT;
	if (c[0] == 0xb8 && c[5] == 0xc3) {
		memcpy(&size, c + 1, 4);
		addr = size;
	} else if (c[0] == 0x48 && c[1] == 0x8d && c[2] == 0x05 &&
		   c[7] == 0xc3) {
		addr = rip_target(c, code_fn, 3, 7);
	} else if (c[0] == 0x48 && c[1] == 0x8d && c[2] == 0x05 &&
		   c[7] == 0x48 && c[8] == 0x8b && c[9] == 0x00 && c[10] == 0xc3) {
		addr = file_uint(e, rip_target(c, code_fn, 3, 7), 8);
	} else if (c[0] == 0x48 && c[1] == 0x8b && c[2] == 0x05 &&
		   c[7] == 0xc3) {
		addr = file_uint(e, rip_target(c, code_fn, 3, 7), 8);
	} else {
		return -ENOENT;
	}
	if (elfm_vaddr_bytes(e, size_fn, 10, &c, &avail))
		return -ENOENT;
	if (c[0] == 0x8b && c[1] == 0x05 && c[6] == 0xc3)
		size = (uint32_t)int_at(e, rip_target(c, size_fn, 2, 6));
	else if (c[0] == 0x48 && c[1] == 0x8d && c[2] == 0x05 &&
		 c[7] == 0x8b && c[8] == 0x00 && c[9] == 0xc3)
		size = (uint32_t)int_at(e, rip_target(c, size_fn, 3, 7));
	else
		return -ENOENT;
	if (!addr || !size || elfm_in_text(e, addr, addr + size) != 1)
		return -ENOENT;
	*lo = addr;
	*hi = addr + size;
	return 0;
}

/*
 * The Code fields a version does not name, from those it does (checked
 * in the memory of node 18, 20, 22 and 24: Code objects of TurboFan and
 * Maglev functions found through %DebugPrint):
 *  - V8 12 on names the instructions' address and size and the flags;
 *    the deoptimization data and the position table are its first two
 *    fields (8, 16);
 *  - V8 11 names only the deoptimization data and the position table:
 *    the instructions' address is two words after the table, the flags
 *    after it, the size after the flags (and, before 11.4.59, after the
 *    builtin id and the kind-specific flags: 4 more bytes);
 *  - up to V8 11.0 the instructions follow the Code's header, whose
 *    size it names, with the deoptimization data and the position table
 *    three and two words before the size.
 * Compiled frames are named by their function alone when none holds.
 */
static void v8_code_layout(struct v8_info *info)
{
	struct v8_layout *l = &info->l;

	if (l->code_instr_start) {
		if (!l->code_deopt)
			l->code_deopt = 8;
		if (!l->code_positions)
			l->code_positions = 16;
	} else if (l->code_positions && !l->code_header) {
		l->code_instr_start = l->code_positions + 16;
		if (!l->code_flags)
			l->code_flags = l->code_instr_start + 8;
		if (!l->code_instr_size)
			l->code_instr_size =
				l->code_flags + 4 +
				(info->major == 11 && (info->minor < 4 ||
				 (info->minor == 4 && info->build < 59)) ? 4 : 0);
	} else if (l->code_header && l->code_instr_size >= 24) {
		if (!l->code_positions)
			l->code_positions = l->code_instr_size - 16;
		if (!l->code_deopt)
			l->code_deopt = l->code_positions - 8;
	}
}

/* Bytecodes::kBytecodeSizes (uint8_t[3][count]: each bytecode's size
 * at operand scale 1, 2 and 4) into l; left unknown when the file has
 * no such table or it holds a size no bytecode has. */
static void bc_sizes(const struct elfm *e, uint64_t addr, uint64_t size,
		     struct v8_layout *l)
{
	const uint8_t *p;
	size_t avail, i;

	if (!addr || !size || size % 3 || size > sizeof(l->bc_sizes) ||
	    elfm_vaddr_bytes(e, addr, size, &p, &avail) || avail < size)
		return;
	for (i = 0; i < size; i++)
		if (!p[i] || p[i] > 32)
			return;
	memcpy(l->bc_sizes, p, size);
	l->bc_count = (uint16_t)(size / 3);
}

/* elfm_find_syms looks up at most this many names in one walk */
#define FIND_MAX 64

/* Every spelling of every field, then the extra symbols, in one list:
 * at[i * SPELL_MAX + k] is the index of syms[i].names[k] in it (-1:
 * none).  Returns the list's length. */
static unsigned name_list(const char **names, int *at)
{
	unsigned n = 0, i, k;

	for (i = 0; i < N_SYMS; i++)
		for (k = 0; k < SPELL_MAX; k++) {
			at[i * SPELL_MAX + k] = syms[i].names[k] ? (int)n : -1;
			if (syms[i].names[k])
				names[n++] = syms[i].names[k];
		}
	for (i = 0; i < X_COUNT; i++)
		names[n++] = extra[i];
	return n;
}

/* Look the list up in walks of at most FIND_MAX names. */
static unsigned find_all(const struct elfm *e, const char **names, unsigned n,
			 uint64_t *value, uint64_t *size)
{
	unsigned i, got = 0;

	for (i = 0; i < n; i += FIND_MAX)
		got += elfm_find_syms(e, names + i,
				      n - i < FIND_MAX ? n - i : FIND_MAX,
				      value + i, size + i);
	return got;
}

static int v8_detect(void *state, const struct interp_file *file,
		     void **data, size_t *len)
{
	const char *names[N_SYMS * SPELL_MAX + X_COUNT];
	uint64_t value[N_SYMS * SPELL_MAX + X_COUNT] = { 0 };
	uint64_t size[N_SYMS * SPELL_MAX + X_COUNT] = { 0 };
	int at[N_SYMS * SPELL_MAX];
	unsigned n, i, k, base;
	struct v8_info *info = NULL;
	const struct elfm *e = file->elf;
	int err;

	(void)state;
	n = name_list(names, at);
	base = n - X_COUNT;
	/* the frame-pointer slots say V8 is here: most files stop there */
	err = -ENOENT;
	if (!elfm_find_syms(e, names, 1, value, size) || !value[0])
		goto out;
	/* V8 here, but its registers and frame slots are read as x86-64's:
	 * another machine's V8 is unsupported */
	err = -ENOTSUP;
	if (elfm_ehdr(e)->e_machine != EM_X86_64)
		goto out;
	find_all(e, names, n, value, size);
	info = calloc(1, sizeof(*info));
	err = -ENOMEM;
	if (!info)
		goto out;
	info->format = V8_INFO_FORMAT;
	err = -ENOTSUP;
	for (i = 0; i < N_SYMS; i++) {
		int v = syms[i].dflt;
		bool found = false;

		for (k = 0; k < SPELL_MAX && !found; k++)
			if (at[i * SPELL_MAX + k] >= 0 &&
			    value[at[i * SPELL_MAX + k]]) {
				v = int_at(e, value[at[i * SPELL_MAX + k]]);
				found = true;
			}
		if (!found && syms[i].dflt == -1)
			goto out; /* a required field this build names otherwise */
		if (!found)
			info->missing++;
		if (syms[i].size == 1) {
			if (v < -128 || v > 127)
				goto out;
			*((int8_t *)info + syms[i].off) = (int8_t)v;
		} else {
			*(uint16_t *)((uint8_t *)info + syms[i].off) = (uint16_t)v;
		}
	}
	/* V8 12 put the BytecodeArray in trusted space, its source position
	 * table right after the wrapper that points back to it (checked on
	 * node 22 and 24's memory) */
	if (info->bca_wrapper && info->l.bca_positions == 32)
		info->l.bca_positions = info->bca_wrapper + 8;
	/* and baseline Code keeps its bytecode in its first field
	 * (deoptimization_data_or_interpreter_data, no symbol) */
	if (info->bca_wrapper && info->l.code_bytecode == 16)
		info->l.code_bytecode = 8;
		/* every slot the unwinder reads is in its window, 8-byte aligned */
	{
		const int8_t offs[4] = { info->off_function, info->off_context,
					 info->off_bytecode_array,
					 info->off_bytecode_offset };

		for (i = 0; i < 4; i++)
			if (offs[i] % 8 || offs[i] < -V8_WIN_BELOW || offs[i] >= 0)
				goto out;
	}
	if (value[base + X_MAJOR]) {
		info->major = (uint16_t)int_at(e, value[base + X_MAJOR]);
		info->minor = (uint16_t)int_at(e, value[base + X_MINOR]);
		info->build = (uint16_t)int_at(e, value[base + X_BUILD]);
		info->patch = (uint16_t)int_at(e, value[base + X_PATCH]);
	}
	v8_code_layout(info);
	bc_sizes(e, value[base + X_BC_SIZES], size[base + X_BC_SIZES], &info->l);
	if (blob_range(e, value[base + X_BLOB], value[base + X_BLOB_SIZE],
		       &info->blob_lo, &info->blob_hi))
		goto out; /* no embedded builtins: nothing to unwind through */
	*data = info;
	*len = sizeof(*info);
	info = NULL;
	err = 0;
out:
	free(info);
	return err;
}

static int v8_check(const void *record)
{
	const struct v8_info *info = record;

	if (info->blob_hi <= info->blob_lo || !info->l.fn_shared ||
	    !info->l.sfi_name || !info->l.type_sfi || info->off_function >= 0 ||
	    info->off_function < -V8_WIN_BELOW || info->off_context >= 0 ||
	    info->off_context < -V8_WIN_BELOW)
		return -EINVAL;
	return 0;
}

/* ---- per process: the layout of its V8 ----------------------------------- */

/* Processes share a few layouts (one per V8 build on the host): each
 * process' word is the index of its layout in this table. */
#define V8_LAYOUTS_MAX 64
struct v8_state {
	void *procs;
	struct v8_layout layouts[V8_LAYOUTS_MAX];
	unsigned n_layouts;
};

static int v8_init(void **state)
{
	struct v8_state *st = calloc(1, sizeof(*st));
	int err;

	if (!st)
		return -ENOMEM;
	err = interp_procs_init(&st->procs);
	if (err) {
		free(st);
		return err;
	}
	*state = st;
	return 0;
}

static void v8_fini(void *state)
{
	struct v8_state *st = state;

	if (!st)
		return;
	interp_procs_fini(st->procs);
	free(st);
}

static void v8_detach(void *state, pid_t pid)
{
	interp_procs_detach(((struct v8_state *)state)->procs, pid);
}

/* A V8 x64 register code (rax rcx rdx rbx rsp rbp rsi rdi r8..r15) as
 * the unwinder numbers registers (DWARF's); V8_NO_REG when not one. */
static uint8_t dwarf_reg(int code)
{
	static const uint8_t dwarf[16] = { 0, 2, 1, 3, 7, 6, 4, 5,
					   8, 9, 10, 11, 12, 13, 14, 15 };

	return code >= 0 && code < 16 ? dwarf[code] : V8_NO_REG;
}

static int v8_attach(void *state, struct interp_mgr *im,
		     const struct interp_attach *a)
{
	struct v8_state *st = state;
	const struct v8_info *info = a->files[0].data;
	uint32_t key = (uint32_t)a->pid;
	struct v8_proc vp = {
		.blob_lo = info->blob_lo,
		.blob_hi = info->blob_hi,
		.off_function = info->off_function,
		.off_context = info->off_context,
		.off_bytecode_array = info->off_bytecode_array,
		.off_bytecode_offset = info->off_bytecode_offset,
		.reg_bc_offset = dwarf_reg(info->reg_bc_offset),
		.reg_bc_array = dwarf_reg(info->reg_bc_array),
	};
	unsigned i;
	int err;

	for (i = 0; i < st->n_layouts; i++)
		if (!memcmp(&st->layouts[i], &info->l, sizeof(info->l)))
			break;
	if (i == st->n_layouts) {
		if (i == V8_LAYOUTS_MAX)
			return -ENOSPC;
		st->layouts[st->n_layouts++] = info->l;
	}
	err = interp_procs_put(st->procs, a->pid, i);
	if (err)
		return err;
	return interp_map_update(im, INTERP_V8, &key, &vp);
}

static int v8_symbolize(void *state, pid_t pid, const struct interp_frame *f,
			struct interp_symbol *out, unsigned max)
{
	struct v8_state *st = state;
	uint64_t idx;

	if (!interp_procs_get(st->procs, pid, &idx) || idx >= st->n_layouts)
		return -ESRCH;
	/* what naming reads (struct v8_sym_stats) is for the tests: the
	 * daemon keeps no counter it does not show */
	return v8_frame_symbolize(interp_read_process, NULL, pid,
				  &st->layouts[idx], f, out, max, NULL);
}

const struct interp_module interp_module_v8 = {
	INTERP_MODULE_METRICS(V8_METRICS),
	INTERP_MODULE_DATA(v8, struct v8_info, V8_INFO_FORMAT),
	INTERP_MODULE_FUNCS(v8, v8),
};
