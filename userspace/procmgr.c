// SPDX-License-Identifier: Apache-2.0
#include "procmgr.h"

#include <ctype.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fsutil.h"
#include "hashmap.h"
#include "log.h"

struct pm {
	struct exe_mgr *em;
	struct bpfmaps *bm;
	struct hm procs; /* pid -> struct pm_proc * */
	struct exe_file *vdso;
	bool vdso_tried;
	pm_synced_fn synced_fn;
	void *synced_arg;
	pm_forget_fn forget_fn;
	void *forget_arg;
	struct pm_stats st;
	uint64_t last_sweep_ns; /* last check of /proc for missed exits */
	/* During pm_sync_many: hash(device, inode) -> struct exe_file * of
	 * the files mapped so far, so a library that 50 processes map is
	 * opened once.  The file's descriptor keeps that inode alive, so the
	 * pair names no other file meanwhile. */
	struct hm scan_files;
	bool scanning;
	/* the request queue: a ring of PM_REQ_MAX entries, and pid -> the
	 * entry's sequence number for merging */
	struct pm_req {
		pid_t pid;
		unsigned why;
	} *reqs;
	uint64_t req_head, req_tail; /* sequence numbers: next out, next in */
	struct hm req_by_pid;
};

/* The exit tracepoint reports every loaded process; a stat of each
 * /proc/PID only catches what it missed (a full event ring), so it runs
 * this often, not on every pm_gc (a path lookup per process). */
#define PM_SWEEP_NS (10ULL * 1000000000ULL)

int pm_new(struct exe_mgr *em, struct bpfmaps *bm, struct pm **out)
{
	struct pm *pm = calloc(1, sizeof(*pm));

	*out = NULL;
	if (!pm)
		return -ENOMEM;
	pm->em = em;
	pm->bm = bm;
	hm_init(&pm->procs);
	hm_init(&pm->req_by_pid);
	pm->reqs = calloc(PM_REQ_MAX, sizeof(*pm->reqs));
	if (!pm->reqs) {
		free(pm);
		return -ENOMEM;
	}
	*out = pm;
	return 0;
}

void pm_set_synced_hook(struct pm *pm, pm_synced_fn fn, void *arg)
{
	pm->synced_fn = fn;
	pm->synced_arg = arg;
}

/* ---- trie prefixes -------------------------------------------------- */

int pm_range_prefixes(uint64_t start, uint64_t end, uint64_t *addrs,
		      uint32_t *lens, int max)
{
	int n = 0;

	/* the minimal cover of [start, end) by aligned power-of-two blocks:
	 * at each step the largest block aligned at start that fits */
	while (start < end && n < max) {
		int bits = start ? __builtin_ctzll(start) : 64;

		while (bits > 0 && (bits >= 64 || (1ULL << bits) > end - start))
			bits--;
		addrs[n] = start;
		lens[n] = 64 - bits;
		n++;
		start += 1ULL << bits;
	}
	return start < end ? -E2BIG : n;
}

#define MAX_PREFIXES 128

static int write_mapping(struct pm *pm, struct pm_proc *p,
			 const struct pm_mapping *m, bool add)
{
	uint64_t addrs[MAX_PREFIXES];
	uint32_t lens[MAX_PREFIXES], done;
	struct mapping_key keys[MAX_PREFIXES];
	struct mapping_info vals[MAX_PREFIXES];
	const struct mapping_info v = {
		.file_id = m->file ? m->file->id64 : 0,
		.bias = m->bias,
		.start = m->start,
		.end = m->end,
		.flags = m->flags,
		.interp_mask = m->file ? m->file->interp_mask : 0,
	};
	int n, i, err = 0;

	n = pm_range_prefixes(m->start, m->end, addrs, lens, MAX_PREFIXES);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		keys[i] = (struct mapping_key){
			.prefixlen = 32 + lens[i],
			.pid_be = htobe32((uint32_t)p->pid),
			.addr_be = htobe64(addrs[i]),
		};
		if (add)
			vals[i] = v; /* the batch takes one value per key */
		else if (bm_remove(pm->bm, BM_MAPPINGS, &keys[i]) == 0)
			pm->st.trie_entries--;
	}
	if (!add)
		return 0;
	/* the mapping's prefixes in one call */
	err = bm_update_batch(pm->bm, BM_MAPPINGS, keys, vals, (uint32_t)n,
			      &done);
	pm->st.trie_entries += err ? done : (uint32_t)n;
	if (err) {
		pm->st.trie_full++;
		log_warn_once("the BPF mapping trie is full: raise "
			      "-map-scale-factor");
	}
	return err;
}

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

