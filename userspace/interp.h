/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The interpreter interface: one door for every runtime.
 *
 * A runtime is a module (userspace/interp_<name>.c) that fills a
 * struct interp_module, listed once in INTERPRETERS (profiler.h) beside
 * its BPF unwinder (bpf/<name>.bpf.h).  The manager here is the only
 * code that knows the list; the executable and process managers, the
 * pipeline and main.c call the manager and never name a runtime.
 *
 *   detect     per file, once: does it hold the runtime?  What is found
 *              (offsets, addresses) is a flat blob the manager keeps in
 *              the store under the runtime's own record kind, so a file
 *              is examined once per host, and on the exe_file (a file
 *              may hold several runtimes).
 *   check      a blob from the store: usable by this build?  Every blob is
 *              a fixed-size struct that begins with a u32 format number:
 *              the manager checks size and format, the module the rest.
 *   attach     per process, after each sync: fill the unwinder's BPF map
 *              from the blob(s) and the mappings of the files holding it.
 *   detach     the process exited or exec'd.
 *   symbolize  one frame of the runtime into small structs: one, or the
 *              chain of functions a JIT inlined at that frame.
 *
 * The manager counts files, processes, symbolizations and map failures
 * per runtime; a module reports nothing itself.
 */
#ifndef EP_INTERP_H
#define EP_INTERP_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "bpfmaps.h"
#include "exemgr.h"
#include "procmgr.h"

struct elfm;
struct interp_mgr;
struct store;

/* The file a module's detect examines, opened once for every runtime. */
struct interp_file {
	const char *path; /* for the messages and the modules that need it */
	int fd;
	struct elfm *elf; /* elfm_open_fd(fd) */
};

/* One frame of a runtime, as the BPF unwinder recorded it. */
struct interp_frame {
	unsigned kind; /* enum interp_kind */
	unsigned flags;
	uint64_t data;
	uint64_t payload[FRAME_MAX_PAYLOAD];
	unsigned n_payload;
};

#define INTERP_NAME_MAX 256
/* the functions one frame may stand for (its inline chain), at most */
#define INTERP_CHAIN_MAX 16
#define INTERP_FILE_MAX 512

/* What symbolize gives back: strings are NUL-terminated (cut at a
 * character when too long), empty when unknown. */
struct interp_symbol {
	char name[INTERP_NAME_MAX]; /* function, qualified ("Class.method") */
	char file[INTERP_FILE_MAX]; /* source file */
	uint32_t line;		    /* 0 when unknown */
	uint64_t address;	    /* what the frame shows as its address */
};

/* A file of the process holding the runtime, for attach. */
struct interp_file_map {
	const void *data; /* the module's blob for this file */
	size_t len;
	uint64_t bias;	  /* its load bias in the process */
	const struct pm_mapping *map; /* its first executable mapping */
};

struct interp_attach {
	pid_t pid;
	const struct pm_proc *proc;
	const struct interp_file_map *files; /* the files holding the runtime */
	unsigned n_files;
};

struct interp_module {
	/* its name and kind are its line in INTERPRETERS (interp_name) */
	bool opt_in; /* only when named in -tracers, not in -tracers all */
	/* its counters' names and help (METRIC_INTERP_BASE(kind) + i) */
	const char *const *metric_names, *const *metric_help;
	unsigned n_metrics;
	/* the BPF map its unwinder reads: name and sizes (attach writes it
	 * through interp_map_update) */
	const char *map_name;
	size_t map_key_size, map_val_size;

