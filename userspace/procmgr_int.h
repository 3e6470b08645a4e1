/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to procmgr.c (syncing a process' mappings, exits, gc),
 * procmgr_proc.c (reading /proc: maps, the vDSO, mapped files, comm, exe,
 * container) and procmgr_queue.c (the request queue and batches of syncs):
 * the manager itself and the calls procmgr.c makes into procmgr_proc.c.
 * Not for other modules.
 */
#ifndef EP_PROCMGR_INT_H
#define EP_PROCMGR_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "elfaddr.h"
#include "hashmap.h"
#include "procmgr.h"

/* The trie entries a batch holds: at least a mapping's most prefixes. */
#define PM_TRIE_BATCH 256

struct pm {
	struct exe_mgr *em;
	struct bpfmaps *bm;
	struct hm procs; /* pid -> struct pm_proc * */
	struct exe_file *vdso;
	bool vdso_tried;
	pm_synced_fn synced_fn;
	void *synced_arg;
	pm_forget_fn forget_fn;
	void *forget_arg;
	struct pm_stats st;
	uint64_t last_sweep_ns; /* last check of /proc for missed exits */
	/* the last pid_info.map_gen given (every sync takes the next: BPF's
	 * mapping cache keeps no entry across a sync; 0 is never given) */
	uint32_t map_gen;
	/* During pm_sync_many: hash(device, inode) -> struct exe_file * of
	 * the files mapped so far, so a library that 50 processes map is
	 * opened once.  The file's descriptor keeps that inode alive, so the
	 * pair names no other file meanwhile. */
	struct hm scan_files;
	/* the trie's changes not sent yet (a sync's, a forget's), all
	 * additions or all removals: sent in one call (trie_flush) */
	struct pm_trie_batch {
		bool add;
		uint32_t n;
		struct mapping_key keys[PM_TRIE_BATCH];
		struct mapping_info vals[PM_TRIE_BATCH];
	} tb;
	bool scanning;
	/* the request queue: a ring of PM_REQ_MAX entries, and pid -> the
	 * entry's sequence number for merging */
	struct pm_req {
		pid_t pid;
		unsigned why;
	} *reqs;
	uint64_t req_head, req_tail; /* sequence numbers: next out, next in */
	struct hm req_by_pid;
};

/* The other mappings of a file that settle its bias (elfaddr.h): a load
 * maps a file a handful of times; more only adds work. */
#define BIAS_PEERS 16

/* procmgr_proc.c */
struct exe_file *pm_get_vdso(struct pm *pm);
/* A mapping the iterator listed, as elfaddr.h takes it. */
struct ea_map pm_vma_map(const struct pm_vma *v);
/* The file of one maps line, not opened yet: an O_PATH descriptor of it
 * and *st its stat, or a negative errno (-ESTALE when what could be
 * found is another file; then *why says how it differs). */
int pm_path_mapping(pid_t pid, const struct ea_map *m, dev_t dev,
		    uint64_t ino, const char *path, struct stat *st,
		    enum pm_mismatch *why);
/* The same file opened for reading: a descriptor or a negative errno. */
int pm_open_mapping(pid_t pid, const struct ea_map *m, dev_t dev,
		    uint64_t ino, const char *path, enum pm_mismatch *why);
void pm_read_proc_info(struct pm_proc *p, bool all);

#endif
