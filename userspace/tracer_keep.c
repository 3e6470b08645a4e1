// SPDX-License-Identifier: Apache-2.0
/*
 * -keep-programs: most of a warm start is the kernel's verifier checking
 * the unwinder (tens of milliseconds of a CPU, more on a busy host).  At
 * exit the daemon loads a fresh copy of its programs and maps, verified,
 * never attached, and pins it in a directory of a BPF file system under
 * a name that hashes everything that decides what the kernel loaded: the
 * BPF object, the read-only values and map sizes the options set, the
 * kernel.  The next start with the same options renames that directory
 * to claim it (one daemon wins), opens each pin, checks that every map
 * and program is of the kind the object declares, and unpins them all:
 * from then on the set is this run's alone, as if it had loaded it, and
 * a daemon that dies leaves nothing pinned.  The maps were never used,
 * so nothing of the last run is in them.
 *
 *   DIR/set-<key>/map<NN>, prog_<name>   a set ready for the next start
 *   DIR/new-<pid>/                       one being pinned (renamed when whole)
 *   DIR/taken-<pid>/                     one being taken (removed at once)
 *
 * (a BPF file system refuses names with a dot)
 *
 * One set is kept: the exiting daemon removes the others (and those of
 * daemons that died while pinning or taking), and nothing else: DIR may
 * be shared.  rm -r DIR removes them all; the kernel frees what no one
 * holds.
 */
#include "tracer.h"
#include "tracer_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xxhash.h>

#include "exemgr.h"
#include "log.h"
#include "profiler.skel.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

static uint64_t hash_more(uint64_t h, const void *p, size_t len)
{
	return XXH3_64bits_withSeed(p, len, h);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	return hash_more(h, s, strlen(s) + 1);
}

/* Everything that decides what the kernel loads for these options: the
 * object, the initial values (the options' read-only knobs), each map's
 * kind and size, each program's and whether it loads, the kernel. */
static uint64_t set_key(struct profiler *skel)
{
	struct bpf_program *p;
	struct bpf_map *m;
	struct utsname u;
	size_t len;
	const void *b = profiler__elf_bytes(&len);
	uint64_t h = hash_more(0x6b657074ull, b, len);

	bpf_object__for_each_map(m, skel->obj) {
		__u32 v[5] = { bpf_map__type(m), bpf_map__key_size(m),
			       bpf_map__value_size(m), bpf_map__max_entries(m),
			       bpf_map__map_flags(m) };
		const void *init = bpf_map__initial_value(m, &len);

		h = hash_str(h, bpf_map__name(m));
		h = hash_more(h, v, sizeof(v));
		if (init)
			h = hash_more(h, init, len);
	}
	bpf_object__for_each_program(p, skel->obj) {
		__u32 v[3] = { bpf_program__type(p), bpf_program__autoload(p),
			       bpf_program__log_level(p) };

		h = hash_str(h, bpf_program__name(p));
		h = hash_more(h, v, sizeof(v));
	}
	if (!uname(&u)) {
		h = hash_str(h, u.release);
		h = hash_str(h, u.version);
	}
	return h;
}

static int prog_index(struct tracer *t, const struct bpf_program *want)
{
	struct bpf_program *p;
	int i = 0;

	bpf_object__for_each_program(p, t->skel->obj) {
		if (p == want)
			return i < MAX_PROGS ? i : -1;
		i++;
	}
	return -1;
}

int tk_prog_fd(struct tracer *t, const struct bpf_program *p)
{
	int i;

	if (!t->kept)
		return bpf_program__fd(p);
	i = prog_index(t, p);
	return i < 0 ? -1 : t->kept_fds[i];
}

/* A set's directory and all in it (pins go with unlink). */
static void remove_set(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

static bool on_bpffs(const char *dir)
{
	struct statfs fs;

	return !statfs(dir, &fs) && (unsigned long)fs.f_type == BPF_FS_MAGIC;
}

/* A map of the object's global data (the options' read-only knobs among
 * them) holds what this skeleton would put there: the set was made with
 * these options and never ran. */
static bool same_values(int fd, struct bpf_map *m)
{
	size_t len;
	const void *want = bpf_map__initial_value(m, &len);
	__u32 key = 0;
	bool same;
	void *have;

	if (!bpf_map__is_internal(m) || !want)
		return true;
	have = malloc(len ? len : 1);
	same = have && len == bpf_map__value_size(m) &&
	       !bpf_map_lookup_elem(fd, &key, have) && !memcmp(have, want, len);
	free(have);
	return same;
}

/* A pin of a map of exactly the declared kind, or -1. */
static int get_map(const char *dir, int i, struct bpf_map *m)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/map%02d", dir, i) >=
	    (int)sizeof(path))
		return -1;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    info.type != bpf_map__type(m) ||
	    info.key_size != bpf_map__key_size(m) ||
	    info.value_size != bpf_map__value_size(m) ||
	    info.max_entries != bpf_map__max_entries(m) ||
	    !same_values(fd, m)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int get_prog(const char *dir, const struct bpf_program *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/prog_%s", dir,
		     bpf_program__name(p)) >= (int)sizeof(path))
		return -1;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    info.type != bpf_program__type(p)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Open every pin of the set in dir and check it; only then make them
 * the skeleton's.  0, or -1 with nothing changed. */