	/* state: what the module keeps (caches); NULL is allowed */
	int (*init)(void **state);
	void (*fini)(void *state);
	/* 0 with *data (malloc'd) and *len set: the file holds the runtime;
	 * -ENOENT: it does not; -ENOTSUP: a version or build not supported
	 * (kept, as a miss); other negative errnos: not kept (I/O).  The
	 * manager opened the file (an ELF file: what is not one holds no
	 * runtime) and drops what is found in one that shrank meanwhile. */
	int (*detect)(void *state, const struct interp_file *file, void **data,
		      size_t *len);
	/* What detect's blobs are: record_size bytes, a u32 record_format
	 * first (bumped when the struct changes, and when versions are
	 * added: older records, and older verdicts "not supported", are
	 * detected again). */
	size_t record_size;
	uint32_t record_format;
	/* 0 when a blob of the right size and format is usable (it is
	 * aligned as malloc aligns) */
	int (*check)(const void *record);
	/* Fill the BPF map for the process (interp_map_update).  0, or a
	 * negative errno: the process is then detached (detach is called
	 * whatever attach kept before it failed). */
	int (*attach)(void *state, struct interp_mgr *im,
		      const struct interp_attach *a);
	/* Forget the process (the manager removes the map entry). */
	void (*detach)(void *state, pid_t pid);
	/* The frame's functions into out[0..max) (max >= 1), innermost
	 * first: a compiled frame whose code inlined others gives the
	 * innermost inlined function first and the frame's own function
	 * last (cut to the innermost max when deeper).  Returns how many
	 * (>= 1), or a negative errno (the process is gone, memory
	 * unreadable): the frame is then shown by address. */
	int (*symbolize)(void *state, pid_t pid, const struct interp_frame *f,
			 struct interp_symbol *out, unsigned max);
};

/* A module's counter fields, from its <NAME>_METRICS list (bpf/<name>.h):
 * .metric_names, .metric_help, .n_metrics. */
#define INTERP_METRIC_NAME_(name, desc) #name,
#define INTERP_METRIC_HELP_(name, desc) desc,
#define INTERP_MODULE_METRICS(LIST)                                            \
	.metric_names = (const char *const[]){ LIST(INTERP_METRIC_NAME_) },    \
	.metric_help = (const char *const[]){ LIST(INTERP_METRIC_HELP_) },     \
	.n_metrics = sizeof((const char *const[]){ LIST(INTERP_METRIC_NAME_) }) / \
		     sizeof(const char *)

/* The BPF map a module's unwinder reads, named NAME_procs, keyed by pid
 * (u32), its values a struct NAME_proc (attach writes it through
 * interp_map_update); and what the module's detect keeps: a struct type
 * record whose first u32 is format. */
