// SPDX-License-Identifier: Apache-2.0
/*
 * The LMDB cache: round trips, several writers, eviction, damaged files,
 * read-only directories and injected failures.  Every test works in its
 * own temporary directory; where it needs a second process it forks one
 * (LMDB forbids opening one environment twice in a process).
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include "profiler.h"
#include "store.h"
#include "store_test.h"

/* LeakSanitizer, when the build has it. */
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

static void make_id(uint8_t id[16], uint64_t n)
{
	uint64_t x = n * 0x9e3779b97f4a7c15ULL + 1;
	int i;

	for (i = 0; i < 16; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		id[i] = (uint8_t)x;
	}
}

/* Bytes that depend on seed and position, so that any mix-up shows. */
static void fill(uint8_t *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x2545f4914f6cdd1dULL + 0x1234567;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)(x >> 24);
	}
}

static bool same(const void *got, size_t got_len, size_t len, uint64_t seed)
{
	uint8_t *want = malloc(len ? len : 1);
	bool ok;

	fill(want, len, seed);
	ok = got_len == len && (!len || memcmp(got, want, len) == 0);
	free(want);
	return ok;
}

static int put_seed(struct store *s, uint64_t n, enum store_kind kind,
		    size_t len)
{
	uint8_t id[16], *buf = malloc(len ? len : 1);
	int err;

	make_id(id, n);
	fill(buf, len, n * 31 + kind);
	err = store_put(s, id, kind, buf, len);
	free(buf);
	return err;
}

/* 0 when the record is there with the right bytes, else the error
 * (-EBADMSG for wrong bytes). */
