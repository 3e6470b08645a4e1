// SPDX-License-Identifier: Apache-2.0
/*
 * V8's code, per frame, from the process' memory: source position
 * tables (a bytecode offset or a pc to a script offset), the Code object
 * around an optimized frame's pc and its deoptimization data (the
 * functions inlined there), and a baseline frame's pc mapped back to its
 * bytecode.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "interp_v8_int.h"

/* ---- lines ---------------------------------------------------------------- */

/* A source position table: per entry, the bytecode offset delta then the
 * source position delta, each a zigzag-encoded VLQ (7 bits a byte, low
 * group first, 0x80: more); a negative offset delta (-delta - 1) marks an
 * expression rather than a statement.  A position is the script offset
 * plus one, shifted left once (bit 0: external), with the inlining id
 * above bit 31. */
#define V8_POS_TABLE_MAX (1u << 16)

/* An unsigned VLQ (7 bits a byte, low group first, 0x80: more). */
static bool uvlq(const uint8_t *p, size_t n, size_t *i, uint64_t *out)
{
	unsigned shift = 0;

	*out = 0;
	do {
		if (*i >= n || shift > 63)
			return false;
		*out |= (uint64_t)(p[*i] & 0x7f) << shift;
		shift += 7;
	} while (p[(*i)++] & 0x80);
	return true;
}

/* The zigzag-encoded one: bit 0 is the sign. */
static bool vlq(const uint8_t *p, size_t n, size_t *i, int64_t *out)
{
	uint64_t v;

	if (!uvlq(p, n, i, &v))
		return false;
	*out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
	return true;
}

/* The raw source position of code offset target in table (the last
 * entry at or before it; the first when none is): -1 when the table has
 * none.  Offsets count from -1, V8's function entry. */
static int64_t table_raw(const uint8_t *p, size_t n, int64_t target)
{
	int64_t code = -1, raw = 0, d, pos = -1;
	size_t i = 0;

	while (i < n) {
		if (!vlq(p, n, &i, &d))
			break;
		/* a table whose sums overflow is not V8's: stop there */
		if (__builtin_add_overflow(code, d < 0 ? -(d + 1) : d, &code) ||
		    !vlq(p, n, &i, &d) || __builtin_add_overflow(raw, d, &raw))
			break;
		if (code > target && pos >= 0)
			break;
		pos = raw;
	}
	return pos;
}

/* A raw position's script offset (-1: none, or external) and inlining
 * id (0: the code's own function). */
static int64_t raw_offset(int64_t raw)
{
	return raw < 0 || (raw & 1) ? -1 : ((raw >> 1) & 0x3fffffff) - 1;
}

static unsigned raw_inlining(int64_t raw)
{
	return raw < 0 ? 0 : (unsigned)((uint64_t)raw >> 31) & 0xffff;
}

/* The bytes of a ByteArray (or TrustedByteArray: same layout) arr, at
 * most V8_POS_TABLE_MAX, into a buffer the caller frees. */
static int byte_array(const struct v8_reader *r, uint64_t arr, uint8_t **buf,
		      size_t *len)
{
	const struct v8_layout *l = r->l;
	uint64_t n;
	uint16_t type;

	if (v8_type_of(r, arr, &type) ||
	    (type != l->type_byte_array &&
	     (!l->type_trusted_byte_array || type != l->type_trusted_byte_array)) ||
	    v8_field(r, arr, 8, &n) || (n & 0xffffffff))
		return -EINVAL;
	n >>= 32;
	if (!n || n > V8_POS_TABLE_MAX)
		return -EINVAL;
	*buf = malloc(n);
	if (!*buf)
		return -ENOMEM;
	if (v8_rd(r, arr - 1 + l->fixed_data, *buf, n)) {
		free(*buf);
		return -EFAULT;
	}
	*len = n;
	return 0;
}

/* The script offset a frame runs: from the BytecodeArray's source
 * positions at the frame's bytecode offset, or the function's start. */
int64_t v8_frame_position(const struct v8_reader *r, uint64_t bca,
			  bool have_off, uint32_t off)
{
	const struct v8_layout *l = r->l;
	uint64_t table;
	int64_t target = -1, pos;
	uint16_t type;
	uint8_t *buf;
	size_t len;

	if (!l->type_bytecode_array || !l->type_byte_array ||
	    v8_type_of(r, bca, &type))
		return -1;
	/* a function with baseline code keeps its bytecode there */
	if (l->type_code && type == l->type_code &&
	    (v8_field(r, bca, l->code_bytecode, &bca) || v8_type_of(r, bca, &type)))
		return -1;
	if (type != l->type_bytecode_array ||
	    v8_field(r, bca, l->bca_positions, &table) ||
	    byte_array(r, table, &buf, &len))
		return -1;
	/* the frame's offset counts from the tagged array */
	if (have_off && off >= (uint32_t)l->bca_data - 1)
		target = off - (l->bca_data - 1);
	pos = raw_offset(table_raw(buf, len, target));
	free(buf);
	return pos;
}

