// SPDX-License-Identifier: Apache-2.0
/*
 * .eh_frame / .debug_frame parsing and lowering to stack deltas.
 *
 * Formats: the DWARF 4 standard, section 6.4 (CIE versions 1, 3, 4, 32-
 * and 64-bit), and the LSB's .eh_frame extensions (augmentation strings,
 * pointer encodings, .eh_frame_hdr).
 */
#include "ehframe.h"

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

/* Call-frame instructions. */
enum {
	CFA_nop = 0x00,
	CFA_set_loc = 0x01,
	CFA_advance_loc1 = 0x02,
	CFA_advance_loc2 = 0x03,
	CFA_advance_loc4 = 0x04,
	CFA_offset_extended = 0x05,
	CFA_restore_extended = 0x06,
	CFA_undefined = 0x07,
	CFA_same_value = 0x08,
	CFA_register = 0x09,
	CFA_remember_state = 0x0a,
	CFA_restore_state = 0x0b,
	CFA_def_cfa = 0x0c,
	CFA_def_cfa_register = 0x0d,
	CFA_def_cfa_offset = 0x0e,
	CFA_def_cfa_expression = 0x0f,
	CFA_expression = 0x10,
	CFA_offset_extended_sf = 0x11,
	CFA_def_cfa_sf = 0x12,
	CFA_def_cfa_offset_sf = 0x13,
	CFA_val_offset = 0x14,
	CFA_val_offset_sf = 0x15,
	CFA_val_expression = 0x16,
	CFA_MIPS_advance_loc8 = 0x1d,
	CFA_GNU_window_save = 0x2d,
	CFA_GNU_args_size = 0x2e,
	CFA_GNU_negative_offset_extended = 0x2f,
	CFA_advance_loc = 0x40,
	CFA_offset = 0x80,
	CFA_restore = 0xc0,
};

/* DWARF expression opcodes we pattern-match. */
enum {
	OP_deref = 0x06,
	OP_and = 0x1a,
	OP_plus = 0x22,
	OP_plus_uconst = 0x23,
	OP_shl = 0x24,
	OP_ge = 0x2a,
	OP_lit0 = 0x30,
	OP_lit3 = 0x33,
	OP_lit15 = 0x3f,
	OP_lit31 = 0x4f,
	OP_breg0 = 0x70,
};

/* x86-64 DWARF register numbers. */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RIP 16

/* Nesting of DW_CFA_remember_state; GCC uses 1 or 2. */
#define STATE_STACK 16
/* Direct-mapped CIE cache: files have one to a few hundred CIEs. */
#define CIE_CACHE 64

/* ---- byte cursor ----------------------------------------------------- */

struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static bool need(struct cur *c, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return false;
	}
	return true;
}

