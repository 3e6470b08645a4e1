// SPDX-License-Identifier: Apache-2.0
/*
 * The tracer's maps: the libbpf implementation of bpfmaps (updates, batch
 * updates, the rows' chunks mmap'ed), and the maps created before the
 * object loads, on two threads, then handed to each skeleton.
 */
#include "tracer.h"
#include "tracer_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "profiler.skel.h"

/* ---- the libbpf bpfmaps implementation ---------------------------------- */

/* The maps keyed by pid whose entries BPF keeps a copy of, per CPU,
 * while the pid's pid_epoch counter is unchanged: pid_info
 * (process_state in bpf/native.bpf.c) and the runtimes' (interp_proc in
 * bpf/interp.bpf.h). */
static bool copied_by_pid(enum bm_map m)
{
	return m == BM_PID_INFO || m >= BM_INTERP_BASE;
}

/* After a change of such an entry: the CPUs that keep the old one look
 * again. */
static void pid_entry_changed(struct tracer *t, enum bm_map m,
			      const void *key)
{
	uint32_t pid;

	if (!copied_by_pid(m) || !t->pid_epoch_mem)
		return;
	memcpy(&pid, key, sizeof(pid));
	__atomic_fetch_add(&t->pid_epoch_mem[pid & (PID_EPOCH_SLOTS - 1)], 1,
			   __ATOMIC_SEQ_CST);
}

/* The error of a batch call on a map type that has no batch operations:
 * ENOTSUPP (524, the kernel's own), EINVAL or EOPNOTSUPP. */
static bool no_batch_op(int err)
{
	return err == -524 || err == -EINVAL || err == -EOPNOTSUPP;
}

static int lb_update(void *ctx, enum bm_map m, const void *key, const void *val)
{
	struct tracer *t = ctx;
	int err;

	if (t->map_fds[m] < 0)
		return -ENOTSUP;
	err = bpf_map_update_elem(t->map_fds[m], key, val, BPF_ANY) ? -errno : 0;
	pid_entry_changed(t, m, key);
	return err;
}

static int lb_remove(void *ctx, enum bm_map m, const void *key)
{
	struct tracer *t = ctx;
	int err;

	if (t->map_fds[m] < 0)
		return -ENOTSUP;
	err = bpf_map_delete_elem(t->map_fds[m], key) ? -errno : 0;
	pid_entry_changed(t, m, key);
	return err;
}

static int lb_lookup(void *ctx, enum bm_map m, const void *key, void *val)
{
	struct tracer *t = ctx;

	if (t->map_fds[m] < 0)
		return -ENOTSUP;
	return bpf_map_lookup_elem(t->map_fds[m], key, val) ? -errno : 0;
}

static int lb_update_batch(void *ctx, enum bm_map m, const void *keys,
			   const void *vals, uint32_t n, uint32_t *done)
{
	struct tracer *t = ctx;
	__u32 count = n;
	int err;

	*done = 0;
	if (t->map_fds[m] < 0)
		return -ENOTSUP;
	if (!n)
		return 0;
	/* pid_info and the runtimes' maps: each change bumps its pid's
	 * counter (lb_update) */
	if (!t->no_batch[m] && !copied_by_pid(m)) {
		err = bpf_map_update_batch(t->map_fds[m], keys, vals, &count,
					   NULL) ? -errno : 0;
		*done = err ? count : n;
		if (!err || count || !no_batch_op(err))
			return err;
		t->no_batch[m] = true;
	}
	return bm_update_each(&tr_libbpf_ops, ctx, m, keys, vals, n, done);
}

