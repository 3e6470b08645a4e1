/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CPython: what its BPF unwinder (python.bpf.h) and its userland module
 * (userspace/interp_python.c) share: the per-process layout and the
 * unwinder's counters.  Included by both sides after profiler.h.
 */
#ifndef EP_PYTHON_H
#define EP_PYTHON_H

#include "profiler.h"

/* The unwinder's counters: the first counts frames (see profiler.h). */
#define PYTHON_METRICS(X)                                                      \
	X(FRAMES_PYTHON, "python frames unwound")                              \
	X(ERR_PYTHON_READ, "python: reading interpreter memory failed")        \
	X(ERR_PYTHON_NO_TSTATE, "python: no thread state for this thread")     \
	X(ERR_PYTHON_TOO_DEEP, "python: more frames than the limit")           \
	X(ERR_PYTHON_LAYOUT, "python: an offset outside the frame read")

INTERP_METRIC_IDS(PYTHON, PYTHON_METRICS);


/*
 * How the frames of one thread are laid out (py_proc.frame_model).  The
 * walk starts at the thread's PyThreadState and follows a chain of frames
 * from the innermost outwards; what differs is where one invocation of
 * _PyEval_EvalFrameDefault (one native frame) ends in that chain.
 */
enum py_frame_model {
	/* 3.8-3.10: a PyFrameObject chain through f_back; every Python call
	 * is its own _PyEval_EvalFrameDefault invocation, so each frame
	 * pairs with one native eval frame.  f_lasti is an int. */
	PY_FRAMES_OBJECT = 1,
	/* 3.11: _PyInterpreterFrame chain through previous; Python-to-Python
	 * calls stay in one invocation, whose first frame has is_entry set.
	 * prev_instr is a pointer into the code object. */
	PY_FRAMES_ENTRY = 2,
	/* 3.12, 3.13: as 3.11, but each invocation pushes a shim frame
	 * (owner == PY_OWNED_BY_CSTACK) below its first real frame; the shim
	 * is not a Python frame and marks the boundary. */
	PY_FRAMES_SHIM = 3,
};

/* _PyInterpreterFrame.owner of a shim frame (3.12, 3.13:
 * FRAME_OWNED_BY_CSTACK; 3.14 renames it).  Owners 0 (thread), 1
 * (generator) and 2 (frame object) are ordinary frames. */
#define PY_OWNED_BY_CSTACK 3
/* An offset the version does not have. */
#define PY_OFF_NONE 0xffff
/* The instruction index of a frame that has not started (f_lasti == -1,
 * prev_instr one unit before the code): its line is co_firstlineno. */
#define PY_INSTR_NONE 0xffffffffU
/* Thread states examined to find the current thread's (the list is
 * newest first, so recently started threads are found sooner). */
#define PY_TSTATE_SCAN_MAX 64
/* Bytes of a thread state read at once (the span of ts_next,
 * ts_thread_id and ts_frame: 176 bytes in 3.8-3.10, 152 in 3.11, 136 in
 * 3.12); userland refuses a layout whose span is wider. */
#define PY_TSTATE_READ_MAX 256
_Static_assert(PY_TSTATE_READ_MAX <= INTERP_BUF_MAX, "a tstate fits ibuf");
/* Bytes of a frame read at once; every field the walk uses lies below
 * py_proc.f_read_size, which is at most this. */
#define PY_FRAME_READ_MAX 128
_Static_assert(PY_FRAME_READ_MAX <= INTERP_BUF_MAX, "a frame fits ibuf");

