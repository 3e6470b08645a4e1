/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The registers of a thread stopped under ptrace, for the live tests that
 * check what an unwinder reads against a real process.  Those tests read
 * x86-64 layouts (the fs-relative TSD and DTV, HotSpot's r13), so the
 * registers are x86-64's: built for another machine (make ARCH=arm64) the
 * call gives -ENOSYS and the tests skip (TEST_REGS_X86).
 */
#ifndef EP_TEST_REGS_H
#define EP_TEST_REGS_H

#include <errno.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>

struct test_regs {
	uint64_t pc, fp, tp; /* rip, rbp, fs base */
	uint64_t r13;	     /* HotSpot's bcp at the interpreter's leaf */
};

#if defined(__x86_64__)
#define TEST_REGS_X86 1
static inline int test_regs_get(pid_t tid, struct test_regs *out)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
		return -errno;
	out->pc = r.rip;
	out->fp = r.rbp;
	out->tp = r.fs_base;
	out->r13 = r.r13;
	return 0;
}
#else
#define TEST_REGS_X86 0
static inline int test_regs_get(pid_t tid, struct test_regs *out)
{
	(void)tid;
	(void)out;
	return -ENOSYS;
}
#endif

#endif
