/* SPDX-License-Identifier: Apache-2.0 */
/* PHP's module (interp_php.c): what its tests and fuzz target reach. */
#ifndef EP_INTERP_PHP_H
#define EP_INTERP_PHP_H

#include <stdint.h>
#include <sys/types.h>

#include "interp.h"

/* Name one PHP frame (bpf/php.h: data = line | type << 32, payload = the
 * zend_function) from memory read through read: "Class::method",
 * "function", "{main}"; the file of user code.  filename_off: the
 * zend_op_array.filename offset of the process' version.  Returns 0, or
 * a negative errno when the function cannot be read. */
int php_frame_name(interp_read_fn read, void *arg, pid_t pid,
		   uint16_t filename_off, const struct interp_frame *f,
		   struct interp_symbol *out);

/* What detection kept for a file (its stored record), for tests. */
struct php_record {
	unsigned major, minor;
	unsigned current_off;	   /* executor_globals -> current_execute_data */
	uint64_t eg;		   /* executor_globals (ELF address) */
	uint64_t loop_lo, loop_hi; /* execute_ex */
	uint64_t resume_pc;	   /* where JIT frames resume, 0: none */
};
int php_record_describe(const void *data, size_t len, struct php_record *out);

#endif
