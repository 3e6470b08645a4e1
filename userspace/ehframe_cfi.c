// SPDX-License-Identifier: Apache-2.0
/*
 * The CFI program interpreter (DWARF 4, section 6.4.2) over one FDE, and
 * the lowering of each state it reaches to one struct unwind_rule (see
 * ehframe.h for the rules).
 */
#include "ehframe_int.h"

#include <string.h>

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

/* The frame pointer (rbp, x29): kept, undefined, or saved at CFA + off.
 * Returns -1, DT_UNSUP_RANGE, or DT_UNSUP_FP for any other form. */
static int lower_fp(const struct rrule *fp, struct unwind_rule *r)
{
	switch (fp->how) {
	case RR_UNSPEC:
	case RR_SAME:
		r->fp_rule = RULE_FP_SAME;
		return -1;
	case RR_UNDEF:
		r->fp_rule = RULE_FP_UNDEF;
		return -1;
	case RR_OFFSET:
		if (fp->val < INT32_MIN || fp->val > INT32_MAX)
			return DT_UNSUP_RANGE;
		r->fp_rule = RULE_FP_CFA_OFF;
		r->fp_off = (int32_t)fp->val;
		return -1;
	default:
		return DT_UNSUP_FP;
	}
}

/* x86-64: rbp saved at rbp + k (DW_OP_breg6 k: GCC's stack realignment).
 * Returns -1 or a DT_UNSUP_* reason. */
static int lower_fp_expr(const struct rrule *fp, struct unwind_rule *r)
{
	struct cur c = { .p = fp->expr, .end = fp->expr + fp->expr_len };
	int64_t k;

	if (rd_u8(&c) != OP_breg0 + REG_RBP)
		return DT_UNSUP_FP;
	k = rd_sleb(&c);
	if (c.bad || c.p != c.end)
		return DT_UNSUP_FP;
	if (k < INT32_MIN || k > INT32_MAX)
		return DT_UNSUP_RANGE;
	r->fp_rule = RULE_FP_REG_OFF;
	r->fp_off = (int32_t)k;
	return -1;
}

/*
 * AArch64: CFA = sp|x29 + off; the return address (x30, the CIE's return
 * column) either still in the link register (never saved: a leaf, a
 * prologue before its store, an epilogue after its load) or saved at
 * CFA + off; x29 kept, saved at CFA + off, or undefined.  The other
 * callee-saved registers (x19..x28) never compute a CFA in compiled code:
 * they are not tracked.  Anything else (a CFA expression or on another
 * register, the return address in another register) is unsupported.
 * Returns -1 or a DT_UNSUP_* reason, as lower().
 */
static int lower_a64(const struct cfa_state *s, struct unwind_rule *r)
{
	if (s->cfa_how != CFA_RULE_REG)
		return DT_UNSUP_CFA_EXPR;
	if (s->cfa_reg == REG_A64_SP)
		r->cfa_reg = RULE_REG_SP;
	else if (s->cfa_reg == REG_A64_X29)
		r->cfa_reg = RULE_REG_FP;
	else
		return DT_UNSUP_CFA_REG;
	if (s->cfa_off < INT32_MIN || s->cfa_off > INT32_MAX)
		return DT_UNSUP_RANGE;
	r->cfa_off = (int32_t)s->cfa_off;
	switch (s->ra.how) {
	case RR_UNSPEC:
	case RR_SAME:
		r->ra_rule = RULE_RA_LR;
		break;
	case RR_OFFSET:
		if (s->ra.val % 8 != 0)
			return DT_UNSUP_RA;
		if (s->ra.val < INT16_MIN || s->ra.val > INT16_MAX)
			return DT_UNSUP_RANGE;
		r->ra_rule = RULE_RA_CFA_OFF;
		r->ra_off = (int16_t)s->ra.val;
		break;
	default:
		return DT_UNSUP_RA;
	}
	return lower_fp(&s->fp, r);
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
	if (cie->a64) {
		why = lower_a64(s, r);
		if (why >= 0) {
			memset(r, 0, sizeof(*r));
			r->cmd = RULE_CMD_UNSUPPORTED;
		}
		return why;
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
		why = lower_fp(&s->fp, r);
		if (why == DT_UNSUP_FP && s->fp.how == RR_EXPR)
			why = lower_fp_expr(&s->fp, r);
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

void ehf_close_unsup(struct emitter *em, uint64_t upto)
{
	if (em->have_last && em->last_why >= 0 && em->P->st &&
	    upto > em->last_addr)
		em->P->st->unsup_bytes += upto - em->last_addr;
}

/* The state s holds from loc on. */
void ehf_emit(struct emitter *em, uint64_t loc, const struct cfa_state *s)
{
	struct parser *P = em->P;
	struct unwind_rule r;
	int why, err;

	if (P->fatal || loc >= em->end || loc < em->start)
		return;
	why = lower(em->cie, s, &r);
	if (P->st && why >= 0)
		P->st->unsup[why]++;
	if (em->have_last && memcmp(&r, &em->last, sizeof(r)) == 0)
		return;
	ehf_close_unsup(em, loc);
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
bool ehf_run_cfi(struct parser *P, const struct cie *cie, const uint8_t *p,
		 const uint8_t *end, struct cfa_state *s, struct emitter *em,
		 uint64_t *loc)
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
			/* on AArch64 DW_CFA_AARCH64_negate_ra_state: the
			 * return address is signed from here on; the BPF
			 * side strips every return address's PAC anyway */
			break;
		case CFA_GNU_args_size:
			rd_uleb(&c);
			break;
		case CFA_set_loc: {
			uint64_t v;

			if (!ehf_read_ptr(P, &c, cie->fde_enc, cie->addr_size, &v) ||
			    v < *loc)
				return false;
			if (em)
				ehf_emit(em, *loc, s);
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
				ehf_emit(em, *loc, s);
			*loc = newloc;
		}
	}
	return !c.bad;
}
