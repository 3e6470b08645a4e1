// SPDX-License-Identifier: GPL-2.0
/*
 * The sampling entry point and the native unwinder.
 *
 * entry (perf_event, every CPU): filters, header, kernel stack, user
 * registers; then tail-calls the native unwinder.
 * native: one bpf_loop over frames.  Per frame: find the mapping of the pc
 * (LPM trie, cached across frames of one file), find the stack-delta row
 * (hash of 64 KiB pages, then a 16-step binary search over the page's
 * rows), evaluate its rule, read the return address.  Files without CFI
 * and processes userland has not loaded yet are walked by frame pointer.
 * When the pc enters an interpreter loop the matching interpreter unwinder
 * is tail-called; it hands back here.
 */
#include "maps.bpf.h"
#include "python.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* User addresses on x86-64 stop at 2^47 (4-level paging) or 2^56. */
#define USER_MAX 0x00ffffffffffffffULL
#define PC_MIN 0x1000
/* A frame-pointer walk accepts a new frame only this far above sp. */
#define FP_MAX_JUMP (8ULL << 20)

/* rt_sigframe: at the trampoline, sp points at the ucontext; its
 * sigcontext (uc_mcontext) starts 40 bytes in (uc_flags, uc_link,
 * uc_stack), with rbp, rsp and rip at 80, 120 and 128 in it. */
#define SIGFRAME_MCONTEXT 40
#define SIGCTX_RBP 80
#define SIGCTX_RSP 120
#define SIGCTX_RIP 128

/* Row idx of a chunk (an inner map of delta_rows). */
static __always_inline __u32 *row_at(void *chunk, __u32 idx)
{
	__u32 blk = idx >> ROWS_PER_BLOCK_SHIFT;
	struct row_block *b = bpf_map_lookup_elem(chunk, &blk);

	if (!b)
		return NULL;
	return &b->rows[idx & (ROWS_PER_BLOCK - 1)];
}

/* Find the rule index for an address in a file: -1 with *err set when
 * there is none. */
static __always_inline int find_rule(__u64 file_id, __u64 addr, __u32 *err)
{
	struct page_key pk = { .file_id = file_id,
			       .page = addr >> DELTA_PAGE_BITS };
	struct page_info *pi = bpf_map_lookup_elem(&delta_pages, &pk);
	__u32 target = addr & ((1u << DELTA_PAGE_BITS) - 1);
	__u32 lo, hi, chunk_idx, *row;
	void *chunk;
	int i;

	if (!pi || pi->count == 0) {
		*err = METRIC_ERR_NO_PAGE;
		return -1;
	}
	/* the page's rows are all in one chunk: one lookup per frame */
	chunk_idx = pi->first >> DELTA_CHUNK_SHIFT;
	chunk = bpf_map_lookup_elem(&delta_rows, &chunk_idx);
	if (!chunk) {
		*err = METRIC_ERR_NO_PAGE;
		return -1;
	}
	/* invariant: row[lo] <= target (the page's first row is at 0) and
	 * the answer is in [lo, hi) */
	lo = pi->first & (DELTA_CHUNK_ROWS - 1);
	hi = lo + pi->count;
	for (i = 0; i < DELTA_SEARCH_STEPS; i++) {
		__u32 mid;

		if (hi - lo <= 1)
			break;
		mid = lo + (hi - lo) / 2;
		row = row_at(chunk, mid);
		if (!row) {
			*err = METRIC_ERR_NO_PAGE;
			return -1;
		}
		if (ROW_ADDR(*row) <= target)
			lo = mid;
		else
			hi = mid;
	}
	row = row_at(chunk, lo);
	if (!row) {
		*err = METRIC_ERR_NO_PAGE;
		return -1;
	}
	return ROW_RULE(*row);
}

/* One frame-pointer step: [fp] is the caller's fp, [fp+8] the return
 * address.  Returns 0 or a METRIC_ERR_* code. */
