// SPDX-License-Identifier: Apache-2.0
/*
 * .eh_frame / .debug_frame parsing and lowering to stack deltas.
 *
 * Formats: the DWARF 4 standard, section 6.4 (CIE versions 1, 3, 4, 32-
 * and 64-bit), and the LSB's .eh_frame extensions (augmentation strings,
 * pointer encodings, .eh_frame_hdr).
 */
#include "ehframe.h"
#include "ehframe_int.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pointer encodings (LSB, DW_EH_PE_*). */
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_TEXTREL 0x20
#define PE_DATAREL 0x30
#define PE_FUNCREL 0x40
#define PE_ALIGNED 0x50
#define PE_INDIRECT 0x80
#define PE_OMIT 0xff

/* ---- encoded pointers ------------------------------------------------ */

/* Read a pointer with encoding enc at c; pcrel is relative to the
 * field's own address in the section.  Returns false for an encoding we
 * do not read (funcrel: only LSDA data uses it) or when the bytes run
 * out. */
bool ehf_read_ptr(struct parser *P, struct cur *c, uint8_t enc,
		  uint8_t addr_size, uint64_t *out)
{
	uint64_t base = 0, v, field;
	const uint8_t *at;

	if (enc == PE_OMIT)
		return false;
	field = P->sec_vaddr + (uint64_t)(c->p - P->sec);
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		base = field;
		break;
	case PE_TEXTREL:
		base = P->textrel_base;
		break;
	case PE_DATAREL:
		base = P->datarel_base;
		break;
	case PE_ALIGNED: {
		size_t mis = (size_t)(c->p - P->sec) % addr_size;

		if (mis)
			skip(c, addr_size - mis);
		break;
	}
	default: /* funcrel only appears in LSDA data we do not read */
		return false;
	}
	switch (enc & 0x0f) {
	case PE_ABSPTR:
		v = rd_le(c, addr_size);
		break;
	case PE_ULEB128:
		v = rd_uleb(c);
		break;
	case PE_UDATA2:
		v = rd_le(c, 2);
		break;
	case PE_UDATA4:
		v = rd_le(c, 4);
		break;
	case PE_UDATA8:
		v = rd_le(c, 8);
		break;
	case PE_SLEB128:
		v = (uint64_t)rd_sleb(c);
		break;
	case PE_SDATA2:
		v = (uint64_t)(int64_t)(int16_t)rd_le(c, 2);
		break;
	case PE_SDATA4:
		v = (uint64_t)(int64_t)(int32_t)rd_le(c, 4);
		break;
	case PE_SDATA8:
		v = rd_le(c, 8);
		break;
	default:
		return false;
	}
	if (c->bad)
		return false;
	v += base;
	if (enc & PE_INDIRECT) {
		size_t avail;

		if (elfm_vaddr_bytes(P->e, v, 8, &at, &avail) != 0)
			return false;
		memcpy(&v, at, 8);
	}
	*out = v;
	return true;
}

/* Step over a pointer (the personality routine): its size is given by
 * the format alone. */
static bool skip_ptr(struct parser *P, struct cur *c, uint8_t enc,
		     uint8_t addr_size)
{
	uint64_t v;

	if (enc == PE_OMIT)
		return true;
	/* Indirect pointers need not resolve to be skipped. */
	return ehf_read_ptr(P, c, enc & ~PE_INDIRECT, addr_size, &v);
}

/* ---- entries --------------------------------------------------------- */

struct entry {
	uint64_t off;	   /* of the length field */
	uint64_t next;	   /* offset of the next entry */
	const uint8_t *body, *end; /* after the id field .. end of entry */
	bool is_cie;
	bool terminator;
	bool dwarf64;
	uint64_t cie_off; /* FDE: its CIE */
};

