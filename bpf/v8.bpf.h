/* SPDX-License-Identifier: GPL-2.0 */
/* The V8 unwinder: the walk is described in v8.h. */
#ifndef EP_V8_BPF_H
#define EP_V8_BPF_H

#include "maps.bpf.h"
#include "v8.h"

HASH_MAP(v8_procs, __u32, struct v8_proc, 4096);

/* The window word at fp + off (off a multiple of 8 in the window). */
_Static_assert(V8_WIN_BYTES >= 8 && V8_WIN_BYTES <= INTERP_BUF_MAX,
	       "interp_ibuf_u64's bound");
static __always_inline __u64 v8_slot(struct scratch *s, int off)
{
	return interp_ibuf_u64(s, (__u32)(off + V8_WIN_BELOW), V8_WIN_BYTES);
}

/* One V8 frame per call: the native loop calls again at the caller. */
static __always_inline int v8_unwind(struct scratch *s, __u64 lookup)
{
	struct v8_proc *p = INTERP_PROC(s, v8_procs, V8, struct v8_proc);
	__u64 fp, sp, marker, fn, next_fp, ra, bc, off;

	if (!p)
		return INTERP_NOT_HERE;
	/* in the node binary (or libnode): only its embedded builtins, by
	 * file address (V8 may map them a second time, next to its JIT
	 * code, for short calls); anonymous code of the process: its JIT's */
	if (s->st.cur.file_id && (lookup - s->st.cur.bias < p->blob_lo ||
				  lookup - s->st.cur.bias >= p->blob_hi))
		return INTERP_NOT_HERE;
	fp = s->st.regs[R_FP];
	sp = s->st.regs[R_SP];
	if ((fp & 7) || fp < sp || fp - sp > (1u << 20)) {
		metric_inc(s, METRIC_ERR_V8_FP_BAD);
		return INTERP_NOT_HERE;
	}
	if (read_user(s->ibuf, V8_WIN_BYTES, fp - V8_WIN_BELOW)) {
		metric_inc(s, METRIC_ERR_V8_READ);
		return INTERP_NOT_HERE;
	}
	next_fp = v8_slot(s, 0);
	ra = v8_slot(s, 8);
	if (next_fp && next_fp <= fp) {
		metric_inc(s, METRIC_ERR_V8_FP_BAD);
		return INTERP_NOT_HERE;
	}
	marker = v8_slot(s, p->off_context);
	fn = v8_slot(s, p->off_function);
	if ((marker & 1) && (fn & 3) == 1) {
		/* a JavaScript frame: context and function are heap objects */
		bc = v8_slot(s, p->off_bytecode_array);
		off = v8_slot(s, p->off_bytecode_offset);
		/* the leaf runs a bytecode handler when the interpreter's
		 * array register holds this frame's array: its offset
		 * register is current (untagged), the slot is not */
		if (!s->hdr.n_frames && p->reg_bc_array < RULE_REG_COUNT &&
		    p->reg_bc_offset < RULE_REG_COUNT && (bc & 3) == 1 &&
		    s->st.regs[p->reg_bc_array & (RULE_REG_COUNT - 1)] == bc)
			off = s->st.regs[p->reg_bc_offset & (RULE_REG_COUNT - 1)]
			      << 32;
		/* in JIT code (anonymous memory) the pc says where: its
		 * source position and what was inlined there */
		off = s->st.cur.file_id ?
			V8_FRAME_DATA(off >> 32, !(off & 0xffffffffULL)) :
			V8_FRAME_PC(lookup);
		if (!interp_push(s, INTERP_V8, off, fn,
				 (bc & 3) == 1 ? bc : 0, 2))
			return INTERP_NOT_HERE;
	} else {
		metric_inc(s, METRIC_V8_TYPED_FRAMES);
	}
	s->st.regs[R_SP] = fp + 16;
	s->st.regs[R_FP] = next_fp;
	s->st.pc = ra;
	s->st.flags |= ST_RETURN_ADDR;
	return INTERP_UNWOUND;
}

#endif
