// SPDX-License-Identifier: GPL-2.0
/*
 * The sampling entry point and the native unwinder.
 *
 * entry (perf_event, every CPU): filters, header, kernel stack, user
 * registers; then tail-calls the native unwinder.
 * native: one bpf_loop over frames.  Per frame: find the mapping of the pc
 * (LPM trie, cached across frames of one file), find the stack-delta row
 * (deltas.bpf.h: the trail, the rule cache, then the 64 KiB page and a
 * binary search over the run of its rows), evaluate its rule, read the
 * return address.  Files without CFI
 * and processes userland has not loaded yet are walked by frame pointer.
 * At a frame of a file holding an interpreter, the interpreter unwinders
 * (interp.bpf.h) may push that runtime's frames in its place.
 */
#include "maps.bpf.h"
#include "interp.bpf.h"
#include "deltas.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* User addresses stop at 2^47 or 2^56 on x86-64, at 2^48 or 2^52 on
 * arm64; kernel addresses start at 0xff.. on both. */
#define USER_MAX 0x00ffffffffffffffULL
#define PC_MIN 0x1000
/* A frame-pointer walk accepts a new frame only this far above sp. */
#define FP_MAX_JUMP (8ULL << 20)

/* One frame-pointer step: [fp] is the caller's fp, [fp+8] the return
 * address.  The caller's frame lies above this one, unless any_stack:
 * Go's switch to g0 where the runtime's layout is unknown (RULE_F_GO_FP)
 * may lead to another stack.  Returns 0 or a METRIC_ERR_* code. */
static __always_inline __u32 fp_step_to(struct ustate *st, bool any_stack)
{
	__u64 fp = st->regs[R_FP], sp = st->regs[R_SP], next_fp = 0, ra = 0;

	if ((fp & 7) || !fp ||
	    (!any_stack && (fp < sp || fp - sp > FP_MAX_JUMP)))
		return METRIC_ERR_FP_BAD;
	if (read_user_u64(fp, &next_fp) || read_user_u64(fp + 8, &ra))
		return METRIC_ERR_READ_FAULT;
	st->regs[R_SP] = fp + 16;
	st->regs[R_FP] = next_fp;
	st->pc = strip_ra(ra);
	st->flags |= ST_RETURN_ADDR;
	st->flags &= ~ST_LR_VALID;
	return 0;
}

static __always_inline __u32 fp_step(struct ustate *st)
{
	return fp_step_to(st, false);
}

/* Go's switch to the g0 stack (RULE_CMD_GO_SWITCH in profiler.h): on to
 * the goroutine's own stack, from its saved context.  A global function
 * (as signal_frame): the verifier checks it once, apart from the paths of
 * the native step, and the call is paid at these frames only. */
__noinline int go_switch(struct scratch *s, const struct unwind_rule *r)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 g = 0, m = 0, g0 = 0, curg = 0, cm = 0, sp = 0, pc = 0, bp = 0;
	struct ustate *st;
	__s64 tls;

	if (!s || !r)
		return METRIC_ERR_BAD_RULE;
	st = &s->st;
	tls = r->cfa_off;

	if (r->flags & RULE_F_GO_FP)
		return fp_step_to(st, true);
	if ((r->flags & RULE_F_GO_TLS_GOT) &&
	    read_user_u64(st->cur.bias + (__u32)r->cfa_off, (__u64 *)&tls))
		return METRIC_ERR_READ_FAULT;
	if (read_user_u64(task_tp(task) + tls, &g) ||
	    read_user_u64(g + GO_G_M, &m) || read_user_u64(m, &g0))
		return METRIC_ERR_READ_FAULT;
	if (g != g0) {
		/* not switched yet: an empty frame, the return address at sp */
		sp = st->regs[R_SP];
		if (read_user_u64(sp, &pc))
			return METRIC_ERR_READ_FAULT;
		st->regs[R_SP] = sp + 8;
		st->pc = pc;
		st->flags |= ST_RETURN_ADDR;
		return 0;
	}
	if (read_user_u64(m + (__u32)r->fp_off, &curg))
		return METRIC_ERR_READ_FAULT;
	/* no goroutine: morestack decided to preempt it, and the scheduler
	 * runs on g0 (as under mcall, the bottom of this stack) */
	if (!curg)
		return METRIC_STOP_ENTRY;
	if (read_user_u64(curg + GO_G_M, &cm))
		return METRIC_ERR_READ_FAULT;
	if (curg == g0 || cm != m)
		return METRIC_ERR_GO_SWITCH;
	if (read_user_u64(curg + GO_G_SCHED + GO_GOBUF_SP, &sp) ||
	    read_user_u64(curg + GO_G_SCHED + GO_GOBUF_PC, &pc) ||
	    read_user_u64(curg + GO_G_SCHED + GO_GOBUF_BP, &bp))
		return METRIC_ERR_READ_FAULT;
	if (!sp || !pc)
		return METRIC_ERR_GO_SWITCH;
	st->regs[R_SP] = sp;
	st->regs[R_FP] = bp;
	st->pc = pc;
	/* the saved pc is where the goroutine stands, not a return address */
	st->flags &= ~ST_RETURN_ADDR;
	return 0;
}