static __always_inline __u32 fp_step(struct ustate *st)
{
	__u64 fp = st->fp, next_fp = 0, ra = 0;

	if (fp < st->sp || fp - st->sp > FP_MAX_JUMP || (fp & 7))
		return METRIC_ERR_FP_BAD;
	if (read_user_u64(fp, &next_fp) || read_user_u64(fp + 8, &ra))
		return METRIC_ERR_READ_FAULT;
	st->sp = fp + 16;
	st->fp = next_fp;
	st->pc = ra;
	st->flags |= ST_RETURN_ADDR;
	return 0;
}

/* Apply a rule.  Returns 0, or a METRIC_ERR_* code, or METRIC_STOP_ENTRY
 * when the frame is the outermost one. */
static __always_inline __u32 apply_rule(struct ustate *st, __u32 idx)
{
	struct unwind_rule *r;
	__u64 cfa, base, ra = 0, v = 0;

	switch (idx) {
	case RULE_IDX_INVALID:
		return METRIC_ERR_ROW_INVALID;
	case RULE_IDX_STOP:
		return METRIC_STOP_ENTRY;
	case RULE_IDX_FRAME_POINTER:
		return fp_step(st);
	case RULE_IDX_SIGNAL: {
		__u64 mc = st->sp + SIGFRAME_MCONTEXT, fp = 0, sp = 0, pc = 0;

		if (read_user_u64(mc + SIGCTX_RBP, &fp) ||
		    read_user_u64(mc + SIGCTX_RSP, &sp) ||
		    read_user_u64(mc + SIGCTX_RIP, &pc))
			return METRIC_ERR_READ_FAULT;
		st->fp = fp;
		st->sp = sp;
		st->pc = pc;
		/* the interrupted pc is exact, not a return address */
		st->flags &= ~ST_RETURN_ADDR;
		return 0;
	}
	}
	r = bpf_map_lookup_elem(&rules, &idx);
	if (!r)
		return METRIC_ERR_BAD_RULE;
	if (r->cmd == RULE_CMD_PLT) {
		/* GCC's PLT CFI: sp + 8, plus 8 once the stub has pushed;
		 * the threshold on the pc's low bits depends on the PLT kind
		 * (the fixed rule has 11; IBT PLTs another) */
		cfa = st->sp + (__s64)r->cfa_off +
		      (((st->pc & 15) >= (__u64)r->cfa_post) ? 8 : 0);
	} else if (r->cmd == RULE_CMD_NONE) {
		base = r->cfa_reg == RULE_REG_FP ? st->fp : st->sp;
		cfa = base + (__s64)r->cfa_off;
		if (r->flags & RULE_F_DEREF_CFA) {
			if (read_user_u64(cfa, &v))
				return METRIC_ERR_READ_FAULT;
			cfa = v + (__s64)r->cfa_post;
		}
	} else {
		return METRIC_ERR_BAD_RULE;
	}
	if (read_user_u64(cfa - 8, &ra))
		return METRIC_ERR_READ_FAULT;
	/* a PLT stub leaves rbp alone: its rule is RULE_FP_SAME */
	switch (r->fp_rule) {
	case RULE_FP_CFA_OFF:
		if (read_user_u64(cfa + (__s64)r->fp_off, &v))
			return METRIC_ERR_READ_FAULT;
		st->fp = v;
		break;
	case RULE_FP_REG_OFF:
		if (read_user_u64(st->fp + (__s64)r->fp_off, &v))
			return METRIC_ERR_READ_FAULT;
		st->fp = v;
		break;
	case RULE_FP_UNDEF:
		st->fp = 0;
		break;
	}
	if (cfa <= st->sp)
		return METRIC_ERR_SP_LOOP;
	st->sp = cfa;
	st->pc = ra;
	st->flags |= ST_RETURN_ADDR;
	return 0;
}

/* Resolve pc's mapping into st->cur, from the two-entry cache or the
 * trie.  Returns false when the pc is in no known mapping. */
