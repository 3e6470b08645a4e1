// SPDX-License-Identifier: Apache-2.0
/*
 * What the process manager reads from /proc: maps lines, the vDSO's image,
 * a mapping's file opened through map_files and checked against the line,
 * a process' comm, executable and container, and pm_locate's one-shot
 * lookup of a pc.
 */
#include "procmgr.h"
#include "procmgr_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fsutil.h"
#include "log.h"

/* ---- maps parsing ----------------------------------------------------- */

int pm_parse_maps_line(char *line, uint64_t *start, uint64_t *end,
		       char perms[5], uint64_t *offset, dev_t *dev,
		       uint64_t *inode, char **path)
{
	unsigned long long s, e, off, ino;
	unsigned int major, minor;
	int pos = 0;
	char *p;

	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &s, &e, perms,
		   &off, &major, &minor, &ino, &pos) < 7 || !pos || e <= s)
		return -EINVAL;
	/* callers read perms[0..3] */
	if (strlen(perms) != 4)
		return -EINVAL;
	*start = s;
	*end = e;
	*offset = off;
	*dev = makedev(major, minor);
	*inode = ino;
	p = line + pos;
	p[strcspn(p, "\n")] = 0;
	*path = p;
	return 0;
}

/* PROCMAP_QUERY (linux/fs.h from 6.11; Debian 12's headers predate it) */
struct procmap_query {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset;
	uint64_t inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
_Static_assert(sizeof(struct procmap_query) == 104, "procmap_query layout");
#define PROCMAP_QUERY _IOWR('f', 17, struct procmap_query)
#define PMQ_READABLE 0x01
#define PMQ_WRITABLE 0x02
#define PMQ_EXECUTABLE 0x04
#define PMQ_SHARED 0x08
#define PMQ_COVERING_OR_NEXT 0x10

/* set once a kernel said it has no such ioctl: the text from then on */
static bool no_procmap_query;

int pm_maps_open(struct pm_maps *it, pid_t pid, bool text_only)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	it->text = NULL;
	it->next = 0;
	it->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (it->fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	if (text_only || __atomic_load_n(&no_procmap_query, __ATOMIC_RELAXED)) {
		it->text = fdopen(it->fd, "re");
		if (!it->text) {
			close(it->fd);
			return -errno;
		}
	}
	return 0;
}

/* The text's next executable line that ends above it->next, but
 * [vsyscall]: the kernel's gate page, listed by the text, not a mapping
 * the query finds (nor one any process' own code runs in). */
static int next_text(struct pm_maps *it, struct pm_vma *v)
{
	while (fgets(it->buf, sizeof(it->buf), it->text))
		if (!pm_parse_maps_line(it->buf, &v->start, &v->end, v->perms,
					&v->offset, &v->dev, &v->ino,
					&v->path) &&
		    v->perms[2] == 'x' && v->end > it->next &&
		    strcmp(v->path, "[vsyscall]"))
			return 1;
	return 0;
}

int pm_maps_next(struct pm_maps *it, struct pm_vma *v)
{
	struct procmap_query q = {
		.size = sizeof(q),
		.query_flags = PMQ_COVERING_OR_NEXT | PMQ_EXECUTABLE,
		.query_addr = it->next,
		.vma_name_size = sizeof(it->buf),
		.vma_name_addr = (uintptr_t)it->buf,
	};

	if (it->text)
		return next_text(it, v);
	if (ioctl(it->fd, PROCMAP_QUERY, &q) < 0) {
		/* ENOENT: no mapping from there on; ESRCH: the process
		 * has no memory (a kernel thread, or gone) */
		if (errno == ENOENT || errno == ESRCH)
			return 0;
		if (errno != ENOTTY && errno != EINVAL &&
		    errno != ENAMETOOLONG)
			return -errno;
		/* a kernel without the query (ENOTTY), or a path longer
		 * than the buffer: the text, from where the query was */
		if (errno != ENAMETOOLONG)
			__atomic_store_n(&no_procmap_query, true,
					 __ATOMIC_RELAXED);
		it->text = fdopen(it->fd, "re");
		if (!it->text)
			return -errno;
		return next_text(it, v);
	}
	v->start = q.vma_start;
	v->end = q.vma_end;
	v->offset = q.vma_offset;
	v->ino = q.inode;
	v->dev = makedev(q.dev_major, q.dev_minor);
	v->perms[0] = q.vma_flags & PMQ_READABLE ? 'r' : '-';
	v->perms[1] = q.vma_flags & PMQ_WRITABLE ? 'w' : '-';
	v->perms[2] = 'x';
	v->perms[3] = q.vma_flags & PMQ_SHARED ? 's' : 'p';
	v->perms[4] = 0;
	it->buf[q.vma_name_size ? q.vma_name_size - 1 : 0] = 0;
	v->path = it->buf;
	it->next = q.vma_end;
	return 1;
}

int pm_maps_rewind(struct pm_maps *it)
{
	it->next = 0;
	if (it->text && fseek(it->text, 0, SEEK_SET))
		return -errno;
	return 0;
}

void pm_maps_close(struct pm_maps *it)
{
	if (it->text)
		fclose(it->text);
	else if (it->fd >= 0)
		close(it->fd);
	it->text = NULL;
	it->fd = -1;
}

int pm_vdso_image(const void **data, size_t *len)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct pm_maps it;
	struct pm_vma v;
	int err;