static uint32_t lb_remove_batch(void *ctx, enum bm_map m, const void *keys,
			       uint32_t n)
{
	struct tracer *t = ctx;
	const uint8_t *k = keys;
	uint32_t i = 0, removed = 0;
	__u32 count;
	int err;

	if (t->map_fds[m] < 0)
		return 0;
	while (i < n && !t->no_batch[m] && !copied_by_pid(m)) {
		count = n - i;
		err = bpf_map_delete_batch(t->map_fds[m], k + i * bm_key_size[m],
					   &count, NULL) ? -errno : 0;
		removed += err ? count : n - i;
		if (!err)
			return removed;
		i += count;
		if (err == -ENOENT) {
			i++; /* that one was not there */
			continue;
		}
		if (!count && no_batch_op(err))
			t->no_batch[m] = true;
		break;
	}
	return removed + bm_remove_each(&tr_libbpf_ops, ctx, m,
					k + i * bm_key_size[m], n - i);
}

/* An mmap-able array map's memory, shared with the kernel; NULL with
 * *err set when it cannot be mapped. */
void *tr_map_memory(int fd, size_t len, int *err)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p != MAP_FAILED)
		return p;
	*err = -errno;
	return NULL;
}

/* A map as the BPF object defines it.  A chunk of rows is created from
 * the inner map of delta_rows, so it matches what the verifier checked
 * the programs against. */
struct map_shape tr_shape_of(const struct bpf_map *m)
{
	return (struct map_shape){ bpf_map__type(m), bpf_map__key_size(m),
				   bpf_map__value_size(m),
				   bpf_map__max_entries(m),
				   bpf_map__map_flags(m) };
}

static int create_shape(const struct map_shape *sh, const char *name)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = sh->flags);

	return bpf_map_create(sh->type, name, sh->key, sh->value, sh->entries,
			      &mo);
}

/* A new chunk's map and its memory, not yet where BPF finds it: its fd
 * (to put into the outer map, then close), or a negative errno. */
static int chunk_make(struct tracer *t, struct row_block **mem)
{
	int fd = create_shape(&t->chunk_shape, "delta_chunk"), err = 0;

	if (fd < 0)
		return -errno;
	*mem = tr_map_memory(fd, CHUNK_BYTES, &err);
	if (!*mem) {
		close(fd);
		return err;
	}
	return fd;
}

static bool chunks_place_later(struct tracer *t, const uint32_t *idx,
			       const int *fds, uint32_t n);

static int lb_chunk_new(void *ctx, uint32_t idx, struct row_block **mem)
{
	struct tracer *t = ctx;
	int fd = chunk_make(t, mem), err = 0;

	if (fd < 0)
		return fd;
	if (chunks_place_later(t, &idx, &fd, 1))
		return 0;
	if (bpf_map_update_elem(t->rows_fd, &idx, &fd, BPF_ANY)) {
		err = -errno;
		munmap(*mem, CHUNK_BYTES);
		*mem = NULL; /* nothing of it is left to the caller */
	}
	/* the outer map and our mapping keep the chunk */
	close(fd);
	return err;
}

/* Put chunks fds[0..n) at idx[0..n) of the array of maps, in one batch
 * update, or one at a time where the kernel has none for it: how many
 * were placed (the first ones). */
static uint32_t chunks_place(struct tracer *t, const uint32_t *idx,
			     const int *fds, uint32_t n)
{
	__u32 count = n, i;

	if (!bpf_map_update_batch(t->rows_fd, idx, fds, &count, NULL))
		return n;
	for (i = count; i < n; i++)
		if (bpf_map_update_elem(t->rows_fd, &idx[i], &fds[i], BPF_ANY))
			break;
	return i;
}

static void *chunks_place_job(void *arg)
{
	struct chunk_job *j = arg;
	uint32_t i;

	j->placed = chunks_place(j->t, j->idx, j->fds, j->n);
	/* the outer map and the caller's mapping keep the chunks */
	for (i = 0; i < j->n; i++)
		close(j->fds[i]);
	return NULL;
}

/* Wait for the chunks a start-up batch is placing (chunk_lock held).  A
 * chunk the kernel refused holds rows BPF does not see: their frames are
 * walked by frame pointer (err_no_page); the warning and chunks_unplaced
 * say so. */