/* Have the block of the user stack in s->stk hold the window below cfa
 * (CFA_WINDOW slots): the block read so far when it does, else a new one
 * from the window up to STK_BYTES, but not past the end of the page of
 * the window's last slot: a read that runs into an unmapped page above
 * the stack's top fails whole, and a fault costs more than the read.
 * When the window cannot be read the block is left empty (stk_len 0) and
 * cfa_slot reads each slot on its own. */
static __always_inline void stk_cover(struct scratch *s, __u64 cfa)
{
	struct ustate *st = &s->st;
	__u64 lo = cfa - CFA_WINDOW * 8;
	__u64 len;

	if (st->stk_len && lo >= st->stk_base &&
	    cfa <= st->stk_base + st->stk_len)
		return;
	st->stk_len = 0;
	if (lo > cfa)
		return;
	len = (((cfa - 1) | 4095) + 1) - lo;
	if (len > STK_BYTES)
		len = STK_BYTES;
	if (bpf_probe_read_user(s->stk, len, (const void *)lo))
		return;
	st->stk_base = lo;
	st->stk_len = len;
}

/* The 8 bytes at cfa + 8 * slot. */
static __always_inline int cfa_slot(struct scratch *s, __u64 cfa, int slot,
				    __u64 *out)
{
	return stk_read_u64(s, cfa + (__s64)slot * 8, out);
}

/* A signal frame: the registers from the sigcontext the kernel saved
 * (signal_step, bpf/arch.bpf.h).  A global function: checked once, the
 * call paid at signal frames only. */
__noinline int signal_frame(struct scratch *s)
{
	if (!s)
		return METRIC_ERR_BAD_RULE;
	return signal_step(s);
}

/* Apply rule idx, r its copy of rules[idx].  Returns 0, or a METRIC_ERR_*
 * code, or METRIC_STOP_ENTRY when the frame is the outermost one. */