	*len = 0;
	if (!base)
		return -ENOENT;
	/* the vDSO is executable: the first mapping the iterator lists
	 * from its address */
	err = pm_maps_open(&it, getpid(), false);
	if (err)
		return err;
	it.next = base;
	if (pm_maps_next(&it, &v) > 0 && v.start == base)
		*len = v.end - v.start;
	pm_maps_close(&it);
	*data = (const void *)base;
	return *len ? 0 : -ENOENT;
}

/* The vDSO as a file: the same image in every process; read it from our
 * own.  Returns the descriptor (the caller closes it) or a negative
 * errno. */
static int vdso_fd(void)
{
	const void *data;
	size_t len;
	int fd, err;

	err = pm_vdso_image(&data, &len);
	if (err)
		return err;
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	return fd;
}

struct exe_file *pm_get_vdso(struct pm *pm)
{
	int fd;

	if (pm->vdso_tried)
		return pm->vdso;
	pm->vdso_tried = true;
	fd = vdso_fd();
	if (fd < 0)
		return NULL;
	exe_get(pm->em, fd, "[vdso]", &pm->vdso);
	close(fd);
	return pm->vdso;
}

const char *pm_mismatch_name(unsigned reason)
{
	static const char *const names[PM_MISMATCH_COUNT] = {
		[PM_MISMATCH_INODE] = "inode",
		[PM_MISMATCH_DEVICE] = "device",
		[PM_MISMATCH_SIZE] = "size",
	};

	return reason < PM_MISMATCH_COUNT && names[reason] ? names[reason] : "?";
}

/* Whether fd is the file a maps line names: its device and inode, and a
 * size that holds the mapping's offset.  The path under /proc/PID/root is
 * the process' to change (a symlink swapped in after the mmap names any
 * file root can read), so what was opened is checked, not trusted; the
 * same check costs nothing through map_files.  On overlayfs the maps
 * line gives the underlying file's device and stat() the overlay's (the
 * inode number is the underlying one): there the inode must match.
 * Returns PM_MISMATCH_NONE or the reason it does not match. */
static enum pm_mismatch mapping_mismatch(int fd, const struct stat *st,
					 dev_t dev, uint64_t ino,
					 uint64_t offset)
{
	struct statfs sf;

	if (st->st_ino != ino)
		return PM_MISMATCH_INODE;
	if (st->st_dev != dev &&
	    (fstatfs(fd, &sf) < 0 || sf.f_type != OVERLAYFS_SUPER_MAGIC))
		return PM_MISMATCH_DEVICE;
	if ((uint64_t)st->st_size <= offset)
		return PM_MISMATCH_SIZE;
	return PM_MISMATCH_NONE;
}

int pm_path_mapping(pid_t pid, const struct ea_map *m, dev_t dev,
		    uint64_t ino, const char *path, struct stat *st,
		    enum pm_mismatch *why)
{
	char buf[4200];
	int fd;

	*why = PM_MISMATCH_NONE;
	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)pid, m->start, m->end);
	/* a process may map a device; the path in its root may be a FIFO
	 * or a link by the time we open it */
	fd = fs_path_regular(buf, st);
	if (fd < 0 && path[0] == '/') {
		/* map_files needs CAP_SYS_ADMIN (or CHECKPOINT_RESTORE):
		 * try the path in the process' root */
		snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int)pid, path);
		fd = fs_path_regular(buf, st);
	}
	if (fd >= 0 && (*why = mapping_mismatch(fd, st, dev, ino, m->offset))) {
		close(fd);
		fd = -ESTALE;
	}
	return fd;
}

int pm_open_mapping(pid_t pid, const struct ea_map *m, dev_t dev,
		    uint64_t ino, const char *path, enum pm_mismatch *why)
{
	struct stat st;
	int pfd = pm_path_mapping(pid, m, dev, ino, path, &st, why), fd;

	if (pfd < 0)
		return pfd;
	fd = fs_reopen(pfd);
	close(pfd);
	return fd;
}

static void read_container_id(struct pm_proc *p);

/* The process' name; with all, its executable and container too. */
void pm_read_proc_info(struct pm_proc *p, bool all)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(p->comm) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			buf[strcspn(buf, "\n")] = 0;
			memcpy(p->comm, buf, strlen(buf) + 1);
		}
	}
	if (!all)
		return;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)p->pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = 0;
		free(p->exe_path);
		p->exe_path = strdup(buf);
	}
	read_container_id(p);
}