int pm_vdso_image(const void **data, size_t *len)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	uint64_t start, end, off, ino;
	dev_t dev;
	char line[512], perms[5], *path;
	FILE *f;

	*len = 0;
	if (!base)
		return -ENOENT;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (pm_parse_maps_line(line, &start, &end, perms, &off, &dev, &ino,
				       &path) == 0 &&
		    start == base) {
			*len = end - start;
			break;
		}
	}
	fclose(f);
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

static struct exe_file *get_vdso(struct pm *pm)
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
		[PM_MISMATCH_STAT] = "stat",
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
static enum pm_mismatch mapping_mismatch(int fd, dev_t dev, uint64_t ino,
					 uint64_t offset)
{
	struct statfs sf;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return PM_MISMATCH_STAT;
	if (st.st_ino != ino)
		return PM_MISMATCH_INODE;
	if (st.st_dev != dev &&
	    (fstatfs(fd, &sf) < 0 || sf.f_type != OVERLAYFS_SUPER_MAGIC))
		return PM_MISMATCH_DEVICE;
	if ((uint64_t)st.st_size <= offset)
		return PM_MISMATCH_SIZE;
	return PM_MISMATCH_NONE;
}

/* The file of one maps line, opened: a descriptor, or a negative errno
 * (-ESTALE when what could be opened is another file; then *why says how
 * it differs). */
static int open_mapping(pid_t pid, const struct ea_map *m, dev_t dev,
			uint64_t ino, const char *path, enum pm_mismatch *why)
{
	char buf[4200];
	int fd;

	*why = PM_MISMATCH_NONE;
	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)pid, m->start, m->end);
	/* a process may map a device; the path in its root may be a FIFO
	 * or a link by the time we open it */
	fd = fs_open_regular(buf);
	if (fd < 0 && path[0] == '/') {
		/* map_files needs CAP_SYS_ADMIN (or CHECKPOINT_RESTORE):
		 * try the path in the process' root */
		snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int)pid, path);
		fd = fs_open_regular(buf);
	}
	if (fd >= 0 && (*why = mapping_mismatch(fd, dev, ino, m->offset))) {
		close(fd);
		fd = -ESTALE;
	}
	return fd;
}

static void read_container_id(struct pm_proc *p);

/* The process' name; with all, its executable and container too. */
static void read_proc_info(struct pm_proc *p, bool all)
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

static struct pm_proc *get_proc(struct pm *pm, pid_t pid)
{
	struct pm_proc *p;
	uint64_t v;

	if (hm_get(&pm->procs, (uint64_t)pid, &v))
		return (struct pm_proc *)(uintptr_t)v;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (hm_put(&pm->procs, (uint64_t)pid, (uintptr_t)p)) {
		free(p);
		return NULL;
	}
	pm->st.procs++;
	return p;
}

static bool same_mapping(const struct pm_mapping *a, const struct pm_mapping *b)
{
	return a->start == b->start && a->end == b->end &&
	       a->offset == b->offset && a->file == b->file;
}

static void drop_mappings(struct pm *pm, struct pm_proc *p)
{
	uint32_t i;

	for (i = 0; i < p->n_maps; i++) {
		write_mapping(pm, p, &p->maps[i], false);
		exe_put(pm->em, p->maps[i].file);
	}
	pm->st.mappings -= p->n_maps;
	free(p->maps);
	p->maps = NULL;
	p->n_maps = 0;
}

static uint64_t dev_ino_key(dev_t dev, uint64_t ino)
{
	uint64_t k[2] = { dev, ino };

	return hm_hash(k, sizeof(k), 0);
}

/* A file this pm_sync_many opened already under dev and ino, with a
 * reference. */
