// SPDX-License-Identifier: Apache-2.0
/*
 * Ruby's module (the walk: bpf/ruby.h).  Detection, per file (libruby, or
 * a ruby executable that has the VM linked in): rb_vm_exec from .dynsym,
 * the version from the ruby_version string, the way to the thread's
 * execution context (the TLS variable ruby_current_ec: the GOT slot the
 * dynamic linker fills with its module id or its offset from the thread
 * pointer, from the file's relocations; or the main thread's, through
 * ruby_current_vm_ptr), the structure offsets of that version, and the
 * VM's symbol table of IDs (ruby_global_symbols, not exported by Debian:
 * found in the code of rb_id2str, which reads it).  Names, per frame, from
 * the process: an iseq's label and file, its line from the pc through the
 * iseq's instruction table; a C function's method name (its ID) and the
 * C function's own name where the file's symbols have it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfmap.h"
#include "hashmap.h"
#include "interp.h"
#include "interp_ruby.h"
#include "log.h"
#include "ruby.h"
#include "symbols.h"

#define RUBY_INFO_FORMAT 2 /* 2: arm64's TLS (TLSDESC) */

/* What detection keeps (store record); ELF addresses. */
struct ruby_info {
	uint32_t format;
	uint8_t major, minor, patch, ec_mode;
	uint64_t ec_addr; /* per ec_mode: GOT slot, or the global */
	int64_t ec_off;
	uint64_t loop_lo, loop_hi; /* rb_vm_exec */
	uint64_t vm_ptr;	   /* ruby_current_vm_ptr, 0 if none */
	uint64_t global_symbols;   /* ruby_global_symbols, 0 if not found */
	uint32_t last_op_id;
	uint8_t id_shift, pad[3];
};
_Static_assert(sizeof(struct ruby_info) == 64, "ruby_info layout");

/*
 * Offsets per minor version.  3.1's are those of Ruby's own compiled
 * header for its JIT (rb_mjit_min_header-3.1.2.h, Debian's, checked with
 * offsetof) and of live processes (tests/unit/test_ruby_live.c).  The
 * others are computed from the structures of each version's headers as
 * rbspy's ruby-structs has them (bindgen output of Ruby's vm_core.h and
 * friends), by the C layout rules, which give 3.1's exactly; not run
 * here (Debian 12 ships 3.1 only).  What changes: the control frame (56
 * bytes without __bp__ or jit_return), the line table's entry (8 bytes
 * before node_id), first_lineno (an int from 3.2, which moves
 * insns_info), the method definition's original_id (2.7), where the main
 * thread's ec is, String's length (3.2+), how classes keep their path.
 */
#define RUBY_OFFSETS_COMMON                                                    \
	.iseq_body = 16, .body_encoded = 8, .body_path = 64, .body_label = 80, \
	.body_first_line = 88, .me_def = 16, .me_called_id = 24,               \
	.me_owner = 32, .def_func = 8
#define RUBY_INFO_120 /* insns_info after a VALUE first_lineno */              \
	.body_info = 120, .body_positions = 128, .body_info_size = 136,        \
	.body_succ = 144
#define RUBY_INFO_112 /* after an int first_lineno, 3.2+ */                    \
	.body_info = 112, .body_positions = 120, .body_info_size = 128,        \
	.body_succ = 136, .first_line_int = 1, .rstring_v32 = 1
#define RUBY_CLASSES_IVAR                                                      \
	.class_mode = RUBY_CLASS_IVAR, .class_ext = 24, .ext_iv_tbl = 8
#define RUBY_CLASSES_EXT                                                       \
	.class_mode = RUBY_CLASS_EXT, .class_ext = 32, .ext_classpath = 120,   \
	.ext_attached = 96

static const struct ruby_layout {
	uint8_t major, minor;
	uint16_t cfp_size;
	uint16_t vm_main_thread, th_ec; /* rb_vm_t, rb_thread_t */
	bool yjit; /* YJIT's entry frame as ruby.h says (3.1's C YJIT) */
	struct ruby_offsets o;
} layouts[] = {
	{ 2, 7, 56, 192, 32, false,
	  { RUBY_OFFSETS_COMMON, RUBY_INFO_120, RUBY_CLASSES_IVAR,
	    .info_entry_size = 8, .def_original_id = 24 } },
	{ 3, 0, 56, 40, 40, false,
	  { RUBY_OFFSETS_COMMON, RUBY_INFO_120, RUBY_CLASSES_IVAR,
	    .info_entry_size = 8, .def_original_id = 32 } },
	{ 3, 1, 64, 40, 40, true,
	  { RUBY_OFFSETS_COMMON, RUBY_INFO_120, RUBY_CLASSES_IVAR,
	    .info_entry_size = 12, .def_original_id = 32 } },
	{ 3, 2, 64, 40, 48, false,
	  { RUBY_OFFSETS_COMMON, RUBY_INFO_112, .info_entry_size = 12,
	    .def_original_id = 32 } },
	{ 3, 3, 56, 40, 48, false,
	  { RUBY_OFFSETS_COMMON, RUBY_INFO_112, RUBY_CLASSES_EXT,
	    .info_entry_size = 12, .def_original_id = 32 } },
	{ 3, 4, 56, 40, 48, false,
	  { RUBY_OFFSETS_COMMON, RUBY_INFO_112, RUBY_CLASSES_EXT,
	    .info_entry_size = 12, .def_original_id = 32 } },
};

const struct ruby_offsets ruby_offsets_3_1 = {
	RUBY_OFFSETS_COMMON, RUBY_INFO_120, RUBY_CLASSES_IVAR,
	.info_entry_size = 12, .def_original_id = 32, .id_shift = 4,
	.last_op_id = 0xa9,
};

