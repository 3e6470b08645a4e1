// SPDX-License-Identifier: Apache-2.0
/*
 * The `cache` subcommand.  warm: one thread walks the PATHs with nftw()
 * and queues each regular file once (by device and inode); N workers
 * take files off the queue, keep the ELF ones, hash them to a file id,
 * skip ids already stored (or already seen in this run: copies of one
 * file), extract and store the rest.  A progress thread redraws one
 * line on stderr when it is a terminal.
 */
#include "cache_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileid.h"
#include "fsutil.h"
#include "intern.h"
#include "log.h"
#include "store.h"

#define QUEUE_LEN 1024
#define MAX_JOBS 1024
#define WARM_LOCK_TIMEOUT_MS 60000 /* a batch job can wait for the daemon */

struct cache_args {
	const char *action;
	const char *dir;
	uint64_t size; /* 0: the directory's */
	unsigned jobs;
	bool one_fs;
	char **paths;
	int n_paths;
};

/* ---- a set of 16-byte keys (inodes, file ids) --------------------------- */

/* Add k.  Returns 1 when it was new, 0 when present, -ENOMEM. */
static int keyset_add(struct intern *s, const uint8_t k[16])
{
	bool added;
	int64_t id = intern_add(s, k, 16, &added);

	return id < 0 ? (int)id : added;
}

/* ---- warm ----------------------------------------------------------------- */

struct warm {
	struct store *store;
	const struct cache_extractor *ex;
	bool one_fs;

	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full, tick;
	char *queue[QUEUE_LEN];
	unsigned head, count;
	bool walk_done, stop;
	struct intern inodes; /* walker only */
	struct intern ids;    /* under lock */
	int fatal;	      /* a store error that ends the run */

	/* Counters, updated with atomics. */
	uint64_t files, done, elf, extracted, nocfi, skipped, failed,
		bytes_in, bytes_stored, runtimes;
	double t0;
};

static struct warm *walk_state; /* nftw() passes no context */
static volatile sig_atomic_t interrupted;

#define ADD(f, v) __atomic_add_fetch(&(f), (v), __ATOMIC_RELAXED)
#define GET(f) __atomic_load_n(&(f), __ATOMIC_RELAXED)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_signal(int sig)
{
	interrupted = sig;
}

