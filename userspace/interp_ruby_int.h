/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to Ruby's module: interp_ruby.c (processes, BPF map entries,
 * the module's table), interp_ruby_detect.c (what a file holds: version,
 * TLS, rb_vm_exec, the ID table; the offsets per version) and
 * interp_ruby_names.c (frames named from a process' memory).  Not for
 * other modules: tests and the fuzz target use interp_ruby.h.
 */
#ifndef EP_INTERP_RUBY_INT_H
#define EP_INTERP_RUBY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interp_ruby.h"

/* What one minor version lays out: the walk's offsets (bpf/ruby.h) and
 * the names' (struct ruby_offsets). */
struct ruby_layout {
	uint8_t major, minor;
	uint16_t cfp_size;
	uint16_t vm_main_thread, th_ec; /* rb_vm_t, rb_thread_t */
	bool yjit; /* YJIT's entry frame as ruby.h says (3.1's C YJIT) */
	struct ruby_offsets o;
};

/* The layout of a version, NULL when it is not known. */
const struct ruby_layout *ruby_layout_of(unsigned major, unsigned minor);

/* The module's detect and check (struct interp_module). */
int ruby_detect(void *state, const struct interp_file *file, void **data,
		size_t *len);
int ruby_check(const void *record);

#endif