static int get_seed(struct store *s, uint64_t n, enum store_kind kind,
		    size_t len)
{
	uint8_t id[16];
	void *val;
	size_t got;
	int err;

	make_id(id, n);
	err = store_get(s, id, kind, &val, &got);
	if (err)
		return err;
	err = same(val, got, len, n * 31 + kind) ? 0 : -EBADMSG;
	free(val);
	return err;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void leak_check(void)
{
	if (__lsan_do_recoverable_leak_check)
		ASSERT_EQ(__lsan_do_recoverable_leak_check(), 0, "no leaks");
}

TEST(store_roundtrip)
{
	static const size_t sizes[] = { 0, 1, 15, 100, 2000, 4080, 4096,
					5000, 65536, 300000, 3 << 20 };
	const size_t n_sizes = sizeof(sizes) / sizeof(sizes[0]);
	const char *dir = test_tmppath("a/b/cache");
	struct store_opts opts = { .max_bytes = 64 << 20 };
	struct store_stats st;
	struct store *s;
	uint64_t bytes = 0;
	struct stat sb;
	size_t i;
	uint8_t id[16];
	void *val;
	size_t len;

	if (!ASSERT_OK(store_open(dir, &opts, &s), "open"))
		return;
	ASSERT_OK(stat(dir, &sb), "dir created");
	ASSERT_EQ(sb.st_mode & 0777, 0700, "mode 0700");
	for (i = 0; i < n_sizes; i++) {
		ASSERT_OK(put_seed(s, i, STORE_KIND_DELTAS, sizes[i]), "put");
		ASSERT_OK(put_seed(s, i, STORE_KIND_INTERP(INTERP_PYTHON), sizes[n_sizes - 1 - i]),
			  "put python");
		bytes += sizes[i] * 2;
	}
	ASSERT_OK(put_seed(s, 100, STORE_KIND_KTYPES, 10), "put kernel types");
	for (i = 0; i < n_sizes; i++) {
		ASSERT_OK(get_seed(s, i, STORE_KIND_DELTAS, sizes[i]), "get");
		ASSERT_OK(get_seed(s, i, STORE_KIND_INTERP(INTERP_PYTHON),
				   sizes[n_sizes - 1 - i]),
			  "get python");
	}
	make_id(id, 0);
	ASSERT_OK(store_has(s, id, STORE_KIND_DELTAS), "has (empty record)");
	ASSERT_OK(store_get(s, id, STORE_KIND_DELTAS, &val, &len), "get empty");
	ASSERT_EQ(len, 0, "empty length");
	ASSERT_TRUE(val == NULL, "empty value is NULL");
	/* An empty record given as NULL (what a "no CFI" result looks like). */
	ASSERT_OK(store_put(s, id, STORE_KIND_KTYPES, NULL, 0), "put NULL");
	ASSERT_OK(store_get(s, id, STORE_KIND_KTYPES, &val, &len),
		  "get NULL-put record");
	ASSERT_EQ(len, 0, "empty");
	ASSERT_OK(store_del(s, id, STORE_KIND_KTYPES), "del");
	ASSERT_EQ(store_get(s, id, STORE_KIND_KTYPES, &val, &len), -ENOENT,
		  "other kind absent");
	ASSERT_EQ(store_has(s, id, STORE_KIND_KTYPES), -ENOENT, "has absent");
	ASSERT_EQ(store_get(s, id, 0, &val, &len), -EINVAL, "kind 0");
	ASSERT_EQ(store_put(s, id, STORE_KIND_MAX, "x", 1), -EINVAL, "kind max");

	store_get_stats(s, &st);
	ASSERT_EQ(st.records, 2 * n_sizes + 1, "records");
	ASSERT_EQ(st.per_kind[STORE_KIND_DELTAS], n_sizes, "deltas records");
	ASSERT_EQ(st.per_kind[STORE_KIND_INTERP(INTERP_PYTHON)], n_sizes, "python records");
	ASSERT_EQ(st.per_kind[STORE_KIND_KTYPES], 1, "kernel-types records");
	ASSERT_EQ(st.payload_bytes, bytes + 10, "payload bytes");
	ASSERT_EQ(st.puts, 2 * n_sizes + 2, "puts (one since deleted)");
	ASSERT_GE(st.bytes_used, bytes, "bytes used");
	ASSERT_LE(st.bytes_used, bytes + (1 << 20), "bytes used");

	/* Replace with another size; delete. */
	ASSERT_OK(put_seed(s, 3, STORE_KIND_DELTAS, 777), "replace");
	ASSERT_OK(get_seed(s, 3, STORE_KIND_DELTAS, 777), "get replaced");
	make_id(id, 4);
	ASSERT_OK(store_del(s, id, STORE_KIND_DELTAS), "del");
	ASSERT_EQ(store_del(s, id, STORE_KIND_DELTAS), -ENOENT, "del again");
	ASSERT_EQ(get_seed(s, 4, STORE_KIND_DELTAS, sizes[4]), -ENOENT,
		  "deleted");
	store_get_stats(s, &st);
	ASSERT_EQ(st.records, 2 * n_sizes, "records after del");
	ASSERT_EQ(st.payload_bytes, bytes + 10 - sizes[3] + 777 - sizes[4],
		  "payload after replace and del");
	ASSERT_EQ(st.max_bytes, 64 << 20, "limit");
	ASSERT_EQ(store_open(dir, NULL, &(struct store *){ NULL }), -EBUSY,
		  "second open in one process");
	store_free(s);

	/* Persisted, with the directory's limit. */
	if (!ASSERT_OK(store_open(dir, NULL, &s), "reopen"))
		return;
	ASSERT_OK(get_seed(s, n_sizes - 1, STORE_KIND_DELTAS,
			   sizes[n_sizes - 1]),
		  "get after reopen");
	store_get_stats(s, &st);
	ASSERT_EQ(st.max_bytes, 64 << 20, "limit kept by the directory");
	ASSERT_EQ(st.records, 2 * n_sizes, "records after reopen");
	ASSERT_OK(store_clear(s), "clear");
	store_get_stats(s, &st);
	ASSERT_EQ(st.records, 0, "records after clear");
	ASSERT_EQ(st.payload_bytes, 0, "payload after clear");
	ASSERT_EQ(get_seed(s, 1, STORE_KIND_DELTAS, sizes[1]), -ENOENT,
		  "cleared");
	ASSERT_OK(put_seed(s, 1, STORE_KIND_DELTAS, 10), "put after clear");
	store_free(s);
	store_free(NULL);
	ASSERT_STREQ(store_kind_name(STORE_KIND_DELTAS), "deltas", "name");
	ASSERT_STREQ(store_kind_name(STORE_KIND_INTERP(INTERP_PYTHON)), "python",
		     "an interpreter's records are named as its module");
	ASSERT_TRUE(store_kind_name(9) == NULL, "no name");
}

static int writer_child(const char *dir, int w, int n)
{
	struct store *s;
	int i, bad = 0;

	if (store_open(dir, NULL, &s))
		return 1;
	for (i = 0; i < n; i++) {
		uint64_t key = (uint64_t)w * 100000 + i;

		if (put_seed(s, key, STORE_KIND_DELTAS, 100 + (key % 7) * 700))
			bad++;
		/* Read what another writer may have written. */
		if (i % 10 == 0)
			get_seed(s, ((uint64_t)(w + 1) % 4) * 100000 + i / 2,
				 STORE_KIND_DELTAS, 0);
	}
	store_free(s);
	return bad ? 2 : 0;
}

TEST(store_concurrent_processes)
{
	const char *dir = test_tmppath("cache");
	const int writers = 4, per = 500;
	struct store_stats st;
	struct store *s;
	pid_t pids[4];
	int i, j, status, bad = 0;
	double t0 = now_s();

	for (i = 0; i < writers; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(writer_child(dir, i, per));
	}
	for (i = 0; i < writers; i++) {
		ASSERT_EQ(waitpid(pids[i], &status, 0), pids[i], "wait");
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			    "writer ok");
	}
	test_note("4 processes x 500 puts: %.2f s", now_s() - t0);
	if (!ASSERT_OK(store_open(dir, NULL, &s), "open"))
		return;
	for (i = 0; i < writers; i++) {
		for (j = 0; j < per; j++) {
			uint64_t key = (uint64_t)i * 100000 + j;

			bad += get_seed(s, key, STORE_KIND_DELTAS,
					100 + (key % 7) * 700) != 0;
		}
	}
	ASSERT_EQ(bad, 0, "every record readable");
	store_get_stats(s, &st);
	ASSERT_EQ(st.records, writers * per, "records");
	ASSERT_EQ(store_verify(s, NULL), 0, "verify finds nothing");
	store_free(s);
}

/* A child that puts back to back for 2 s (as cache warm does), cycling
 * through keys distinct records of len bytes.  Returns its pid. */
static pid_t bulk_writer(const char *dir, int keys, size_t len)
{
	struct store_opts bulk = { .no_sync = true };
	struct store *s;
	pid_t pid = fork();
	int i;

	if (pid == 0) {
		double end = now_s() + 2.0;

		if (store_open(dir, &bulk, &s))
			_exit(1);
		for (i = 0; now_s() < end; i++)
			put_seed(s, 100000 + i % keys, STORE_KIND_DELTAS, len);
		store_free(s);
		_exit(0);
	}
	return pid;
}

