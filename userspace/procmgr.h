/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process manager: which files each process maps where.  It lists
 * the executable mappings (PROCMAP_QUERY, or /proc/PID/maps), finds each
 * one's file through /proc/PID/map_files (which works for deleted files
 * and other mount namespaces), takes a reference on the file from the
 * executable manager (by its stat when loaded already, else opened for
 * reading), and writes the mapping into the BPF trie; then marks the
 * process synced so BPF unwinds it with stack deltas.
 */
#ifndef EP_PROCMGR_H
#define EP_PROCMGR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "bpfmaps.h"
#include "exemgr.h"

struct pm;

struct pm_mapping {
	uint64_t start, end, offset;
	uint64_t bias; /* pc - bias = ELF address (elfaddr.h) */
	uint32_t prot; /* PF_R | PF_W | PF_X, from the maps line */
	struct exe_file *file; /* NULL for anonymous executable memory */
	uint32_t flags;	       /* MAP_F_* */
};

struct pm_proc {
	pid_t pid;
	bool synced;
	bool exited;
	uint64_t exit_ns;
	uint64_t synced_ns;
	char comm[16];
	char *exe_path;
	char container_id[65];
	struct pm_mapping *maps;
	uint32_t n_maps;
	uint32_t interp_mask;
};

/* Why an opened file is not the one a maps line names (the file is then
 * not used: its mapping is walked by frame pointer, unnamed). */
enum pm_mismatch {
	PM_MISMATCH_NONE,
	PM_MISMATCH_INODE,  /* another inode: the path names another file now */
	PM_MISMATCH_DEVICE, /* the same inode number on another device */
	PM_MISMATCH_SIZE,   /* too short to hold the mapping's offset */
	PM_MISMATCH_COUNT
};

/* "inode", ... (the metric's reason label) */
const char *pm_mismatch_name(unsigned reason);

struct pm_stats {
	uint64_t procs;	      /* processes tracked now */
	uint64_t syncs;	      /* maps reads */
	uint64_t sync_errors; /* processes that vanished or could not be read */
	uint64_t mappings;    /* executable mappings tracked */
	uint64_t trie_entries;
	uint64_t trie_full;   /* trie updates that failed */
	uint64_t exits;
	uint64_t opens;	      /* mapped files opened for reading (new ones) */
	/* files opened for a mapping and refused, by enum pm_mismatch
	 * ([PM_MISMATCH_NONE] counts nothing useful) */
	uint64_t mismatch[PM_MISMATCH_COUNT];
	uint64_t requests;	   /* sync requests queued (pm_request) */
	uint64_t requests_merged;  /* requests for a pid already queued */
	uint64_t requests_dropped; /* requests refused: the queue was full */
	uint64_t requests_served;  /* requests done by pm_service */
	uint64_t requests_pending; /* requests queued now */
	/* the start-up scan (pm_scan_running): processes listed, and the
	 * ones it chose by why (each counted once, in this order) */
	uint64_t scan_listed;
	uint64_t scan_running; /* state R */
	uint64_t scan_busy;    /* a CPU share since start */
	uint64_t scan_grew;    /* CPU time during the scan */
	uint64_t scan_capped;  /* chosen past PM_SCAN_MAX: not loaded */
};

/* Why a process is to be (re)read: bits of pm_request's why. */
enum pm_req_why {
	PM_REQ_SYNC = 1, /* a sample of a process not loaded, or at an unknown pc */
	PM_REQ_EXEC = 2, /* a new image: forget the old one (with SYNC: then
			  * read the new one) */
	PM_REQ_EXIT = 4, /* the process exited */
};

/* The request queue's bound (pids queued at once). */
#define PM_REQ_MAX 4096

/* Callback run after a process is (re)synced: interpreter handlers hook
 * here.  May be NULL. */
typedef void (*pm_synced_fn)(void *arg, struct pm_proc *p);

int pm_new(struct exe_mgr *em, struct bpfmaps *bm, struct pm **out);
void pm_free(struct pm *pm);
void pm_set_synced_hook(struct pm *pm, pm_synced_fn fn, void *arg);
/* Called when a process' state is dropped (exit, exec). */
typedef void (*pm_forget_fn)(void *arg, pid_t pid);
void pm_set_forget_hook(struct pm *pm, pm_forget_fn fn, void *arg);
/* Load the processes that run now or ran recently: at start-up, so that
 * the busy ones have complete stacks from their first sample; the others
 * load on their first sample.  A process loads when its main thread is
 * running (state R), when it used at least PM_SCAN_BUSY_PERMILLE of a
 * CPU since it started, or when its CPU time grew while the scan ran:
 * two reads of /proc/PID/stat per process (pm_stat), at most PM_SCAN_MAX
 * loads, the running ones first, then by CPU share.  When *stop turns
 * true (another thread sets it; stop may be NULL) the ones not loaded yet
 * are queued instead (pm_request), in that order.  Returns how many were
 * synced. */
int pm_scan_running(struct pm *pm, const bool *stop);
#define PM_SCAN_BUSY_PERMILLE 10
#define PM_SCAN_MAX 1024
/* The state of pid's main thread in /proc/PID/stat ('R' running or
 * runnable, 'S' asleep...), or 0 when it cannot be read. */
char pm_proc_state(pid_t pid);
/* What the start-up scan reads of a process: one small read of
 * /proc/PID/stat. */
struct pm_stat {
	char state;	/* the main thread's ('R', 'S', ...) */
	uint64_t ticks; /* user + system time of every thread, clock ticks */
	uint64_t start; /* start time, clock ticks since boot */
};
/* Returns 0, or a negative errno when the process cannot be read. */
int pm_proc_stat(pid_t pid, struct pm_stat *out);
/* Load these n processes, looking each file they map up once (pm_sync
 * looks up every mapping's file, by the stat of its map_files link, to
 * tell changed files).  Returns how many were synced. */
