/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers shared by the libFuzzer targets in tests/fuzz/ and by the seed
 * generator: a cursor over the input, files in memory, and the input
 * layouts of the targets that place fuzzed bytes in a small ELF image
 * (tests/unit/synth_elf.h).
 *
 * Targets are built by tests/fuzz/fuzz.mk with
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION defined, which makes the
 * checksums of serialized tables and store records advisory: a fuzzer
 * cannot forge a CRC, and the checks behind it are what must hold
 * against someone who can.
 */
#ifndef EP_FUZZ_H
#define EP_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../unit/synth_elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A process' memory for the interpreter modules' readers (interp.h's
 * interp_read_fn): the bytes of an image mapped at FZ_IMAGE_BASE; reads
 * outside it fail as reads of unmapped memory do. */
#define FZ_IMAGE_BASE 0x10000ULL
struct fz_image {
	const uint8_t *p;
	size_t len;
};

static inline int fz_image_read(void *arg, int pid, uint64_t addr, void *buf,
				size_t len)
{
	const struct fz_image *im = arg;

	(void)pid;
	if (addr < FZ_IMAGE_BASE || addr - FZ_IMAGE_BASE > im->len ||
	    len > im->len - (addr - FZ_IMAGE_BASE))
		return -14; /* -EFAULT */
	__builtin_memcpy(buf, im->p + (addr - FZ_IMAGE_BASE), len);
	return 0;
}

/* A cursor over the input: reads past the end give zeros. */
struct fz_in {
	const uint8_t *p;
	size_t len, off;
};

uint8_t fz_u8(struct fz_in *in);
uint32_t fz_u32(struct fz_in *in);
uint64_t fz_u64(struct fz_in *in);
/* The next n bytes (fewer at the end); *got says how many. */
const uint8_t *fz_bytes(struct fz_in *in, size_t n, size_t *got);
/* What is left. */
const uint8_t *fz_rest(struct fz_in *in, size_t *len);

/* A sealed memfd holding data, or -1.  The caller closes it. */
int fz_memfd(const void *data, size_t len);

struct dt_builder;
struct dt_file;
struct elfm;

/* The ELF image a target placed its input in (fuzz_ehframe,
 * fuzz_gopclntab), opened, and a builder for rows over its text; f is
 * the table the target finished, if it did. */
struct fz_elf_rows {
	uint8_t *img;
	struct elfm *e;
	struct dt_builder *b;
	struct dt_file *f;
};

/* Make the image of the n sections secs (its e_machine set to machine
 * unless that is 0), open it and start a builder for the text
 * [text_lo, text_hi).  0, or -1 when one of these fails; r is for
 * fz_elf_rows_free either way. */
int fz_elf_rows_open(struct fz_elf_rows *r, const struct synth_sec *secs,
		     int n, uint16_t machine, uint64_t text_lo,
		     uint64_t text_hi);
void fz_elf_rows_free(struct fz_elf_rows *r);

/* Input layout of fuzz_ehframe: this header, then the section bytes. */
struct fz_cfi_hdr {
	uint64_t sec_addr;	  /* the section's address */
	uint64_t text_lo, text_hi; /* the executable range FDEs may cover */
	uint8_t debug_frame;	  /* bit 0: .debug_frame, else .eh_frame;
				   * bit 1: an AArch64 file (its lowering) */
	uint8_t pad[7];
};

/* Input layout of fuzz_gopclntab: this header, text_len bytes of code
 * at text_addr, then the .gopclntab bytes at tab_addr.  The code past
 * text_len, up to text_end, is executable but has no bytes. */
struct fz_go_hdr {
	uint64_t text_addr, text_end, tab_addr;
	uint32_t text_len;
	uint32_t pad;
};

/* Input layout of fuzz_pycode: this header, then patches, each a
 * little-endian u16 offset, a length byte and that many bytes, written
 * over the process image the target builds (offset < 0x8000) or over
 * its struct py_info (offset 0x8000 + i). */
struct fz_py_hdr {
	uint8_t layout; /* which detected CPython build (modulo count) */
	uint8_t ops;	/* bit 0: symbolize, 1: walk, 2: symbolize twice */
	uint16_t pad;
	uint32_t instr; /* instruction index to symbolize */
};

#endif
