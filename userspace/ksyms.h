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
 * Loading /proc/kallsyms takes tens of milliseconds of CPU (hundreds of
 * thousands of lines, each formatted by the kernel): load it on a thread,
 * started once sampling is live so that it does not compete with
 * start-up, and wait only when the first kernel frame needs a name.
 */
struct ksyms_async;

/* A loader of path, not started.  Returns 0 or -ENOMEM (*out NULL). */
int ksyms_async_new(const char *path, struct ksyms_async **out);
/* Start loading on a thread (or now, when no thread can start). */
void ksyms_async_start(struct ksyms_async *a);
/* Wait for the load (once; loads now if never started); the table, or
 * NULL when it failed (logged once).  Owned by a. */
struct ksyms *ksyms_async_get(struct ksyms_async *a);
void ksyms_async_free(struct ksyms_async *a);

#endif
