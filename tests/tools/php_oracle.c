// SPDX-License-Identifier: Apache-2.0
/*
 * The offsets PHP's unwinder uses (userspace/interp_php.c, bpf/php.h), as
 * one PHP version's own headers lay them out: compiled by
 * interp_offsets.sh against that version's installed headers (a phpX.Y-dev
 * package: Zend/, main/ with its generated php_config.h, TSRM/), to
 * assembly only; the compiler writes one "#ORACLE name value" line per
 * value.  Not part of the build: its output is kept in
 * tests/tools/php_offsets.txt.
 */
#include "php.h"
#include "zend_globals.h"
#include "zend_vm_opcodes.h"

#include <stddef.h>

#define P(name, v) __asm__ volatile("\n#ORACLE " name " %c0" ::"i"(v))

void oracle(void);
void oracle(void)
{
	P("major", PHP_MAJOR_VERSION);
	P("minor", PHP_MINOR_VERSION);
#ifdef ZTS
	P("zts", 1);
#else
	P("zts", 0);
	P("eg_current", offsetof(zend_executor_globals, current_execute_data));
	P("eg_size", sizeof(zend_executor_globals));
#endif
	P("ed_opline", offsetof(zend_execute_data, opline));
	P("ed_func", offsetof(zend_execute_data, func));
	P("ed_type_info", offsetof(zend_execute_data, This.u1.type_info));
	P("ed_prev", offsetof(zend_execute_data, prev_execute_data));
	P("op_lineno", offsetof(zend_op, lineno));
	P("fn_type", offsetof(zend_function, type));
	P("fn_name", offsetof(zend_function, common.function_name));
	P("fn_scope", offsetof(zend_function, common.scope));
	P("op_filename", offsetof(zend_function, op_array.filename));
	P("op_line_start", offsetof(zend_function, op_array.line_start));
	P("ce_name", offsetof(zend_class_entry, name));
	P("str_len", offsetof(zend_string, len));
	P("str_val", offsetof(zend_string, val));
	P("ZEND_CALL_TOP", ZEND_CALL_TOP);
	P("ZEND_INTERNAL_FUNCTION", ZEND_INTERNAL_FUNCTION);
	P("ZEND_USER_FUNCTION", ZEND_USER_FUNCTION);
	P("ZEND_EVAL_CODE", ZEND_EVAL_CODE);
	P("ZEND_VM_KIND_HYBRID", ZEND_VM_KIND_HYBRID);
}
