/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPython, for the tests and fuzz targets of the Python support: detection
 * of a file by path or fd, and the BPF frame walk done again in userland
 * (the oracle the walk is checked against).  The daemon needs neither: the
 * interpreter manager detects the file it opened (py_detect_elf) and BPF
 * walks the frames.
 */
#ifndef EP_PY_FIXTURE_H
#define EP_PY_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "interp.h"
#include "interp_python.h"

/* py_detect_elf on the ELF file open as fd: opened with elfm_open_fd as
 * the manager does, -EIO (and *out zeroed) when the file was cut short
 * while it was read (elfm_damaged). */
int fix_py_detect_fd(int fd, const char *name, unsigned flags,
		     struct py_info *out);
/* The same for a path: -errno when it does not open. */
int fix_py_detect(const char *path, unsigned flags, struct py_info *out);

/* The frame is the last of one _PyEval_EvalFrameDefault invocation: BPF
 * goes back to native unwinding after pushing it. */
#define PY_WF_CALL_END 0x1

struct py_walk_frame {
	uint64_t code;	/* code object address (f_code / f_executable) */
	uint32_t instr; /* code units, or PY_INSTR_NONE */
	uint32_t flags; /* PY_WF_* */
};

struct py_walk {
	uint64_t tstate; /* the thread's PyThreadState */
	uint32_t n;	 /* frames found, innermost first */
	bool truncated;	 /* the chain went on past the caller's array */
};

/*
 * Find the PyThreadState of the thread whose fs base is fsbase in the
 * main interpreter of process pid, whose BPF map value is pp (py_ctx_proc;
 * NULL: -ESRCH), reading its memory with read(arg, ...): the BPF lookup.
 * Returns 0, -ESRCH when no state matches in PY_TSTATE_SCAN_MAX or there
 * is no interpreter (yet), or read's error (-EFAULT at address 0).
 */
int fix_py_tstate(const struct py_proc *pp, interp_read_fn read, void *arg,
		  pid_t pid, uint64_t fsbase, uint64_t *tstate);
/*
 * Walk the Python frames of that thread as BPF does, into frames[0..max).
 * Shim frames are skipped and mark the end of an invocation; no code
 * object is dereferenced (symbolization checks them).  Returns 0 or the
 * errors of fix_py_tstate and of reading a frame.
 */
int fix_py_walk(const struct py_proc *pp, interp_read_fn read, void *arg,
		pid_t pid, uint64_t fsbase, struct py_walk_frame *frames,
		uint32_t max, struct py_walk *out);

#endif
