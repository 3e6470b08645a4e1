// SPDX-License-Identifier: Apache-2.0
/* Debug files from debuginfod servers: a bounded queue and one worker. */
#include "dbgfetch.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "debugfind.h"
#include "dlib.h"
#include "elfmap.h"
#include "hashmap.h"
#include "log.h"

#define ID_MAX 64

struct dbgd_item {
	uint8_t id[ID_MAX];
	uint8_t len;
};

/* the library, through dlopen: its functions we call */
struct dbgd_lib {
	void *h;
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int,
			      char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void (*set_verbose_fd)(debuginfod_client *, int);
};

/* hm values: a build id queued (or downloading), or whose fetch failed */
#define ST_QUEUED 1
#define ST_FAILED 2

struct dbgd {
	struct dbgd_opts o;
	struct dbgd_lib lib;
	char cache[4096];	/* the client's cache directory */
	bool own_cache;		/* ours: made here (the library makes one level) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t worker;
	bool started, stop;
	/* under mu */
	struct dbgd_item *q;	/* ring of max_queue */
	uint32_t q_head, q_len;
	bool in_flight;
	uint64_t last_queued_ns;
	struct hm state;	/* build-id hash -> ST_* */
	uint64_t gen;
	struct dbgd_stats st;
	uint64_t *starts;	/* ring of the last max_per_minute starts */
	uint32_t n_starts;
	/* the worker's, for the progress callback */
	uint64_t deadline_ns;
	int abort_reason;	/* 0, -ETIMEDOUT, -EFBIG, -ECANCELED */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t id_key(const uint8_t *id, size_t len)
{
	return hm_hash(id, len, 0x64626764ULL);
}

static void hex(const uint8_t *id, size_t len, char *out)
{
	size_t i;

	for (i = 0; i < len; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
	out[2 * len] = 0;
}

static int load_lib(struct dbgd_lib *l)
{
	static const char *const sonames[] = { DEBUGINFOD_SONAME };
	const struct dl_sym syms[] = {
		{ "debuginfod_begin", (void **)&l->begin },
		{ "debuginfod_end", (void **)&l->end },
		{ "debuginfod_find_debuginfo", (void **)&l->find_debuginfo },
		{ "debuginfod_set_progressfn", (void **)&l->set_progressfn },
		{ "debuginfod_set_verbose_fd", (void **)&l->set_verbose_fd },
	};

	l->h = dl_open_syms(sonames, 1, syms, sizeof(syms) / sizeof(syms[0]),
			    NULL);
	return l->h ? 0 : -ENOSYS;
}

/* One client a process, so the progress callback finds its owner here
 * without the library's user data. */
static struct dbgd *owner;

/* libdebuginfod calls it through a download (about once a second and on
 * every chunk), on the worker: nonzero aborts the download. */
static int progress(debuginfod_client *c, long a, long b)
{
	struct dbgd *d = owner;

	(void)c;
	(void)b;
	if (!d)
		return 0;
	if (__atomic_load_n(&d->stop, __ATOMIC_RELAXED)) {
		d->abort_reason = -ECANCELED;
		return 1;
	}
	if (now_ns() > d->deadline_ns) {
		d->abort_reason = -ETIMEDOUT;
		return 1;
	}
	if (a > 0 && (uint64_t)a > d->o.max_bytes) {
		d->abort_reason = -EFBIG;
		return 1;
	}
	return 0;
}

/* Wait until another download may start under max_per_minute; false
 * when stopping.  Called with mu held. */
static bool rate_wait(struct dbgd *d)
{
	uint32_t n = d->o.max_per_minute;

	while (!d->stop && d->n_starts >= n) {
		uint64_t oldest = d->starts[d->n_starts % n];
		uint64_t until = oldest + 60000000000ULL, t = now_ns();
		struct timespec ts;

		if (t >= until)
			break;
		clock_gettime(CLOCK_REALTIME, &ts);
		t = until - t;
		ts.tv_sec += t / 1000000000ULL;
		ts.tv_nsec += t % 1000000000ULL;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&d->cv, &d->mu, &ts);
	}
	return !d->stop;
}

/* The cache directory and its parent, private (errors: the download
 * fails, and is counted). */
static void make_cache_dir(const char *path)
{
	char parent[4096];
	char *slash;

	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = 0;
		mkdir(parent, 0700);
	}
	mkdir(path, 0700);
}

