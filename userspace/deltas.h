/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stack deltas: the compact, BPF-ready form of a file's unwind tables.
 *
 * Extraction (ehframe.c, gopclntab.c) produces rows "from this address on,
 * unwind with this rule" into a dt_builder.  dt_builder_finish() sorts
 * them, marks gaps, merges runs with the same rule, deduplicates the rules
 * of the file and pages the rows by 64 KiB, giving a dt_file: exactly what
 * the BPF maps take, except that the rule indices are local to the file.
 * Loading translates them into the global rule table (a table lookup per
 * row, no computation), and the store keeps dt_file's serialized bytes.
 *
 * Addresses are ELF virtual addresses (what readelf prints), not file
 * offsets and not runtime addresses.
 */
#ifndef EP_DELTAS_H
#define EP_DELTAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

#include "profiler.h"

/* Where a file's rows came from (bit mask). */
#define DT_SRC_EH_FRAME 0x1
#define DT_SRC_DEBUG_FRAME 0x2
#define DT_SRC_GOPCLNTAB 0x4
#define DT_SRC_DEBUGLINK 0x8 /* .debug_frame came from the debuglink file */
#define DT_SRC_SYNTH 0x10    /* synthetic rows (PLT sections without CFI) */

struct dt_row {
	uint64_t addr;
	struct unwind_rule rule;
};

struct dt_builder;

/* Allocate an empty builder.  Returns 0 or -ENOMEM. */
int dt_builder_new(struct dt_builder **out);
void dt_builder_free(struct dt_builder *b);
/* Add a row: from addr on (until the next row), use rule.  Rows may come
 * in any order; a later row at the same address replaces an earlier one
 * of the same source.  Sources are layered by priority: eh_frame over
 * gopclntab over debug_frame over synthetic rows; where a higher layer
 * has a valid (not INVALID) rule it wins, elsewhere the lower layers show
 * through.  The rule is canonicalized (unused fields zeroed; a command is
 * its fixed rule).  Returns 0, -ENOMEM, or -E2BIG past DT_MAX_ROWS rows or
 * MAX_RULES distinct rules. */
#define DT_MAX_ROWS (1U << 25) /* 512 MiB of builder; node has 400k */
int dt_builder_add(struct dt_builder *b, uint64_t addr,
		   const struct unwind_rule *rule);
/* Mark [start, end) as covered by one function (an FDE): an INVALID row is
 * placed at end unless another function of the same source starts there.
 * Every gap between functions is thus INVALID, however small. */
int dt_builder_add_range(struct dt_builder *b, uint64_t start, uint64_t end);
/* Make src (DT_SRC_* bits) the source, and priority layer, of the rows
 * added next; dt_file.source gets the bits of every source that has a
 * valid row in the finished table.  DT_SRC_DEBUGLINK counts as
 * DT_SRC_DEBUG_FRAME.  Before the first call rows are DT_SRC_SYNTH. */
void dt_builder_set_source(struct dt_builder *b, unsigned src);
/* The span of executable code ([lo, hi), ELF addresses): `covered` counts
 * only bytes inside it. */
void dt_builder_set_text(struct dt_builder *b, uint64_t lo, uint64_t hi);

/* A finished, paged table. */
struct dt_page {
	uint64_t page; /* address >> DELTA_PAGE_BITS */
	uint32_t first; /* index of the page's first row in rows[] */
	uint32_t count;
};

struct dt_file {
	uint32_t source;   /* DT_SRC_* */
	uint32_t n_rules;  /* local rule table; RULE_IDX_* fixed entries */
	uint32_t n_pages;  /*   come first, as in the global table */
	uint32_t n_rows;
	uint64_t covered;  /* bytes of address space under a valid row */
	uint64_t text_lo, text_hi; /* span of the executable sections */
	struct unwind_rule *rules;
	struct dt_page *pages;
	uint32_t *rows; /* ROW(addr & 0xffff, local rule index) */
};

/* Turn the builder's rows into a dt_file (the builder is left empty).
 * Returns 0, -ENOMEM, or -E2BIG when the file has more than MAX_RULES
 * distinct rules or more than DT_MAX_PAGES pages.  The dt_file is one
 * allocation: rules, pages and rows point inside it; dt_file_free()
 * releases everything. */
#define DT_MAX_PAGES (1U << 20) /* 64 GiB of address space */
int dt_builder_finish(struct dt_builder *b, struct dt_file **out);
void dt_file_free(struct dt_file *f);

/* Find the rule for an ELF address (host-side twin of the BPF lookup, used
 * by tests and the userland unwinder): the page, then the last row of the
 * page at or below the address.  The caller passes pc - 1 for a return
 * address, as the BPF does.  Returns the local rule index, or -ENOENT when
 * no page covers addr (which means INVALID). */
int dt_file_lookup(const struct dt_file *f, uint64_t addr);
/* The rule a lookup returned (NULL for an index out of range). */
const struct unwind_rule *dt_file_rule(const struct dt_file *f, int idx);

/* Serialize into one malloc'd buffer the caller frees (versioned,
 * little-endian host layout, CRC-32 over everything); the store keeps
 * these bytes.  Returns 0 or -ENOMEM. */
int dt_file_serialize(const struct dt_file *f, void **buf, size_t *len);
/* What the store keeps for f: nothing (*buf NULL, *len 0) for a file
 * without rows, a negative result that spares parsing it again; else its
 * serialization.  Returns 0 or -ENOMEM. */
int dt_file_record(const struct dt_file *f, void **buf, size_t *len);
/* Parse serialized bytes; -EINVAL on any inconsistency (never trusts the
 * input: lengths, counts, every index and the row order are checked, and
 * the CRC catches flipped bits); -ESTALE for bytes written by another
 * DT_FORMAT_VERSION: the caller re-extracts then.  The result does not
 * point into buf. */
