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

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "profiler.h"

/* Where a file's rows came from (bit mask). */
#define DT_SRC_EH_FRAME 0x1
#define DT_SRC_DEBUG_FRAME 0x2
#define DT_SRC_GOPCLNTAB 0x4
#define DT_SRC_DEBUGLINK 0x8 /* .debug_frame came from the debuglink file */
#define DT_SRC_SYNTH 0x10    /* synthetic rows (entry stubs, vDSO) */

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
 * unless the earlier one came from a higher-priority source (eh_frame
 * over debug_frame).  Returns 0 or -ENOMEM (or -E2BIG past the limit). */
int dt_builder_add(struct dt_builder *b, uint64_t addr,
		   const struct unwind_rule *rule);
/* Mark [start, end) as covered by one function (an FDE): an INVALID row is
 * placed at end unless another function starts there. */
int dt_builder_add_range(struct dt_builder *b, uint64_t start, uint64_t end);
/* Record a source bit (DT_SRC_*). */
void dt_builder_set_source(struct dt_builder *b, unsigned src);

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
 * distinct rules. */
int dt_builder_finish(struct dt_builder *b, struct dt_file **out);
void dt_file_free(struct dt_file *f);

/* Find the rule for an ELF address (host-side twin of the BPF lookup, used
 * by tests and the userland unwinder).  Returns the local rule index, or
 * -ENOENT when no page covers addr. */
int dt_file_lookup(const struct dt_file *f, uint64_t addr);

/* Serialize into one malloc'd buffer (versioned, little-endian host
 * layout); the store keeps these bytes. */
int dt_file_serialize(const struct dt_file *f, void **buf, size_t *len);
/* Parse serialized bytes; -EINVAL on any inconsistency (never trusts the
 * input: every index is checked). */
int dt_file_deserialize(const void *buf, size_t len, struct dt_file **out);

/*
 * Extract the stack deltas of an ELF file: .eh_frame (through
 * .eh_frame_hdr / PT_GNU_EH_FRAME when sections are missing), then
 * .debug_frame (also from the .gnu_debuglink file, looked up under
 * /usr/lib/debug and next to path), then .gopclntab for Go.  fd is read
 * with pread/mmap and not closed; path may be NULL (no debuglink search).
 * Returns 0 with *out set (a file without CFI gives a dt_file with no
 * rows and source 0), or a negative errno: -ENOEXEC for a file that is not
 * a valid ELF.
 */
int dt_extract_file(int fd, const char *path, struct dt_file **out);

/* The fixed rules every table starts with (RULE_IDX_*). */
extern const struct unwind_rule dt_fixed_rules[RULE_FIXED_COUNT];

#endif