TEST(store_no_starvation)
{
	/* A bulk writer (cache warm) and an occasional one (the daemon) with
	 * a short timeout: the occasional one always gets its turn. */
	const char *dir = test_tmppath("cache");
	struct store_opts opts = { .lock_timeout_ms = 250 };
	double worst = 0, t0;
	int i, failed = 0, status;
	struct store *s;
	pid_t pid;

	pid = bulk_writer(dir, 5000, 2000);
	usleep(200 * 1000);
	if (ASSERT_OK(store_open(dir, &opts, &s), "open")) {
		for (i = 0; i < 40; i++) {
			t0 = now_s();
			failed += put_seed(s, i, STORE_KIND_INTERP(INTERP_PYTHON), 100) != 0;
			if (now_s() - t0 > worst)
				worst = now_s() - t0;
			usleep(20 * 1000);
		}
		store_free(s);
	}
	waitpid(pid, &status, 0);
	ASSERT_EQ(failed, 0, "no put timed out");
	test_note("beside a bulk writer: slowest put %.1f ms", worst * 1e3);
}

struct thread_arg {
	struct store *s;
	int t, n, errors;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	int i;

	for (i = 0; i < a->n; i++) {
		uint64_t key = (uint64_t)a->t * 100000 + i;
		int err;

		a->errors += put_seed(a->s, key, STORE_KIND_INTERP(INTERP_PYTHON), 64 + i) != 0;
		a->errors += get_seed(a->s, key, STORE_KIND_INTERP(INTERP_PYTHON), 64 + i) != 0;
		/* Another thread's record: there or not, never wrong. */
		err = get_seed(a->s, (uint64_t)((a->t + 1) % 8) * 100000 + i,
			       STORE_KIND_INTERP(INTERP_PYTHON), 64 + i);
		a->errors += err != 0 && err != -ENOENT;
	}
	return NULL;
}

TEST(store_concurrent_threads)
{
	struct thread_arg args[8];
	pthread_t th[8];
	struct store_stats st;
	struct store *s;
	int i;

	if (!ASSERT_OK(store_open(test_tmppath("cache"), NULL, &s), "open"))
		return;
	for (i = 0; i < 8; i++) {
		args[i] = (struct thread_arg){ s, i, 300, 0 };
		pthread_create(&th[i], NULL, thread_main, &args[i]);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		ASSERT_EQ(args[i].errors, 0, "thread errors");
	}
	store_get_stats(s, &st);
	ASSERT_EQ(st.records, 8 * 300, "records");
	ASSERT_GE(st.hits, 8 * 300, "hits");
	ASSERT_EQ(store_verify(s, NULL), 0, "verify");
	store_free(s);
}

TEST(store_eviction_lru)
{
	const char *dir = test_tmppath("cache");
	struct store_opts opts = { .max_bytes = 1 << 20 };
	const size_t len = 6000;
	struct store_stats st;
	struct store *s;
	int i, j, hot_missing = 0, new_missing = 0, old_present = 0;

	if (!ASSERT_OK(store_open(dir, &opts, &s), "open"))
		return;
	/* Ten hot records, then six hundred others (about 3.6 MB through a
	 * 1 MiB cache); the hot ones are read after every ten puts. */
	for (i = 0; i < 10; i++)
		ASSERT_OK(put_seed(s, i, STORE_KIND_DELTAS, len), "put hot");
	for (i = 100; i < 700; i++) {
		if (!ASSERT_OK(put_seed(s, i, STORE_KIND_DELTAS, len), "put"))
			break;
		if (i % 10 == 0) {
			for (j = 0; j < 10; j++)
				get_seed(s, j, STORE_KIND_DELTAS, len);
		}
	}
	for (i = 0; i < 10; i++)
		hot_missing += get_seed(s, i, STORE_KIND_DELTAS, len) != 0;
	for (i = 680; i < 700; i++)
		new_missing += get_seed(s, i, STORE_KIND_DELTAS, len) != 0;
	for (i = 100; i < 200; i++)
		old_present += get_seed(s, i, STORE_KIND_DELTAS, len) == 0;
	ASSERT_EQ(hot_missing, 0, "recently read records survive");
	ASSERT_EQ(new_missing, 0, "newest records survive");
	ASSERT_EQ(old_present, 0, "oldest unread records evicted");
	store_get_stats(s, &st);
	test_note("1 MiB limit: %" PRIu64 " records, %" PRIu64
		  " evictions, %" PRIu64 " bytes used, file %" PRIu64,
		  st.records, st.evictions, st.bytes_used, st.file_bytes);
	ASSERT_GT(st.evictions, 400, "evictions counted");
	ASSERT_EQ(st.put_errors, 0, "no put errors");
	ASSERT_EQ(st.records + st.evictions, 610, "records + evictions");
	ASSERT_LE(st.bytes_used, 1 << 20, "within the limit");
	ASSERT_LE(st.file_bytes, 1 << 20, "file within the limit");
	ASSERT_GT(st.records, 60, "the cache is used, not emptied");
	/* Larger than half the limit: refused, nothing evicted for it. */
	ASSERT_EQ(put_seed(s, 5000, STORE_KIND_DELTAS, 600000), -E2BIG,
		  "too big");
	/* Large records through a small cache (contiguous runs needed). */
	for (i = 0; i < 40; i++)
		ASSERT_OK(put_seed(s, 6000 + i, STORE_KIND_KTYPES,
				   100000 + i * 3000),
			  "large put");
	ASSERT_OK(get_seed(s, 6039, STORE_KIND_KTYPES, 100000 + 39 * 3000),
		  "newest large");
	ASSERT_EQ(store_verify(s, NULL), 0, "verify");
	store_free(s);
}

/* ---- damaged files ------------------------------------------------------ */

/* Record i of make_store(): 3000 bytes, every tenth 20000. */
static size_t rec_size(int i)
{
	return i % 10 == 0 ? 20000 : 3000;
}

