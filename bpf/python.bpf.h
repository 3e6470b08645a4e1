/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CPython unwinder (3.8 to 3.13), called through bpf/interp.bpf.h when a
 * frame's pc is in the interpreter loop (_PyEval_EvalFrameDefault and its
 * .cold part).  It pushes the Python frames that loop invocation runs and
 * hands back; the native unwinder then unwinds the loop's own frame with
 * its stack deltas.  Running inside the native program's loop (a nested
 * bpf_loop) costs no tail calls, so mixed stacks of any depth fit.
 *
 * The offsets come from userland (py_proc_fill, interp_python.c), whose
 * py_walk_stack() does this same walk and is the reference for it; the
 * layout notes are at struct py_proc in profiler.h.
 */
#ifndef EP_PYTHON_BPF_H
#define EP_PYTHON_BPF_H

#include "maps.bpf.h"
#include "python.h"

/* Python frames one loop invocation may push (3.11+ run many frames per
 * invocation; deeper ones are truncated, counted as ERR_PYTHON_TOO_DEEP). */
#define PY_MAX_PER_CALL 512

HASH_MAP(py_procs, __u32, struct py_proc, 4096);

/* Its cursor in struct ustate.icur[INTERP_PYTHON]. */
#define PY_CUR_FRAME 0	/* next Python frame to walk */
#define PY_CUR_TSTATE 1 /* the thread's PyThreadState, 0 until found */
/* 2..5: the process' interpreter loop, [eval_lo, eval_hi) and [cold_lo,
 * cold_hi), copied from py_procs at the sample's first frame in a file
 * holding CPython (eval_hi 0 until then; an empty range when the process
 * has none): its other frames in that file skip the hash lookup */
#define PY_CUR_EVAL 2
#define py_cur(st) ((st)->icur[INTERP_PYTHON])

/* The bytes of the thread state at ts that span its next, thread_id and
 * frame pointer, read into s->ibuf in one read (py_proc.ts_read_lo and
 * ts_read_len, which userland checked).  Returns 0 or -1. */
static __always_inline int py_read_tstate(struct scratch *s,
					  const struct py_proc *p, __u64 ts)
{
	__u32 n = p->ts_read_len;

	/* the bound on the register the call takes */
	barrier_var(n);
	if (n > PY_TSTATE_READ_MAX || n < 8 ||
	    bpf_probe_read_user(s->ibuf, n, (const void *)(ts + p->ts_read_lo)))
		return -1;
	return 0;
}

/* A field (at offset off in PyThreadState) of the thread state read last. */
static __always_inline __u64 py_tstate_field(struct scratch *s,
					     const struct py_proc *p, __u32 off)
{
	return interp_ibuf_u64(s, off - p->ts_read_lo, p->ts_read_len);
}

/* The thread-state scan's outcome, in py_cur()[PY_CUR_FRAME] while it
 * runs (the state it is at in [PY_CUR_TSTATE]). */
#define PY_SCAN_ON 0
#define PY_SCAN_FOUND 1
#define PY_SCAN_READ_ERR 2

struct py_ts_ctx {
	struct scratch *s;
	const struct py_proc *p;
	__u64 self;
};

/* One thread state of the list: stop at the current thread's, or at the
 * end.  A bpf_loop callback, which the verifier checks once: the scan
 * written as a loop was checked once per iteration (64) and tripled the
 * unwinder's verification.  What it carries from one call to the next
 * is in the scratch, not in the context on the stack: the verifier
 * tracks the stack's values, and checked the callback again for each
 * shape they took (nine times). */
static long py_ts_step(__u32 i, void *arg)
{
	struct py_ts_ctx *c = arg;
	__u64 *cur = py_cur(&c->s->st), next;

	if (py_read_tstate(c->s, c->p, cur[PY_CUR_TSTATE])) {
		cur[PY_CUR_FRAME] = PY_SCAN_READ_ERR;
		return 1;
	}
	if (py_tstate_field(c->s, c->p, c->p->ts_thread_id) == c->self) {
		cur[PY_CUR_FRAME] = PY_SCAN_FOUND;
		return 1;
	}
	next = py_tstate_field(c->s, c->p, c->p->ts_next);
	cur[PY_CUR_TSTATE] = next;
	return next ? 0 : 1;
}