int pm_sync_many(struct pm *pm, const pid_t *pids, int n);
/* (Re)read one process' mappings and update BPF.  Returns 0, -ESRCH when
 * it is gone, or another negative errno. */
int pm_sync(struct pm *pm, pid_t pid);
/* A new image was exec'd: forget the old one (its mappings, its state).
 * The new one is not read: it loads on its first sample, like any process
 * not loaded yet (PM_REQ_SYNC).  Returns 0. */
int pm_exec(struct pm *pm, pid_t pid);
/* The process exited: its state goes at the next pm_gc after linger. */
void pm_exit(struct pm *pm, pid_t pid);
/* Forget processes that exited linger_ns ago; every 10 s also look for
 * exits the events missed (processes gone from /proc). */
void pm_gc(struct pm *pm, uint64_t now_ns, uint64_t linger_ns);
/*
 * The request queue: the ring-buffer callbacks and the trace pipeline
 * only ask, and the poll loop does the work (pm_service), so reading
 * /proc and extracting a file never run inside a callback.  One entry per
 * pid (a second request ORs its why into the first), first in first out,
 * at most PM_REQ_MAX: past that a request is dropped and counted (a
 * dropped sync comes again with the process' next sample; a dropped exit
 * is found by pm_gc's sweep).  pm_request returns 0 or -ENOSPC.
 */
int pm_request(struct pm *pm, pid_t pid, unsigned why);
/* Requests queued now. */
uint32_t pm_pending(struct pm *pm);
/* Is a request for pid queued? */
bool pm_is_pending(struct pm *pm, pid_t pid);
/* Do queued requests in order until the queue is empty or budget_ns has
 * passed (checked between requests: one file's extraction is not cut;
 * 0: no limit).  Returns the number done. */
int pm_service(struct pm *pm, uint64_t budget_ns);
struct pm_proc *pm_find(struct pm *pm, pid_t pid);
/* The mapping of p containing addr, or NULL. */
const struct pm_mapping *pm_find_mapping(const struct pm_proc *p, uint64_t addr);
/* The mapping of p through which file f's ELF address addr runs (a file
 * with split text has several), else f's first mapping in p; NULL when p
 * is NULL or does not map f. */
const struct pm_mapping *pm_find_file_mapping(const struct pm_proc *p,
					      const struct exe_file *f,
					      uint64_t addr);
void pm_get_stats(struct pm *pm, struct pm_stats *out);
/* Where pc runs in process pid, read now from /proc (for `ebpf-profiler
 * deltas -pid`; the daemon keeps pm_sync's mappings): the file mapping
 * that holds pc, opened (*fd, which the caller closes), its path as the
 * maps line gives it ("[vdso]" for the vDSO), and its load bias with the
 * file's executable mappings as pm_sync computes it.  Returns 0, -ESRCH
 * (no such process), -ENOENT (no file mapping holds pc) or another
 * negative errno (then *fd is -1). */
int pm_locate(pid_t pid, uint64_t pc, int *fd, char *path, size_t len,
	      uint64_t *bias);
/* The trie prefixes that cover [start, end): the fewest aligned
 * power-of-two blocks, at most max (addrs, lens).  Their number, or
 * -E2BIG when max is too few. */
int pm_range_prefixes(uint64_t start, uint64_t end, uint64_t *addrs,
		      uint32_t *lens, int max);
/* The container id in a /proc/PID/cgroup text (docker, containerd,
 * cri-o, podman forms: the last 64-hex-digit path element, bare or as
 * <runtime>-<id>.scope).  Returns true and fills out (65 bytes). */
bool pm_container_id(const char *cgroup_text, char out[65]);
/* The vDSO image of this process (the same in every process of this
 * kernel).  Returns 0 or -ENOENT. */
int pm_vdso_image(const void **data, size_t *len);
/* Parse one /proc/PID/maps line.  Returns 0 or -EINVAL; path points into
 * line (or is empty).  dev is the inode's device, as stat gives it. */
int pm_parse_maps_line(char *line, uint64_t *start, uint64_t *end,
		       char perms[5], uint64_t *offset, dev_t *dev,
		       uint64_t *inode, char **path);

/*
 * A process' executable mappings one at a time, in address order (not
 * the [vsyscall] gate page, which the text lists).  From 6.11 the kernel
 * answers PROCMAP_QUERY on the maps file: it finds the next executable
 * mapping and formats nothing else, where the text has a line (and a
 * path) for every mapping, executable or not (37 for /bin/sleep, 4 of
 * them executable).  Older kernels, or text_only, read the text.
 */
struct pm_vma {
	uint64_t start, end, offset, ino;
	dev_t dev;
	char perms[5]; /* as in the text: "r-xp" */
	char *path;    /* points into the iterator; "" when none */
};
struct pm_maps {
	int fd;
	FILE *text; /* the text, once the query is not used */
	uint64_t next;	  /* the query's next address */
	char buf[4608];	  /* the text's line, or the query's path */
};
/* Open pid's maps: 0, or -errno (-ESRCH when it is gone). */
int pm_maps_open(struct pm_maps *it, pid_t pid, bool text_only);
/* 1 with *v set, 0 after the last, or -errno.  The first is the one
 * that holds it->next, or the next above it (0 after open: from the
 * start). */
int pm_maps_next(struct pm_maps *it, struct pm_vma *v);
/* From the start again: 0, or -errno. */
int pm_maps_rewind(struct pm_maps *it);
void pm_maps_close(struct pm_maps *it);

#endif