static __always_inline __u32 apply_rule(struct scratch *s, __u32 idx,
					const struct unwind_rule *r)
{
	struct ustate *st = &s->st;
	__u64 cfa, ra = 0, v = 0, fp;
	int i;

	switch (idx) {
	case RULE_IDX_INVALID:
		return METRIC_ERR_NO_CFI;
	case RULE_IDX_UNSUPPORTED:
		return METRIC_ERR_RULE_UNSUPPORTED;
	case RULE_IDX_STOP:
		return METRIC_STOP_ENTRY;
	case RULE_IDX_FRAME_POINTER:
		return fp_step(st);
	case RULE_IDX_SIGNAL:
		return signal_frame(s);
	}
	if (r->cmd == RULE_CMD_PLT) {
		/* GCC's PLT CFI: sp + 8, plus 8 once the stub has pushed;
		 * the threshold on the pc's low bits depends on the PLT kind
		 * (the fixed rule has 11; IBT PLTs another) */
		cfa = st->regs[R_SP] + (__s64)r->cfa_off +
		      (((st->pc & 15) >= (__u64)r->cfa_post) ? 8 : 0);
	} else if (r->cmd == RULE_CMD_GO_SWITCH) {
		return go_switch(s, r);
	} else if (r->cmd == RULE_CMD_NONE) {
		cfa = st->regs[r->cfa_reg & (RULE_REG_COUNT - 1)] +
		      (__s64)r->cfa_off;
		if (r->flags & RULE_F_DEREF_CFA) {
			if (read_user_u64(cfa, &v))
				return METRIC_ERR_READ_FAULT;
			cfa = v + (__s64)r->cfa_post;
		}
	} else {
		return METRIC_ERR_BAD_RULE;
	}
	/* the return address and the registers pushed after it from the
	 * block of the stack; slots outside it (or a window that cannot be
	 * read at once) are read one by one */
	stk_cover(s, cfa);
	/* the ways to the CFA (and the block's checks) gave it ranges the
	 * verifier told apart, and the rest of the rule was checked once for
	 * each */
	cfa = scratch_forget(s->cfa, cfa);
	switch (r->ra_rule) {
	case RULE_RA_CFA_OFF:
		if (cfa_slot(s, cfa, r->ra_off >> 3, &ra))
			return METRIC_ERR_READ_FAULT;
		break;
	case RULE_RA_LR:
		/* only the leaf's (or a signalled frame's) lr is its own */
		if (!(st->flags & ST_LR_VALID))
			return METRIC_ERR_LR_INVALID;
		ra = st->regs[RULE_REG_LR];
		break;
	default:
		if (cfa_slot(s, cfa, -1, &ra))
			return METRIC_ERR_READ_FAULT;
	}
	/* a PLT stub leaves rbp alone: its rule is RULE_FP_SAME */
	fp = st->regs[R_FP];
	switch (r->fp_rule) {
	case RULE_FP_CFA_OFF:
		if ((r->fp_off & 7) ?
			    read_user_u64(cfa + (__s64)r->fp_off, &fp) :
			    cfa_slot(s, cfa, r->fp_off >> 3, &fp))
			return METRIC_ERR_READ_FAULT;
		break;
	case RULE_FP_REG_OFF:
		if (read_user_u64(fp + (__s64)r->fp_off, &fp))
			return METRIC_ERR_READ_FAULT;
		break;
	case RULE_FP_UNDEF:
		fp = 0;
		break;
	}
	/* the other callee-saved registers: rbx, r12..r15.  A slot that
	 * cannot be read costs that register, not the frame. */
	for (i = 0; i < RULE_SAVED_COUNT; i++) {
		__s8 slot = r->saved[i];
		__u32 reg = i == 0 ? RULE_REG_RBX : 11 + i;

		if (slot == RULE_SAVED_SAME)
			continue;
		v = 0;
		if (slot != RULE_SAVED_UNDEF && cfa_slot(s, cfa, slot, &v))
			v = 0;
		st->regs[reg & (RULE_REG_COUNT - 1)] = v;
	}
	/* a leaf whose return address is in the link register may not have
	 * moved sp (the CFA is sp itself): it is no loop, since the link
	 * register serves once */
	if (cfa < st->regs[R_SP] ||
	    (cfa == st->regs[R_SP] && r->ra_rule != RULE_RA_LR))
		return METRIC_ERR_SP_LOOP;
	st->regs[R_SP] = cfa;
	st->regs[R_FP] = fp;
	st->pc = strip_ra(ra);
	st->flags |= ST_RETURN_ADDR;
	st->flags &= ~ST_LR_VALID;
	return 0;
}

/* The trie lookup of pc's mapping through the per-CPU cache of recent
 * answers (struct map_cache_ent): NULL when pc is in no mapping. */
static __always_inline struct mapping_info *
lookup_mapping_cached(struct ustate *st, __u64 pc)
{
	struct mapping_key key;
	struct mapping_info *mi;
	struct map_cache_ent *e = NULL;
	__u32 slot;

	if (map_cache_mask && st->map_gen) {
		/* the page from the pid, the line from the region: a
		 * sample's lookups touch one page of the cache */
		slot = ((__u32)(((__u64)st->pid * 0x9e3779b97f4a7c15ULL) >>
				32)
			<< MAP_CACHE_PAGE_SHIFT |
			(__u32)(((pc >> MAP_CACHE_REGION_BITS) *
				 0x9e3779b97f4a7c15ULL) >>
				(64 - MAP_CACHE_PAGE_SHIFT))) &
		       map_cache_mask;
		slot |= st->cpu << map_cache_shift;
		e = bpf_map_lookup_elem(&map_cache, &slot);
		if (e && e->pid == st->pid && e->gen == st->map_gen &&
		    pc >= e->mi.start && pc < e->mi.end &&
		    e->check == MAP_CACHE_CHECK(e)) {
			st->n_map_cached++;
			return &e->mi;
		}
	}
	key.prefixlen = 32 + 64;
	key.pid_be = bpf_htonl(st->pid);
	key.addr_be = bpf_cpu_to_be64(pc);
	mi = bpf_map_lookup_elem(&mappings, &key);
	if (mi && e) {
		e->pid = st->pid;
		e->gen = st->map_gen;
		e->mi = *mi;
		e->check = MAP_CACHE_CHECK(e);
	}
	return mi;
}

