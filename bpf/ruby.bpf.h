/* SPDX-License-Identifier: GPL-2.0 */
/* The Ruby unwinder: the walk is described in ruby.h. */
#ifndef EP_RUBY_BPF_H
#define EP_RUBY_BPF_H

#include "maps.bpf.h"
#include "ruby.h"

/* Control frames one rb_vm_exec invocation may push: Ruby calling Ruby
 * stays in one invocation, so deep recursion is one invocation's. */
#define RUBY_MAX_PER_CALL 256
/* Bytes of a control frame read at once (pc, sp, iseq, self, ep). */
#define RUBY_CFP_READ 40

HASH_MAP(ruby_procs, __u32, struct ruby_proc, 4096);

/* Its cursor in ustate.icur[INTERP_RUBY]: [0] the next control frame,
 * [1] set once the walk started, [2] the end of the VM stack (the first
 * address past the outermost control frame). */
struct ruby_loop_ctx {
	struct scratch *s;
	struct ruby_proc *p;
};

static __always_inline __u64 ruby_field(struct scratch *s, __u16 off)
{
	return interp_ibuf_u64(s, off, RUBY_CFP_READ);
}

/* The method entry (or cref) of a frame's local environment: a block's
 * is its method's, some environments up.  0 when not reached. */
static __always_inline __u64 ruby_local_me(__u64 ep, __u64 flags)
{
	__u64 me = 0;

	for (int k = 0; k < RUBY_MAX_EP_HOPS; k++) {
		if (flags & RUBY_ENV_FLAG_LOCAL)
			break;
		if (read_user(&ep, 8, ep + RUBY_EP_SPECVAL))
			return 0;
		ep &= ~3ull;
		if (!ep || read_user(&flags, 8, ep))
			return 0;
	}
	if (!(flags & RUBY_ENV_FLAG_LOCAL) ||
	    read_user(&me, 8, ep + RUBY_EP_ME_CREF))
		return 0;
	return me;
}

static long ruby_step(__u32 i, void *arg)
{
	struct ruby_loop_ctx *lc = arg;
	struct scratch *s = lc->s;
	struct ruby_proc *p = lc->p;
	__u64 *cur = s->st.icur[INTERP_RUBY];
	__u64 cfp = cur[0], iseq, ep, pc, flags = 0, me = 0, w;
	__u32 magic;

	/* the frames end where the thread's VM stack does */
	if (cfp + RUBY_CFP_READ > cur[2])
		cfp = 0;
	if (!interp_read_frame(s, INTERP_RUBY, cfp, RUBY_CFP_READ,
			       METRIC_ERR_RUBY_READ))
		return 1;
	pc = ruby_field(s, p->cfp_pc);
	iseq = ruby_field(s, p->cfp_iseq);
	ep = ruby_field(s, p->cfp_ep);
	cur[0] = cfp + p->cfp_size;
	if (!ep || read_user(&flags, 8, ep)) {
		interp_end(s, INTERP_RUBY, METRIC_ERR_RUBY_READ);
		return 1;
	}
	magic = (__u32)flags & RUBY_FRAME_MAGIC_MASK;
	w = 0; /* the frame's data (never 0: RUBY_FRAME_ISEQ, _CFUNC) */
	if (magic == RUBY_FRAME_MAGIC_CFUNC) {
		if (read_user(&me, 8, ep + RUBY_EP_ME_CREF))
			me = 0;
		w = RUBY_FRAME_CFUNC;
		iseq = me;
		pc = 0;
	} else if (iseq && magic != RUBY_FRAME_MAGIC_IFUNC &&
		   magic != RUBY_FRAME_MAGIC_DUMMY) {
		me = ruby_local_me(ep, flags);
		if (me >= RUBY_ME_LIMIT)
			me = 0;
		w = RUBY_FRAME_DATA(RUBY_FRAME_ISEQ, me);
	}
	if (w && !interp_push(s, INTERP_RUBY, w, iseq, pc, 2))
		return 1;
	/* VM_FRAME_FLAG_FINISH: the first frame of this rb_vm_exec
	 * invocation */
	return interp_step_end(s, flags & RUBY_FRAME_FLAG_FINISH, i,
			       RUBY_MAX_PER_CALL, METRIC_ERR_RUBY_TOO_DEEP);
}

/* Where glibc's TCB keeps the DTV pointer; the largest argument of a
 * TLS descriptor taken for a static TLS offset (glibc's static TLS is
 * the initial modules' blocks plus a surplus of a few KiB). */
#define RUBY_TCB_DTV (ARCH_X86_64 ? 8 : 0)
#define RUBY_TLS_STATIC_MAX (1ull << 24)

