// SPDX-License-Identifier: Apache-2.0
/*
 * The executable manager's loading of stack deltas into the maps: rows
 * and rules through the shared arrays, a file's pages in one batch, and
 * what a batch that stops part way leaves behind (nothing).  The libbpf
 * side of the batch is checked against the running kernel's maps.  And
 * the process manager's start-up load, which opens each file once.  And
 * the rows' chunks in batches: several in one update of the array of
 * maps, the fallback where the kernel refuses it, the start-up's hint.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfmaps_mem.h"
#include "deltas.h"
#include "exemgr.h"
#include "fileid.h"
#include "procmgr.h"
#include "python.h"
#include "store.h"
#include "test.h"
#include "tracer.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define LD_SO "/lib64/ld-linux-x86-64.so.2"

/* The in-memory maps, with delta_pages limited to pages_cap entries. */
static const struct bpfmaps_ops *mem_ops;
static uint32_t pages_cap, pages_now;

static int capped_update(void *ctx, enum bm_map m, const void *k,
			 const void *v)
{
	struct page_info old;
	int err;

	if (m == BM_PAGES && mem_ops->lookup(ctx, m, k, &old) == -ENOENT) {
		if (pages_now == pages_cap)
			return -E2BIG;
		err = mem_ops->update(ctx, m, k, v);
		pages_now += !err;
		return err;
	}
	return mem_ops->update(ctx, m, k, v);
}

static int capped_remove(void *ctx, enum bm_map m, const void *k)
{
	int err = mem_ops->remove(ctx, m, k);

	if (m == BM_PAGES && !err)
		pages_now--;
	return err;
}

/* The in-memory ops, with delta_pages' updates and removals counted. */
static struct bpfmaps_ops capped_ops;

static struct exe_file *load(struct exe_mgr *em, const char *path)
{
	struct exe_file *f = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!ASSERT_GE(fd, 0, path))
		return NULL;
	ASSERT_OK(exe_get(em, fd, path, &f), path);
	close(fd);
	return f;
}

/* The in-memory maps with rows rows and an executable manager over them
 * (no cache): false after a failed assertion, and what was made is for
 * manager_and_maps_free all the same. */
static bool maps_and_manager(uint32_t rows, struct bpfmaps **bm,
			     struct exe_mgr **em)
{
	return ASSERT_OK(bm_mem_new(rows, bm), "maps") &&
	       ASSERT_OK(exe_mgr_new(*bm, NULL, em), "manager");
}

static void manager_and_maps_free(struct exe_mgr *em, struct bpfmaps *bm)
{
	exe_mgr_free(em);
	bm_mem_free(bm);
}

/* Give *f back (it becomes NULL) and collect at once, as the daemon's
 * next gc would; st gets the manager's statistics after. */
static void put_and_collect(struct exe_mgr *em, struct exe_file **f,
			    struct exe_stats *st)
{
	exe_put(em, *f);
	*f = NULL;
	exe_gc(em, exe_now_ns(), 0);
	exe_get_stats(em, st);
}

/* Every row of the file in the BPF array names, through the shared rules
 * array, the rule the extractor gave it. */