/* Resolve pc's mapping into st->cur, from the two-entry cache or the
 * trie.  Returns false when the pc is in no known mapping. */
static __always_inline bool resolve_mapping(struct ustate *st, __u64 pc)
{
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
	mi = lookup_mapping_cached(st, pc);
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
			metric_inc(s, METRIC_ERR_NO_MAPPING);
			report_pid(s, st->pid, PEV_UNKNOWN_PC, pc, false);
		}
		if (!push_frame(s, FRAME_WORD(FRAME_RAW, flags, pc), 0, 0, 0))
			goto too_deep;
		err = fp_step(st);
		st->n_fp++;
		goto next;
	}

	rel = lookup - st->cur.bias;
	/* an interpreter's code, or anonymous code in a process running
	 * one (its JIT): its frames may replace the native one */
	if ((st->cur.flags & MAP_F_INTERP) ||
	    (!st->cur.file_id && st->proc_interps)) {
		int r = interp_unwind(s, lookup);

		if (r == INTERP_REPLACED)
			goto unwind;
		if (r == INTERP_UNWOUND)
			goto next;
	}
	if (!push_frame(s, FRAME_WORD(FRAME_NATIVE, flags, pc - st->cur.bias),
			st->cur.file_id, 0, 1))
		goto too_deep;
unwind:

	if (st->cur.flags & MAP_F_FP_ONLY) {
		err = fp_step(st);
		st->n_fp++;
		goto next;
	}
	rule = find_rule_trail(s, st->cur.file_id, rel, lookup, &s->rule, &err);
	if (rule < 0) {
		/* no CFI here: try the frame pointer before giving up */
		if (fp_step(st) == 0) {
			metric_inc(s, err);
			st->n_fp++;
			err = 0;
		}
		goto next;
	}
	/* the index and the rule from the scratch (struct scratch.rule), and
	 * its outcome: one value to the verifier, not one state for each code
	 * apply_rule returns (thirty) */
	err = apply_rule(s, scratch_forget(s->rule_idx, rule), &s->rule);
	err = scratch_forget(s->step_err, err);
	if ((err == METRIC_ERR_NO_CFI || err == METRIC_ERR_RULE_UNSUPPORTED ||
	     err == METRIC_ERR_LR_INVALID) &&
	    fp_step(st) == 0) {
		metric_inc(s, err);
		st->n_fp++;
		err = 0;
	}
	if (!err)
		st->n_native++;

next:
	if (err == METRIC_STOP_ENTRY) {
		metric_inc(s, METRIC_STOP_ENTRY);
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
	metric_inc(s, METRIC_ERR_TOO_DEEP);
	s->hdr.flags |= TRACE_F_TRUNCATED;
	st->flags |= ST_DONE;
	return 1;
}

/* The user stack from s->st on, frame by frame, until it ends or the
 * frame limit: the CPU sampler's native program and the off-CPU
 * program run the same steps. */
static __always_inline void unwind_user(struct scratch *s)
{
	struct loop_ctx lc = { .s = s };

	if (s->st.flags & ST_DONE)
		return;
	bpf_loop(MAX_USER_FRAMES, native_step, &lc, 0);
	/* every iteration took a frame and the stack goes on */
	if (!(s->st.flags & ST_DONE)) {
		metric_inc(s, METRIC_ERR_TOO_DEEP);
		s->hdr.flags |= TRACE_F_TRUNCATED;
		s->st.flags |= ST_DONE;
	}
}

SEC("perf_event")
int unwind_native(struct bpf_perf_event_data *ctx)
{
	struct scratch *s = get_scratch();

	if (!s)
		return 0;
	unwind_user(s);
	next_unwinder(ctx, s);
	return 0;
}

/* The user registers: load_regs (bpf/arch.bpf.h).  Its own function:
 * inlined, the compiler merges the two load_regs sequences, and the
 * verifier refuses one instruction that reads both the context and a BTF
 * pointer. */