static int take_set(struct tracer *t, const char *dir)
{
	int map_fds[MAX_MAPS], prog_fds[MAX_PROGS], nm = 0, np = 0, i;
	struct bpf_program *p;
	struct bpf_map *m;

	bpf_object__for_each_map(m, t->skel->obj) {
		if (nm == MAX_MAPS || (map_fds[nm] = get_map(dir, nm, m)) < 0)
			goto fail;
		nm++;
	}
	bpf_object__for_each_program(p, t->skel->obj) {
		if (np == MAX_PROGS)
			goto fail;
		prog_fds[np] = -1;
		if (bpf_program__autoload(p) &&
		    (prog_fds[np] = get_prog(dir, p)) < 0)
			goto fail;
		np++;
	}
	/* the skeleton's maps on the pinned ones (libbpf keeps a copy of
	 * each fd); the ones we create otherwise stay ours to close */
	i = 0;
	bpf_object__for_each_map(m, t->skel->obj) {
		if (bpf_map__reuse_fd(m, map_fds[i])) {
			/* cannot happen but for want of fds: the caller
			 * opens a clean skeleton */
			for (; i < nm; i++)
				close(map_fds[i]);
			for (i = 0; i < np; i++)
				if (prog_fds[i] >= 0)
					close(prog_fds[i]);
			return -2;
		}
		if (bpf_map__is_internal(m) || t->n_own == MAX_MAPS)
			close(map_fds[i]);
		else
			t->own_fds[t->n_own++] = map_fds[i];
		i++;
	}
	i = 0;
	bpf_object__for_each_program(p, t->skel->obj) {
		t->kept_fds[i] = prog_fds[i];
		bpf_program__set_autoload(p, false);
		i++;
	}
	for (; i < MAX_PROGS; i++)
		t->kept_fds[i] = -1;
	t->kept = true;
	return 0;
fail:
	while (nm-- > 0)
		close(map_fds[nm]);
	while (np-- > 0)
		if (prog_fds[np] >= 0)
			close(prog_fds[np]);
	return -1;
}

void tk_take(struct tracer *t)
{
	char dir[PATH_MAX], taken[PATH_MAX];
	int err;

	if (!t->o.keep_dir)
		return;
	if (!on_bpffs(t->o.keep_dir)) {
		/* made at the first exit, in a BPF file system: the
		 * directory, or where it would go */
		char parent[PATH_MAX], *slash;

		snprintf(parent, sizeof(parent), "%s", t->o.keep_dir);
		slash = strrchr(parent, '/');
		if (slash && slash != parent)
			*slash = 0;
		else
			snprintf(parent, sizeof(parent), "/");
		if (access(t->o.keep_dir, F_OK) && on_bpffs(parent))
			return;
		log_warn("-keep-programs: %s is not on a BPF file system "
			 "(systemd mounts one at /sys/fs/bpf; else mount -t "
			 "bpf bpf /sys/fs/bpf): nothing is kept",
			 t->o.keep_dir);
		t->o.keep_dir = NULL;
		return;
	}
	snprintf(dir, sizeof(dir), "%s/set-%016llx", t->o.keep_dir,
		 (unsigned long long)set_key(t->skel));
	snprintf(taken, sizeof(taken), "%s/taken-%d", t->o.keep_dir,
		 (int)getpid());
	if (rename(dir, taken)) {
		log_debug("-keep-programs: no set for these options in %s (%s)",
			  t->o.keep_dir, strerror(errno));
		return;
	}
	err = take_set(t, taken);
	remove_set(taken);
	if (err == -2) {
		int i;

		profiler__destroy(t->skel);
		t->skel = NULL;
		for (i = 0; i < t->n_own; i++)
			close(t->own_fds[i]);
		t->n_own = 0;
		if (tr_open_skel(t, &t->skel) == 0)
			log_warn("-keep-programs: the kept programs could not be "
				 "taken: loading them");
		return;
	}
	if (err)
		log_warn("-keep-programs: the set in %s did not match this "
			 "object (removed): loading the programs",
			 t->o.keep_dir);
	else
		log_debug("-keep-programs: took the programs kept in %s", dir);
}