TEST(exemgr_rows_and_rules_in_the_shared_arrays)
{
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct exe_file *f;
	struct dt_file *t = NULL;
	uint32_t i, bad = 0, base;
	int fd;

	if (!maps_and_manager(DELTA_ROWS_DEFAULT, &bm, &em))
		goto out;
	f = load(em, LIBC);
	if (!f || !ASSERT_EQ(f->deltas, EXE_DELTAS_LOADED, "loaded"))
		goto out;
	fd = open(LIBC, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(dt_extract_file(fd, LIBC, &t), "extract again");
	close(fd);
	if (!t)
		goto out;
	ASSERT_EQ(f->n_row_ext, 1, "in one run");
	base = f->row_ext[0].block * ROWS_PER_BLOCK;
	ASSERT_GT(t->n_rows, 1000, "libc has rows");
	for (i = 0; i < t->n_rows; i++) {
		uint32_t got = *bm_row(bm, base + i), want = t->rows[i];

		if (ROW_ADDR(got) != ROW_ADDR(want) ||
		    memcmp(&bm->rules[ROW_RULE(got)], &t->rules[ROW_RULE(want)],
			   sizeof(struct unwind_rule)))
			bad++;
	}
	ASSERT_EQ(bad, 0, "rows whose rule differs");
	for (i = 0; i < t->n_pages; i++) {
		struct page_key k = { .file_id = f->id64, .page = t->pages[i].page };
		struct page_info v;

		if (bm_lookup(bm, BM_PAGES, &k, &v) ||
		    v.first != base + t->pages[i].first ||
		    v.count != t->pages[i].count)
			bad++;
	}
	ASSERT_EQ(bad, 0, "pages missing or wrong");
	exe_put(em, f);
out:
	dt_file_free(t);
	manager_and_maps_free(em, bm);
}

/* The large files of issue 14: together about 2.6 M rows. */
#define LIBLLVM "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"
#define LIBCLANG_CPP "/usr/lib/x86_64-linux-gnu/libclang-cpp.so.14"
#define CHROMIUM "/usr/lib/chromium/chromium"
#define NODE "/usr/bin/node"
#define JVMS "/usr/lib/jvm/*/lib/server/libjvm.so"

/* Read global row `row` where BPF finds it; -1 when its chunk is not
 * there. */
typedef int (*row_reader_fn)(void *arg, uint32_t row, uint32_t *out);

static int mem_row(void *arg, uint32_t row, uint32_t *out)
{
	struct bpfmaps *bm = arg;

	if ((row >> DELTA_CHUNK_SHIFT) >= bm->max_chunks ||
	    !bm->chunks[row >> DELTA_CHUNK_SHIFT])
		return -1;
	*out = *bm_row(bm, row);
	return 0;
}

/* Rows of a second extraction of path that BPF would not find as they
 * are: a page missing or of another size, a page across two chunks, a
 * row with another address or whose rule (through the shared rules
 * array) differs, a run's fence (struct page_info) that is not the
 * address of the run's first row.  *checked counts the rows compared.  -1 when the file
 * does not extract. */
static long rows_differ(struct bpfmaps *bm, const struct exe_file *f,
			const char *path, row_reader_fn rd, void *arg,
			uint64_t *checked)
{
	struct dt_file *t = NULL;
	long bad = 0;
	uint32_t i, j;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || dt_extract_file(fd, path, &t)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	for (i = 0; i < t->n_pages; i++) {
		const struct dt_page *p = &t->pages[i];
		struct page_key k = { .file_id = f->id64, .page = p->page };
		struct page_info v;

		if (bm_lookup(bm, BM_PAGES, &k, &v) || v.count != p->count ||
		    (v.first >> DELTA_CHUNK_SHIFT) !=
			    ((v.first + v.count - 1) >> DELTA_CHUNK_SHIFT)) {
			bad += p->count;
			continue;
		}
		for (j = 0; j < p->count; j++) {
			uint32_t got, want = t->rows[p->first + j];

			if (rd(arg, v.first + j, &got) ||
			    ROW_ADDR(got) != ROW_ADDR(want) ||
			    memcmp(&bm->rules[ROW_RULE(got)],
				   &t->rules[ROW_RULE(want)],
				   sizeof(struct unwind_rule)))
				bad++;
		}
		/* each run's first address, as the extraction has it (or
		 * none, for a page of fewer rows than runs) */
		for (j = 0; j < PAGE_FENCES; j++)
			if (v.fence[j] !=
			    (p->count < PAGE_FENCES ?
				     0 :
				     ROW_ADDR(t->rows[p->first +
						      page_run(p->count, j)])))
				bad++;
		*checked += p->count;
	}
	dt_file_free(t);
	return bad;
}

static bool present(const char *path)
{
	if (access(path, R_OK) == 0)
		return true;
	test_skip("%s is not installed (apt-get install clang-14 chromium "
		  "nodejs openjdk-17-jdk-headless)", path);
	return false;
}

/* A bound of one chunk: libLLVM (950 K rows) cannot fit.  It is counted,
 * leaves no page and no row behind, and is left to the frame-pointer
 * walk (EXE_DELTAS_NONE: the process manager marks its mappings
 * MAP_F_FP_ONLY); files that fit still load. */
/* BPF's per-CPU rule cache keeps rule indexes per load of a file
 * (mapping_info.load_gen): each load is numbered anew (never 0), so once
 * a file is unloaded (its rule indexes may go to other rules) the answers
 * cached for it are never matched again, even when it is loaded back. */
TEST(exemgr_each_load_has_its_own_generation)
{
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct exe_file *f;
	uint32_t first;

	if (!maps_and_manager(DELTA_ROWS_DEFAULT, &bm, &em))
		goto out;
	f = load(em, LIBC);
	if (!f || !ASSERT_EQ(f->deltas, EXE_DELTAS_LOADED, "loaded"))
		goto out;
	first = f->load_gen;
	ASSERT_NEQ(first, 0, "a load has a number");
	exe_put(em, f);
	exe_gc(em, exe_now_ns(), 0);
	f = load(em, LIBC);
	if (!f || !ASSERT_EQ(f->deltas, EXE_DELTAS_LOADED, "loaded again"))
		goto out;
	ASSERT_NEQ(f->load_gen, 0, "the new load has a number");
	ASSERT_NEQ(f->load_gen, first, "another one");
	exe_put(em, f);
out:
	manager_and_maps_free(em, bm);
}

TEST(exemgr_rows_bound_reached_counted_and_file_falls_back)
{
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct exe_file *f, *g;
	struct exe_stats st;
	struct page_info v;
	struct page_key k;

	if (!present(LIBLLVM))
		return;
	if (!maps_and_manager(DELTA_CHUNK_ROWS, &bm, &em))
		goto out;
	g = load(em, LIBC);
	f = load(em, LIBLLVM);
	if (!f || !g)
		goto out;
	exe_get_stats(em, &st);
	ASSERT_EQ(g->deltas, EXE_DELTAS_LOADED, "libc loaded");
	ASSERT_EQ(f->deltas, EXE_DELTAS_NONE, "libLLVM walked by frame pointer");
	ASSERT_EQ(st.rows_full, 1, "counted");
	ASSERT_EQ(st.loaded, 1, "libc only");
	ASSERT_EQ(st.rows_used, (uint64_t)g->n_blocks * ROWS_PER_BLOCK,
		  "libc's rows only");
	ASSERT_EQ(st.rows_cap, DELTA_CHUNK_ROWS, "the bound");
	ASSERT_EQ(st.row_chunks, 1, "one chunk");
	ASSERT_EQ(f->n_row_ext, 0, "no rows kept");
	k = (struct page_key){ .file_id = f->id64, .page = 0x100 };
	ASSERT_EQ(bm_lookup(bm, BM_PAGES, &k, &v), -ENOENT, "no page of it");
	exe_put(em, f);
	exe_put(em, g);
out:
	manager_and_maps_free(em, bm);
}

/* A file larger than a chunk goes in several runs, page by page, over the
 * free space of the chunks there are and new ones; every row is where a
 * lookup finds it.  Unloaded, its chunks go back, and the next large
 * file reuses the space. */
TEST(exemgr_rows_split_over_chunks_and_reused)
{
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct exe_file *libc, *f;
	struct exe_stats st;
	uint64_t checked = 0, libc_rows;

	if (!present(LIBLLVM) || !present(LIBCLANG_CPP))
		return;
	if (!maps_and_manager(8 * DELTA_CHUNK_ROWS, &bm, &em))
		goto out;
	/* libLLVM takes half of this small bound: no share here */
	exe_mgr_set_share(em, EXE_TABLE_ROWS, 0, 0);
	libc = load(em, LIBC);
	if (!libc)
		goto out;
	libc_rows = (uint64_t)libc->n_blocks * ROWS_PER_BLOCK;
	f = load(em, LIBLLVM);
	if (!f || !ASSERT_EQ(f->deltas, EXE_DELTAS_LOADED, "libLLVM loaded"))
		goto out;
	exe_get_stats(em, &st);
	test_note("libLLVM: %" PRIu64 " rows in %u runs, %" PRIu64 " chunks",
		  (uint64_t)f->n_blocks * ROWS_PER_BLOCK, f->n_row_ext,
		  st.row_chunks);
	ASSERT_GT(f->n_row_ext, 1, "in several runs");
	ASSERT_EQ(st.split_files, 1, "counted as split");
	ASSERT_EQ(st.row_chunks, 4, "libc's chunk filled, three more");
	ASSERT_EQ(rows_differ(bm, f, LIBLLVM, mem_row, bm, &checked), 0,
		  "libLLVM rows found as BPF finds them");
	ASSERT_EQ(rows_differ(bm, libc, LIBC, mem_row, bm, &checked), 0,
		  "libc's rows untouched");
	ASSERT_GT(checked, 900000, "rows compared");

	put_and_collect(em, &f, &st);
	ASSERT_EQ(st.rows_used, libc_rows, "libLLVM's rows given back");
	ASSERT_EQ(st.row_chunks, 1, "its chunks dropped");
	ASSERT_EQ(st.rows_alloc, DELTA_CHUNK_ROWS, "one chunk allocated");

	f = load(em, LIBCLANG_CPP);
	if (!f || !ASSERT_EQ(f->deltas, EXE_DELTAS_LOADED, "libclang-cpp loaded"))
		goto out;
	exe_get_stats(em, &st);
	ASSERT_EQ(st.row_chunks, 4, "in the space libLLVM had");
	checked = 0;
	ASSERT_EQ(rows_differ(bm, f, LIBCLANG_CPP, mem_row, bm, &checked), 0,
		  "libclang-cpp rows found as BPF finds them");
	ASSERT_EQ(rows_differ(bm, libc, LIBC, mem_row, bm, &checked), 0,
		  "libc's rows untouched");
	exe_put(em, f);
	exe_put(em, libc);
out:
	manager_and_maps_free(em, bm);
}

/* A cached record that passes the checksum but whose rows are wrong (a
 * writer's bug, not a flipped bit) is caught while its rows are copied:
 * the file is extracted again, loads complete and the record is mended. */
TEST(exemgr_cached_bad_rows_extracted_again)
{
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct store *st = NULL;
	struct exe_file *f;
	struct exe_stats es;
	struct dt_file *t = NULL, *back = NULL;
	struct file_id id;
	void *buf = NULL, *got = NULL;
	size_t len = 0, glen = 0;
	uint32_t *rows;
	int fd;

	fd = open(LIBC, O_RDONLY | O_CLOEXEC);
	if (!ASSERT_GE(fd, 0, "open libc") ||
	    !ASSERT_OK(fileid_from_fd(fd, &id), "file id") ||
	    !ASSERT_OK(dt_extract_file(fd, LIBC, &t), "extract") ||
	    !ASSERT_OK(dt_file_serialize(t, &buf, &len), "serialize"))
		goto out;
	/* the last row of the first page: an address below its neighbour's */
	rows = (uint32_t *)((uint8_t *)buf + len) - t->n_rows;
	rows[t->pages[0].count - 1] = ROW(0, ROW_RULE(rows[0]));
	if (!ASSERT_OK(store_open(test_tmppath("cache"), NULL, &st), "store") ||
	    !ASSERT_OK(store_put(st, id.b, STORE_KIND_DELTAS, buf, len), "put") ||
	    !ASSERT_OK(bm_mem_new(DELTA_ROWS_DEFAULT, &bm), "maps") ||
	    !ASSERT_OK(exe_mgr_new(bm, st, &em), "manager"))
		goto out;
	f = load(em, LIBC);
	if (!f)
		goto out;
	exe_get_stats(em, &es);
	ASSERT_EQ(f->deltas, EXE_DELTAS_LOADED, "loaded all the same");
	ASSERT_EQ(es.cache_hits, 0, "not a hit");
	ASSERT_EQ(es.extracted, 1, "extracted again");
	ASSERT_EQ(es.rows_used, (uint64_t)f->n_blocks * ROWS_PER_BLOCK,
		  "one file's rows in use (the bad copy's given back)");
	ASSERT_OK(store_get(st, id.b, STORE_KIND_DELTAS, &got, &glen), "get");
	ASSERT_OK(dt_file_deserialize(got, glen, &back), "the record mended");
	exe_put(em, f);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(got);
	dt_file_free(t);
	dt_file_free(back);
	manager_and_maps_free(em, bm);
	store_free(st);
}

/* A file whose pages do not all fit leaves no page and no row behind,
 * is walked by frame pointer, and is counted; the next file that fits
 * loads into the rows it gave back. */
TEST(exemgr_pages_full_leaves_nothing_behind)
{
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct exe_file *f, *g;
	struct exe_stats st;

	if (!maps_and_manager(DELTA_ROWS_DEFAULT, &bm, &em))
		goto out;
	mem_ops = bm->ops;
	capped_ops = *mem_ops;
	capped_ops.update = capped_update;
	capped_ops.remove = capped_remove;
	bm->ops = &capped_ops;
	pages_now = 0;
	pages_cap = 10;
	f = load(em, LIBC);
	if (!f)
		goto out;
	exe_get_stats(em, &st);
	ASSERT_EQ(f->deltas, EXE_DELTAS_NONE, "libc not loaded");
	ASSERT_EQ(st.pages_full, 1, "counted");
	ASSERT_EQ(st.loaded, 0, "nothing loaded");
	ASSERT_EQ(st.rows_used, 0, "its rows given back");
	ASSERT_EQ(pages_now, 0, "the 10 pages that went in removed");
	ASSERT_EQ(bm->update_errors[BM_PAGES], 1, "one failed batch");

	pages_cap = 1 << 20;
	g = load(em, LD_SO);
	if (g) {
		exe_get_stats(em, &st);
		ASSERT_EQ(g->deltas, EXE_DELTAS_LOADED, "ld.so loaded");
		ASSERT_EQ(g->row_ext[0].block, 0, "into the rows libc gave back");
		ASSERT_EQ(pages_now, g->n_pages, "all its pages");
		exe_put(em, g);
	}
	exe_put(em, f);
out:
	manager_and_maps_free(em, bm);
}

/* The libbpf batch against the kernel's maps: a hash map takes what fits
 * and says how much; the LPM trie takes a batch too. */
TEST_ROOT(exemgr_batch_updates_in_the_kernel_maps)
{
	struct tracer_opts o = { .samples_per_second = 19 };
	struct tracer *tr = NULL;
	struct bpfmaps *bm;
	struct page_key *keys = NULL;
	struct page_info *vals = NULL, v;
	struct mapping_key mk[3];
	struct mapping_info mv[3], got;
	uint32_t i, n, cap, done = 0;
	int err;

	if (!ASSERT_OK(tracer_open(&o, NULL, NULL, NULL, &tr), "tracer_open"))
		return;
	bm = tracer_maps(tr);
	cap = bm->max_entries[BM_PAGES];
	n = cap + 100;
	keys = calloc(n, sizeof(*keys));
	vals = calloc(n, sizeof(*vals));
	if (!ASSERT_TRUE(keys && vals, "alloc"))
		goto out;
	for (i = 0; i < n; i++) {
		keys[i] = (struct page_key){ .file_id = 42, .page = i };
		vals[i] = (struct page_info){ .first = i, .count = 1 };
	}
	err = bm_update_batch(bm, BM_PAGES, keys, vals, 100, &done);
	ASSERT_OK(err, "a batch of 100");
	ASSERT_EQ(done, 100, "all of it");
	ASSERT_OK(bm_lookup(bm, BM_PAGES, &keys[57], &v), "lookup");
	ASSERT_EQ(v.first, 57, "the value");
	err = bm_update_batch(bm, BM_PAGES, keys, vals, n, &done);
	ASSERT_TRUE(err < 0, "more than fits fails");
	ASSERT_EQ(done, cap, "after exactly what fits");
	ASSERT_OK(bm_lookup(bm, BM_PAGES, &keys[cap - 1], &v), "the last in");
	ASSERT_EQ(bm_lookup(bm, BM_PAGES, &keys[cap], &v), -ENOENT,
		  "the first out");

	for (i = 0; i < 3; i++) {
		mk[i] = (struct mapping_key){ .prefixlen = 32 + 52,
					      .pid_be = htobe32(7),
					      .addr_be = htobe64(0x400000 +
								 0x1000 * i) };
		mv[i] = (struct mapping_info){ .file_id = 100 + i };
	}
	ASSERT_OK(bm_update_batch(bm, BM_MAPPINGS, mk, mv, 3, &done), "trie");
	ASSERT_EQ(done, 3, "three prefixes");
	ASSERT_OK(bm_lookup(bm, BM_MAPPINGS, &mk[2], &got), "lookup");
	ASSERT_EQ(got.file_id, 102, "the value");
	/* removed in one batch, an absent key among them skipped: the
	 * kernel stops at it, the rest still go */
	mk[1].addr_be = htobe64(0x500000);
	ASSERT_EQ(bm_remove_batch(bm, BM_MAPPINGS, mk, 3), 2,
		  "two removed, the absent one skipped");
	mk[1].addr_be = htobe64(0x401000);
	ASSERT_EQ(bm_lookup(bm, BM_MAPPINGS, &mk[0], &got), -ENOENT,
		  "the first gone");
	ASSERT_EQ(bm_lookup(bm, BM_MAPPINGS, &mk[2], &got), -ENOENT,
		  "the one after the absent key gone");
	ASSERT_OK(bm_lookup(bm, BM_MAPPINGS, &mk[1], &got), "the other kept");
	ASSERT_EQ(bm_remove_batch(bm, BM_MAPPINGS, &mk[1], 1), 1, "and removed");
out:
	free(keys);
	free(vals);
	tracer_free(tr);
}

/* The kernel's view of the rows: delta_rows, found among our own file
 * descriptors (not through the tracer), and its chunks by map id; the
 * last block read is kept (rows are read in order). */
struct krows {
	int outer;
	int fds[64];
	int cur_chunk;
	uint32_t cur_blk;
	struct row_block blk;
};

/* Our descriptor of the BPF map named name of type type, or -1. */
static int our_map_fd(const char *name, __u32 type)
{
	int fd;

	for (fd = 3; fd < 4096; fd++) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
		    info.type == type && !strcmp(info.name, name))
			return fd;
	}
	return -1;
}

