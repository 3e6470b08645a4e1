/* SPDX-License-Identifier: GPL-2.0 */
/* The HotSpot unwinder: the walk is described in hotspot.h. */
#ifndef EP_HOTSPOT_BPF_H
#define EP_HOTSPOT_BPF_H

#include "maps.bpf.h"
#include "hotspot.h"

HASH_MAP(hotspot_procs, __u32, struct hotspot_proc, 1024);

/* "nmethod\0" as a little-endian word: the name of every nmethod blob */
#define HOTSPOT_NMETHOD_NAME 0x00646f6874656d6eULL
/* "native n", the first word of a native method wrapper's "native nmethod" */
#define HOTSPOT_NATIVE_NAME 0x6e2065766974616eULL
/* A frame larger than this (words) is not one */
#define HOTSPOT_FRAME_WORDS_MAX 65536
/* The template interpreter keeps the bcp in a register at the leaf: r13
 * on x86-64, x22 (rbcp) on arm64; its ustate slot (bpf/arch.bpf.h) */
#if ARCH_X86_64
#define HOTSPOT_BCP_SLOT 13
#else
#define HOTSPOT_BCP_SLOT ARCH_X_SLOT(22)
#endif

/* An interpreted frame: Method* and bcp from its slots; the caller's sp
 * is the frame's sender sp (a compiled caller's own sp, before a c2i
 * adapter extended it), rbp and the return address are at rbp. */
static __always_inline int hotspot_interpreted(struct scratch *s,
					       struct hotspot_proc *p)
{
	__u64 fp = s->st.regs[R_FP], method = 0, bcp = 0, sender = 0;
	__u64 frame[2];

	if (!fp || read_user(&method, 8, fp + p->method_slot) ||
	    read_user(&bcp, 8, fp + p->bcp_slot) ||
	    read_user(&sender, 8, fp + p->sender_sp_slot) ||
	    read_user(frame, 16, fp)) {
		metric_inc(s, METRIC_ERR_HOTSPOT_READ);
		return INTERP_NOT_HERE;
	}
	if (!method)
		return INTERP_NOT_HERE;
	/* at the leaf the interpreter keeps the bcp in a register (r13,
	 * x22) and writes its slot only at calls: both go, userland takes
	 * the one inside the method's bytecodes */
	if (!(s->st.flags & ST_RETURN_ADDR)) {
		if (!interp_push(s, INTERP_HOTSPOT,
				 s->st.regs[HOTSPOT_BCP_SLOT], method, bcp, 2))
			return INTERP_NOT_HERE;
	} else if (!interp_push(s, INTERP_HOTSPOT, bcp, method, 0, 1)) {
		return INTERP_NOT_HERE;
	}
	if (sender < fp + 16 || sender - fp > (1u << 20))
		sender = fp + 16;
	s->st.regs[R_SP] = sender;
	s->st.regs[R_FP] = frame[0];
	s->st.pc = strip_ra(frame[1]);
	s->st.flags |= ST_RETURN_ADDR;
	return INTERP_UNWOUND;
}

/* A compiled blob's frame size in words, from the blob: 0 when it cannot
 * be read or is out of range. */
static __always_inline __s32 hotspot_frame_words(struct hotspot_proc *p,
						 __u64 blob)
{
	__s32 words = 0;

	if (read_user(&words, 4, blob + p->blob_frame_size) ||
	    words <= 0 || words > HOTSPOT_FRAME_WORDS_MAX)
		return 0;
	return words;
}

#if !ARCH_X86_64
/*
 * A native method's wrapper at the sample, on arm64: it is walked by x29,
 * which is its own only between its enter and leave (its frame record at
 * the top of its frame).  Before enter, and after leave, x29 is its
 * caller's, which compiled code leaves to whoever set it last (an
 * interpreted frame further up, without -XX:+PreserveFramePointer), and
 * the walk would skip the compiled callers or stop (err_fp_bad: 0.6% of
 * a JIT JVM's samples in the guests).  There sp is the caller's and the
 * return address still in x30.  The frame is taken as built when x29
 * points into it, [sp, sp + frame size).
 */
static __always_inline int hotspot_wrapper_leaf(struct scratch *s,
						struct hotspot_proc *p,
						__u64 blob)
{
	__u64 fp = s->st.regs[R_FP], sp = s->st.regs[R_SP];
	__s32 words;

	if (!(s->st.flags & ST_LR_VALID) ||
	    !(words = hotspot_frame_words(p, blob)) ||
	    (fp >= sp && fp < sp + (__u64)words * 8))
		return INTERP_REPLACED;
	s->st.pc = strip_ra(s->st.regs[R_LR]);
	s->st.flags |= ST_RETURN_ADDR;
	s->st.flags &= ~ST_LR_VALID;
	return INTERP_UNWOUND;
}
#endif

/* The segment-map walk carries its state in the runtime's cursor row
 * (the segment, and the last hop: 0 when the blob's first segment is
 * found, 0xff when the walk failed), not in its context on the stack:
 * the verifier tracks the stack's values and checked the callback again
 * for each (thirteen times). */