static void *worker(void *arg)
{
	struct dbgd *d = arg;
	debuginfod_client *c = d->lib.begin();
	/* 0.188 writes its trace with dprintf even to no descriptor (-1),
	 * and glibc's dprintf leaks its 8 KiB buffer on a bad descriptor:
	 * once per download.  /dev/null takes the trace instead. */
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (c) {
		d->lib.set_progressfn(c, progress);
		if (null >= 0)
			d->lib.set_verbose_fd(c, null);
	}
	pthread_mutex_lock(&d->mu);
	for (;;) {
		struct dbgd_item it;
		uint64_t t0, key;
		char *path = NULL;
		int rc;

		while (!d->stop && !d->q_len)
			pthread_cond_wait(&d->cv, &d->mu);
		if (d->stop || !rate_wait(d))
			break;
		it = d->q[d->q_head];
		d->q_head = (d->q_head + 1) % d->o.max_queue;
		d->q_len--;
		d->in_flight = true;
		d->starts[d->n_starts++ % d->o.max_per_minute] = now_ns();
		pthread_mutex_unlock(&d->mu);

		if (d->own_cache)
			make_cache_dir(d->cache);
		t0 = now_ns();
		d->deadline_ns = t0 + d->o.max_seconds * 1000000000ULL;
		d->abort_reason = 0;
		rc = c ? d->lib.find_debuginfo(c, it.id, it.len, &path) : -ENOMEM;
		if (rc >= 0)
			close(rc);
		free(path);
		if (rc < 0 && d->abort_reason)
			rc = d->abort_reason;

		pthread_mutex_lock(&d->mu);
		d->st.fetch_ns += now_ns() - t0;
		key = id_key(it.id, it.len);
		if (rc >= 0) {
			d->st.fetched++;
			hm_del(&d->state, key);
		} else {
			if (rc == -ENOENT)
				d->st.not_found++;
			else if (rc == -ETIMEDOUT)
				d->st.timeouts++;
			else if (rc == -EFBIG)
				d->st.too_big++;
			else
				d->st.errors++;
			/* remembered for the run, within a bound: past it the
			 * id is asked again, later, and counted again */
			if (d->state.count < DBGD_MAX_FAILED)
				hm_put(&d->state, key, ST_FAILED);
			else
				hm_del(&d->state, key);
			/* most files are on no server: not worth a line */
			if (rc != -ENOENT)
				log_warn_once("debuginfod: a fetch failed: %s (more are counted in debuginfod_fetches_total)",
					      strerror(-rc));
		}
		d->in_flight = false;
		d->gen++;
	}
	pthread_mutex_unlock(&d->mu);
	if (c)
		d->lib.end(c);
	if (null >= 0)
		close(null);
	return NULL;
}

/* Set an environment variable the library reads, unless the user did. */
static void env_default(const char *name, unsigned long long v)
{
	char buf[32];

	if (getenv(name))
		return;
	snprintf(buf, sizeof(buf), "%llu", v);
	setenv(name, buf, 0);
}

static int cache_dir(struct dbgd *d)
{
	const char *p = getenv(DEBUGINFOD_CACHE_PATH_ENV_VAR);
	const char *home = getenv("HOME");
	const char *xdg = getenv("XDG_CACHE_HOME");
	int n;

	if (!p && d->o.cache_path) {
		/* made on the first download: the daemon's cache directory
		 * may not exist yet */
		setenv(DEBUGINFOD_CACHE_PATH_ENV_VAR, d->o.cache_path, 0);
		p = d->o.cache_path;
		d->own_cache = true;
	}
	/* the library's own default otherwise */
	if (p)
		n = snprintf(d->cache, sizeof(d->cache), "%s", p);
	else if (xdg)
		n = snprintf(d->cache, sizeof(d->cache), "%s/debuginfod_client", xdg);
	else
		n = snprintf(d->cache, sizeof(d->cache), "%s/.cache/debuginfod_client",
			     home ? home : "/");
	return n < 0 || (size_t)n >= sizeof(d->cache) ? -ENAMETOOLONG : 0;
}

int dbgd_new(const struct dbgd_opts *o, struct dbgd **out)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	struct dbgd *d;
	int err;

	*out = NULL;
	if (!urls || !urls[strspn(urls, " \t")])
		return -ENOENT;
	if (owner)
		return -EBUSY; /* one client a process */
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	if (o)
		d->o = *o;
	if (!d->o.max_seconds)
		d->o.max_seconds = DBGD_MAX_SECONDS;
	if (!d->o.max_bytes)
		d->o.max_bytes = DBGD_MAX_BYTES;
	if (!d->o.max_queue)
		d->o.max_queue = DBGD_MAX_QUEUE;
	if (!d->o.max_per_minute)
		d->o.max_per_minute = DBGD_MAX_PER_MINUTE;
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
	hm_init(&d->state);
	d->q = calloc(d->o.max_queue, sizeof(*d->q));
	d->starts = calloc(d->o.max_per_minute, sizeof(*d->starts));
	err = !d->q || !d->starts ? -ENOMEM : load_lib(&d->lib);
	if (!err)
		err = cache_dir(d);
	if (err)
		goto fail;
	/* the library's own bounds, as ours, unless the user set them; the
	 * progress callback enforces ours whatever they are */
	env_default(DEBUGINFOD_TIMEOUT_ENV_VAR, d->o.max_seconds);
	env_default(DEBUGINFOD_MAXTIME_ENV_VAR, d->o.max_seconds);
	env_default(DEBUGINFOD_MAXSIZE_ENV_VAR, d->o.max_bytes);
	owner = d;
	err = -pthread_create(&d->worker, NULL, worker, d);
	if (err) {
		owner = NULL;
		goto fail;
	}
	d->started = true;
	log_info("debuginfod: %s, cache %s", urls, d->cache);
	*out = d;
	return 0;
