/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to deltas.c (the builder, the finished table, the lookup) and
 * deltas_serial.c (serialization, checks, the dump): the two calls the
 * reader shares with the builder.  Not for other modules.
 */
#ifndef EP_DELTAS_INT_H
#define EP_DELTAS_INT_H

#include <stdint.h>

#include "deltas.h"

/* deltas.c: a rule in its one byte form; the reader checks rules with it */
int dt_canonicalize(const struct unwind_rule *in, struct unwind_rule *r);

/* deltas.c: the table in one allocation, for the reader too */
struct dt_file *dt_file_alloc(uint32_t n_rules, uint32_t n_pages,
			      uint32_t n_rows);

#endif
