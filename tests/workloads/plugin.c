// SPDX-License-Identifier: Apache-2.0
/* The library dlopen() loads: its frames must be unwound and named. */
#include "common.h"

static volatile unsigned long sink;

NOINLINE static void plugin_inner(double end)
{
	while (wl_now() < end)
		sink++;
}

NOINLINE void plugin_burn(double end)
{
	plugin_inner(end);
	sink++;
}
