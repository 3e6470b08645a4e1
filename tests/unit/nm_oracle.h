/* SPDX-License-Identifier: Apache-2.0 */
/*
 * binutils' nm as an oracle of a file's symbols, for the tests of our
 * ELF symbol and DWARF readers.
 */
#ifndef EP_TEST_NM_ORACLE_H
#define EP_TEST_NM_ORACLE_H

#include <stdbool.h>

/* One "addr size type name" line of nm -S. */
struct nm_sym {
	unsigned long long addr, size;
	char name[4096];
};

/*
 * The defined symbols of path (nm -S --defined-only, with more options
 * in opts) whose type letter is one of types, and only those with a size
 * when sized.  Returns their number, with the array in *out (malloc'd:
 * the caller frees it), or -1 when nm could not be run.
 */
int nm_syms(const char *path, const char *opts, const char *types,
	    bool sized, struct nm_sym **out);

#endif