/* Find the current thread's PyThreadState and its innermost frame, into
 * py_cur()[PY_CUR_TSTATE] and [PY_CUR_FRAME].  Returns 0 or a
 * METRIC_ERR_PYTHON_* code.  A global function: the verifier checks it
 * (and its callback) once, not on each of the paths of the unwinder that
 * reach it. */
__noinline int py_find_frame(struct scratch *s, struct py_proc *p)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct py_ts_ctx c = { .s = s, .p = p };
	__u64 interp, ts = 0, frame, *cur;

	if (!s || !p)
		return METRIC_ERR_PYTHON_READ;
	cur = py_cur(&s->st);
	c.self = task_tp(task) + (__s64)p->self_off;
	/* the state the thread's last sample here found, if it still
	 * names this thread: one read where the search makes two or more */
	ts = interp_thread_hint(s, INTERP_PYTHON);
	if (ts && !py_read_tstate(s, p, ts) &&
	    py_tstate_field(s, p, p->ts_thread_id) == c.self) {
		metric_inc(s, METRIC_THREAD_HINT_HITS);
		cur[PY_CUR_TSTATE] = ts;
		goto found;
	}
	interp = p->interp;
	if (!interp) {
		if (read_user_u64(p->runtime + p->rt_interp_main, &interp) ||
		    !interp)
			return METRIC_ERR_PYTHON_READ;
		/* 3.11+: _PyRuntime's own member, set once (struct py_proc) */
		if (p->version >= 0x030b)
			p->interp = interp;
	}
	if (read_user_u64(interp + p->is_tstate_head, &ts))
		return METRIC_ERR_PYTHON_READ;
	cur[PY_CUR_TSTATE] = ts;
	cur[PY_CUR_FRAME] = PY_SCAN_ON;
	if (ts)
		bpf_loop(PY_TSTATE_SCAN_MAX, py_ts_step, &c, 0);
	if (cur[PY_CUR_FRAME] != PY_SCAN_FOUND) {
		cur[PY_CUR_TSTATE] = 0;
		return cur[PY_CUR_FRAME] == PY_SCAN_READ_ERR ?
			       METRIC_ERR_PYTHON_READ :
			       METRIC_ERR_PYTHON_NO_TSTATE;
	}
found:
	interp_thread_found(s, INTERP_PYTHON, cur[PY_CUR_TSTATE]);
	/* the found state's block is the last one read */
	frame = py_tstate_field(s, p, p->ts_frame);
	/* 3.11, 3.12: the _PyCFrame is a local of the innermost loop
	 * invocation, on the native stack */
	if (p->cf_current_frame != PY_OFF_NONE && frame &&
	    stk_read_u64(s, frame + p->cf_current_frame, &frame)) {
		cur[PY_CUR_TSTATE] = 0;
		return METRIC_ERR_PYTHON_READ;
	}
	cur[PY_CUR_FRAME] = frame;
	return 0;
}

struct py_loop_ctx {
	struct scratch *s;
	struct py_proc *p;
};

/* A field of the frame read at offset base of s->iblk, at a
 * userland-supplied offset below size (py_proc.f_read_size). */
#define PY_FIELD(s, off, type, out)                                            \
	interp_blk_field(s, base, size, off, type, out)

/* One Python frame.  Returns 1 to stop: the invocation's frames are done
 * (or an error ended the walk). */
