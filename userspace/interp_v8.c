// SPDX-License-Identifier: Apache-2.0
/*
 * V8's module (the walk: bpf/v8.h).  Detection, per file (node, or a
 * libnode.so that carries V8): the v8dbg_* post-mortem symbols V8 builds
 * into itself (ints in the file's data: frame slot offsets, object field
 * offsets, instance types, string tags), each under the spellings the
 * versions gave it, from .dynsym then .symtab; the version from
 * v8::internal::Version; the embedded builtins' range from the code of
 * DefaultEmbeddedBlobCode() and DefaultEmbeddedBlobCodeSize().
 * Names, per frame: JSFunction -> SharedFunctionInfo -> its name (a
 * String, or the name a ScopeInfo keeps) and Script -> name, read from
 * the process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfmap.h"
#include "interp.h"
#include "interp_v8.h"
#include "log.h"
#include "v8.h"

#define V8_INFO_FORMAT 4

/* What detection keeps (store record); ELF addresses. */
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
_Static_assert(sizeof(struct v8_info) == 112, "v8_info layout");

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
	X_COUNT,
};
static const char *const extra[X_COUNT] = {
	"_ZN2v88internal7Version6major_E",
	"_ZN2v88internal7Version6minor_E",
	"_ZN2v88internal7Version6build_E",
	"_ZN2v88internal7Version6patch_E",
	"_ZN2v88internal23DefaultEmbeddedBlobCodeEv",
	"_ZN2v88internal27DefaultEmbeddedBlobCodeSizeEv",
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

static int v8_detect(void *state, const char *path, int fd, void **data,
		     size_t *len)
{
	const char *names[N_SYMS * SPELL_MAX + X_COUNT];
	uint64_t value[N_SYMS * SPELL_MAX + X_COUNT] = { 0 };
	uint64_t size[N_SYMS * SPELL_MAX + X_COUNT] = { 0 };
	int at[N_SYMS * SPELL_MAX];
	unsigned n, i, k, base;
	struct v8_info *info = NULL;
	struct elfm *e;
	int err;

	(void)state;
	(void)path;
	err = elfm_open_fd(fd, &e);
	if (err)
		return err;
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
	if (blob_range(e, value[base + X_BLOB], value[base + X_BLOB_SIZE],
		       &info->blob_lo, &info->blob_hi))
		goto out; /* no embedded builtins: nothing to unwind through */
	*data = info;
	*len = sizeof(*info);
	info = NULL;
	err = 0;
out:
	free(info);
	elfm_free(e);
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
	err = interp_map_update(im, INTERP_V8, &key, &vp);
	if (err) {
		interp_procs_detach(st->procs, a->pid);
		log_warn_once("v8_procs map is full: JavaScript frames of new processes are not unwound");
	}
	return err;
}

/* ---- names ---------------------------------------------------------------- */

struct v8_reader {
	interp_read_fn read;
	void *arg;
	pid_t pid;
	const struct v8_layout *l;
};

static int rd(const struct v8_reader *r, uint64_t addr, void *buf, size_t len)
{
	return r->read(r->arg, r->pid, addr, buf, len);
}

/* The tagged field at off of heap object obj. */
static int field(const struct v8_reader *r, uint64_t obj, uint16_t off,
		 uint64_t *out)
{
	if ((obj & 3) != 1)
		return -EINVAL;
	return rd(r, obj - 1 + off, out, 8);
}

/* A heap object's instance type. */
static int type_of(const struct v8_reader *r, uint64_t obj, uint16_t *type)
{
	uint64_t map;
	int err = field(r, obj, r->l->map, &map);

	if (err)
		return err;
	if ((map & 3) != 1)
		return -EINVAL;
	return rd(r, map - 1 + r->l->map_type, type, 2);
}

static bool is_string(const struct v8_reader *r, uint16_t type)
{
	return type < r->l->first_nonstring &&
	       !(type & r->l->not_string_mask);
}

/* Strings nest (cons of cons, thin): a bound on the pieces followed. */
#define V8_STR_PIECES 16

/* Append the text of string obj to out (at *n, below cap); two-byte
 * characters past Latin-1 become '?'.  0 or an error. */
static int str_append(const struct v8_reader *r, uint64_t obj, char *out,
		      size_t *n, size_t cap, unsigned *pieces)
{
	const struct v8_layout *l = r->l;
	uint16_t type, u16[64];
	uint32_t len, i, chunk;
	uint64_t a, b;
	int err;

	if (++*pieces > V8_STR_PIECES)
		return -ELOOP;
	err = type_of(r, obj, &type);
	if (err)
		return err;
	if (!is_string(r, type))
		return -EINVAL;
	if ((type & l->repr_mask) == l->thin_tag) {
		err = field(r, obj, l->thin_actual, &a);
		return err ? err : str_append(r, a, out, n, cap, pieces);
	}
	if ((type & l->repr_mask) == l->cons_tag) {
		err = field(r, obj, l->cons_first, &a);
		if (!err)
			err = field(r, obj, l->cons_second, &b);
		if (!err)
			err = str_append(r, a, out, n, cap, pieces);
		if (!err && *n < cap)
			err = str_append(r, b, out, n, cap, pieces);
		return err;
	}
	if ((type & l->repr_mask) != l->seq_tag)
		return -ENOTSUP; /* external, sliced: not read yet */
	err = rd(r, obj - 1 + l->str_length, &len, 4);
	if (err)
		return err;
	if (len > (1u << 28))
		return -EINVAL;
	if (len > cap - *n)
		len = (uint32_t)(cap - *n);
	if ((type & l->enc_mask) == l->one_byte_tag) {
		err = rd(r, obj - 1 + l->seq1_chars, out + *n, len);
		if (err)
			return err;
		*n += len;
		return 0;
	}
	for (i = 0; i < len; i += chunk) {
		uint32_t j;

		chunk = len - i < 64 ? len - i : 64;
		err = rd(r, obj - 1 + l->seq2_chars + 2ull * i, u16, 2ull * chunk);
		if (err)
			return err;
		for (j = 0; j < chunk; j++)
			out[*n + i + j] = u16[j] && u16[j] < 256 ? (char)u16[j] : '?';
	}
	*n += len;
	return 0;
}

/* String obj into out (NUL-terminated, cut to fit); 0 or an error. */
static int read_str(const struct v8_reader *r, uint64_t obj, char *out,
		    size_t cap)
{
	unsigned pieces = 0;
	size_t n = 0, i;
	int err;

	out[0] = 0;
	err = str_append(r, obj, out, &n, cap - 1, &pieces);
	out[n] = 0;
	if (err && !n)
		return err;
	/* a name holds no NUL: cut at the first one */
	for (i = 0; i < n; i++)
		if (!out[i])
			break;
	return i ? 0 : -ENOENT;
}

/* A compiled function's ScopeInfo keeps its name after the context
 * locals (names, then infos) and, for class scopes, the saved class
 * variable: the first string among the next slots is it (or, for an
 * anonymous function, the name V8 inferred for it). */
#define V8_SI_SCAN 3
static int scope_info_name(const struct v8_reader *r, uint64_t si, char *out,
			   size_t cap)
{
	const struct v8_layout *l = r->l;
	uint64_t nlocals, slot;
	uint16_t type;
	unsigned i, first;

	/* ScopeInfo's slots follow its map */
	if (field(r, si, 8 + 8 * l->si_ncontextlocals, &nlocals) ||
	    (nlocals & 0xffffffff))
		return -EINVAL;
	nlocals >>= 32;
	/* past 75 locals the names are a hash table, one slot */
	if (nlocals > 1u << 16)
		return -EINVAL;
	first = l->si_first_vars + (nlocals < 75 ? 2 * nlocals : nlocals + 1);
	for (i = 0; i < V8_SI_SCAN; i++) {
		if (field(r, si, 8 + 8 * (first + i), &slot) || (slot & 3) != 1)
			continue;
		if (type_of(r, slot, &type) || !is_string(r, type))
			continue;
		if (read_str(r, slot, out, cap) == 0)
			return 0;
	}
	return -ENOENT;
}

/* ---- lines ---------------------------------------------------------------- */

/* A source position table: per entry, the bytecode offset delta then the
 * source position delta, each a zigzag-encoded VLQ (7 bits a byte, low
 * group first, 0x80: more); a negative offset delta (-delta - 1) marks an
 * expression rather than a statement.  A position is the script offset
 * plus one, shifted left once (bit 0: external), with the inlining id
 * above bit 31. */
#define V8_POS_TABLE_MAX (1u << 16)
static bool vlq(const uint8_t *p, size_t n, size_t *i, int64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;

	do {
		if (*i >= n || shift > 63)
			return false;
		v |= (uint64_t)(p[*i] & 0x7f) << shift;
		shift += 7;
	} while (p[(*i)++] & 0x80);
	*out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
	return true;
}

/* The script offset of bytecode offset target in table (the last entry
 * at or before it; target 0: the function's own position).  -1 when the
 * table has none. */
static int64_t table_position(const uint8_t *p, size_t n, int64_t target)
{
	int64_t code = 0, raw = 0, d, pos = -1;
	size_t i = 0;

	while (i < n) {
		if (!vlq(p, n, &i, &d))
			break;
		code += d < 0 ? -d - 1 : d;
		if (!vlq(p, n, &i, &d))
			break;
		raw += d;
		if (code > target && pos >= 0)
			break;
		pos = ((raw >> 1) & 0x3fffffff) - 1;
	}
	return pos;
}

/* The script offset a frame runs: from the BytecodeArray's source
 * positions at the frame's bytecode offset, or the function's start. */
static int64_t frame_position(const struct v8_reader *r, uint64_t bca,
			      bool have_off, uint32_t off)
{
	const struct v8_layout *l = r->l;
	uint64_t table, len;
	int64_t target = 0, pos;
	uint16_t type;
	uint8_t *buf;

	if (!l->type_bytecode_array || !l->type_byte_array ||
	    type_of(r, bca, &type))
		return -1;
	/* a function with baseline code keeps its bytecode there */
	if (l->type_code && type == l->type_code &&
	    (field(r, bca, l->code_bytecode, &bca) || type_of(r, bca, &type)))
		return -1;
	if (type != l->type_bytecode_array ||
	    field(r, bca, l->bca_positions, &table) ||
	    type_of(r, table, &type) ||
	    (type != l->type_byte_array &&
	     (!l->type_trusted_byte_array || type != l->type_trusted_byte_array)) ||
	    field(r, table, 8, &len) || (len & 0xffffffff))
		return -1;
	len >>= 32;
	if (!len || len > V8_POS_TABLE_MAX)
		return -1;
	/* the frame's offset counts from the tagged array */
	if (have_off && off >= (uint32_t)l->bca_data - 1)
		target = off - (l->bca_data - 1);
	buf = malloc(len);
	if (!buf)
		return -1;
	pos = rd(r, table - 1 + l->fixed_data, buf, len) ? -1 :
		table_position(buf, len, target);
	free(buf);
	return pos;
}

/* Sources read to find a line: at most this many characters. */
#define V8_SOURCE_MAX (4u << 20)

/* The line of script offset pos: newlines before it in the source. */
static uint32_t source_line(const struct v8_reader *r, uint64_t script,
			    int64_t pos)
{
	uint64_t src;
	unsigned pieces = 0;
	size_t n = 0, i;
	uint32_t line = 1;
	char *buf;

	if (pos < 0 || pos >= V8_SOURCE_MAX ||
	    field(r, script, r->l->script_source, &src))
		return 0;
	buf = malloc((size_t)pos + 1);
	if (!buf)
		return 0;
	if (str_append(r, src, buf, &n, (size_t)pos, &pieces) || n < (size_t)pos)
		line = 0;
	for (i = 0; line && i < n; i++)
		line += buf[i] == '\n';
	free(buf);
	return line;
}

int v8_frame_name(interp_read_fn read, void *arg, pid_t pid,
		  const struct v8_layout *l, const struct interp_frame *f,
		  struct interp_symbol *out)
{
	const struct v8_reader r = { read, arg, pid, l };
	uint64_t fn = f->n_payload ? f->payload[0] : 0, sfi, name, script, sname;
	uint64_t bca;
	int64_t pos;
	uint16_t type;
	int err;

	out->name[0] = out->file[0] = 0;
	out->line = 0;
	err = field(&r, fn, l->fn_shared, &sfi);
	if (!err)
		err = type_of(&r, sfi, &type);
	if (err)
		return err;
	if (type != l->type_sfi)
		return -EINVAL;
	if (field(&r, sfi, l->sfi_name, &name) == 0 &&
	    type_of(&r, name, &type) == 0) {
		if (is_string(&r, type))
			read_str(&r, name, out->name, sizeof(out->name));
		else if (l->type_scope_info && type == l->type_scope_info)
			scope_info_name(&r, name, out->name, sizeof(out->name));
	}
	if (!out->name[0])
		snprintf(out->name, sizeof(out->name), "<anonymous>");
	if (field(&r, sfi, l->sfi_script, &script) || type_of(&r, script, &type) ||
	    type != l->type_script)
		return 0;
	if (field(&r, script, l->script_name, &sname) == 0)
		read_str(&r, sname, out->file, sizeof(out->file));
	/* the frame's own bytecode when it is interpreted, else the
	 * function's (its start) */
	pos = frame_position(&r, f->n_payload > 1 ? f->payload[1] : 0,
			     f->data & V8_F_BCOFF, (uint32_t)f->data);
	if (pos < 0 && field(&r, sfi, l->sfi_function_data, &bca) == 0)
		pos = frame_position(&r, bca, false, 0);
	out->line = source_line(&r, script, pos);
	return 0;
}

static int v8_symbolize(void *state, pid_t pid, const struct interp_frame *f,
			struct interp_symbol *out, unsigned max)
{
	struct v8_state *st = state;
	uint64_t idx;
	int err;

	(void)max; /* one function a frame: nothing inlined */
	if (!interp_procs_get(st->procs, pid, &idx) || idx >= st->n_layouts)
		return -ESRCH;
	err = v8_frame_name(interp_read_process, NULL, pid,
			     &st->layouts[idx], f, out);
	return err ? err : 1;
}

const struct interp_module interp_module_v8 = {
	.name = "v8",
	.kind = INTERP_V8,
	.on_by_default = true,
	INTERP_MODULE_METRICS(V8_METRICS),
	.map_name = "v8_procs",
	.map_key_size = sizeof(uint32_t),
	.map_val_size = sizeof(struct v8_proc),
	.init = v8_init,
	.fini = v8_fini,
	.detect = v8_detect,
	.record_size = sizeof(struct v8_info),
	.record_format = V8_INFO_FORMAT,
	.check = v8_check,
	.attach = v8_attach,
	.detach = v8_detach,
	.symbolize = v8_symbolize,
};

int v8_record_describe(const void *data, size_t len, struct v8_record *out)
{
	struct v8_info info;

	if (interp_record_check(&interp_module_v8, data, len))
		return -EINVAL;
	memcpy(&info, data, sizeof(info));
	*out = (struct v8_record){
		.major = info.major, .minor = info.minor, .build = info.build,
		.patch = info.patch, .blob_lo = info.blob_lo,
		.blob_hi = info.blob_hi, .off_fp_function = info.off_function,
		.off_fp_context = info.off_context,
		.off_fp_bytecode_array = info.off_bytecode_array,
		.off_fp_bytecode_offset = info.off_bytecode_offset,
		.layout = info.l, .missing = info.missing
	};
	return 0;
}