/* A store with n records of rec_size() bytes, closed. */
static void make_store(const char *dir, int n)
{
	struct store *s;
	int i;

	if (!ASSERT_OK(store_open(dir, NULL, &s), "make store"))
		return;
	for (i = 0; i < n; i++)
		put_seed(s, i, STORE_KIND_DELTAS, rec_size(i));
	store_free(s);
}

/* Every record either reads back exactly or is absent; returns how many
 * read back.  Writes must still work. */
static int check_store(const char *dir, int n)
{
	struct store *s;
	int i, err, good = 0;

	err = store_open(dir, NULL, &s);
	if (!ASSERT_OK(err, "open after damage"))
		return -1;
	for (i = 0; i < n; i++) {
		err = get_seed(s, i, STORE_KIND_DELTAS, rec_size(i));
		if (err == 0)
			good++;
		else
			ASSERT_EQ(err, -ENOENT, "absent, never wrong");
	}
	ASSERT_OK(put_seed(s, 99999, STORE_KIND_DELTAS, 5000), "put works");
	ASSERT_OK(get_seed(s, 99999, STORE_KIND_DELTAS, 5000), "get works");
	ASSERT_GE(store_verify(s, NULL), 0, "verify");
	ASSERT_EQ(store_verify(s, NULL), 0, "verify again finds nothing");
	store_free(s);
	return good;
}

static void scribble(const char *path, off_t off, size_t len, uint64_t seed)
{
	uint8_t *buf = malloc(len);
	int fd = open(path, O_WRONLY);

	fill(buf, len, seed);
	ASSERT_EQ(pwrite(fd, buf, len, off), (ssize_t)len, "scribble");
	close(fd);
	free(buf);
}

static off_t file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? sb.st_size : -1;
}

TEST(store_damaged_file)
{
	const int n = 300;
	char data[600];
	int seed, cut;

	if (test_start_subtest("garbage_everywhere")) {
		const char *dir = test_tmppath("g");

		make_store(dir, n);
		snprintf(data, sizeof(data), "%s/data.mdb", dir);
		scribble(data, 2 * 4096, (size_t)file_size(data) - 2 * 4096, 1);
		ASSERT_EQ(check_store(dir, n), 0, "rebuilt empty");
		snprintf(data, sizeof(data), "%s/data.mdb.corrupt", dir);
		ASSERT_GT(file_size(data), 0, "damaged file kept aside");
	}
	if (test_start_subtest("garbage_meta")) {
		const char *dir = test_tmppath("m");

		make_store(dir, n);
		snprintf(data, sizeof(data), "%s/data.mdb", dir);
		scribble(data, 0, 2 * 4096, 2);
		ASSERT_GE(check_store(dir, n), 0, "no crash");
	}
	for (cut = 0; cut < 3; cut++) {
		/* Half the file, nothing, a partial meta page. */
		static const char *const names[] = { "truncated", "empty_file",
						     "short_file" };
		const char *dir;

		if (!test_start_subtest(names[cut]))
			continue;
		dir = test_tmppath(names[cut]);
		make_store(dir, n);
		snprintf(data, sizeof(data), "%s/data.mdb", dir);
		ASSERT_OK(truncate(data, cut == 0 ? file_size(data) / 2 :
					 cut == 1 ? 0 : 100),
			  "truncate");
		ASSERT_EQ(check_store(dir, n), 0, "rebuilt empty");
	}
	if (test_start_subtest("marked_by_an_assertion")) {
		/* What an LMDB assertion leaves behind before it aborts. */
		const char *dir = test_tmppath("a");
		char mark[600];

		make_store(dir, n);
		snprintf(mark, sizeof(mark), "%s/data.mdb.suspect", dir);
		close(open(mark, O_WRONLY | O_CREAT, 0600));
		ASSERT_EQ(check_store(dir, n), 0, "rebuilt empty");
		ASSERT_EQ(access(mark, F_OK), -1, "mark removed");
	}
	if (test_start_subtest("random_pages")) {
		int total_good = 0;

		/* A few pages of garbage at a time, anywhere past the meta
		 * pages: whatever they hit, no crash and no wrong data. */
		for (seed = 0; seed < 24; seed++) {
			char name[32];
			const char *dir;
			off_t pages;
			int good;

			snprintf(name, sizeof(name), "r%d", seed);
			dir = test_tmppath(name);
			make_store(dir, n);
			snprintf(data, sizeof(data), "%s/data.mdb", dir);
			pages = file_size(data) / 4096;
			scribble(data,
				 (2 + (seed * 7919) % (pages - 2)) * 4096,
				 4096 * (1 + seed % 3), 100 + seed);
			good = check_store(dir, n);
			if (good < 0)
				break;
			total_good += good;
		}
		test_note("random pages: %d of %d records still read back",
			  total_good, 24 * n);
	}
	if (test_start_subtest("lock_file")) {
		const char *dir = test_tmppath("l");
		char lock[600];

		make_store(dir, n);
		snprintf(lock, sizeof(lock), "%s/lock.mdb", dir);
		scribble(lock, 0, 8192, 3);
		ASSERT_EQ(check_store(dir, n), n, "garbage lock file: all kept");
		ASSERT_OK(truncate(lock, 10), "truncate lock file");
		ASSERT_EQ(check_store(dir, n), n, "short lock file: all kept");
	}
}

/* The record of seed n: its header's offset in data.mdb, or -1. */
static off_t find_record(const char *path, uint64_t n, enum store_kind kind,
			 size_t len)
{
	uint8_t want[32];
	off_t size = file_size(path), off = -1, i;
	uint8_t *buf = malloc((size_t)size);
	int fd = open(path, O_RDONLY);

	fill(want, sizeof(want), n * 31 + kind);
	if (fd >= 0 && pread(fd, buf, (size_t)size, 0) == size) {
		for (i = 16; i + 32 <= size && len >= 32; i++) {
			if (memcmp(buf + i, want, 32) == 0 &&
			    memcmp(buf + i - 16, "EPSC", 4) == 0) {
				off = i - 16;
				break;
			}
		}
	}
	close(fd);
	free(buf);
	return off;
}

