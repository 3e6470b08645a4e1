/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel symbols from /proc/kallsyms (modules and BPF programs too). */
#ifndef EP_KSYMS_H
#define EP_KSYMS_H

#include <stdint.h>

struct ksyms;

/* Load path (normally /proc/kallsyms).  Returns 0, -EPERM when every
 * address reads as zero (kptr_restrict, not root), or a negative errno. */
int ksyms_load(const char *path, struct ksyms **out);
void ksyms_free(struct ksyms *k);
/* The function containing addr, or NULL.  *off gets addr - start; *module
 * the module name or NULL.  Pointers live as long as k. */
const char *ksyms_lookup(const struct ksyms *k, uint64_t addr, uint64_t *off,
			 const char **module);
/* Number of symbols loaded. */
uint32_t ksyms_count(const struct ksyms *k);

#endif
