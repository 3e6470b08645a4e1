// SPDX-License-Identifier: Apache-2.0
/*
 * Go's .gopclntab (gopclntab.c): the input is a struct fz_go_hdr, code
 * bytes and the table, placed in a small ELF image with a .text section
 * (the prologue recognition reads the code) so that mutations land in
 * the table.  Every function is read, rows are produced and finished.
 */
#include <elf.h>
#include <stdlib.h>
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
	struct dt_builder *b = NULL;
	struct dt_file *f = NULL;
	struct elfm *e = NULL;
	struct synth_sec secs[3];
	uint64_t text_end;
	size_t len, i, n;
	uint8_t *img;

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
	img = synth_elf(secs, 3, &len);
	if (!img)
		return 0;
	if (elfm_open_mem(img, len, &e) != 0 || gopc_open(e, &t) != 0)
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
	if (dt_builder_new(&b) != 0)
		goto cleanup;
	dt_builder_set_text(b, h.text_addr, h.text_end);
	gopc_add_rows(e, t, b, &st);
	if (dt_builder_finish(b, &f) == 0)
		dt_file_lookup(f, h.text_addr);
cleanup:
	dt_file_free(f);
	dt_builder_free(b);
	gopc_free(t);
	elfm_free(e);
	free(img);
	return 0;
}
