/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to V8's module: interp_v8.c (detection, the per-process
 * layouts, the module), interp_v8_names.c (heap objects, strings, a
 * function's name and line) and interp_v8_code.c (source position
 * tables, compiled code, deoptimization data, baseline code).  Not for
 * other modules.
 */
#ifndef EP_INTERP_V8_INT_H
#define EP_INTERP_V8_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "interp.h"
#include "interp_v8.h"

/* Objects of one process, read through read with one layout. */
struct v8_reader {
	interp_read_fn read;
	void *arg;
	pid_t pid;
	const struct v8_layout *l;
	struct v8_sym_stats *st; /* NULL: not kept */
};

static inline int v8_rd(const struct v8_reader *r, uint64_t addr, void *buf, size_t len)
{
	return r->read(r->arg, r->pid, addr, buf, len);
}

/* The tagged field at off of heap object obj. */
static inline int v8_field(const struct v8_reader *r, uint64_t obj, uint16_t off,
			   uint64_t *out)
{
	if ((obj & 3) != 1)
		return -EINVAL;
	return v8_rd(r, obj - 1 + off, out, 8);
}

/* A heap object's instance type. */
static inline int v8_type_of(const struct v8_reader *r, uint64_t obj, uint16_t *type)
{
	uint64_t map;
	int err = v8_field(r, obj, r->l->map, &map);

	if (err)
		return err;
	if ((map & 3) != 1)
		return -EINVAL;
	return v8_rd(r, map - 1 + r->l->map_type, type, 2);
}

/* Compiled code around a pc (interp_v8_code.c). */
struct v8_code {
	uint64_t code;	/* the Code object */
	uint64_t start; /* its first instruction */
	uint32_t size;
	unsigned kind;
};

/* ---- interp_v8_names.c ---- */

/* The lines of a frame's chain: out[i].line for script offset pos[i] in
 * script[i] (0 when either is not known), the newlines before it in the
 * source.  Each script's source is read once, up to the furthest of its
 * positions; n <= INTERP_CHAIN_MAX. */
void v8_chain_lines(const struct v8_reader *r, const uint64_t *script,
		    const int64_t *pos, struct interp_symbol *out, unsigned n);

/* SharedFunctionInfo sfi's name and its script's into out (line 0);
 * *script: its Script, 0 when it has none. */
int v8_sfi_symbol(const struct v8_reader *r, uint64_t sfi,
		  struct interp_symbol *out, uint64_t *script);

/* ---- interp_v8_code.c ---- */

/* The script offset a frame runs: from the BytecodeArray's (or baseline
 * Code's) source positions at bytecode offset off when have_off, else
 * the function's start; -1 when not known. */
int64_t v8_frame_position(const struct v8_reader *r, uint64_t bca,
			  bool have_off, uint32_t off);

/* The code object whose instructions hold pc into c: 0, or -ENOENT
 * when none is found, -ENOTSUP when the layout cannot tell. */
int v8_code_at(const struct v8_reader *r, uint64_t pc, struct v8_code *c);

/* Optimized code c, running at pc, for the frame of function sfi: the
 * functions inlined at pc, innermost first, then sfi, into out[0..max).
 * Returns how many, or an error. */
int v8_optimized_chain(const struct v8_reader *r, const struct v8_code *c,
		       uint64_t sfi, uint64_t pc, struct interp_symbol *out,
		       unsigned max);

/* The offset of the bytecode a baseline frame of code c (over
 * BytecodeArray bca) runs at pc_off: -1 for the function's entry; *ok
 * false when it could not be told. */
int64_t v8_baseline_bytecode(const struct v8_reader *r,
			     const struct v8_code *c, uint64_t bca,
			     uint64_t pc_off, bool *ok);

#endif
