/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The test runtime: a fake interpreter (tests/workloads/fakert.c) whose
 * loop ep_fakert_eval() runs "functions" described by a frame record the
 * program keeps in ep_fakert_current.  Its unwinder (test.bpf.h) pushes
 * a frame for the record in place of the loop's native frame; its
 * userland module (userspace/interp_test.c) names it from its code.  It
 * exists to show, and test, that a runtime is added through the
 * interpreter interface alone; -tracers enables it only by name.
 */
#ifndef EP_TEST_RUNTIME_H
#define EP_TEST_RUNTIME_H

#include "profiler.h"

#define TEST_METRICS(X)                                                        \
	X(FRAMES_TEST, "test runtime frames unwound")                          \
	X(ERR_TEST_READ, "test runtime: reading its frame record failed")      \
	X(ERR_TEST_MAGIC, "test runtime: the frame record has a wrong magic")

INTERP_METRIC_IDS(TEST, TEST_METRICS);

/* In the program's memory (all u64, little-endian): a frame record per
 * running function, linked to its caller's, and the function's code
 * object, which lives as long as the program (as a VM's code objects do:
 * a frame's payload must still mean the same when userland reads it). */
#define TEST_FRAME_MAGIC 0x31544b4146504521ULL /* "!EPFAKT1" */
#define TEST_CODE_MAGIC 0x31444f4346504521ULL  /* "!EPFCOD1" */
struct test_frame {
	__u64 magic;
	__u64 code; /* its struct test_code: the frame's payload */
	__u64 prev; /* the record of the caller, or 0 */
};

struct test_code {
	__u64 magic;
	__u64 name; /* address of its NUL-terminated name */
	__u64 line;
	/* the code object this one inlined (as a JIT inlines a callee:
	 * no frame record of its own), or 0 */
	__u64 inlined;
};

/* Per process (map "test_procs", key pid): runtime addresses. */
struct test_proc {
	__u64 eval_lo, eval_hi; /* ep_fakert_eval */
	__u64 current;		/* &ep_fakert_current */
};
_Static_assert(sizeof(struct test_proc) == 24, "test_proc layout");

#endif
