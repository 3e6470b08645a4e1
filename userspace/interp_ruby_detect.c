// SPDX-License-Identifier: Apache-2.0
/*
 * Ruby's detection, per file (libruby, or a ruby executable that has the
 * VM linked in): rb_vm_exec from .dynsym, the version from the
 * ruby_version string, the way to the thread's execution context (the TLS
 * variable ruby_current_ec: the GOT slot the dynamic linker fills with
 * its module id, its offset from the thread pointer or a TLS descriptor,
 * from the file's relocations; or the main thread's, through
 * ruby_current_vm_ptr), and the VM's symbol table of IDs
 * (ruby_global_symbols, not exported by Debian: found in the code of
 * rb_id2str, which reads it, x86-64's or aarch64's).  And the structure
 * offsets of each version the module knows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elfmap.h"
#include "interp_ruby_int.h"
#include "ruby.h"

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

static const struct ruby_layout layouts[] = {
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

_Static_assert(offsetof(struct ruby_layout, major) == 0 &&
		       offsetof(struct ruby_layout, minor) == 1,
	       "a row starts with struct interp_version_key");

const struct ruby_layout *ruby_layout_of(unsigned major, unsigned minor)
{
	return INTERP_VERSION_ROW(layouts, major, minor);
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

int ruby_detect(void *state, const struct interp_file *file, void **data,
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
	const struct elfm *e = file->elf;
	int64_t off = 0;
	bool tls;
	int err;

	(void)state;
	elfm_find_syms(e, names, 6, value, size);
	if (!size[0] || !size[1])
		return -ENOENT; /* no Ruby VM */
	err = ruby_version(e, value[1], v);
	if (err)
		return err;
	l = ruby_layout_of(v[0], v[1]);
	if (!l)
		return -ENOTSUP;
	/* the thread pointer and the TLS layouts are known for these two */
	tls = elfm_ehdr(e)->e_machine == EM_X86_64 ||
	      elfm_ehdr(e)->e_machine == EM_AARCH64;
	mode = size[2] && tls ? tls_slot(e, "ruby_current_ec", &slot, &off) :
				RUBY_EC_NONE;
	info = calloc(1, sizeof(*info));
	if (!info)
		return -ENOMEM;
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
	return 0;
}

int ruby_check(const void *record)
{
	const struct ruby_info *info = record;

	if (info->loop_hi <= info->loop_lo ||
	    !ruby_layout_of(info->major, info->minor) ||
	    info->ec_mode > RUBY_EC_TLSDESC)
		return -EINVAL;
	return 0;
}