static bool read_entry(const struct parser *P, uint64_t off, struct entry *en)
{
	struct cur c;
	uint64_t len, id, id_off;
	unsigned idsz;

	memset(en, 0, sizeof(*en));
	en->off = off;
	if (off >= P->sec_len)
		return false;
	c = (struct cur){ .p = P->sec + off, .end = P->sec + P->sec_len };
	len = rd_le(&c, 4);
	if (c.bad)
		return false;
	if (len == 0) {
		en->terminator = true;
		en->next = off + 4;
		return true;
	}
	if (len == 0xffffffffULL) {
		len = rd_le(&c, 8);
		en->dwarf64 = true;
	} else if (len >= 0xfffffff0ULL) {
		return false;
	}
	if (c.bad || len > (uint64_t)(c.end - c.p))
		return false;
	en->end = c.p + len;
	en->next = (uint64_t)(en->end - P->sec);
	idsz = en->dwarf64 ? 8 : 4;
	id_off = (uint64_t)(c.p - P->sec);
	c.end = en->end;
	id = rd_le(&c, idsz);
	if (c.bad)
		return false;
	en->body = c.p;
	if (P->debug_frame) {
		en->is_cie = id == (en->dwarf64 ? ~0ULL : 0xffffffffULL);
		en->cie_off = id;
	} else {
		en->is_cie = id == 0;
		if (id > id_off)
			return false;
		en->cie_off = id_off - id;
	}
	return true;
}

static bool parse_cie(struct parser *P, const struct entry *en,
		      struct cie *cie)
{
	struct cur c = { .p = en->body, .end = en->end };
	const char *aug;
	const uint8_t *nul, *aug_end = NULL;
	uint8_t version;
	uint64_t loc = 0;
	size_t i;

	memset(cie, 0, sizeof(*cie));
	cie->off = en->off;
	cie->a64 = P->a64;
	cie->fde_enc = PE_ABSPTR;
	cie->addr_size = 8;
	version = rd_u8(&c);
	if (c.bad || (version != 1 && version != 3 && version != 4))
		return false;
	nul = memchr(c.p, 0, (size_t)(c.end - c.p));
	if (!nul)
		return false;
	aug = (const char *)c.p;
	c.p = nul + 1;
	if (version == 4) {
		cie->addr_size = rd_u8(&c);
		if (rd_u8(&c) != 0 || (cie->addr_size != 4 && cie->addr_size != 8))
			return false;
	}
	cie->code_align = rd_uleb(&c);
	cie->data_align = rd_sleb(&c);
	cie->ra_reg = version == 1 ? rd_u8(&c) : rd_uleb(&c);
	if (c.bad)
		return false;
	if (aug[0] == 'z') {
		uint64_t alen = rd_uleb(&c);

		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return false;
		aug_end = c.p + alen;
		cie->has_z = true;
		for (i = 1; aug[i]; i++) {
			struct cur a = { .p = c.p, .end = aug_end };
			uint8_t enc;

			switch (aug[i]) {
			case 'R':
				cie->fde_enc = rd_u8(&a);
				break;
			case 'L':
				rd_u8(&a);
				break;
			case 'P':
				enc = rd_u8(&a);
				if (!skip_ptr(P, &a, enc, cie->addr_size))
					a.bad = true;
				break;
			case 'S':
				cie->signal = true;
				break;
			case 'B': /* AArch64 BTI, MTE: no data */
			case 'G':
				break;
			default:
				/* Unknown: the length lets us skip the rest. */
				a.p = aug_end;
				goto aug_done;
			}
			if (a.bad)
				return false;
			c.p = a.p;
		}
aug_done:
		c.p = aug_end;
	} else if (aug[0] != 0) {
		/* "eh" and other pre-'z' forms have no length to skip by. */
		return false;
	}
	if (cie->code_align == 0)
		return false;
	cie->ins = c.p;
	cie->ins_end = en->end;
	cie->init.cfa_how = CFA_RULE_REG;
	cie->init.cfa_reg = P->a64 ? REG_A64_SP : REG_RSP;
	if (!ehf_run_cfi(P, cie, cie->ins, cie->ins_end, &cie->init, NULL, &loc))
		return false;
	cie->valid = true;
	return true;
}

static const struct cie *get_cie(struct parser *P, uint64_t off)
{
	struct cie *slot = &P->cache[(off >> 2) % CIE_CACHE];
	struct entry en;

	if (slot->valid && slot->off == off)
		return slot;
	if (!read_entry(P, off, &en) || !en.is_cie || en.terminator)
		return NULL;
	if (!parse_cie(P, &en, slot)) {
		slot->valid = false;
		return NULL;
	}
	return slot;
}

static void bad_entry(struct parser *P)
{
	if (P->st)
		P->st->bad_entries++;
}