static struct exe_file *scanned_file(struct pm *pm, dev_t dev, uint64_t ino)
{
	struct exe_file *f;
	uint64_t v;

	if (!hm_get(&pm->scan_files, dev_ino_key(dev, ino), &v))
		return NULL;
	f = (struct exe_file *)(uintptr_t)v;
	if (f->dev != dev || f->ino != ino) /* a hash collision */
		return NULL;
	return exe_ref(f);
}

/* Only when the maps line names the inode f holds open: a file found by
 * content under another inode (a copy) is not kept alive by f. */
static void note_scanned(struct pm *pm, dev_t dev, uint64_t ino,
			 struct exe_file *f)
{
	if (f->dev == dev && f->ino == ino)
		hm_put(&pm->scan_files, dev_ino_key(dev, ino), (uintptr_t)f);
}

/* The other mappings of a file that settle its bias (elfaddr.h): a load
 * maps a file a handful of times; more only adds work. */
#define BIAS_PEERS 16

/* Each mapping's load bias, from its file's segments and the process'
 * other mappings of that file. */
static void set_biases(struct pm_mapping *ms, uint32_t n)
{
	struct ea_map em[BIAS_PEERS];
	uint32_t i, j, k;

	for (i = 0; i < n; i++) {
		if (!ms[i].file)
			continue;
		em[0] = (struct ea_map){ ms[i].start, ms[i].end, ms[i].offset,
					 ms[i].prot };
		for (j = 0, k = 1; j < n && k < BIAS_PEERS; j++)
			if (j != i && ms[j].file == ms[i].file)
				em[k++] = (struct ea_map){ ms[j].start, ms[j].end,
							   ms[j].offset,
							   ms[j].prot };
		ms[i].bias = exe_bias(ms[i].file, em, k);
	}
}

