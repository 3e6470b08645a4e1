// SPDX-License-Identifier: Apache-2.0
/*
 * CPython line tables (py_line_for_instr): co_lnotab (3.8, 3.9), the
 * 3.10 co_linetable and the 3.11+ location table.  Input: the minor
 * version byte, co_firstlineno (s32), the instruction index (u32), then
 * the table.  Any bytes are valid input: the answer is a line or -1.
 */
#include <string.h>

#include "fuzz.h"
#include "interp_python.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size, 0 };
	const uint8_t *table;
	unsigned minor;
	int32_t first;
	uint32_t instr;
	size_t len, k;

	minor = fz_u8(&in);
	first = (int32_t)fz_u32(&in);
	instr = fz_u32(&in);
	table = fz_rest(&in, &len);
	py_line_for_instr(minor, table, len, first, instr);
	/* instructions across the table's reach, as a walk would ask */
	for (k = 0; k < 64; k++)
		py_line_for_instr(minor, table, len, first,
				  (uint32_t)((2 * len + 2) * k / 64));
	py_line_for_instr(minor, len ? table : NULL, len, first, PY_INSTR_NONE);
	return 0;
}