fail:
	dbgd_free(d);
	return err;
}

void dbgd_free(struct dbgd *d)
{
	if (!d)
		return;
	if (d->started) {
		pthread_mutex_lock(&d->mu);
		__atomic_store_n(&d->stop, true, __ATOMIC_RELAXED);
		pthread_cond_broadcast(&d->cv);
		pthread_mutex_unlock(&d->mu);
		pthread_join(d->worker, NULL);
		owner = NULL;
	}
	/* the library stays loaded: curl's global state is not ours to end */
	hm_free(&d->state);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d->starts);
	free(d->q);
	free(d);
}

/* The cached file of that build id: an fd, or -ENOENT.  An empty file is
 * the library's note of a miss. */
static int open_cached(struct dbgd *d, const uint8_t *id, size_t len)
{
	char h[2 * ID_MAX + 1], path[4096 + 2 * ID_MAX + 16];
	struct stat st;
	int fd;

	hex(id, len, h);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/debuginfo", d->cache,
			     h) >= sizeof(path))
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

int dbgd_fetch(const uint8_t *id, size_t id_len, void *arg)
{
	struct dbgd *d = arg;
	uint64_t key, v;
	int fd, err = -EAGAIN;

	if (!d || !id_len || id_len > ID_MAX)
		return -ENOENT;
	key = id_key(id, id_len);
	pthread_mutex_lock(&d->mu);
	if (hm_get(&d->state, key, &v)) {
		err = v == ST_FAILED ? -ENOENT : -EAGAIN;
		goto out;
	}
	pthread_mutex_unlock(&d->mu);
	fd = open_cached(d, id, id_len);
	pthread_mutex_lock(&d->mu);
	if (fd >= 0) {
		d->st.cache_hits++;
		err = fd;
		goto out;
	}
	if (d->q_len >= d->o.max_queue || hm_put(&d->state, key, ST_QUEUED)) {
		d->st.queue_full++;
		goto out;
	}
	memcpy(d->q[(d->q_head + d->q_len) % d->o.max_queue].id, id, id_len);
	d->q[(d->q_head + d->q_len) % d->o.max_queue].len = id_len;
	d->q_len++;
	d->last_queued_ns = now_ns();
	pthread_cond_signal(&d->cv);
out:
	pthread_mutex_unlock(&d->mu);
	return err;
}

void dbgd_prefetch_fd(struct dbgd *d, int fd)
{
	char path[4096];
	struct elfm *e = NULL;
	const uint8_t *id;
	size_t len;
	int got;

	if (!d || elfm_open_fd(fd, &e))
		return;
	if (elfm_section(e, ".debug_info") || elfm_build_id(e, &id, &len) ||
	    !len || len > ID_MAX)
		goto out;
	/* installed locally: debugfind finds it first */
	if (!dbgf_build_id_path(id, len, NULL, path, sizeof(path)) &&
	    !access(path, F_OK))
		goto out;
	got = dbgd_fetch(id, len, d);
	if (got >= 0)
		close(got);
out:
	elfm_free(e);
}

bool dbgd_busy(struct dbgd *d)
{
	bool busy;

	pthread_mutex_lock(&d->mu);
	busy = (d->q_len || d->in_flight) &&
	       now_ns() - d->last_queued_ns < DBGD_BUSY_NS;
	pthread_mutex_unlock(&d->mu);
	return busy;
}

uint64_t dbgd_generation(struct dbgd *d)
{
	uint64_t g;

	pthread_mutex_lock(&d->mu);
	g = d->gen;
	pthread_mutex_unlock(&d->mu);
	return g;
}

void dbgd_get_stats(struct dbgd *d, struct dbgd_stats *out)
{
	pthread_mutex_lock(&d->mu);
	*out = d->st;
	out->queued = d->q_len + d->in_flight;
	pthread_mutex_unlock(&d->mu);
}
