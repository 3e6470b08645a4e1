// SPDX-License-Identifier: Apache-2.0
/*
 * Opening and closing: the trust checks on the directory, the registry
 * of directories open in this process, the probe and repair of an
 * existing file, the environment and its databases.
 */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

/* store.h states these bounds (store.h): keep in sync. */
#define MIN_LIMIT_PAGES 128
#define MAX_READERS 1022
#define MAX_OPEN_STORES 16 /* per process */

/* "dir/name" in buf; -ENAMETOOLONG when it does not fit. */
int st_join(char *buf, size_t size, const char *dir, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* ---- open and close ----------------------------------------------------- */

/* Directories open in this process: LMDB must not open one twice.  A
 * child forked since may open its own (it inherits this table). */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	struct store *s;
	pid_t pid;
} registry[MAX_OPEN_STORES];

static int registry_add(struct store *s)
{
	pid_t pid = getpid();
	int i, free_i = -1, err = 0;

	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < MAX_OPEN_STORES; i++) {
		if (!registry[i].s || registry[i].pid != pid) {
			if (free_i < 0)
				free_i = i;
		} else if (registry[i].s->dev == s->dev &&
			   registry[i].s->ino == s->ino) {
			err = -EBUSY;
		}
	}
	if (!err && free_i < 0)
		err = -EMFILE;
	if (!err) {
		registry[free_i].s = s;
		registry[free_i].pid = pid;
		s->registered = true;
	}
	pthread_mutex_unlock(&registry_lock);
	return err;
}

static void registry_del(struct store *s)
{
	int i;

	if (!s->registered)
		return;
	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < MAX_OPEN_STORES; i++) {
		if (registry[i].s == s && registry[i].pid == getpid())
			registry[i].s = NULL;
	}
	pthread_mutex_unlock(&registry_lock);
}

static int mkdir_p(const char *dir)
{
	char path[PATH_MAX];
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != 0)
			continue;
		path[i] = 0;
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return -errno;
		path[i] = dir[i];
	}
	return 0;
}

/* Whether the directory dir (resolved) and every directory above it can be
 * changed only by root or by us: owned by root or our uid, and not
 * writable by group or others (above dir, a sticky directory such as /tmp
 * is fine: others cannot rename what they do not own there).  A cache
 * another user can write feeds the daemon stack deltas it then trusts,
 * and lets them plant links that LMDB, running as root, would follow.
 * Returns 0, -EPERM with *why and the path that failed in bad, or another
 * negative errno. */
static int dir_trusted(const char *dir, const char **why, char *bad,
		       size_t len)
{
	char real[PATH_MAX];
	uid_t me = geteuid();
	struct stat st;
	size_t i, n;

	if (!realpath(dir, real))
		return -errno;
	n = strlen(real);
	for (i = n; i > 0; i--) {
		char c = real[i];
		bool last = i == n;

		if (c != '/' && c != 0)
			continue;
		real[i] = 0;
		if (lstat(real, &st) < 0)
			return -errno;
		*why = st.st_uid != 0 && st.st_uid != me ? "owner" :
		       !(st.st_mode & (S_IWGRP | S_IWOTH)) ? NULL :
		       last || !(st.st_mode & S_ISVTX) ? "mode" :
							   NULL;
		if (*why) {
			snprintf(bad, len, "%s", real);
			return -EPERM;
		}
		real[i] = c;
	}
	if (lstat("/", &st) < 0)
		return -errno;
	*why = st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) ? "owner" :
								      NULL;
	snprintf(bad, len, "/");
	return *why ? -EPERM : 0;
}

/* LMDB opens lock.mdb and data.mdb by name and follows links: in a
 * directory only root can write they are ours, but a link left there
 * (or a file hard-linked in) would have root write through it.  Returns
 * 0, or -ELOOP naming the file in bad. */
