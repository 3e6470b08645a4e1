// SPDX-License-Identifier: Apache-2.0
#include "sigbus.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile uint64_t replaced;
static bool installed;

static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
	long page = sysconf(_SC_PAGESIZE);
	void *at;

	(void)uctx;
	/* BUS_ADRERR: an access beyond the end of a mapped file */
	if (si->si_code == BUS_ADRERR && si->si_addr && page > 0) {
		at = (void *)((uintptr_t)si->si_addr & ~(uintptr_t)(page - 1));
		/* mmap is a plain system call: safe in a handler */
		if (mmap(at, (size_t)page, PROT_READ,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == at) {
			__atomic_add_fetch(&replaced, 1, __ATOMIC_RELAXED);
			return; /* the read is retried and sees zeros */
		}
	}
	/* not ours to mend: the default action on return */
	signal(sig, SIG_DFL);
}

int sigbus_guard_install(void)
{
	struct sigaction sa;

	if (installed)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		return -errno;
	installed = true;
	return 0;
}

uint64_t sigbus_guard_count(void)
{
	return __atomic_load_n(&replaced, __ATOMIC_RELAXED);
}
