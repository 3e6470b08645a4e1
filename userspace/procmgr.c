// SPDX-License-Identifier: Apache-2.0
#include "procmgr.h"
#include "procmgr_int.h"

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

#include "arr.h"
#include "fsutil.h"
#include "hashmap.h"
#include "log.h"

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
_Static_assert(PM_TRIE_BATCH >= MAX_PREFIXES, "a mapping fits a batch");

/* Send the batch's changes: one system call for a process' mappings
 * (a few dozen prefixes), not one per mapping or per prefix. */
static int trie_flush(struct pm *pm)
{
	struct pm_trie_batch *b = &pm->tb;
	uint32_t done;
	int err = 0;

	if (!b->n)
		return 0;
	if (b->add) {
		err = bm_update_batch(pm->bm, BM_MAPPINGS, b->keys, b->vals,
				      b->n, &done);
		pm->st.trie_entries += err ? done : b->n;
		if (err) {
			pm->st.trie_full++;
			log_warn_once("the BPF mapping trie is full: raise "
				      "-map-scale-factor");
		}
	} else {
		pm->st.trie_entries -=
			bm_remove_batch(pm->bm, BM_MAPPINGS, b->keys, b->n);
	}
	b->n = 0;
	return err;
}

/* m's prefixes into the batch, to be added or removed (what the batch
 * holds goes in first when it is full or of the other kind). */
static int write_mapping(struct pm *pm, struct pm_proc *p,
			 const struct pm_mapping *m, bool add)
{
	struct pm_trie_batch *b = &pm->tb;
	uint64_t addrs[MAX_PREFIXES];
	uint32_t lens[MAX_PREFIXES];
	const struct mapping_info v = {
		.file_id = m->file ? m->file->id64 : 0,
		.bias = m->bias,
		.start = m->start,
		.end = m->end,
		.flags = m->flags,
		.interp_mask = m->file ? m->file->interp_mask : 0,
		.load_gen = m->file ? m->file->load_gen : 0,
	};
	int n, i, err = 0;

	n = pm_range_prefixes(m->start, m->end, addrs, lens, MAX_PREFIXES);
	if (n < 0)
		return n;
	if (b->n && (b->add != add || b->n + (uint32_t)n > PM_TRIE_BATCH))
		err = trie_flush(pm);
	b->add = add;
	for (i = 0; i < n; i++, b->n++) {
		b->keys[b->n] = (struct mapping_key){
			.prefixlen = 32 + lens[i],
			.pid_be = htobe32((uint32_t)p->pid),
			.addr_be = htobe64(addrs[i]),
		};
		if (add)
			b->vals[b->n] = v;
	}
	return err;
}


static struct pm_proc *get_proc(struct pm *pm, pid_t pid)
{
	struct pm_proc *p;
	uint64_t *slot;
	bool added;

	slot = hm_slot(&pm->procs, (uint64_t)pid, &added);
	if (!slot || !added)
		return slot ? (struct pm_proc *)(uintptr_t)*slot : NULL;
	p = calloc(1, sizeof(*p));
	if (!p) {
		hm_del(&pm->procs, (uint64_t)pid);
		return NULL;
	}
	p->pid = pid;
	*slot = (uintptr_t)p;
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
	trie_flush(pm);
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
	struct exe_file *f = hm_get_ptr(&pm->scan_files, dev_ino_key(dev, ino));

