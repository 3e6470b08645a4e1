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

/*
 * Loading /proc/kallsyms takes a good part of start-up (hundreds of
 * thousands of lines): load it on a thread, and wait only when the first
 * kernel frame needs a name.
 */
struct ksyms_async;

/* Start loading path.  Returns 0 or -ENOMEM (then *out is NULL). */
int ksyms_load_async(const char *path, struct ksyms_async **out);
/* Wait for the load (once); the table, or NULL when it failed (logged
 * once).  Owned by a. */
struct ksyms *ksyms_async_get(struct ksyms_async *a);
void ksyms_async_free(struct ksyms_async *a);

#endif
