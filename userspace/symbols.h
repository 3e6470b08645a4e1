/* SPDX-License-Identifier: Apache-2.0 */
/*
 * On-host symbols of an ELF file: the function symbols of .symtab and
 * .dynsym (and of the separate debug file found by build id under
 * /usr/lib/debug, debugfind.h), or of .gopclntab for a stripped Go
 * binary, with C++ and Rust names demangled on first use.  The file is
 * read through elfmap.h.
 */
#ifndef EP_SYMBOLS_H
#define EP_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct symb_table;

/*
 * Bounds on one file's table (files_over_budget{reason="symbols"} and
 * {reason="symbol_bytes"}, budget.h); a file over either keeps no names
 * at all rather than some (a missing symbol would lend its addresses to
 * the one before it), and symb_load_fd() returns -EFBIG.  2^20 function
 * entries, .symtab and .dynsym together, hold 16 MiB (and 8 MiB of
 * demangling slots); large binaries have a few hundred thousand
 * functions.  Names are interned: a million symbols of one 1000-byte
 * name hold the name once.
 */
#define SYMB_MAX_SYMS (1U << 20)
#define SYMB_MAX_NAME_BYTES (64U << 20)
/* A symbol table larger than this is not read at all: no real one
 * comes near (a million symbols take 24 MiB). */
#define SYMB_MAX_TABLE_BYTES (256ULL << 20)

/*
 * Read the symbols of the ELF file open at fd (not closed, not moved).
 * A file with no symbols gives an empty table.  Returns 0, -ENOEXEC for
 * a file that is not a 64-bit little-endian ELF, -EFBIG for one over the
 * bounds above, -EIO for one truncated while it was read, or another
 * negative errno.
 */
int symb_load_fd(int fd, struct symb_table **out);
void symb_free(struct symb_table *t);
/*
 * The demangled name of the function containing addr (an ELF virtual
 * address), or NULL.  *off gets addr - symbol start.  The string lives as
 * long as the table.  Not thread safe (demangles lazily).
 */
const char *symb_lookup(struct symb_table *t, uint64_t addr, uint64_t *off);
/* Number of function symbols. */
uint32_t symb_count(const struct symb_table *t);
/* The GNU build id as lowercase hex, or NULL. */
const char *symb_build_id(const struct symb_table *t);
/* Demangle a C++ (_Z) or Rust (_ZN...h<hash>E, _R) name; returns a
 * malloc'd string the caller frees, or NULL when name is not mangled (or
 * not validly).  A Rust v0 name is printed without crate hashes, and cut
 * short past 64 KiB. */
char *symb_demangle(const char *name);

#endif