static void poke(const char *path, off_t off, const void *bytes, size_t len)
{
	int fd = open(path, O_WRONLY);

	ASSERT_EQ(pwrite(fd, bytes, len, off), (ssize_t)len, "poke");
	close(fd);
}

TEST(store_bad_records)
{
	const char *dir = test_tmppath("cache");
	struct store_stats st;
	struct store *s;
	char data[600];
	uint16_t version = STORE_FORMAT_VERSION + 1;
	uint64_t checked;
	off_t off;
	int i;

	make_store(dir, 50);
	snprintf(data, sizeof(data), "%s/data.mdb", dir);
	/* Record 3: another format version.  Record 5 (inline in a leaf)
	 * and 10 (on overflow pages): one payload byte flipped. */
	off = find_record(data, 3, STORE_KIND_DELTAS, 3000);
	if (!ASSERT_GE(off, 0, "record 3 found"))
		return;
	poke(data, off + 4, &version, sizeof(version));
	off = find_record(data, 5, STORE_KIND_DELTAS, 3000);
	ASSERT_GE(off, 0, "record 5 found");
	poke(data, off + 16 + 1000, "\xff\x00", 2);
	off = find_record(data, 10, STORE_KIND_DELTAS, 20000);
	ASSERT_GE(off, 0, "record 10 found");
	poke(data, off + 16 + 19999, "\x5a", 1);
	off = find_record(data, 7, STORE_KIND_DELTAS, 3000);
	ASSERT_GE(off, 0, "record 7 found");
	poke(data, off + 16 + 2, "\x00\x00\x00", 3);

	if (!ASSERT_OK(store_open(dir, NULL, &s), "open"))
		return;
	ASSERT_EQ(get_seed(s, 3, STORE_KIND_DELTAS, 3000), -ENOENT,
		  "other version reads as absent");
	ASSERT_EQ(get_seed(s, 5, STORE_KIND_DELTAS, 3000), -ENOENT,
		  "checksum mismatch reads as absent");
	ASSERT_EQ(get_seed(s, 10, STORE_KIND_DELTAS, 20000), -ENOENT,
		  "checksum mismatch (overflow) reads as absent");
	ASSERT_OK(get_seed(s, 4, STORE_KIND_DELTAS, 3000), "neighbour fine");
	store_get_stats(s, &st);
	ASSERT_EQ(st.corrupt, 3, "corrupt counted");
	ASSERT_EQ(st.records, 50, "still there until a write");
	/* The next write transaction removes them. */
	ASSERT_OK(put_seed(s, 1000, STORE_KIND_DELTAS, 10), "put");
	store_get_stats(s, &st);
	ASSERT_EQ(st.records, 48, "bad records removed by the write");
	/* store_has does not checksum; store_verify does. */
	{
		uint8_t id[16];

		make_id(id, 7);
		ASSERT_OK(store_has(s, id, STORE_KIND_DELTAS), "has: header ok");
	}
	ASSERT_EQ(store_verify(s, &checked), 1, "verify removes record 7");
	ASSERT_EQ(checked, 48, "checked");
	ASSERT_EQ(store_verify(s, &checked), 0, "nothing left to remove");
	ASSERT_EQ(checked, 47, "checked");
	store_get_stats(s, &st);
	ASSERT_EQ(st.per_kind[STORE_KIND_DELTAS], 47, "counts recomputed");
	for (i = 0; i < 50; i++) {
		int err = get_seed(s, i, STORE_KIND_DELTAS, rec_size(i));

		if (i == 3 || i == 5 || i == 7 || i == 10)
			ASSERT_EQ(err, -ENOENT, "bad gone");
		else
			ASSERT_OK(err, "good kept");
	}
	store_free(s);
}

/* ---- read-only directories ------------------------------------------------ */

static int ro_child(const char *mnt)
{
	char dir[700];
	struct store_stats st;
	struct store *s;
	int err;

	if (unshare(CLONE_NEWNS) < 0)
		return 77;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=16m,mode=0755") < 0)
		return 77;
	snprintf(dir, sizeof(dir), "%s/cache", mnt);
	make_store(dir, 20);
	if (mount(NULL, mnt, NULL, MS_REMOUNT | MS_RDONLY, NULL) < 0)
		return 77;
	/* A store there opens read-only: reads work, writes say so. */
	err = store_open(dir, NULL, &s);
	if (!ASSERT_OK(err, "open on a read-only mount"))
		return 1;
	store_get_stats(s, &st);
	ASSERT_TRUE(st.read_only, "read-only");
	ASSERT_EQ(st.records, 20, "records");
	ASSERT_OK(get_seed(s, 4, STORE_KIND_DELTAS, 3000), "get");
	ASSERT_EQ(put_seed(s, 100, STORE_KIND_DELTAS, 10), -EROFS, "put");
	ASSERT_EQ(store_verify(s, NULL), -EROFS, "verify");
	store_free(s);
	/* No store there: an error, not a crash. */
	snprintf(dir, sizeof(dir), "%s/none", mnt);
	err = store_open(dir, NULL, &s);
	ASSERT_TRUE(err < 0, "no store on a read-only mount");
	ASSERT_TRUE(s == NULL, "no store");
	return test_skipped() ? 77 : 0;
}

