// SPDX-License-Identifier: Apache-2.0
/* Separate debug files: by build id, .gnu_debuglink, a fetch hook. */
#include "debugfind.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "budget.h"

/*
 * The names come from the user's file: a debuglink name, and the file's
 * own directory, which its owner controls.  Root must not open, through
 * them, anything the user could not (a symlink "x.debug -> /etc/shadow"),
 * nor read a file of any size to check its CRC on the thread that
 * extracts.  So: no realpath(); every candidate is opened under a
 * directory fd, without symlinks in the user's directories (openat2
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, else one component at a time
 * with O_NOFOLLOW), only if it is a regular file; a sparse one is not
 * used, and a CRC reads at most DEBUG_CRC_MAX bytes within DEBUG_CRC_NS
 * through a small buffer (page cache, not our memory).
 */

/* A larger debug-link candidate is not CRC'd: files_over_budget{reason=
 * "crc_size"}.  Real debug files this large carry a build id and are
 * found under the debug directory by it, with no CRC. */
#define DEBUG_CRC_MAX (512ULL << 20)
/* A CRC that takes longer (a slow or contended disk) is given up:
 * files_over_budget{reason="crc_time"}.  512 MiB take about 0.3 s. */
#define DEBUG_CRC_NS (2ULL * 1000000000ULL)
#define DEBUG_CRC_CHUNK (256 * 1024)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* CRC-32 of the first size bytes of fd.  0, -EIO when the file is
 * shorter, -ETIMEDOUT past the deadline (counted), -errno. */