/* The thread's execution context, 0 when not found. */
static __always_inline __u64 ruby_find_ec(struct scratch *s,
					  struct ruby_proc *p)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 tp = task_tp(task), ec = 0, v = 0, dtv = 0;

	switch (p->ec_mode) {
	case RUBY_EC_TLSDESC:
		/* glibc's descriptor argument: a static TLS offset (blocks
		 * of the modules loaded at start, a few KiB above tp), else
		 * a pointer to {module id, offset in its block, generation} */
		if (read_user(&v, 8, p->ec_addr + 8))
			break;
		if (v < RUBY_TLS_STATIC_MAX) {
			if (read_user(&ec, 8, tp + v))
				ec = 0;
			break;
		}
		if (read_user(&dtv, 8, v + 8) || dtv != (__u64)p->ec_off ||
		    read_user(&v, 8, v))
			break;
		/* fall through: the module id in v */
	case RUBY_EC_DTV:
		/* glibc: the DTV in the TCB (x86-64: at tp + 8 after the
		 * self pointer; arm64: at tp), 16-byte entries indexed by
		 * module id, each the module's TLS block first */
		if ((p->ec_mode == RUBY_EC_DTV && read_user(&v, 8, p->ec_addr)) ||
		    !v || v > 0xffff || read_user(&dtv, 8, tp + RUBY_TCB_DTV) ||
		    read_user(&dtv, 8, dtv + v * 16) || !dtv || dtv == ~0ull ||
		    read_user(&ec, 8, dtv + p->ec_off))
			ec = 0;
		break;
	case RUBY_EC_TPOFF:
		if (read_user(&v, 8, p->ec_addr) ||
		    read_user(&ec, 8, tp + v))
			ec = 0;
		break;
	case RUBY_EC_STATIC:
		if (read_user(&ec, 8, tp + p->ec_off))
			ec = 0;
		break;
	case RUBY_EC_GLOBAL:
		if (read_user(&ec, 8, p->ec_addr))
			ec = 0;
		break;
	}
	if (ec || !p->vm_ptr || !p->vm_main_thread ||
	    s->hdr.tid != s->hdr.pid)
		return ec;
	/* no TLS: the main thread's, through the VM */
	if (read_user(&v, 8, p->vm_ptr) || !v ||
	    read_user(&v, 8, v + p->vm_main_thread) || !v ||
	    read_user(&ec, 8, v + p->th_ec))
		ec = 0;
	return ec;
}

/* YJIT code (3.1) runs in a frame its entry prologue made: r13, r12 and
 * rbx pushed below the return address into rb_vm_exec (or the
 * interpreter loop), and nothing else on the stack between its calls. */
static __always_inline int ruby_jit_unwind(struct scratch *s,
					   struct ruby_proc *p)
{
	__u64 sp = s->st.regs[RULE_REG_SP], w[4];

	/* YJIT's arm64 frames are not read yet: native unwinding */
	if (!ARCH_X86_64)
		return INTERP_NOT_HERE;
	/* other anonymous code (not YJIT's) is left to native unwinding */
	if (read_user(w, sizeof(w), sp) || w[3] < p->text_lo ||
	    w[3] >= p->text_hi)
		return INTERP_NOT_HERE;
	s->st.regs[RULE_REG_RBX] = w[0];
	s->st.regs[12] = w[1];
	s->st.regs[13] = w[2];
	s->st.regs[RULE_REG_SP] = sp + 32;
	s->st.pc = w[3];
	s->st.flags |= ST_RETURN_ADDR;
	metric_inc(s, METRIC_RUBY_JIT_FRAMES);
	return INTERP_UNWOUND;
}

static __always_inline int ruby_unwind(struct scratch *s, __u64 lookup)
{
	struct ruby_proc *p =
		INTERP_PROC(s, ruby_procs, RUBY, struct ruby_proc);
	__u64 *cur = s->st.icur[INTERP_RUBY];
	struct ruby_loop_ctx lc = { .s = s };
	__u64 ec, stack = 0, size = 0;

	if (!p)
		return INTERP_NOT_HERE;
	if (!s->st.cur.file_id)
		return p->yjit ? ruby_jit_unwind(s, p) : INTERP_NOT_HERE;
	if (lookup < p->loop_lo || lookup >= p->loop_hi)
		return INTERP_NOT_HERE;
	lc.p = p;
	if (!cur[1]) {
		cur[1] = 1;
		ec = ruby_find_ec(s, p);
		if (!ec) {
			interp_end(s, INTERP_RUBY, METRIC_ERR_RUBY_NO_EC);
			return INTERP_NOT_HERE;
		}
		if (read_user(&stack, 8, ec + p->ec_vm_stack) ||
		    read_user(&size, 8, ec + p->ec_vm_stack_size) ||
		    read_user(&cur[0], 8, ec + p->ec_cfp) || size > (1u << 28)) {
			interp_end(s, INTERP_RUBY, METRIC_ERR_RUBY_READ);
			return INTERP_NOT_HERE;
		}
		cur[2] = stack + size * 8;
	}
	s->st.interp_pushed = 0;
	bpf_loop(RUBY_MAX_PER_CALL, ruby_step, &lc, 0);
	return s->st.interp_pushed ? INTERP_REPLACED : INTERP_NOT_HERE;
}

#endif
