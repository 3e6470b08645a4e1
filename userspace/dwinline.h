/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inline frames and source lines of one ELF file, from its DWARF.
 *
 * libdw answers "which scopes cover this pc" by walking a CU's DIE tree
 * on every query (0.33 ms per address for libc, reference/runtimes-2.md
 * section 2), ten times what an index costs.  So the DWARF is read once
 * per file into a compact table:
 *
 *   scopes    one per DW_TAG_subprogram and DW_TAG_inlined_subroutine
 *             with code: name, parent scope, and for an inlined one the
 *             call site (file:line) in its parent;
 *   segments  sorted, non-overlapping address ranges, each naming its
 *             innermost scope (the chain is the parent links);
 *   lines     the line table: sorted addresses -> (file, line);
 *   strings   names and file paths, each once.
 *
 * The table is one flat, position-independent blob: what the store
 * keeps by file ID (dwi_blob) is what a lookup reads, and dwi_load()
 * checks every offset and index of a blob from the cache before it is
 * used.  A file whose table would pass the byte budget is read again for
 * functions only (no lines, no inlined scopes) and says so in its flags
 * (DWI_FUNCS_ONLY) for the caller to count.
 *
 * The module does not look for debug files: it is given the file that
 * holds .debug_info (the ELF itself or its separate debug file).  Tables
 * are immutable once built: lookups from several threads are safe.
 */
#ifndef EP_DWINLINE_H
#define EP_DWINLINE_H

#include <stddef.h>
#include <stdint.h>

struct dwi_table;

/* A file's table may hold this many bytes by default (libc's full table
 * is 2.7 MiB, its functions alone 0.23 MiB). */
#define DWI_DEFAULT_MAX_BYTES (64U << 20)
/* Blob format; bump on any layout change so old cache entries are
 * refused (dwi_load returns -EPROTO) and rebuilt. */
#define DWI_VERSION 1

/* flags */
#define DWI_FUNCS_ONLY 0x1U /* over budget: functions only */

struct dwi_opts {
	/* 0: DWI_DEFAULT_MAX_BYTES.  Bounds the blob and, near enough, the
	 * memory the build holds besides libdw's own. */
	size_t max_bytes;
	/* Read functions only, whatever the budget (the compact mode). */
	int funcs_only;
	/* Give up past this many ns of building (0: no bound), checked
	 * between compile units: a table is built on the thread that names
	 * frames, and a 1 GB debug file takes minutes. */
	uint64_t max_ns;
};

/*
 * Build the table of the ELF file open at fd (not closed, not moved):
 * the file that holds .debug_info.  Returns 0, -ENODATA when the file
 * has no DWARF (or no code in it), -ENOEXEC when it is not a 64-bit
 * little-endian ELF, -EFBIG when even its functions pass the budget,
 * -ETIMEDOUT past max_ns, -EINVAL for DWARF libdw refuses, -EIO when
 * the file shrank while it was read (elfm_damaged), or -ENOMEM.  The
 * file is read through elfmap.h (elfm_libelf).
 */
int dwi_build_fd(int fd, const struct dwi_opts *o, struct dwi_table **out);
int dwi_build_path(const char *path, const struct dwi_opts *o,
		   struct dwi_table **out);
void dwi_free(struct dwi_table *t);

/*
 * A table from a blob dwi_blob() gave (the bytes are copied; blob may be
 * unaligned).  Returns 0, -EPROTO for another version, -EBADMSG for a
 * blob that is truncated or inconsistent, or -ENOMEM.
 */
int dwi_load(const void *blob, size_t len, struct dwi_table **out);
/* The table's bytes, valid while the table lives. */
const void *dwi_blob(const struct dwi_table *t, size_t *len);

uint32_t dwi_flags(const struct dwi_table *t);

struct dwi_stats {
	uint32_t scopes, inlined, segments, lines, str_bytes;
	size_t bytes;
};
void dwi_stats(const struct dwi_table *t, struct dwi_stats *st);

struct dwi_frame {
	const char *func;	/* never NULL ("??" for a nameless scope) */
	const char *file;	/* NULL when unknown (or DWI_FUNCS_ONLY) */
	uint32_t line;		/* 0 when unknown */
};

/*
 * The frames at addr (an ELF virtual address of the file; for a return
 * address pass addr - 1, the call), innermost first: frames[0] is the
 * function whose code is at addr with the line of addr, each next one
 * the function it was inlined into, with the line of the call.  Returns
 * the number of frames written, 0 when no function's DWARF covers addr
 * (the caller falls back to the ELF symbols).  A chain deeper than max
 * keeps its max - 1 innermost frames and its outermost function.
 * Strings live as long as the table.
 */
int dwi_lookup(const struct dwi_table *t, uint64_t addr,
	       struct dwi_frame *frames, int max);

#endif
