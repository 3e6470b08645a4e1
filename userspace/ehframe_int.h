/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to ehframe.c (entries: CIEs, FDEs, .eh_frame_hdr, the public
 * calls) and ehframe_cfi.c (the CFI program interpreter and its lowering
 * to struct unwind_rule): the DWARF constants, the byte cursor, the CFI
 * state and the parser they share.  Not for other modules.
 */
#ifndef EP_EHFRAME_INT_H
#define EP_EHFRAME_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "deltas.h"
#include "elfmap.h"

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
/* AArch64 DWARF register numbers: the frame pointer, the link register
 * (the return-address column) and sp. */
#define REG_A64_X29 29
#define REG_A64_X30 30
#define REG_A64_SP 31

/* Nesting of DW_CFA_remember_state; GCC uses 1 or 2. */
#define STATE_STACK 16
/* Direct-mapped CIE cache: files have one to a few hundred CIEs. */
#define CIE_CACHE 64

/* ---- byte cursor ----------------------------------------------------- */

struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static inline bool need(struct cur *c, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return false;
	}
	return true;
}

static inline uint64_t rd_le(struct cur *c, unsigned n)
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

static inline uint8_t rd_u8(struct cur *c)
{
	return (uint8_t)rd_le(c, 1);
}

/* LEB128; *shift_out gets the bits read, for sign extension. */
static inline uint64_t rd_leb(struct cur *c, unsigned *shift_out, uint8_t *last)
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

static inline uint64_t rd_uleb(struct cur *c)
{
	unsigned shift;
	uint8_t last;

	return rd_leb(c, &shift, &last);
}

static inline int64_t rd_sleb(struct cur *c)
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
static inline int64_t factored(struct cur *c, int64_t v, int64_t align)
{
	int64_t r;

	if (__builtin_mul_overflow(v, align, &r) || r == INT64_MIN) {
		c->bad = true;
		return 0;
	}
	return r;
}

static inline void skip(struct cur *c, uint64_t n)
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
	bool a64; /* the file is AArch64: its register numbers and rules */
	const uint8_t *ins, *ins_end;
	struct cfa_state init;
};

/* Which rule of a cfa_state a register has: -1 for one the lowering
 * ignores (caller-saved registers carry their value; nothing restores
 * them), else an index for state_rule(). */
static inline int state_slot(const struct cie *cie, uint64_t reg)
{
	static const uint8_t saved_regs[RULE_SAVED_COUNT] = RULE_SAVED_REGS;
	int i;

	if (cie->a64) {
		/* x19..x28 are never a CFA's base: only x29 and x30 count */
		if (reg == REG_A64_X29)
			return 0;
		return reg == cie->ra_reg ? 1 : -1;
	}
	if (reg == REG_RBP)
		return 0;
	if (reg == cie->ra_reg)
		return 1;
	for (i = 0; i < RULE_SAVED_COUNT; i++)
		if (reg == saved_regs[i])
			return 2 + i;
	return -1;
}

static inline struct rrule *state_rule(struct cfa_state *s, int slot)
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
	bool a64; /* e is an AArch64 file */
	uint64_t datarel_base, textrel_base;
	uint64_t got; /* the usual data-relative base */
	struct dt_builder *b;
	struct dt_extract_stats *st;
	struct cie cache[CIE_CACHE];
	int fatal; /* -ENOMEM / -E2BIG from the builder: stop everything */
	int fdes_ok;
};

struct emitter {
	struct parser *P;
	const struct cie *cie;
	uint64_t start, end;
	bool have_last;
	struct unwind_rule last;
	int last_why;
	uint64_t last_addr;
};

/* ---- across the two files ------------------------------------------- */

/* ehframe.c: read a pointer with encoding enc at c; pcrel is relative to
 * the field's own address in the section.  false for an encoding we do
 * not read or when the bytes run out. */
bool ehf_read_ptr(struct parser *P, struct cur *c, uint8_t enc,
		  uint8_t addr_size, uint64_t *out);

/* ehframe_cfi.c: run CFA instructions [p, end) on *s, emitting rows
 * through em (NULL for a CIE's initial instructions); false when an
 * instruction was unknown or malformed. */
bool ehf_run_cfi(struct parser *P, const struct cie *cie, const uint8_t *p,
		 const uint8_t *end, struct cfa_state *s, struct emitter *em,
		 uint64_t *loc);
/* The row for the state s holds from loc on. */
void ehf_emit(struct emitter *em, uint64_t loc, const struct cfa_state *s);
/* Count the bytes up to upto of an unsupported last row. */
void ehf_close_unsup(struct emitter *em, uint64_t upto);

#endif