#define INTERP_MODULE_DATA(name, record, format)                               \
	.map_name = #name "_procs", .map_key_size = sizeof(uint32_t),          \
	.map_val_size = sizeof(struct name##_proc),                            \
	.record_size = sizeof(record), .record_format = format

/* A runtime's functions, named by two prefixes: its own PREFIX_detect,
 * PREFIX_check, PREFIX_attach and PREFIX_symbolize, and its state's
 * STATE_init, STATE_fini and STATE_detach (interp_procs: the pid -> word
 * table below, when that is all the module keeps). */
#define INTERP_MODULE_FUNCS(prefix, state)                                     \
	.init = state##_init, .fini = state##_fini, .detach = state##_detach,  \
	.detect = prefix##_detect, .check = prefix##_check,                    \
	.attach = prefix##_attach, .symbolize = prefix##_symbolize

/* Counters per runtime, kept by the manager. */
struct interp_stats {
	uint64_t files;		 /* files holding the runtime */
	uint64_t files_unsupported; /* files holding a version or build of it
				     * not supported (detect said -ENOTSUP) */
	uint64_t procs;		 /* processes attached now */
	uint64_t detect_cached;	 /* detections answered by the store */
	uint64_t attach_errors;	 /* attach refused (layout, table full) */
	uint64_t map_full;	 /* BPF map updates that failed */
	uint64_t symbolize_ok, symbolize_fail;
};

/* ---- for modules --------------------------------------------------------- */

/* Read len bytes at addr in process pid: the shape of the readers modules
 * name frames through (tests and fuzz targets pass their own).  0, or a
 * negative errno (-EFAULT for a short read). */
typedef int (*interp_read_fn)(void *arg, pid_t pid, uint64_t addr, void *buf,
			      size_t len);
/* The reader of live processes (process_vm_readv; arg unused). */
int interp_read_process(void *arg, pid_t pid, uint64_t addr, void *buf,
			size_t len);

/* A reader bound to one process, for modules that follow pointers through
 * its memory: interp_rd fails (-EFAULT) at address 0, interp_rd64 gives 0
 * when the read fails. */
struct interp_reader {
	interp_read_fn read;
	void *arg;
	pid_t pid;
};

static inline int interp_rd(const struct interp_reader *r, uint64_t addr,
			    void *buf, size_t len)
{
	return addr ? r->read(r->arg, r->pid, addr, buf, len) : -EFAULT;
}

static inline uint64_t interp_rd64(const struct interp_reader *r, uint64_t addr)
{
	uint64_t v = 0;

	return interp_rd(r, addr, &v, 8) ? 0 : v;
}

/* A reader that serves a process' memory from whole 4 KiB pages it read
 * before: for an attach that walks a runtime's static tables (thousands
 * of small reads of a few pages: a JVM's VM tables took ~4,000 system
 * calls) at one system call per page.  Only for memory that does not
 * change while the cache is used (one attach).  Pass it as the reader's
 * arg with interp_read_paged as its read; a read the pages cannot serve
 * (another pid, a page that cannot be read whole) goes to the reader
 * below. */
#define INTERP_PAGES 16
#define INTERP_PAGE_SIZE 4096
struct interp_pages {
	interp_read_fn read; /* the reader below, and its arg */
	void *arg;
	pid_t pid;
	unsigned next;			/* the slot the next miss takes */
	uint64_t addr[INTERP_PAGES];	/* a slot's page address + 1; 0: empty */
	uint64_t misses, reads;
	uint8_t data[INTERP_PAGES][INTERP_PAGE_SIZE];
};
int interp_read_paged(void *arg, pid_t pid, uint64_t addr, void *buf,
		      size_t len);

/* The C string at addr into out (n >= 1 bytes, always NUL-terminated):
 * read in chunks of up to INTERP_CSTR_CHUNK bytes, and of fewer where a
 * chunk would run into unmapped memory, so a string that ends just before
 * it is read whole.  Returns its length; -ENAMETOOLONG when it did not
 * fit (out holds its first n - 1 bytes), or -EFAULT when the memory ended
 * before its NUL (out holds what was read, maybe nothing). */
#define INTERP_CSTR_CHUNK 64
int interp_read_cstr(const struct interp_reader *r, uint64_t addr, char *out,
		     size_t n);

/* The row of a runtime's table of versions, whose rows start with
 * uint8_t major, minor (struct interp_version_key first): NULL when the
 * version is not in it. */
struct interp_version_key {
	uint8_t major, minor;
};
const void *interp_version_row(const void *rows, size_t n, size_t size,
			       unsigned major, unsigned minor);
#define INTERP_VERSION_ROW(table, major, minor)                                \
	interp_version_row(table, sizeof(table) / sizeof((table)[0]),          \
			   sizeof((table)[0]), major, minor)

/* A module state that is one word per attached process (the version or
 * offsets its symbolize needs), up to INTERP_PROCS_MAX processes: usable
 * as a module's init, fini and detach. */
#define INTERP_PROCS_MAX 4096
int interp_procs_init(void **state);
void interp_procs_fini(void *state);
void interp_procs_detach(void *state, pid_t pid);
/* 0, -ENOSPC (full) or -ENOMEM. */
int interp_procs_put(void *state, pid_t pid, uint64_t word);
bool interp_procs_get(void *state, pid_t pid, uint64_t *word);

/* glibc's thread-specific data (pthread_getspecific) of a process: for a
 * key below 32, its value is at thread pointer + off + mul * key + val
 * (off is negative on AArch64: struct pthread is below the thread
 * pointer).  Derived from the code of pthread_getspecific in the libc the
 * process maps (x86-64 or AArch64; cached per file), never assumed.  0,
 * or -ENOENT (no glibc, or code of a form not known). */
struct interp_tsd {
	int16_t off;
	uint16_t mul, val;
};
int interp_libc_tsd(struct interp_mgr *im, const struct pm_proc *p,
		    struct interp_tsd *out);
/* The same from a libc open as fd (for tests). */
int interp_tsd_of_fd(int fd, struct interp_tsd *out);
/* pthread_self() of a thread minus its thread pointer, from the code of
 * pthread_self in the libc the process maps: 0 on x86-64, minus the size
 * of struct pthread on AArch64 (TLS variant I).  0 or -ENOENT. */
int interp_libc_self(struct interp_mgr *im, const struct pm_proc *p,
		     int32_t *out);
/* The same from a libc open as fd (for tests). */
int interp_self_off_of_fd(int fd, int32_t *out);

/* What the store keeps for a file that holds no runtime of a kind, or one
 * in a version or build not supported (interp.c: detect_one). */
struct interp_verdict {
	uint32_t mark;	 /* INTERP_VERDICT_* */
	uint32_t format; /* the module's record_format */
	uint32_t name;	 /* a hash of the module's name */
};
#define INTERP_VERDICT_UNSUPPORTED 0x4e535550u /* "PUSN" */
#define INTERP_VERDICT_NOT_HERE 0x45524f4eu    /* "NORE" */
/* This build's verdict for kind: err -ENOTSUP (unsupported) or another
 * (not this runtime). */
void interp_verdict(unsigned kind, int err, struct interp_verdict *v);

/* Whether a stored blob is usable by module m: its size and format, then
 * m->check.  0 or -EINVAL. */
int interp_record_check(const struct interp_module *m, const void *data,
			size_t len);

/* The registry: modules by kind (NULL for INTERP_NONE). */
const struct interp_module *interp_module(unsigned kind);
/* A module's name, the -tracers word of its line in INTERPRETERS (NULL
 * for INTERP_NONE). */
const char *interp_name(unsigned kind);
/* Parse -tracers ("all", or a comma list of native and module names)
 * into a mask of enum interp_kind bits.  "all" is every module on by
 * default.  Returns 0, or -EINVAL after a message naming the word. */
int interp_parse_tracers(const char *tracers, uint32_t *mask);
/* "native" and every module's name: the words -tracers knows. */
const char *interp_tracer_names(void);
/* The name of a counter of an interpreter's range, or NULL. */
const char *interp_metric_name(unsigned id);
const char *interp_metric_help(unsigned id);

/* bm: where the unwinders' maps are (NULL: none, for tests and
 * subcommands).  Returns 0, -EINVAL (tracers) or -ENOMEM. */
int interp_mgr_new(struct bpfmaps *bm, struct store *store,
		   const char *tracers, struct interp_mgr **out);
void interp_mgr_free(struct interp_mgr *im);
/* For attach: write the module's map entry of key. */
int interp_map_update(struct interp_mgr *im, unsigned kind, const void *key,
		      const void *val);

/* Hooks: exe_mgr (new file), procmgr (process synced, process gone),
 * pipeline (an interpreter frame). */
void interp_detect(void *im, struct exe_file *f, int fd);
void interp_synced(void *im, struct pm_proc *p);
void interp_forget(void *im, pid_t pid);
int interp_symbolize(void *im, uint32_t pid, const struct interp_frame *f,
		     struct interp_symbol *out, unsigned max);
/* `cache warm`: detect each enabled runtime in the file (id: its file
 * id) and keep the result in the store, as interp_detect would.  Safe
 * from several threads when the modules' detect is (it uses no module
 * state and touches no counter).  Returns how many runtimes it holds. */
unsigned interp_warm(struct interp_mgr *im, const uint8_t id[16],
		     const char *path, int fd);
void interp_get_stats(struct interp_mgr *im, unsigned kind,
		      struct interp_stats *out);

#endif
