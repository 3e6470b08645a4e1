/* SPDX-License-Identifier: Apache-2.0 */
/* PHP's module (interp_php.c): what its tests and fuzz target reach. */
#ifndef EP_INTERP_PHP_H
#define EP_INTERP_PHP_H

#include <stdint.h>
#include <sys/types.h>

#include "interp.h"

/* Offsets the same in every version covered (7.4 to 8.4; the unit tests
 * check them against the headers, with bpf/php.h's constants). */
#define PHP_ED_OPLINE 0	   /* zend_execute_data.opline */
#define PHP_ED_FUNC 24	   /* .func */
#define PHP_ED_TYPE_INFO 40 /* .This.u1.type_info */
#define PHP_ED_PREV 48	   /* .prev_execute_data */
#define PHP_OP_LINENO 24   /* zend_op.lineno */
#define PHP_FN_TYPE 0	   /* zend_function.type */
#define PHP_FN_NAME 8	   /* .common.function_name */
#define PHP_FN_SCOPE 16	   /* .common.scope */
#define PHP_CE_NAME 8	   /* zend_class_entry.name */
#define PHP_STR_LEN 16	   /* zend_string.len */
#define PHP_STR_VAL 24	   /* .val */
#define PHP_VM_KIND_HYBRID 4 /* zend_vm_kind() of the hybrid VM */

/* What varies by minor version: zend_op_array's filename and line_start;
 * EG's current_execute_data and size in the build it was checked on (0:
 * known only from the code of zend_is_executing). */
struct php_layout {
	uint8_t major, minor;
	uint16_t filename, line_start;
	uint16_t current_off; /* 0: only from zend_is_executing's code */
	uint16_t eg_size;     /* sizeof(zend_executor_globals) with it */
};
/* NULL when the version is not covered. */
const struct php_layout *php_layout_of(unsigned major, unsigned minor);

/* Name one PHP frame (bpf/php.h: data = line | type << 32, payload = the
 * zend_function) from memory read through read: "Class::method",
 * "function", "{main}"; the file of user code.  filename_off: the
 * zend_op_array.filename offset of the process' version.  Returns 0, or
 * a negative errno when the function cannot be read. */
int php_frame_name(interp_read_fn read, void *arg, pid_t pid,
		   uint16_t filename_off, const struct interp_frame *f,
		   struct interp_symbol *out);

/* What detection keeps for a file (its store record; ELF addresses).  The
 * unit tests read a stored one with fix_record (interp_fixture.h).
 * Format 4: aarch64 builds' hybrid VM recognised (their resume_pc was 0),
 * and fp_sp. */
#define PHP_INFO_FORMAT 4
struct php_info {
	uint32_t format;
	uint8_t major, minor;
	uint16_t current_off; /* executor_globals -> current_execute_data */
	uint64_t eg;	      /* executor_globals */
	uint64_t loop_lo, loop_hi; /* execute_ex */
	uint64_t resume_pc; /* in execute_ex's body; 0: hybrid VM not found */
	uint16_t op_filename, op_line_start; /* zend_op_array */
	uint16_t fp_sp; /* aarch64: the body's sp is x29 - fp_sp; 0: x86-64 */
	uint16_t pad;
};
_Static_assert(sizeof(struct php_info) == 48, "php_info layout");

#endif
