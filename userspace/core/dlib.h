/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Optional libraries loaded at run time (dlopen) rather than linked: a
 * library most runs never call (libcurl for OTLP, libdebuginfod) costs
 * nothing until the first caller, and the daemon runs without it.
 *
 *	static struct { int (*init)(void); } fn;
 *	static const char *const names[] = { "libx.so.1", "libx-alt.so.1" };
 *	const struct dl_sym syms[] = { { "x_init", (void **)&fn.init } };
 *	const char *missing;
 *	void *h = dl_open_syms(names, 2, syms, 1, &missing);
 *
 *	if (!h)
 *		... missing ? "lacks <missing>" : "not installed" ...
 */
#ifndef EP_DLIB_H
#define EP_DLIB_H

#include <stddef.h>

/* A function to resolve: its name, and the caller's pointer that takes
 * its address (a function pointer, through void **, as POSIX allows). */
struct dl_sym {
	const char *name;
	void **slot;
};

/*
 * Load the first of sonames[0..n_sonames) that loads (RTLD_NOW |
 * RTLD_LOCAL) and resolve syms[0..n_syms) in it.  Returns the handle,
 * or NULL: no soname loads (*missing = NULL), or the one that did lacks
 * a function (*missing = its name; the library is closed again and every
 * slot is NULL).  missing may be NULL.
 */
void *dl_open_syms(const char *const *sonames, size_t n_sonames,
		   const struct dl_sym *syms, size_t n_syms,
		   const char **missing);

#endif
