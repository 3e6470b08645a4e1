/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where a mapping puts a file's addresses: the one definition of how a pc
 * in a mapping of an ELF file becomes an ELF (link-time virtual) address,
 * and back.  Everything that turns one into the other goes through here:
 * the load bias procmgr writes into the BPF mapping entries (which BPF
 * subtracts before its row lookup), symbols, the pipeline's frames of
 * processes not synced yet, the pprof and OTLP mappings, interpreter
 * addresses and `ebpf-profiler deltas -pid`.
 *
 * A loader maps each PT_LOAD from its file page (p_offset rounded down to
 * the page) at its address page (bias + p_vaddr rounded down), so within
 * one segment pc = bias + ELF address.  Which segment a mapping holds is
 * the hard part: lld and mold start the text segment on the file page that
 * ends the read-only one (rustc 1.90+ links with lld; Chromium's libraries
 * too), so one file offset lies in two PT_LOADs that differ by a page in
 * p_vaddr - p_offset.  The mapping's permissions tell them apart (an r-x
 * mapping holds a PF_X segment), then its extent, then the file's other
 * mappings in the process (all of a load share one bias).
 *
 * Pure functions over copies of program headers: no I/O, no state.
 */
#ifndef EP_ELFADDR_H
#define EP_ELFADDR_H

#include <elf.h>
#include <stdint.h>

/* The page the loaders map segments with (ld.so and the kernel use the
 * kernel's page, whatever p_align says): 4 KiB on x86-64, the only
 * architecture we unwind. */
#define EA_PAGE_SIZE 4096ULL

/* What the bias needs of one PT_LOAD. */
struct ea_seg {
	uint64_t vaddr, offset, filesz;
	uint32_t flags; /* PF_R | PF_W | PF_X */
};

/* A file keeps at most this many (executables have 2 to 5 PT_LOADs; the
 * executable ones are kept first, see ea_segs_from_phdrs). */
#define EA_MAX_SEGS 8

/*
 * Copy the PT_LOAD headers of ph[0..n) with file bytes into out[0..max):
 * the executable segments first, then the others, each in file order, so
 * a file with more segments than max keeps every one that can hold code.
 * Returns how many were copied.
 */
unsigned ea_segs_from_phdrs(const Elf64_Phdr *ph, unsigned n,
			    struct ea_seg *out, unsigned max);

/* A mapping, as a line of /proc/PID/maps gives it: [start, end) maps the
 * file from offset, with prot PF_R | PF_W | PF_X. */
struct ea_map {
	uint64_t start, end, offset;
	uint32_t prot;
};

/* PF_R | PF_W | PF_X from the "rwxp" field of a maps line. */
uint32_t ea_prot(const char *perms);

/*
 * The load bias of maps[0], a mapping of a file whose PT_LOADs are
 * segs[0..nsegs): pc - bias is the ELF address of a pc in it.
 * maps[1..nmaps) are the file's other mappings in the same process (any
 * order; nmaps may be 1): they settle what maps[0] alone cannot, as when
 * lld puts two executable segments on one file page (split text), each
 * mapped from that page with the same permissions.
 *
 * The segment is one whose file pages hold maps[0]'s offset, preferring,
 * in order: the same execute permission as the mapping; one that holds
 * the whole mapping (a loader never maps past a segment's last page; a
 * merged VMA may, but then its segments agree on the bias); the bias
 * that most of the other mappings agree on; the same write permission;
 * the segment that holds the mapping most tightly; the first.  Returns
 * 0, or -ENOENT when no segment holds the offset (then *bias = start -
 * offset: file offsets taken as addresses).
 */
int ea_bias(const struct ea_seg *segs, unsigned nsegs,
	    const struct ea_map *maps, unsigned nmaps, uint64_t *bias);

/* The ELF address of a pc in a mapping with this bias, and back. */
static inline uint64_t ea_elf_addr(uint64_t bias, uint64_t pc)
{
	return pc - bias;
}

static inline uint64_t ea_runtime_addr(uint64_t bias, uint64_t addr)
{
	return addr + bias;
}

#endif