static void chunks_settle_locked(struct tracer *t)
{
	struct chunk_job *j = &t->chunk_job;

	if (!t->chunk_pending)
		return;
	pthread_join(t->chunk_thread, NULL);
	t->chunk_pending = false;
	if (j->placed < j->n) {
		__atomic_fetch_add(&t->bm.chunks_unplaced, j->n - j->placed,
				   __ATOMIC_RELAXED);
		log_warn("%u of %u chunks of stack-delta rows could not be put "
			 "into the array of maps: their files' frames are "
			 "walked by frame pointer",
			 j->n - j->placed, j->n);
	}
}

void tr_chunks_defer(struct tracer *t, bool on)
{
	pthread_mutex_lock(&t->chunk_lock);
	chunks_settle_locked(t);
	t->chunk_defer = on;
	pthread_mutex_unlock(&t->chunk_lock);
}

/* At start-up: the made chunks placed on a thread (their memory is the
 * caller's at once: BPF reads them only once attached, after
 * tr_chunks_defer(t, false)).  True when the thread took them. */
static bool chunks_place_later(struct tracer *t, const uint32_t *idx,
			       const int *fds, uint32_t n)
{
	struct chunk_job *j = &t->chunk_job;
	bool taken = false;

	pthread_mutex_lock(&t->chunk_lock);
	if (t->chunk_defer) {
		chunks_settle_locked(t);
		j->t = t;
		j->n = n;
		j->placed = 0;
		memcpy(j->idx, idx, n * sizeof(*idx));
		memcpy(j->fds, fds, n * sizeof(*fds));
		taken = t->chunk_pending =
			pthread_create(&t->chunk_thread, NULL, chunks_place_job,
				       j) == 0;
	}
	pthread_mutex_unlock(&t->chunk_lock);
	return taken;
}

static int lb_chunks_new(void *ctx, const uint32_t *idx, uint32_t n,
			 struct row_block **mem, uint32_t *done)
{
	struct tracer *t = ctx;
	int fds[BM_CHUNK_BATCH_MAX];
	uint32_t made, i;
	__u32 count;
	int err = 0;

	*done = 0;
	if (n > BM_CHUNK_BATCH_MAX)
		n = BM_CHUNK_BATCH_MAX;
	for (made = 0; made < n; made++) {
		fds[made] = chunk_make(t, &mem[made]);
		if (fds[made] < 0) {
			err = fds[made];
			break;
		}
	}
	if (made && chunks_place_later(t, idx, fds, made)) {
		*done = made;
		return err;
	}
	/* those made go in all the same: the caller keeps what it got */
	count = made;
	if (made && bpf_map_update_batch(t->rows_fd, idx, fds, &count, NULL)) {
		int e = -errno;

		/* no batch update for an array of maps */
		if (!count && no_batch_op(e))
			e = -EOPNOTSUPP;
		err = e;
	} else {
		count = made;
	}
	for (i = 0; i < made; i++) {
		if (i >= count) {
			munmap(mem[i], CHUNK_BYTES);
			mem[i] = NULL;
		}
		/* the outer map and our mapping keep the chunk */
		close(fds[i]);
	}
	*done = count;
	return err;
}

static void lb_chunk_drop(void *ctx, uint32_t idx, struct row_block *mem)
{
	struct tracer *t = ctx;

	/* not before a batch being placed is (it may hold this one) */
	pthread_mutex_lock(&t->chunk_lock);
	chunks_settle_locked(t);
	pthread_mutex_unlock(&t->chunk_lock);
	/* at exit the outer map goes with the object, its chunks with it:
	 * a delete would wait for a grace period, per chunk, for nothing */
	if (!t->exiting)
		bpf_map_delete_elem(t->rows_fd, &idx);
	munmap(mem, CHUNK_BYTES);
}

static int lb_bind(void *ctx, enum bm_map m, const char *name,
		   size_t key_size, size_t val_size)
{
	struct tracer *t = ctx;
	struct bpf_map *map = bpf_object__find_map_by_name(t->skel->obj, name);

	if (m < BM_INTERP_BASE || m >= BM_COUNT || !map)
		return -ENOENT;
	if (bpf_map__key_size(map) != key_size ||
	    bpf_map__value_size(map) != val_size)
		return -EINVAL;
	t->map_fds[m] = bpf_map__fd(map);
	t->bm.max_entries[m] = bpf_map__max_entries(map);
	return 0;
}

