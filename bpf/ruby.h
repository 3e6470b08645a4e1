/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ruby (CRuby 2.7 to 3.4; Debian's libruby-3.1 tested, with and without
 * YJIT): what its BPF unwinder (ruby.bpf.h) and its userland module
 * (userspace/interp_ruby*.c) share.
 *
 * A thread runs Ruby code on an execution context (rb_execution_context_t,
 * the thread-local ruby_current_ec), whose VM stack holds, from its end
 * downwards, an array of control frames (rb_control_frame_t): ec->cfp is
 * the current one, its callers are at higher addresses, up to vm_stack +
 * vm_stack_size VALUEs.  Each frame has an environment pointer ep whose
 * ep[0] holds the frame's magic (method, block, top, cfunc...) and flags;
 * ep[-2] is a C function's method entry.  rb_vm_exec() runs the frames of
 * Ruby code; Ruby calling Ruby stays in one invocation, while C calling
 * back into Ruby (a block yielded by Integer#times, sort_by's block)
 * starts a new one, whose first frame has VM_FRAME_FLAG_FINISH.  So at
 * each native rb_vm_exec frame the unwinder pushes the control frames up
 * to and including the next FINISH one, and native unwinding goes on from
 * rb_vm_exec.  A C function's frame comes out in the invocation that
 * called it, just above the caller's Ruby frame.
 *
 * YJIT keeps the control frames (only their pc points into JIT code) and
 * runs its code from rb_vm_exec: a native pc in anonymous code of a Ruby
 * process is the YJIT entry frame, which pushed three registers (r13,
 * r12, rbx) below its return address; when that address is in the VM's
 * code, the unwinder pops the frame and the Ruby frames come out at
 * rb_vm_exec as without YJIT.
 */
#ifndef EP_RUBY_H
#define EP_RUBY_H

#include "profiler.h"

#define RUBY_METRICS(X)                                                        \
	X(FRAMES_RUBY, "ruby frames unwound")                                  \
	X(ERR_RUBY_READ, "ruby: reading the VM's control frames failed")       \
	X(ERR_RUBY_NO_EC, "ruby: the thread's execution context not found")   \
	X(ERR_RUBY_TOO_DEEP, "ruby: more control frames in one rb_vm_exec than the limit") \
	X(RUBY_JIT_FRAMES, "ruby: native frames in YJIT code unwound")

INTERP_METRIC_IDS(RUBY, RUBY_METRICS);

/* ep[0] (VM_ENV_DATA_INDEX_FLAGS): VM_FRAME_MAGIC_* and flags, vm_core.h */
#define RUBY_FRAME_MAGIC_MASK 0x7fff0001u
#define RUBY_FRAME_MAGIC_CFUNC 0x55550001u
#define RUBY_FRAME_MAGIC_IFUNC 0x66660001u
#define RUBY_FRAME_MAGIC_DUMMY 0x79990001u
#define RUBY_FRAME_FLAG_FINISH 0x0020u
#define RUBY_ENV_FLAG_LOCAL 0x0002u
/* ep[VM_ENV_DATA_INDEX_ME_CREF] and ep[VM_ENV_DATA_INDEX_SPECVAL] (a
 * block's: its parent's ep, tagged in the low two bits), in bytes */
#define RUBY_EP_ME_CREF (-16)
#define RUBY_EP_SPECVAL (-8)
/* Environments a block's frame climbs to its method's (the local one). */
#define RUBY_MAX_EP_HOPS 4

/* How the thread's execution context is found (ruby_proc.ec_mode). */
enum ruby_ec_mode {
	RUBY_EC_NONE = 0,   /* the main thread's, through ruby_current_vm_ptr */
	RUBY_EC_DTV = 1,    /* TLS, general dynamic: the module id is in the
			     * GOT slot ec_addr (written by ld.so), the
			     * variable at ec_off in the module's block */
	RUBY_EC_TPOFF = 2,  /* TLS, initial exec: the GOT slot ec_addr holds
			     * the offset from the thread pointer */
	RUBY_EC_STATIC = 3, /* TLS of the executable: at thread pointer +
			     * ec_off (a negative number) */
	RUBY_EC_GLOBAL = 4, /* a global pointer to the ec (before 3.0) */
	RUBY_EC_TLSDESC = 5, /* TLS through a descriptor (arm64): the GOT
			      * slot ec_addr holds the resolver and its
			      * argument, the offset from the thread
			      * pointer (static TLS) or a pointer to the
			      * module id and ec_off (dynamic TLS) */
};

/* A frame: data = RUBY_FRAME_ISEQ (payload: the iseq, the pc) or
 * RUBY_FRAME_CFUNC (payload: the callable method entry).  An iseq frame's
 * data also holds what its (local) environment names as its method entry
 * or cref (8-byte aligned, below RUBY_ME_LIMIT), for the class of its
 * method.  The 48 bits of a frame's data hold it shifted right by one
 * (me >> 3 above the kind's two bits): anything below 2^49, which takes
 * in arm64's 48-bit user addresses, where the heap's mmap'd pages (and so
 * the method entries) sit above 2^47, unlike x86-64's. */
#define RUBY_FRAME_ISEQ 1
#define RUBY_FRAME_CFUNC 2
#define RUBY_ME_LIMIT (1ull << 49)
#define RUBY_FRAME_DATA(kind, me) ((((__u64)(me) >> 3) << 2) | (kind))
#define RUBY_FRAME_KIND(data) ((unsigned)((data)&3))
#define RUBY_FRAME_ME(data) (((data) >> 2) << 3)

/* Per process (map "ruby_procs", key pid): process addresses, offsets. */
struct ruby_proc {
	__u64 ec_addr;		/* per ec_mode */
	__s64 ec_off;		/* per ec_mode */
	__u64 vm_ptr;		/* &ruby_current_vm_ptr, 0 if none */
	__u64 loop_lo, loop_hi; /* rb_vm_exec */
	__u64 text_lo, text_hi; /* the VM's executable mapping: where YJIT's
				 * code returns to */
	__u8 ec_mode;
	__u8 yjit; /* YJIT's entry frame is known (3.1): anonymous code is
		    * unwound as its */
	__u16 ec_vm_stack, ec_vm_stack_size, ec_cfp; /* execution context */
	__u16 cfp_size, cfp_pc, cfp_iseq, cfp_ep;    /* control frame */
	__u16 vm_main_thread, th_ec; /* vm->ractor.main_thread, th->ec; 0:
				      * no fallback */
	__u16 pad16[2];
};
_Static_assert(sizeof(struct ruby_proc) == 80, "ruby_proc layout");

#endif
