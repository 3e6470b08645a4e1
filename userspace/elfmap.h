/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A read-only, bounds-checked view of a 64-bit little-endian ELF file,
 * mapped whole with mmap (or borrowed from memory: the vDSO, fuzzing).
 *
 * Nothing here trusts the file: every header, offset and size is checked
 * against the mapping before use, so a truncated or hostile file gives an
 * error, never a read out of bounds.  Headers are copied into aligned
 * arrays (a hostile e_phoff may be misaligned).  Returned byte pointers
 * point into the mapping and stay valid until elfm_free().
 *
 * A file that is truncated *while* mapped would raise SIGBUS on a read
 * past its new end (its owner can do that to a library it maps): the
 * mappings of elfm_open_fd() are guarded, such reads see zeros, and
 * elfm_damaged() says so.
 */
#ifndef EP_ELFMAP_H
#define EP_ELFMAP_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elfm;

/* Map the open file fd (not closed, offset unused).  Returns 0, -ENOEXEC
 * when it is not a 64-bit little-endian ELF, or another negative errno. */
int elfm_open_fd(int fd, struct elfm **out);
/* Same over memory owned by the caller, which must outlive the view. */
int elfm_open_mem(const void *data, size_t len, struct elfm **out);
void elfm_free(struct elfm *e);
/* Whether the file shrank under the mapping while we read it (some bytes
 * read as zeros): what was computed from it is not to be trusted or
 * kept.  A SIGBUS handler is installed at the first elfm_open_fd(); a
 * SIGBUS outside our mappings goes to the disposition before it. */
bool elfm_damaged(const struct elfm *e);
/* The end of a computation over e: frees e and returns err, or -EIO when
 * e was damaged (what was computed, or failed, came from zeros: not an
 * answer about the file to keep). */
int elfm_release(struct elfm *e, int err);
/* Pages of files truncated under their mapping that read as zeros so far
 * (process-wide). */
uint64_t elfm_fault_count(void);

struct stat;
/* Whether st (an fstat of another fd) is the file e maps; false over
 * memory. */
bool elfm_same_file(const struct elfm *e, const struct stat *st);

/* The whole file. */
const uint8_t *elfm_data(const struct elfm *e, size_t *len);
const Elf64_Ehdr *elfm_ehdr(const struct elfm *e);
/* Program and section headers (aligned copies); the counts may be 0. */
const Elf64_Phdr *elfm_phdrs(const struct elfm *e, unsigned *n);
const Elf64_Shdr *elfm_shdrs(const struct elfm *e, unsigned *n);

/* The first section of that name, or NULL (also when the file has no
 * section headers or names). */
const Elf64_Shdr *elfm_section(const struct elfm *e, const char *name);
/* A section's name, "" when it has none. */
const char *elfm_section_name(const struct elfm *e, const Elf64_Shdr *sh);

/* A section's bytes in the file.  -ENOENT for SHT_NOBITS and empty
 * sections, -EINVAL when they lie outside the file, -ENOTSUP when the
 * section is compressed (use elfm_section_load). */
int elfm_section_bytes(const struct elfm *e, const Elf64_Shdr *sh,
		       const uint8_t **p, size_t *len);

/* A section's contents, decompressed when SHF_COMPRESSED (zlib or zstd,
 * up to 1100 times the compressed size and the file's budget, below).
 * *p points into the mapping or into *owned, a malloc'd buffer the
 * caller frees (NULL when nothing was allocated).  -EFBIG (counted as
 * files_over_budget{reason="decompressed"}) when the section would
 * decompress past the budget: the caller goes on without it.
 *
 * The budget: ELFM_DECOMPRESS_RATIO times the bytes the file holds on
 * disk (budget_real_size: a sparse file does not buy more), plus
 * ELFM_DECOMPRESS_SLACK, at most ELFM_MAX_DECOMPRESSED per section.
 * Real compressed debug sections shrink 3-10 times; a section of zeros
 * 1000 times.  A 538 KB file may thus allocate 16.6 MB, not 512 MiB. */
#define ELFM_MAX_DECOMPRESSED (128ULL << 20)
#define ELFM_DECOMPRESS_RATIO 16
#define ELFM_DECOMPRESS_SLACK (8ULL << 20)
int elfm_section_load(const struct elfm *e, const Elf64_Shdr *sh,
		      const uint8_t **p, size_t *len, void **owned);