static int file_crc(int fd, uint64_t size, uint32_t *out)
{
	uint64_t done = 0, deadline = mono_ns() + DEBUG_CRC_NS;
	uLong c = crc32(0L, Z_NULL, 0);
	uint8_t *buf = malloc(DEBUG_CRC_CHUNK);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (done < size) {
		size_t want = size - done > DEBUG_CRC_CHUNK ? DEBUG_CRC_CHUNK
							    : size - done;
		ssize_t n = pread(fd, buf, want, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		c = crc32(c, buf, (uInt)n);
		done += (uint64_t)n;
		if (mono_ns() > deadline) {
			budget_over(BUDGET_CRC_TIME);
			err = -ETIMEDOUT;
			break;
		}
	}
	free(buf);
	*out = (uint32_t)c;
	return err;
}

/* openat2(2) where the C library has no wrapper. */
static int sys_openat2(int dirfd, const char *rel, uint64_t flags,
		       uint64_t resolve)
{
#ifdef SYS_openat2
	struct open_how how = { .flags = flags, .resolve = resolve };

	return (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
#else
	errno = ENOSYS;
	return -1;
#endif
}

bool dbgf_no_openat2;

/*
 * An O_PATH fd for rel under dirfd (rel absolute: from /, dirfd unused),
 * never leaving dirfd (".." out of it, absolute symlinks) and, with
 * nofollow, through no symlink at all.  -ELOOP for a symlink, -EXDEV for
 * a way out, -errno else.
 */
static int open_under(int dirfd, const char *rel, bool want_dir,
		      bool nofollow)
{
	uint64_t resolve = RESOLVE_NO_MAGICLINKS |
			   (nofollow ? RESOLVE_NO_SYMLINKS : 0) |
			   (rel[0] == '/' ? 0 : RESOLVE_BENEATH);
	char comp[NAME_MAX + 1];
	const char *p = rel;
	int fd, next;

	if (rel[0] == '/' && dirfd != AT_FDCWD)
		return -EXDEV;
	fd = dbgf_no_openat2 ? -1 :
	     sys_openat2(rel[0] == '/' ? AT_FDCWD : dirfd, rel,
			 O_PATH | O_CLOEXEC | (want_dir ? O_DIRECTORY : 0),
			 resolve);
	if (fd >= 0)
		return fd;
	if (!dbgf_no_openat2 && errno != ENOSYS)
		return -errno;
	/* No openat2: walk the components, each opened O_NOFOLLOW */
	fd = rel[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
			   : fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	while (*p) {
		size_t n = strcspn(p, "/");
		struct stat st;
		bool last;

		last = p[n] == 0 || p[n + strspn(p + n, "/")] == 0;
		if (n == 0 || (n == 1 && p[0] == '.')) {
			p += n + (p[n] == '/');
			continue;
		}
		if (n > NAME_MAX || (n == 2 && !strncmp(p, "..", 2))) {
			close(fd);
			return n > NAME_MAX ? -ENAMETOOLONG : -EXDEV;
		}
		memcpy(comp, p, n);
		comp[n] = 0;
		next = openat(fd, comp, O_PATH | O_CLOEXEC |
					  (nofollow ? O_NOFOLLOW : 0));
		close(fd);
		if (next < 0)
			return -errno;
		fd = next;
		if (fstat(fd, &st) < 0) {
			next = -errno;
			close(fd);
			return next;
		}
		if (S_ISLNK(st.st_mode) || (!last && !S_ISDIR(st.st_mode))) {
			close(fd);
			return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
		}
		p += n;
		p += strspn(p, "/");
	}
	return fd;
}

/* rel under dirfd as open_under(), opened for reading only when it is a
 * regular file (a FIFO would block us, a device's open run its driver):
 * the fd, -ENOEXEC for anything else, or open_under()'s error. */
static int open_regular_under(int dirfd, const char *rel, bool nofollow)
{
	char self[32];
	struct stat st;
	int pfd, fd;

	pfd = open_under(dirfd, rel, false, nofollow);
	if (pfd < 0)
		return pfd;
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(pfd);
		return -ENOEXEC;
	}
	/* that very inode, not whatever the name leads to by now */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	close(pfd);
	return fd;
}

/* Use the open file fd as a debug file for e: another file, not sparse,
 * an ELF, and, with check_crc, of that CRC-32 (bounded), else of the
 * same build id. */
static int try_debug_file(const struct elfm *e, int fd, bool check_crc,
			  uint32_t crc, struct elfm **out)
{
	const uint8_t *id1, *id2;
	struct elfm *d = NULL;
	struct stat st;
	size_t n1, n2;
	uint32_t c;
	int err;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (elfm_same_file(e, &st))
		return -ENOENT; /* the debuglink names the file itself */
	/* a 4 GiB hole costs nothing to make and seconds to read */
	if (budget_is_sparse(&st)) {
		budget_over(BUDGET_SPARSE);
		return -EFBIG;
	}
	if (check_crc) {
		if ((uint64_t)st.st_size > DEBUG_CRC_MAX) {
			budget_over(BUDGET_CRC_SIZE);
			return -EFBIG;
		}
		err = file_crc(fd, (uint64_t)st.st_size, &c);
		if (err)
			return err;
		if (c != crc)
			return -ENOENT;
	}
	err = elfm_open_fd(fd, &d);
	if (err)
		return err;
	if (!check_crc &&
	    (elfm_build_id(e, &id1, &n1) != 0 || elfm_build_id(d, &id2, &n2) != 0 ||
	     n1 != n2 || memcmp(id1, id2, n1) != 0)) {
		elfm_free(d);
		return -ENOENT;
	}
	*out = d;
	return 0;
}

/* Open rel under dirfd and try it; 0 when it is e's debug file.
 * *refused is set when the path went through a symlink or out. */
static int try_candidate(const struct elfm *e, int dirfd, const char *rel,
			 bool nofollow, bool check_crc, uint32_t crc,
			 bool *refused, struct elfm **out, int *keep_fd)
{
	int fd = open_regular_under(dirfd, rel, nofollow), err;

	if (fd == -ELOOP || fd == -EXDEV)
		*refused = true;
	if (fd < 0)
		return fd;
	err = try_debug_file(e, fd, check_crc, crc, out);
	if (!err && keep_fd)
		*keep_fd = fd;
	else
		close(fd);
	return err;
}

/* .build-id/xx/yyyy.debug for that id, relative to a debug directory. */
static int build_id_rel(const uint8_t *id, size_t id_len, char *buf,
			size_t cap)
{
	size_t n, i;

	if (id_len < 2 || id_len > 64)
		return -EINVAL;
	/* 10 + 2 + 1 + 2 * (id_len - 1) + 6 and the NUL */
	if (cap < 2 * id_len + 18)
		return -ENAMETOOLONG;
	n = (size_t)snprintf(buf, cap, ".build-id/%02x/", id[0]);
	for (i = 1; i < id_len; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%02x", id[i]);
	snprintf(buf + n, cap - n, ".debug");
	return 0;
}

int dbgf_build_id_path(const uint8_t *id, size_t id_len,
		       const char *debug_dir, char *buf, size_t cap)
{
	char rel[2 * 64 + 18];
	int err = build_id_rel(id, id_len, rel, sizeof(rel)), n;

	if (err)
		return err;
	n = snprintf(buf, cap, "%s/%s", debug_dir ? debug_dir : DBGF_DEBUG_DIR,
		     rel);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

static dbgf_fetch_fn fetch_fn;
static void *fetch_arg;

void dbgf_set_fetch(dbgf_fetch_fn fn, void *arg)
{
	fetch_fn = fn;
	fetch_arg = arg;
}

/* The candidate the fetch hook gives for e's build id, if any. */
static int try_fetch(const struct elfm *e, struct elfm **out, int *keep_fd)
{
	const uint8_t *id;
	size_t id_len;
	int fd, err;

	if (!fetch_fn || elfm_build_id(e, &id, &id_len) != 0)
		return -ENOENT;
	fd = fetch_fn(id, id_len, fetch_arg);
	if (fd < 0)
		return fd;
	err = try_debug_file(e, fd, false, 0, out);
	if (!err && keep_fd)
		*keep_fd = fd;
	else
		close(fd);
	return err;
}

/* dbgf_open; with keep_fd, the debug file's descriptor stays open there */
static int find(const struct elfm *e, const char *path, const char *debug_dir,
		struct elfm **out, char *found, size_t found_len, int *keep_fd)
{
	char rel[PATH_MAX], dir[PATH_MAX];
	const char *name = NULL, *where = "", *mirror;
	bool have_link, refused = false;
	int dd = -1, own = -1, k, n, err = -ENOENT;
	const uint8_t *id;
	uint32_t crc = 0;
	size_t id_len;

	*out = NULL;
	if (!debug_dir)
		debug_dir = DBGF_DEBUG_DIR;
	have_link = elfm_debuglink(e, &name, &crc) == 0;
	/* The name is a file name, never a path. */
	if (have_link && (strchr(name, '/') || strlen(name) > NAME_MAX ||
			  !strcmp(name, ".") || !strcmp(name, "..")))
		have_link = false;
	/* the administrator's directory: trusted, symlinks inside it too */
	dd = open(debug_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dd >= 0 && elfm_build_id(e, &id, &id_len) == 0 &&
	    build_id_rel(id, id_len, rel, sizeof(rel)) == 0) {
		err = try_candidate(e, dd, rel, false, false, 0, &refused, out,
				    keep_fd);
		if (err == 0) {
			where = debug_dir;
			goto found;
		}
	}
	err = -ENOENT;
	if (!have_link || !path || path[0] != '/')
		goto fetch;
	snprintf(rel, sizeof(rel), "%s", path);
	snprintf(dir, sizeof(dir), "%s", dirname(rel));
	mirror = dir + strspn(dir, "/"); /* debug_dir/<dir>/, relative */
	/* the user's directory: no symlink anywhere on the way */
	own = open_under(AT_FDCWD, dir, true, true);
	if (own == -ELOOP || own == -EXDEV)
		refused = true;
	for (k = 0; k < 3; k++) {
		int at = k < 2 ? own : dd;

		if (at < 0)
			continue;
		if (k == 0)
			n = snprintf(rel, sizeof(rel), "%s", name);
		else if (k == 1)
			n = snprintf(rel, sizeof(rel), ".debug/%s", name);
		else
			n = snprintf(rel, sizeof(rel), "%s%s%s", mirror,
				     mirror[0] ? "/" : "", name);
		if (n < 0 || (size_t)n >= sizeof(rel))
			continue;
		err = try_candidate(e, at, rel, k < 2, true, crc, &refused, out,
				    keep_fd);
		if (err == 0) {
			where = k < 2 ? dir : debug_dir;
			goto found;
		}
	}
fetch:
	/* nothing local: the remote source, last (it may be slow) */
	err = try_fetch(e, out, keep_fd);
	if (err) {
		/* "later" (a download queued) stays itself for callers
		 * that can ask again */
		if (err != -EAGAIN)
			err = -ENOENT;
		goto out;
	}
	snprintf(rel, sizeof(rel), "(fetched)");
found:
	if (found && found_len)
		snprintf(found, found_len, "%s%s%s", where,
			 where[0] && where[1] ? "/" : "", rel);
out:
	/* one count per file, however many candidates were refused */
	if (refused)
		budget_over(BUDGET_DEBUG_PATH);
	if (own >= 0)
		close(own);
	if (dd >= 0)
		close(dd);
	return err;
}

int dbgf_open(const struct elfm *e, const char *path, const char *debug_dir,
	      struct elfm **out, char *found, size_t found_len)
{
	return find(e, path, debug_dir, out, found, found_len, NULL);
}

int dbgf_open_fd(const struct elfm *e, const char *path, const char *debug_dir)
{
	struct elfm *d = NULL;
	int fd = -1, err;

	err = find(e, path, debug_dir, &d, NULL, 0, &fd);
	if (err)
		return err;
	elfm_free(d);
	return fd;
}