static int krows_open(struct krows *k)
{
	memset(k, 0, sizeof(*k));
	k->cur_chunk = -1;
	k->outer = our_map_fd("delta_rows", BPF_MAP_TYPE_ARRAY_OF_MAPS);
	return k->outer >= 0 ? 0 : -ENOENT;
}

static void krows_close(struct krows *k)
{
	int i;

	for (i = 0; i < 64; i++)
		if (k->fds[i] > 0)
			close(k->fds[i]);
}

static int kernel_row(void *arg, uint32_t row, uint32_t *out)
{
	struct krows *k = arg;
	uint32_t c = row >> DELTA_CHUNK_SHIFT, id,
		 blk = (row & (DELTA_CHUNK_ROWS - 1)) >> ROWS_PER_BLOCK_SHIFT;

	if (c >= 64)
		return -1;
	if (!k->fds[c]) {
		if (bpf_map_lookup_elem(k->outer, &c, &id))
			return -1;
		k->fds[c] = bpf_map_get_fd_by_id(id);
		if (k->fds[c] <= 0)
			return -1;
	}
	if (k->cur_chunk != (int)c || k->cur_blk != blk) {
		if (bpf_map_lookup_elem(k->fds[c], &blk, &k->blk))
			return -1;
		k->cur_chunk = (int)c;
		k->cur_blk = blk;
	}
	*out = k->blk.rows[row & (ROWS_PER_BLOCK - 1)];
	return 0;
}