const struct bpfmaps_ops tr_libbpf_ops = {
	.bind = lb_bind,
	.update = lb_update,
	.remove = lb_remove,
	.lookup = lb_lookup,
	.update_batch = lb_update_batch,
	.remove_batch = lb_remove_batch,
	.chunk_new = lb_chunk_new,
	.chunks_new = lb_chunks_new,
	.chunk_drop = lb_chunk_drop,
};

/* Hand our maps to a skeleton (libbpf then takes them as they are). */
int tr_reuse_maps(struct tracer *t, struct profiler *skel)
{
	struct bpf_map *m;
	int i = 0, err;

	bpf_object__for_each_map(m, skel->obj) {
		if (bpf_map__is_internal(m))
			continue;
		if (i == t->n_own)
			return -EINVAL;
		err = bpf_map__reuse_fd(m, t->own_fds[i++]);
		if (err)
			return err;
	}
	return 0;
}

/* The maps to create, taken in turn by two threads: creating one is
 * mostly the kernel allocating (and zeroing) its memory, megabytes for
 * the rows and the preallocated hash maps. */
struct map_jobs {
	struct bpf_map *maps[MAX_MAPS];
	int fds[MAX_MAPS], errs[MAX_MAPS];
	int n;
	int next; /* atomic */
};

static void *create_some(void *arg)
{
	struct map_jobs *j = arg;
	int i;

	while ((i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->n) {
		struct bpf_map *m = j->maps[i], *inner = bpf_map__inner_map(m);
		LIBBPF_OPTS(bpf_map_create_opts, mo,
			    .map_flags = bpf_map__map_flags(m));
		int ifd = -1;

		/* a map of maps takes the shape of its maps from one */
		if (inner) {
			struct map_shape sh = tr_shape_of(inner);

			ifd = create_shape(&sh, "inner");
			if (ifd < 0) {
				j->fds[i] = -1;
				j->errs[i] = -errno;
				continue;
			}
			mo.inner_map_fd = ifd;
		}
		j->fds[i] = bpf_map_create(bpf_map__type(m), bpf_map__name(m),
					   bpf_map__key_size(m),
					   bpf_map__value_size(m),
					   bpf_map__max_entries(m), &mo);
		j->errs[i] = j->fds[i] < 0 ? -errno : 0;
		if (ifd >= 0)
			close(ifd);
	}
	return NULL;
}

/* Create the maps ourselves: the process manager can fill them while the
 * verifier checks the programs, and they outlive a second skeleton when
 * the first fails to load. */
int tr_create_maps(struct tracer *t)
{
	struct map_jobs j = { .n = 0 };
	struct bpf_map *m;
	pthread_t helper;
	bool helped;
	int i, err = 0;

	bpf_object__for_each_map(m, t->skel->obj) {
		if (bpf_map__is_internal(m))
			continue;
		if (j.n == MAX_MAPS)
			return -E2BIG;
		j.maps[j.n++] = m;
	}
	helped = pthread_create(&helper, NULL, create_some, &j) == 0;
	create_some(&j);
	if (helped)
		pthread_join(helper, NULL);
	for (i = 0; i < j.n; i++) {
		if (j.errs[i] && !err) {
			m = j.maps[i];
			err = j.errs[i];
			fprintf(stderr,
				"ebpf-profiler: creating the BPF map %s (%u entries): %s%s\n",
				bpf_map__name(m), bpf_map__max_entries(m),
				strerror(-err),
				err == -ENOMEM || err == -EPERM ?
					" (lower -map-scale-factor, or raise RLIMIT_MEMLOCK on kernels before 5.11)" :
					"");
		}
		if (!j.errs[i])
			t->own_fds[t->n_own++] = j.fds[i];
	}
	return err ? err : tr_reuse_maps(t, t->skel);
}