#define DT_FORMAT_VERSION 2 /* 2: any CFA register, saved registers */
int dt_file_deserialize(const void *buf, size_t len, struct dt_file **out);
/* The same for bytes whose integrity the caller has already checked (the
 * store's CRC covers the whole record): skips the table's own CRC, keeps
 * every structural check. */
int dt_file_deserialize_opts(const void *buf, size_t len, bool checksummed,
			     struct dt_file **out);
/* The same checks but the rows', without a copy: out's arrays point into
 * buf, which must stay valid (and unchanged) while out is used, and be
 * aligned for struct dt_page (-EFAULT otherwise).  out is not freed.  The
 * rows are checked as dt_copy_rows() copies them, in the same pass. */
int dt_file_view(const void *buf, size_t len, bool checksummed,
		 struct dt_file *out);
/* Copy t's rows to dst, each row's rule bits through rule_hi (indexed by
 * the whole 16-bit local rule, giving the row's new rule bits), checking
 * that every row names one of t's rules and that addresses rise within
 * each page.  Returns 0, or -EINVAL at the first bad row (dst is then
 * partly written).  For a table from dt_file_view(), the only check of
 * its rows; for others, a second one. */
int dt_copy_rows(const struct dt_file *t, const uint32_t *rule_hi,
		 uint32_t *dst);

/* Print a table for humans: header, rules, and rows with absolute
 * addresses.  Returns 0 or -EIO. */
int dt_file_dump(FILE *f, const struct dt_file *t);
/* Format one rule ("rsp+16 rbp=c-16", "PLT", "INVALID"...) into buf. */
const char *dt_rule_str(const struct unwind_rule *r, char *buf, size_t len);

/*
 * Extract the stack deltas of an ELF file: .gopclntab for Go, .eh_frame
 * (through .eh_frame_hdr / PT_GNU_EH_FRAME when sections are missing),
 * then .debug_frame (the file's own, skipped for Go whose pclntab says
 * more; else from the separate debug file, by build id or .gnu_debuglink
 * under /usr/lib/debug and next to path (debugfind.h), when the file
 * itself gave fewer than 8 functions),
 * then synthetic rows for PLT sections that no CFI covers.  fd is mapped
 * and not closed; path may be NULL (no debuglink search).  Returns 0 with
 * *out set (a file without CFI gives a dt_file with no rows and source
 * 0), or a negative errno: -ENOEXEC for a file that is not a 64-bit
 * little-endian x86-64 ELF, -EIO for one that shrank while it was read
 * (elfm_damaged).  Malformed tables give partial rows, never a crash.
 */
int dt_extract_file(int fd, const char *path, struct dt_file **out);

/* What extraction saw; filled when dt_extract_opts.stats is set. */
enum dt_unsup {
	DT_UNSUP_CFA_REG,   /* CFA on a register other than rsp/rbp */
	DT_UNSUP_CFA_EXPR,  /* CFA expression we do not lower */
	DT_UNSUP_RA,	    /* return address not at CFA-8 */
	DT_UNSUP_FP,	    /* rbp in a register, val_*, other expression */
	DT_UNSUP_RANGE,	    /* offset does not fit the rule's fields */
	DT_UNSUP_INSN,	    /* unknown or malformed CFA instruction */
	DT_UNSUP_COUNT,
};

struct dt_extract_stats {
	uint64_t bad_entries;	 /* CIEs/FDEs that failed to parse */
	uint64_t unsup_bytes;	 /* code bytes under rows lowered to INVALID */
	uint64_t unsup[DT_UNSUP_COUNT]; /* such rows per reason */
	uint64_t go_funcs;	 /* functions from .gopclntab */
	unsigned go_version;	 /* 116, 118, 120; 0 when not Go */
	uint64_t synth_ranges;	 /* PLT sections given synthetic rows */
	bool eh_frame_hdr;	 /* .eh_frame located through the header */
	char debug_file[256];	 /* the debuglink file used, if any */
};

struct dt_extract_opts {
	const char *debug_dir;	       /* NULL: "/usr/lib/debug" */
	bool no_debuglink;	       /* never open another file */
	struct dt_extract_stats *stats; /* optional */
	/* the ELF machine whose files give rows (their CFI is lowered for
	 * that architecture's BPF programs); 0: DT_HOST_MACHINE, the one
	 * the daemon runs on.  Tests on x86 parse arm64 files with
	 * EM_AARCH64. */
	uint16_t machine;
};

/* The machine of the daemon's own BPF programs. */
#if defined(__aarch64__)
#define DT_HOST_MACHINE EM_AARCH64
#else
#define DT_HOST_MACHINE EM_X86_64
#endif

/* dt_extract_file with options (opts may be NULL). */
int dt_extract_file_opts(int fd, const char *path,
			 const struct dt_extract_opts *opts,
			 struct dt_file **out);
/* The same over an ELF image in memory (the vDSO, fuzzing): no debuglink. */
int dt_extract_mem(const void *data, size_t len,
		   const struct dt_extract_opts *opts, struct dt_file **out);

/* The fixed rules every table starts with (RULE_IDX_*): the commands with
 * zero fields, except PLT: cfa_reg SP, cfa_off 8, cfa_post 11, meaning
 * CFA = rsp + 8 + ((pc & 15) >= 11 ? 8 : 0), GCC's lazy-PLT expression.
 * A PLT whose expression compares with another constant (10 for IBT PLT
 * entries) is a separate, non-fixed rule with cmd PLT and that constant
 * in cfa_post. */
extern const struct unwind_rule dt_fixed_rules[RULE_FIXED_COUNT];

#endif
