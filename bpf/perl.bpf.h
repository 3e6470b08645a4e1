/* SPDX-License-Identifier: GPL-2.0 */
/* The Perl unwinder: the walk is described in perl.h. */
#ifndef EP_PERL_BPF_H
#define EP_PERL_BPF_H

#include "maps.bpf.h"
#include "perl.h"

/* Contexts of one stack info examined per runops frame. */
#define PERL_MAX_PER_CALL 256
/* Stack infos looked at per runops frame for one with frames. */
#define PERL_STACKINFOS 4

HASH_MAP(perl_procs, __u32, struct perl_proc, 4096);

/* Cursor in ustate.icur[INTERP_PERL]: [0] the stack info to walk next,
 * [1] set once started, [2] the COP of the next frame, [3] the context
 * index to look at next in [0] (+1; 0 = from si_cxix), [4] the contexts
 * of the stack info walked, [5] whether it is the main one.  The loops
 * carry their state there, not in their context on the stack: the
 * verifier tracks the stack's values, and checks a callback again for
 * each shape they take. */
#define PERL_CUR_CXSTACK 4
#define PERL_CUR_MAIN_SI 5
struct perl_loop_ctx {
	struct scratch *s;
	struct perl_proc *p;
};

static __always_inline bool perl_push(struct scratch *s, struct perl_proc *p,
				      __u64 cv, __u64 cop)
{
	__u32 line = 0;

	if (cop)
		read_user(&line, 4, cop + p->walk.cop_line);
	return interp_push(s, INTERP_PERL, line, cv, cop, 2);
}

static long perl_step(__u32 i, void *arg)
{
	struct perl_loop_ctx *lc = arg;
	struct scratch *s = lc->s;
	struct perl_proc *p = lc->p;
	__u64 *cur = s->st.icur[INTERP_PERL];
	__u64 cx, cv = 0, oldcop = 0;
	__s64 idx = (__s64)cur[3] - 1;
	__u8 type = 0;

	if (idx < 0)
		return 1;
	cx = cur[PERL_CUR_CXSTACK] + (__u64)idx * p->walk.cx_size;
	if (read_user(&type, 1, cx) || read_user(&oldcop, 8, cx + p->walk.cx_oldcop)) {
		metric_inc(s, METRIC_ERR_PERL_READ);
		cur[3] = 0;
		return 1;
	}
	type &= PERL_CXTYPEMASK;
	if (type == PERL_CXT_SUB || type == PERL_CXT_FORMAT ||
	    type == PERL_CXT_EVAL) {
		if (type != PERL_CXT_EVAL && read_user(&cv, 8, cx + p->walk.cx_cv))
			cv = 0;
		/* an eval frame: no CV; userland names it "(eval)" */
		if (!perl_push(s, p, type == PERL_CXT_EVAL ? 1 : cv, cur[2]))
			return 1;
		cur[2] = oldcop;
	} else if (idx == 0 && !cur[PERL_CUR_MAIN_SI]) {
		/* the block a nested stack info started in (sort's): where
		 * the frame below it is */
		cur[2] = oldcop;
	}
	cur[3] = (__u64)idx;
	return interp_step_end(s, false, i, PERL_MAX_PER_CALL,
			       METRIC_ERR_PERL_TOO_DEEP);
}

/* One stack info, from cur[0]: its contexts' frames (perl_step), then
 * on to the one below it, until a frame is pushed or the main one is
 * done.  A bpf_loop callback: the verifier checks it once, not once per
 * stack info. */
static long perl_stackinfo(__u32 k, void *arg)
{
	struct perl_loop_ctx *lc = arg;
	struct scratch *s = lc->s;
	struct perl_proc *p = lc->p;
	__u64 *cur = s->st.icur[INTERP_PERL];
	__u64 si = cur[0], cxstack = 0, prev = 0;
	__s32 cxix = -1, type = 0;

	if (!si || read_user(&cxstack, 8, si + p->walk.si_cxstack) ||
	    read_user(&prev, 8, si + p->walk.si_prev) ||
	    read_user(&cxix, 4, si + p->walk.si_cxix) ||
	    read_user(&type, 4, si + p->walk.si_type)) {
		/* a stack info not there (si 0) ends the walk, unread */
		interp_end(s, INTERP_PERL, si ? METRIC_ERR_PERL_READ : 0);
		return 1;
	}
	cur[PERL_CUR_CXSTACK] = cxstack;
	cur[PERL_CUR_MAIN_SI] = type == PERL_SI_MAIN;
	cur[3] = cxix >= 0 ? (__u64)cxix + 1 : 0;
	bpf_loop(PERL_MAX_PER_CALL, perl_step, lc, 0);
	cur[0] = prev;
	if (cur[PERL_CUR_MAIN_SI]) {
		/* the program's own frame, where it is now */
		perl_push(s, p, 0, cur[2]);
		interp_end(s, INTERP_PERL, 0);
		return 1;
	}
	return s->st.interp_pushed ? 1 : 0;
}

static __always_inline int perl_unwind(struct scratch *s, __u64 lookup)
{
	struct perl_proc *p =
		INTERP_PROC(s, perl_procs, PERL, struct perl_proc);
	__u64 *cur = s->st.icur[INTERP_PERL];
	struct perl_loop_ctx lc = { .s = s };
	__u64 interp = 0, curcop_at, si_at;

	if (!p || lookup < p->loop_lo || lookup >= p->loop_hi)
		return INTERP_NOT_HERE;
	lc.p = p;
	if (!cur[1]) {
		cur[1] = 1;
		if (p->g_curstackinfo) {
			/* non-threaded: one interpreter, its variables global */
			curcop_at = p->g_curcop;
			si_at = p->g_curstackinfo;
		} else {
			if (p->tsd_mul) {
				/* the thread's own interpreter: pthread_getspecific
				 * (PL_thr_key), as glibc lays it out */
				struct task_struct *task = bpf_get_current_task_btf();
				__u32 key = 32;

				read_user(&key, 4, p->thr_key);
				if (key >= 32 ||
				    read_user(&interp, 8,
					      task_tp(task) + (__s64)p->tsd_off +
						      (__u64)p->tsd_mul * key +
						      p->tsd_val))
					interp = 0;
			} else if (s->hdr.tid == s->hdr.pid) {
				/* PL_curinterp: the main thread's */
				read_user(&interp, 8, p->interp);
			}
			if (!interp) {
				interp_end(s, INTERP_PERL, 0);
				return INTERP_NOT_HERE;
			}
			curcop_at = interp + p->walk.i_curcop;
			si_at = interp + p->walk.i_curstackinfo;
		}
		if (read_user(&cur[2], 8, curcop_at) ||
		    read_user(&cur[0], 8, si_at)) {
			interp_end(s, INTERP_PERL, METRIC_ERR_PERL_READ);
			return INTERP_NOT_HERE;
		}
	}
	s->st.interp_pushed = 0;
	/* a stack info without frames (sort's, while the sort itself runs
	 * in C) has no runops of its own here: go on to the next */
	bpf_loop(PERL_STACKINFOS, perl_stackinfo, &lc, 0);
	return s->st.interp_pushed ? INTERP_REPLACED : INTERP_NOT_HERE;
}

#endif
