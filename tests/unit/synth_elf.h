/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Small ELF images built around given section contents, for tests and
 * fuzz targets that want to put bytes in a section without writing ELF
 * headers by hand.
 */
#ifndef EP_TEST_SYNTH_ELF_H
#define EP_TEST_SYNTH_ELF_H

#include <stddef.h>
#include <stdint.h>

/* One section.  A SHT_NOBITS section takes size and no data. */
struct synth_sec {
	const char *name;
	uint32_t type;
	uint64_t flags;
	uint64_t addr;
	const void *data;
	size_t size;
	uint32_t link;	  /* sh_link: a section index (secs[i] is i + 1) */
	uint64_t entsize; /* sh_entsize */
};

/*
 * An x86-64 ELF image (ET_EXEC, no program headers, so addresses come
 * from the allocated sections) with these sections after the null one,
 * and .shstrtab last.  Returns a malloc'd image and its length in *len,
 * or NULL.
 */
uint8_t *synth_elf(const struct synth_sec *secs, int n, size_t *len);

/* The same image in a memfd (close-on-exec, at offset len), or -1. */
int synth_elf_fd(const struct synth_sec *secs, int n);

/* An Elf64_Sym initializer: a global function in section 1 (.text as
 * the first of secs), its name at offset name of the string table. */
#define SYNTH_FUNC(name, value, size)                                          \
	{ .st_name = (name), .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),   \
	  .st_shndx = 1, .st_value = (value), .st_size = (size) }

/* Sections 1 to 3 of a symbol table's image: .text (text_size bytes at
 * 0x1000, no contents), .symtab (syms_size bytes of Elf64_Sym at syms)
 * linked to .strtab (strs_size bytes at strs). */
#define SYNTH_SYMTAB_SECS(text_size, syms, syms_size, strs, strs_size)         \
	{ ".text", SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, NULL,        \
	  (text_size) },                                                       \
	{ ".symtab", SHT_SYMTAB, 0, 0, (syms), (syms_size), 3,                 \
	  sizeof(Elf64_Sym) },                                                 \
	{ ".strtab", SHT_STRTAB, 0, 0, (strs), (strs_size) }

/* The contents of a SHF_COMPRESSED section holding `zeros` zero bytes:
 * an Elf64_Chdr and a zlib stream at level 9 (about 1/1030 of it, a
 * decompression bomb when zeros is large).  malloc'd, size in *len, or
 * NULL. */
uint8_t *synth_zlib_zeros(size_t zeros, size_t *len);

#endif
