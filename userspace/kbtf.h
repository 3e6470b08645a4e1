/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The running kernel's types, cut down to what a BPF object's CO-RE
 * relocations read.
 *
 * libbpf relocates field accesses (task->thread.fsbase, ...) against the
 * kernel's BTF: parsing /sys/kernel/btf/vmlinux (5 MB, 150,000 types) and
 * searching it for candidates is the largest part of loading our programs
 * that does not depend on the programs.  kbtf_minimize() keeps, of the
 * kernel's BTF, only the structs and members the object's relocations
 * name, at their real offsets and sizes (a few hundred bytes), the way
 * bpftool's "gen min_core_btf" does; libbpf takes it as btf_custom_path
 * and resolves every relocation to the same offset it would have found
 * in the whole BTF.  The result is cached in the store under kbtf_key(),
 * so a restart on the same kernel never parses the kernel's BTF.
 */
#ifndef EP_KBTF_H
#define EP_KBTF_H

#include <stddef.h>

#include "fileid.h"

struct btf;

/* Raw BTF (as btf__raw_data() gives it) of the types of kernel that the
 * CO-RE relocations of the BPF object obj (an ELF image in memory) name.
 * *out is malloc'ed; the caller frees it.  Returns 0, -ENOENT when a
 * relocation names something the kernel lacks, -ENOTSUP for a relocation
 * kind or a type this does not handle (the caller then gives libbpf the
 * whole BTF), -EINVAL for a malformed object, or -ENOMEM. */
int kbtf_minimize(const void *obj, size_t obj_len, const struct btf *kernel,
		  void **out, size_t *out_len);

/* The same against the running kernel's BTF (/sys/kernel/btf/vmlinux). */
int kbtf_build(const void *obj, size_t obj_len, void **out, size_t *out_len);

/* The store key of that result on this machine: the kernel (its build id,
 * release, version and BTF size) and the object (its file id).  Returns 0
 * or a negative errno. */
int kbtf_key(const void *obj, size_t obj_len, struct file_id *out);

/* How many CO-RE relocations obj has, or a negative errno (tests). */
int kbtf_count_relos(const void *obj, size_t obj_len);

#endif
