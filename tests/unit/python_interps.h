/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPython builds on this machine that the Python tests run against:
 * Debian's /usr/bin/python3.11 (libpython linked in) and the newest pyenv
 * build of each minor version 3.8 to 3.13 (`pyenv root`/versions).
 */
#ifndef EP_TEST_PYTHON_INTERPS_H
#define EP_TEST_PYTHON_INTERPS_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#define PYI_MAX 8

struct pyi {
	char label[80];	     /* "debian-3.11", "pyenv-3.12.1" */
	char bin[PATH_MAX];  /* the interpreter to run */
	char lib[PATH_MAX];  /* the file that holds CPython */
	char dbg[PATH_MAX];  /* the file with its DWARF, "" if none */
	unsigned minor;
};

/* Fill list[] with the builds present; returns how many.  Notes each
 * minor version that has no build (a skip with its reason). */
int pyi_find(struct pyi *list, int max);

/* Run fn on each build as a subtest named by its label; skip the test
 * with a reason when there is none. */
void pyi_each(void (*fn)(const struct pyi *p));

/* Run a shell command and collect its stdout (NUL-terminated, malloc'd),
 * NULL on failure. */
char *pyi_run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