/* ---- compiled code -------------------------------------------------------- */

/* A code object's instructions start aligned (64 bytes on x64; 32 is
 * checked), right after the header of the object holding them: the
 * code around a pc is found by trying the aligned addresses below it,
 * at most this far (V8's optimized functions are rarely past 64 KiB). */
#define V8_CODE_ALIGN 32
#define V8_CODE_SCAN (256u << 10)
#define V8_PAGE 4096


/* Code object code's instructions and kind. */
static int code_range(const struct v8_reader *r, uint64_t code,
		      struct v8_code *c)
{
	const struct v8_layout *l = r->l;
	uint32_t flags;
	int32_t size;
	uint16_t type;

	if (v8_type_of(r, code, &type) || type != l->type_code)
		return -EINVAL;
	if (l->code_instr_start) {
		if (v8_field(r, code, l->code_instr_start, &c->start))
			return -EFAULT;
	} else {
		c->start = code - 1 + l->code_header;
	}
	if (v8_rd(r, code - 1 + l->code_instr_size, &size, 4) ||
	    v8_rd(r, code - 1 + l->code_flags, &flags, 4) || size <= 0)
		return -EINVAL;
	c->code = code;
	c->size = (uint32_t)size;
	c->kind = flags & l->kind_mask;
	return 0;
}

/* The code object whose instructions hold pc: the first aligned address
 * at or below pc preceded by the header of an InstructionStream (its
 * map, then its Code) or, up to V8 11.0, of a Code, whose instructions
 * start there and reach past pc.  The pages below pc are read one at a
 * time; a header that is one but does not hold pc ends the search. */
int v8_code_at(const struct v8_reader *r, uint64_t pc, struct v8_code *c)
{
	const struct v8_layout *l = r->l;
	uint16_t holder = l->type_istream ? l->type_istream : l->type_code;
	unsigned hdr = l->type_istream ? l->istream_header : l->code_header;
	uint64_t page[V8_PAGE / 8], at = 1, a, h, w, next, lo;
	uint16_t type;

	if (!holder || hdr < 16 || hdr % 8 || !l->code_instr_size ||
	    !l->code_flags)
		return -ENOTSUP;
	lo = (pc > V8_CODE_SCAN ? pc - V8_CODE_SCAN : 0) + hdr;
	for (a = pc & ~(uint64_t)(V8_CODE_ALIGN - 1); a >= lo;
	     a -= V8_CODE_ALIGN) {
		h = a - hdr;
		/* a page a read (at: its address, 1 when none is held) */
		if (at == 1 || h < at || h + 16 > at + V8_PAGE) {
			at = h & ~(uint64_t)(V8_PAGE - 1);
			if (v8_rd(r, at, page, V8_PAGE))
				at = 1;
		}
		if (at == 1) {
			/* the page is not all mapped: this header alone */
			if (v8_rd(r, h, page, 16))
				return -EFAULT;
			w = page[0];
			next = page[1];
		} else {
			w = page[(h - at) / 8];
			next = page[(h - at) / 8 + 1];
		}
		/* a map, then a Code (or a Code's relocation info) */
		if ((w & 3) != 1 || (next & 3) != 1)
			continue;
		if (v8_rd(r, w - 1 + l->map_type, &type, 2) || type != holder)
			continue;
		if (code_range(r, l->type_istream ? next : h + 1, c))
			continue;
		if (c->start != a)
			continue;
		return pc < c->start + c->size ? 0 : -ENOENT;
	}
	return -ENOENT;
}

/* Tagged entry idx of a FixedArray-shaped array (a TrustedFixedArray,
 * ProtectedFixedArray and weak ones have its layout). */
static int array_get(const struct v8_reader *r, uint64_t arr, unsigned idx,
		     uint64_t *out)
{
	uint64_t len;

	if (v8_field(r, arr, 8, &len) || (len & 0xffffffff) || idx >= len >> 32)
		return -EINVAL;
	return v8_field(r, arr, r->l->fixed_data + 8 * idx, out);
}

/* The SharedFunctionInfo of an inlined function: the literal array's
 * entry (a weak reference, or V8 13's wrapper around it). */
static int inlined_sfi(const struct v8_reader *r, uint64_t literals,
		       int32_t idx, uint64_t *sfi)
{
	const struct v8_layout *l = r->l;
	uint16_t type;

	if (idx < 0 || array_get(r, literals, (unsigned)idx, sfi))
		return -EINVAL;
	*sfi &= ~2ULL; /* weak */
	if (l->type_sfi_wrapper && !v8_type_of(r, *sfi, &type) &&
	    type == l->type_sfi_wrapper)
		return v8_field(r, *sfi, l->sfi_wrapper_shared, sfi);
	return 0;
}

/* An InliningPosition: where in its caller a function was inlined (a
 * raw position, inlining id of the caller above bit 31) and its index in
 * the literal array. */
