/* SPDX-License-Identifier: Apache-2.0 */
/* The in-memory BPF maps, for tests (tests/unit/bpfmaps_mem.c). */
#ifndef EP_TEST_BPFMAPS_MEM_H
#define EP_TEST_BPFMAPS_MEM_H

#include "bpfmaps.h"

/* Hash tables that grow, rows in chunks of malloc'd memory up to
 * max_rows (rounded up to whole chunks; at least one). */
int bm_mem_new(uint32_t max_rows, struct bpfmaps **out);
void bm_mem_free(struct bpfmaps *bm);

#endif
