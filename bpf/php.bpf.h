/* SPDX-License-Identifier: GPL-2.0 */
/* The PHP unwinder: the walk is described in php.h. */
#ifndef EP_PHP_BPF_H
#define EP_PHP_BPF_H

#include "maps.bpf.h"
#include "php.h"

/* PHP frames one execute_ex invocation may push: PHP calling PHP stays
 * in one invocation, so deep recursion is one invocation's frames. */
#define PHP_MAX_PER_CALL 256

HASH_MAP(php_procs, __u32, struct php_proc, 4096);

/* Its cursor in ustate.icur[INTERP_PHP]: [0] the next frame, [1] set once
 * the walk started, [2] set when JIT code pushed the frames of the
 * execute_ex frame that comes next. */
struct php_loop_ctx {
	struct scratch *s;
	struct php_proc *p;
};

_Static_assert(PHP_ED_READ >= 8 && PHP_ED_READ <= INTERP_BUF_MAX,
	       "interp_ibuf_u64's bound");
static __always_inline __u64 php_field(struct scratch *s, __u16 off)
{
	return interp_ibuf_u64(s, off, PHP_ED_READ);
}

static long php_step(__u32 i, void *arg)
{
	struct php_loop_ctx *lc = arg;
	struct scratch *s = lc->s;
	struct php_proc *p = lc->p;
	__u64 *cur = s->st.icur[INTERP_PHP];
	__u64 ed = cur[0], func, opline;
	__u32 type_info, line = 0;
	__u8 type = 0;

	if (!interp_read_frame(s, INTERP_PHP, ed, PHP_ED_READ,
			       METRIC_ERR_PHP_READ))
		return 1;
	func = php_field(s, p->ed_func);
	opline = php_field(s, p->ed_opline);
	type_info = (__u32)php_field(s, p->ed_type_info);
	cur[0] = php_field(s, p->ed_prev);
	if (func) {
		if (read_user(&type, 1, func + p->fn_type))
			type = 0;
		if (type != PHP_INTERNAL_FUNCTION && opline &&
		    read_user(&line, 4, opline + p->op_lineno))
			line = 0;
		if (!interp_push(s, INTERP_PHP, PHP_FRAME_DATA(line, type),
				 func, 0, 1))
			return 1;
	}
	/* ZEND_CALL_TOP: the first frame of this execute_ex invocation */
	return interp_step_end(s, type_info & PHP_CALL_TOP, i,
			       PHP_MAX_PER_CALL, METRIC_ERR_PHP_TOO_DEEP);
}

static __always_inline int php_unwind(struct scratch *s, __u64 lookup)
{
	struct php_proc *p = INTERP_PROC(s, php_procs, PHP, struct php_proc);
	__u64 *cur = s->st.icur[INTERP_PHP];
	struct php_loop_ctx lc = { .s = s };
	bool jit;

	if (!p)
		return INTERP_NOT_HERE;
	jit = !s->st.cur.file_id;
	if (jit ? !p->resume_pc :
		  (lookup < p->loop_lo || lookup >= p->loop_hi))
		return INTERP_NOT_HERE;
	if (!jit && cur[2]) {
		/* the execute_ex frame whose frames its JIT code pushed:
		 * unwound natively, not shown twice */
		cur[2] = 0;
		return INTERP_REPLACED;
	}
	lc.p = p;
	if (!cur[1]) {
		cur[1] = 1;
		if (read_user(&cur[0], 8, p->current)) {
			interp_end(s, INTERP_PHP, METRIC_ERR_PHP_READ);
			return INTERP_NOT_HERE;
		}
	}
	s->st.interp_pushed = 0;
	bpf_loop(PHP_MAX_PER_CALL, php_step, &lc, 0);
	if (!jit)
		return s->st.interp_pushed ? INTERP_REPLACED : INTERP_NOT_HERE;
	/* JIT code runs on execute_ex's frame: go on from its body */
	metric_inc(s, METRIC_PHP_JIT_FRAMES);
	s->st.pc = p->resume_pc;
	/* x86-64's JIT code keeps the body's sp (it reuses a red zone
	 * execute_ex reserves); aarch64's has none and moves sp, while x29
	 * still points at execute_ex's frame record */
	if (p->fp_sp)
		s->st.regs[R_SP] = s->st.regs[R_FP] - p->fp_sp;
	s->st.flags &= ~ST_RETURN_ADDR;
	cur[2] = 1;
	return INTERP_UNWOUND;
}

#endif