	if (!f || f->dev != dev || f->ino != ino) /* none, or a hash collision */
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

/* The file of p's file-backed mapping v, into m (a reference, or none
 * and MAP_F_FP_ONLY: another file than the maps line names, or code in
 * a file that is not ELF).  Returns 0, or -1 to leave the mapping out
 * (its file could not be opened or loaded). */
static int mapping_file(struct pm *pm, struct pm_proc *p,
			const struct pm_vma *v, struct pm_mapping *m)
{
	struct ea_map em = pm_vma_map(v);
	enum pm_mismatch why;
	struct stat st;
	uint32_t i;
	int pfd, fd, err;

	/* the file of an identical old mapping, or of this scan */
	for (i = 0; i < p->n_maps; i++)
		if (p->maps[i].start == v->start && p->maps[i].end == v->end &&
		    p->maps[i].offset == v->offset && p->maps[i].file &&
		    p->maps[i].file->ino == v->ino) {
			m->file = exe_ref(p->maps[i].file);
			return 0;
		}
	if (pm->scanning && (m->file = scanned_file(pm, v->dev, v->ino)))
		return 0;
	pfd = pm_path_mapping(p->pid, &em, v->dev, v->ino, v->path, &st,
			      &why);
	if (why) {
		/* another file: none is used; known, walked by frame
		 * pointer, so that its pcs do not trigger rescans */
		pm->st.mismatch[why]++;
		m->flags = MAP_F_FP_ONLY;
		return 0;
	}
	if (pfd < 0)
		return -1;
	/* a file loaded already needs no reading: its stat names it */
	m->file = exe_get_known(pm->em, &st);
	fd = m->file ? -1 : fs_reopen(pfd);
	close(pfd);
	if (m->file)
		return 0;
	if (fd < 0)
		return -1;
	pm->st.opens++;
	err = exe_get(pm->em, fd, v->path, &m->file);
	close(fd);
	if (err == -ENOEXEC) {
		/* code in a file that is not ELF: a JIT's buffer in shared
		 * memory (a shared mapping of /dev/zero or a memfd):
		 * anonymous code, as above */
		m->file = NULL;
		m->flags = MAP_F_FP_ONLY;
		return 0;
	}
	if (err)
		return -1;
	if (pm->scanning)
		note_scanned(pm, v->dev, v->ino, m->file);
	return 0;
}

int pm_sync(struct pm *pm, pid_t pid)
{
	struct pm_mapping *nm = NULL;
	uint32_t nn = 0, cap = 0, i, j;
	struct pid_info pi = { 0 };
	struct pm_maps maps, *it = &maps;
	struct pm_vma v;
	struct pm_proc *p;
	uint64_t t0 = exe_now_ns();
	int err = 0, more;

	pm->st.syncs++;
	err = pm_maps_open(it, pid, false);
	if (err) {
		pm->st.sync_errors++;
		return err;
	}
	p = get_proc(pm, pid);
	if (!p) {
		pm_maps_close(it);
		return -ENOMEM;
	}
	while ((more = pm_maps_next(it, &v)) > 0) {
		struct pm_mapping m = { .start = v.start, .end = v.end,
					.offset = v.offset };

		if (!strcmp(v.path, "[vdso]")) {
			m.file = pm_get_vdso(pm);
			if (!m.file)
				continue;
			exe_ref(m.file);
			m.flags = MAP_F_VDSO;
			m.offset = 0;
		} else if (v.ino == 0) {
			/* anonymous executable memory (JIT): walked by frame
			 * pointer; known, so its pcs do not trigger rescans */
			m.flags = MAP_F_FP_ONLY;
		} else if (mapping_file(pm, p, &v, &m)) {
			continue;
		}
		m.prot = ea_prot(v.perms);
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
		if (ARR_PUSH(nm, nn, cap, ARR_NO_LIMIT)) {
			exe_put(pm->em, m.file);
			err = -ENOMEM;
			break;
		}
		nm[nn++] = m;
	}
	pm_maps_close(it);
	if (!err && more < 0)
		err = more;
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
		pm_read_proc_info(p, false);
		return 0;
	}

	/* remove old mappings no longer there, then write the new ones
	 * (in this order: a new mapping may share a prefix with an old one
	 * it replaces); keep the trie entries of mappings that did not
	 * change */
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
	trie_flush(pm);
	pm->st.mappings += nn;
	pm->st.mappings -= p->n_maps;
	free(p->maps);
	p->maps = nm;
	p->n_maps = nn;
	p->interp_mask = pi.interp_mask;
	pm_read_proc_info(p, true);
	if (pm->synced_fn)
		pm->synced_fn(pm->synced_arg, p);
	pi.flags = PID_F_SYNCED;
	pi.map_gen = ++pm->map_gen ? pm->map_gen : ++pm->map_gen;
	uint32_t key = (uint32_t)pid;
	err = bm_update(pm->bm, BM_PID_INFO, &key, &pi);
	if (err) {
		log_warn_once("the BPF pid_info map is full: raise -map-scale-factor");
		return err;
	}
	p->synced = true;
	p->synced_ns = exe_now_ns();
	/* once per process, not per sample (the start-up benchmark reads
	 * it) */
	log_debug("pid %d (%s) loaded: %u mappings in %.3f ms", (int)pid,
		  p->comm, nn, (p->synced_ns - t0) / 1e6);
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

/* Forget p and free it (its pid is out of the table already). */
static void free_proc(struct pm *pm, struct pm_proc *p)
{
	forget(pm, p);
	free(p->exe_path);
	free(p);
	pm->st.procs--;
}

int pm_exec(struct pm *pm, pid_t pid)
{
	struct pm_proc *p = pm_find(pm, pid);

	/* Nothing is read here: the new image loads on its first sample
	 * (BPF dropped its pid_info, so that sample comes unsynced and asks),
	 * and a process that exits before it is sampled is never read.  BPF
	 * reports only the execs of processes loaded (with a pid_info): a
	 * shell's or a build's short-lived children cost no event. */
	if (!p)
		return 0;
	hm_del(&pm->procs, (uint64_t)pid);
	free_proc(pm, p);
	return 0;
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
		hm_del(&pm->procs, k);
		free_proc(pm, p);
		it = 0; /* the table moved */
	}
}

struct pm_proc *pm_find(struct pm *pm, pid_t pid)
{
	return hm_get_ptr(&pm->procs, (uint64_t)pid);
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