int pm_sync(struct pm *pm, pid_t pid)
{
	struct pm_mapping *nm = NULL, *tmp;
	uint32_t nn = 0, cap = 0, i, j;
	struct pid_info pi = { 0 };
	char path[64], line[4608];
	struct pm_proc *p;
	FILE *f;
	int err = 0;

	pm->st.syncs++;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		pm->st.sync_errors++;
		return errno == ENOENT ? -ESRCH : -errno;
	}
	p = get_proc(pm, pid);
	if (!p) {
		fclose(f);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, off, ino;
		struct pm_mapping m = { 0 };
		dev_t dev;
		char perms[5], *mpath;
		int fd = -1;

		if (pm_parse_maps_line(line, &start, &end, perms, &off, &dev, &ino,
				       &mpath) || perms[2] != 'x')
			continue;
		m.start = start;
		m.end = end;
		m.offset = off;
		if (!strcmp(mpath, "[vdso]")) {
			m.file = get_vdso(pm);
			if (!m.file)
				continue;
			exe_ref(m.file);
			m.flags = MAP_F_VDSO;
			m.offset = 0;
		} else if (!strcmp(mpath, "[vsyscall]")) {
			continue;
		} else if (ino == 0) {
			/* anonymous executable memory (JIT): walked by frame
			 * pointer; known, so its pcs do not trigger rescans */
			m.flags = MAP_F_FP_ONLY;
			m.bias = 0;
		} else {
			/* reuse the file of an identical old mapping */
			for (i = 0; i < p->n_maps; i++)
				if (p->maps[i].start == start &&
				    p->maps[i].end == end &&
				    p->maps[i].offset == off && p->maps[i].file &&
				    p->maps[i].file->ino == ino) {
					m.file = exe_ref(p->maps[i].file);
					break;
				}
			if (!m.file && pm->scanning)
				m.file = scanned_file(pm, dev, ino);
			if (!m.file) {
				struct ea_map em = { start, end, off, 0 };
				enum pm_mismatch why;

				fd = open_mapping(pid, &em, dev, ino, mpath, &why);
				if (why) {
					/* another file: none is used; known,
					 * walked by frame pointer, so that
					 * its pcs do not trigger rescans */
					pm->st.mismatch[why]++;
					m.flags = MAP_F_FP_ONLY;
				} else if (fd < 0) {
					continue;
				}
			}
			if (!m.file && fd >= 0) {
				pm->st.opens++;
				err = exe_get(pm->em, fd, mpath, &m.file);
				close(fd);
				if (err == -ENOEXEC) {
					/* code in a file that is not ELF: a
					 * JIT's buffer in shared memory (a
					 * shared mapping of /dev/zero or a
					 * memfd): anonymous code, as above */
					m.file = NULL;
					m.flags = MAP_F_FP_ONLY;
					m.bias = 0;
				} else if (err) {
					err = 0;
					continue;
				}
				err = 0;
				if (pm->scanning && m.file)
					note_scanned(pm, dev, ino, m.file);
			}
		}
		m.prot = ea_prot(perms);
		if (m.file) {
			if (m.file->deltas != EXE_DELTAS_LOADED)
				m.flags |= MAP_F_FP_ONLY;
			else
				m.flags |= MAP_F_DELTAS;
			if (m.file->interp_mask) {
				m.flags |= MAP_F_INTERP;
				pi.interp_mask |= m.file->interp_mask;
			}
		}
		if (nn == cap) {
			cap = cap ? cap * 2 : 32;
			tmp = realloc(nm, cap * sizeof(*nm));
			if (!tmp) {
				exe_put(pm->em, m.file);
				err = -ENOMEM;
				break;
			}
			nm = tmp;
		}
		nm[nn++] = m;
	}
	fclose(f);
	if (err) {
		for (i = 0; i < nn; i++)
			exe_put(pm->em, nm[i].file);
		free(nm);
		return err;
	}
	set_biases(nm, nn);
	if (nn == 0 && p->n_maps == 0) {
		/* a kernel thread or a zombie: nothing to unwind, no
		 * executable, no container; a name for its kernel stacks */
		free(nm);
		read_proc_info(p, false);
		return 0;
	}

	/* write new mappings, remove old ones no longer there; keep the
	 * trie entries of mappings that did not change */
	for (i = 0; i < nn; i++) {
		bool kept = false;

		for (j = 0; j < p->n_maps; j++)
			if (same_mapping(&nm[i], &p->maps[j]) &&
			    nm[i].flags == p->maps[j].flags &&
			    nm[i].bias == p->maps[j].bias) {
				kept = true;
				break;
			}
		if (!kept)
			write_mapping(pm, p, &nm[i], true);
	}
	for (j = 0; j < p->n_maps; j++) {
		bool kept = false;

		for (i = 0; i < nn; i++)
			if (same_mapping(&nm[i], &p->maps[j])) {
				kept = true;
				break;
			}
		if (!kept)
			write_mapping(pm, p, &p->maps[j], false);
		exe_put(pm->em, p->maps[j].file);
	}
	pm->st.mappings += nn;
	pm->st.mappings -= p->n_maps;
	free(p->maps);
	p->maps = nm;
	p->n_maps = nn;
	p->interp_mask = pi.interp_mask;
	read_proc_info(p, true);
	if (pm->synced_fn)
		pm->synced_fn(pm->synced_arg, p);
	pi.flags = PID_F_SYNCED;
	uint32_t key = (uint32_t)pid;
	err = bm_update(pm->bm, BM_PID_INFO, &key, &pi);
	if (err) {
		log_warn_once("the BPF pid_info map is full: raise -map-scale-factor");
		return err;
	}
	p->synced = true;
	p->synced_ns = exe_now_ns();
	return 0;
}

void pm_set_forget_hook(struct pm *pm, pm_forget_fn fn, void *arg)
{
	pm->forget_fn = fn;
	pm->forget_arg = arg;
}

static void forget(struct pm *pm, struct pm_proc *p)
{
	uint32_t key = (uint32_t)p->pid;

	if (pm->forget_fn)
		pm->forget_fn(pm->forget_arg, p->pid);
	bm_remove(pm->bm, BM_PID_INFO, &key);
	drop_mappings(pm, p);
	p->synced = false;
}

int pm_exec(struct pm *pm, pid_t pid)
{
	struct pm_proc *p = pm_find(pm, pid);

	if (p) {
		forget(pm, p);
		p->exited = false;
	}
	return pm_sync(pm, pid);
}