/* rb_execution_context_t and rb_control_frame_t: the same 2.7 to 3.4 */
#define EC_VM_STACK 0
#define EC_VM_STACK_SIZE 8
#define EC_CFP 16
#define CFP_PC 0
#define CFP_ISEQ 16
#define CFP_EP 32

static const struct ruby_layout *layout_of(unsigned major, unsigned minor)
{
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

/* "3.1.2" at ruby_version. */
static int ruby_version(const struct elfm *e, uint64_t addr, unsigned v[3])
{
	const uint8_t *p;
	size_t avail;
	unsigned i = 0, k;

	if (elfm_vaddr_bytes(e, addr, 5, &p, &avail))
		return -ENOENT;
	memset(v, 0, 3 * sizeof(v[0]));
	for (k = 0; k < avail && k < 16 && p[k]; k++) {
		if (p[k] == '.') {
			if (++i > 2)
				break;
		} else if (p[k] >= '0' && p[k] <= '9') {
			v[i] = v[i] * 10 + (p[k] - '0');
			if (v[i] > 255)
				return -EPROTO;
		} else {
			return -EPROTO;
		}
	}
	return i >= 1 && v[0] >= 2 ? 0 : -EPROTO;
}

/*
 * The GOT slot of ruby_current_ec's TLS relocation.  x86-64:
 * R_X86_64_DTPMOD64 (general dynamic: the module id; the variable is at
 * its symbol value in the module's block) or R_X86_64_TPOFF64 (initial
 * exec: the offset from the thread pointer).  AArch64 has the same two
 * (R_AARCH64_TLS_DTPMOD64, R_AARCH64_TLS_TPREL64: a positive offset, the
 * TLS blocks being above the thread pointer) but its compilers use TLS
 * descriptors by default (R_AARCH64_TLSDESC: two words, the resolver and
 * its argument; Debian's libruby has only this one).  *off gets the
 * variable's offset in its module's block (symbol value + addend).
 * Returns the mode, or RUBY_EC_NONE.
 */
#define R_X86_DTPMOD64 16
#define R_X86_TPOFF64 18
#define R_A64_DTPMOD64 1028
#define R_A64_TPREL64 1030
#define R_A64_TLSDESC 1031
static unsigned tls_slot(const struct elfm *e, const char *name,
			 uint64_t *slot, int64_t *off)
{
	const Elf64_Shdr *sh, *dynsym = elfm_section(e, ".dynsym"), *strs;
	bool a64 = elfm_ehdr(e)->e_machine == EM_AARCH64;
	uint32_t dtpmod = a64 ? R_A64_DTPMOD64 : R_X86_DTPMOD64;
	uint32_t tpoff = a64 ? R_A64_TPREL64 : R_X86_TPOFF64;
	const uint8_t *sym, *str, *rel;
	size_t nsym, nstr, nrel, i;
	unsigned n, k, mode = RUBY_EC_NONE;
	uint64_t idx = 0, value = 0;

	sh = elfm_shdrs(e, &n);
	if (!dynsym || !sh || dynsym->sh_link >= n ||
	    elfm_section_bytes(e, dynsym, &sym, &nsym))
		return RUBY_EC_NONE;
	strs = &sh[dynsym->sh_link];
	if (elfm_section_bytes(e, strs, &str, &nstr))
		return RUBY_EC_NONE;
	for (i = 1; (i + 1) * sizeof(Elf64_Sym) <= nsym; i++) {
		Elf64_Sym s;

		memcpy(&s, sym + i * sizeof(s), sizeof(s));
		if (ELF64_ST_TYPE(s.st_info) == STT_TLS && s.st_name < nstr &&
		    !strncmp((const char *)str + s.st_name, name,
			     nstr - s.st_name) &&
		    s.st_shndx != SHN_UNDEF) {
			idx = i;
			value = s.st_value;
			break;
		}
	}
	if (!idx)
		return RUBY_EC_NONE;
	/* the linker puts TLSDESC relocations with the PLT's (glibc binds
	 * them at load time all the same) */
	for (k = 0; k < 2 && mode != RUBY_EC_DTV; k++) {
		sh = elfm_section(e, k ? ".rela.plt" : ".rela.dyn");
		if (!sh || elfm_section_bytes(e, sh, &rel, &nrel))
			continue;
		for (i = 0; (i + 1) * sizeof(Elf64_Rela) <= nrel; i++) {
			Elf64_Rela r;
			uint32_t type;

			memcpy(&r, rel + i * sizeof(r), sizeof(r));
			if (ELF64_R_SYM(r.r_info) != idx)
				continue;
			type = ELF64_R_TYPE(r.r_info);
			if (type == dtpmod) {
				/* DTPMOD64's addend is unused: the
				 * variable is at its symbol value */
				*off = (int64_t)value;
				*slot = r.r_offset;
				mode = RUBY_EC_DTV;
				break;
			}
			if (type == tpoff) {
				*slot = r.r_offset;
				mode = RUBY_EC_TPOFF;
			}
			if (a64 && type == R_A64_TLSDESC &&
			    mode == RUBY_EC_NONE) {
				*off = (int64_t)(value + (uint64_t)r.r_addend);
				*slot = r.r_offset;
				mode = RUBY_EC_TLSDESC;
			}
		}
	}
	return mode;
}

/* A TLS variable of the executable itself (module 1), 0 when the file is
 * not an executable (a library's TLS is reached through a relocation) or
 * has no PT_TLS.  Variant II (x86-64): at the thread pointer minus the
 * TLS segment's size rounded up to its alignment, plus its value.
 * Variant I (AArch64): above the thread pointer, past the 16-byte TCB
 * rounded up to the segment's alignment. */
static int64_t exe_tls_off(const struct elfm *e, uint64_t value)
{
	const Elf64_Ehdr *eh = elfm_ehdr(e);
	const Elf64_Phdr *ph;
	bool exe = eh && eh->e_type == ET_EXEC;
	bool a64 = eh && eh->e_machine == EM_AARCH64;
	unsigned n, i;

	ph = elfm_phdrs(e, &n);
	for (i = 0; ph && i < n; i++)
		exe |= ph[i].p_type == PT_INTERP; /* a PIE */
	for (i = 0; exe && ph && i < n; i++) {
		uint64_t a = ph[i].p_align ? ph[i].p_align : 1, sz;

		if (ph[i].p_type != PT_TLS)
			continue;
		if (a64)
			return (int64_t)((16 + a - 1) / a * a + value);
		sz = (ph[i].p_memsz + a - 1) / a * a;
		return (int64_t)value - (int64_t)sz;
	}
	return 0;
}

/*
 * rb_id2str(id) turns an ID into its serial (id >> RUBY_ID_SCOPE_SHIFT
 * above tLAST_OP_ID) and jumps to the function that reads
 * ruby_global_symbols: "cmp %eN, last_id(%rip)" then "mov ids(%rip), %rN"
 * (ids 16 bytes further).  Both read from the code; 0 when not of this
 * form.
 */
static uint64_t global_symbols_of(const struct elfm *e, uint64_t fn,
				  uint8_t *shift, uint32_t *last_op)
{
	uint64_t cmp[8], mov[8], target = 0;
	const uint8_t *c;
	unsigned nc = 0, nm = 0, i, j;
	size_t avail;
	int32_t rel;

	if (elfm_vaddr_bytes(e, fn, 32, &c, &avail))
		return 0;
	for (i = 0; i + 7 <= 32; i++) {
		if (c[i] == 0x48 && c[i + 1] == 0xc1 && c[i + 2] == 0xe8)
			*shift = c[i + 3];
		else if (c[i] == 0x48 && c[i + 1] == 0x81 && c[i + 2] == 0xff)
			memcpy(last_op, c + i + 3, 4);
		else if ((c[i] == 0xe9 || c[i] == 0xe8) && !target &&
			 *shift && *last_op) {
			memcpy(&rel, c + i + 1, 4);
			target = fn + i + 5 + (int64_t)rel;
		}
	}
	if (!target || !*shift || *shift > 16 ||
	    elfm_vaddr_bytes(e, target, 128, &c, &avail))
		return 0;
	for (i = 0; i + 7 <= 128; i++) {
		if ((c[i + 1] & 0xc7) != 0x05)
			continue;
		memcpy(&rel, c + i + 2, 4);
		if (c[i] == 0x39 && nc < 8)
			cmp[nc++] = target + i + 6 + (int64_t)rel;
		else if (c[i] == 0x8b && i > 0 && (c[i - 1] & 0xf8) == 0x48 &&
			 nm < 8)
			mov[nm++] = target + i + 6 + (int64_t)rel;
	}
	for (i = 0; i < nc; i++)
		for (j = 0; j < nm; j++)
			if (mov[j] == cmp[i] + 16)
				return cmp[i];
	return 0;
}

/*
 * The same on aarch64: rb_id2str is "cmp x0, #L; lsr xN, x0, #S; ...; b
 * T", and at T "adrp xD, P; ldr wM, [xD, #O]; cmp wK, wM" reads last_id
 * at P + O, and "add xA, xD, #O; ... ldr xB, [xA, #16]" the ids after it.
 */
static int64_t a64_sext(uint64_t v, unsigned bits)
{
	return (int64_t)(v << (64 - bits)) >> (64 - bits);
}

static uint64_t global_symbols_of_a64(const struct elfm *e, uint64_t fn,
				      uint8_t *shift, uint32_t *last_op)
{
	uint64_t target = 0, page[32] = { 0 }, cand = 0;
	uint32_t in[32];
	const uint8_t *c;
	unsigned i, j;
	size_t avail;

	if (elfm_vaddr_bytes(e, fn, 32, &c, &avail))
		return 0;
	memcpy(in, c, 32);
	for (i = 0; i < 8; i++) {
		if ((in[i] & 0xffc0fc00) == 0xd340fc00) /* lsr xN, xM, #S */
			*shift = (in[i] >> 16) & 0x3f;
		else if ((in[i] & 0xffc0001f) == 0xf100001f) /* cmp xN, #L */
			*last_op = (in[i] >> 10) & 0xfff;
		else if ((in[i] & 0xfc000000) == 0x14000000 && *shift &&
			 *last_op) /* b T */
			target = fn + i * 4 + (uint64_t)(a64_sext(in[i] & 0x3ffffff, 26) * 4);
	}
	if (!target || !*shift || *shift > 16 ||
	    elfm_vaddr_bytes(e, target, 128, &c, &avail))
		return 0;
	memcpy(in, c, 128);
	for (i = 0; i < 32; i++) {
		uint32_t x = in[i], d = x & 31, n = (x >> 5) & 31;

		if ((x & 0x9f000000) == 0x90000000) { /* adrp xD, P */
			page[d] = ((target + i * 4) & ~0xfffull) +
				  (uint64_t)(a64_sext(((x >> 5) & 0x7ffff) << 2 |
							      ((x >> 29) & 3), 21) << 12);
		} else if ((x & 0xffc00000) == 0xb9400000 && page[n] &&
			   i + 1 < 32 && (in[i + 1] & 0xff20001f) == 0x6b00001f &&
			   ((in[i + 1] >> 16) & 31) == d && !cand) {
			/* ldr wM, [xD, #O]; cmp wK, wM */
			cand = page[n] + ((x >> 10) & 0xfff) * 4;
		} else if ((x & 0xffc00000) == 0x91000000 && cand && page[n] &&
			   page[n] + ((x >> 10) & 0xfff) == cand) {
			/* add xA, xD, #O; then ldr xB, [xA, #16] */
			for (j = i + 1; j < 32 && j < i + 4; j++)
				if (in[j] == (0xf9400800 | (d << 5) | (in[j] & 31)))
					return cand;
		}
	}
	return 0;
}

static int ruby_detect(void *state, const char *path, int fd, void **data,
		       size_t *len)
{
	static const char *const names[] = {
		"rb_vm_exec", "ruby_version", "ruby_current_ec",
		"ruby_current_vm_ptr", "rb_id2str",
		"ruby_current_execution_context_ptr",
	};
	uint64_t value[6] = { 0 }, size[6] = { 0 }, slot = 0;
	const struct ruby_layout *l;
	struct ruby_info *info;
	unsigned v[3], mode;
	int64_t off = 0;
	struct elfm *e;
	bool tls;
	int err;

	(void)state;
	(void)path;
	err = elfm_open_fd(fd, &e);
	if (err)
		return err;
	elfm_find_syms(e, names, 6, value, size);
	err = -ENOENT;
	if (!size[0] || !size[1])
		goto out; /* no Ruby VM */
	err = ruby_version(e, value[1], v);
	if (err)
		goto out;
	err = -ENOTSUP;
	l = layout_of(v[0], v[1]);
	if (!l)
		goto out;
	/* the thread pointer and the TLS layouts are known for these two */
	tls = elfm_ehdr(e)->e_machine == EM_X86_64 ||
	      elfm_ehdr(e)->e_machine == EM_AARCH64;
	mode = size[2] && tls ? tls_slot(e, "ruby_current_ec", &slot, &off) :
				RUBY_EC_NONE;
	info = calloc(1, sizeof(*info));
	err = -ENOMEM;
	if (!info)
		goto out;
	*info = (struct ruby_info){ .format = RUBY_INFO_FORMAT, .major = v[0],
				    .minor = v[1], .patch = v[2],
				    .ec_mode = mode, .ec_addr = slot,
				    .loop_lo = value[0],
				    .loop_hi = value[0] + size[0],
				    .vm_ptr = size[3] ? value[3] : 0 };
	if (mode == RUBY_EC_DTV || mode == RUBY_EC_TLSDESC)
		info->ec_off = off;
	if (mode == RUBY_EC_NONE && size[2] && tls) {
		/* the executable's own TLS (a static ruby) */
		info->ec_off = exe_tls_off(e, value[2]);
		if (info->ec_off)
			info->ec_mode = RUBY_EC_STATIC;
	}
	if (mode == RUBY_EC_NONE && size[5]) {
		info->ec_mode = RUBY_EC_GLOBAL;
		info->ec_addr = value[5];
	}
	if (size[4] && elfm_ehdr(e)->e_machine == EM_AARCH64)
		info->global_symbols = global_symbols_of_a64(e, value[4],
							     &info->id_shift,
							     &info->last_op_id);
	else if (size[4])
		info->global_symbols = global_symbols_of(e, value[4],
							 &info->id_shift,
							 &info->last_op_id);
	*data = info;
	*len = sizeof(*info);
	err = 0;
out:
	elfm_free(e);
	return err;
}

static int ruby_check(const void *record)
{
	const struct ruby_info *info = record;

	if (info->loop_hi <= info->loop_lo ||
	    !layout_of(info->major, info->minor) ||
	    info->ec_mode > RUBY_EC_TLSDESC)
		return -EINVAL;
	return 0;
}

/* ---- module state: processes and the files' symbols ---------------------- */

/*
 * Per process one word: the file slot (bits 56..63) and libruby's load
 * bias.  Per file (up to RUBY_FILES_MAX, kept until the module ends):
 * its record and its symbols, for the names of C functions.
 */
#define RUBY_FILES_MAX 16
struct ruby_file {
	struct ruby_info info;
	struct symb_table *syms;
	bool used;
};

struct ruby_state {
	void *procs; /* interp_procs_*: pid -> file slot and bias */
	void *ids;   /* interp_procs_*: pid -> the class-naming IDs, once
		      * looked up (classpath << 32 | attached; 0: not found) */
	struct ruby_file files[RUBY_FILES_MAX];
};

static int ruby_init(void **state)
{
	struct ruby_state *rs = calloc(1, sizeof(*rs));
	int err;

	if (!rs)
		return -ENOMEM;
	err = interp_procs_init(&rs->procs);
	if (!err) {
		err = interp_procs_init(&rs->ids);
		if (err)
			interp_procs_fini(rs->procs);
	}
	if (err) {
		free(rs);
		return err;
	}
	*state = rs;
	return 0;
}

static void ruby_fini(void *state)
{
	struct ruby_state *rs = state;
	unsigned i;

	if (!rs)
		return;
	for (i = 0; i < RUBY_FILES_MAX; i++)
		symb_free(rs->files[i].syms);
	interp_procs_fini(rs->procs);
	interp_procs_fini(rs->ids);
	free(rs);
}

static void ruby_detach(void *state, pid_t pid)
{
	struct ruby_state *rs = state;

	interp_procs_detach(rs->procs, pid);
	interp_procs_detach(rs->ids, pid);
}

/* The slot of a file's record (the same record: the same build), -ENOSPC
 * when all are taken by others. */
static int file_slot(struct ruby_state *rs, const struct ruby_info *info,
		     const struct pm_mapping *map)
{
	unsigned i;

	for (i = 0; i < RUBY_FILES_MAX; i++)
		if (rs->files[i].used &&
		    !memcmp(&rs->files[i].info, info, sizeof(*info)))
			return (int)i;
	for (i = 0; i < RUBY_FILES_MAX; i++) {
		struct ruby_file *f = &rs->files[i];

		if (f->used)
			continue;
		f->info = *info;
		f->used = true;
		if (map && map->file && symb_load_fd(exe_fd(map->file), &f->syms))
			f->syms = NULL;
		return (int)i;
	}
	return -ENOSPC;
}

static int ruby_attach(void *state, struct interp_mgr *im,
		       const struct interp_attach *a)
{
	struct ruby_state *rs = state;
	const struct ruby_info *info = a->files[0].data;
	const struct ruby_layout *l = layout_of(info->major, info->minor);
	uint64_t bias = a->files[0].bias;
	uint32_t key = (uint32_t)a->pid;
	struct ruby_proc rp = {
		.ec_mode = info->ec_mode,
		.ec_off = info->ec_off,
		.vm_ptr = info->vm_ptr ? info->vm_ptr + bias : 0,
		.loop_lo = info->loop_lo + bias,
		.loop_hi = info->loop_hi + bias,
		.ec_vm_stack = EC_VM_STACK,
		.ec_vm_stack_size = EC_VM_STACK_SIZE,
		.ec_cfp = EC_CFP,
		.cfp_size = l->cfp_size,
		.cfp_pc = CFP_PC,
		.cfp_iseq = CFP_ISEQ,
		.cfp_ep = CFP_EP,
		.vm_main_thread = l->vm_main_thread,
		.th_ec = l->th_ec,
		.yjit = l->yjit,
	};
	int slot, err;

	if (a->files[0].map) {
		rp.text_lo = a->files[0].map->start;
		rp.text_hi = a->files[0].map->end;
	}
	if (info->ec_mode == RUBY_EC_DTV || info->ec_mode == RUBY_EC_TPOFF ||
	    info->ec_mode == RUBY_EC_TLSDESC || info->ec_mode == RUBY_EC_GLOBAL)
		rp.ec_addr = info->ec_addr + bias;
	if (bias >> 56)
		return -ERANGE;
	slot = file_slot(rs, info, a->files[0].map);
	if (slot < 0)
		return slot;
	err = interp_procs_put(rs->procs, a->pid, (uint64_t)slot << 56 | bias);
	if (err)
		return err;
	err = interp_map_update(im, INTERP_RUBY, &key, &rp);
	if (err) {
		log_warn_once("ruby_procs map is full: Ruby frames of new processes are not unwound");
		interp_procs_detach(rs->procs, a->pid);
	}
	return err;
}

/* ---- names ---------------------------------------------------------------- */

/* RBasic.flags: the type, and the user flags these layouts use */
#define T_MASK 0x1f
#define T_STRING 0x05
#define T_ARRAY 0x07
#define FL_USER1 (1ull << 13)
#define RSTRING_EMBED_SHIFT 14 /* before 3.2: the length in the flags */
#define RSTRING_EMBED_MASK 0x1f
#define RARRAY_EMBED_SHIFT 15
#define RARRAY_EMBED_MASK 0x7f

/* A String's text into out (cut at n - 1 bytes).  0, or an error. */
static int read_rstring(const struct interp_reader *r,
			const struct ruby_offsets *o, uint64_t str, char *out,
			size_t n)
{
	uint64_t flags = interp_rd64(r, str), len, ptr;
	int err;

	out[0] = 0;
	if (!str || (str & 7) || (flags & T_MASK) != T_STRING)
		return -EINVAL;
	if (o->rstring_v32) {
		len = interp_rd64(r, str + 16);
		ptr = flags & FL_USER1 ? interp_rd64(r, str + 24) : str + 24;
	} else if (flags & FL_USER1) {
		len = interp_rd64(r, str + 16);
		ptr = interp_rd64(r, str + 24);
	} else {
		len = (flags >> RSTRING_EMBED_SHIFT) & RSTRING_EMBED_MASK;
		ptr = str + 16;
	}
	if (len > (1u << 20))
		return -EINVAL;
	if (len >= n)
		len = n - 1;
	err = len ? interp_rd(r, ptr, out, len) : 0;
	if (err)
		return err;
	out[len] = 0;
	return strlen(out) == len ? 0 : -EINVAL;
}

/* Element i of an Array, 0 when out of it or unreadable. */
static uint64_t rarray_at(const struct interp_reader *r, uint64_t ary,
			  uint64_t i)
{
	uint64_t flags = interp_rd64(r, ary);

	if (!ary || (ary & 7) || (flags & T_MASK) != T_ARRAY)
		return 0;
	if (flags & FL_USER1) {
		if (i >= ((flags >> RARRAY_EMBED_SHIFT) & RARRAY_EMBED_MASK))
			return 0;
		return interp_rd64(r, ary + 16 + 8 * i);
	}
	if (i >= interp_rd64(r, ary + 16))
		return 0;
	return interp_rd64(r, interp_rd64(r, ary + 32) + 8 * i);
}

/* The name of an ID, through ruby_global_symbols (last_id: u32 at 0; ids
 * at 16: an Array of Arrays of ID_ENTRY_UNIT (str, sym) pairs). */
#define ID_ENTRY_UNIT 512
static int id_name(const struct interp_reader *r, const struct ruby_offsets *o,
		   uint64_t gs, uint64_t id, char *out, size_t n)
{
	uint64_t serial, ids, chunk;
	uint32_t last = 0;

	out[0] = 0;
	if (!gs || !id || !o->id_shift)
		return -ENOENT;
	serial = id > o->last_op_id ? id >> o->id_shift : id;
	if (interp_rd(r, gs, &last, 4) || !serial || serial > last)
		return -ENOENT;
	ids = interp_rd64(r, gs + 16);
	chunk = rarray_at(r, ids, serial / ID_ENTRY_UNIT);
	return read_rstring(r, o, rarray_at(r, chunk,
					    (serial % ID_ENTRY_UNIT) * 2),
			    out, n);
}

/* Bits of the succinct index table (iseq.c, VM_INSN_INFO_TABLE_IMPL 2):
 * the rank of the first 54 positions in 7-bit fields of six words, then
 * blocks of 512 bits, each a rank, seven 9-bit ranks of its 64-bit words
 * and the words. */
#define SUCC_IMM 54
#define SUCC_BLOCK_BITS 512
#define SUCC_BLOCK_SIZE 80 /* rank (4, padded), small ranks (8), bits (64) */
static int succ_rank(const struct interp_reader *r, uint64_t sd, uint64_t x,
		     uint32_t *rank)
{
	uint64_t imm, blk, word, small, bits;
	uint32_t base = 0, i, b;

	if (x < SUCC_IMM) {
		if (interp_rd(r, sd + 8 * (x / 9), &imm, 8))
			return -EFAULT;
		*rank = (uint32_t)(imm >> (7 * (x % 9))) & 0x7f;
		return 0;
	}
	x -= SUCC_IMM;
	blk = sd + 8 * (SUCC_IMM / 9) + SUCC_BLOCK_SIZE * (x / SUCC_BLOCK_BITS);
	b = x % SUCC_BLOCK_BITS;
	i = b / 64;
	if (interp_rd(r, blk, &base, 4) || interp_rd(r, blk + 8, &small, 8) ||
	    interp_rd(r, blk + 16 + 8 * i, &word, 8))
		return -EFAULT;
	bits = word << (63 - b % 64);
	*rank = base + (i ? (uint32_t)(small >> (9 * (i - 1))) & 0x1ff : 0) +
		(uint32_t)__builtin_popcountll(bits);
	return 0;
}

uint32_t ruby_iseq_line(interp_read_fn read, void *arg, pid_t pid,
			const struct ruby_offsets *o, uint64_t iseq, uint64_t pc)
{
	const struct interp_reader r = { read, arg, pid };
	uint64_t body = interp_rd64(&r, iseq + o->iseq_body);
	uint64_t enc, pos, info, succ, positions, first;
	uint32_t size = 0, idx = 0, p, line = 0;
	int32_t l;

	if (!body)
		return 0;
	enc = interp_rd64(&r, body + o->body_encoded);
	info = interp_rd64(&r, body + o->body_info);
	positions = interp_rd64(&r, body + o->body_positions);
	succ = interp_rd64(&r, body + o->body_succ);
	if (interp_rd(&r, body + o->body_info_size, &size, 4) || !info ||
	    !size || size > (1u << 24))
		goto first;
	/* the pc is past the instruction that runs (it points at the next
	 * one once the instruction started): the position before it */
	pos = pc > enc ? (pc - enc) / 8 : 0;
	if (pos)
		pos--;
	if (size == 1) {
		idx = 0;
	} else if (positions) {
		/* the last entry at or before pos (few: a linear walk) */
		for (idx = 0; idx + 1 < size && idx < 4096; idx++)
			if (interp_rd(&r, positions + 4 * (idx + 1), &p, 4) ||
			    p > pos)
				break;
	} else if (succ && pos < (1u << 24)) {
		if (succ_rank(&r, succ, pos, &idx) || !idx || idx > size)
			goto first;
		idx--;
	} else {
		goto first;
	}
	if (interp_rd(&r, info + (uint64_t)idx * o->info_entry_size, &l, 4) ||
	    l <= 0)
		goto first;
	return (uint32_t)l;
first:
	/* the iseq's first line: a Fixnum, or an int from 3.2 */
	first = interp_rd64(&r, body + o->body_first_line);
	l = o->first_line_int ? (int32_t)(uint32_t)first :
				(int32_t)(first >> 1);
	line = l > 0 ? (uint32_t)l : 0;
	return line;
}

/* Where a class keeps its instance variables (3.1: classext->iv_tbl, an
 * st_table of entries {hash, key, record}) and the two it is named by. */
#define T_CLASS 0x02
#define T_MODULE 0x03
#define T_IMEMO 0x1a
#define T_ICLASS 0x1c
#define FL_SINGLETON (1ull << 12)
#define IMEMO_MENT 6
#define ST_ENTRIES_MAX 64
static uint64_t class_ivar(const struct interp_reader *r,
			   const struct ruby_offsets *o, uint64_t klass,
			   uint64_t id)
{
	uint64_t ext = interp_rd64(r, klass + o->class_ext);
	uint64_t tbl, start, bound, i;
	uint64_t ent[3 * ST_ENTRIES_MAX];

	tbl = ext ? interp_rd64(r, ext + o->ext_iv_tbl) : 0;
	if (!tbl || !id)
		return 0;
	start = interp_rd64(r, tbl + 32);
	bound = interp_rd64(r, tbl + 40);
	if (bound <= start || bound - start > ST_ENTRIES_MAX ||
	    interp_rd(r, interp_rd64(r, tbl + 48) + 24 * start, ent,
		      24 * (bound - start)))
		return 0;
	for (i = 0; i < bound - start; i++)
		if (ent[3 * i + 1] == id)
			return ent[3 * i + 2];
	return 0;
}

/* A class's path or (a singleton class's) attached object, as the
 * version keeps them; 0 when unknown. */
static uint64_t class_var(const struct interp_reader *r,
			  const struct ruby_offsets *o,
			  const struct ruby_namer *nm, uint64_t klass,
			  bool attached)
{
	switch (o->class_mode) {
	case RUBY_CLASS_IVAR:
		return class_ivar(r, o, klass,
				  attached ? nm->attached_id : nm->classpath_id);
	case RUBY_CLASS_EXT:
		return interp_rd64(r, klass + o->class_ext +
					      (attached ? o->ext_attached :
							  o->ext_classpath));
	}
	return 0;
}

/* A class's or module's path ("Foo::Bar") into out; a singleton class
 * gives its object's (a class's) path and *singleton.  0 or an error. */
static int class_path(const struct interp_reader *r,
		      const struct ruby_offsets *o, const struct ruby_namer *nm,
		      uint64_t klass, char *out, size_t n, bool *singleton)
{
	uint64_t flags = interp_rd64(r, klass);

	out[0] = 0;
	if ((flags & T_MASK) == T_ICLASS) {
		/* a module's proxy in an ancestry: RBasic.klass is it */
		klass = interp_rd64(r, klass + 8);
		flags = interp_rd64(r, klass);
	}
	if ((flags & T_MASK) != T_CLASS && (flags & T_MASK) != T_MODULE)
		return -EINVAL;
	if (flags & FL_SINGLETON) {
		klass = class_var(r, o, nm, klass, true);
		flags = interp_rd64(r, klass);
		if ((flags & T_MASK) != T_CLASS && (flags & T_MASK) != T_MODULE)
			return -EINVAL;
		*singleton = true;
	}
	return read_rstring(r, o, class_var(r, o, nm, klass, false), out, n);
}

/* The class part of a method's name from its method entry (an imemo
 * ment; anything else gives ""): "Foo#" or "Foo." into out. */
static void method_class(const struct interp_reader *r,
			 const struct ruby_offsets *o,
			 const struct ruby_namer *nm, uint64_t me, char *out,
			 size_t n)
{
	uint64_t flags = me ? interp_rd64(r, me) : 0;
	bool singleton = false;
	char path[94];

	out[0] = 0;
	if (!nm || o->class_mode == RUBY_CLASS_NONE ||
	    (o->class_mode == RUBY_CLASS_IVAR && !nm->classpath_id) ||
	    (flags & T_MASK) != T_IMEMO ||
	    ((flags >> 12) & 0xf) != IMEMO_MENT ||
	    class_path(r, o, nm, interp_rd64(r, me + o->me_owner), path,
		       sizeof(path), &singleton) ||
	    !path[0])
		return;
	snprintf(out, n, "%s%c", path, singleton ? '.' : '#');
}

int ruby_frame_name(interp_read_fn read, void *arg, pid_t pid,
		    const struct ruby_offsets *o, const struct ruby_namer *nm,
		    const struct interp_frame *f, struct interp_symbol *out)
{
	const struct interp_reader r = { read, arg, pid };
	uint64_t obj = f->n_payload ? f->payload[0] : 0, body, path, def;
	uint64_t id;
	const char *cname = NULL, *in;
	char mname[128], cls[96], label[160];

	out->name[0] = out->file[0] = 0;
	out->line = 0;
	if (!obj)
		return -EINVAL;
	if (RUBY_FRAME_KIND(f->data) == RUBY_FRAME_CFUNC) {
		def = interp_rd64(&r, obj + o->me_def);
		if (!def)
			return -EFAULT;
		out->address = interp_rd64(&r, def + o->def_func);
		id = interp_rd64(&r, def + o->def_original_id);
		if (!id)
			id = interp_rd64(&r, obj + o->me_called_id);
		if (!nm || id_name(&r, o, nm->global_symbols, id, mname,
				   sizeof(mname)))
			mname[0] = 0;
		if (nm && nm->cfunc && out->address)
			cname = nm->cfunc(nm->cfunc_arg, out->address);
		method_class(&r, o, nm, obj, cls, sizeof(cls));
		if (mname[0] && cname)
			snprintf(out->name, sizeof(out->name), "%s%s [%s]", cls,
				 mname, cname);
		else if (mname[0])
			snprintf(out->name, sizeof(out->name), "%s%s", cls, mname);
		else
			snprintf(out->name, sizeof(out->name), "%s",
				 cname ? cname : "<unknown cfunc>");
		return 0;
	}
	if (RUBY_FRAME_KIND(f->data) != RUBY_FRAME_ISEQ)
		return -EINVAL;
	body = interp_rd64(&r, obj + o->iseq_body);
	if (!body)
		return -EFAULT;
	out->address = f->n_payload > 1 ? f->payload[1] : 0;
	if (read_rstring(&r, o, interp_rd64(&r, body + o->body_label), label,
			 sizeof(label)))
		snprintf(label, sizeof(label), "<unknown>");
	/* "Foo#m", "block in Foo#m": the class before the method's label */
	method_class(&r, o, nm, RUBY_FRAME_ME(f->data), cls, sizeof(cls));
	in = strncmp(label, "block ", 6) ? NULL : strstr(label, " in ");
	if (cls[0] && in)
		snprintf(out->name, sizeof(out->name), "%.*s in %s%s",
			 (int)(in - label), label, cls, in + 4);
	else if (cls[0] && label[0] != '<')
		snprintf(out->name, sizeof(out->name), "%s%s", cls, label);
	else
		snprintf(out->name, sizeof(out->name), "%s", label);
	path = interp_rd64(&r, body + o->body_path);
	if (path && (interp_rd64(&r, path) & T_MASK) == T_ARRAY)
		path = rarray_at(&r, path, 0);
	read_rstring(&r, o, path, out->file, sizeof(out->file));
	out->line = ruby_iseq_line(read, arg, pid, o, obj, out->address);
	return 0;
}

/* The IDs classes are named by ("__classpath__", "__attached__"): the
 * VM interns them as it boots, among its first few hundred IDs; looked
 * up by their text in the ID table.  0 or -ENOENT. */
#define RUBY_IDS_SEARCHED 2048
int ruby_find_class_ids(interp_read_fn read, void *arg, pid_t pid,
			const struct ruby_offsets *o, uint64_t gs,
			uint64_t *classpath, uint64_t *attached)
{
	const struct interp_reader r = { read, arg, pid };
	uint64_t ids, chunk = 0, serial, sym;
	uint32_t last = 0;
	char text[32];

	*classpath = *attached = 0;
	if (!gs || interp_rd(&r, gs, &last, 4))
		return -ENOENT;
	ids = interp_rd64(&r, gs + 16);
	for (serial = 1; serial <= last && serial < RUBY_IDS_SEARCHED; serial++) {
		if (serial == 1 || serial % ID_ENTRY_UNIT == 0)
			chunk = rarray_at(&r, ids, serial / ID_ENTRY_UNIT);
		sym = rarray_at(&r, chunk, (serial % ID_ENTRY_UNIT) * 2 + 1);
		/* a static Symbol: its ID above the flag byte */
		if ((sym & 0xff) != 0x0c ||
		    read_rstring(&r, o, rarray_at(&r, chunk,
						  (serial % ID_ENTRY_UNIT) * 2),
				 text, sizeof(text)))
			continue;
		if (!strcmp(text, "__classpath__"))
			*classpath = sym >> 8;
		else if (!strcmp(text, "__attached__"))
			*attached = sym >> 8;
		if (*classpath && *attached)
			return 0;
	}
	return *classpath ? 0 : -ENOENT;
}

/* The C function at a process address, by the file's own symbols: only
 * an exact match (a function's start) names it. */
struct cfunc_namer {
	struct symb_table *syms;
	uint64_t bias;
};

static const char *cfunc_name(void *arg, uint64_t func)
{
	struct cfunc_namer *c = arg;
	const char *name;
	uint64_t off = 1;

	if (!c->syms || func < c->bias)
		return NULL;
	name = symb_lookup(c->syms, func - c->bias, &off);
	return name && !off ? name : NULL;
}

static void offsets_for(const struct ruby_info *info, struct ruby_offsets *o)
{
	const struct ruby_layout *l = layout_of(info->major, info->minor);

	*o = l->o;
	o->id_shift = info->id_shift;
	o->last_op_id = info->last_op_id;
}

static int ruby_symbolize(void *state, pid_t pid, const struct interp_frame *f,
			  struct interp_symbol *out, unsigned max)
{
	struct ruby_state *rs = state;
	struct ruby_offsets o;
	struct ruby_namer nm;
	struct cfunc_namer cn;
	struct ruby_file *file;
	uint64_t word;
	int err;

	(void)max; /* one function a frame: nothing inlined */
	if (!interp_procs_get(rs->procs, pid, &word) ||
	    (word >> 56) >= RUBY_FILES_MAX)
		return -ESRCH;
	file = &rs->files[word >> 56];
	offsets_for(&file->info, &o);
	cn = (struct cfunc_namer){ file->syms, word & ((1ull << 56) - 1) };
	nm = (struct ruby_namer){
		.global_symbols = file->info.global_symbols ?
					  file->info.global_symbols + cn.bias : 0,
		.cfunc = cfunc_name,
		.cfunc_arg = &cn,
	};
	if (o.class_mode != RUBY_CLASS_IVAR) {
		/* no IDs to look up */
	} else if (!interp_procs_get(rs->ids, pid, &word)) {
		/* once per process (a few hundred small reads) */
		if (ruby_find_class_ids(interp_read_process, NULL, pid, &o,
					nm.global_symbols, &nm.classpath_id,
					&nm.attached_id) ||
		    nm.classpath_id >> 32 || nm.attached_id >> 32)
			nm.classpath_id = nm.attached_id = 0;
		/* full: looked up again next time */
		interp_procs_put(rs->ids, pid,
				 nm.classpath_id << 32 | nm.attached_id);
	} else {
		nm.classpath_id = word >> 32;
		nm.attached_id = word & 0xffffffff;
	}
	err = ruby_frame_name(interp_read_process, NULL, pid, &o, &nm, f, out);
	return err ? err : 1;
}

const struct interp_module interp_module_ruby = {
	.name = "ruby",
	.kind = INTERP_RUBY,
	.on_by_default = true,
	INTERP_MODULE_METRICS(RUBY_METRICS),
	.map_name = "ruby_procs",
	.map_key_size = sizeof(uint32_t),
	.map_val_size = sizeof(struct ruby_proc),
	.init = ruby_init,
	.fini = ruby_fini,
	.detect = ruby_detect,
	.record_size = sizeof(struct ruby_info),
	.record_format = RUBY_INFO_FORMAT,
	.check = ruby_check,
	.attach = ruby_attach,
	.detach = ruby_detach,
	.symbolize = ruby_symbolize,
};

int ruby_record_describe(const void *data, size_t len, struct ruby_record *out)
{
	struct ruby_info info;

	if (interp_record_check(&interp_module_ruby, data, len))
		return -EINVAL;
	memcpy(&info, data, sizeof(info));
	*out = (struct ruby_record){ .major = info.major, .minor = info.minor,
				     .patch = info.patch,
				     .ec_mode = info.ec_mode,
				     .ec_addr = info.ec_addr,
				     .ec_off = info.ec_off,
				     .loop_lo = info.loop_lo,
				     .loop_hi = info.loop_hi,
				     .vm_ptr = info.vm_ptr,
				     .global_symbols = info.global_symbols,
				     .id_shift = info.id_shift,
				     .last_op_id = info.last_op_id };
	return 0;
}
