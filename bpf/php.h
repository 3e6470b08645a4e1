/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * PHP (the Zend engine, 7.4 to 8.4, NTS builds): what its BPF unwinder
 * (php.bpf.h) and its userland module (userspace/interp_php.c) share.
 *
 * The engine keeps the frames of the PHP code it runs in a chain of
 * zend_execute_data, innermost first, from executor_globals (EG, a plain
 * global in NTS builds) .current_execute_data through prev_execute_data.
 * Each frame names its function (zend_function *func: a user function,
 * an internal one such as usort, or the script's top level) and, for
 * user code, the opline being executed (zend_op.lineno: the line).
 * execute_ex() runs user frames; PHP calling PHP stays in one execute_ex
 * invocation, while an internal function calling back into PHP (usort's
 * comparator) starts a new one, whose first frame has ZEND_CALL_TOP in
 * This.u1.type_info.  So at each native execute_ex frame the unwinder
 * pushes the chain's frames up to and including the next ZEND_CALL_TOP
 * one, and native unwinding goes on from execute_ex.
 */
#ifndef EP_PHP_H
#define EP_PHP_H

#include "profiler.h"

#define PHP_METRICS(X)                                                         \
	X(FRAMES_PHP, "php frames unwound")                                    \
	X(ERR_PHP_READ, "php: reading the engine's frames failed")             \
	X(ERR_PHP_TOO_DEEP, "php: more frames in one execute_ex than the limit") \
	X(PHP_JIT_FRAMES, "php: native frames in JIT code replaced")

INTERP_METRIC_IDS(PHP, PHP_METRICS);

/* This.u1.type_info of the first frame of an execute_ex invocation. */
#define PHP_CALL_TOP (1u << 17)
/* zend_function.type */
#define PHP_INTERNAL_FUNCTION 1
#define PHP_USER_FUNCTION 2
#define PHP_EVAL_CODE 4
/* Bytes of a zend_execute_data read at once (every field used is below). */
#define PHP_ED_READ 56

/* A frame: data = line | type << 32 (line 0 for internal functions),
 * payload = the zend_function. */
#define PHP_FRAME_DATA(line, type) ((__u64)(line) | ((__u64)(type) << 32))

/*
 * The tracing JIT (opcache.jit) runs its traces in an anonymous mapping
 * (/dev/zero, shared), jumped to from execute_ex's opcode handlers: in
 * the hybrid VM they run on execute_ex's own stack frame, the sp of its
 * body.  At a pc in anonymous code of a PHP process the unwinder pushes
 * the frames of that execute_ex invocation, then goes on natively as if
 * at resume_pc, an address of execute_ex's body: same sp, same rule.
 */

/* Per process (map "php_procs", key pid): process addresses, offsets. */
struct php_proc {
	__u64 current;		/* &executor_globals.current_execute_data */
	__u64 loop_lo, loop_hi; /* execute_ex */
	__u64 resume_pc;	/* in execute_ex's body; 0: JIT frames not
				 * unwound (not the hybrid VM) */
	__u16 ed_opline, ed_func, ed_type_info, ed_prev; /* zend_execute_data */
	__u16 op_lineno;				 /* zend_op */
	__u16 fn_type;					 /* zend_function */
	__u16 fp_sp;	/* aarch64: at a JIT frame the body's sp is x29 - fp_sp
			 * (JIT code moves sp, not x29); 0: sp as it is */
	__u16 pad;
};
_Static_assert(sizeof(struct php_proc) == 48, "php_proc layout");

#endif
