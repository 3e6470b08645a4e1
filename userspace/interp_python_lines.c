// SPDX-License-Identifier: Apache-2.0
/*
 * CPython's line tables, 3.8-3.13: an instruction index to a line number
 * (py_line_for_instr, interp_python.h).  Pure functions over bytes read
 * from a process: every read is bounded by the table's length.
 */
#include "interp_python.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- line tables --------------------------------------------------------- */

/* 3.8, 3.9: co_lnotab, pairs (byte offset increment, signed line
 * increment); addr is a byte offset (Objects/lnotab_notes.txt). */
static int lnotab_line(const uint8_t *t, size_t len, int first, uint64_t addr)
{
	uint64_t a = 0;
	int line = first;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		a += t[i];
		if (a > addr)
			break;
		if (__builtin_add_overflow(line, (int8_t)t[i + 1], &line))
			return -1; /* no source has 2^31 lines */
	}
	return line;
}

/* 3.10: co_linetable, pairs (byte length of a range, signed line delta;
 * -128: the range has no line). */
static int linetable310_line(const uint8_t *t, size_t len, int first,
			     uint64_t addr)
{
	uint64_t start, end = 0;
	int line = first;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		int8_t d = (int8_t)t[i + 1];

		start = end;
		end += t[i];
		if (d != -128 && __builtin_add_overflow(line, d, &line))
			return -1;
		if (start <= addr && addr < end)
			return d == -128 ? -1 : line;
	}
	return -1;
}

/* 3.11+ varint: 6-bit chunks, least significant first, bit 6 = more. */
static bool read_varint(const uint8_t *t, size_t len, size_t *i, uint32_t *out)
{
	uint32_t v = 0;
	unsigned shift = 0;

	for (;;) {
		uint8_t b;

		if (*i >= len || shift > 30)
			return false;
		b = t[(*i)++];
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	*out = v;
	return true;
}

static bool read_svarint(const uint8_t *t, size_t len, size_t *i, int *out)
{
	uint32_t u;

	if (!read_varint(t, len, i, &u))
		return false;
	*out = u & 1 ? -(int)(u >> 1) : (int)(u >> 1);
	return true;
}

/* 3.11+: the location table (Objects/locations.md).  Each entry starts
 * with a byte with bit 7 set: code in bits 3-6, length - 1 in code units
 * in bits 0-2. */
static int locations_line(const uint8_t *t, size_t len, int first,
			  uint64_t instr)
{
	uint64_t start, end = 0;
	int line = first;
	size_t i = 0;

	while (i < len) {
		uint8_t b = t[i++];
		unsigned code = (b >> 3) & 15;
		bool none = false;
		int delta = 0;
		uint32_t skip;

		if (!(b & 0x80))
			return -1; /* not an entry start: corrupt */
		start = end;
		end += (b & 7) + 1;
		switch (code) {
		case 15: /* no location */
			none = true;
			break;
		case 14: /* long form: line delta, end line, 2 columns */
			if (!read_svarint(t, len, &i, &delta) ||
			    !read_varint(t, len, &i, &skip) ||
			    !read_varint(t, len, &i, &skip) ||
			    !read_varint(t, len, &i, &skip))
				return -1;
			break;
		case 13: /* no columns */
			if (!read_svarint(t, len, &i, &delta))
				return -1;
			break;
		case 12:
		case 11:
		case 10: /* one line form: delta = code - 10, 2 column bytes */
			delta = (int)code - 10;
			i += 2;
			break;
		default: /* short form: same line, 1 column byte */
			i += 1;
			break;
		}
		if (__builtin_add_overflow(line, delta, &line))
			return -1;
		if (start <= instr && instr < end)
			return none ? -1 : line;
	}
	return -1;
}

int py_line_for_instr(unsigned minor, const uint8_t *table, size_t len,
		      int first, uint32_t instr)
{
	if (instr == PY_INSTR_NONE)
		return first;
	if (!table)
		return -1;
	if (minor <= 9)
		return lnotab_line(table, len, first, (uint64_t)instr * 2);
	if (minor == 10)
		return linetable310_line(table, len, first,
					 (uint64_t)instr * 2);
	return locations_line(table, len, first, instr);
}
