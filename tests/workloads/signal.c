// SPDX-License-Identifier: Apache-2.0
/* A signal handler that does work: the stack crosses the signal
 * trampoline.  main -> wait_loop (spins) interrupted by SIGPROF every
 * 10 ms of CPU time -> handler -> handler_work.  Usage: signal SECONDS */
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#include "common.h"

static volatile unsigned long sink;

NOINLINE static void handler_work(void)
{
	double end = wl_cpu_now() + 0.005;

	while (wl_cpu_now() < end)
		sink++;
}

NOINLINE static void handler(int sig)
{
	handler_work();
	sink += sig;
}

NOINLINE static void wait_loop(double end)
{
	while (wl_now() < end) {
		unsigned long i;

		for (i = 0; i < 100000; i++)
			sink += i;
	}
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	wait_loop(wl_now() + wl_secs(argc, argv, 10));
	return 0;
}
