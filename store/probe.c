// SPDX-License-Identifier: Apache-2.0
/*
 * The integrity probe: before this process maps an existing data file,
 * a child process opens it and walks every tree and the free list.  A
 * crash or an inconsistency there is the verdict "damaged".
 */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROBE_WALK_TIMEOUT_MS 120000 /* (store.h) */

/*
 * What the child reports: how far it got and the outcome.  A child that
 * dies (SIGSEGV, SIGBUS beyond the end of a truncated file, an LMDB
 * assertion's abort) reports by its death.
 */
struct probe_msg {
	int stage; /* enum probe_stage */
	int err;   /* -errno; -EUCLEAN: inconsistent */
};

const char *const st_db_names[4] = { "rec", "atime", "lru", "meta" };

/*
 * Where LMDB mapped data.mdb in this process, from /proc/self/maps: the
 * mapping that holds addr.  Returns its start, or 0.
 */
static uintptr_t probe_map_base(const void *addr)
{
	uintptr_t a = (uintptr_t)addr, base = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;

		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 &&
		    lo <= a && a < hi && off == 0 &&
		    strstr(line, "/data.mdb")) {
			base = lo;
			break;
		}
	}
	fclose(f);
	return base;
}

/*
 * Check where LMDB put a key or value.  Inline data must lie inside its
 * page: LMDB trusts the sizes in a node when it later deletes or moves
 * it.  A value on overflow pages (LMDB 0.9, data version 1, which is
 * what we link: its data starts right after a 16-byte page header) must
 * have a header that names its own page, the overflow flag and the page
 * count its size needs: LMDB frees those pages by that header, and
 * asserts on a bad one.
 */
static bool probe_data_ok(const MDB_val *v, size_t psize, uint64_t next_pgno,
			  uintptr_t *base)
{
	uintptr_t a = (uintptr_t)v->mv_data;
	struct {
		uint64_t pgno;
		uint16_t pad, flags;
		uint32_t pages;
	} ov;
	const uint16_t p_overflow = 0x04;

	_Static_assert(sizeof(ov) == 16, "LMDB page header");
	if (a % psize != sizeof(ov))
		return a % psize + v->mv_size <= psize;
	memcpy(&ov, (const void *)(a - sizeof(ov)), sizeof(ov));
	if (!*base)
		*base = probe_map_base(v->mv_data);
	return *base && ov.flags == p_overflow &&
	       ov.pages == (v->mv_size + sizeof(ov) - 1) / psize + 1 &&
	       ov.pgno >= NUM_METAS && ov.pgno + ov.pages <= next_pgno &&
	       a - sizeof(ov) == *base + ov.pgno * psize;
}

struct probe_env {
	size_t psize;
	uint64_t next_pgno;
	uintptr_t base;
};

static int probe_walk_db(MDB_txn *txn, MDB_dbi dbi, size_t key_len,
			 struct probe_env *pe, MDB_stat *st)
{
	uint8_t prev[LRU_KEY_LEN];
	size_t prev_len = 0;
	MDB_cursor *cur;
	MDB_val k, v;
	volatile uint8_t sink;
	int rc;

	rc = mdb_stat(txn, dbi, st);
	if (rc || (rc = mdb_cursor_open(txn, dbi, &cur)))
		return st_lmdb_err(rc);
	while (!(rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))) {
		size_t n = k.mv_size < prev_len ? k.mv_size : prev_len;
		int c = memcmp(prev, k.mv_data, n);
		bool ascending = c < 0 || (c == 0 && prev_len < k.mv_size);

		if ((key_len && k.mv_size != key_len) ||
		    k.mv_size > sizeof(prev) || (prev_len && !ascending) ||
		    !probe_data_ok(&k, pe->psize, pe->next_pgno, &pe->base) ||
		    !probe_data_ok(&v, pe->psize, pe->next_pgno, &pe->base))
			break;
		/* Touch the value's last byte: past the end of a truncated
		 * file, that is a SIGBUS here rather than in the daemon. */
		if (v.mv_size)
			sink = ((const uint8_t *)v.mv_data)[v.mv_size - 1];
		memcpy(prev, k.mv_data, k.mv_size);
		prev_len = k.mv_size;
	}
	(void)sink;
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc ? st_lmdb_err(rc) : -EUCLEAN;
}