static uint64_t rd_le(struct cur *c, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	if (!need(c, n))
		return 0;
	for (i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint8_t rd_u8(struct cur *c)
{
	return (uint8_t)rd_le(c, 1);
}

/* LEB128; *shift_out gets the bits read, for sign extension. */
static uint64_t rd_leb(struct cur *c, unsigned *shift_out, uint8_t *last)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t byte;

	do {
		/* More than 10 bytes is not a 64-bit value. */
		if (shift > 63 || !need(c, 1)) {
			c->bad = true;
			return 0;
		}
		byte = *c->p++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
	} while (byte & 0x80);
	*shift_out = shift;
	*last = byte;
	return v;
}

static uint64_t rd_uleb(struct cur *c)
{
	unsigned shift;
	uint8_t last;

	return rd_leb(c, &shift, &last);
}

static int64_t rd_sleb(struct cur *c)
{
	unsigned shift = 0;
	uint8_t last = 0;
	uint64_t v = rd_leb(c, &shift, &last);

	if (!c->bad && shift < 64 && (last & 0x40))
		v |= ~0ULL << shift;
	return (int64_t)v;
}

/* A factored offset, v * align; a product that does not fit (no real
 * frame comes near) marks the cursor bad.  Never INT64_MIN, so that it
 * can be negated. */
static int64_t factored(struct cur *c, int64_t v, int64_t align)
{
	int64_t r;

	if (__builtin_mul_overflow(v, align, &r) || r == INT64_MIN) {
		c->bad = true;
		return 0;
	}
	return r;
}

static void skip(struct cur *c, uint64_t n)
{
	if (n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return;
	}
	c->p += n;
}

/* ---- CFI state ------------------------------------------------------- */

enum { CFA_RULE_REG, CFA_RULE_EXPR };
enum {
	RR_UNSPEC = 0, /* never set: callee-saved means unchanged */
	RR_UNDEF,
	RR_SAME,
	RR_OFFSET,     /* at CFA + val */
	RR_VAL_OFFSET, /* = CFA + val */
	RR_REGISTER,   /* in register val */
	RR_EXPR,       /* at the address the expression computes */
	RR_VAL_EXPR,
};

struct rrule {
	uint8_t how;
	int64_t val;
	const uint8_t *expr;
	uint64_t expr_len;
};

struct cfa_state {
	uint8_t cfa_how;
	uint64_t cfa_reg;
	int64_t cfa_off;
	const uint8_t *cfa_expr;
	uint64_t cfa_expr_len;
	struct rrule fp, ra;
	struct rrule saved[RULE_SAVED_COUNT]; /* rbx, r12..r15 */
};

static const uint8_t saved_regs[RULE_SAVED_COUNT] = RULE_SAVED_REGS;

struct cie {
	uint64_t off; /* offset in the section: the cache key */
	bool valid;
	bool signal;
	bool has_z;
	uint8_t fde_enc;
	uint8_t addr_size;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	const uint8_t *ins, *ins_end;
	struct cfa_state init;
};

/* Which rule of a cfa_state a register has: -1 for one the lowering
 * ignores (caller-saved registers carry their value; nothing restores
 * them), else an index for state_rule(). */
static int state_slot(const struct cie *cie, uint64_t reg)
{
	int i;

	if (reg == REG_RBP)
		return 0;
	if (reg == cie->ra_reg)
		return 1;
	for (i = 0; i < RULE_SAVED_COUNT; i++)
		if (reg == saved_regs[i])
			return 2 + i;
	return -1;
}

static struct rrule *state_rule(struct cfa_state *s, int slot)
{
	return slot == 0 ? &s->fp : slot == 1 ? &s->ra : &s->saved[slot - 2];
}


struct parser {
	const struct elfm *e;	    /* the file holding the section */
	const struct elfm *text_of; /* the file the rows are for */
	const uint8_t *sec;
	size_t sec_len;
	uint64_t sec_vaddr; /* address of sec[0] (eh_frame) */
	bool debug_frame;
	uint64_t datarel_base, textrel_base;
	uint64_t got; /* the usual data-relative base */
	struct dt_builder *b;
	struct dt_extract_stats *st;
	struct cie cache[CIE_CACHE];
	int fatal; /* -ENOMEM / -E2BIG from the builder: stop everything */
	int fdes_ok;
};

/* ---- encoded pointers ------------------------------------------------ */

/* Read a pointer with encoding enc at c; pcrel is relative to the
 * field's own address in the section.  Returns false for an encoding we
 * do not read (funcrel: only LSDA data uses it) or when the bytes run
 * out. */
static bool rd_ptr(struct parser *P, struct cur *c, uint8_t enc,
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
	return rd_ptr(P, c, enc & ~PE_INDIRECT, addr_size, &v);
}

/* ---- lowering -------------------------------------------------------- */

/* Lower a CFA expression.  Returns -1 when it maps to a rule, else a
 * DT_UNSUP_* reason. */
static int lower_cfa_expr(const uint8_t *x, uint64_t n, struct unwind_rule *r)
{
	struct cur c = { .p = x, .end = x + n };
	unsigned op, reg;
	int64_t k;

	/* GCC's lazy PLT: breg7 8; breg16 0; lit15; and; litN; ge; lit3;
	 * shl; plus. */
	if (n == 11 && x[0] == OP_breg0 + REG_RSP && x[1] == 8 &&
	    x[2] == OP_breg0 + REG_RIP && x[3] == 0 && x[4] == OP_lit15 &&
	    x[5] == OP_and && x[6] >= OP_lit0 && x[6] <= OP_lit15 &&
	    x[7] == OP_ge && x[8] == OP_lit3 && x[9] == OP_shl &&
	    x[10] == OP_plus) {
		r->cmd = RULE_CMD_PLT;
		r->cfa_reg = RULE_REG_SP;
		r->cfa_off = 8;
		r->cfa_post = (int16_t)(x[6] - OP_lit0);
		return -1;
	}
	/* breg of any general register (OpenSSL's perlasm:
	 * ".cfi_cfa_expression %rsp+0x18,deref,+8") */
	op = rd_u8(&c);
	if (op < OP_breg0 || op >= OP_breg0 + RULE_REG_COUNT)
		return DT_UNSUP_CFA_EXPR;
	reg = op - OP_breg0;
	k = rd_sleb(&c);
	if (c.bad)
		return DT_UNSUP_CFA_EXPR;
	if (k < INT32_MIN || k > INT32_MAX)
		return DT_UNSUP_RANGE;
	r->cfa_reg = (uint8_t)reg;
	r->cfa_off = (int32_t)k;
	if (c.p == c.end)
		return -1; /* breg alone: CFA = reg + k */
	if (rd_u8(&c) != OP_deref)
		return DT_UNSUP_CFA_EXPR;
	r->flags |= RULE_F_DEREF_CFA;
	if (c.p == c.end)
		return -1;
	if (rd_u8(&c) != OP_plus_uconst)
		return DT_UNSUP_CFA_EXPR;
	k = (int64_t)rd_uleb(&c);
	if (c.bad || c.p != c.end)
		return DT_UNSUP_CFA_EXPR;
	if (k < 0 || k > INT16_MAX)
		return DT_UNSUP_RANGE;
	r->cfa_post = (int16_t)k;
	return -1;
}

/* Where the other callee-saved registers are (struct unwind_rule.saved).
 * Anything but "saved at CFA + 8k" or "unchanged" (in another register,
 * an expression, out of reach of the 8-bit slot) becomes "undefined": the
 * CFA of this frame does not depend on it, and a caller's rule that would
 * compute from it fails cleanly instead of using a stale value. */
static void lower_saved(const struct cfa_state *s, struct unwind_rule *r)
{
	int i;

	for (i = 0; i < RULE_SAVED_COUNT; i++) {
		const struct rrule *rr = &s->saved[i];
		int8_t v = RULE_SAVED_UNDEF;

		if (rr->how == RR_UNSPEC || rr->how == RR_SAME)
			v = RULE_SAVED_SAME;
		else if (rr->how == RR_OFFSET && rr->val % 8 == 0 &&
			 rr->val / 8 > RULE_SAVED_UNDEF && rr->val / 8 <= 127 &&
			 rr->val != 0)
			v = (int8_t)(rr->val / 8);
		r->saved[i] = v;
	}
}

/* Lower the state at one location.  Returns -1 for a usable rule, else
 * a DT_UNSUP_* reason with *r set to UNSUPPORTED. */
static int lower(const struct cie *cie, const struct cfa_state *s,
		 struct unwind_rule *r)
{
	int why = -1;

	memset(r, 0, sizeof(*r));
	if (cie->signal) {
		r->cmd = RULE_CMD_SIGNAL;
		return -1;
	}
	if (s->ra.how == RR_UNDEF) {
		r->cmd = RULE_CMD_STOP;
		return -1;
	}
	if (s->cfa_how == CFA_RULE_REG) {
		/* any general register: its value is known at the leaf, and
		 * above it as far as the callees' CFI restores or keeps it */
		if (s->cfa_reg < RULE_REG_COUNT)
			r->cfa_reg = (uint8_t)s->cfa_reg;
		else
			why = DT_UNSUP_CFA_REG;
		if (why < 0 && (s->cfa_off < INT32_MIN || s->cfa_off > INT32_MAX))
			why = DT_UNSUP_RANGE;
		r->cfa_off = (int32_t)s->cfa_off;
	} else {
		why = lower_cfa_expr(s->cfa_expr, s->cfa_expr_len, r);
		if (why < 0 && r->cmd == RULE_CMD_PLT)
			return -1;
	}
	if (why < 0 && !(s->ra.how == RR_OFFSET && s->ra.val == -8))
		why = DT_UNSUP_RA;
	if (why < 0) {
		switch (s->fp.how) {
		case RR_UNSPEC:
		case RR_SAME:
			r->fp_rule = RULE_FP_SAME;
			break;
		case RR_UNDEF:
			r->fp_rule = RULE_FP_UNDEF;
			break;
		case RR_OFFSET:
			if (s->fp.val < INT32_MIN || s->fp.val > INT32_MAX) {
				why = DT_UNSUP_RANGE;
				break;
			}
			r->fp_rule = RULE_FP_CFA_OFF;
			r->fp_off = (int32_t)s->fp.val;
			break;
		case RR_EXPR: {
			struct cur c = { .p = s->fp.expr,
					 .end = s->fp.expr + s->fp.expr_len };
			int64_t k;

			if (rd_u8(&c) != OP_breg0 + REG_RBP) {
				why = DT_UNSUP_FP;
				break;
			}
			k = rd_sleb(&c);
			if (c.bad || c.p != c.end) {
				why = DT_UNSUP_FP;
				break;
			}
			if (k < INT32_MIN || k > INT32_MAX) {
				why = DT_UNSUP_RANGE;
				break;
			}
			r->fp_rule = RULE_FP_REG_OFF;
			r->fp_off = (int32_t)k;
			break;
		}
		default:
			why = DT_UNSUP_FP;
		}
	}
	if (why < 0)
		lower_saved(s, r);
	if (why >= 0) {
		memset(r, 0, sizeof(*r));
		r->cmd = RULE_CMD_UNSUPPORTED;
	}
	return why;
}

/* ---- rows ------------------------------------------------------------ */

struct emitter {
	struct parser *P;
	const struct cie *cie;
	uint64_t start, end;
	bool have_last;
	struct unwind_rule last;
	int last_why;
	uint64_t last_addr;
};

static void close_unsup(struct emitter *em, uint64_t upto)
{
	if (em->have_last && em->last_why >= 0 && em->P->st &&
	    upto > em->last_addr)
		em->P->st->unsup_bytes += upto - em->last_addr;
}

/* The state s holds from loc on. */
static void emit(struct emitter *em, uint64_t loc, const struct cfa_state *s)
{
	struct parser *P = em->P;
	struct unwind_rule r;
	int why, err;

	if (P->fatal || loc >= em->end || loc < em->start)
		return;
	why = lower(em->cie, s, &r);
	if (P->st) {
		P->st->cfi_rows++;
		if (why >= 0) {
			P->st->unsup_rows++;
			P->st->unsup[why]++;
		}
	}
	if (em->have_last && memcmp(&r, &em->last, sizeof(r)) == 0)
		return;
	close_unsup(em, loc);
	err = dt_builder_add(P->b, loc, &r);
	if (err)
		P->fatal = err;
	em->have_last = true;
	em->last = r;
	em->last_why = why;
	em->last_addr = loc;
}

enum { OFF_U, OFF_S, OFF_NEG };

/* The DW_CFA_*offset* family: operands "register, factored offset". */
static const struct {
	uint8_t op, how, kind;
} reg_off_ops[] = {
	{ CFA_offset_extended, RR_OFFSET, OFF_U },
	{ CFA_offset_extended_sf, RR_OFFSET, OFF_S },
	{ CFA_GNU_negative_offset_extended, RR_OFFSET, OFF_NEG },
	{ CFA_val_offset, RR_VAL_OFFSET, OFF_U },
	{ CFA_val_offset_sf, RR_VAL_OFFSET, OFF_S },
};

/* Decode a register-offset instruction; false when op is not one. */
static bool rd_reg_off(struct cur *c, const struct cie *cie, uint8_t op,
		       uint64_t *reg, struct rrule *nr)
{
	size_t i;

	for (i = 0; i < sizeof(reg_off_ops) / sizeof(reg_off_ops[0]); i++) {
		if (reg_off_ops[i].op != op)
			continue;
		*reg = rd_uleb(c);
		nr->how = reg_off_ops[i].how;
		if (reg_off_ops[i].kind == OFF_S)
			nr->val = factored(c, rd_sleb(c), cie->data_align);
		else
			nr->val = factored(c, (int64_t)rd_uleb(c),
					   cie->data_align);
		if (reg_off_ops[i].kind == OFF_NEG)
			nr->val = -nr->val;
		return true;
	}
	return false;
}

/* Run CFA instructions [p, end) on *s.  With em, rows are emitted at each
 * location; without (a CIE's initial instructions) nothing is.  Returns
 * true when the program ran to its end; false when an instruction was
 * unknown or malformed (the rows so far stand; the caller marks the
 * rest). */
static bool run_cfi(struct parser *P, const struct cie *cie, const uint8_t *p,
		    const uint8_t *end, struct cfa_state *s,
		    struct emitter *em, uint64_t *loc)
{
	struct cfa_state stack[STATE_STACK];
	unsigned depth = 0;
	struct cur c = { .p = p, .end = end };

	while (c.p < c.end && !c.bad && !P->fatal) {
		uint8_t op = rd_u8(&c);
		uint64_t reg = 0, delta = 0, newloc;
		struct rrule nr = { 0 };
		bool set_reg = false, adv = false;
		int slot;

		switch (op & 0xc0) {
		case CFA_advance_loc:
			delta = op & 0x3f;
			adv = true;
			break;
		case CFA_offset:
			reg = op & 0x3f;
			nr.how = RR_OFFSET;
			nr.val = factored(&c, (int64_t)rd_uleb(&c),
					  cie->data_align);
			set_reg = true;
			break;
		case CFA_restore:
			reg = op & 0x3f;
			goto restore;
		default:
			break;
		}
		if (op & 0xc0)
			goto apply;
		if (rd_reg_off(&c, cie, op, &reg, &nr)) {
			set_reg = true;
			goto apply;
		}

		switch (op) {
		case CFA_nop:
		case CFA_GNU_window_save:
			break;
		case CFA_GNU_args_size:
			rd_uleb(&c);
			break;
		case CFA_set_loc: {
			uint64_t v;

			if (!rd_ptr(P, &c, cie->fde_enc, cie->addr_size, &v) ||
			    v < *loc)
				return false;
			if (em)
				emit(em, *loc, s);
			*loc = v;
			break;
		}
		case CFA_advance_loc1:
		case CFA_advance_loc2:
		case CFA_advance_loc4:
			delta = rd_le(&c, 1U << (op - CFA_advance_loc1));
			adv = true;
			break;
		case CFA_MIPS_advance_loc8:
			delta = rd_le(&c, 8);
			adv = true;
			break;
		case CFA_restore_extended:
			reg = rd_uleb(&c);
			goto restore;
		case CFA_undefined:
			reg = rd_uleb(&c);
			nr.how = RR_UNDEF;
			set_reg = true;
			break;
		case CFA_same_value:
			reg = rd_uleb(&c);
			nr.how = RR_SAME;
			set_reg = true;
			break;
		case CFA_register:
			reg = rd_uleb(&c);
			nr.how = RR_REGISTER;
			nr.val = (int64_t)rd_uleb(&c);
			set_reg = true;
			break;
		case CFA_expression:
		case CFA_val_expression:
			reg = rd_uleb(&c);
			nr.how = op == CFA_expression ? RR_EXPR : RR_VAL_EXPR;
			nr.expr_len = rd_uleb(&c);
			nr.expr = c.p;
			skip(&c, nr.expr_len);
			set_reg = true;
			break;
		case CFA_remember_state:
			if (depth == STATE_STACK)
				return false;
			stack[depth++] = *s;
			break;
		case CFA_restore_state:
			if (depth == 0)
				return false;
			*s = stack[--depth];
			break;
		case CFA_def_cfa:
			s->cfa_how = CFA_RULE_REG;
			s->cfa_reg = rd_uleb(&c);
			s->cfa_off = (int64_t)rd_uleb(&c);
			break;
		case CFA_def_cfa_sf:
			s->cfa_how = CFA_RULE_REG;
			s->cfa_reg = rd_uleb(&c);
			s->cfa_off = factored(&c, rd_sleb(&c), cie->data_align);
			break;
		case CFA_def_cfa_register:
			/* Only meaningful after a register rule; an
			 * expression rule gets offset 0 (as libgcc). */
			if (s->cfa_how != CFA_RULE_REG)
				s->cfa_off = 0;
			s->cfa_how = CFA_RULE_REG;
			s->cfa_reg = rd_uleb(&c);
			break;
		case CFA_def_cfa_offset:
			if (s->cfa_how != CFA_RULE_REG)
				return false;
			s->cfa_off = (int64_t)rd_uleb(&c);
			break;
		case CFA_def_cfa_offset_sf:
			if (s->cfa_how != CFA_RULE_REG)
				return false;
			s->cfa_off = factored(&c, rd_sleb(&c), cie->data_align);
			break;
		case CFA_def_cfa_expression:
			s->cfa_how = CFA_RULE_EXPR;
			s->cfa_expr_len = rd_uleb(&c);
			s->cfa_expr = c.p;
			skip(&c, s->cfa_expr_len);
			break;
		default:
			return false;
		}
		goto apply;
restore:
		slot = state_slot(cie, reg);
		if (slot >= 0) {
			struct cfa_state init = cie->init;

			*state_rule(s, slot) = *state_rule(&init, slot);
		}
		continue;
apply:
		if (c.bad)
			return false;
		if (set_reg) {
			slot = state_slot(cie, reg);
			if (slot >= 0)
				*state_rule(s, slot) = nr;
		}
		if (adv) {
			if (delta > UINT64_MAX / (cie->code_align ? cie->code_align : 1))
				return false;
			newloc = *loc + delta * cie->code_align;
			if (newloc < *loc)
				return false;
			if (em)
				emit(em, *loc, s);
			*loc = newloc;
		}
	}
	return !c.bad;
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
	cie->init.cfa_reg = REG_RSP;
	if (!run_cfi(P, cie, cie->ins, cie->ins_end, &cie->init, NULL, &loc))
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
	if (P->st)
		P->st->cies++;
	return slot;
}

static void bad_entry(struct parser *P)
{
	if (P->st)
		P->st->bad_entries++;
}

static void skip_fde(struct parser *P)
{
	if (P->st)
		P->st->fdes_skipped++;
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
	if (!rd_ptr(P, &c, cie->fde_enc, cie->addr_size, &start) ||
	    !rd_ptr(P, &c, cie->fde_enc & 0x0f, cie->addr_size, &range)) {
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
	if (P->st)
		P->st->fdes++;
	if (range == 0 || start + range < start ||
	    !elfm_in_text(P->text_of, start, start + range)) {
		skip_fde(P);
		return;
	}
	em.cie = cie;
	em.start = start;
	em.end = start + range;
	s = cie->init;
	loc = start;
	ok = run_cfi(P, cie, c.p, c.end, &s, &em, &loc);
	if (ok) {
		emit(&em, loc, &s);
	} else if (loc < em.end && !P->fatal) {
		/* Unknown from here on: the rows before stand. */
		struct unwind_rule inv = dt_fixed_rules[RULE_IDX_UNSUPPORTED];
		int err;

		if (P->st) {
			P->st->cfi_rows++;
			P->st->unsup_rows++;
			P->st->unsup[DT_UNSUP_INSN]++;
		}
		if (!em.have_last || em.last.cmd != RULE_CMD_UNSUPPORTED) {
			close_unsup(&em, loc);
			err = dt_builder_add(P->b, loc, &inv);
			if (err)
				P->fatal = err;
			em.have_last = true;
			em.last = inv;
			em.last_why = DT_UNSUP_INSN;
			em.last_addr = loc;
		}
	}
	close_unsup(&em, em.end);
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
	if (!rd_ptr(P, &c, ptr_enc, 8, &ehf_vaddr))
		return -ENOENT;
	if (cnt_enc != PE_OMIT && tab_enc != PE_OMIT &&
	    !rd_ptr(P, &c, cnt_enc, 8, &count))
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
		if (!rd_ptr(P, &c, tab_enc, 8, &loc) ||
		    !rd_ptr(P, &c, tab_enc, 8, &fde))
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
					 .cfa_post = rows[i].post };

		err = dt_builder_add(b, sh->sh_addr + rows[i].off, &r);
		if (err)
			return err;
	}
	err = dt_builder_add_range(b, sh->sh_addr, sh->sh_addr + sh->sh_size);
	return err ? err : 1;
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
