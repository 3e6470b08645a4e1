// SPDX-License-Identifier: Apache-2.0
/* Loads a library some time after it starts (after the profiler began)
 * and burns CPU in it: main -> run_plugin -> plugin_burn -> plugin_inner.
 * Usage: dlopen SECONDS DELAY LIBRARY */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#include "common.h"

NOINLINE static void run_plugin(void (*burn)(double), double end)
{
	burn(end);
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_secs(argc, argv, 10);
	void *h;
	void (*burn)(double);

	if (argc < 4)
		return 2;
	usleep((useconds_t)(atof(argv[2]) * 1e6));
	h = dlopen(argv[3], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	burn = (void (*)(double))dlsym(h, "plugin_burn");
	if (!burn)
		return 1;
	run_plugin(burn, end);
	return 0;
}