/* The large programs load together with the default bound, into
 * the kernel's maps: nothing refused, and every row of each (compared
 * with a second extraction) read back through the kernel's lookups in
 * delta_rows and its chunks, as BPF reads them. */
TEST_ROOT(exemgr_large_programs_fit_by_default_in_the_kernel_maps)
{
	const char *fixed[] = { LIBC, LIBLLVM, LIBCLANG_CPP, CHROMIUM, NODE };
	struct tracer_opts o = { .samples_per_second = 19 };
	struct exe_file *files[16] = { NULL };
	const char *paths[16];
	struct tracer *tr = NULL;
	struct exe_mgr *em = NULL;
	struct bpfmaps *bm;
	struct exe_stats st;
	struct krows k = { .outer = -1 };
	uint64_t checked = 0;
	glob_t jvms = { 0 };
	int n = 0, i;
	size_t j;

	for (i = 0; i < 5; i++)
		if (!present(fixed[i]))
			return;
	if (glob(JVMS, 0, NULL, &jvms) || !jvms.gl_pathc) {
		test_skip("no JVM (%s)", JVMS);
		return;
	}
	for (i = 0; i < 5; i++)
		paths[n++] = fixed[i];
	for (j = 0; j < jvms.gl_pathc && n < 16; j++)
		paths[n++] = jvms.gl_pathv[j];
	if (!ASSERT_OK(tracer_open(&o, NULL, NULL, NULL, &tr), "tracer_open"))
		goto out;
	bm = tracer_maps(tr);
	if (!ASSERT_OK(exe_mgr_new(bm, NULL, &em), "manager"))
		goto out;
	exe_get_stats(em, &st);
	ASSERT_EQ(st.row_chunks, 0, "no chunk before a file needs one");
	ASSERT_EQ(st.rows_cap, DELTA_ROWS_DEFAULT, "the default bound");
	for (i = 0; i < n; i++) {
		files[i] = load(em, paths[i]);
		if (files[i])
			ASSERT_EQ(files[i]->deltas, EXE_DELTAS_LOADED, paths[i]);
	}
	exe_get_stats(em, &st);
	test_note("%d files: %" PRIu64 " rows in %" PRIu64 " chunks (%" PRIu64
		  " MiB) of at most %" PRIu64 "; %" PRIu64 " files split",
		  n, st.rows_used, st.row_chunks,
		  st.rows_alloc * 4 >> 20, st.rows_cap, st.split_files);
	ASSERT_EQ(st.rows_full, 0, "no file refused for rows");
	ASSERT_EQ(st.pages_full, 0, "no page refused");
	ASSERT_EQ(st.rules_full, 0, "no rule refused");
	ASSERT_GT(st.rows_used, 2500000, "the rows of all of them");
	if (!ASSERT_OK(krows_open(&k), "delta_rows among our descriptors"))
		goto out;
	for (i = 0; i < n; i++) {
		int d;

		/* two paths of one file (a JDK's symbolic links) */
		for (d = 0; d < i && files[d] != files[i]; d++)
			;
		if (files[i] && d == i)
			ASSERT_EQ(rows_differ(bm, files[i], paths[i], kernel_row,
					      &k, &checked),
				  0, paths[i]);
	}
	test_note("%" PRIu64 " rows read back from the kernel", checked);
	ASSERT_GT(checked, 2500000, "every file's rows compared");
out:
	for (i = 0; i < n; i++)
		exe_put(em, files[i]);
	krows_close(&k);
	globfree(&jvms);
	exe_mgr_free(em);
	tracer_free(tr);
}

/* Distinct (device, inode) pairs of the executable file mappings of
 * these processes, read from their maps: the files to open. */
static int distinct_files(const pid_t *pids, int n)
{
	uint64_t seen[256][2];
	int i, j, count = 0;

	for (i = 0; i < n; i++) {
		char path[64], line[4608], perms[5], *mpath;
		uint64_t s, e, off, ino;
		dev_t dev;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pids[i]);
		f = fopen(path, "re");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f)) {
			if (pm_parse_maps_line(line, &s, &e, perms, &off, &dev,
					       &ino, &mpath) ||
			    perms[2] != 'x' || !ino)
				continue;
			for (j = 0; j < count; j++)
				if (seen[j][0] == dev && seen[j][1] == ino)
					break;
			if (j == count && count < 256) {
				seen[count][0] = dev;
				seen[count++][1] = ino;
			}
		}
		fclose(f);
	}
	return count;
}

/* Loading many processes at once opens each file they map once; one by
 * one, each process' files are opened (to notice a changed file). */
