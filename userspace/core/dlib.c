// SPDX-License-Identifier: Apache-2.0
#include "dlib.h"

#include <dlfcn.h>

void *dl_open_syms(const char *const *sonames, size_t n_sonames,
		   const struct dl_sym *syms, size_t n_syms,
		   const char **missing)
{
	void *h = NULL;
	size_t i;

	if (missing)
		*missing = NULL;
	for (i = 0; !h && i < n_sonames; i++)
		h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return NULL;
	for (i = 0; i < n_syms; i++) {
		*syms[i].slot = dlsym(h, syms[i].name);
		if (!*syms[i].slot) {
			if (missing)
				*missing = syms[i].name;
			for (i = 0; i < n_syms; i++)
				*syms[i].slot = NULL;
			dlclose(h);
			return NULL;
		}
	}
	return h;
}