/* Queue a path (copied).  Returns 0, or -ECANCELED when the run stops. */
static int enqueue(struct warm *w, const char *path)
{
	char *p = strdup(path);
	int err = 0;

	if (!p)
		return -ENOMEM;
	pthread_mutex_lock(&w->lock);
	while (w->count == QUEUE_LEN && !w->stop)
		pthread_cond_wait(&w->not_full, &w->lock);
	if (w->stop) {
		err = -ECANCELED;
		free(p);
	} else {
		w->queue[(w->head + w->count++) % QUEUE_LEN] = p;
		pthread_cond_signal(&w->not_empty);
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

/* Next path (the caller frees it), or NULL when there are no more. */
static char *dequeue(struct warm *w)
{
	char *p = NULL;

	pthread_mutex_lock(&w->lock);
	while (!w->count && !w->walk_done && !w->stop)
		pthread_cond_wait(&w->not_empty, &w->lock);
	if (w->count && !w->stop) {
		p = w->queue[w->head];
		w->head = (w->head + 1) % QUEUE_LEN;
		w->count--;
		pthread_cond_signal(&w->not_full);
	}
	pthread_mutex_unlock(&w->lock);
	return p;
}

static void stop_all(struct warm *w, int fatal)
{
	pthread_mutex_lock(&w->lock);
	if (fatal && !w->fatal)
		w->fatal = fatal;
	__atomic_store_n(&w->stop, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&w->not_empty);
	pthread_cond_broadcast(&w->not_full);
	pthread_cond_broadcast(&w->tick);
	pthread_mutex_unlock(&w->lock);
}

/* A regular file met by the walk: queue it unless its inode was seen. */
static int add_file(struct warm *w, const char *path, const struct stat *st)
{
	uint64_t ino[2] = { (uint64_t)st->st_dev, (uint64_t)st->st_ino };
	uint8_t k[16];
	int r;

	memcpy(k, ino, sizeof(k));
	r = keyset_add(&w->inodes, k);
	if (r <= 0)
		return r;
	ADD(w->files, 1);
	return enqueue(w, path);
}

static int walk_cb(const char *path, const struct stat *st, int type,
		   struct FTW *ftw)
{
	struct warm *w = walk_state;
	int err;

	(void)ftw;
	if (interrupted || __atomic_load_n(&w->stop, __ATOMIC_RELAXED))
		return 1;
	if (type == FTW_DNR || type == FTW_NS) {
		log_warn("cache warm: %s: cannot read; skipped", path);
		return 0;
	}
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0; /* directories, symbolic links, devices, fifos */
	err = add_file(w, path, st);
	if (err == -ENOMEM) {
		stop_all(w, -ENOMEM);
		return 1;
	}
	return 0;
}

/* The store error that ends the run: the store cannot be written. */
static bool fatal_put(int err)
{
	return err == -EROFS || err == -EIO || err == -EUCLEAN;
}

static void warm_file(struct warm *w, const char *path)
{
	static const uint8_t elf_magic[4] = { 0x7f, 'E', 'L', 'F' };
	uint8_t magic[4];
	struct file_id id;
	struct stat st;
	void *buf = NULL;
	size_t len = 0;
	int fd, err, r;

	/* the walk saw a regular file, but the tree may be anyone's */
	fd = fs_open_regular(path);
	if (fd < 0)
		return; /* gone or changed since the walk, or unreadable */
	if (pread(fd, magic, sizeof(magic), 0) != sizeof(magic) ||
	    memcmp(magic, elf_magic, sizeof(magic)) != 0 || fstat(fd, &st))
		goto out;
	ADD(w->elf, 1);
	err = fileid_from_fd(fd, &id);
	if (err) {
		log_debug("cache warm: %s: file id: %s", path, strerror(-err));
		ADD(w->failed, 1);
		goto out;
	}
	pthread_mutex_lock(&w->lock);
	r = keyset_add(&w->ids, id.b);
	pthread_mutex_unlock(&w->lock);
	if (r == 0 || (r > 0 && store_has(w->store, id.b,
					   STORE_KIND_DELTAS) == 0)) {
		ADD(w->skipped, 1); /* a copy seen in this run, or cached */
		goto out;
	}
	err = w->ex->extract(fd, path, &buf, &len);
	ADD(w->bytes_in, (uint64_t)st.st_size);
	if (err) {
		log_debug("cache warm: %s: %s", path, strerror(-err));
		ADD(w->failed, 1);
		goto out;
	}
	err = store_put(w->store, id.b, STORE_KIND_DELTAS, buf, len);
	if (err) {
		log_debug("cache warm: %s: store: %s", path, strerror(-err));
		ADD(w->failed, 1);
		if (fatal_put(err))
			stop_all(w, err);
		goto out;
	}
	ADD(w->extracted, 1);
	ADD(w->bytes_stored, len);
	if (!len)
		ADD(w->nocfi, 1);
	if (w->ex->warm_file)
		ADD(w->runtimes, w->ex->warm_file(id.b, path, fd));
out:
	free(buf);
	close(fd);
}

static void *worker(void *arg)
{
	struct warm *w = arg;
	char *path;

	while ((path = dequeue(w))) {
		if (!interrupted)
			warm_file(w, path);
		free(path);
		ADD(w->done, 1);
	}
	return NULL;
}

static void draw_progress(struct warm *w, bool last)
{
	uint64_t files = GET(w->files), done = GET(w->done);
	double dt = now_s() - w->t0;
	char bar[21];
	int i, fill;
	bool walked;

	pthread_mutex_lock(&w->lock);
	walked = w->walk_done;
	pthread_mutex_unlock(&w->lock);
	/* The total is known once the walk is over; until then the bar
	 * shows the share of what was found so far. */
	fill = files ? (int)(20 * done / files) : 0;
	for (i = 0; i < 20; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[20] = 0;
	fprintf(stderr,
		"\r\033[K[%s] %" PRIu64 "/%" PRIu64 "%s files, %" PRIu64
		" ELF, %" PRIu64 " extracted, %" PRIu64 " cached, %.1f MB/s",
		bar, done, files, walked ? "" : "+", GET(w->elf),
		GET(w->extracted), GET(w->skipped),
		dt > 0 ? GET(w->bytes_in) / dt / 1e6 : 0.0);
	if (last)
		fputs("\r\033[K", stderr);
	fflush(stderr);
}

static void *progress(void *arg)
{
	struct warm *w = arg;
	struct timespec ts;
	bool stop;

	for (;;) {
		pthread_mutex_lock(&w->lock);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (!w->stop)
			pthread_cond_timedwait(&w->tick, &w->lock, &ts);
		stop = w->stop;
		pthread_mutex_unlock(&w->lock);
		draw_progress(w, stop);
		if (stop)
			return NULL;
	}
}

/* Walk one PATH: a tree, or a single file.  A PATH that is itself a
 * symbolic link is followed (it was named); links below it are not. */
static int walk_path(struct warm *w, const char *path)
{
	struct stat st;
	int err;

	if (stat(path, &st) < 0) {
		err = -errno;
		fprintf(stderr, "ebpf-profiler: cache warm: %s: %s\n", path,
			strerror(-err));
		return err;
	}
	if (S_ISREG(st.st_mode)) {
		err = add_file(w, path, &st);
		return err == -ECANCELED ? 0 : err < 0 ? err : 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "ebpf-profiler: cache warm: %s: not a file or "
				"a directory\n",
			path);
		return -EINVAL;
	}
	walk_state = w;
	if (nftw(path, walk_cb, 64, FTW_PHYS | (w->one_fs ? FTW_MOUNT : 0)) <
	    0) {
		err = -errno;
		fprintf(stderr, "ebpf-profiler: cache warm: %s: %s\n", path,
			strerror(-err));
		return err;
	}
	return 0;
}

static unsigned default_jobs(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 &&
	    (n = CPU_COUNT(&set)) > 0)
		return (unsigned)n;
	n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

static int cmd_warm(const struct cache_args *a, const struct cache_extractor *ex)
{
	struct store_opts opts = { .max_bytes = a->size, .no_sync = true,
				   .lock_timeout_ms = WARM_LOCK_TIMEOUT_MS };
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	unsigned jobs = a->jobs ? a->jobs : default_jobs(), started = 0, i;
	pthread_t *th = NULL, prog;
	bool show = isatty(STDERR_FILENO), walk_failed = false;
	struct warm w = { .ex = ex, .one_fs = a->one_fs };
	double dt;
	int err, rc = 1;

	if (store_open(a->dir, &opts, &w.store))
		return 1; /* store_open said why */
	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.not_empty, NULL);
	pthread_cond_init(&w.not_full, NULL);
	pthread_cond_init(&w.tick, NULL);
	th = calloc(jobs, sizeof(*th));
	if (!th) {
		fprintf(stderr, "ebpf-profiler: cache warm: out of memory\n");
		goto out;
	}
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	w.t0 = now_s();
	if (ex->warm_extra) {
		err = ex->warm_extra(w.store);
		if (err)
			fprintf(stderr, "ebpf-profiler: cache warm: the vDSO or the kernel types: %s\n",
				strerror(-err));
	}
	for (started = 0; started < jobs; started++) {
		if (pthread_create(&th[started], NULL, worker, &w))
			break;
	}
	if (!started) {
		fprintf(stderr, "ebpf-profiler: cache warm: cannot start "
				"threads\n");
		stop_all(&w, 0);
	}
	if (show && pthread_create(&prog, NULL, progress, &w))
		show = false;
	for (i = 0; i < (unsigned)a->n_paths && !interrupted &&
		    !__atomic_load_n(&w.stop, __ATOMIC_RELAXED);
	     i++)
		walk_failed |= walk_path(&w, a->paths[i]) < 0;
	pthread_mutex_lock(&w.lock);
	w.walk_done = true;
	pthread_cond_broadcast(&w.not_empty);
	pthread_mutex_unlock(&w.lock);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	stop_all(&w, 0);
	if (show)
		pthread_join(prog, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	while (w.count) { /* left by a stop */
		free(w.queue[w.head]);
		w.head = (w.head + 1) % QUEUE_LEN;
		w.count--;
	}

	dt = now_s() - w.t0;
	printf("cache warm: files=%" PRIu64 " elf=%" PRIu64
	       " extracted=%" PRIu64 " nocfi=%" PRIu64 " skipped=%" PRIu64
	       " failed=%" PRIu64 " runtimes=%" PRIu64 " bytes_in=%" PRIu64
	       " bytes_stored=%" PRIu64 " seconds=%.2f files/s=%.0f"
	       " MB/s=%.1f\n",
	       w.files, w.elf, w.extracted, w.nocfi, w.skipped, w.failed,
	       w.runtimes,
	       w.bytes_in, w.bytes_stored, dt, dt > 0 ? w.files / dt : 0.0,
	       dt > 0 ? w.bytes_in / dt / 1e6 : 0.0);
	fflush(stdout);
	err = w.fatal;
	if (err)
		fprintf(stderr, "ebpf-profiler: cache warm: %s: stopped: %s\n",
			a->dir ? a->dir : STORE_DEFAULT_DIR, strerror(-err));
	else if (interrupted)
		fprintf(stderr, "ebpf-profiler: cache warm: interrupted\n");
	else if (started && !walk_failed)
		rc = 0;
out:
	free(th);
	pthread_mutex_destroy(&w.lock);
	pthread_cond_destroy(&w.not_empty);
	pthread_cond_destroy(&w.not_full);
	pthread_cond_destroy(&w.tick);
	intern_free(&w.inodes);
	intern_free(&w.ids);
	store_free(w.store); /* writes and syncs */
	interrupted = 0;
	return rc;
}

/* ---- stats, verify, clear ------------------------------------------------ */

/* Open an existing store (these actions do not create one).  Returns 0,
 * -ENOENT when there is none (said unless quiet), or another error
 * (said by store_open). */
static int open_existing(const struct cache_args *a, bool quiet,
			 struct store **s)
{
	const char *dir = a->dir ? a->dir : STORE_DEFAULT_DIR;
	struct store_opts opts = { .max_bytes = a->size };
	char path[PATH_MAX];
	struct stat st;

	*s = NULL;
	if (snprintf(path, sizeof(path), "%s/data.mdb", dir) >=
		    (int)sizeof(path) ||
	    stat(path, &st) < 0) {
		if (!quiet)
			fprintf(stderr, "ebpf-profiler: cache %s: no cache in "
					"%s\n",
				a->action, dir);
		return -ENOENT;
	}
	return store_open(dir, &opts, s);
}

static int cmd_stats(const struct cache_args *a)
{
	struct store_stats st;
	struct store *s;
	unsigned k;

	if (open_existing(a, false, &s))
		return 1;
	store_get_stats(s, &st);
	store_free(s);
	printf("cache: dir=%s records=%" PRIu64 " bytes_used=%" PRIu64
	       " limit=%" PRIu64 " file_bytes=%" PRIu64
	       " payload_bytes=%" PRIu64 "%s\n",
	       a->dir ? a->dir : STORE_DEFAULT_DIR, st.records, st.bytes_used,
	       st.max_bytes, st.file_bytes, st.payload_bytes,
	       st.read_only ? " read_only=1" : "");
	for (k = 1; k < STORE_KIND_MAX; k++) {
		const char *name = store_kind_name(k);

		if (name || st.per_kind[k])
			printf("kind %s: records=%" PRIu64 " bytes=%" PRIu64
			       "\n",
			       name ? name : "unknown", st.per_kind[k],
			       st.per_kind_bytes[k]);
	}
	return 0;
}

static int cmd_verify(const struct cache_args *a)
{
	struct store *s;
	uint64_t checked;
	int removed;

	if (open_existing(a, false, &s))
		return 1;
	removed = store_verify(s, &checked);
	store_free(s);
	if (removed < 0) {
		fprintf(stderr, "ebpf-profiler: cache verify: %s\n",
			strerror(-removed));
		return 1;
	}
	printf("cache verify: checked=%" PRIu64 " removed=%d\n", checked,
	       removed);
	return 0;
}

static int cmd_clear(const struct cache_args *a)
{
	struct store_stats st;
	struct store *s;
	int err;

	err = open_existing(a, true, &s);
	if (err == -ENOENT) {
		printf("cache clear: removed=0\n");
		return 0;
	}
	if (err)
		return 1;
	store_get_stats(s, &st);
	err = store_clear(s);
	store_free(s);
	if (err) {
		fprintf(stderr, "ebpf-profiler: cache clear: %s\n",
			strerror(-err));
		return 1;
	}
	printf("cache clear: removed=%" PRIu64 "\n", st.records);
	return 0;
}

/* ---- arguments ------------------------------------------------------------ */

/* "1073741824", "512M", "1G", "1GiB", "64mb", "100k": bytes, 1024-based. */
static int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "kmgt";
	unsigned long long v;
	const char *u;
	char *end;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return -EINVAL;
	if (*end) {
		u = strchr(units, end[0] | 0x20);
		if (!u || !end[0])
			return -EINVAL;
		shift = 10 * (int)(u - units + 1);
		end++;
		if (strcasecmp(end, "ib") && strcasecmp(end, "b") && *end)
			return -EINVAL;
	}
	if (!v || v > UINT64_MAX >> shift)
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: ebpf-profiler cache warm [-cache-dir DIR] "
	      "[-cache-size SIZE] [-j N] [-one-file-system] PATH...\n"
	      "       ebpf-profiler cache stats|verify|clear "
	      "[-cache-dir DIR]\n"
	      "  -cache-dir DIR      the cache (default " STORE_DEFAULT_DIR
	      ")\n"
	      "  -cache-size SIZE    its limit, e.g. 512M, 2G (kept by the "
	      "directory)\n"
	      "  -j N                extraction threads (default: all CPUs)\n"
	      "  -one-file-system    do not cross mount points\n",
	      f);
}

