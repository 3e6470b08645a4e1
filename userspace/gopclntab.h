/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Go's .gopclntab: function table and pc-value tables, read to produce
 * stack deltas for Go code, which has no .eh_frame.
 *
 * Supported header magics: 0xfffffffa (Go 1.16, 1.17), 0xfffffff0 (Go
 * 1.18, 1.19), 0xfffffff1 (Go 1.20 and later).  The table is found by
 * section name (.gopclntab, .data.rel.ro.gopclntab), else by its magic in
 * .data.rel.ro / .rodata / .noptrdata or, without section headers, in the
 * read-only segments, and every candidate is checked before use.
 *
 * Rows (x86-64): from the pcsp table, CFA = rsp + spdelta + 8; rbp is
 * saved at CFA-16 from the instruction after the prologue stores it
 * (Go <= 1.20 "SUBQ $N, SP; MOVQ BP, N-8(SP)", Go >= 1.21 "PUSHQ BP"),
 * recognised from the code bytes, and while the frame stays allocated.
 * The outermost functions (runtime.goexit, mstart, mcall, morestack,
 * rt0_go) are STOP; runtime.systemstack and asmcgocall, which switch to
 * the g0 stack without touching rbp, are FRAME_POINTER; the signal
 * restorer runtime.sigreturn(__sigaction) is SIGNAL from one byte before
 * its entry, so a return-address lookup (pc-1) finds it.
 */
#ifndef EP_GOPCLNTAB_H
#define EP_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

#include "deltas.h"
#include "elfmap.h"

struct gopc_table;

/* Find and check the pclntab of e.  Returns 0, -ENOENT when there is none
 * (not Go, or a format we do not know), -ENOMEM.  The table points into
 * e's mapping: free it before e. */
int gopc_open(const struct elfm *e, struct gopc_table **out);
void gopc_free(struct gopc_table *t);

/* 116, 118 or 120: the Go version whose layout the table has. */
unsigned gopc_version(const struct gopc_table *t);
size_t gopc_nfunc(const struct gopc_table *t);
/* The ELF address of the table's header. */
uint64_t gopc_vaddr(const struct gopc_table *t);

struct gopc_func {
	uint64_t entry, end; /* [entry, end): ELF addresses */
	const char *name;    /* into the mapping; "" when out of bounds */
	uint32_t pcsp;	     /* offset of its pcsp table, 0 = none */
};
/* Function i (0 <= i < gopc_nfunc).  Returns 0 or -EINVAL when the
 * entry is inconsistent. */
int gopc_func(const struct gopc_table *t, size_t i, struct gopc_func *f);

/* Add every function's rows to b (source DT_SRC_GOPCLNTAB).  Functions
 * outside the executable segments or with corrupt tables are skipped.
 * Returns the number of functions that gave rows, or -ENOMEM / -E2BIG. */
int gopc_add_rows(const struct elfm *e, const struct gopc_table *t,
		  struct dt_builder *b, struct dt_extract_stats *st);

#endif
