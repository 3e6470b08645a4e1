/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DWARF call-frame information (.eh_frame, .debug_frame) lowered to stack
 * deltas for x86-64.
 *
 * Each FDE is run through a small CFI interpreter that tracks the CFA, rbp
 * and the return-address column; every location is lowered to one
 * struct unwind_rule (see bpf/profiler.h):
 *
 *   CFA = rsp|rbp + off                          plain rule
 *   CFA = DW_OP_breg6/7 k                        plain rule
 *   CFA = DW_OP_breg6/7 k; deref [; plus_uconst m]  RULE_F_DEREF_CFA
 *   GCC's PLT expression (litN threshold)        RULE_CMD_PLT
 *   rbp at CFA+off / DW_OP_breg6 k / undefined   RULE_FP_CFA_OFF, _REG_OFF,
 *                                                _UNDEF
 *   return address undefined                     RULE_CMD_STOP
 *   CIE augmentation 'S'                         RULE_CMD_SIGNAL
 *   anything else (CFA on rax/r9/r11..., RA not at CFA-8, rbp in a
 *   register, other expressions)                 RULE_CMD_INVALID, counted
 *
 * Every read is bounds-checked; a malformed entry is skipped (counted) and
 * parsing goes on with the next one.
 */
#ifndef EP_EHFRAME_H
#define EP_EHFRAME_H

#include <stddef.h>
#include <stdint.h>

#include "deltas.h"
#include "elfmap.h"

/* Rows from the file's .eh_frame: the section, or through PT_GNU_EH_FRAME
 * and the .eh_frame_hdr table when there are no section headers.  FDEs
 * outside the executable segments of text_of are skipped.  Returns the
 * number of FDEs that gave rows, -ENOENT when there is no .eh_frame, or
 * -ENOMEM / -E2BIG from the builder. */
int ehf_eh_frame(const struct elfm *e, const struct elfm *text_of,
		 struct dt_builder *b, struct dt_extract_stats *st);

/* Rows from e's .debug_frame (zlib/zstd-compressed or not), checked
 * against the executable segments of text_of (the file the rows are for:
 * e itself, or the stripped file when e is its debug file), with source
 * src (DT_SRC_DEBUG_FRAME, | DT_SRC_DEBUGLINK for a debug file).  Returns
 * the number of FDEs that gave rows, or -ENOENT / -ENOMEM / -E2BIG. */
int ehf_debug_frame(const struct elfm *e, const struct elfm *text_of,
		    unsigned src, struct dt_builder *b,
		    struct dt_extract_stats *st);

/* Synthetic rows for .plt, .plt.sec, .plt.got and .plt.bnd (the lowest
 * priority layer: they only show where no CFI covers these sections).
 * Returns the number of sections given rows, or -ENOMEM / -E2BIG. */
int ehf_synth_plt(const struct elfm *e, struct dt_builder *b,
		  struct dt_extract_stats *st);

/* Synthetic rows for the AArch64 vDSO (a file of that machine defining
 * __kernel_rt_sigreturn): its leaf functions (sp + 0, ra in x30) and the
 * signal trampoline (SIGNAL).  Returns the number of ranges given rows, 0
 * for another file, or -ENOMEM / -E2BIG. */
int ehf_synth_vdso_a64(const struct elfm *e, struct dt_builder *b,
		       struct dt_extract_stats *st);

#endif
