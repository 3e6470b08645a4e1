/* SPDX-License-Identifier: Apache-2.0 */
/* HotSpot's module (interp_hotspot*.c): what its tests and fuzz target
 * reach. */
#ifndef EP_INTERP_HOTSPOT_H
#define EP_INTERP_HOTSPOT_H

#include <stdint.h>
#include <sys/types.h>

#include "interp.h"

/* The exported variables libjvm.so describes its tables with (.dynsym);
 * they live in .data/.bss, so their values are read from the process. */
#define HS_SYMBOLS(X)                                                          \
	X(STRUCTS, "gHotSpotVMStructs")                                        \
	X(S_TYPE, "gHotSpotVMStructEntryTypeNameOffset")                       \
	X(S_FIELD, "gHotSpotVMStructEntryFieldNameOffset")                     \
	X(S_TSTR, "gHotSpotVMStructEntryTypeStringOffset")                     \
	X(S_STATIC, "gHotSpotVMStructEntryIsStaticOffset")                     \
	X(S_OFFSET, "gHotSpotVMStructEntryOffsetOffset")                       \
	X(S_ADDR, "gHotSpotVMStructEntryAddressOffset")                        \
	X(S_STRIDE, "gHotSpotVMStructEntryArrayStride")                        \
	X(TYPES, "gHotSpotVMTypes")                                            \
	X(T_NAME, "gHotSpotVMTypeEntryTypeNameOffset")                         \
	X(T_SIZE, "gHotSpotVMTypeEntrySizeOffset")                             \
	X(T_STRIDE, "gHotSpotVMTypeEntryArrayStride")                          \
	X(INTS, "gHotSpotVMIntConstants")                                      \
	X(I_NAME, "gHotSpotVMIntConstantEntryNameOffset")                      \
	X(I_VALUE, "gHotSpotVMIntConstantEntryValueOffset")                    \
	X(I_STRIDE, "gHotSpotVMIntConstantEntryArrayStride")                   \
	X(LONGS, "gHotSpotVMLongConstants")                                    \
	X(L_NAME, "gHotSpotVMLongConstantEntryNameOffset")                     \
	X(L_VALUE, "gHotSpotVMLongConstantEntryValueOffset")                   \
	X(L_STRIDE, "gHotSpotVMLongConstantEntryArrayStride")

#define HS_SYM_ENUM_(id, name) HS_SYM_##id,
enum { HS_SYMBOLS(HS_SYM_ENUM_) HS_SYM_COUNT };
#undef HS_SYM_ENUM_

/* A code heap: its reserved range and segment map. */
#define HS_HEAPS_MAX 4
struct hs_heap {
	uint64_t lo, hi, segmap;
	uint32_t log2; /* segment size */
};

/* What the walk and the names need of one JVM, from its tables.  Offsets
 * in bytes; statics are addresses in the process; 0 when absent. */
struct hs_vm {
	uint32_t n_structs, n_types, n_ints, n_longs; /* entries read */
	uint64_t code_heaps;  /* &CodeCache::_heaps */
	uint64_t interp_code; /* &AbstractInterpreter::_code */
	uint64_t interp_lo, interp_hi; /* the interpreter's code (0: none yet) */
	uint32_t stubq_buffer, stubq_limit;	/* StubQueue */
	uint32_t method_const;			/* Method::_constMethod */
	uint32_t cm_constants, cm_code_size, cm_name_index, cm_sig_index;
	uint32_t cm_flags, cm_flags_size;	/* ConstMethod::_flags, bytes */
	uint32_t cp_holder, cp_source_file;	/* ConstantPool */
	uint32_t klass_name;			/* Klass::_name */
	uint32_t sym_length, sym_body;		/* Symbol */
	uint32_t blob_name, blob_size, blob_frame_size; /* CodeBlob */
	uint32_t size_method, size_cm, size_cp, size_symbol; /* types */
	uint32_t nm_method;	/* CompiledMethod or nmethod ::_method */
	uint32_t ga_len, ga_data; /* GrowableArray */
	uint32_t heap_memory, heap_segmap, heap_log2; /* CodeHeap */
	uint32_t vs_low_boundary, vs_high_boundary, vs_low; /* VirtualSpace */
	uint32_t size_heapblock;
	/* a compiled pc's scopes (JDK 17: absolute code and scopes; JDK 23
	 * on: in the nmethod's immutable data) */
	uint32_t blob_code_begin, blob_code_offset, cm_scopes_data;
	uint32_t nm_deps_off, nm_immutable, nm_scopes_data_off, nm_scopes_pcs_off;
	uint32_t pcd_pc, pcd_scope, size_pcdesc;
	/* the metadata a scope names its method in: header-relative to
	 * JDK 22; after the relocations in the mutable data from JDK 25 */
	uint32_t nm_metadata_off, blob_mutable, blob_mutable_size,
		blob_reloc_size;
	uint32_t cm_deopt_begin, nm_deopt_off; /* to JDK 22; JDK 23 on */
	uint64_t found;		/* bit per wanted field seen (interp_hotspot_vm.c) */
	struct hs_heap heaps[HS_HEAPS_MAX];
	uint32_t n_heaps;
	int64_t has_linenumber; /* ConstMethod flag bit, -1 unknown */
	uint32_t u5_excess;	/* 1: UNSIGNED5 streams of JDK 21+ */
};

