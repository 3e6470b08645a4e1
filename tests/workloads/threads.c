// SPDX-License-Identifier: Apache-2.0
/* Two pthreads burning CPU: their stacks end in start_thread and clone3.
 * Usage: threads SECONDS */
#include <pthread.h>

#include "common.h"

static volatile unsigned long sink;
static double end;

NOINLINE static void thread_burn(void)
{
	while (wl_now() < end)
		sink++;
}

NOINLINE static void *thread_main(void *arg)
{
	thread_burn();
	return arg;
}

int main(int argc, char **argv)
{
	end = wl_now() + wl_secs(argc, argv, 10);
	wl_run_threads(2, thread_main);
	return 0;
}
