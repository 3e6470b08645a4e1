/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The symbolizer: one frame word of a trace record to what it stands for
 * (a kernel address, an address in a file, a pc in no known file, an
 * interpreter frame, an unwinding error), then on demand its names.
 * Read-only over the process and executable managers and the kernel
 * symbols: it never reads /proc, syncs a process or extracts a file
 * (the poll loop does that, pm_service); the names of a file's symbols
 * load on first use (exe_symbolize), and interpreter frames go to the
 * interpreter callback.  The aggregation (pipeline.c) keys a location by
 * the frame and asks for names only for a location it has not seen in
 * the interval.
 */
#ifndef EP_SYMBOLIZE_H
#define EP_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "dwinline.h"
#include "exemgr.h"
#include "inlcache.h"
#include "interp.h"
#include "ksyms.h"
#include "procmgr.h"
#include "reporter.h"

struct symbolizer;

/* name an interpreter frame (interp_symbolize, through tp_opts); an
 * error: unknown, shown by address */
typedef int (*sy_interp_fn)(void *arg, uint32_t pid,
			    const struct interp_frame *f,
			    struct interp_symbol *out, unsigned max);

enum sy_kind {
	SY_KERNEL = 1, /* addr: a kernel address */
	SY_NATIVE,     /* addr: an ELF address in file */
	SY_UNKNOWN,    /* addr: a pc of pid in no known file; what: the label */
	SY_INTERP,     /* interp: an interpreter frame of pid */
	SY_ERROR,      /* code: METRIC_ERR_* */
};

/* A pc in no known file, by what is known of it. */
enum sy_unknown {
	SY_UNKNOWN_FILE = 1, /* a file id BPF had and we no longer have */
	SY_UNKNOWN_PC,	     /* in no mapping of the process */
	SY_UNKNOWN_ANON,     /* in anonymous executable memory (JIT) */
};

struct sy_frame {
	enum sy_kind kind;
	unsigned frame_kind;	      /* SY_INTERP: FRAME_INTERP(interp.kind) */
	uint32_t pid;
	bool ret_addr;		      /* a return address: names the call */
	uint64_t addr;
	struct exe_file *file;	      /* SY_NATIVE */
	const struct pm_mapping *map; /* SY_NATIVE: the mapping, when known */
	struct interp_frame interp;   /* SY_INTERP: data, payload words */
	uint32_t code;		      /* SY_ERROR: the error; SY_UNKNOWN: what */
};

/* The frames of one record are read with one of these (the process is
 * looked up once). */
struct sy_record {
	uint32_t pid;
	const __u64 *uw; /* the user frame words */
	uint32_t n, i;	 /* words, the next one */
	struct pm_proc *proc;
	bool proc_tried;
};

struct sy_stats {
	uint64_t raw_unresolved; /* raw pcs in no known mapping */
};

/* ka may be NULL (kernel frames by address); interp may be NULL. */
int sy_new(struct pm *pm, struct exe_mgr *em, struct ksyms_async *ka,
	   sy_interp_fn interp, void *interp_arg, struct symbolizer **out);
void sy_free(struct symbolizer *sy);
void sy_kernel_frame(uint64_t addr, struct sy_frame *f);

/* Leaf frames an off-CPU record's kernel stack scans for __schedule. */
#define SY_OFFCPU_SCAN 8
/* Where an off-CPU record's kernel stack starts: at __schedule, leaving
 * out the frames of the tracepoint's machinery above it (the program,
 * its trampoline, __traceiter_sched_switch: how many depends on the
 * kernel and on what else is attached there); 0 when __schedule is not
 * among the first SY_OFFCPU_SCAN frames or the kernel's symbols are not
 * loaded yet. */
uint32_t sy_offcpu_kernel_start(struct symbolizer *sy, const __u64 *words,
				uint32_t n);
void sy_record_init(struct sy_record *r, uint32_t pid, const __u64 *uw,
		    uint32_t n);
/* The next user frame of r into f.  Returns 1 with f filled, 0 at the
 * end of the record, or -EINVAL for malformed frame words. */
int sy_next_frame(struct symbolizer *sy, struct sy_record *r,
		  struct sy_frame *f);
/* The mapping of process pid through which f's ELF address addr runs
 * (NULL when the process is not known or does not map f). */
const struct pm_mapping *sy_file_mapping(struct symbolizer *sy, uint32_t pid,
					 const struct exe_file *f,
					 uint64_t addr);
/* The location of f with its names: out->function and out->filename
 * point into buf (or to literals and the kernel symbols), valid until
 * the next call with buf; out->mapping is left to the caller. */
void sy_name(struct symbolizer *sy, const struct sy_frame *f,
	     struct rep_location *out, struct interp_symbol *buf);
void sy_get_stats(struct symbolizer *sy, struct sy_stats *out);
/* An interpreter frame's locations, as sy_name: one, or the chain of
 * functions its runtime's JIT inlined there, innermost first (inl_more
 * set on all but the last), in out[0..max) with their strings in
 * buf[0..max).  Returns how many (>= 1: an unknown frame is named by
 * address). */
int sy_interp_names(struct symbolizer *sy, const struct sy_frame *f,
		    struct rep_location *out, struct interp_symbol *buf,
		    unsigned max);

/* Inline frames (issue 23): with a cache set (not owned; NULL: off), a
 * native frame whose file has DWARF names the chain of functions inlined
 * at its address.  Returns the frames written to out (INL_MAX_FRAMES),
 * innermost first with their file:line, or 0: not native, off, or no
 * DWARF there (sy_name then names it from the ELF symbols).  The strings
 * live as long as the cache. */
void sy_set_inline(struct symbolizer *sy, struct inl_cache *c);
int sy_inline_frames(struct symbolizer *sy, const struct sy_frame *f,
		     struct dwi_frame *out);

#endif
