// SPDX-License-Identifier: Apache-2.0
/*
 * Go's .gopclntab (gopclntab.c): the input is a struct fz_go_hdr, code
 * bytes and the table, placed in a small ELF image with a .text section
 * (the prologue recognition reads the code) so that mutations land in
 * the table.  Every function is read, rows are produced and finished.
 */
#include <elf.h>
#include <string.h>

#include "deltas.h"
#include "elfmap.h"
#include "fuzz.h"
#include "gopclntab.h"

static volatile size_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dt_extract_stats st = { 0 };
	struct fz_go_hdr h = { 0 };
	struct gopc_table *t = NULL;
	struct fz_elf_rows r;
	struct synth_sec secs[3];
	uint64_t text_end;
	size_t i, n;

	if (size < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	if (h.text_len > size - sizeof(h))
		h.text_len = (uint32_t)(size - sizeof(h));
	text_end = h.text_addr + h.text_len;
	if (text_end < h.text_addr)
		return 0;
	if (h.text_end < text_end)
		h.text_end = text_end;
	secs[0] = (struct synth_sec){ ".text", SHT_PROGBITS,
				   SHF_ALLOC | SHF_EXECINSTR, h.text_addr,
				   data + sizeof(h), h.text_len };
	secs[1] = (struct synth_sec){ ".text.rest", SHT_NOBITS,
				   SHF_ALLOC | SHF_EXECINSTR, text_end, NULL,
				   h.text_end - text_end };
	secs[2] = (struct synth_sec){ ".gopclntab", SHT_PROGBITS, SHF_ALLOC,
				   h.tab_addr, data + sizeof(h) + h.text_len,
				   size - sizeof(h) - h.text_len };
	if (fz_elf_rows_open(&r, secs, 3, 0, h.text_addr, h.text_end) != 0 ||
	    gopc_open(r.e, &t) != 0)
		goto cleanup;
	gopc_version(t);
	gopc_vaddr(t);
	n = gopc_nfunc(t);
	for (i = 0; i < n && i < 100000; i++) {
		struct gopc_func fn;

		if (gopc_func(t, i, &fn) == 0)
			sink = strlen(fn.name);
	}
	gopc_func(t, n, &(struct gopc_func){ 0 });
	gopc_add_rows(r.e, t, r.b, &st);
	if (dt_builder_finish(r.b, &r.f) == 0)
		dt_file_lookup(r.f, h.text_addr);
cleanup:
	gopc_free(t);
	fz_elf_rows_free(&r);
	return 0;
}
