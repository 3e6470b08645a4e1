// SPDX-License-Identifier: Apache-2.0
/*
 * ELF headers and sections (elfmap.c): every accessor over an arbitrary
 * image, and every byte pointer they return is read to its end so that
 * AddressSanitizer sees a pointer that strays out of the input.  And the
 * load bias (elfaddr.c) of mappings a loader would make of its PT_LOADs,
 * whatever their sums (UBSan sees no overflow of a signed value).
 */
#include <stdlib.h>
#include <string.h>

#include "elfaddr.h"
#include "elfmap.h"
#include "fuzz.h"

static volatile uint8_t sink;

static void touch(const uint8_t *p, size_t len)
{
	uint8_t x = 0;
	size_t i;

	for (i = 0; i < len; i++)
		x ^= p[i];
	sink = x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { ".eh_frame", ".debug_frame",
					     ".gopclntab", ".text",
					     ".gnu_debuglink", ".symtab" };
	const Elf64_Shdr *sh;
	const Elf64_Phdr *ph;
	const uint8_t *p;
	struct elfm *e;
	unsigned n, i;
	uint64_t lo, hi;
	uint32_t crc;
	const char *s;
	size_t len, avail;
	void *owned;

	if (elfm_open_mem(data, size, &e) != 0)
		return 0;
	sh = elfm_shdrs(e, &n);
	for (i = 0; i < n; i++) {
		s = elfm_section_name(e, &sh[i]);
		touch((const uint8_t *)s, strlen(s));
		if (elfm_section_bytes(e, &sh[i], &p, &len) == 0)
			touch(p, len);
		if (elfm_section_load(e, &sh[i], &p, &len, &owned) == 0)
			touch(p, len);
		free(owned);
		if (elfm_vaddr_bytes(e, sh[i].sh_addr, 16, &p, &avail) == 0)
			touch(p, avail);
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		elfm_section(e, names[i]);
	ph = elfm_phdrs(e, &n);
	for (i = 0; i < n; i++) {
		if (elfm_vaddr_bytes(e, ph[i].p_vaddr, 8, &p, &avail) == 0)
			touch(p, avail);
		elfm_in_text(e, ph[i].p_vaddr, ph[i].p_vaddr + ph[i].p_memsz);
	}
	{
		struct ea_seg segs[EA_MAX_SEGS];
		struct ea_map maps[EA_MAX_SEGS];
		unsigned ns = ea_segs_from_phdrs(ph, n, segs, EA_MAX_SEGS);
		uint64_t bias;

		for (i = 0; i < ns; i++)
			maps[i] = (struct ea_map){
				0x7f0000000000ULL + (segs[i].vaddr & ~0xfffULL),
				0x7f0000001000ULL + ((segs[i].vaddr + segs[i].filesz) &
						     ~0xfffULL),
				segs[i].offset & ~0xfffULL, segs[i].flags };
		for (i = 0; i < ns; i++) {
			struct ea_map first = maps[0];

			maps[0] = maps[i];
			maps[i] = first;
			ea_bias(segs, ns, maps, ns, &bias);
		}
	}
	if (elfm_text_span(e, &lo, &hi) == 0) {
		elfm_in_text(e, lo, hi);
		elfm_in_text(e, hi - 1, hi + 1);
	}
	if (elfm_build_id(e, &p, &len) == 0)
		touch(p, len);
	if (elfm_note(e, "Go", 4, &p, &len) == 0)
		touch(p, len);
	if (elfm_debuglink(e, &s, &crc) == 0)
		touch((const uint8_t *)s, strlen(s));
	elfm_free(e);
	return 0;
}