static void parse_fde(struct parser *P, const struct entry *en)
{
	const struct cie *cie = get_cie(P, en->cie_off);
	struct cur c = { .p = en->body, .end = en->end };
	struct emitter em = { .P = P };
	struct cfa_state s;
	uint64_t start, range, loc;
	bool ok;

	if (!cie) {
		bad_entry(P);
		return;
	}
	if (!ehf_read_ptr(P, &c, cie->fde_enc, cie->addr_size, &start) ||
	    !ehf_read_ptr(P, &c, cie->fde_enc & 0x0f, cie->addr_size, &range)) {
		bad_entry(P);
		return;
	}
	if (cie->has_z) {
		uint64_t alen = rd_uleb(&c);

		skip(&c, alen);
	}
	if (c.bad) {
		bad_entry(P);
		return;
	}
	/* empty, or outside the text: no rows */
	if (range == 0 || start + range < start ||
	    !elfm_in_text(P->text_of, start, start + range))
		return;
	em.cie = cie;
	em.start = start;
	em.end = start + range;
	s = cie->init;
	loc = start;
	ok = ehf_run_cfi(P, cie, c.p, c.end, &s, &em, &loc);
	if (ok) {
		ehf_emit(&em, loc, &s);
	} else if (loc < em.end && !P->fatal) {
		/* Unknown from here on: the rows before stand. */
		struct unwind_rule inv = dt_fixed_rules[RULE_IDX_UNSUPPORTED];
		int err;

		if (P->st)
			P->st->unsup[DT_UNSUP_INSN]++;
		if (!em.have_last || em.last.cmd != RULE_CMD_UNSUPPORTED) {
			ehf_close_unsup(&em, loc);
			err = dt_builder_add(P->b, loc, &inv);
			if (err)
				P->fatal = err;
			em.have_last = true;
			em.last = inv;
			em.last_why = DT_UNSUP_INSN;
			em.last_addr = loc;
		}
	}
	ehf_close_unsup(&em, em.end);
	if (!P->fatal) {
		int err = dt_builder_add_range(P->b, start, em.end);

		if (err)
			P->fatal = err;
	}
	P->fdes_ok++;
}

/* Parse every entry of the section in order. */
static void parse_linear(struct parser *P)
{
	uint64_t off = 0;
	struct entry en;

	while (off < P->sec_len && !P->fatal) {
		if (!read_entry(P, off, &en)) {
			bad_entry(P);
			return; /* lengths are lost: nothing further is safe */
		}
		if (en.terminator) {
			if (!P->debug_frame)
				return;
		} else if (!en.is_cie) {
			parse_fde(P, &en);
		}
		off = en.next;
	}
}

static void parser_init(struct parser *P, const struct elfm *e,
			const struct elfm *text_of, struct dt_builder *b,
			struct dt_extract_stats *st)
{
	const Elf64_Shdr *sh;

	memset(P, 0, sizeof(*P));
	P->e = e;
	P->text_of = text_of;
	P->b = b;
	P->st = st;
	P->a64 = elfm_ehdr(e)->e_machine == EM_AARCH64;
	/* Data-relative pointers are relative to the GOT on x86-64. */
	sh = elfm_section(e, ".got.plt");
	if (!sh)
		sh = elfm_section(e, ".got");
	if (sh)
		P->got = sh->sh_addr;
	P->datarel_base = P->got;
	sh = elfm_section(e, ".text");
	if (sh)
		P->textrel_base = sh->sh_addr;
}

static void parser_init_bases(struct parser *P)
{
	P->datarel_base = P->got;
}

/* ---- .eh_frame_hdr --------------------------------------------------- */

/* Locate .eh_frame through PT_GNU_EH_FRAME; parse every FDE its search
 * table lists, else the whole segment up to the terminator. */