static long py_step(__u32 i, void *arg)
{
	struct py_loop_ctx *lc = arg;
	struct scratch *s = lc->s;
	struct py_proc *p = lc->p;
	struct ustate *st = &s->st;
	__u64 cur = py_cur(st)[PY_CUR_FRAME], next = 0, code = 0, ptr = 0;
	__u32 size = p->f_read_size, instr = PY_INSTR_NONE;
	__u8 owner = 0, is_entry = 0;
	__s32 lasti = 0;
	int base;

	if (!cur) {
		interp_end(s, INTERP_PYTHON, 0);
		return 1;
	}
	/* userland's bound (py_info_check): an error here, not a clamp,
	 * which would give the verifier two states of size to check the
	 * walk with */
	if (size > PY_FRAME_READ_MAX)
		goto bad;
	/* 3.11+: a thread's frames are pushed on its data stack, the
	 * caller's below the callee's: read in blocks */
	base = interp_read(s, cur, size, p->frame_model != PY_FRAMES_OBJECT);
	if (base < 0) {
		push_error(s, METRIC_ERR_PYTHON_READ);
		interp_end(s, INTERP_PYTHON, 0);
		return 1;
	}
	if (!PY_FIELD(s, p->f_back, __u64, next))
		goto bad;
	if (p->frame_model == PY_FRAMES_SHIM) {
		if (!PY_FIELD(s, p->f_owner, __u8, owner))
			goto bad;
		if (owner == PY_OWNED_BY_CSTACK) {
			/* the shim below this invocation's first frame */
			py_cur(st)[PY_CUR_FRAME] = next;
			return 1;
		}
	}
	if (!PY_FIELD(s, p->f_code, __u64, code))
		goto bad;
	if (p->frame_model == PY_FRAMES_OBJECT) {
		if (!PY_FIELD(s, p->f_lasti, __s32, lasti))
			goto bad;
		if (lasti >= 0)
			instr = (__u32)lasti >> (p->lasti_shift & 7);
	} else {
		__s64 d;

		if (!PY_FIELD(s, p->f_lasti, __u64, ptr))
			goto bad;
		d = (__s64)(ptr - code - p->co_code_adaptive);
		if (d >= 0)
			instr = (__u32)((__u64)d >> 1);
	}
	if (!interp_push(s, INTERP_PYTHON, instr, code, 0, 1))
		return 1;
	py_cur(st)[PY_CUR_FRAME] = next;
	if (p->frame_model == PY_FRAMES_OBJECT)
		return 1; /* one frame per loop invocation */
	/* 3.11, 3.12: the entry frame is the first of this invocation */
	if (p->frame_model == PY_FRAMES_ENTRY &&
	    !PY_FIELD(s, p->f_is_entry, __u8, is_entry))
		goto bad;
	return interp_step_end(s, is_entry, i, PY_MAX_PER_CALL,
			       METRIC_ERR_PYTHON_TOO_DEEP);
bad:
	push_error(s, METRIC_ERR_PYTHON_LAYOUT);
	interp_end(s, INTERP_PYTHON, 0);
	return 1;
}

/* Push the Python frames of the loop invocation at the current native
 * frame.  Returns how many were pushed. */
static __always_inline __u32 py_unwind(struct scratch *s, struct py_proc *p)
{
	struct ustate *st = &s->st;
	struct py_loop_ctx lc = { .s = s, .p = p };
	__u32 err;

	if (!py_cur(st)[PY_CUR_TSTATE]) {
		err = py_find_frame(s, p);
		if (err) {
			interp_end(s, INTERP_PYTHON, err);
			return 0;
		}
	}
	st->interp_pushed = 0;
	bpf_loop(PY_MAX_PER_CALL, py_step, &lc, 0);
	return st->interp_pushed;
}

/* The entry bpf/interp.bpf.h calls at a frame of a file holding CPython:
 * lookup is the frame's pc (minus one for a return address). */
static __always_inline int python_unwind(struct scratch *s, __u64 lookup)
{
	__u64 *c = py_cur(&s->st);
	struct py_proc *p = NULL;

	if (!c[PY_CUR_EVAL + 1]) {
		p = INTERP_PROC(s, py_procs, PYTHON, struct py_proc);
		c[PY_CUR_EVAL] = c[PY_CUR_EVAL + 1] = ~0ULL;
		c[PY_CUR_EVAL + 2] = c[PY_CUR_EVAL + 3] = 0;
		if (p && p->eval_hi) {
			c[PY_CUR_EVAL] = p->eval_lo;
			c[PY_CUR_EVAL + 1] = p->eval_hi;
			c[PY_CUR_EVAL + 2] = p->cold_lo;
			c[PY_CUR_EVAL + 3] = p->cold_hi;
		}
	}
	/* is pc in the process' interpreter loop? */
	if (!(lookup >= c[PY_CUR_EVAL] && lookup < c[PY_CUR_EVAL + 1]) &&
	    !(lookup >= c[PY_CUR_EVAL + 2] && lookup < c[PY_CUR_EVAL + 3]))
		return INTERP_NOT_HERE;
	/* the entry looked up above when this is the sample's first frame
	 * in the file (a sample in the loop itself), else once more (from
	 * the CPU's copy while the process' entry is unchanged) */
	if (!p)
		p = INTERP_PROC(s, py_procs, PYTHON, struct py_proc);
	if (!p || py_unwind(s, p) == 0)
		return INTERP_NOT_HERE;
	return INTERP_REPLACED;
}

#endif