int tk_attach(struct tracer *t)
{
	struct bpf_program *p;
	int i = 0;

	if (!t->kept)
		return 0;
	bpf_object__for_each_program(p, t->skel->obj) {
		const char *sec = bpf_program__section_name(p);
		int fd = t->kept_fds[i++], lfd;

		if (fd < 0)
			continue;
		if (!strncmp(sec, "raw_tp/", 7))
			lfd = bpf_raw_tracepoint_open(sec + 7, fd);
		else if (!strncmp(sec, "tp_btf/", 7))
			lfd = bpf_raw_tracepoint_open(NULL, fd);
		else
			continue; /* perf_event: tracer_attach, per CPU */
		if (lfd < 0) {
			int err = -errno;

			fprintf(stderr, "ebpf-profiler: attaching %s: %s\n",
				bpf_program__name(p), strerror(-err));
			return err;
		}
		t->kept_links[t->n_kept_links++] = lfd;
	}
	return 0;
}

/* n is all digits (at least one) from where it starts, or all hex
 * digits, exactly len of them. */
static bool all_digits(const char *n, bool hex, size_t len)
{
	size_t i;

	for (i = 0; n[i]; i++)
		if (!(hex ? isxdigit((unsigned char)n[i]) :
			    isdigit((unsigned char)n[i])))
			return false;
	return len ? i == len : i > 0;
}

/* One of the names this file gives (set-<16 hex>, new-<pid>,
 * taken-<pid>); *pid: the pid of the latter two, else 0.  The directory
 * may be shared (-keep-programs-dir /sys/fs/bpf): nothing else in it is
 * ours to remove. */
static bool our_name(const char *n, int *pid)
{
	*pid = 0;
	if (!strncmp(n, "set-", 4))
		return all_digits(n + 4, true, 16);
	if (!strncmp(n, "new-", 4) && all_digits(n + 4, false, 0))
		*pid = atoi(n + 4);
	else if (!strncmp(n, "taken-", 6) && all_digits(n + 6, false, 0))
		*pid = atoi(n + 6);
	return *pid > 0;
}

/* Every set but the one being pinned: the other options' (one set is
 * kept), another daemon's of the same options (ours is fresher), and
 * what daemons that died left while pinning or taking. */
static void remove_others(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;
	char path[PATH_MAX];
	int pid;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!our_name(e->d_name, &pid))
			continue;
		if (pid && (pid == (int)getpid() || !kill(pid, 0) ||
			    errno != ESRCH))
			continue; /* being pinned or taken now */
		if (snprintf(path, sizeof(path), "%s/%s", base, e->d_name) <
		    (int)sizeof(path))
			remove_set(path);
	}
	closedir(d);
}

static int pin_set(struct profiler *sk, const char *dir)
{
	struct bpf_program *p;
	struct bpf_map *m;
	char path[PATH_MAX];
	int i = 0;

	bpf_object__for_each_map(m, sk->obj) {
		if (snprintf(path, sizeof(path), "%s/map%02d", dir, i++) >=
		    (int)sizeof(path))
			return -ENAMETOOLONG;
		if (bpf_obj_pin(bpf_map__fd(m), path))
			return -errno;
	}
	bpf_object__for_each_program(p, sk->obj) {
		if (bpf_program__fd(p) < 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/prog_%s", dir,
			     bpf_program__name(p)) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		if (bpf_obj_pin(bpf_program__fd(p), path))
			return -errno;
	}
	return 0;
}

void tk_make_next(struct tracer *t)
{
	char tmp[PATH_MAX], dir[PATH_MAX], name[32];
	uint64_t t0 = exe_now_ns();
	struct profiler *sk = NULL;
	int err;

	if (mkdir(t->o.keep_dir, 0700) && errno != EEXIST) {
		err = -errno;
		goto out;
	}
	err = tr_open_skel(t, &sk);
	if (err)
		goto out;
	/* named as tk_take() names it: before the load */
	snprintf(name, sizeof(name), "set-%016llx",
		 (unsigned long long)set_key(sk));
	/* the kernel types of this run's load are still in the memfd */
	err = profiler__load(sk);
	if (err)
		goto out;
	err = tr_set_tail_calls(sk, bpf_program__fd(sk->progs.unwind_native));
	if (err)
		goto out;
	snprintf(tmp, sizeof(tmp), "%s/new-%d", t->o.keep_dir, (int)getpid());
	snprintf(dir, sizeof(dir), "%s/%s", t->o.keep_dir, name);
	remove_set(tmp);
	if (mkdir(tmp, 0700)) {
		err = -errno;
		goto out;
	}
	err = pin_set(sk, tmp);
	if (!err) {
		remove_others(t->o.keep_dir);
		if (rename(tmp, dir))
			err = -errno;
	}
	if (err)
		remove_set(tmp);
out:
	profiler__destroy(sk);
	if (err)
		log_warn("-keep-programs: could not keep the programs in %s: %s",
			 t->o.keep_dir, strerror(-err));
	else
		log_info("kept the BPF programs for the next start in %s "
			 "(%.0f ms)",
			 dir, (exe_now_ns() - t0) / 1e6);
}