static int parse_via_hdr(struct parser *P)
{
	const Elf64_Phdr *ph;
	const uint8_t *hdr, *ehf;
	size_t hdr_avail, ehf_avail;
	uint64_t hdr_vaddr = 0, ehf_vaddr, count = 0, i;
	uint8_t ptr_enc, cnt_enc, tab_enc;
	unsigned n, k;
	struct cur c;

	ph = elfm_phdrs(P->e, &n);
	for (k = 0; k < n; k++)
		if (ph[k].p_type == PT_GNU_EH_FRAME)
			break;
	if (k == n)
		return -ENOENT;
	hdr_vaddr = ph[k].p_vaddr;
	if (elfm_vaddr_bytes(P->e, hdr_vaddr, 4, &hdr, &hdr_avail) != 0)
		return -ENOENT;
	if (hdr[0] != 1)
		return -ENOENT;
	ptr_enc = hdr[1];
	cnt_enc = hdr[2];
	tab_enc = hdr[3];
	/* Pointers in the header are relative to the header itself. */
	P->sec = hdr;
	P->sec_len = hdr_avail;
	P->sec_vaddr = hdr_vaddr;
	P->datarel_base = hdr_vaddr;
	c = (struct cur){ .p = hdr + 4, .end = hdr + hdr_avail };
	if (!ehf_read_ptr(P, &c, ptr_enc, 8, &ehf_vaddr))
		return -ENOENT;
	if (cnt_enc != PE_OMIT && tab_enc != PE_OMIT &&
	    !ehf_read_ptr(P, &c, cnt_enc, 8, &count))
		count = 0;
	if (elfm_vaddr_bytes(P->e, ehf_vaddr, 4, &ehf, &ehf_avail) != 0)
		return -ENOENT;
	if (count == 0) {
		P->sec = ehf;
		P->sec_len = ehf_avail;
		P->sec_vaddr = ehf_vaddr;
		parser_init_bases(P);
		parse_linear(P);
		return 0;
	}
	/* Each table entry: initial location, FDE address. */
	for (i = 0; i < count && !P->fatal; i++) {
		uint64_t loc, fde;
		struct entry en;

		P->sec = hdr;
		P->sec_len = hdr_avail;
		P->sec_vaddr = hdr_vaddr;
		P->datarel_base = hdr_vaddr;
		if (!ehf_read_ptr(P, &c, tab_enc, 8, &loc) ||
		    !ehf_read_ptr(P, &c, tab_enc, 8, &fde))
			break;
		P->sec = ehf;
		P->sec_len = ehf_avail;
		P->sec_vaddr = ehf_vaddr;
		parser_init_bases(P);
		if (fde < ehf_vaddr || !read_entry(P, fde - ehf_vaddr, &en) ||
		    en.terminator || en.is_cie) {
			bad_entry(P);
			continue;
		}
		parse_fde(P, &en);
	}
	return 0;
}

/* ---- public ---------------------------------------------------------- */

static int parser_new(const struct elfm *e, const struct elfm *text_of,
		      struct dt_builder *b, struct dt_extract_stats *st,
		      struct parser **out)
{
	*out = malloc(sizeof(**out));
	if (!*out)
		return -ENOMEM;
	parser_init(*out, e, text_of, b, st);
	return 0;
}

static int parser_done(struct parser *P)
{
	int ret = P->fatal ? P->fatal : P->fdes_ok;

	free(P);
	return ret;
}

int ehf_eh_frame(const struct elfm *e, const struct elfm *text_of,
		 struct dt_builder *b, struct dt_extract_stats *st)
{
	const Elf64_Shdr *sh = elfm_section(e, ".eh_frame");
	struct parser *P;
	const uint8_t *d;
	size_t n;
	int err;

	err = parser_new(e, text_of, b, st, &P);
	if (err)
		return err;
	dt_builder_set_source(b, DT_SRC_EH_FRAME);
	if (sh && elfm_section_bytes(e, sh, &d, &n) == 0) {
		P->sec = d;
		P->sec_len = n;
		P->sec_vaddr = sh->sh_addr;
		parse_linear(P);
	} else {
		err = parse_via_hdr(P);
		if (err) {
			free(P);
			return err;
		}
		if (st)
			st->eh_frame_hdr = true;
	}
	return parser_done(P);
}

int ehf_debug_frame(const struct elfm *e, const struct elfm *text_of,
		    unsigned src, struct dt_builder *b,
		    struct dt_extract_stats *st)
{
	const Elf64_Shdr *sh = elfm_section(e, ".debug_frame");
	struct parser *P;
	void *owned = NULL;
	const uint8_t *d;
	size_t n;
	int err;

