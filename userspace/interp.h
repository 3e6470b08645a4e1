/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Interpreter handlers: the glue between the managers and each
 * interpreter's module (CPython first: interp_python.c).  Per file it
 * detects the runtime (and keeps what it found in the store); per process
 * it fills the BPF map the unwinder reads; per frame it symbolizes.
 */
#ifndef EP_INTERP_H
#define EP_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "bpfmaps.h"
#include "exemgr.h"
#include "procmgr.h"
#include "reporter.h"

struct interp_mgr;
struct store;

struct interp_stats {
	uint64_t files_python;	  /* files holding a CPython runtime */
	uint64_t procs_python;	  /* processes registered now */
	uint64_t detect_cached;	  /* detections answered by the store */
	uint64_t symbolize_ok, symbolize_fail;
	uint64_t map_full;	  /* py_procs updates that failed */
};

/* tracers: "all", or a comma list ("native,python").  Returns 0, -EINVAL
 * for an unknown tracer (after a message), or -ENOMEM. */
int interp_mgr_new(struct bpfmaps *bm, struct store *store,
		   const char *tracers, struct interp_mgr **out);
void interp_mgr_free(struct interp_mgr *im);
bool interp_python_enabled(const struct interp_mgr *im);
/* Hooks: exe_mgr (new file), procmgr (process synced, process gone),
 * pipeline (interpreter frame). */
void interp_detect(void *im, struct exe_file *f, int fd);
void interp_synced(void *im, struct pm_proc *p);
void interp_forget(void *im, pid_t pid);
int interp_frame(void *im, uint32_t pid, unsigned kind, __u64 data,
		 __u64 payload, struct rep_location *out, char *name,
		 size_t name_len, char *file, size_t file_len);
void interp_get_stats(struct interp_mgr *im, struct interp_stats *out);

#endif