static int files_plain(const char *dir, char *bad, size_t len)
{
	static const char *const names[] = { "lock.mdb", "data.mdb" };
	struct stat st;
	unsigned i;
	int err;

	for (i = 0; i < 2; i++) {
		if ((err = st_join(bad, len, dir, names[i])))
			return err;
		if (lstat(bad, &st) < 0) {
			if (errno == ENOENT)
				continue;
			return -errno;
		}
		if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
			return -ELOOP;
	}
	return 0;
}

/* An LMDB assertion is about to abort(): the file must be damaged in a
 * way the probe did not see.  Leave a mark so that the next open moves
 * it aside instead of crashing again. */
static void on_lmdb_assert(MDB_env *env, const char *msg)
{
	struct store *s = mdb_env_get_userctx(env);
	char path[PATH_MAX];
	int fd;

	if (!s || st_join(path, sizeof(path), s->dir, "data.mdb.suspect"))
		return;
	log_error("store: %s: LMDB assertion failed (%s); the cache will be "
		  "rebuilt on the next start",
		  s->dir, msg);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0)
		close(fd);
}

static int open_dbs(struct store *s, uint64_t want_limit)
{
	MDB_dbi *dbis[] = { &s->dbi_rec, &s->dbi_atime, &s->dbi_lru,
			    &s->dbi_meta };
	uint32_t layout = 0;
	uint64_t stored = 0;
	MDB_txn *txn;
	int err = 0, i;

	/* Read-only first: existing databases need no write lock. */
	err = st_txn_begin(s, false, &txn);
	if (err)
		return err;
	for (i = 0; i < 4 && !err; i++)
		err = st_lmdb_err(mdb_dbi_open(txn, st_db_names[i], 0,
					       dbis[i]));
	if (!err)
		err = st_meta_get(s, txn, "layout", &layout, sizeof(layout));
	if (!err && st_meta_get(s, txn, "limit", &stored, sizeof(stored)))
		stored = 0;
	if (err)
		st_rtxn_end(s, txn);
	else
		err = st_rtxn_commit(s, txn);
	if (err && err != -ENOENT && err != -EUCLEAN)
		return err;
	if (!err && layout == LAYOUT_VERSION &&
	    (!want_limit || want_limit == stored || s->read_only)) {
		s->have_dbs = true;
		if (!want_limit && stored)
			s->limit = stored;
		return 0;
	}
	if (s->read_only) {
		/* Nothing we can read: every get misses. */
		s->have_dbs = false;
		return 0;
	}
	err = st_write_begin(s, s->lock_timeout_ms);
	if (err)
		return err;
	err = st_txn_begin(s, true, &txn);
	for (i = 0; i < 4 && !err; i++)
		err = st_lmdb_err(mdb_dbi_open(txn, st_db_names[i],
					       MDB_CREATE, dbis[i]));
	if (err) {
		if (txn)
			st_wtxn_abort(s, txn);
		goto out;
	}
	if (st_meta_get(s, txn, "layout", &layout, sizeof(layout)) ||
	    layout != LAYOUT_VERSION) {
		if (layout)
			log_info("store: %s: layout %u, want %u: emptying",
				 s->dir, layout, LAYOUT_VERSION);
		for (i = 0; i < 4 && !err; i++)
			err = st_lmdb_err(mdb_drop(txn, *dbis[i], 0));
		layout = LAYOUT_VERSION;
		if (!err)
			err = st_meta_put(s, txn, "layout", &layout,
					  sizeof(layout));
	}
	if (!err && st_meta_get(s, txn, "limit", &stored, sizeof(stored)))
		stored = 0;
	if (!err && want_limit && want_limit != stored)
		err = st_meta_put(s, txn, "limit", &want_limit,
				  sizeof(want_limit));
	if (err) {
		st_wtxn_abort(s, txn);
		goto out;
	}
	err = st_wtxn_commit(s, txn);
	if (!err) {
		s->have_dbs = true;
		if (!want_limit && stored)
			s->limit = stored;
	}
out:
	st_write_end(s);
	return err;
}

