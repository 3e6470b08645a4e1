/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The header oracle's output (tests/tools/interp_offsets.sh: what the
 * compiler laid out with each runtime version's own headers), for the
 * tests that check the modules' offset tables against it.
 */
#ifndef EP_TEST_OFFSETS_ORACLE_H
#define EP_TEST_OFFSETS_ORACLE_H

#include <stdbool.h>
#include <stddef.h>

/* One "version build name value" line. */
struct oracle_row {
	char version[8], build[16], name[32];
	unsigned long value;
};

/* A value the code takes as given, by its oracle name. */
struct oracle_const {
	const char *name;
	unsigned long value;
};

/* Assert (what) that row r holds the value of the constant of its name
 * among the n in c; a failure too when none has its name (a value no
 * test reads). */
bool oracle_check_const(const struct oracle_row *r,
			const struct oracle_const *c, size_t n,
			const char *what);

/* The rows of tests/tools/<runtime>_offsets.txt (malloc'd), their number
 * in *n; NULL when the file cannot be read or a line is not a row. */
struct oracle_row *oracle_load(const char *runtime, size_t *n);

/*
 * Regenerate the runtime's oracle output from its sources, named by the
 * environment variable env (interp_offsets.sh's arguments after the
 * runtime: a git clone, or include directories), and compare with the
 * kept one; what: what env should name, for the skip's reason.
 * Returns 0 when equal, 1 when the sources are not there (the test
 * skipped with the reason), -1 when they differ (the test failed).
 */
int oracle_regenerate(const char *runtime, const char *env, const char *what);

#endif