static __noinline void regs_from_ctx(struct bpf_perf_event_data *ctx,
				     struct ustate *st)
{
	load_regs(st, &ctx->regs);
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

/* A new trace of the current task (pid, tid) in s: its header (flags:
 * TRACE_F_*) and a zeroed unwinding state. */
static __always_inline void trace_begin(struct scratch *s, __u32 pid,
					__u32 tid, __u32 flags)
{
	s->hdr.ktime = bpf_ktime_get_ns();
	s->hdr.pid = pid;
	s->hdr.tid = tid;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.flags = flags;
	s->hdr.n_user = 0;
	s->hdr.n_frames = 0;
	s->hdr.error = 0;
	bpf_get_current_comm(s->hdr.comm, sizeof(s->hdr.comm));
	__builtin_memset(&s->st, 0, __builtin_offsetof(struct ustate, icur));
	s->st.pid = pid;
	s->st.cpu = s->hdr.cpu;
	s->st.next_prog = NO_PROG;
}

/* What the process is to the unwinder: its runtimes, and whether
 * userland loaded its mappings. */
static __always_inline void process_state(struct scratch *s, __u32 pid)
{
	__u32 slot = pid & (PID_EPOCH_SLOTS - 1), epoch = 0;
	__u64 *ep = bpf_map_lookup_elem(&pid_epoch, &slot);
	struct pid_info *pi;

	/* the counter before the entry: an entry changed after this read
	 * is kept under the old count, and its bump (after the change)
	 * makes the next sample look again.  arm64 may take the entry's
	 * loads before the counter's (BPF has no acquire load before
	 * 6.15): an entry older than the count it is kept under would need
	 * userland's update and its bump, a system call apart
	 * (microseconds), to fall between two loads nanoseconds apart */
	if (ep) {
		epoch = (__u32)*(volatile __u64 *)ep;
		s->st.epoch = epoch;
		s->st.flags |= ST_EPOCH;
		if (s->pic.pid == pid && s->pic.epoch == epoch) {
			s->st.proc_interps = s->pic.interp_mask;
			s->st.map_gen = s->pic.map_gen;
			metric_inc(s, METRIC_PID_CACHE_HITS);
			return;
		}
	}
	pi = bpf_map_lookup_elem(&pid_info, &pid);
	s->pic.pid = 0;
	if (pi) {
		s->st.proc_interps = pi->interp_mask;
		s->st.map_gen = pi->map_gen;
		if (ep && (pi->flags & PID_F_SYNCED)) {
			s->pic.pid = pid;
			s->pic.epoch = epoch;
			s->pic.interp_mask = pi->interp_mask;
			s->pic.map_gen = pi->map_gen;
		}
	}
	if (!pi || !(pi->flags & PID_F_SYNCED)) {
		/* not loaded yet: keep the sample with a frame-pointer walk
		 * and ask userland to load the process */
		metric_inc(s, METRIC_UNSYNCED);
		s->hdr.flags |= TRACE_F_UNSYNCED;
		s->st.flags |= ST_UNSYNCED;
		report_pid(s, pid, PEV_UNKNOWN_PID, 0, false);
	}
}

SEC("perf_event")
int sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct task_struct *task;
	struct pt_regs *regs;
	struct scratch *s;
	long kbytes;

	s = get_scratch();
	if (!s)
		return 0;
	metric_inc(s, METRIC_SAMPLES);
	if (pid == 0) {
		metric_inc(s, METRIC_SAMPLES_IDLE);
		return 0;
	}
	if (!pid_wanted(pid)) {
		metric_inc(s, METRIC_SAMPLES_FILTERED);
		return 0;
	}

	trace_begin(s, pid, tid, 0);

