// SPDX-License-Identifier: Apache-2.0
/*
 * The executable manager's loading of stack deltas into the maps: rows
 * and rules through the shared arrays, a file's pages in one batch, and
 * what a batch that stops part way leaves behind (nothing).  The libbpf
 * side of the batch is checked against the running kernel's maps.  And
 * the process manager's start-up load, which opens each file once.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfmaps.h"
#include "deltas.h"
#include "exemgr.h"
#include "fileid.h"
#include "procmgr.h"
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

static int any_lookup(void *ctx, enum bm_map m, const void *k, void *v)
{
	return mem_ops->lookup(ctx, m, k, v);
}

static int any_chunk_new(void *ctx, uint32_t idx, struct row_block **mem)
{
	return mem_ops->chunk_new(ctx, idx, mem);
}

static void any_chunk_drop(void *ctx, uint32_t idx, struct row_block *mem)
{
	mem_ops->chunk_drop(ctx, idx, mem);
}

static const struct bpfmaps_ops capped_ops = {
	.update = capped_update,
	.remove = capped_remove,
	.lookup = any_lookup,
	.chunk_new = any_chunk_new,
	.chunk_drop = any_chunk_drop,
};

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

	if (!ASSERT_OK(bm_mem_new(DELTA_ROWS_DEFAULT, &bm), "maps") ||
	    !ASSERT_OK(exe_mgr_new(bm, NULL, &em), "manager"))
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
	exe_mgr_free(em);
	bm_mem_free(bm);
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
	exe_mgr_free(em);
	bm_mem_free(bm);
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

	if (!ASSERT_OK(bm_mem_new(DELTA_ROWS_DEFAULT, &bm), "maps") ||
	    !ASSERT_OK(exe_mgr_new(bm, NULL, &em), "manager"))
		goto out;
	mem_ops = bm->ops;
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
	exe_mgr_free(em);
	bm_mem_free(bm);
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
out:
	free(keys);
	free(vals);
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
	if (!ASSERT_OK(bm_mem_new(DELTA_ROWS_DEFAULT, &bm), "maps") ||
	    !ASSERT_OK(exe_mgr_new(bm, NULL, &em), "manager") ||
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
	ASSERT_EQ(ps.opens, 4 * files, "one by one: every mapping's file");
out:
	for (i = 0; i < 4; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	pm_free(pm);
	exe_mgr_free(em);
	bm_mem_free(bm);
}
