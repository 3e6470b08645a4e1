/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between x86-64 and arm64, in one place: the user registers
 * of a sample, the thread pointer, return-address tags, the signal frame.
 * The unwinders use these helpers and never name an architecture's
 * registers themselves.  The build picks one with -D__TARGET_ARCH_<arch>
 * (Makefile, ARCH=).
 *
 * ustate.regs holds the registers in the slots of enum rule_reg
 * (profiler.h): R_FP and R_SP are the frame and stack pointers on both
 * (rbp/rsp, x29/sp); on arm64 R_LR is the link register x30, and x86's
 * other general-register slots hold the callee-saved x19..x28 as sampled
 * (ARCH_X_SLOT), where a runtime may keep its state at the leaf: no arm64
 * rule names them.  A runtime's own files say which register it wants.
 */
#ifndef EP_ARCH_BPF_H
#define EP_ARCH_BPF_H

#if defined(__TARGET_ARCH_arm64)

#define ARCH_X86_64 0
#define R_LR RULE_REG_LR
/* The slot of callee-saved register xN (19 <= N <= 28) at the leaf: x19..x23
 * in slots 1..5, x24..x28 in 8..12 (6 and 7 are R_FP and R_SP). */
#define ARCH_X_SLOT(n) ((n) < 24 ? (n) - 18 : (n) - 16)

/* The user pc of a perf sample's registers (struct user_pt_regs). */
#define ARCH_CTX_PC(ctx_) ((ctx_)->regs.pc)

/* The registers a walk starts from.  On arm64 only x29, x30 and sp ever
 * compute a CFA or a return address; the link register is the leaf's
 * return address until the function saves it, so it is valid here and
 * after a signal frame only (ST_LR_VALID).  pr_ is the perf context's
 * struct user_pt_regs or the task's struct pt_regs (same field names). */
#define load_regs(st_, pr_)                                                    \
	do {                                                                   \
		(st_)->pc = (pr_)->pc;                                         \
		(st_)->regs[R_SP] = (pr_)->sp;                                 \
		(st_)->regs[R_FP] = (pr_)->regs[29];                           \
		(st_)->regs[R_LR] = (pr_)->regs[30];                           \
		(st_)->regs[ARCH_X_SLOT(19)] = (pr_)->regs[19];                \
		(st_)->regs[ARCH_X_SLOT(20)] = (pr_)->regs[20];                \
		(st_)->regs[ARCH_X_SLOT(21)] = (pr_)->regs[21];                \
		(st_)->regs[ARCH_X_SLOT(22)] = (pr_)->regs[22];                \
		(st_)->regs[ARCH_X_SLOT(23)] = (pr_)->regs[23];                \
		(st_)->regs[ARCH_X_SLOT(24)] = (pr_)->regs[24];                \
		(st_)->regs[ARCH_X_SLOT(25)] = (pr_)->regs[25];                \
		(st_)->regs[ARCH_X_SLOT(26)] = (pr_)->regs[26];                \
		(st_)->regs[ARCH_X_SLOT(27)] = (pr_)->regs[27];                \
		(st_)->regs[ARCH_X_SLOT(28)] = (pr_)->regs[28];                \
		(st_)->flags |= ST_LR_VALID;                                   \
	} while (0)

/* TPIDR_EL0 as the kernel saved it (the thread pointer glibc sets). */
static __always_inline __u64 task_tp(struct task_struct *task)
{
	return task->thread.uw.tp_value;
}

/*
 * Return addresses signed with pointer authentication carry the PAC in
 * the bits above the user virtual address space.  Debian's kernels (and
 * the usual distribution configs) have 48-bit user addresses, and without
 * 52-bit VAs no user address has a bit above 47 set: keeping the low 48
 * bits strips any PAC and leaves a plain address unchanged.
 */
#define ARCH_USER_VA_BITS 48
static __always_inline __u64 strip_ra(__u64 ra)
{
	return ra & ((1ULL << ARCH_USER_VA_BITS) - 1);
}

/*
 * The kernel's rt_sigframe, where sp points at __kernel_rt_sigreturn:
 * siginfo (128 bytes), then the ucontext: uc_flags, uc_link, uc_stack (40
 * bytes), uc_sigmask with its padding to 1024 bits (128), and uc_mcontext
 * aligned to 16 (at 176): struct sigcontext { fault_address; regs[31]; sp;
 * pc; pstate; }.  x29, x30, sp and pc are four words from regs[29].
 */
