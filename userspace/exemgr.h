/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The executable manager: one record per ELF file (by file id), reference
 * counted by the mappings that use it, so a library mapped by 500
 * processes is hashed, parsed and loaded once.  On the first reference it
 * takes the file's stack deltas from the store, or extracts them and puts
 * them in the store, and loads them into the BPF maps.  It also keeps what
 * the trace pipeline needs after a process is gone: the file's path,
 * build id and symbols.
 */
#ifndef EP_EXEMGR_H
#define EP_EXEMGR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpfmaps.h"
#include "elfaddr.h"
#include "fileid.h"

struct store;
struct exe_mgr;

/* Deltas state of a file. */
enum exe_deltas {
	EXE_DELTAS_NONE = 0, /* not loaded (no CFI, or maps full): FP walk */
	EXE_DELTAS_LOADED,
};

/* A run of a file's rows in the BPF maps: blocks of ROWS_PER_BLOCK rows
 * from global block index `block` (DELTA_CHUNK_BLOCKS to a chunk), in one
 * chunk.  A file has one run, or several when it did not fit in one. */
struct exe_rows {
	uint32_t block, n_blocks;
};

struct exe_file {
	struct file_id id;
	uint64_t id64;
	char *path;	   /* the first path seen */
	const char *name; /* basename of path */
	dev_t dev;
	ino_t ino;
	int refs;
	enum exe_deltas deltas;
	uint32_t interp_mask; /* bit per enum interp_kind found in the file */
	uint32_t load_gen; /* the load of its deltas (mapping_info.load_gen) */
	bool is_vdso;
	uint32_t n_segs;
	struct ea_seg segs[EA_MAX_SEGS]; /* PT_LOADs, executable first */
	/* internal */
	int fd;
	uint64_t inode_key;
	uint64_t unused_since_ns;
	uid_t owner;	  /* the file's owner: whose share it takes */
	uint16_t *rule_idx; /* the global rules it holds a reference on */
	uint32_t n_rule_idx;
	struct exe_rows *row_ext; /* where its rows are, n_row_ext runs */
	uint32_t n_row_ext, n_blocks;
	uint64_t *pages;
	uint32_t n_pages;
	struct symb_table *syms;
	bool syms_tried;
	/* what each interpreter module found in the file (exe_set_interp) */
	void *interp_data[INTERP_COUNT];
	size_t interp_len[INTERP_COUNT];
	struct exe_file *next_free;
};

/* The shared tables a file takes a share of. */
enum exe_table {
	EXE_TABLE_RULES,
	EXE_TABLE_ROWS,
	EXE_TABLE_PAGES,
	EXE_TABLE_COUNT,
};

struct exe_stats {
	uint64_t files;	      /* files tracked now */
	uint64_t loaded;      /* files with deltas in the BPF maps */
	uint64_t extracted;   /* files whose deltas were computed */
	uint64_t cache_hits;  /* files whose deltas came from the store */
	uint64_t extract_ns;  /* time spent extracting */
	uint64_t hash_ns;     /* time spent computing file ids */
	uint64_t no_cfi;      /* files without CFI (frame-pointer walk) */
	uint64_t errors;      /* files that could not be read or parsed */
	uint64_t rows_full;   /* files not loaded: the rows' bound reached */
	uint64_t pages_full;  /* page updates that failed */
	uint64_t rules_full;  /* files not loaded: the rule table full */
	uint64_t rows_used;   /* rows the loaded files take (in blocks) */
	uint64_t rows_alloc;  /* rows in the chunks that exist */
	uint64_t rows_cap;    /* the bound: rows in every chunk allowed */
	uint64_t row_chunks;  /* chunks that exist */
	uint64_t split_files; /* files loaded in several runs (a count) */
	/* updates of the array of chunks that added chunks (the kernel
	 * waits for an RCU grace period after each), chunks created, and
	 * of those the start-up's from the last run's hint */
	uint64_t chunk_batches, chunks_created, chunks_prefilled;
	uint64_t chunks_unplaced; /* bpfmaps.chunks_unplaced */
	uint64_t rules_used;  /* rules in the table now (fixed ones too) */
	uint64_t unloaded;
	uint64_t rules_freed; /* rules no loaded file held, taken back */
	/* files not loaded (frame-pointer walk) because they would take
	 * more than their share of a table: by table, the file's own share
	 * or its owner's (enum exe_table, then 0 = file, 1 = owner) */
	uint64_t over_share[EXE_TABLE_COUNT][2];
};

/* "rules", "rows", "pages": for the metrics' labels. */
const char *exe_table_name(unsigned table);
/* Sum of over_share of one table (both limits). */
static inline uint64_t exe_over_share(const struct exe_stats *st, unsigned table)
{
	return st->over_share[table][0] + st->over_share[table][1];
}