void pm_exit(struct pm *pm, pid_t pid)
{
	struct pm_proc *p = pm_find(pm, pid);

	if (!p || p->exited)
		return;
	p->exited = true;
	p->exit_ns = exe_now_ns();
	pm->st.exits++;
}

void pm_gc(struct pm *pm, uint64_t now_ns, uint64_t linger_ns)
{
	bool sweep = now_ns - pm->last_sweep_ns >= PM_SWEEP_NS;
	uint32_t it = 0;
	uint64_t k, v;

	if (sweep)
		pm->last_sweep_ns = now_ns;
	while (hm_next(&pm->procs, &it, &k, &v)) {
		struct pm_proc *p = (struct pm_proc *)(uintptr_t)v;
		char path[32];

		if (!p->exited) {
			if (!sweep)
				continue;
			/* a missed exit event: the process is gone */
			snprintf(path, sizeof(path), "/proc/%d", (int)p->pid);
			if (access(path, F_OK) == 0)
				continue;
			p->exited = true;
			p->exit_ns = now_ns;
			continue;
		}
		if (now_ns - p->exit_ns < linger_ns)
			continue;
		forget(pm, p);
		hm_del(&pm->procs, k);
		free(p->exe_path);
		free(p);
		pm->st.procs--;
		it = 0; /* the table moved */
	}
}

/* ---- the request queue ------------------------------------------------ */

int pm_request(struct pm *pm, pid_t pid, unsigned why)
{
	uint64_t seq;

	if (hm_get(&pm->req_by_pid, (uint64_t)pid, &seq)) {
		pm->reqs[seq % PM_REQ_MAX].why |= why;
		pm->st.requests_merged++;
		return 0;
	}
	if (pm->req_tail - pm->req_head >= PM_REQ_MAX ||
	    hm_put(&pm->req_by_pid, (uint64_t)pid, pm->req_tail)) {
		pm->st.requests_dropped++;
		return -ENOSPC;
	}
	pm->reqs[pm->req_tail % PM_REQ_MAX] = (struct pm_req){ pid, why };
	pm->req_tail++;
	pm->st.requests++;
	return 0;
}

uint32_t pm_pending(struct pm *pm)
{
	return (uint32_t)(pm->req_tail - pm->req_head);
}

bool pm_is_pending(struct pm *pm, pid_t pid)
{
	uint64_t seq;

	return hm_get(&pm->req_by_pid, (uint64_t)pid, &seq);
}

int pm_service(struct pm *pm, uint64_t budget_ns)
{
	uint64_t t0 = exe_now_ns();
	int n = 0;

	while (pm->req_head != pm->req_tail) {
		struct pm_req r = pm->reqs[pm->req_head % PM_REQ_MAX];

		if (n && budget_ns && exe_now_ns() - t0 >= budget_ns)
			break;
		/* out of the queue first: a hook that runs in pm_sync may
		 * queue again */
		pm->req_head++;
		hm_del(&pm->req_by_pid, (uint64_t)r.pid);
		if (r.why & PM_REQ_EXEC)
			pm_exec(pm, r.pid);
		else if (r.why & PM_REQ_SYNC)
			pm_sync(pm, r.pid);
		if (r.why & PM_REQ_EXIT)
			pm_exit(pm, r.pid);
		pm->st.requests_served++;
		n++;
	}
	return n;
}

struct pm_proc *pm_find(struct pm *pm, pid_t pid)
{
	uint64_t v;

	return hm_get(&pm->procs, (uint64_t)pid, &v) ?
		       (struct pm_proc *)(uintptr_t)v :
		       NULL;
}