TEST(store_read_only_dir)
{
	char mnt[600];
	int status;
	pid_t pid;

	snprintf(mnt, sizeof(mnt), "%s/ro", test_tmpdir());
	mkdir(mnt, 0700);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(ro_child(mnt));
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		test_skip("cannot mount a tmpfs in a private mount namespace "
			  "(needs CAP_SYS_ADMIN)");
		return;
	}
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "read-only child");
}

/* A directory others can write is refused whole; a link where LMDB
 * opens its files is refused before LMDB follows it, and the file it
 * points to is left as it was. */
TEST(store_untrusted_dir)
{
	const char *dir = test_tmppath("open"), *target = test_tmppath("target");
	static const char text[] = "not LMDB's to write\n";
	char path[600], back[64] = "";
	struct stat st;
	struct store_opts small = { .max_bytes = 1 << 20 };
	struct store_stats sst;
	struct store *s = NULL;
	int fd, i;

	ASSERT_OK(mkdir(dir, 0700), "mkdir");
	/* group- or world-writable: refused, even when ours */
	ASSERT_OK(chmod(dir, 0770), "chmod 0770");
	ASSERT_EQ(store_open(dir, NULL, &s), -EPERM, "a group-writable directory");
	ASSERT_TRUE(s == NULL, "no store");
	ASSERT_OK(chmod(dir, 0707), "chmod 0707");
	ASSERT_EQ(store_open(dir, NULL, &s), -EPERM, "a world-writable directory");
	/* under a parent others may write (not sticky): refused too */
	ASSERT_OK(chmod(dir, 0700), "chmod 0700");
	ASSERT_OK(chmod(test_tmpdir(), 0777), "chmod the parent 0777");
	ASSERT_EQ(store_open(dir, NULL, &s), -EPERM, "a parent others write");
	ASSERT_OK(chmod(test_tmpdir(), 01777), "chmod the parent 01777");
	ASSERT_OK(store_open(dir, NULL, &s), "a sticky parent is fine");
	store_free(s);
	s = NULL;
	ASSERT_OK(chmod(test_tmpdir(), 0700), "chmod the parent back");
	/* the store is there now; its files replaced by links */
	fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_TRUE(fd >= 0 && write(fd, text, sizeof(text) - 1) ==
				       (ssize_t)sizeof(text) - 1,
		    "target written");
	close(fd);
	for (i = 0; i < 2; i++) {
		const char *name = i ? "data.mdb" : "lock.mdb";

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		ASSERT_OK(unlink(path), name);
		ASSERT_OK(symlink(target, path), "symlink");
		ASSERT_EQ(store_open(dir, NULL, &s), -ELOOP, name);
		ASSERT_TRUE(s == NULL, "no store");
		unlink(path);
		/* a hard link is as bad */
		ASSERT_OK(link(target, path), "link");
		ASSERT_EQ(store_open(dir, NULL, &s), -ELOOP, "a hard link");
		unlink(path);
	}
	fd = open(target, O_RDONLY | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0 && read(fd, back, sizeof(back) - 1) >= 0,
		    "target read");
	close(fd);
	ASSERT_STREQ(back, text, "the target unchanged");
	ASSERT_OK(stat(target, &st), "stat the target");
	ASSERT_EQ(st.st_size, (off_t)sizeof(text) - 1, "its size unchanged");
	/* and without the links, a fresh store opens */
	ASSERT_OK(store_open(dir, &small, &s), "open once the links are gone");
	ASSERT_OK(put_seed(s, 1, STORE_KIND_DELTAS, 100), "put");
	/* a failed write is counted (the daemon exports it) */
	store_get_stats(s, &sst);
	ASSERT_EQ(store_put_errors(s), 0, "no put error yet");
	ASSERT_EQ(put_seed(s, 2, STORE_KIND_DELTAS, sst.max_bytes / 2 + 1), -E2BIG,
		  "a put over half the limit");
	ASSERT_EQ(store_put_errors(s), 1, "counted");
	store_free(s);
	ASSERT_EQ(store_put_errors(NULL), 0, "no store: 0");
}

/* ---- locks ---------------------------------------------------------------- */

TEST(store_writer_held_elsewhere)
{
	const char *dir = test_tmppath("cache");
	struct store_opts opts = { .lock_timeout_ms = 300 };
	char path[600];
	int pipefd[2], status;
	struct store *s;
	double t0;
	pid_t pid;
	char c;

	make_store(dir, 5);
	snprintf(path, sizeof(path), "%s/store.lock", dir);
	ASSERT_OK(pipe(pipefd), "pipe");
	pid = fork();
	if (pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				    .l_len = 1 };
		int fd = open(path, O_RDWR);

		fcntl(fd, F_OFD_SETLK, &fl);
		write(pipefd[1], "x", 1);
		pause();
		_exit(0);
	}
	read(pipefd[0], &c, 1);
	if (ASSERT_OK(store_open(dir, &opts, &s), "open")) {
		t0 = now_s();
		ASSERT_EQ(put_seed(s, 10, STORE_KIND_DELTAS, 10), -EBUSY,
			  "put gives up");
		ASSERT_NEAR(now_s() - t0, 0.3, 0.25, "after the timeout");
		ASSERT_OK(get_seed(s, 1, STORE_KIND_DELTAS, 3000),
			  "reads go on");
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		ASSERT_OK(put_seed(s, 10, STORE_KIND_DELTAS, 10),
			  "put once released");
		store_free(s);
	}
	close(pipefd[0]);
	close(pipefd[1]);
}