	/* a sample taken in user mode has no kernel stack: skip the helper
	 * (it costs microseconds even when it finds nothing) */
	kbytes = 0;
	if (ARCH_CTX_PC(ctx) > USER_MAX) {
		kbytes = bpf_get_stack(ctx, s->words, MAX_KERNEL_FRAMES * 8, 0);
		if (kbytes < 0) {
			metric_inc(s, METRIC_KSTACK_ERR);
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
	if (ARCH_CTX_PC(ctx) <= USER_MAX) {
		regs_from_ctx(ctx, &s->st);
	} else {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (!regs) {
			metric_inc(s, METRIC_NO_USER_REGS);
			s->hdr.flags |= TRACE_F_KERNEL_ONLY;
			send_trace(ctx, s);
			return 0;
		}
		load_regs(&s->st, regs);
	}

	process_state(s, pid);
	s->st.next_prog = PROG_NATIVE;
	next_unwinder(ctx, s);
	return 0;
}

/* ---- off-CPU ------------------------------------------------------------ */

/*
 * One program on the sched_switch BTF tracepoint (no tracefs, no kprobe).
 * It runs in prev's context (current is still prev), so the CPU sampler's
 * unwinder walks prev's user stack as it would a sample's: the registers
 * saved at its kernel entry, its memory through the current mm.  The
 * stack waits in offcpu_stacks, keyed by tid, until the thread is next
 * switched in, on whatever CPU: the record then carries the exact time
 * between the two, measured with one clock.
 */

/* none: the frames above __schedule (this program, its trampoline,
 * __traceiter_sched_switch) vary with the kernel and with what else is
 * attached; userland starts the stack at __schedule */
#define OFFCPU_SKIP_FRAMES 0

/* next comes back: its record, with the time it was away. */
static __always_inline void offcpu_in(struct scratch *s,
				      struct task_struct *next)
{
	__u32 tid = next->pid, n;
	struct offcpu_rec *r;

	if (!tid)
		return;
	r = bpf_map_lookup_elem(&offcpu_stacks, &tid);
	if (!r)
		return;
	n = r->hdr.n_kernel + r->hdr.n_user;
	if (n > MAX_TRACE_WORDS)
		n = MAX_TRACE_WORDS;
	r->words[n] = bpf_ktime_get_ns() - r->hdr.ktime;
	if (bpf_ringbuf_output(&traces, r,
			       sizeof(struct trace_hdr) + ((__u64)n + 1) * 8,
			       BPF_RB_NO_WAKEUP))
		metric_inc(s, METRIC_RINGBUF_FULL);
	else
		metric_inc(s, METRIC_OFFCPU_SENT);
	bpf_map_delete_elem(&offcpu_stacks, &tid);
}

/* prev leaves: unwind it and keep the stack, if it is chosen. */
static __always_inline void offcpu_out(struct scratch *s, void *ctx,
				       struct task_struct *prev)
{
	__u32 pid = prev->tgid, tid = prev->pid;
	struct pt_regs *regs;
	long kbytes;

	/* the idle task, kernel threads, and a thread on its way out (its
	 * last switch would leave an entry that no switch-in takes) */
	if (!pid || (prev->flags & (PF_KTHREAD | PF_EXITING)))
		return;
	if ((__u64)bpf_get_prandom_u32() >= offcpu_threshold)
		return;
	if (!pid_wanted(pid))
		return;
	trace_begin(s, pid, tid, TRACE_F_OFFCPU);
	/* the kernel part: __schedule, schedule, down to the system call or
	 * fault that blocked, under the tracepoint's own frames */
	kbytes = bpf_get_stack(ctx, s->words, MAX_KERNEL_FRAMES * 8,
			       OFFCPU_SKIP_FRAMES);
	if (kbytes < 0) {
		metric_inc(s, METRIC_KSTACK_ERR);
		kbytes = 0;
	}
	s->hdr.n_kernel = kbytes / 8;
	regs = (struct pt_regs *)bpf_task_pt_regs(prev);
	if (!regs) {
		metric_inc(s, METRIC_NO_USER_REGS);
		s->hdr.flags |= TRACE_F_KERNEL_ONLY;
	} else {
		load_regs(&s->st, regs);
		process_state(s, pid);
		unwind_user(s);
	}
	s->hdr.n_user = s->st.n_words;
	count_frames(s);
	trail_commit(s);
	/* the time it left, after the unwinding: that was on the CPU */
	s->hdr.ktime = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&offcpu_stacks, &tid, &s->hdr, BPF_ANY))
		metric_inc(s, METRIC_OFFCPU_FULL);
	else
		metric_inc(s, METRIC_OFFCPU_KEPT);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct scratch *s = bpf_map_lookup_elem(&offcpu_scratch, &cpu);

	if (!s)
		return 0;
	offcpu_in(s, next);
	offcpu_out(s, ctx, prev);
	return 0;
}