/* A section that holds an xz stream (.gnu_debugdata, MiniDebugInfo:
 * an ELF file with a .symtab), decompressed into *out (malloc'd; the
 * caller frees it) within the same budget as elfm_section_load, and a
 * decoder memory limit of ELFM_XZ_MEMLIMIT.  Returns 0, -EFBIG past the
 * budget (counted as there), -EINVAL for a stream that is not xz or is
 * damaged, -ENOMEM, or elfm_section_bytes' errors. */
#define ELFM_XZ_MEMLIMIT (64ULL << 20)
int elfm_section_xz(const struct elfm *e, const Elf64_Shdr *sh, void **out,
		    size_t *len);

/* The most elfm_section_load() decompresses for one section of e. */
uint64_t elfm_decompress_budget(const struct elfm *e);

/* Bytes at a virtual address, backed by the file: through the PT_LOAD
 * segments, or through the allocated sections when there are none.  *avail
 * gets how many bytes follow vaddr in the same segment (>= len).  Returns 0,
 * or -ENOENT when no file bytes back [vaddr, vaddr + len). */
int elfm_vaddr_bytes(const struct elfm *e, uint64_t vaddr, size_t len,
		     const uint8_t **p, size_t *avail);

/* The span of executable code: PT_LOAD segments with PF_X, else
 * SHF_EXECINSTR sections.  Returns 0, or -ENOENT when there is none. */
int elfm_text_span(const struct elfm *e, uint64_t *lo, uint64_t *hi);
/* Is [lo, hi) inside one executable segment (or section)? */
int elfm_in_text(const struct elfm *e, uint64_t lo, uint64_t hi);

/* One entry of a symbol table. */
struct elfm_sym {
	const char *name; /* NUL-terminated inside its string table; "" when
			   * it has none or its offset is bad */
	uint64_t value, size;
	uint8_t info; /* ELF64_ST_TYPE(), ELF64_ST_BIND() */
	uint16_t shndx;
};

/* Calls fn, in table order, for each symbol of sh (a SHT_SYMTAB or
 * SHT_DYNSYM section header of e) but the null one at index 0; stops
 * when fn returns non-zero and returns that.  Returns 0 when done,
 * -ENOENT when sh is no usable table (another type, entries not
 * Elf64_Sym, bytes outside the file, compressed) or its string table is
 * not.  Bounded by the file: no allocation. */
int elfm_for_each_sym(const struct elfm *e, const Elf64_Shdr *sh,
		      int (*fn)(const struct elfm_sym *s, void *arg),
		      void *arg);

/* Defined symbols by exact name, from .dynsym, then .symtab: for each
 * names[i] found, value[i] and size[i] are set (left alone otherwise).
 * Returns how many names were found.  Each table is walked once, bounded
 * by the file. */
unsigned elfm_find_syms(const struct elfm *e, const char *const *names,
			unsigned n, uint64_t *value, uint64_t *size);

/* Walk the notes in [p, p + len) (an ELF note section, or the kernel's
 * /sys/kernel/notes) for the first of that owner and type; *desc points
 * into p.  Returns 0 or -ENOENT. */
int elfm_find_note(const uint8_t *p, size_t len, const char *owner,
		   uint32_t type, const uint8_t **desc, size_t *desc_len);
/* The first note of that owner ("GNU", "Go") and type, from the PT_NOTE
 * segments, else the SHT_NOTE sections; *desc points into the mapping.
 * Returns 0 or -ENOENT. */
int elfm_note(const struct elfm *e, const char *owner, uint32_t type,
	      const uint8_t **desc, size_t *len);
/* The GNU build id (from PT_NOTE or .note.gnu.build-id); *p points into
 * the mapping.  Returns 0 or -ENOENT. */
int elfm_build_id(const struct elfm *e, const uint8_t **p, size_t *len);
/* .gnu_debuglink: the file name (NUL-terminated inside the section) and
 * its CRC-32.  Returns 0 or -ENOENT. */
int elfm_debuglink(const struct elfm *e, const char **name, uint32_t *crc);

/*
 * The one door to libelf, for the readers we do not write ourselves
 * (libdw: CFI lookup, DWARF): a libelf handle over a copy-on-write
 * mapping of fd, the file e maps (elfm_open_fd; checked by dev, inode
 * and size), made on the first call and ended by elfm_free(), so that the
 * file was checked by elfm first and libelf's reads are guarded as ours
 * are (elfm_damaged()), while what libelf writes (a section header it
 * decompresses) stays in its pages.  NULL over memory, for another file,
 * or when libelf refuses it.  Not thread safe on one e.  No module
 * includes libelf.h for anything else.
 */
struct Elf;
struct Elf *elfm_libelf(struct elfm *e, int fd);

#endif