/*
 * Per-process Python data (map "py_procs", key pid), filled by userland
 * (py_proc_fill() in interp_python.h).  Addresses are the process's
 * (load bias applied).  Offsets are bytes into the named structure;
 * PY_OFF_NONE when the version lacks the field.  py_walk_stack() in
 * userspace/interp_python.c does this same walk and is the reference for
 * the BPF program.
 *
 * Current thread (once per sample, at the first eval-loop frame):
 *   interp = *(runtime + rt_interp_main)  (kept in py_proc.interp, 3.11+)
 *   ts = *(interp + is_tstate_head)
 *   up to PY_TSTATE_SCAN_MAX times, while ts:
 *     (ts_next, ts_thread_id and ts_frame read at once: ts_read_len
 *     bytes from ts + ts_read_lo)
 *     if *(ts + ts_thread_id) == thread pointer + self_off: found
 *     ts = *(ts + ts_next)
 *   (thread_id is pthread_self(): the thread pointer on x86-64 for glibc
 *   and musl; on arm64 (TLS variant I) struct pthread lies below it, by
 *   the self_off read from the process's libc; 3.11+ may compare
 *   *(ts + ts_native_tid) with the tid.)
 *   cur = *(ts + ts_frame); if cf_current_frame != PY_OFF_NONE and cur:
 *   cur = *(cur + cf_current_frame)
 *
 * At each native frame whose pc (pc - 1 for a return address) is in
 * [eval_lo, eval_hi) or [cold_lo, cold_hi), instead of that frame:
 *   while cur:
 *     read f_read_size bytes at cur into buf
 *     next = *(u64 *)(buf + f_back)
 *     if frame_model == PY_FRAMES_SHIM && buf[f_owner] == PY_OWNED_BY_CSTACK:
 *       cur = next; break                  shim: this invocation is done
 *     code = *(u64 *)(buf + f_code)
 *     if frame_model == PY_FRAMES_OBJECT:
 *       lasti = *(s32 *)(buf + f_lasti)
 *       instr = lasti < 0 ? PY_INSTR_NONE : lasti >> lasti_shift
 *     else:
 *       d = *(u64 *)(buf + f_lasti) - code - co_code_adaptive
 *       instr = (s64)d < 0 ? PY_INSTR_NONE : d / 2
 *     push FRAME_INTERP(INTERP_PYTHON): data instr, payload code
 *     cur = next
 *     if frame_model == PY_FRAMES_OBJECT: break      one frame per call
 *     if frame_model == PY_FRAMES_ENTRY && buf[f_is_entry]: break
 *   then go on unwinding natively from the eval frame.
 */
struct py_proc {
	__u64 runtime;	 /* &_PyRuntime */
	__u64 code_type; /* &PyCode_Type: a code object's ob_type */
	__u64 tss_key;	 /* &autoTSSkey._key (u32 pthread key), 0 if unknown */
	__u64 eval_lo;	 /* _PyEval_EvalFrameDefault: [eval_lo, eval_hi) */
	__u64 eval_hi;
	__u64 cold_lo; /* its .cold part [cold_lo, cold_hi); 0, 0 if none */
	__u64 cold_hi;
	__u16 version;	   /* major << 8 | minor: 0x030b for 3.11 */
	__u8 frame_model;  /* enum py_frame_model */
	__u8 lasti_shift;  /* PY_FRAMES_OBJECT: code units = f_lasti >> shift */
	__u16 f_read_size; /* bytes to read per frame (<= PY_FRAME_READ_MAX) */
	__u16 rt_interp_main; /* _PyRuntime -> interpreters.main */
	__u16 is_tstate_head; /* PyInterpreterState -> threads.head */
	__u16 ts_next;	      /* PyThreadState -> next */
	__u16 ts_thread_id;   /* PyThreadState -> thread_id (pthread_t) */
	__u16 ts_native_tid;  /* PyThreadState -> native_thread_id (3.11+) */
	__u16 ts_frame;	 /* -> frame (3.8-3.10), cframe (3.11, 3.12),
			  *    current_frame (3.13) */
	__u16 cf_current_frame; /* _PyCFrame -> current_frame (3.11, 3.12) */
	__u16 f_back;	  /* f_back / previous */
	__u16 f_code;	  /* f_code / f_executable */
	__u16 f_lasti;	  /* f_lasti (s32) / prev_instr / instr_ptr (pointer) */
	__u16 f_is_entry; /* is_entry (u8, 3.11) */
	__u16 f_owner;	  /* owner (u8, 3.11+) */
	__u16 co_code_adaptive; /* bytecode in the code object (3.11+) */
	__s32 self_off; /* pthread_self() - thread pointer (interp_libc_self):
			 * 0 on x86-64, -sizeof(struct pthread) on arm64 */
	/* A thread state's bytes read at once: ts_read_len from
	 * ts_read_lo, the span of ts_next, ts_thread_id and ts_frame
	 * (userland's py_ts_window; at most PY_TSTATE_READ_MAX, or the
	 * layout is refused) */
	__u16 ts_read_lo;
	__u16 ts_read_len;
	/* *(runtime + rt_interp_main), kept by the BPF walk once read (0
	 * until then; userland writes 0): from 3.11 the main interpreter
	 * is _PyRuntime's own member (_main_interpreter), so the pointer
	 * is the same from initialization to exit.  Before 3.11 it is
	 * allocated and read at every sample. */
	__u64 interp;
};
_Static_assert(sizeof(struct py_proc) == 104, "py_proc layout");

#endif /* EP_PYTHON_H */