static int env_open(struct store *s)
{
	unsigned flags = MDB_NOTLS | MDB_NOMETASYNC;
	int rc;

	if (s->read_only)
		flags |= MDB_RDONLY;
	if (s->no_sync)
		flags |= MDB_NOSYNC;
	rc = mdb_env_create(&s->env);
	if (rc)
		return st_lmdb_err(rc);
	mdb_env_set_userctx(s->env, s);
	mdb_env_set_assert(s->env, on_lmdb_assert);
	rc = mdb_env_set_maxdbs(s->env, 4);
	if (!rc)
		rc = mdb_env_set_maxreaders(s->env, MAX_READERS);
	if (!rc)
		rc = mdb_env_set_mapsize(s->env, s->map_bytes);
	if (!rc)
		rc = mdb_env_open(s->env, s->dir, flags, 0600);
	if (rc) {
		mdb_env_close(s->env);
		s->env = NULL;
	}
	return st_lmdb_err(rc);
}

static void store_close(struct store *s)
{
	unsigned i;

	if (s->env) {
		for (i = 0; i < s->n_pool; i++)
			mdb_txn_abort(s->pool[i]);
		mdb_env_close(s->env);
	}
}

int store_open(const char *dir, const struct store_opts *opts,
	       struct store **out)
{
	struct store_opts o = opts ? *opts : (struct store_opts){ 0 };
	char path[PATH_MAX];
	struct stat st;
	struct store *s;
	bool suspect;
	int err;

	*out = NULL;
	if (!dir)
		dir = STORE_DEFAULT_DIR;
	s = st_calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->lock_fd = -1;
	s->read_only = o.read_only;
	s->no_sync = o.no_sync;
	s->lock_timeout_ms = o.lock_timeout_ms ? o.lock_timeout_ms : 2000;
	s->psize = (unsigned)sysconf(_SC_PAGESIZE);
	s->limit = o.max_bytes ? o.max_bytes : STORE_DEFAULT_MAX_BYTES;
	if (s->limit < (uint64_t)MIN_LIMIT_PAGES * s->psize)
		s->limit = (uint64_t)MIN_LIMIT_PAGES * s->psize;
	s->limit = (s->limit + s->psize - 1) / s->psize * s->psize;
	s->map_bytes = s->limit;
	s->dir = st_malloc(strlen(dir) + 1);
	if (s->dir)
		strcpy(s->dir, dir);
	s->pend = st_calloc(PENDING_MAX, sizeof(*s->pend));
	s->pend_work = st_calloc(PENDING_MAX, sizeof(*s->pend_work));
	s->pend_slot = st_calloc(PENDING_SLOTS, sizeof(*s->pend_slot));
	s->pool = st_calloc(POOL_MAX, sizeof(*s->pool));
	if (!s->dir || !s->pend || !s->pend_work || !s->pend_slot ||
	    !s->pool) {
		err = -ENOMEM;
		goto fail;
	}
	if (pthread_rwlock_init(&s->map_lock, NULL)) {
		err = -ENOMEM;
		goto fail;
	}
	pthread_mutex_init(&s->write_lock, NULL);
	pthread_mutex_init(&s->pend_lock, NULL);
	pthread_mutex_init(&s->pool_lock, NULL);
	s->locks_init = true;

