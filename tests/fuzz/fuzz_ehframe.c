// SPDX-License-Identifier: Apache-2.0
/*
 * DWARF CFI (ehframe.c): the input is a struct fz_cfi_hdr and the bytes
 * of one .eh_frame or .debug_frame section, placed in a small ELF image
 * next to an executable range, so that mutations land in the CFI rather
 * than in ELF headers (fuzz_deltas covers whole files).  The rows must
 * finish into a table that serializes, reads back and answers lookups.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deltas.h"
#include "ehframe.h"
#include "elfmap.h"
#include "fuzz.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "we");
	return 0;
}

/* The finished table: lookups, dump, and a serialization round trip. */
static void check_table(const struct dt_file *f, uint64_t lo, uint64_t hi)
{
	struct dt_file *g = NULL;
	void *buf = NULL;
	size_t len;
	uint64_t a;
	int i;

	for (i = 0; i < 64; i++) {
		a = lo + (hi - lo) / 64 * i;
		dt_file_rule(f, dt_file_lookup(f, a));
	}
	dt_file_lookup(f, UINT64_MAX);
	if (devnull)
		dt_file_dump(devnull, f);
	if (dt_file_serialize(f, &buf, &len) != 0)
		return;
	if (dt_file_deserialize(buf, len, &g) != 0)
		abort(); /* we wrote it: it must read back */
	if (g->n_rows != f->n_rows || g->n_rules != f->n_rules ||
	    memcmp(g->rows, f->rows, (size_t)f->n_rows * 4) != 0)
		abort();
	dt_file_free(g);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dt_extract_stats st = { 0 };
	struct fz_cfi_hdr h = { 0 };
	struct fz_elf_rows r;
	struct synth_sec secs[2];

	if (size < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	if (h.text_hi < h.text_lo)
		h.text_hi = h.text_lo;
	secs[0] = (struct synth_sec){ ".text", SHT_NOBITS,
				   SHF_ALLOC | SHF_EXECINSTR, h.text_lo, NULL,
				   h.text_hi - h.text_lo };
	secs[1] = (struct synth_sec){ h.debug_frame & 1 ? ".debug_frame" :
						       ".eh_frame",
				   SHT_PROGBITS,
				   h.debug_frame & 1 ? 0 : SHF_ALLOC,
				   h.sec_addr, data + sizeof(h),
				   size - sizeof(h) };
	if (fz_elf_rows_open(&r, secs, 2, h.debug_frame & 2 ? EM_AARCH64 : 0,
			     h.text_lo, h.text_hi) != 0)
		goto cleanup;
	if (h.debug_frame & 1)
		ehf_debug_frame(r.e, r.e, DT_SRC_DEBUG_FRAME, r.b, &st);
	else
		ehf_eh_frame(r.e, r.e, r.b, &st);
	if (dt_builder_finish(r.b, &r.f) == 0)
		check_table(r.f, h.text_lo, h.text_hi);
cleanup:
	fz_elf_rows_free(&r);
	return 0;
}