struct v8_inlining {
	int64_t position;
	int32_t fn;
	int32_t pad;
};

/* Optimized code c, running at pc, for the frame of function sfi: the
 * functions inlined at pc, innermost first, then sfi, each with the line
 * of its own position.  Returns how many, or an error. */
int v8_optimized_chain(const struct v8_reader *r, const struct v8_code *c,
		       uint64_t sfi, uint64_t pc, struct interp_symbol *out,
		       unsigned max)
{
	const struct v8_layout *l = r->l;
	uint64_t table, deopt, literals = 0, inl_arr, count, fsfi;
	uint8_t *buf = NULL, *inl = NULL;
	size_t len, inl_len = 0;
	unsigned id, n = 0;
	/* each level's script and position: the lines come last, a source
	 * read once for every level of it (v8_chain_lines) */
	uint64_t script[INTERP_CHAIN_MAX];
	int64_t raw, pos[INTERP_CHAIN_MAX];
	int err;

	if (max > INTERP_CHAIN_MAX)
		max = INTERP_CHAIN_MAX;

	err = v8_field(r, c->code, l->code_positions, &table);
	if (!err)
		err = byte_array(r, table, &buf, &len);
	if (err)
		return err;
	raw = table_raw(buf, len, (int64_t)(pc - c->start));
	free(buf);
	id = raw_inlining(raw);
	if (id) {
		err = v8_field(r, c->code, l->code_deopt, &deopt);
		if (!err)
			err = array_get(r, deopt, l->deopt_count_idx, &count);
		if (!err)
			err = array_get(r, deopt, l->deopt_literals_idx, &literals);
		if (!err)
			err = array_get(r, deopt, l->deopt_inlining_idx, &inl_arr);
		if (!err)
			err = byte_array(r, inl_arr, &inl, &inl_len);
		if (err)
			return err;
	}
	/* each id names its caller's, smaller: at most 16 bits of them */
	while (id && n < max) {
		struct v8_inlining ip;

		if ((size_t)id * sizeof(ip) > inl_len) {
			err = -EINVAL;
			break;
		}
		memcpy(&ip, inl + (id - 1) * sizeof(ip), sizeof(ip));
		err = inlined_sfi(r, literals, ip.fn, &fsfi);
		if (!err)
			err = v8_sfi_symbol(r, fsfi, &out[n], &script[n]);
		if (err)
			break;
		pos[n++] = raw_offset(raw);
		raw = ip.position;
		if (raw_inlining(raw) >= id) {
			err = -EINVAL;
			break;
		}
		id = raw_inlining(raw);
	}
	free(inl);
	if (err)
		return err;
	if (n < max) {
		err = v8_sfi_symbol(r, sfi, &out[n], &script[n]);
		if (err)
			return err;
		pos[n++] = raw_offset(raw);
	}
	v8_chain_lines(r, script, pos, out, n);
	return (int)n;
}

/* The bytecode a baseline (Sparkplug) frame runs: Sparkplug compiles
 * bytecode by bytecode, and its Code's position table holds the length
 * of each one's instructions (unsigned VLQs, the prologue's first): walk
 * it and the bytecodes (sizes from kBytecodeSizes, after a scaling
 * prefix 0..3) until the range holding pc_off (a return address's
 * offset, or the leaf's plus one).  -1: the function's entry. */
int64_t v8_baseline_bytecode(const struct v8_reader *r,
			     const struct v8_code *c, uint64_t bca,
			     uint64_t pc_off, bool *ok)
{
	const struct v8_layout *l = r->l;
	uint64_t table, n, end, d;
	uint8_t *map = NULL, *bc = NULL;
	size_t map_len, i = 0, o = 0;
	int64_t cur = -1;
	unsigned b, scale, prefix;

	*ok = false;
	if (v8_field(r, c->code, l->code_positions, &table) ||
	    byte_array(r, table, &map, &map_len))
		return -1;
	if (v8_field(r, bca, l->bca_length, &n) || (n & 0xffffffff) ||
	    !(n >>= 32) || n > V8_POS_TABLE_MAX || !(bc = malloc(n)) ||
	    v8_rd(r, bca - 1 + l->bca_data, bc, n) || !uvlq(map, map_len, &i, &end))
		goto out;
	while (end < pc_off) {
		if (o >= n || !uvlq(map, map_len, &i, &d))
			goto out;
		cur = (int64_t)o;
		b = bc[o];
		scale = 0;
		prefix = 0;
		if (b <= 3) { /* Wide, ExtraWide and their DebugBreak forms */
			scale = b == 0 || b == 2 ? 1 : 2;
			prefix = 1;
			if (o + 1 >= n)
				goto out;
			b = bc[o + 1];
		}
		if (b >= l->bc_count)
			goto out;
		o += prefix + l->bc_sizes[scale * l->bc_count + b];
		end += d;
	}
	*ok = true;
out:
	free(map);
	free(bc);
	return cur;
}