/* store may be NULL (no cache).  Returns 0 or -ENOMEM. */
int exe_mgr_new(struct bpfmaps *bm, struct store *store, struct exe_mgr **out);
/* Load no stack deltas: every file is walked by frame pointer (to
 * compare the two unwinders). */
void exe_mgr_set_fp_only(struct exe_mgr *m, bool on);
/* Whether this run takes and leaves the chunk count of exe_chunks_prefill
 * (on by default).  Off for a run of a few chosen processes: it would take
 * a whole host's chunks (each unused one goes back with a grace period of
 * its own) and overwrite the host's count with its own. */
void exe_mgr_set_chunk_hint(struct exe_mgr *m, bool on);
/* Fair shares: no file takes more than 1/file_div of a shared table,
 * and the files of one owner other than root together no more than
 * 1/owner_div (0: no limit).  For tests; the defaults are
 * EXE_*_SHARE_DIV. */
void exe_mgr_set_share(struct exe_mgr *m, unsigned table, unsigned file_div,
		       unsigned owner_div);
/* Called once per new file, before it is used: interpreter detection,
 * which records what it finds with exe_set_interp(). */
typedef void (*exe_detect_fn)(void *arg, struct exe_file *f, int fd);
void exe_mgr_set_detect(struct exe_mgr *m, exe_detect_fn fn, void *arg);
/* The file holds runtime kind (enum interp_kind), described by data
 * (malloc'd; the file owns it from here, and frees it).  Returns 0, or
 * -EEXIST when the kind was set already. */
int exe_set_interp(struct exe_file *f, unsigned kind, void *data, size_t len);
/* What exe_set_interp() recorded for kind, or NULL. */
const void *exe_interp_data(const struct exe_file *f, unsigned kind,
			    size_t *len);
/* The file's descriptor, open while a reference is held (for reading
 * more of it: an interpreter module reading libc's code). */
static inline int exe_fd(const struct exe_file *f)
{
	return f->fd;
}
static inline bool exe_is_vdso(const struct exe_file *f)
{
	return f->is_vdso;
}
/* Also drops the chunks of rows it created in the maps. */
void exe_mgr_free(struct exe_mgr *m);

/*
 * Take a reference on the file open at fd (dup'ed, not closed), creating
 * and loading it on first use.  path names it in messages and output.
 * Returns 0 with *out set, or a negative errno (-ENOEXEC: not ELF).
 */
int exe_get(struct exe_mgr *m, int fd, const char *path, struct exe_file **out);
struct stat;
/* exe_get's first step without a descriptor: a reference on the file
 * loaded already whose device, inode, size and modification time are
 * st's, or NULL (then exe_get it from a readable descriptor). */
struct exe_file *exe_get_known(struct exe_mgr *m, const struct stat *st);
/* Take another reference on a file one is held on; returns f. */
struct exe_file *exe_ref(struct exe_file *f);
/* Drop a reference; the file is unloaded some time after the last one. */
void exe_put(struct exe_mgr *m, struct exe_file *f);
/* The file with this BPF file id, or NULL (also after unload, for a
 * while, so traces of exited processes still symbolize). */
struct exe_file *exe_find(struct exe_mgr *m, uint64_t id64);
/* Symbolize an ELF address of f; NULL when unknown. */
const char *exe_symbolize(struct exe_mgr *m, struct exe_file *f, uint64_t addr,
			  uint64_t *off);
const char *exe_build_id(struct exe_mgr *m, struct exe_file *f);
/* Start-up: create at once, in one update of the array of maps, the
 * chunks of rows the last run had in use at most (its hint in the cache,
 * capped by the bound), before the processes load: one grace period in
 * place of one per chunk as files need them.  No hint (no cache, never
 * written, evicted, unreadable): nothing.  The chunks no file takes go
 * back at the first exe_gc().  Returns the chunks created. */
uint32_t exe_chunks_prefill(struct exe_mgr *m);
/* Note the chunks in use now, and write the most seen this run in the
 * cache for the next start's exe_chunks_prefill (when it changed). */
void exe_chunks_remember(struct exe_mgr *m);
/* Unload files unreferenced for longer than linger_ns. */
void exe_gc(struct exe_mgr *m, uint64_t now_ns, uint64_t linger_ns);
void exe_get_stats(struct exe_mgr *m, struct exe_stats *out);
/* The PT_LOADs of the ELF file open at fd (ea_segs_from_phdrs: at most
 * EA_MAX_SEGS, the executable ones first) into segs.  Returns 0,
 * -ENOEXEC when it is not a 64-bit ELF file, or another negative errno. */
int exe_read_segs(int fd, struct ea_seg *segs, uint32_t *n);
/* The load bias of maps[0], a mapping of f (pc - bias = ELF address),
 * with f's other mappings in the same process in maps[1..n): ea_bias()
 * over f's PT_LOADs. */
uint64_t exe_bias(const struct exe_file *f, const struct ea_map *maps,
		  unsigned n);

uint64_t exe_now_ns(void);

#endif