	if (!sh)
		return -ENOENT;
	err = elfm_section_load(e, sh, &d, &n, &owned);
	if (err)
		return err == -ENOMEM ? err : -ENOENT;
	err = parser_new(e, text_of, b, st, &P);
	if (err) {
		free(owned);
		return err;
	}
	dt_builder_set_source(b, src);
	P->debug_frame = true;
	P->sec = d;
	P->sec_len = n;
	parse_linear(P);
	free(owned);
	return parser_done(P);
}

/* ---- synthetic PLT rows ---------------------------------------------- */

struct synth_row {
	uint16_t off; /* from the section's start */
	uint8_t cmd;
	int32_t cfa_off; /* rsp + cfa_off */
	int16_t post;
	uint8_t ra_rule; /* enum rule_ra */
};

/* Rows for one section when it exists and is code.  Returns 1 when rows
 * were added, 0 when not, or a negative errno. */
static int synth_section(const struct elfm *e, const Elf64_Shdr *sh,
			 const struct synth_row *rows, size_t n,
			 struct dt_builder *b)
{
	size_t i;
	int err;

	if (!sh || sh->sh_size <= rows[n - 1].off ||
	    !(sh->sh_flags & SHF_EXECINSTR) ||
	    !elfm_in_text(e, sh->sh_addr, sh->sh_addr + sh->sh_size))
		return 0;
	for (i = 0; i < n; i++) {
		struct unwind_rule r = { .cmd = rows[i].cmd,
					 .cfa_reg = RULE_REG_SP,
					 .cfa_off = rows[i].cfa_off,
					 .cfa_post = rows[i].post,
					 .ra_rule = rows[i].ra_rule };

		err = dt_builder_add(b, sh->sh_addr + rows[i].off, &r);
		if (err)
			return err;
	}
	err = dt_builder_add_range(b, sh->sh_addr, sh->sh_addr + sh->sh_size);
	return err ? err : 1;
}

/*
 * AArch64's .plt: PLT0 stores x16 and x30 below sp (stp x16, x30,
 * [sp, #-16]!) as its first instruction, after a "bti c" when the PLT has
 * BTI landing pads, then jumps to the resolver; the 16-byte entries only
 * jump through the GOT.  The return address stays in x30 throughout.
 */
static int synth_plt_a64(const struct elfm *e, struct dt_builder *b,
			 struct dt_extract_stats *st)
{
	static const uint8_t bti_c[] = { 0x5f, 0x24, 0x03, 0xd5 };
	struct synth_row plt[] = {
		{ 0, RULE_CMD_NONE, 0, 0, RULE_RA_LR },
		{ 4, RULE_CMD_NONE, 16, 0, RULE_RA_LR },
		{ 32, RULE_CMD_NONE, 0, 0, RULE_RA_LR },
	};
	const Elf64_Shdr *sh = elfm_section(e, ".plt");
	const uint8_t *p;
	size_t avail;
	int ret;

	if (sh && elfm_vaddr_bytes(e, sh->sh_addr, 4, &p, &avail) == 0 &&
	    memcmp(p, bti_c, 4) == 0)
		plt[1].off = 8;
	ret = synth_section(e, sh, plt, 3, b);
	if (ret > 0 && st)
		st->synth_ranges += ret;
	return ret;
}

/* ---- the AArch64 vDSO ------------------------------------------------ */

/*
 * The arm64 vDSO has no CFI (Debian's 6.1 and 6.12 strip its .eh_frame,
 * and the kernel keeps the sigreturn trampoline out of CFI on purpose).
 * Its functions are leaves in C: a function whose code never stores the
 * frame record (no "stp x29, x30, [sp, #-N]!") keeps sp and the return
 * address in x30 from entry to ret: one row, sp + 0, ra in x30.  One that
 * does store it gets no rows, and the BPF walk takes its frame pointer.
 * __kernel_rt_sigreturn, and the nop before it (a handler's return
 * address minus one lands there), are the signal frame.
 */
#define A64_STP_FP_LR_PRE(w) (((w)&0xffc07fffu) == 0xa9807bfdu)

struct vdso_scan {
	const struct elfm *e;
	struct dt_builder *b;
	int n, err;
};