/* Read the tables of the JVM in process pid: sym[] holds the absolute
 * addresses of the HS_SYMBOLS variables.  0; -EAGAIN when the VM has not
 * filled them yet (too early in its start); -EINVAL when a table makes
 * no sense or a field the names need is missing; a read's error. */
int hs_read_vm(interp_read_fn read, void *arg, pid_t pid,
	       const uint64_t sym[HS_SYM_COUNT], struct hs_vm *out);

/* Mark the field at byte offset at of struct hs_vm as found in the
 * tables, as hs_read_vm does (for tests and fuzzing, which fill a
 * struct hs_vm by hand with one JDK's offsets). */
void hs_vm_have(struct hs_vm *vm, size_t at);

/* Fill vm->heaps from the process (hs_read_vm does; attach again when
 * the code cache changed). */
void hs_read_heaps(interp_read_fn read, void *arg, pid_t pid,
		   struct hs_vm *vm);

/* Name one frame (bpf/hotspot.h) into out[0..max), innermost first:
 * "pkg.Class.method", its source file, the line of its bytecode index.
 * An interpreted frame (data = bcp, payload = the Method*) is one name;
 * a compiled one (data = pc, payload = the Method* and the nmethod) is
 * the methods C1/C2 inlined at its pc, innermost first, then its own
 * (the innermost max when deeper).  Returns how many (>= 1), or a
 * negative errno when the frame's own method cannot be read. */
int hs_frame_names(interp_read_fn read, void *arg, pid_t pid,
		   const struct hs_vm *vm, const struct interp_frame *f,
		   struct interp_symbol *out, unsigned max);

/* One scope of a compiled pc: its Method* (0 when the nmethod's metadata
 * is not read) and bytecode index (-1: the method's entry). */
struct hs_scope {
	uint64_t method;
	int32_t bci;
};

/* The scopes of the nmethod nm at pc (its PcDesc, then each scope's
 * sender out to the outermost), innermost first into sc[0..max), the
 * outermost into *outer.  Returns the chain's depth (more than max when
 * cut), or a negative errno (-ENOTSUP: a layout not known; -ELOOP: more
 * than 32 scopes; -ESTALE: pc is the nmethod's deopt handler, where a
 * frame being deoptimized returns). */
int hs_scope_chain(interp_read_fn read, void *arg, pid_t pid,
		   const struct hs_vm *vm, uint64_t nm, uint64_t pc,
		   struct hs_scope *sc, unsigned max, struct hs_scope *outer);

/* What naming compiled frames met, since the start (the manager counts
 * whole symbolizations only): inlined frames given, chains not read or
 * whose methods were not (the frame's own method alone is given), chains
 * whose outermost
 * method is not the nmethod's (misread: the same), chains cut at max,
 * inlined methods whose names could not be read (left out), frames
 * being deoptimized (their pc is their nmethod's deopt handler: their
 * own method alone, without line). */
struct hs_counts {
	uint64_t inlined, chain_unread, chain_mismatch, chain_cut,
		scope_unnamed, deopt;
};
void hs_get_counts(struct hs_counts *out);

/* The frame's own method alone (hs_frame_names' last): 0 or an error. */
int hs_frame_name(interp_read_fn read, void *arg, pid_t pid,
		  const struct hs_vm *vm, const struct interp_frame *f,
		  struct interp_symbol *out);

/* The line of bci in a compressed line-number table (the stream after a
 * method's bytecodes), len bytes at most; excess: struct hs_vm's
 * u5_excess.  0 when not found. */
uint32_t hs_line_of(const uint8_t *tab, size_t len, uint32_t bci,
		    unsigned excess);

/* What detection keeps for a file (its store record): ELF addresses of
 * the variables.  The unit tests read a stored one with fix_record
 * (interp_fixture.h). */
#define HS_INFO_FORMAT 1
struct hs_info {
	uint32_t format;
	uint32_t pad;
	uint64_t sym[HS_SYM_COUNT];
};

#endif