	if (!s->read_only && (err = mkdir_p(dir)) < 0 && err != -EROFS &&
	    err != -EACCES) {
		log_error("store: %s: cannot create: %s", dir, st_err_str(err));
		goto fail;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		err = stat(dir, &st) < 0 ? -errno : -ENOTDIR;
		log_error("store: %s: %s; running without a cache", dir,
			  st_err_str(err));
		goto fail;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	{
		const char *why = NULL;

		err = dir_trusted(dir, &why, path, sizeof(path));
		if (err == -EPERM)
			log_error("store: %s: refused: %s is %s; it must belong "
				  "to root (or this user) and be writable by no "
				  "one else; running without a cache",
				  dir, path,
				  !strcmp(why, "owner") ? "owned by another user" :
							  "writable by group or others");
		else if (err)
			log_error("store: %s: %s; running without a cache", dir,
				  st_err_str(err));
		if (!err && (err = files_plain(dir, path, sizeof(path))))
			log_error("store: %s: refused: %s %s; running without "
				  "a cache",
				  dir, path,
				  err == -ELOOP ? "is a link (or not a plain "
						  "file)" :
						  st_err_str(err));
		if (err)
			goto fail;
	}
	err = registry_add(s);
	if (err) {
		log_error("store: %s: %s", dir,
			  err == -EBUSY ? "already open in this process" :
					  "too many stores open");
		goto fail;
	}
	if ((err = st_join(path, sizeof(path), dir, "data.mdb")))
		goto fail;
	if (!s->read_only && access(dir, W_OK) < 0) {
		if (errno != EROFS && errno != EACCES) {
			err = -errno;
			goto fail;
		}
		if (stat(path, &st) < 0) {
			err = -EROFS;
			log_error("store: %s: not writable and holds no cache; "
				  "running without a cache",
				  dir);
			goto fail;
		}
		log_info("store: %s: not writable: opening read-only", dir);
		s->read_only = true;
	}

	if (stat(path, &st) == 0 && st.st_size == 0 && !s->read_only) {
		/* Nothing to trust: LMDB starts an empty file afresh. */
	} else if (stat(path, &st) == 0) {
		char mark[PATH_MAX];

		suspect = st_join(mark, sizeof(mark), dir,
				  "data.mdb.suspect") == 0 &&
			  access(mark, F_OK) == 0;
		err = st_check_and_repair(s, suspect && !s->read_only);
		if (err)
			goto fail;
		if (suspect && !s->read_only)
			unlink(mark);
	} else if (errno != ENOENT) {
		err = -errno;
		log_error("store: %s: %s", path, st_err_str(err));
		goto fail;
	} else if (s->read_only) {
		err = -ENOENT;
		log_error("store: %s: no cache there (read-only)", dir);
		goto fail;
	}

	if (!s->read_only) {
		if ((err = st_join(path, sizeof(path), dir, "store.lock")))
			goto fail;
		s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
				  0600);
		if (s->lock_fd < 0) {
			err = -errno;
			log_error("store: %s: %s", path, st_err_str(err));
			goto fail;
		}
	}
	err = env_open(s);
	if (err == -EACCES && !s->read_only) {
		log_info("store: %s: cannot write: opening read-only", dir);
		s->read_only = true;
		err = env_open(s);
	}
	if (err) {
		log_error("store: %s: cannot open: %s; running without a cache",
			  dir, st_err_str(err));
		goto fail;
	}
	if (!s->read_only) {
		int dead;

		mdb_reader_check(s->env, &dead);
	}
	err = open_dbs(s, o.max_bytes ? s->limit : 0);
	if (err) {
		log_error("store: %s: cannot open its databases: %s; running "
			  "without a cache",
			  dir, st_err_str(err));
		goto fail;
	}
	if (s->limit != s->map_bytes) { /* the directory's limit */
		s->map_bytes = s->limit;
		err = st_lmdb_err(mdb_env_set_mapsize(s->env, s->map_bytes));
		if (err) {
			log_error("store: %s: map %llu bytes: %s", dir,
				  (unsigned long long)s->map_bytes,
				  st_err_str(err));
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	store_free(s);
	return err;
}

void store_free(struct store *s)
{
	if (!s)
		return;
	if (s->env && !s->read_only && s->have_dbs && !s->broken)
		store_flush(s);
	store_close(s);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	registry_del(s);
	if (s->locks_init) {
		pthread_rwlock_destroy(&s->map_lock);
		pthread_mutex_destroy(&s->write_lock);
		pthread_mutex_destroy(&s->pend_lock);
		pthread_mutex_destroy(&s->pool_lock);
	}
	free(s->pool);
	free(s->pend);
	free(s->pend_work);
	free(s->pend_slot);
	free(s->dir);
	free(s);
}