int pm_proc_stat(pid_t pid, struct pm_stat *out)
{
	unsigned long long utime, stime, start;
	char path[32], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	/* "pid (comm) S ppid ...": the comm may hold spaces and parentheses;
	 * after it, fields 3 (state), 14 and 15 (utime, stime: the whole
	 * thread group's) and 22 (starttime) */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' ||
	    sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu "
			  "%llu %*d %*d %*d %*d %*d %*d %llu",
		   &out->state, &utime, &stime, &start) != 4)
		return -EINVAL;
	out->ticks = utime + stime;
	out->start = start;
	return 0;
}

char pm_proc_state(pid_t pid)
{
	struct pm_stat st;

	return pm_proc_stat(pid, &st) ? 0 : st.state;
}

static bool is_hex64(const char *p, size_t n)
{
	size_t i;

	if (n != 64)
		return false;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)p[i]))
			return false;
	return true;
}

bool pm_container_id(const char *text, char out[65])
{
	bool found = false;
	const char *p = text;

	/* every path element of every line; the last match wins (nested
	 * cgroups name the innermost container last) */
	while (*p) {
		size_t n = strcspn(p, "/\n:");
		const char *e = p, *id = NULL;

		if (n >= 64) {
			/* "<runtime>-<id>.scope", "<id>.scope" or "<id>" */
			size_t m = n;

			if (m > 6 && !strncmp(e + m - 6, ".scope", 6))
				m -= 6;
			/* "<58 characters>.scope" leaves fewer than 64 */
			if (m >= 64 && is_hex64(e + m - 64, 64) &&
			    (m == 64 || e[m - 65] == '-'))
				id = e + m - 64;
		}
		if (id) {
			memcpy(out, id, 64);
			out[64] = 0;
			found = true;
		}
		p += n;
		if (*p)
			p++;
	}
	return found;
}

static void read_container_id(struct pm_proc *p)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	p->container_id[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	pm_container_id(buf, p->container_id);
}

struct ea_map pm_vma_map(const struct pm_vma *v)
{
	return (struct ea_map){ .start = v->start, .end = v->end,
				.offset = v->offset, .prot = ea_prot(v->perms) };
}

/* The executable mapping of pid that holds pc (a file's, or the vDSO)
 * into *at, its path into path; then, if peers, the same file's other
 * executable mappings, as pm_sync uses them (at most max).  Returns how
 * many peers, or -ENOENT, -ESRCH. */
static int locate_maps(pid_t pid, uint64_t pc, struct pm_vma *at, char *path,
		       size_t len, struct ea_map *peers, unsigned max)
{
	struct pm_maps it;
	struct pm_vma v;
	unsigned k = 0;
	int err = pm_maps_open(&it, pid, false);

	if (err)
		return err;
	it.next = pc;
	err = pm_maps_next(&it, at);
	/* the first executable mapping that ends above pc: pc's if it
	 * begins at or below it, and a file's or the vDSO */
	if (err > 0 && (pc < at->start ||
			(!at->ino && strcmp(at->path, "[vdso]"))))
		err = 0;
	if (err > 0) {
		snprintf(path, len, "%s", at->path);
		at->path = path; /* it.buf is the next one's */
		err = pm_maps_rewind(&it);
	} else if (!err) {
		err = -ENOENT;
	}
	while (!err && k < max && pm_maps_next(&it, &v) > 0)
		if (v.dev == at->dev && v.ino == at->ino &&
		    v.start != at->start && (at->ino || !strcmp(v.path, path)))
			peers[k++] = pm_vma_map(&v);
	pm_maps_close(&it);
	return err ? err : (int)k;
}

int pm_locate(pid_t pid, uint64_t pc, int *fd, char *path, size_t len,
	      uint64_t *bias)
{
	struct ea_map set[BIAS_PEERS];
	struct ea_seg segs[EA_MAX_SEGS];
	struct pm_vma at;
	uint32_t n_segs;
	int k, err;

	*fd = -1;
	k = locate_maps(pid, pc, &at, path, len, set + 1, BIAS_PEERS - 1);
	if (k < 0)
		return k;
	set[0] = pm_vma_map(&at);
	if (!strcmp(path, "[vdso]")) {
		set[0].offset = 0;
		*fd = vdso_fd();
	} else {
		enum pm_mismatch why;

		*fd = pm_open_mapping(pid, &set[0], at.dev, at.ino, path, &why);
	}
	if (*fd < 0)
		return *fd;
	err = exe_read_segs(*fd, segs, &n_segs);
	if (err) {
		close(*fd);
		*fd = -1;
		return err;
	}
	ea_bias(segs, n_segs, set, (unsigned)k + 1, bias);
	return 0;
}