#define SIGFRAME_X29 (128 + 176 + 8 + 29 * 8)
_Static_assert(SIGFRAME_X29 == __builtin_offsetof(struct rt_sigframe,
						  uc.uc_mcontext.regs[29]),
	       "rt_sigframe layout (the kernel's BTF)");

static __always_inline __u32 signal_step(struct scratch *s)
{
	struct ustate *st = &s->st;
	__u64 *g = s->sigctx;

	if (bpf_probe_read_user(g, 4 * 8,
				(const void *)(st->regs[R_SP] + SIGFRAME_X29)))
		return METRIC_ERR_READ_FAULT;
	st->regs[R_FP] = g[0];
	st->regs[R_LR] = g[1];
	st->regs[R_SP] = g[2];
	st->pc = g[3];
	/* the interrupted frame: its pc is exact and its lr still live */
	st->flags &= ~ST_RETURN_ADDR;
	st->flags |= ST_LR_VALID;
	return 0;
}

#else /* x86-64 */

#define ARCH_X86_64 1

#define ARCH_CTX_PC(ctx_) ((ctx_)->regs.ip)

/* Every general register of the user context: at the leaf a CFA may be
 * kept in any of them.  pr_ is the perf context's copy or the task's
 * saved user registers (a BTF pointer: direct loads, no helper calls). */
#define load_regs(st_, pr_)                                                    \
	do {                                                                   \
		(st_)->pc = (pr_)->ip;                                         \
		(st_)->regs[RULE_REG_RAX] = (pr_)->ax;                         \
		(st_)->regs[RULE_REG_RDX] = (pr_)->dx;                         \
		(st_)->regs[RULE_REG_RCX] = (pr_)->cx;                         \
		(st_)->regs[RULE_REG_RBX] = (pr_)->bx;                         \
		(st_)->regs[RULE_REG_RSI] = (pr_)->si;                         \
		(st_)->regs[RULE_REG_RDI] = (pr_)->di;                         \
		(st_)->regs[R_FP] = (pr_)->bp;                                 \
		(st_)->regs[R_SP] = (pr_)->sp;                                 \
		(st_)->regs[8] = (pr_)->r8;                                    \
		(st_)->regs[9] = (pr_)->r9;                                    \
		(st_)->regs[10] = (pr_)->r10;                                  \
		(st_)->regs[11] = (pr_)->r11;                                  \
		(st_)->regs[12] = (pr_)->r12;                                  \
		(st_)->regs[13] = (pr_)->r13;                                  \
		(st_)->regs[14] = (pr_)->r14;                                  \
		(st_)->regs[15] = (pr_)->r15;                                  \
	} while (0)

/* The fs base (glibc's thread pointer, TLS variant II). */
static __always_inline __u64 task_tp(struct task_struct *task)
{
	return task->thread.fsbase;
}

/* x86-64 return addresses carry no tag. */
static __always_inline __u64 strip_ra(__u64 ra)
{
	return ra;
}

/* rt_sigframe: at the trampoline, sp points at the ucontext; its
 * sigcontext (uc_mcontext) starts 40 bytes in (uc_flags, uc_link,
 * uc_stack) with the general registers first (SIGCTX_REGS). */
#define SIGFRAME_MCONTEXT 40

/* Every general register from an rt_sigframe's sigcontext: the frame the
 * signal interrupted, whose pc is exact (not a return address). */
static __always_inline __u32 signal_step(struct scratch *s)
{
	struct ustate *st = &s->st;
	__u64 *g = s->sigctx;
	int i;

	if (bpf_probe_read_user(g, SIGCTX_REGS * 8,
				(const void *)(st->regs[R_SP] + SIGFRAME_MCONTEXT)))
		return METRIC_ERR_READ_FAULT;
	for (i = 0; i < 8; i++)
		st->regs[RULE_REG_R8 + i] = g[i];
	st->regs[RULE_REG_RDI] = g[8];
	st->regs[RULE_REG_RSI] = g[9];
	st->regs[R_FP] = g[10];
	st->regs[RULE_REG_RBX] = g[11];
	st->regs[RULE_REG_RDX] = g[12];
	st->regs[RULE_REG_RAX] = g[13];
	st->regs[RULE_REG_RCX] = g[14];
	st->regs[R_SP] = g[15];
	st->pc = g[16];
	st->flags &= ~ST_RETURN_ADDR;
	return 0;
}

#endif

#endif /* EP_ARCH_BPF_H */