#define HS_CUR_SEG 0
#define HS_CUR_HOP 1
struct hotspot_hops {
	struct scratch *s;
	__u64 segmap;
};

/* One hop back through the segment map toward the blob's first segment
 * (a bpf_loop callback: the verifier checks it once, not each hop). */
static long hotspot_segmap_hop(__u32 i, void *arg)
{
	struct hotspot_hops *hs = arg;
	__u64 *cur = hs->s->st.icur[INTERP_HOTSPOT], seg = cur[HS_CUR_SEG];
	__u8 hop = 0;

	if (read_user(&hop, 1, hs->segmap + seg) ||
	    hop == 0xff || (hop && seg < hop)) {
		cur[HS_CUR_HOP] = 0xff;
		return 1;
	}
	cur[HS_CUR_HOP] = hop;
	if (!hop)
		return 1;
	cur[HS_CUR_SEG] = seg - hop;
	return 0;
}

/* A pc in a code heap: its blob by the segment map; an nmethod is unwound
 * by its frame size, anything else is named and left to the native step
 * (the frame-pointer walk of anonymous code). */
static __always_inline int hotspot_compiled(struct scratch *s,
					    struct hotspot_proc *p,
					    __u64 lookup)
{
	struct hotspot_heap *h = NULL;
	__u64 seg, blob, name = 0, nm_name = 0, method = 0, sp, frame[2];
	__s32 words = 0;
	struct hotspot_hops hs = { .s = s };
	__u64 *cur = s->st.icur[INTERP_HOTSPOT];
	__u32 shift;
	int i;

	for (i = 0; i < HOTSPOT_HEAPS; i++)
		if (lookup >= p->heaps[i].lo && lookup < p->heaps[i].hi) {
			h = &p->heaps[i];
			break;
		}
	if (!h)
		return INTERP_NOT_HERE;
	shift = h->log2 & 31;
	seg = (lookup - h->lo) >> shift;
	hs.segmap = h->segmap;
	cur[HS_CUR_SEG] = seg;
	cur[HS_CUR_HOP] = 0xff;
	bpf_loop(HOTSPOT_SEGMAP_HOPS, hotspot_segmap_hop, &hs, 0);
	if (cur[HS_CUR_HOP])
		return INTERP_NOT_HERE;
	seg = cur[HS_CUR_SEG];
	blob = h->lo + (seg << shift) + p->heapblock;
	if (read_user(&name, 8, blob + p->blob_name) ||
	    read_user(&nm_name, 8, name))
		return INTERP_NOT_HERE;
	if (nm_name != HOTSPOT_NMETHOD_NAME) {
		/* a stub, an adapter, a native wrapper: named by userland
		 * from its blob's name, unwound as native code is */
		if (!push_frame(s, FRAME_WORD(FRAME_INTERP(INTERP_HOTSPOT), 0,
					      lookup),
				name, blob | HOTSPOT_COMPILED | HOTSPOT_STUB, 2))
			return INTERP_NOT_HERE;
#if !ARCH_X86_64
		if (nm_name == HOTSPOT_NATIVE_NAME)
			return hotspot_wrapper_leaf(s, p, blob);
#endif
		return INTERP_REPLACED;
	}
	words = hotspot_frame_words(p, blob);
	if (!words ||
	    read_user(&method, 8, blob + p->nm_method))
		return INTERP_NOT_HERE;
	sp = s->st.regs[R_SP] + (__u64)words * 8;
	if (read_user(frame, 16, sp - 16)) {
		metric_inc(s, METRIC_ERR_HOTSPOT_READ);
		return INTERP_NOT_HERE;
	}
	if (!interp_push(s, INTERP_HOTSPOT, lookup, method,
			 blob | HOTSPOT_COMPILED, 2))
		return INTERP_NOT_HERE;
	metric_inc(s, METRIC_HOTSPOT_COMPILED);
	s->st.regs[R_SP] = sp;
	s->st.regs[R_FP] = frame[0];
	s->st.pc = strip_ra(frame[1]);
	s->st.flags |= ST_RETURN_ADDR;
	return INTERP_UNWOUND;
}

static __always_inline int hotspot_unwind(struct scratch *s, __u64 lookup)
{
	struct hotspot_proc *p;

	/* only anonymous code: libjvm.so's own frames are native */
	if (s->st.cur.file_id)
		return INTERP_NOT_HERE;
	p = INTERP_PROC(s, hotspot_procs, HOTSPOT, struct hotspot_proc);
	if (!p) {
		/* a JVM attached before its interpreter existed: ask for
		 * a sync (rate-limited), so its tables are read again */
		metric_inc(s, METRIC_HOTSPOT_NOT_READY);
		report_pid(s, s->st.pid, PEV_UNKNOWN_PC, lookup, false);
		return INTERP_NOT_HERE;
	}
	if (lookup >= p->interp_lo && lookup < p->interp_hi)
		return hotspot_interpreted(s, p);
	return hotspot_compiled(s, p, lookup);
}

#endif