static __always_inline bool resolve_mapping(struct ustate *st, __u64 pc)
{
	struct mapping_key key;
	struct mapping_info *mi, tmp;

	if ((st->flags & ST_MAP_VALID) && pc >= st->cur.start && pc < st->cur.end)
		return true;
	if (pc >= st->prev.start && pc < st->prev.end) {
		tmp = st->cur;
		st->cur = st->prev;
		st->prev = tmp;
		if (!(st->flags & ST_MAP_VALID))
			st->prev.end = 0;
		st->flags |= ST_MAP_VALID;
		return true;
	}
	key.prefixlen = 32 + 64;
	key.pid_be = bpf_htonl(st->pid);
	key.addr_be = bpf_cpu_to_be64(pc);
	mi = bpf_map_lookup_elem(&mappings, &key);
	if (!mi) {
		if (st->flags & ST_MAP_VALID)
			st->prev = st->cur;
		st->flags &= ~ST_MAP_VALID;
		return false;
	}
	if (st->flags & ST_MAP_VALID)
		st->prev = st->cur;
	st->cur = *mi;
	st->flags |= ST_MAP_VALID;
	return true;
}

/* bpf_loop's context must live on the stack. */
struct loop_ctx {
	struct scratch *s;
};

/* Called by bpf_loop once per frame.  Returns 1 to stop the loop. */
static long native_step(__u32 i, void *arg)
{
	struct scratch *s = ((struct loop_ctx *)arg)->s;
	struct ustate *st = &s->st;
	__u64 pc = st->pc, lookup, rel;
	__u32 err = 0, flags = 0;
	int rule;

	if (pc < PC_MIN || pc > USER_MAX) {
		/* the end of a frame-pointer chain, or garbage */
		if (!(st->flags & ST_UNSYNCED) && (st->flags & ST_MAP_VALID) &&
		    !(st->cur.flags & MAP_F_FP_ONLY))
			push_error(s, METRIC_ERR_PC_ZERO);
		st->flags |= ST_DONE;
		return 1;
	}
	if (st->flags & ST_RETURN_ADDR)
		flags = FRAME_F_RETURN_ADDR;
	/* a return address points after the call: look up the call */
	lookup = pc - (flags ? 1 : 0);

	if ((st->flags & ST_UNSYNCED) || !resolve_mapping(st, lookup)) {
		if (!(st->flags & ST_UNSYNCED) && !(st->flags & ST_REPORTED_PC)) {
			st->flags |= ST_REPORTED_PC;
			metric_inc(METRIC_ERR_NO_MAPPING);
			report_pid(st->pid, PEV_UNKNOWN_PC, pc, false);
		}
		if (!push_frame(s, FRAME_WORD(FRAME_RAW, flags, pc), 0, 1))
			goto too_deep;
		err = fp_step(st);
		st->n_fp++;
		goto next;
	}

	rel = lookup - st->cur.bias;
	/* an interpreter loop: its frames replace the native one */
	if (enable_python && (st->cur.flags & MAP_F_INTERP) &&
	    st->cur.interp == INTERP_PYTHON &&
	    !(st->interp_done & (1u << INTERP_PYTHON))) {
		struct py_proc *p = py_eval_frame(st->pid, lookup);

		if (p && py_unwind(s, p) > 0)
			goto unwind;
	}
	if (!push_frame(s, FRAME_WORD(FRAME_NATIVE, flags, pc - st->cur.bias),
			st->cur.file_id, 2))
		goto too_deep;
unwind:

	if (st->cur.flags & MAP_F_FP_ONLY) {
		err = fp_step(st);
		st->n_fp++;
		goto next;
	}
	rule = find_rule(st->cur.file_id, rel, &err);
	if (rule < 0) {
		/* no CFI here: try the frame pointer before giving up */
		if (fp_step(st) == 0) {
			metric_inc(err);
			st->n_fp++;
			err = 0;
		}
		goto next;
	}
	err = apply_rule(st, rule);
	if (err == METRIC_ERR_ROW_INVALID && fp_step(st) == 0) {
		metric_inc(err);
		st->n_fp++;
		err = 0;
	}
	if (!err)
		st->n_native++;

next:
	if (err == METRIC_STOP_ENTRY) {
		metric_inc(METRIC_STOP_ENTRY);
		s->hdr.flags |= TRACE_F_COMPLETE;
		st->flags |= ST_DONE;
		return 1;
	}
	if (err) {
		/* a frame-pointer walk simply ends when the chain does */
		if (!((st->flags & ST_UNSYNCED) && err == METRIC_ERR_FP_BAD))
			push_error(s, err);
		st->flags |= ST_DONE;
		return 1;
	}
	return 0;

too_deep:
	metric_inc(METRIC_ERR_TOO_DEEP);
	s->hdr.flags |= TRACE_F_TRUNCATED;
	st->flags |= ST_DONE;
	return 1;
}

