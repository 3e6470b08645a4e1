/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * HotSpot (OpenJDK's JVM, libjvm.so): what its BPF unwinder
 * (hotspot.bpf.h) and its userland module (userspace/interp_hotspot.c)
 * share.
 *
 * The JVM runs Java code in its code cache, anonymous executable memory
 * it generates at start: the template interpreter (one StubQueue of
 * codelets, AbstractInterpreter::_code), stubs, and later JIT-compiled
 * nmethods.  An interpreted Java frame is a frame of that interpreter's
 * code that keeps rbp as its frame pointer; its Method* and bytecode
 * pointer (bcp) sit in fixed slots below rbp (frame_x86.hpp:
 * interpreter_frame_method_offset -3 and interpreter_frame_bcp_offset -8
 * words).  The caller's rbp and return address are at rbp and rbp + 8,
 * like any frame-pointer frame, so the native step unwinds it.
 *
 * Every C++ offset the names need comes from the VM's own introspection
 * tables (gHotSpotVMStructs and friends) read from the live process at
 * attach; the frame slots are x86_64 constants the tables do not export.
 *
 * What is unwound: interpreted frames (-Xint, or methods not yet
 * compiled) and compiled ones (below); stubs, adapters and native
 * wrappers are named and walked by frame pointer as anonymous code.
 */
#ifndef EP_HOTSPOT_H
#define EP_HOTSPOT_H

#include "profiler.h"

#define HOTSPOT_METRICS(X)                                                     \
	X(FRAMES_HOTSPOT, "hotspot: Java frames unwound, interpreted and compiled") \
	X(ERR_HOTSPOT_READ, "hotspot: reading a Java frame's slots failed") \
	X(HOTSPOT_NOT_READY, "hotspot: code of a JVM whose tables were not read yet") \
	X(HOTSPOT_COMPILED, "hotspot: compiled (nmethod) frames unwound by frame size")

INTERP_METRIC_IDS(HOTSPOT, HOTSPOT_METRICS);

/* The interpreter frame slots, in bytes from rbp, on x86_64. */
#define HOTSPOT_X86_METHOD_SLOT (-3 * 8)
#define HOTSPOT_X86_BCP_SLOT (-8 * 8)

/* A frame: data = the bcp (a user address: 47 bits), payload = the
 * Method*, and at the leaf a second payload word, the bcp slot (data is
 * then r13, where the interpreter keeps the bcp between calls).
 * Userland gets the bytecode index from the bcp and the method's
 * ConstMethod. */

#define HOTSPOT_X86_SENDER_SP_SLOT (-1 * 8)
/* aarch64 (frame_aarch64.hpp): the same but for a padding slot (sp stays
 * 16-byte aligned) between mdp and the mirror, which moves the bcp one
 * slot down.  Its Method* and sender sp are where x86_64 has them. */
#define HOTSPOT_A64_BCP_SLOT (-9 * 8)

/*
 * Compiled frames (nmethods, C1 and C2) keep no frame pointer unless
 * -XX:+PreserveFramePointer: at a pc in a code heap the unwinder finds the
 * code blob through the heap's segment map (a byte per segment: 0 at a
 * block's first segment, else how many segments to step back; 0xff
 * free), and when it is an nmethod (its _name "nmethod") unwinds it by its
 * frame size: the caller's sp is sp + frame_size words, the return
 * address and the saved rbp the two words below it.  A compiled frame:
 * data = the pc, payload = the Method* and the nmethod with bit 63 set.
 * Other blobs (stubs, adapters, native wrappers) are walked by frame
 * pointer as native code is, their frame pushed first: data = the pc,
 * payload = the blob's _name (a C string) and the blob with bits 63 and
 * 62 set.
 */
#define HOTSPOT_HEAPS 3
#define HOTSPOT_SEGMAP_HOPS 16
#define HOTSPOT_COMPILED (1ULL << 63)
#define HOTSPOT_STUB (1ULL << 62)

struct hotspot_heap {
	__u64 lo, hi, segmap;
	__u32 log2, pad;
};

/* Per process (map "hotspot_procs", key pid). */
struct hotspot_proc {
	__u64 interp_lo, interp_hi; /* the interpreter's code */
	struct hotspot_heap heaps[HOTSPOT_HEAPS]; /* lo 0: none */
	__s16 method_slot, bcp_slot, sender_sp_slot; /* from rbp, bytes */
	__u16 heapblock;			     /* sizeof(HeapBlock) */
	__u16 blob_name, blob_frame_size, nm_method; /* CodeBlob, nmethod */
	__u16 pad;
};
_Static_assert(sizeof(struct hotspot_proc) == 128, "hotspot_proc layout");

#endif