static int parse_args(int argc, char **argv, struct cache_args *a)
{
	static const struct option opts[] = {
		{ "cache-dir", required_argument, NULL, 'd' },
		{ "cache-size", required_argument, NULL, 's' },
		{ "j", required_argument, NULL, 'j' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "one-file-system", no_argument, NULL, 'x' },
		{ "xdev", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ "v", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long n;
	int c;

	memset(a, 0, sizeof(*a));
	if (argc < 2 || argv[1][0] == '-') {
		usage(stderr);
		return -EINVAL;
	}
	a->action = argv[1];
	/* getopt sees the action as its argv[0]; start it afresh. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long_only(argc - 1, argv + 1, "j:hv", opts,
				     NULL)) != -1) {
		switch (c) {
		case 'd':
			a->dir = optarg;
			break;
		case 's':
			if (parse_size(optarg, &a->size)) {
				fprintf(stderr, "ebpf-profiler: cache: bad "
						"-cache-size '%s' (e.g. 512M, "
						"2G)\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'j':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || *end || n < 1 || n > MAX_JOBS) {
				fprintf(stderr, "ebpf-profiler: cache: bad -j "
						"'%s' (1 to %d)\n",
					optarg, MAX_JOBS);
				return -EINVAL;
			}
			a->jobs = (unsigned)n;
			break;
		case 'x':
			a->one_fs = true;
			break;
		case 'v':
			log_set_level(LOG_DEBUG);
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			fprintf(stderr, "ebpf-profiler: cache: unknown or "
					"incomplete option '%s'\n",
				argv[optind > 0 ? optind : 1]);
			return -EINVAL;
		}
	}
	a->paths = argv + 1 + optind;
	a->n_paths = argc - 1 - optind;
	return 0;
}

int cache_cmd_run(int argc, char **argv, const struct cache_extractor *ex)
{
	struct cache_args a;
	int err = parse_args(argc, argv, &a);

	if (err)
		return err > 0 ? 0 : 1;
	if (strcmp(a.action, "warm") == 0) {
		if (!a.n_paths) {
			fprintf(stderr, "ebpf-profiler: cache warm: no PATH "
					"given\n");
			return 1;
		}
		return cmd_warm(&a, ex);
	}
	if (a.n_paths) {
		fprintf(stderr, "ebpf-profiler: cache %s: takes no PATH\n",
			a.action);
		return 1;
	}
	if (strcmp(a.action, "stats") == 0)
		return cmd_stats(&a);
	if (strcmp(a.action, "verify") == 0)
		return cmd_verify(&a);
	if (strcmp(a.action, "clear") == 0)
		return cmd_clear(&a);
	fprintf(stderr, "ebpf-profiler: cache: unknown action '%s' (warm, "
			"stats, verify, clear)\n",
		a.action);
	return 1;
}