TEST(store_open_beside_writer)
{
	/* The check at open reads a live store: a writer committing all the
	 * while must never make it look damaged. */
	const char *dir = test_tmppath("cache");
	int i, bad = 0, status;
	struct store *s;
	pid_t pid;

	make_store(dir, 50);
	/* New keys only, so that the file grows all the time. */
	pid = bulk_writer(dir, 1 << 30, 5000);
	usleep(100 * 1000);
	for (i = 0; i < 150; i++) {
		if (store_open(dir, NULL, &s)) {
			bad++;
			continue;
		}
		bad += get_seed(s, 7, STORE_KIND_DELTAS, rec_size(7)) != 0;
		store_free(s);
	}
	waitpid(pid, &status, 0);
	ASSERT_EQ(bad, 0, "every open and read fine");
	ASSERT_EQ(access(test_tmppath("cache/data.mdb.corrupt"), F_OK), -1,
		  "nothing moved aside");
}

TEST(store_lock_file_held_elsewhere)
{
	/* A process holding LMDB's lock file exclusively (as one does while
	 * it sets the file up): open gives up instead of hanging. */
	const char *dir = test_tmppath("cache");
	struct store_opts opts = { .lock_timeout_ms = 200 };
	int pipefd[2], status;
	struct store *s = NULL;
	double t0;
	pid_t pid;
	char c;

	make_store(dir, 5);
	ASSERT_OK(pipe(pipefd), "pipe");
	pid = fork();
	if (pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				    .l_len = 1 };
		int fd = open(test_tmppath("cache/lock.mdb"), O_RDWR);

		fcntl(fd, F_SETLK, &fl);
		write(pipefd[1], "x", 1);
		pause();
		_exit(0);
	}
	read(pipefd[0], &c, 1);
	t0 = now_s();
	ASSERT_EQ(store_open(dir, &opts, &s), -EBUSY, "busy");
	ASSERT_TRUE(s == NULL, "no store");
	ASSERT_LT(now_s() - t0, 3.0, "gave up in time");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ASSERT_EQ(check_store(dir, 5), 5, "fine once released");
	close(pipefd[0]);
	close(pipefd[1]);
}

TEST(store_map_grown_elsewhere)
{
	/* Another process with a larger limit grows the file past our map:
	 * LMDB says MDB_MAP_RESIZED, and we remap and go on. */
	const char *dir = test_tmppath("cache");
	struct store_opts small = { .max_bytes = 1 << 20 };
	struct store_stats st;
	struct store *s;
	int i, status, bad = 0;
	pid_t pid;

	if (!ASSERT_OK(store_open(dir, &small, &s), "open"))
		return;
	ASSERT_OK(put_seed(s, 1, STORE_KIND_DELTAS, 1000), "put");
	pid = fork();
	if (pid == 0) {
		struct store_opts big = { .max_bytes = 64 << 20 };
		struct store *b;

		if (store_open(dir, &big, &b))
			_exit(1);
		for (i = 0; i < 100; i++)
			bad += put_seed(b, 1000 + i, STORE_KIND_DELTAS, 50000) != 0;
		store_free(b);
		_exit(bad ? 2 : 0);
	}
	waitpid(pid, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "grower");
	for (i = 0; i < 100; i++)
		bad += get_seed(s, 1000 + i, STORE_KIND_DELTAS, 50000) != 0;
	ASSERT_EQ(bad, 0, "its records read here");
	ASSERT_OK(get_seed(s, 1, STORE_KIND_DELTAS, 1000), "ours too");
	/* And our own limit applies to our writes: we evict down to it. */
	ASSERT_OK(put_seed(s, 2, STORE_KIND_DELTAS, 1000), "put");
	store_get_stats(s, &st);
	ASSERT_LE(st.bytes_used, 1 << 20, "back within our limit");
	ASSERT_GT(st.evictions, 0, "by evicting");
	store_free(s);
}

/* ---- fault injection -------------------------------------------------------- */

/* Open, write, read, verify, close; any step may fail, none may crash,
 * leak, or leave the store unreadable. */
static int exercise(const char *dir)
{
	struct store_stats st;
	struct store *s;
	int i, err;

	err = store_open(dir, NULL, &s);
	if (err)
		return err;
	for (i = 0; i < 6; i++) {
		put_seed(s, i, STORE_KIND_DELTAS, rec_size(i));
		get_seed(s, i, STORE_KIND_DELTAS, rec_size(i));
	}
	get_seed(s, 2, STORE_KIND_INTERP(INTERP_PYTHON), 1);
	store_verify(s, NULL);
	store_get_stats(s, &st);
	store_flush(s);
	store_free(s);
	return 0;
}

TEST(store_fault_alloc)
{
	const char *dir = test_tmppath("cache");
	int n, failures = 0;

	for (n = 1; n < 200; n++) {
		store_test_fail_alloc(n);
		failures += exercise(dir) != 0;
		store_test_fail_alloc(0);
		/* Whatever failed, the store is sound afterwards. */
		if (!ASSERT_EQ(check_store(dir, 6) >= 0, 1, "sound"))
			break;
	}
	test_note("allocation failures: %d of the first 199 broke open()",
		  failures);
	leak_check();
}

TEST(store_fault_lmdb)
{
	static const int errs[] = { EIO, ENOSPC, STORE_FAULT_MAP_FULL,
				    STORE_FAULT_CORRUPTED, STORE_FAULT_PANIC };
	const char *dir = test_tmppath("cache");
	struct store_stats st;
	struct store *s;
	size_t e;
	int n;

	for (e = 0; e < sizeof(errs) / sizeof(errs[0]); e++) {
		for (n = 1; n < 60; n++) {
			store_test_fail_lmdb(n, errs[e]);
			exercise(dir);
			store_test_fail_lmdb(0, 0);
			if (!ASSERT_GE(check_store(dir, 6), 0, "sound"))
				return;
		}
	}
	/* A panic makes the store refuse everything, quietly. */
	if (!ASSERT_OK(store_open(dir, NULL, &s), "open"))
		return;
	store_test_fail_lmdb(1, STORE_FAULT_PANIC);
	ASSERT_EQ(put_seed(s, 1, STORE_KIND_DELTAS, 10), -EIO, "panic");
	ASSERT_EQ(get_seed(s, 1, STORE_KIND_DELTAS, 3000), -EIO,
		  "then every call fails");
	store_get_stats(s, &st);
	ASSERT_EQ(st.put_errors, 1, "put error counted");
	store_free(s);
	store_test_fail_lmdb(0, 0);
	leak_check();
}

