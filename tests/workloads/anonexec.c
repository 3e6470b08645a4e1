// SPDX-License-Identifier: Apache-2.0
/*
 * Two processes (a fork) running the same machine code from anonymous
 * memory mapped at the same address: the same pc in no file, in two
 * processes, which must stay two locations.  Usage: anonexec SECONDS
 */
#define _GNU_SOURCE /* MAP_FIXED_NOREPLACE */
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define ANON_AT ((void *)0x7e5e00000000UL)

/* mov $2000000, %rcx; 1: dec %rcx; jnz 1b; ret */
static const unsigned char spin_code[] = {
	0x48, 0xb9, 0x80, 0x84, 0x1e, 0, 0, 0, 0, 0, /* mov imm64, %rcx */
	0x48, 0xff, 0xc9,			     /* dec %rcx */
	0x75, 0xfb,				     /* jnz -5 */
	0xc3,					     /* ret */
};

int main(int argc, char **argv)
{
	double end = wl_now() + wl_secs(argc, argv, 10);
	pid_t child = fork();
	void (*spin)(void);
	void *p;

	p = mmap(ANON_AT, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != ANON_AT)
		return 1;
	memcpy(p, spin_code, sizeof(spin_code));
	spin = (void (*)(void))p;
	while (wl_now() < end)
		spin();
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}