TEST_ROOT(procmgr_sync_many_opens_each_file_once)
{
	pid_t pids[4];
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct pm *pm = NULL;
	struct pm_stats ps;
	struct exe_stats es;
	int i, files;

	for (i = 0; i < 4; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			execl("/bin/sleep", "sleep", "60", (char *)NULL);
			_exit(127);
		}
	}
	usleep(200000); /* exec'd */
	files = distinct_files(pids, 4);
	test_note("4 sleep processes map %d distinct files", files);
	ASSERT_GE(files, 3, "sleep, libc and ld.so at least");
	if (!maps_and_manager(DELTA_ROWS_DEFAULT, &bm, &em) ||
	    !ASSERT_OK(pm_new(em, bm, &pm), "process manager"))
		goto out;
	ASSERT_EQ(pm_sync_many(pm, pids, 4), 4, "all four loaded");
	pm_get_stats(pm, &ps);
	exe_get_stats(em, &es);
	ASSERT_EQ(ps.opens, files, "each file opened once");
	ASSERT_EQ(es.loaded, files + 1, "each loaded once, and the vDSO");
	ASSERT_EQ(ps.mappings, 4 * (files + 1), "every mapping, vDSO too");
	pm_free(pm);
	exe_mgr_free(em);
	pm = NULL;
	em = NULL;

	if (!ASSERT_OK(exe_mgr_new(bm, NULL, &em), "manager") ||
	    !ASSERT_OK(pm_new(em, bm, &pm), "process manager"))
		goto out;
	for (i = 0; i < 4; i++)
		ASSERT_OK(pm_sync(pm, pids[i]), "pm_sync");
	pm_get_stats(pm, &ps);
	/* the later ones find each file by its link's stat, unread */
	ASSERT_EQ(ps.opens, files, "one by one: each file read once too");
	ASSERT_EQ(ps.mappings, 4 * (files + 1), "every mapping one by one");
out:
	for (i = 0; i < 4; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	pm_free(pm);
	manager_and_maps_free(em, bm);
}

static pid_t spawn_sleep(const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl(path, "sleep", "60", (char *)NULL);
		_exit(127);
	}
	usleep(200000); /* exec'd */
	return pid;
}

/* A loaded file is found again by the stat of a mapping's link (device,
 * inode, size, modification time), unread; the same inode modified since
 * is read again. */
TEST_ROOT(procmgr_known_file_by_stat_modified_read_again)
{
	char dir[] = "/tmp/ep-known-XXXXXX", copy[64], cmd[160];
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { 1000000000, 0 } };
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct pm *pm = NULL;
	struct pm_stats ps;
	uint64_t opens;
	pid_t pids[3] = { -1, -1, -1 };
	int i;

	if (!ASSERT_NEQ(mkdtemp(dir), NULL, "a directory"))
		return;
	snprintf(copy, sizeof(copy), "%s/sleep", dir);
	snprintf(cmd, sizeof(cmd), "cp /bin/sleep %s", copy);
	if (!ASSERT_OK(system(cmd), "a copy of sleep") ||
	    !maps_and_manager(DELTA_ROWS_DEFAULT, &bm, &em) ||
	    !ASSERT_OK(pm_new(em, bm, &pm), "process manager"))
		goto out;
	pids[0] = spawn_sleep(copy);
	ASSERT_OK(pm_sync(pm, pids[0]), "the first");
	pm_get_stats(pm, &ps);
	opens = ps.opens;
	ASSERT_GE(opens, 3, "the copy, libc and ld.so read");
	pids[1] = spawn_sleep(copy);
	ASSERT_OK(pm_sync(pm, pids[1]), "the second");
	pm_get_stats(pm, &ps);
	ASSERT_EQ(ps.opens, opens, "the same files: none read again");
	/* the copy's inode rewritten in place: another modification time */
	ASSERT_OK(utimensat(AT_FDCWD, copy, ts, 0), "the copy's time moved");
	pids[2] = spawn_sleep(copy);
	ASSERT_OK(pm_sync(pm, pids[2]), "the third");
	pm_get_stats(pm, &ps);
	ASSERT_EQ(ps.opens, opens + 1, "the modified copy read again, only it");
out:
	for (i = 0; i < 3; i++)
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
		}
	pm_free(pm);
	manager_and_maps_free(em, bm);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		test_note("%s left behind", dir);
}

/*
 * A shared library whose .eh_frame has n functions, each with its own
 * rule (CFA = rsp + 8 * (first + i) + 16): n distinct rules that no other
 * file has unless its range of first overlaps.  Written as assembly with
 * .cfi directives into dir/name.S and built into dir/name.so (path in
 * out), with one exported function, rules_spin(n), that loops n times.  Returns 0, or -1 when gcc could not build it.  Also used by
 * tests/integration/test_hostile_rules.c.
 */