/* ---- numbers ---------------------------------------------------------------- */

struct bench_arg {
	struct store *s;
	int t, n, records;
};

static void *bench_get(void *p)
{
	struct bench_arg *a = p;
	uint8_t id[16];
	void *val;
	size_t len;
	int i;

	for (i = 0; i < a->n; i++) {
		make_id(id, (uint64_t)(i * 7 + a->t) % (uint64_t)a->records);
		if (store_get(a->s, id, STORE_KIND_DELTAS, &val, &len) == 0)
			free(val);
	}
	return NULL;
}

static double bench_gets(struct store *s, int threads, int n, int records)
{
	struct bench_arg args[4];
	pthread_t th[4];
	double t0 = now_s();
	int i;

	for (i = 0; i < threads; i++) {
		args[i] = (struct bench_arg){ s, i, n, records };
		pthread_create(&th[i], NULL, bench_get, &args[i]);
	}
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	return threads * n / (now_s() - t0);
}

/* Figures for the record (notes), not timed assertions. */
TEST(store_throughput)
{
	static const size_t sizes[] = { 256, 16384 };
	struct store_opts bulk = { .no_sync = true };
	struct store_stats st;
	struct store *s;
	char name[32];
	double t0, dt;
	size_t k;
	int i, n;

	for (k = 0; k < 2; k++) {
		size_t len = sizes[k];

		snprintf(name, sizeof(name), "sync%zu", len);
		if (!ASSERT_OK(store_open(test_tmppath(name), NULL, &s), "open"))
			return;
		t0 = now_s();
		for (i = 0; i < 300; i++)
			put_seed(s, i, STORE_KIND_DELTAS, len);
		test_note("put %zu B, synced commits: %.0f/s", len,
			  300 / (now_s() - t0));
		store_free(s);

		n = len < 1000 ? 20000 : 4000;
		snprintf(name, sizeof(name), "bulk%zu", len);
		if (!ASSERT_OK(store_open(test_tmppath(name), &bulk, &s),
			       "open"))
			return;
		t0 = now_s();
		for (i = 0; i < n; i++)
			put_seed(s, i, STORE_KIND_DELTAS, len);
		ASSERT_OK(store_flush(s), "flush syncs");
		dt = now_s() - t0;
		test_note("put %zu B, no_sync (cache warm): %.0f/s, %.0f MB/s",
			  len, n / dt, n * (double)len / dt / 1e6);
		test_note("get %zu B: 1 thread %.0f/s, 2 threads %.0f/s", len,
			  bench_gets(s, 1, 100000, n),
			  bench_gets(s, 2, 100000, n));
		store_get_stats(s, &st);
		test_note("%d records of %zu B: %.0f bytes each in the file",
			  n, len, (double)st.bytes_used / n);
		ASSERT_EQ(st.records, (uint64_t)n, "records");
		store_free(s);
		t0 = now_s();
		if (ASSERT_OK(store_open(test_tmppath(name), NULL, &s), "open"))
			store_free(s);
		test_note("open (with the check in a child) of %d records, "
			  "%.1f MB: %.1f ms",
			  n, st.file_bytes / 1e6, (now_s() - t0) * 1e3);
	}
}

/* Resident KiB of this process' mappings of path (a data file). */
static long mapped_kb(const char *path)
{
	char line[1024];
	bool in = false;
	long kb = 0, v;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* a mapping's first line: "start-end perms offset dev
		 * inode path" ("Rss:" and the other fields do not parse) */
		if (sscanf(line, "%*x-%*x %*s %*x %*x:%*x %ld", &v) == 1)
			in = strstr(line, path) != NULL;
		else if (in && sscanf(line, "Rss: %ld kB", &v) == 1)
			kb += v;
	}
	fclose(f);
	return kb;
}

/* Reads leave the data file's pages mapped; store_release_pages drops
 * them from the resident set, and the records read back the same. */
TEST(store_release_pages_drops_the_mapped_file)
{
	const char *dir = test_tmppath("release/cache");
	struct store_opts opts = { .max_bytes = 64 << 20 };
	char data[600];
	struct store *s;
	long before, after;
	int i;

	if (!ASSERT_OK(store_open(dir, &opts, &s), "open"))
		return;
	snprintf(data, sizeof(data), "%s/data.mdb", dir);
	for (i = 0; i < 8; i++)
		ASSERT_OK(put_seed(s, i, STORE_KIND_DELTAS, 1 << 20), "put 1 MiB");
	for (i = 0; i < 8; i++)
		ASSERT_OK(get_seed(s, i, STORE_KIND_DELTAS, 1 << 20), "read");
	before = mapped_kb(data);
	store_release_pages(s);
	after = mapped_kb(data);
	test_note("data file resident: %ld KiB after the reads, %ld after the "
		  "release", before, after);
	ASSERT_GE(before, 8 * 1024, "the reads mapped the records' pages");
	ASSERT_LT(after, 64, "released");
	for (i = 0; i < 8; i++)
		ASSERT_OK(get_seed(s, i, STORE_KIND_DELTAS, 1 << 20),
			  "the same bytes after");
	store_release_pages(NULL); /* no cache: nothing */
	store_free(s);
	leak_check();
}