static int vdso_func(const struct elfm_sym *s, void *arg)
{
	static const struct unwind_rule leaf = { .cfa_reg = RULE_REG_SP,
						 .ra_rule = RULE_RA_LR };
	struct vdso_scan *v = arg;
	const uint8_t *code;
	size_t avail, i;

	if (ELF64_ST_TYPE(s->info) != STT_FUNC || !s->size ||
	    s->size > (1u << 20) ||
	    !elfm_in_text(v->e, s->value, s->value + s->size) ||
	    elfm_vaddr_bytes(v->e, s->value, s->size, &code, &avail) ||
	    avail < s->size)
		return 0;
	for (i = 0; i + 4 <= s->size; i += 4) {
		uint32_t w = (uint32_t)code[i] | (uint32_t)code[i + 1] << 8 |
			     (uint32_t)code[i + 2] << 16 |
			     (uint32_t)code[i + 3] << 24;

		if (A64_STP_FP_LR_PRE(w))
			return 0;
	}
	v->err = dt_builder_add(v->b, s->value, &leaf);
	if (!v->err)
		v->err = dt_builder_add_range(v->b, s->value, s->value + s->size);
	v->n++;
	return v->err;
}

int ehf_synth_vdso_a64(const struct elfm *e, struct dt_builder *b,
		       struct dt_extract_stats *st)
{
	static const char *const names[] = { "__kernel_rt_sigreturn" };
	static const struct unwind_rule sig = { .cmd = RULE_CMD_SIGNAL };
	struct vdso_scan v = { .e = e, .b = b };
	uint64_t value = 0, size = 0, lo;
	const Elf64_Shdr *sh;

	if (elfm_ehdr(e)->e_machine != EM_AARCH64 ||
	    elfm_find_syms(e, names, 1, &value, &size) != 1 || !value)
		return 0;
	dt_builder_set_source(b, DT_SRC_SYNTH);
	sh = elfm_section(e, ".dynsym");
	if (sh && elfm_for_each_sym(e, sh, vdso_func, &v) < 0 && v.err)
		return v.err;
	/* the trampoline is 8 bytes (mov x8, #139; svc #0) */
	lo = elfm_in_text(e, value - 4, value) ? value - 4 : value;
	if (!size)
		size = 8;
	v.err = dt_builder_add(b, lo, &sig);
	if (!v.err)
		v.err = dt_builder_add_range(b, lo, value + size);
	if (v.err)
		return v.err;
	if (st)
		st->synth_ranges += v.n + 1;
	return v.n + 1;
}

int ehf_synth_plt(const struct elfm *e, struct dt_builder *b,
		  struct dt_extract_stats *st)
{
	static const char *flat[] = { ".plt.sec", ".plt.got", ".plt.bnd" };
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	/*
	 * Lazy .plt: PLT0 is entered from an entry that already pushed the
	 * relocation index (CFA = rsp+16) and pushes once more at +6; each
	 * 16-byte entry pushes at a fixed offset: after "jmp *GOT; push"
	 * at 11, or, IBT entries, after "endbr64; push" at 9.
	 */
	struct synth_row plt[] = {
		{ 0, RULE_CMD_NONE, 16, 0 },
		{ 6, RULE_CMD_NONE, 24, 0 },
		{ 16, RULE_CMD_PLT, 8, 11 },
	};
	/* The other PLT sections only jump through the GOT. */
	static const struct synth_row jmp[] = { { 0, RULE_CMD_NONE, 8, 0 } };
	const Elf64_Shdr *sh;
	const uint8_t *p;
	int ret, done = 0;
	size_t i, avail;

	dt_builder_set_source(b, DT_SRC_SYNTH);
	if (elfm_ehdr(e)->e_machine == EM_AARCH64)
		return synth_plt_a64(e, b, st);
	sh = elfm_section(e, ".plt");
	if (sh && elfm_vaddr_bytes(e, sh->sh_addr + 16, 4, &p, &avail) == 0 &&
	    memcmp(p, endbr64, 4) == 0)
		plt[2].post = 9;
	ret = synth_section(e, sh, plt, 3, b);
	for (i = 0; ret >= 0 && i < sizeof(flat) / sizeof(flat[0]); i++) {
		done += ret;
		ret = synth_section(e, elfm_section(e, flat[i]), jmp, 1, b);
	}
	if (ret < 0)
		return ret;
	done += ret;
	if (st)
		st->synth_ranges += done;
	return done;
}