/* The free list: each entry a count then that many page numbers, all
 * below the end of the file.  Returns the number of free pages, or
 * -EUCLEAN. */
static int64_t probe_walk_free(MDB_txn *txn, uint64_t next_pgno)
{
	int64_t total = 0;
	MDB_cursor *cur;
	MDB_val k, v;
	int rc;

	rc = mdb_cursor_open(txn, 0, &cur);
	if (rc)
		return st_lmdb_err(rc);
	while (!(rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))) {
		const size_t *ids = v.mv_data; /* LMDB's MDB_ID: size_t */
		size_t n, i;

		if (v.mv_size < sizeof(size_t) || v.mv_size % sizeof(size_t))
			break;
		memcpy(&n, ids, sizeof(n));
		if (n != v.mv_size / sizeof(size_t) - 1)
			break;
		for (i = 1; i <= n; i++) {
			size_t pg;

			memcpy(&pg, &ids[i], sizeof(pg));
			if (pg < NUM_METAS || pg >= next_pgno)
				break;
		}
		if (i <= n)
			break;
		total += (int64_t)n;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? total : rc ? st_lmdb_err(rc) : -EUCLEAN;
}

/* Open and walk the environment (in the child).  Returns 0 or -errno. */
static int probe_check(MDB_env *env)
{
	uint64_t used = NUM_METAS, next_pgno;
	struct probe_env pe = { 0 };
	MDB_envinfo info;
	MDB_cursor *cur;
	MDB_txn *txn;
	MDB_stat st;
	MDB_val k, v;
	int64_t free_pages;
	int rc, err = 0, tries;
	bool exact;

	/* The end of the file as our snapshot sees it.  mdb_env_info() reads
	 * the newest meta page, which a writer in another process may have
	 * moved on since the snapshot: only when the two name the same
	 * transaction can the pages be counted exactly.  Otherwise the newer
	 * end still bounds every page number (the file only grows). */
	for (tries = 0;; tries++) {
		mdb_env_info(env, &info);
		rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
		if (rc)
			return st_lmdb_err(rc);
		exact = mdb_txn_id(txn) == info.me_last_txnid;
		if (exact || tries == 20)
			break;
		mdb_txn_abort(txn);
	}
	if (!exact)
		mdb_env_info(env, &info);
	mdb_env_stat(env, &st);
	next_pgno = info.me_last_pgno + 1;
	pe.psize = st.ms_psize;
	pe.next_pgno = next_pgno;
	if (mdb_stat(txn, 0, &st) == 0)
		used += st.ms_branch_pages + st.ms_leaf_pages +
			st.ms_overflow_pages;
	rc = mdb_stat(txn, 1, &st);
	if (!rc) {
		used += st.ms_branch_pages + st.ms_leaf_pages +
			st.ms_overflow_pages;
		rc = mdb_cursor_open(txn, 1, &cur);
	}
	if (rc) {
		mdb_txn_abort(txn);
		return st_lmdb_err(rc);
	}
	/* The main database names the others; every one must be ours. */
	while (!err && !(rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))) {
		static const size_t key_lens[] = { KEY_LEN, KEY_LEN,
						   LRU_KEY_LEN, 0 };
		char name[16];
		MDB_dbi dbi;
		size_t i;

		memset(&st, 0, sizeof(st));
		for (i = 0; i < 4; i++) {
			if (k.mv_size == strlen(st_db_names[i]) &&
			    memcmp(k.mv_data, st_db_names[i], k.mv_size) == 0)
				break;
		}
		if (i == 4) {
			err = -EUCLEAN;
			break;
		}
		memcpy(name, st_db_names[i], strlen(st_db_names[i]) + 1);
		rc = mdb_dbi_open(txn, name, 0, &dbi);
		err = rc ? st_lmdb_err(rc) :
			   probe_walk_db(txn, dbi, key_lens[i], &pe, &st);
		used += st.ms_branch_pages + st.ms_leaf_pages +
			st.ms_overflow_pages;
	}
	mdb_cursor_close(cur);
	if (!err && rc != MDB_NOTFOUND)
		err = rc ? st_lmdb_err(rc) : -EUCLEAN;
	if (!err) {
		free_pages = probe_walk_free(txn, next_pgno);
		if (free_pages < 0)
			err = (int)free_pages;
		/* What LMDB's own audit checks: every page is either in a
		 * tree or free, exactly once. */
		else if (exact && used + (uint64_t)free_pages != next_pgno)
			err = -EUCLEAN;
	}
	mdb_txn_abort(txn);
	return err;
}