const struct pm_mapping *pm_find_mapping(const struct pm_proc *p, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < p->n_maps; i++)
		if (addr >= p->maps[i].start && addr < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

const struct pm_mapping *pm_find_file_mapping(const struct pm_proc *p,
					      const struct exe_file *f,
					      uint64_t addr)
{
	const struct pm_mapping *first = NULL;
	uint32_t i;

	for (i = 0; p && i < p->n_maps; i++) {
		const struct pm_mapping *m = &p->maps[i];
		uint64_t pc = ea_runtime_addr(m->bias, addr);

		if (m->file != f)
			continue;
		if (pc >= m->start && pc < m->end)
			return m;
		if (!first)
			first = m;
	}
	return first;
}

int pm_sync_many(struct pm *pm, const pid_t *pids, int n)
{
	int i, synced = 0;

	hm_init(&pm->scan_files);
	pm->scanning = true;
	for (i = 0; i < n; i++)
		if (pm_sync(pm, pids[i]) == 0)
			synced++;
	pm->scanning = false;
	hm_free(&pm->scan_files);
	return synced;
}

int pm_scan_all(struct pm *pm)
{
	DIR *d = opendir("/proc");
	pid_t *pids = NULL, *tmp;
	struct dirent *e;
	int n = 0, cap = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0 || pid > INT32_MAX)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			tmp = realloc(pids, cap * sizeof(*pids));
			if (!tmp)
				break; /* load those listed so far */
			pids = tmp;
		}
		pids[n++] = (pid_t)pid;
	}
	closedir(d);
	n = pm_sync_many(pm, pids, n);
	free(pids);
	return n;
}

/* One line of /proc/PID/maps, parsed. */
struct maps_line {
	struct ea_map m;
	dev_t dev;
	uint64_t ino;
	char *path;
};

static bool next_line(FILE *f, char *buf, size_t len, struct maps_line *l)
{
	char perms[5];

	while (fgets(buf, (int)len, f))
		if (pm_parse_maps_line(buf, &l->m.start, &l->m.end, perms,
				       &l->m.offset, &l->dev, &l->ino,
				       &l->path) == 0) {
			l->m.prot = ea_prot(perms);
			return true;
		}
	return false;
}

int pm_locate(pid_t pid, uint64_t pc, int *fd, char *path, size_t len,
	      uint64_t *bias)
{
	struct ea_map set[BIAS_PEERS];
	struct ea_seg segs[EA_MAX_SEGS];
	char name[64], line[4608];
	struct maps_line l, at;
	uint32_t n_segs;
	unsigned k = 1;
	bool found = false;
	FILE *f;
	int err;

	*fd = -1;
	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!found && next_line(f, line, sizeof(line), &at))
		found = pc >= at.m.start && pc < at.m.end &&
			(at.ino || !strcmp(at.path, "[vdso]"));
	if (!found) {
		fclose(f);
		return -ENOENT;
	}
	snprintf(path, len, "%s", at.path);
	set[0] = at.m;
	/* the file's other executable mappings, as pm_sync uses them */
	rewind(f);
	while (k < BIAS_PEERS && next_line(f, line, sizeof(line), &l))
		if ((l.m.prot & PF_X) && l.dev == at.dev && l.ino == at.ino &&
		    l.m.start != at.m.start && (at.ino || !strcmp(l.path, path)))
			set[k++] = l.m;
	fclose(f);
	if (!strcmp(path, "[vdso]")) {
		set[0].offset = 0;
		*fd = vdso_fd();
	} else {
		enum pm_mismatch why;

		*fd = open_mapping(pid, &at.m, at.dev, at.ino, path, &why);
	}
	if (*fd < 0)
		return *fd;
	err = exe_read_segs(*fd, segs, &n_segs);
	if (err) {
		close(*fd);
		*fd = -1;
		return err;
	}
	ea_bias(segs, n_segs, set, k, bias);
	return 0;
}

void pm_get_stats(struct pm *pm, struct pm_stats *out)
{
	*out = pm->st;
	out->requests_pending = pm_pending(pm);
}

void pm_free(struct pm *pm)
{
	uint32_t it = 0;
	uint64_t v;

	if (!pm)
		return;
	while (hm_next(&pm->procs, &it, NULL, &v)) {
		struct pm_proc *p = (struct pm_proc *)(uintptr_t)v;
		uint32_t i;

		for (i = 0; i < p->n_maps; i++)
			exe_put(pm->em, p->maps[i].file);
		free(p->maps);
		free(p->exe_path);
		free(p);
	}
	hm_free(&pm->procs);
	hm_free(&pm->req_by_pid);
	free(pm->reqs);
	exe_put(pm->em, pm->vdso);
	free(pm);
}
