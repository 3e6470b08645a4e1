/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * V8 (Node.js): what its BPF unwinder (v8.bpf.h) and its userland module
 * (userspace/interp_v8.c) share.
 *
 * V8 runs JavaScript in code it generates itself: the builtins embedded
 * in the node binary's text (the interpreter Ignition's trampoline and
 * bytecode handlers, the entry and exit stubs) and the JIT's code in
 * anonymous executable memory (Sparkplug, Maglev, TurboFan).  None of it
 * has CFI, but all of it keeps rbp as a frame pointer, and every frame
 * below rbp holds either a frame-type marker (a typed frame: entry,
 * exit, stub, internal; an int32 shifted left once, low bit 0) or the
 * context (a tagged heap pointer, low bit 1) of a JavaScript frame,
 * whose JSFunction is the slot below, and, in an interpreted or baseline
 * frame, the BytecodeArray and the bytecode offset (a Smi) below that.
 * The slots' offsets come from the binary's v8dbg_off_fp_* symbols.
 *
 * So at a pc in the embedded builtins or in anonymous code of a process
 * running V8, the unwinder reads one window of slots around rbp, pushes a
 * V8 frame for a JavaScript frame (typed frames are V8's plumbing and are
 * left out), and moves to the caller by the frame pointer.  Userland
 * checks and names what it pushed; the native unwinder goes on at the
 * first pc that is neither (the C++ under JSEntry).
 */
#ifndef EP_V8_H
#define EP_V8_H

#include "profiler.h"

#define V8_METRICS(X)                                                          \
	X(FRAMES_V8, "v8 JavaScript frames unwound")                           \
	X(V8_TYPED_FRAMES, "v8: typed frames (entry, exit, stub) walked over") \
	X(ERR_V8_READ, "v8: reading a frame's slots failed")                   \
	X(ERR_V8_FP_BAD, "v8: frame pointer not on the stack or not moving up")

INTERP_METRIC_IDS(V8, V8_METRICS);

/* The window read per frame: fp - V8_WIN_BELOW .. fp + 16 (saved fp,
 * return address).  Every v8dbg_off_fp_* slot used is in it. */
#define V8_WIN_BELOW 48
#define V8_WIN_BYTES (V8_WIN_BELOW + 16)

/* A frame: data = bytecode offset (the Smi's value, from the start of the
 * tagged BytecodeArray) | V8_F_BCOFF when the slot held a Smi, or, for a
 * frame running JIT code (a pc outside the embedded builtins), the pc it
 * runs (a return address less one above the leaf) | V8_F_JIT: userland
 * finds the code object around it, and in optimized code the functions
 * inlined there and their lines.  Payload: the JSFunction, and the slot
 * where an interpreted or baseline frame keeps its BytecodeArray (0 when
 * not a heap object; userland checks its type). */
#define V8_F_BCOFF (1ULL << 32)
#define V8_FRAME_DATA(off, valid)                                              \
	((__u64)(__u32)(off) | ((valid) ? V8_F_BCOFF : 0))
/* user addresses fit in 47 bits: the one above says "a pc" */
#define V8_F_JIT (1ULL << 47)
#define V8_PC_MASK (V8_F_JIT - 1)
#define V8_FRAME_PC(pc) (((__u64)(pc) & V8_PC_MASK) | V8_F_JIT)

#define V8_NO_REG 0xff

/* Per process (map "v8_procs", key pid). */
struct v8_proc {
	__u64 blob_lo, blob_hi; /* the embedded builtins, file addresses */
	__s8 off_function;	/* v8dbg_off_fp_function */
	__s8 off_context;	/* v8dbg_off_fp_context */
	__s8 off_bytecode_array;
	__s8 off_bytecode_offset;
	/* the interpreter's registers (DWARF numbers, V8_NO_REG: none): at
	 * the sample's leaf the bytecode offset is there, not yet in its
	 * frame slot (which holds the offset of the frame's last call) */
	__u8 reg_bc_offset, reg_bc_array;
	__u16 pad;
};
_Static_assert(sizeof(struct v8_proc) == 24, "v8_proc layout");

#endif