static void probe_send(int fd, int stage, int err)
{
	struct probe_msg m = { stage, err };
	ssize_t n;

	do
		n = write(fd, &m, sizeof(m));
	while (n < 0 && errno == EINTR);
}

static void probe_child(const char *dir, int fd)
{
	MDB_env *env;
	int rc, null;

	/* Quiet: a crash here is an expected outcome (LMDB's assertion
	 * text, a sanitizer's report); the parent logs one line. */
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null >= 0)
		dup2(null, STDERR_FILENO);
	probe_send(fd, PROBE_OPENING, 0);
	rc = mdb_env_create(&env);
	if (!rc)
		rc = mdb_env_set_maxdbs(env, 4);
	if (!rc)
		rc = mdb_env_open(env, dir, MDB_RDONLY | MDB_NOTLS, 0600);
	if (rc) {
		probe_send(fd, PROBE_OPENING, st_lmdb_err(rc));
		_exit(0);
	}
	probe_send(fd, PROBE_WALKING, 0);
	probe_send(fd, PROBE_DONE, probe_check(env));
	mdb_env_close(env);
	_exit(0);
}

/* Open and walk the environment in dir in a child process.  *stage gets
 * how far the child got, *err the error it reported. */
enum probe_result st_probe(const char *dir, unsigned open_timeout_ms,
			   int *stage, int *err)
{
	struct probe_msg m;
	bool died = false, done = false;
	int fds[2], status;
	uint64_t deadline;
	pid_t pid;

	*stage = 0;
	*err = 0;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		*err = -errno;
		return PROBE_ERRNO;
	}
	pid = fork();
	if (pid < 0) {
		*err = -errno;
		close(fds[0]);
		close(fds[1]);
		return PROBE_ERRNO;
	}
	if (pid == 0) {
		close(fds[0]);
		probe_child(dir, fds[1]);
	}
	close(fds[1]);
	deadline = st_now_ms() + open_timeout_ms;
	while (!done && !died) {
		struct pollfd pfd = { fds[0], POLLIN, 0 };
		uint64_t now = st_now_ms();
		ssize_t n;
		int r;

		if (now >= deadline)
			break;
		r = poll(&pfd, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n = read(fds[0], &m, sizeof(m));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(m)) { /* EOF before the verdict: it died */
			died = true;
			break;
		}
		*stage = m.stage;
		*err = m.err;
		if (m.stage == PROBE_WALKING)
			deadline = st_now_ms() + PROBE_WALK_TIMEOUT_MS;
		done = m.stage == PROBE_DONE || m.err;
	}
	close(fds[0]);
	if (!done && !died)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (died)
		return PROBE_BAD;
	if (!done)
		return PROBE_TIMEOUT;
	switch (*err) {
	case 0:
		return PROBE_OK;
	case -EUCLEAN:
	case -EINVAL: /* LMDB's answer to a meta page it cannot use */
	case -ENOMEM: /* a garbage map size */
		return PROBE_BAD;
	default:
		return PROBE_ERRNO;
	}
}