int exemgr_test_rules_lib(const char *dir, const char *name, unsigned n,
			  unsigned first, char *out, size_t len)
{
	char src[4096];
	FILE *f;
	pid_t pid;
	unsigned i;
	int st;

	snprintf(src, sizeof(src), "%s/%s.S", dir, name);
	snprintf(out, len, "%s/%s.so", dir, name);
	f = fopen(src, "w");
	if (!f)
		return -1;
	/* rules_spin(n): a loop to burn CPU in the file (CFA = rsp + 8,
	 * a rule every file has) */
	fprintf(f, "\t.text\n\t.globl rules_spin\n\t.type rules_spin, @function\n"
		   "rules_spin:\n\t.cfi_startproc\n1:\tdec %%rdi\n\tjnz 1b\n"
		   "\tret\n\t.cfi_endproc\n\t.size rules_spin, .-rules_spin\n");
	for (i = 0; i < n; i++)
		fprintf(f, "\t.cfi_startproc\n\tnop\n\t.cfi_def_cfa_offset %u\n"
			   "\tret\n\t.cfi_endproc\n",
			8 * (first + i) + 16);
	fprintf(f, "\t.section .note.GNU-stack,\"\",@progbits\n");
	if (fclose(f))
		return -1;
	pid = fork();
	if (pid == 0) {
		execlp("gcc", "gcc", "-shared", "-nostdlib", "-o", out, src,
		       (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		return -1;
	return 0;
}

/* Build a rules library in the test's directory, owned by uid (when
 * root: chown), or skip. */
static bool rules_lib(const char *name, unsigned n, unsigned first,
		      uid_t uid, char *out, size_t len)
{
	if (exemgr_test_rules_lib(test_tmpdir(), name, n, first, out, len)) {
		test_skip("gcc could not build %s", name);
		return false;
	}
	if (getuid() == 0 && !ASSERT_OK(chown(out, uid, uid), "chown"))
		return false;
	return true;
}

/* The rule table keeps a fair share for everyone: a file of 30 K distinct
 * rules is refused (more than 1/8 of the table), files under that share
 * but owned by one user other than root stop at 1/4 of the table
 * together, and the rules of unloaded files are taken back, so loading
 * and unloading more than the table holds never fills it.  libc's rows
 * still name the right rules through it all. */
TEST(exemgr_rules_fair_share_and_reclaim)
{
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct exe_file *libc = NULL, *h = NULL, *f[3] = { 0 }, *g;
	struct exe_stats st;
	/* a user's files: nobody when the test is root, else ours */
	uid_t user = getuid() ? getuid() : 65534;
	uint64_t base, checked = 0;
	char path[4096], names[3][4096];
	unsigned i, round;

	if (!maps_and_manager(DELTA_ROWS_DEFAULT, &bm, &em))
		goto out;
	libc = load(em, LIBC);
	if (!libc)
		goto out;
	exe_get_stats(em, &st);
	base = st.rules_used;

	if (!test_start_subtest("file_over_its_share"))
		goto owner;
	if (!rules_lib("big", 30000, 0, user, path, sizeof(path)))
		goto out;
	h = load(em, path);
	if (!h)
		goto out;
	exe_get_stats(em, &st);
	test_note("30000 rules: refused; %" PRIu64 " rules in use", st.rules_used);
	ASSERT_EQ(h->deltas, EXE_DELTAS_NONE, "walked by frame pointer");
	ASSERT_EQ(st.over_share[EXE_TABLE_RULES][0], 1, "counted: a file's share");
	ASSERT_EQ(st.rules_used, base, "no rule taken");
	ASSERT_EQ(st.rows_used, (uint64_t)libc->n_blocks * ROWS_PER_BLOCK,
		  "no row taken");
	exe_put(em, h);
	h = NULL;

owner:
	if (!test_start_subtest("owner_share"))
		goto reclaim;
	/* 7000 each: under a file's 8191, three over an owner's 16382 */
	for (i = 0; i < 3; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "user%u", i);
		if (!rules_lib(nm, 7000, 100000 + 7000 * i, user, names[i],
			       sizeof(names[i])))
			goto out;
		f[i] = load(em, names[i]);
		if (!f[i])
			goto out;
	}
	exe_get_stats(em, &st);
	ASSERT_EQ(f[0]->deltas, EXE_DELTAS_LOADED, "first loaded");
	ASSERT_EQ(f[1]->deltas, EXE_DELTAS_LOADED, "second loaded");
	ASSERT_EQ(f[2]->deltas, EXE_DELTAS_NONE, "third over the owner's share");
	ASSERT_EQ(st.over_share[EXE_TABLE_RULES][1], 1,
		  "counted: an owner's share");
	ASSERT_EQ(st.rules_used, base + 14000, "two files' rules");
	/* the first one goes: its rules come back, the third fits */
	exe_put(em, f[0]);
	exe_put(em, f[2]);
	f[0] = f[2] = NULL;
	exe_gc(em, exe_now_ns(), 0);
	exe_get_stats(em, &st);
	ASSERT_EQ(st.rules_used, base + 7000, "the unloaded file's rules freed");
	ASSERT_EQ(st.rules_freed, 7000, "counted");
	f[2] = load(em, names[2]);
	if (f[2])
		ASSERT_EQ(f[2]->deltas, EXE_DELTAS_LOADED, "third loaded now");
	ASSERT_EQ(rows_differ(bm, f[2], names[2], mem_row, bm, &checked), 0,
		  "its rows name its rules");
	exe_put(em, f[1]);
	exe_put(em, f[2]);
	f[1] = f[2] = NULL;
	exe_gc(em, exe_now_ns(), 0);
	exe_get_stats(em, &st);
	ASSERT_EQ(st.rules_used, base, "back to libc's");

reclaim:
	if (!test_start_subtest("reclaim_past_the_table"))
		goto out;
	/* 10 files of 8000 new rules, loaded and unloaded in turn: 80000
	 * rules, more than the table, each loaded whole; a root-owned file
	 * has no owner share */
	for (round = 0; round < 10; round++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "round%u", round);
		if (!rules_lib(nm, 8000, 200000 + 8000 * round, 0, path,
			       sizeof(path)))
			goto out;
		g = load(em, path);
		if (!g)
			goto out;
		if (!ASSERT_EQ(g->deltas, EXE_DELTAS_LOADED, nm) ||
		    !ASSERT_EQ(rows_differ(bm, g, path, mem_row, bm, &checked),
			       0, "its rows name its rules"))
			round = 10;
		exe_put(em, g);
		exe_gc(em, exe_now_ns(), 0);
	}
	exe_get_stats(em, &st);
	test_note("%" PRIu64 " rules freed; %" PRIu64 " in use; %" PRIu64
		  " rows compared",
		  st.rules_freed, st.rules_used, checked);
	ASSERT_EQ(st.rules_used, base, "every file's rules freed");
	ASSERT_EQ(st.rules_full, 0, "the table never full");
	ASSERT_EQ(rows_differ(bm, libc, LIBC, mem_row, bm, &checked), 0,
		  "libc's rows still name its rules");
out:
	exe_put(em, h);
	for (i = 0; i < 3; i++)
		exe_put(em, f[i]);
	exe_put(em, libc);
	manager_and_maps_free(em, bm);
}

/* The rows' and pages' shares: libLLVM (950 K rows) is more than a
 * file's 1/4 of a 2 M-row bound; libc (22 pages) more than a file's 1/8
 * of a 64-entry pages map, and, as a user's copy with only the owner's
 * share set, more than an owner's 1/4 of it.  Each is walked by frame
 * pointer, counted by table and limit, and takes nothing. */
TEST(exemgr_rows_and_pages_shares)
{
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct exe_file *f = NULL, *g = NULL, *u = NULL;
	struct exe_stats st;
	uid_t user = getuid() ? getuid() : 65534;
	char copy[4096], *cmd;

	if (!present(LIBLLVM))
		return;
	if (!maps_and_manager(8 * DELTA_CHUNK_ROWS, &bm, &em))
		goto out;
	f = load(em, LIBLLVM);
	if (!f)
		goto out;
	exe_get_stats(em, &st);
	ASSERT_EQ(f->deltas, EXE_DELTAS_NONE, "libLLVM walked by frame pointer");
	ASSERT_EQ(st.over_share[EXE_TABLE_ROWS][0], 1, "counted: rows, a file's");
	ASSERT_EQ(st.rows_full, 0, "not as the bound reached");
	ASSERT_EQ(st.rows_used, 0, "no row taken");

	bm->max_entries[BM_PAGES] = 64;
	g = load(em, LIBC);
	if (!g)
		goto out;
	exe_get_stats(em, &st);
	ASSERT_EQ(g->deltas, EXE_DELTAS_NONE, "libc walked by frame pointer");
	ASSERT_EQ(st.over_share[EXE_TABLE_PAGES][0], 1, "counted: pages, a file's");

	/* a user's copy of libc (another file id: its own path and size) */
	exe_mgr_set_share(em, EXE_TABLE_PAGES, 0, 4);
	snprintf(copy, sizeof(copy), "%s/libc-copy.so", test_tmpdir());
	if (asprintf(&cmd, "cp %s %s && echo >> %s", LIBC, copy, copy) < 0)
		goto out;
	ASSERT_OK(system(cmd), "copy libc");
	free(cmd);
	if (getuid() == 0 && !ASSERT_OK(chown(copy, user, user), "chown"))
		goto out;
	u = load(em, copy);
	if (!u)
		goto out;
	exe_get_stats(em, &st);
	ASSERT_EQ(u->deltas, EXE_DELTAS_NONE, "the copy walked by frame pointer");
	ASSERT_EQ(st.over_share[EXE_TABLE_PAGES][1], 1, "counted: pages, an owner's");
	ASSERT_EQ(st.loaded, 0, "nothing loaded");
	ASSERT_EQ(st.rules_used, RULE_FIXED_COUNT, "no rule taken");
out:
	exe_put(em, f);
	exe_put(em, g);
	exe_put(em, u);
	manager_and_maps_free(em, bm);
}

/* ---- the rows' chunks in batches (issue 25's warm start-up) ------------ */

/* The in-memory ops with chunks_new counted, and refused on demand as a
 * 6.1 kernel refuses a batch update of an array of maps. */
static const struct bpfmaps_ops *plain_ops;
static struct bpfmaps_ops counted_ops;
static unsigned batch_calls, batch_chunks, single_calls;
static bool refuse_batch;

static int counted_chunks_new(void *ctx, const uint32_t *idx, uint32_t n,
			      struct row_block **mem, uint32_t *done)
{
	batch_calls++;
	if (refuse_batch) {
		*done = 0;
		return -EOPNOTSUPP;
	}
	batch_chunks += n;
	return plain_ops->chunks_new(ctx, idx, n, mem, done);
}

static int counted_chunk_new(void *ctx, uint32_t idx, struct row_block **mem)
{
	single_calls++;
	return plain_ops->chunk_new(ctx, idx, mem);
}

static void counted_free(struct exe_mgr *em, struct bpfmaps *bm);

/* In-memory maps of max_rows rows, counted, and a manager over them with
 * store (may be NULL), in place of those in *bm and *em, freed first. */
static bool counted_maps(uint32_t max_rows, struct store *st,
			 struct bpfmaps **bm, struct exe_mgr **em)
{
	counted_free(*em, *bm);
	*em = NULL;
	*bm = NULL;
	if (!ASSERT_OK(bm_mem_new(max_rows, bm), "maps"))
		return false;
	plain_ops = (*bm)->ops;
	counted_ops = *plain_ops;
	counted_ops.chunks_new = counted_chunks_new;
	counted_ops.chunk_new = counted_chunk_new;
	(*bm)->ops = &counted_ops;
	batch_calls = batch_chunks = single_calls = 0;
	refuse_batch = false;
	return ASSERT_OK(exe_mgr_new(*bm, st, em), "manager");
}

static void counted_free(struct exe_mgr *em, struct bpfmaps *bm)
{
	exe_mgr_free(em);
	if (bm)
		bm->ops = plain_ops;
	bm_mem_free(bm);
}

/* libc takes part of chunk 0; libLLVM (950 K rows) then needs three
 * more: created in one call, not one per page that did not fit. */
TEST(exemgr_chunks_file_needing_three_in_one_call)
{
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct exe_file *libc = NULL, *f = NULL;
	struct exe_stats st;

	if (!present(LIBLLVM) || !counted_maps(DELTA_ROWS_DEFAULT, NULL, &bm, &em))
		goto out;
	libc = load(em, LIBC);
	ASSERT_EQ(single_calls, 1, "libc: one chunk, a single update");
	ASSERT_EQ(batch_calls, 0, "no batch for one chunk");
	f = load(em, LIBLLVM);
	exe_get_stats(em, &st);
	test_note("libLLVM: %u runs; %u batch calls (%u chunks), %u single",
		  f ? f->n_row_ext : 0, batch_calls, batch_chunks,
		  single_calls);
	ASSERT_EQ(st.row_chunks, 4, "libc's chunk and three more");
	ASSERT_EQ(batch_calls, 1, "the three in one call");
	ASSERT_EQ(batch_chunks, 3, "of three chunks");
	ASSERT_EQ(single_calls, 1, "no growth one by one");
	ASSERT_EQ(st.chunk_batches, 2, "two updates of the array of maps");
	ASSERT_EQ(st.chunks_created, 4, "four chunks created");
out:
	exe_put(em, f);
	exe_put(em, libc);
	counted_free(em, bm);
}

/* A kernel without batch updates of an array of maps: the first batch is
 * refused, the chunks come one by one, and later files do not try the
 * batch again. */
TEST(exemgr_chunks_batch_refused_falls_back)
{
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct exe_file *f = NULL;
	struct exe_stats st;

	if (!present(LIBLLVM) || !counted_maps(DELTA_ROWS_DEFAULT, NULL, &bm, &em))
		goto out;
	refuse_batch = true;
	f = load(em, LIBLLVM);
	exe_get_stats(em, &st);
	ASSERT_EQ(st.row_chunks, 4, "libLLVM in four chunks all the same");
	ASSERT_EQ(batch_calls, 1, "the batch tried once");
	ASSERT_EQ(single_calls, 4, "then one update per chunk");
	ASSERT_TRUE(bm->no_chunk_batch, "remembered");
	ASSERT_EQ(st.chunk_batches, 4, "four updates counted");
	put_and_collect(em, &f, &st);
	ASSERT_EQ(st.row_chunks, 0, "dropped");
	f = load(em, LIBLLVM);
	ASSERT_EQ(batch_calls, 1, "not tried again");
	ASSERT_EQ(single_calls, 8, "four more, one by one");
out:
	exe_put(em, f);
	counted_free(em, bm);
}

/* The hint round trip through a real store: a run that used four chunks
 * writes 4; the next start creates four in one call before any file
 * loads, and the same files then create none.  A hint over the bound is
 * capped; unused chunks of a hint go back at the next exe_gc(); no hint,
 * a record of another size and -fp-only's manager create nothing. */
TEST(exemgr_chunks_prefill_hint_round_trip)
{
	static const uint8_t hint_id[16] = "rows:chunk-hint";
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct exe_file *libc = NULL, *f = NULL;
	struct store *st = NULL;
	struct exe_stats es;
	uint32_t bad[3] = { 1, 4, 0 };

	if (!present(LIBLLVM) ||
	    !ASSERT_OK(store_open(test_tmppath("cache"), NULL, &st), "store") ||
	    !counted_maps(DELTA_ROWS_DEFAULT, st, &bm, &em))
		goto out;
	ASSERT_EQ(exe_chunks_prefill(em), 0, "no hint yet: nothing");
	libc = load(em, LIBC);
	f = load(em, LIBLLVM);
	exe_chunks_remember(em);
	exe_put(em, f);
	exe_put(em, libc);
	f = libc = NULL;
	exe_gc(em, exe_now_ns(), 0);
	/* nothing in use at exit: the most of the run stays */
	exe_chunks_remember(em);

	if (!counted_maps(DELTA_ROWS_DEFAULT, st, &bm, &em))
		goto out;
	ASSERT_EQ(exe_chunks_prefill(em), 4, "the last run's four");
	ASSERT_EQ(batch_calls, 1, "in one call");
	ASSERT_EQ(single_calls, 0, "none alone");
	libc = load(em, LIBC);
	f = load(em, LIBLLVM);
	exe_get_stats(em, &es);
	ASSERT_EQ(es.chunks_created, 4, "the files created none");
	ASSERT_EQ(es.chunks_prefilled, 4, "counted as prefilled");
	ASSERT_EQ(es.chunk_batches, 1, "one update of the array of maps");
	put_and_collect(em, &f, &es);
	ASSERT_EQ(es.row_chunks, 1, "libLLVM's chunks went back at gc");
	exe_put(em, libc);
	libc = NULL;

	/* a smaller bound: two chunks */
	if (!counted_maps(2 * DELTA_CHUNK_ROWS, st, &bm, &em))
		goto out;
	ASSERT_EQ(exe_chunks_prefill(em), 2, "capped by the bound");

	if (!counted_maps(DELTA_ROWS_DEFAULT, st, &bm, &em))
		goto out;
	exe_mgr_set_chunk_hint(em, false);
	ASSERT_EQ(exe_chunks_prefill(em), 0, "a -pid run takes no host count");
	exe_mgr_set_chunk_hint(em, true);
	exe_mgr_set_fp_only(em, true);
	ASSERT_EQ(exe_chunks_prefill(em), 0, "-fp-only loads no rows");
	exe_chunks_remember(em);

	ASSERT_OK(store_put(st, hint_id, STORE_KIND_ROW_CHUNKS, bad,
			    sizeof(bad)),
		  "a record of another size");
	if (!counted_maps(DELTA_ROWS_DEFAULT, st, &bm, &em))
		goto out;
	ASSERT_EQ(exe_chunks_prefill(em), 0, "unreadable: nothing");
	ASSERT_EQ(batch_calls + single_calls, 0, "no chunk created");

	ASSERT_OK(store_del(st, hint_id, STORE_KIND_ROW_CHUNKS), "evicted");
	if (!counted_maps(DELTA_ROWS_DEFAULT, st, &bm, &em))
		goto out;
	ASSERT_EQ(exe_chunks_prefill(em), 0, "absent: nothing");
out:
	exe_put(em, f);
	exe_put(em, libc);
	counted_free(em, bm);
	store_free(st);
}

/* The kernel's side (tracer_maps.c): four chunks in one batch update of
 * delta_rows (or, where the kernel refuses it, one update each), each
 * found by the kernel where BPF looks, holding what we wrote through our
 * mapping.  Timed against four single updates (one grace period each). */
/* The pid's pid_epoch counter, as BPF reads it. */
static uint64_t pid_epoch_of(int fd, uint32_t pid)
{
	uint32_t slot = pid & (PID_EPOCH_SLOTS - 1);
	uint64_t v = 0;

	bpf_map_lookup_elem(fd, &slot, &v);
	return v;
}

/* BPF keeps per-CPU copies of a pid's pid_info and of its entries in the
 * runtimes' maps while the pid's counter is unchanged: every change of
 * those (and only those) bumps it. */
TEST_ROOT(tracer_pid_entries_bump_epoch)
{
	struct tracer_opts o = { .samples_per_second = 19 };
	struct tracer *tr = NULL;
	struct bpfmaps *bm;
	uint32_t pid = 4242;
	uint64_t before;
	struct pid_info pi = { .flags = PID_F_SYNCED };
	struct py_proc entry = { 0 };
	struct page_key pk = { .file_id = 1 };
	struct page_info pg = { 0 };
	int fd;

	if (!ASSERT_OK(tracer_open(&o, NULL, NULL, NULL, &tr), "tracer_open") ||
	    !ASSERT_OK(tracer_load(tr, NULL, 0), "tracer_load (not attached)"))
		goto out;
	bm = tracer_maps(tr);
	fd = our_map_fd("pid_epoch", BPF_MAP_TYPE_ARRAY);
	if (!ASSERT_GE(fd, 0, "pid_epoch among our descriptors") ||
	    !ASSERT_OK(bm_bind(bm, BM_INTERP(INTERP_PYTHON), "py_procs",
			       sizeof(pid), sizeof(entry)),
		       "py_procs bound"))
		goto out;
	before = pid_epoch_of(fd, pid);
	ASSERT_OK(bm_update(bm, BM_PID_INFO, &pid, &pi), "pid_info");
	ASSERT_EQ(pid_epoch_of(fd, pid), before + 1, "pid_info's change");
	ASSERT_OK(bm_update(bm, BM_INTERP(INTERP_PYTHON), &pid, &entry),
		  "py_procs");
	ASSERT_EQ(pid_epoch_of(fd, pid), before + 2, "the runtime entry's");
	ASSERT_OK(bm_remove(bm, BM_INTERP(INTERP_PYTHON), &pid), "removed");
	ASSERT_EQ(pid_epoch_of(fd, pid), before + 3, "its removal");
	ASSERT_OK(bm_remove(bm, BM_PID_INFO, &pid), "pid_info removed");
	ASSERT_EQ(pid_epoch_of(fd, pid), before + 4, "pid_info's removal");
	ASSERT_OK(bm_update(bm, BM_PAGES, &pk, &pg), "a page");
	ASSERT_EQ(pid_epoch_of(fd, pid), before + 4, "not another map's");
out:
	tracer_free(tr);
}

TEST_ROOT(exemgr_chunks_kernel_batch)
{
	struct tracer_opts o = { .samples_per_second = 19 };
	uint32_t idx[4] = { 0, 1, 2, 3 }, more[4] = { 4, 5, 6, 7 }, done, i;
	struct tracer *tr = NULL;
	struct bpfmaps *bm;
	struct krows k = { .outer = -1 };
	uint64_t t0, batch_ns, single_ns;

	if (!ASSERT_OK(tracer_open(&o, NULL, NULL, NULL, &tr), "tracer_open"))
		goto out;
	bm = tracer_maps(tr);
	if (!ASSERT_GE(bm->max_chunks, 8, "room for eight chunks"))
		goto out;
	t0 = exe_now_ns();
	ASSERT_OK(bm_chunks_new(bm, idx, 4, &done), "four at once");
	batch_ns = exe_now_ns() - t0;
	ASSERT_EQ(done, 4, "all four");
	t0 = exe_now_ns();
	for (i = 0; i < 4; i++)
		ASSERT_OK(bm_chunk_new(bm, more[i]), "one");
	single_ns = exe_now_ns() - t0;
	test_note("4 chunks: %.1f ms in %s, %.1f ms one by one",
		  batch_ns / 1e6,
		  bm->no_chunk_batch ? "single updates (batch refused)" :
				       "one batch update",
		  single_ns / 1e6);
	ASSERT_EQ(bm->chunk_batches, bm->no_chunk_batch ? 8 : 5,
		  "updates of the array of maps counted");
	ASSERT_EQ(bm->chunks_created, 8, "chunks counted");
	/* each chunk where the kernel finds it, with our row in it */
	if (!ASSERT_OK(krows_open(&k), "delta_rows among our descriptors"))
		goto out;
	for (i = 0; i < 8; i++) {
		uint32_t row = i << DELTA_CHUNK_SHIFT | 7 * ROWS_PER_BLOCK, got = 0;

		*bm_row(bm, row) = 1000 + i;
		ASSERT_OK(kernel_row(&k, row, &got), "found as BPF finds it");
		ASSERT_EQ(got, 1000 + i, "our row, seen by the kernel");
	}
	/* at exit nothing is deleted one by one: the chunks go with the
	 * object (tracer_free) */
	tracer_closing(tr);
	t0 = exe_now_ns();
	for (i = 0; i < 8; i++)
		bm_chunk_drop(bm, i);
	test_note("dropped at exit in %.2f ms", (exe_now_ns() - t0) / 1e6);
	i = 0;
	ASSERT_OK(bpf_map_lookup_elem(k.outer, &i, &done),
		  "still in the outer map");
out:
	krows_close(&k);
	tracer_free(tr);
}