SEC("perf_event")
int unwind_native(struct bpf_perf_event_data *ctx)
{
	struct scratch *s = get_scratch();
	struct loop_ctx lc;

	if (!s)
		return 0;
	lc.s = s;
	if (!(s->st.flags & ST_DONE))
		bpf_loop(MAX_USER_FRAMES, native_step, &lc, 0);
	next_unwinder(ctx, s);
	return 0;
}

/* Is the sampled pid wanted?  Checked before any work. */
static __always_inline bool pid_wanted(__u32 pid)
{
	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &pid))
		return false;
	if (filter_cgroups && !cgroup_wanted())
		return false;
	return true;
}

SEC("perf_event")
int sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct task_struct *task;
	struct pt_regs *regs;
	struct pid_info *pi;
	struct scratch *s;
	long kbytes;

	metric_inc(METRIC_SAMPLES);
	if (pid == 0) {
		metric_inc(METRIC_SAMPLES_IDLE);
		return 0;
	}
	if (!pid_wanted(pid)) {
		metric_inc(METRIC_SAMPLES_FILTERED);
		return 0;
	}
	s = get_scratch();
	if (!s)
		return 0;

	s->hdr.ktime = bpf_ktime_get_ns();
	s->hdr.cgroup_id = bpf_get_current_cgroup_id();
	s->hdr.pid = pid;
	s->hdr.tid = tid;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.flags = 0;
	s->hdr.n_user = 0;
	s->hdr.n_frames = 0;
	s->hdr.error = 0;
	bpf_get_current_comm(s->hdr.comm, sizeof(s->hdr.comm));
	__builtin_memset(&s->st, 0, sizeof(s->st));
	s->st.pid = pid;
	s->st.next_prog = NO_PROG;

	/* a sample taken in user mode has no kernel stack: skip the helper
	 * (it costs microseconds even when it finds nothing) */
	kbytes = 0;
	if (ctx->regs.ip > USER_MAX) {
		kbytes = bpf_get_stack(ctx, s->words, MAX_KERNEL_FRAMES * 8, 0);
		if (kbytes < 0) {
			metric_inc(METRIC_KSTACK_ERR);
			kbytes = 0;
		}
	}
	s->hdr.n_kernel = kbytes / 8;

	/* user registers: the sampled ones if the CPU was in user mode,
	 * else those saved at kernel entry */
	task = bpf_get_current_task_btf();
	if (task->flags & PF_KTHREAD) {
		s->hdr.flags |= TRACE_F_KERNEL_ONLY;
		send_trace(ctx, s);
		return 0;
	}
	/* a sample in user mode has a user pc in the perf registers */
	if (ctx->regs.ip <= USER_MAX) {
		s->st.pc = ctx->regs.ip;
		s->st.sp = ctx->regs.sp;
		s->st.fp = ctx->regs.bp;
	} else {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (!regs) {
			metric_inc(METRIC_NO_USER_REGS);
			s->hdr.flags |= TRACE_F_KERNEL_ONLY;
			send_trace(ctx, s);
			return 0;
		}
		s->st.pc = BPF_CORE_READ(regs, ip);
		s->st.sp = BPF_CORE_READ(regs, sp);
		s->st.fp = BPF_CORE_READ(regs, bp);
	}

	pi = bpf_map_lookup_elem(&pid_info, &pid);
	if (!pi || !(pi->flags & PID_F_SYNCED)) {
		/* not loaded yet: keep the sample with a frame-pointer walk
		 * and ask userland to load the process */
		metric_inc(METRIC_UNSYNCED);
		s->hdr.flags |= TRACE_F_UNSYNCED;
		s->st.flags |= ST_UNSYNCED;
		report_pid(pid, PEV_UNKNOWN_PID, 0, false);
	}
	s->st.next_prog = PROG_NATIVE;
	next_unwinder(ctx, s);
	return 0;
}
