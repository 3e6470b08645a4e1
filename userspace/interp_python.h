/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPython 3.8 to 3.13, the userland half.
 *
 * Detection (per ELF file, no process needed, cacheable by file id): find
 * CPython in an executable that links it statically (Debian's python3.11)
 * or in libpython3.X.so, its version, the addresses of _PyRuntime,
 * PyCode_Type and the eval loop (with its .cold part), and the offsets the
 * BPF frame walk and the symbolizer need.  3.13 describes itself in
 * _PyRuntime.debug_offsets, read from the file's initialized data; older
 * versions use a table written from CPython's sources and checked against
 * the DWARF of real builds by the unit tests.
 *
 * Per process: py_proc_fill() applies the load bias and gives the BPF map
 * value (struct py_proc, bpf/profiler.h).  A py_ctx holds the processes
 * and a bounded cache of code objects, and turns (pid, code object address,
 * instruction index) into qualname, file and line by reading the process
 * with process_vm_readv.  (The tests walk the frames in userland as BPF
 * does, in tests/unit/py_fixture.c, to check the walk against.)
 *
 * Nothing read from a process is trusted: every length is bounded, every
 * pointer read may fail, and failures come back as negative errnos.
 */
#ifndef EP_INTERP_PYTHON_H
#define EP_INTERP_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "interp.h"
#include "profiler.h"
#include "python.h"

struct elfm;

/* Offsets into CPython's structures, in bytes; PY_OFF_NONE when the
 * version has no such field.  The first group is what struct py_proc
 * carries to BPF; the rest serves symbolization. */
struct py_offsets {
	/* thread state lookup and frame walk (see struct py_proc) */
	uint16_t rt_interp_main;
	uint16_t rt_tss_key; /* _PyRuntime -> autoTSSkey._key */
	uint16_t is_tstate_head;
	uint16_t ts_next;
	uint16_t ts_thread_id;
	uint16_t ts_native_tid;
	uint16_t ts_frame;
	uint16_t cf_current_frame;
	uint16_t f_back;
	uint16_t f_code;
	uint16_t f_lasti;
	uint16_t f_is_entry;
	uint16_t f_owner;
	uint16_t co_code_adaptive;
	/* code objects */
	uint16_t co_firstlineno; /* int */
	uint16_t co_filename;
	uint16_t co_name;
	uint16_t co_qualname;  /* 3.11+ */
	uint16_t co_linetable; /* co_lnotab (3.8, 3.9) or co_linetable */
	uint16_t co_basicsize; /* PyCode_Type.tp_basicsize */
	/* str objects (PyASCIIObject, PyCompactUnicodeObject) */
	uint16_t uni_length;
	uint16_t uni_state;
	uint16_t uni_ascii_size;   /* ASCII data follows */
	uint16_t uni_compact_size; /* other compact data follows; a legacy
				    * string's data pointer is here */
	/* bytes objects */
	uint16_t bytes_size;
	uint16_t bytes_sval;
	uint16_t pad[2];
};
_Static_assert(sizeof(struct py_offsets) == 56, "py_offsets layout");

/* Bump when struct py_info changes: the store keeps its bytes as they are
 * (it is plain fixed-width data) and drops records of another format. */
#define PY_INFO_FORMAT 1

#define PY_INFO_F_DEBUG_OFFSETS 0x1 /* offsets from _Py_DebugOffsets */
#define PY_INFO_F_FULL_VERSION 0x2  /* hexversion from Py_Version */
#define PY_INFO_F_VERSION_NAME 0x4  /* minor version from the file name */
#define PY_INFO_F_COLD_SYMBOL 0x8   /* cold part from a .cold symbol */
#define PY_INFO_F_COLD_SCAN 0x10    /* cold part found by scanning jumps */

/* What detection found in one file.  Addresses are ELF virtual addresses
 * (add the load bias for the process's). */
struct py_info {
	uint32_t format;     /* PY_INFO_FORMAT */
	uint32_t hexversion; /* PY_VERSION_HEX; micro and release are 0
			      * unless PY_INFO_F_FULL_VERSION */
	uint32_t flags;	     /* PY_INFO_F_* */
	uint8_t major, minor;
	uint8_t frame_model; /* enum py_frame_model */
	uint8_t lasti_shift;
	uint64_t runtime;   /* _PyRuntime */
	uint64_t code_type; /* PyCode_Type */
	uint64_t eval_lo, eval_hi; /* _PyEval_EvalFrameDefault */
	uint64_t cold_lo, cold_hi; /* its .cold part, 0, 0 if none found */
	struct py_offsets off;
};
_Static_assert(sizeof(struct py_info) == 120, "py_info layout");

/* py_detect flags. */
#define PY_DETECT_NO_SYMTAB 0x1 /* ignore .symtab: act as on a stripped file */

/*
 * Detect CPython in the ELF file open as elf (elfm_open_fd(fd)); name (may
 * be NULL) is the file's path or name, used only when the file itself does
 * not say the version.  Returns 0 and fills *out; -ENOENT when the file
 * holds no CPython runtime (no _PyRuntime or no eval loop: e.g. the pyenv
 * python stub, which loads libpython); -ENOTSUP for versions outside
 * 3.8-3.13 and free-threaded builds; -EPROTO when the file contradicts the
 * offsets (PyCode_Type.tp_basicsize, _Py_DebugOffsets sanity); other
 * negative errnos for I/O and ELF errors.  Whether the file was cut short
 * while it was read (elfm_damaged) is the caller's to check.  Never logs:
 * the caller knows the file.
 */
int py_detect_elf(struct elfm *elf, int fd, const char *name, unsigned flags,
		  struct py_info *out);
/* Whether info is usable: every offset that userland reads at falls
 * inside the fixed buffers it reads into, the fields the frame model
 * needs are present.  info comes from a file (3.13 describes itself) or
 * from the cache; py_detect_elf and py_ctx_add_proc refuse what fails
 * this.  Returns 0 or -EINVAL. */
int py_info_check(const struct py_info *info);

/* The BPF map value for a process whose file holding CPython (described
 * by info) is loaded with the given bias. */
void py_proc_fill(const struct py_info *info, uint64_t bias,
		  struct py_proc *out);

/*
 * The source line of instruction instr (code units, PY_INSTR_NONE for a
 * frame that has not started) in a code object of Python 3.<minor> with
 * line table table[0..len) (co_lnotab for 3.8 and 3.9, co_linetable
 * after) and co_firstlineno first.  Returns the line, or -1 when the table
 * says the instruction has none or does not cover it.  Pure; any bytes
 * are safe input.
 */
int py_line_for_instr(unsigned minor, const uint8_t *table, size_t len,
		      int first, uint32_t instr);

/* ---- per-process state and symbolization ------------------------------- */

struct py_ctx_opts {
	size_t max_code;  /* code objects cached; 0 = 16384 */
	size_t max_bytes; /* bytes cached (strings, line tables); 0 = 64 MiB */
	size_t max_procs; /* processes; 0 = 4096 */
	interp_read_fn read; /* NULL = interp_read_process */
	void *read_arg;
};

struct py_stats {
	uint64_t hits;	    /* served from the cache after validation */
	uint64_t misses;    /* read from the process */
	uint64_t stale;	    /* cache entry whose object changed (reused
			     * address): dropped and read again */
	uint64_t evictions; /* entries dropped because the cache was full */
	uint64_t read_errors; /* a read of the process failed */
	uint64_t bad_objects; /* not a code object, or inconsistent fields */
	uint64_t procs_full;  /* py_ctx_add_proc refused: table full */
	uint64_t entries, bytes; /* current size */
};

/* Not thread-safe: one py_ctx per thread, or a lock around it. */
struct py_ctx;

/* Returns 0 or -ENOMEM; *out is NULL on failure.  opts may be NULL. */
int py_ctx_new(const struct py_ctx_opts *opts, struct py_ctx **out);
void py_ctx_free(struct py_ctx *ctx);

/* Register (or replace, after an exec) process pid whose CPython is
 * described by info and loaded at bias.  Drops the pid's cached code
 * objects.  Returns 0, -EINVAL when info fails py_info_check, or -ENOSPC
 * when max_procs are registered. */
int py_ctx_add_proc(struct py_ctx *ctx, pid_t pid, const struct py_info *info,
		    uint64_t bias);
/* Forget pid and its cached code objects (exit).  No-op if unknown. */
void py_ctx_remove_proc(struct py_ctx *ctx, pid_t pid);
/* The BPF map value of a registered process, or NULL.  Owned by ctx,
 * valid until pid is removed or replaced. */
const struct py_proc *py_ctx_proc(const struct py_ctx *ctx, pid_t pid);

#define PY_NAME_MAX 256
#define PY_FILE_MAX 512

#define PY_FI_NAME_TRUNC 0x1 /* name did not fit (cut at a character) */
#define PY_FI_FILE_TRUNC 0x2
#define PY_FI_TABLE_TRUNC 0x4 /* line table longer than the bound */

struct py_frame_info {
	char name[PY_NAME_MAX]; /* co_qualname (3.11+) or co_name, UTF-8 */
	char file[PY_FILE_MAX]; /* co_filename, UTF-8 */
	int line;		/* source line, 0 when unknown */
	int first_line;		/* co_firstlineno */
	uint32_t flags;		/* PY_FI_* */
};

/*
 * Symbolize one Python frame of process pid: code is the code object's
 * address and instr the instruction index in code units (as BPF pushes
 * them).  A cached code object is trusted only after a re-read of its
 * header matches (type, name, file and line-table pointers, first line).
 * Returns 0; -ESRCH when pid is not registered or gone; -EFAULT when its
 * memory cannot be read; -EINVAL when code is not a code object or its
 * fields are inconsistent; -ENOMEM.
 */
int py_symbolize(struct py_ctx *ctx, pid_t pid, uint64_t code, uint32_t instr,
		 struct py_frame_info *out);

void py_ctx_stats(const struct py_ctx *ctx, struct py_stats *out);

#endif
