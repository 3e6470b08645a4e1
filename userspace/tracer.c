// SPDX-License-Identifier: Apache-2.0
#include "tracer.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "exemgr.h"
#include "fsutil.h"
#include "log.h"
#include "profiler.skel.h"
#include "recq.h"

#define MAX_CPUS 1024
#define MAX_MAPS 32

struct map_shape {
	enum bpf_map_type type;
	__u32 key, value, entries, flags;
};

struct tracer {
	struct profiler *skel;
	struct ring_buffer *rb;
	int *perf_fds;
	struct bpf_link **perf_links;
	int n_perf;
	int ncpus_possible;
	struct bpfmaps bm;
	int map_fds[BM_COUNT];
	int own_fds[MAX_MAPS]; /* the maps we created, by skeleton order */
	int n_own;
	int btf_fd; /* memfd: the kernel types CO-RE relocates against */
	bool btf_rejected;
	bool no_batch[BM_COUNT]; /* the kernel has no batch update for it */
	struct tracer_opts o;
	size_t rules_len;
	/* the rows: the array of chunks, and a chunk's shape (kept apart
	 * from the skeleton, which a second load replaces while files load
	 * on another thread) */
	int rows_fd;
	struct map_shape chunk_shape;
	tracer_trace_fn on_trace;
	tracer_event_fn on_event;
	void *arg;
	int freq;
	size_t rb_bytes;

	/* the drain thread: it empties both rings into q, so a long step of
	 * the main thread (a file's extraction) never leaves them full */
	struct recq *q;
	pthread_t drain;
	bool threaded;	       /* the thread runs: callbacks copy into q */
	bool drain_stop;       /* atomic */
	pthread_mutex_t drain_lock;
	pthread_cond_t drained;
	uint64_t passes;       /* passes done (under drain_lock) */
	uint64_t last_pass_ns; /* the end of the last pass (drain thread) */
	uint64_t stall_ns_max; /* atomic: longest time between two passes */
	uint64_t trace_drops;  /* atomic: trace records the queue refused */
};

/* The drain thread empties the rings this often (trace records do not
 * wake it: BPF_RB_NO_WAKEUP), and a flush waits at most this long. */
#define DRAIN_PERIOD_MS 20
/* Records dispatched by one tracer_poll: the loop serves syncs between. */
#define POLL_MAX_RECORDS 4096

enum { REC_TRACE = 1, REC_EVENT = 2 };

/* ---- libbpf messages: kept, shown when loading fails ------------------ */

static char *libbpf_log;
static size_t libbpf_log_len, libbpf_log_cap;
/* libbpf also runs on the start-up thread that builds the kernel types */
static pthread_mutex_t libbpf_log_lock = PTHREAD_MUTEX_INITIALIZER;

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	char *buf = NULL;
	int n;

	if (level == LIBBPF_DEBUG && log_get_level() < LOG_DEBUG)
		return 0;
	n = vasprintf(&buf, fmt, ap);
	if (n < 0)
		return 0;
	if (log_get_level() >= LOG_DEBUG) {
		fputs(buf, stderr);
		free(buf);
		return 0;
	}
	/* bounded: the verifier log of a failed load can be large; keep the
	 * last 256 KiB, where the error is */
	if (n > (256 << 10)) {
		memmove(buf, buf + n - (256 << 10), (256 << 10) + 1);
		n = 256 << 10;
	}
	pthread_mutex_lock(&libbpf_log_lock);
	if (libbpf_log_len + n + 1 > libbpf_log_cap) {
		size_t cap = libbpf_log_len + n + 1 + 65536;
		char *p = realloc(libbpf_log, cap);

		if (!p) {
			pthread_mutex_unlock(&libbpf_log_lock);
			free(buf);
			return 0;
		}
		libbpf_log = p;
		libbpf_log_cap = cap;
	}
	memcpy(libbpf_log + libbpf_log_len, buf, n + 1);
	libbpf_log_len += n;
	pthread_mutex_unlock(&libbpf_log_lock);
	free(buf);
	return 0;
}

static void dump_libbpf_log(void)
{
	pthread_mutex_lock(&libbpf_log_lock);
	if (libbpf_log_len)
		fputs(libbpf_log, stderr);
	libbpf_log_len = 0;
	pthread_mutex_unlock(&libbpf_log_lock);
}

static void clear_libbpf_log(void)
{
	pthread_mutex_lock(&libbpf_log_lock);
	libbpf_log_len = 0;
	pthread_mutex_unlock(&libbpf_log_lock);
}

/* ---- preflight ---------------------------------------------------------- */

static bool have_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

static int check_privileges(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data) < 0)
		return 0; /* let the load tell */
	if (have_cap(data, CAP_SYS_ADMIN))
		return 0;
	if (have_cap(data, 39 /* CAP_BPF */) && have_cap(data, 38 /* CAP_PERFMON */))
		return 0;
	fprintf(stderr,
		"ebpf-profiler: needs root, or the capabilities CAP_BPF and CAP_PERFMON "
		"(plus CAP_SYS_PTRACE and CAP_SYSLOG to read other processes and kernel "
		"symbols): run it with sudo\n");
	return -EPERM;
}

static int check_btf(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) == 0)
		return 0;
	fprintf(stderr,
		"ebpf-profiler: this kernel has no BTF (/sys/kernel/btf/vmlinux is "
		"missing): it needs a kernel built with CONFIG_DEBUG_INFO_BTF=y "
		"(Debian, Ubuntu, Fedora and RHEL kernels have it)\n");
	return -ENOTSUP;
}

static int online_cpus(bool *online, int max)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int a, b, n = 0;
	char sep;

	if (!f)
		return -errno;
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
			if (fscanf(f, "%d", &b) != 1)
				break;
			if (fscanf(f, "%c", &sep) != 1)
				sep = '\n';
		}
		for (; a <= b && a < max; a++, n++)
			online[a] = true;
		if (sep != ',')
			break;
	}
	fclose(f);
	return n;
}

static uint64_t next_pow2(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* ---- the libbpf bpfmaps implementation ---------------------------------- */

static int lb_update(void *ctx, enum bm_map m, const void *key, const void *val)
{
	struct tracer *t = ctx;

	if (t->map_fds[m] < 0)
		return -ENOTSUP;
	return bpf_map_update_elem(t->map_fds[m], key, val, BPF_ANY) ? -errno : 0;
}

static int lb_remove(void *ctx, enum bm_map m, const void *key)
{
	struct tracer *t = ctx;

	if (t->map_fds[m] < 0)
		return -ENOTSUP;
	return bpf_map_delete_elem(t->map_fds[m], key) ? -errno : 0;
}

static int lb_lookup(void *ctx, enum bm_map m, const void *key, void *val)
{
	struct tracer *t = ctx;

	if (t->map_fds[m] < 0)
		return -ENOTSUP;
	return bpf_map_lookup_elem(t->map_fds[m], key, val) ? -errno : 0;
}

static const struct bpfmaps_ops libbpf_ops;

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
	if (!t->no_batch[m]) {
		err = bpf_map_update_batch(t->map_fds[m], keys, vals, &count,
					   NULL) ? -errno : 0;
		*done = err ? count : n;
		/* a map type without batch operations (ENOTSUPP, 524) */
		if (!err || count || (err != -524 && err != -EINVAL &&
				      err != -EOPNOTSUPP))
			return err;
		t->no_batch[m] = true;
	}
	return bm_update_each(&libbpf_ops, ctx, m, keys, vals, n, done);
}

/* An mmap-able array map's memory, shared with the kernel; NULL with
 * *err set when it cannot be mapped. */
static void *map_memory(int fd, size_t len, int *err)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p != MAP_FAILED)
		return p;
	*err = -errno;
	return NULL;
}

#define CHUNK_BYTES ((size_t)DELTA_CHUNK_BLOCKS * sizeof(struct row_block))

/* A map as the BPF object defines it.  A chunk of rows is created from
 * the inner map of delta_rows, so it matches what the verifier checked
 * the programs against. */
static struct map_shape shape_of(const struct bpf_map *m)
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

static int lb_chunk_new(void *ctx, uint32_t idx, struct row_block **mem)
{
	struct tracer *t = ctx;
	int fd, err = 0;
	void *p;

	fd = create_shape(&t->chunk_shape, "delta_chunk");
	if (fd < 0)
		return -errno;
	p = map_memory(fd, CHUNK_BYTES, &err);
	if (p && bpf_map_update_elem(t->rows_fd, &idx, &fd, BPF_ANY)) {
		err = -errno;
		munmap(p, CHUNK_BYTES);
	}
	/* the outer map and our mapping keep the chunk */
	close(fd);
	if (err)
		return err;
	*mem = p;
	return 0;
}

static void lb_chunk_drop(void *ctx, uint32_t idx, struct row_block *mem)
{
	struct tracer *t = ctx;

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

static const struct bpfmaps_ops libbpf_ops = {
	.bind = lb_bind,
	.update = lb_update,
	.remove = lb_remove,
	.lookup = lb_lookup,
	.update_batch = lb_update_batch,
	.chunk_new = lb_chunk_new,
	.chunk_drop = lb_chunk_drop,
};

/* ---- ring buffers --------------------------------------------------------- */

static int dispatch_trace(struct tracer *t, const void *data, size_t size)
{
	const struct trace_hdr *h = data;

	if (size < sizeof(*h) ||
	    sizeof(*h) + ((size_t)h->n_kernel + h->n_user +
			  ((h->flags & TRACE_F_OFFCPU) ? 1 : 0)) * 8 > size)
		return 0; /* cannot happen: the BPF side writes both */
	t->on_trace(t->arg, h, (const __u64 *)(h + 1));
	return 0;
}

static int dispatch_event(struct tracer *t, const void *data, size_t size)
{
	if (size >= sizeof(struct pid_event))
		t->on_event(t->arg, data);
	return 0;
}

/* The rings' callbacks: on the drain thread, a copy into the queue (a
 * full queue drops the record, counted); before it runs, the caller's
 * callbacks directly. */
static int on_trace_rec(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;

	if (t->threaded) {
		if (recq_push(t->q, REC_TRACE, data, (uint32_t)size))
			__atomic_fetch_add(&t->trace_drops, 1, __ATOMIC_RELAXED);
		return 0;
	}
	return dispatch_trace(t, data, size);
}

static int on_event_rec(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;

	if (t->threaded) {
		recq_push(t->q, REC_EVENT, data, (uint32_t)size);
		return 0;
	}
	return dispatch_event(t, data, size);
}

/* Empty both rings: a pass.  The stall is the time since the last pass
 * ended: how long a record could wait in a ring. */
static int drain_pass(struct tracer *t)
{
	int n = ring_buffer__consume(t->rb);
	uint64_t now = exe_now_ns(), stall;

	if (t->last_pass_ns) {
		stall = now - t->last_pass_ns;
		if (stall > __atomic_load_n(&t->stall_ns_max, __ATOMIC_RELAXED))
			__atomic_store_n(&t->stall_ns_max, stall,
					 __ATOMIC_RELAXED);
	}
	t->last_pass_ns = now;
	return n;
}

static void *drain_main(void *arg)
{
	struct tracer *t = arg;

	while (!__atomic_load_n(&t->drain_stop, __ATOMIC_ACQUIRE)) {
		/* woken by event records; trace records wait for the
		 * timeout */
		ring_buffer__poll(t->rb, DRAIN_PERIOD_MS);
		drain_pass(t);
		pthread_mutex_lock(&t->drain_lock);
		t->passes++;
		pthread_cond_broadcast(&t->drained);
		pthread_mutex_unlock(&t->drain_lock);
	}
	return NULL;
}

static void stop_drain(struct tracer *t)
{
	if (!t->threaded)
		return;
	__atomic_store_n(&t->drain_stop, true, __ATOMIC_RELEASE);
	pthread_join(t->drain, NULL);
	t->threaded = false;
	/* what came after the last pass is the caller's, directly */
}

static int start_drain(struct tracer *t)
{
	uint64_t qb = (uint64_t)t->rb_bytes * 8;
	sigset_t all, old;
	int err;

	if (qb < (16u << 20))
		qb = 16u << 20;
	err = recq_new(qb, &t->q);
	if (err)
		return err;
	t->last_pass_ns = exe_now_ns();
	t->threaded = true;
	/* signals go to the main thread: the thread starts with them all
	 * blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&t->drain, NULL, drain_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		t->threaded = false;
	return err;
}

/* ---- open / load / attach ------------------------------------------------ */

const void *tracer_object(size_t *len)
{
	return profiler__elf_bytes(len);
}

/* Knobs and sizes, before the maps exist. */
static void configure(struct tracer *t, struct profiler *skel)
{
	const struct tracer_opts *o = &t->o;
	int scale = o->map_scale_factor;
	uint64_t rb;

	skel->rodata->filter_pids = o->n_pids > 0;
	skel->rodata->filter_cgroups = o->n_cgroups > 0;
	skel->rodata->enabled_interps = o->interps;
	if (o->max_frames > 0 && o->max_frames <= MAX_USER_FRAMES)
		skel->rodata->max_frames = o->max_frames;
	/* off-CPU: P of 2^32 random values; off, the program is not loaded
	 * (a BTF tracepoint: libbpf then reads the kernel's BTF) */
	skel->rodata->offcpu_threshold =
		(__u64)(o->offcpu_threshold * 4294967296.0);
	bpf_program__set_autoload(skel->progs.offcpu_switch,
				  o->offcpu_threshold > 0);
	bpf_map__set_max_entries(skel->maps.offcpu_stacks,
				 o->offcpu_threshold > 0 &&
						 o->offcpu_max_threads ?
					 o->offcpu_max_threads :
					 1);

	/* sizes: the ring holds about a second of typical traces (1 KiB)
	 * from every CPU, at least 256 KiB */
	rb = o->ringbuf_bytes;
	if (!rb)
		rb = (uint64_t)t->freq * t->ncpus_possible * 1024 * 2;
	if (rb < 256 * 1024)
		rb = 256 * 1024;
	rb = next_pow2(rb);
	t->rb_bytes = rb;
	bpf_map__set_max_entries(skel->maps.traces, (__u32)rb);
	bpf_map__set_max_entries(skel->maps.mappings, 1u << (19 + scale));
	bpf_map__set_max_entries(skel->maps.delta_pages, 1u << (15 + scale));
	/* the rows: a bound in chunks, each created when a file needs it */
	bpf_map__set_max_entries(skel->maps.delta_rows,
				 bm_chunks_for(o->max_delta_rows ?
						       o->max_delta_rows :
						       (uint64_t)DELTA_ROWS_DEFAULT
							       << scale));
	bpf_map__set_max_entries(skel->maps.pid_info, 1u << (14 + scale));
	bpf_map__set_map_flags(skel->maps.rules, BPF_F_MMAPABLE);
	/* the per-CPU rule cache: a power of two, or off (one unused slot) */
	if (o->rule_cache_entries) {
		bpf_map__set_max_entries(skel->maps.rule_cache,
					 (__u32)next_pow2(o->rule_cache_entries));
		skel->rodata->rule_cache_mask =
			(__u32)next_pow2(o->rule_cache_entries) - 1;
	} else {
		bpf_map__set_max_entries(skel->maps.rule_cache, 1);
	}
	if (o->log_level > 0) {
		struct bpf_program *p;

		bpf_object__for_each_program(p, skel->obj)
			bpf_program__set_log_level(p, o->log_level);
	}
}

/* A skeleton whose CO-RE relocations read the kernel types from our
 * memfd (filled in tracer_load()), so libbpf never parses the kernel's
 * BTF itself when we have the types it needs. */
static int open_skel(struct tracer *t, struct profiler **out)
{
	char path[64];
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = path);
	struct profiler *skel;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", t->btf_fd);
	skel = profiler__open_opts(&oo);
	if (!skel) {
		int err = -errno;

		fprintf(stderr, "ebpf-profiler: opening the BPF object: %s\n",
			strerror(-err));
		return err;
	}
	configure(t, skel);
	*out = skel;
	return 0;
}

/* Hand our maps to a skeleton (libbpf then takes them as they are). */
static int reuse_maps(struct tracer *t, struct profiler *skel)
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
			struct map_shape sh = shape_of(inner);

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
static int create_maps(struct tracer *t)
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
	return err ? err : reuse_maps(t, t->skel);
}

int tracer_open(const struct tracer_opts *o, tracer_trace_fn on_trace,
		tracer_event_fn on_event, void *arg, struct tracer **out)
{
	struct profiler *skel = NULL;
	struct tracer *t;
	int err, i, ncpus;

	*out = NULL;
	err = check_privileges();
	if (!err)
		err = check_btf();
	if (err)
		return err;
	libbpf_set_print(libbpf_print);

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; i < BM_COUNT; i++)
		t->map_fds[i] = -1;
	pthread_mutex_init(&t->drain_lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&t->drained, &ca);
		pthread_condattr_destroy(&ca);
	}
	t->o = *o;
	t->on_trace = on_trace;
	t->on_event = on_event;
	t->arg = arg;
	t->freq = o->samples_per_second > 0 ? o->samples_per_second : 20;
	ncpus = libbpf_num_possible_cpus();
	t->ncpus_possible = ncpus > 0 ? ncpus : 1;
	t->btf_fd = memfd_create("ep-kernel-types", MFD_CLOEXEC);
	if (t->btf_fd < 0) {
		err = -errno;
		fprintf(stderr, "ebpf-profiler: memfd_create: %s\n", strerror(-err));
		goto fail;
	}
	err = open_skel(t, &skel);
	if (err)
		goto fail;
	t->skel = skel;
	err = create_maps(t);
	if (err)
		goto fail;

	/* the rules array and the rows' chunks are mmap'ed: loading a
	 * file's rows is a memcpy, a new rule a store */
	t->rows_fd = bpf_map__fd(skel->maps.delta_rows);
	t->chunk_shape = shape_of(bpf_map__inner_map(skel->maps.delta_rows));
	if (t->chunk_shape.entries != DELTA_CHUNK_BLOCKS ||
	    t->chunk_shape.value != sizeof(struct row_block)) {
		err = -EINVAL; /* cannot happen: both come from profiler.h */
		goto fail;
	}
	t->bm.max_chunks = bpf_map__max_entries(skel->maps.delta_rows);
	t->bm.chunks = calloc(t->bm.max_chunks, sizeof(*t->bm.chunks));
	if (!t->bm.chunks) {
		err = -ENOMEM;
		goto fail;
	}
	t->rules_len = (size_t)bpf_map__max_entries(skel->maps.rules) *
		       sizeof(struct unwind_rule);
	t->bm.rules = map_memory(bpf_map__fd(skel->maps.rules), t->rules_len,
				 &err);
	if (!t->bm.rules) {
		fprintf(stderr, "ebpf-profiler: mmap of the BPF map rules: %s\n",
			strerror(-err));
		goto fail;
	}
	t->bm.ops = &libbpf_ops;
	t->bm.ctx = t;
	t->bm.gen = &skel->bss->delta_gen;
	t->map_fds[BM_PID_INFO] = bpf_map__fd(skel->maps.pid_info);
	t->map_fds[BM_MAPPINGS] = bpf_map__fd(skel->maps.mappings);
	t->map_fds[BM_PAGES] = bpf_map__fd(skel->maps.delta_pages);
	t->map_fds[BM_RULES] = bpf_map__fd(skel->maps.rules);
	t->map_fds[BM_PID_FILTER] = bpf_map__fd(skel->maps.pid_filter);
	t->map_fds[BM_CGROUP_FILTER] = bpf_map__fd(skel->maps.cgroup_filter);
	t->bm.max_entries[BM_PID_INFO] = bpf_map__max_entries(skel->maps.pid_info);
	t->bm.max_entries[BM_MAPPINGS] = bpf_map__max_entries(skel->maps.mappings);
	t->bm.max_entries[BM_PAGES] = bpf_map__max_entries(skel->maps.delta_pages);
	t->bm.max_entries[BM_RULES] = bpf_map__max_entries(skel->maps.rules);

	for (i = 0; i < o->n_pids; i++) {
		__u8 one = 1;
		bpf_map_update_elem(t->map_fds[BM_PID_FILTER], &o->pids[i], &one, 0);
	}
	for (i = 0; i < o->n_cgroups; i++) {
		__u8 one = 1;
		bpf_map_update_elem(t->map_fds[BM_CGROUP_FILTER],
				    &o->cgroup_ids[i], &one, 0);
	}
	t->o.pids = NULL; /* not kept past the call */
	t->o.cgroup_ids = NULL;
	*out = t;
	return 0;
fail:
	tracer_free(t);
	return err;
}

/* Put data (or, when NULL, the kernel's whole BTF) into the memfd that
 * libbpf reads the kernel types from. */
static int fill_types(struct tracer *t, const void *data, size_t len)
{
	char buf[65536];
	ssize_t n;
	int fd, err = 0;

	if (ftruncate(t->btf_fd, 0) || lseek(t->btf_fd, 0, SEEK_SET))
		return -errno;
	if (data)
		return fs_write_all(t->btf_fd, data, len);
	fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if ((err = fs_write_all(t->btf_fd, buf, (size_t)n)))
			break;
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

static int load_skel(struct tracer *t, const void *types, size_t len)
{
	int err = fill_types(t, types, len);

	if (err) {
		fprintf(stderr, "ebpf-profiler: the kernel's types: %s\n",
			strerror(-err));
		return err;
	}
	return profiler__load(t->skel);
}

int tracer_load(struct tracer *t, const void *types, size_t len)
{
	struct profiler *skel;
	__u32 key, fd;
	int err;

	err = load_skel(t, types, len);
	if (err && types) {
		/* the cut-down types did not do: a second skeleton, on the
		 * same maps, with the kernel's whole BTF */
		t->btf_rejected = true;
		clear_libbpf_log();
		log_warn("loading with the cached kernel types failed (%s); "
			 "using /sys/kernel/btf/vmlinux",
			 strerror(-err));
		profiler__destroy(t->skel);
		t->skel = NULL;
		err = open_skel(t, &skel);
		if (err)
			return err;
		t->skel = skel;
		err = reuse_maps(t, skel);
		if (!err)
			err = load_skel(t, NULL, 0);
	}
	if (err) {
		dump_libbpf_log();
		fprintf(stderr,
			"ebpf-profiler: loading the BPF programs failed: %s "
			"(see the verifier log above; -bpf-log-level 2 shows more)\n",
			strerror(-err));
		return err;
	}
	clear_libbpf_log();

	key = PROG_NATIVE;
	fd = bpf_program__fd(t->skel->progs.unwind_native);
	err = bpf_map_update_elem(bpf_map__fd(t->skel->maps.progs), &key, &fd, 0);
	if (err) {
		err = -errno;
		fprintf(stderr, "ebpf-profiler: tail-call table: %s\n",
			strerror(-err));
		return err;
	}
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.traces), on_trace_rec,
				 t, NULL);
	if (!t->rb || ring_buffer__add(t->rb, bpf_map__fd(t->skel->maps.events),
				       on_event_rec, t)) {
		err = -errno ? -errno : -ENOMEM;
		fprintf(stderr, "ebpf-profiler: ring buffer: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

bool tracer_types_rejected(struct tracer *t)
{
	return t->btf_rejected;
}

static int perf_open_cpu(int cpu, int freq)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_freq = freq,
		.freq = 1,
	};

	return syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
		       PERF_FLAG_FD_CLOEXEC);
}

int tracer_attach(struct tracer *t)
{
	bool online[MAX_CPUS] = {};
	int err, cpu, n;

	/* the rings drain on their own thread from the first record on */
	err = start_drain(t);
	if (err)
		log_warn("no drain thread (%s): the rings drain on the poll loop",
			 strerror(-err));
	err = profiler__attach(t->skel);
	if (err) {
		dump_libbpf_log();
		fprintf(stderr,
			"ebpf-profiler: attaching the exec/exit/sched_switch tracepoints failed: %s\n",
			strerror(-err));
		return err;
	}
	n = online_cpus(online, MAX_CPUS);
	if (n <= 0) {
		fprintf(stderr, "ebpf-profiler: cannot read the online CPUs\n");
		return -ENODEV;
	}
	t->perf_fds = calloc(n, sizeof(int));
	t->perf_links = calloc(n, sizeof(*t->perf_links));
	if (!t->perf_fds || !t->perf_links)
		return -ENOMEM;
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		struct bpf_link *link;
		int fd;

		if (!online[cpu])
			continue;
		fd = perf_open_cpu(cpu, t->freq);
		if (fd < 0) {
			err = -errno;
			if (err == -ENODEV)
				continue; /* went offline meanwhile */
			fprintf(stderr,
				"ebpf-profiler: perf events are unavailable: "
				"perf_event_open(cpu-clock, cpu %d) failed: %s "
				"(does the kernel have CONFIG_PERF_EVENTS, and does "
				"kernel.perf_event_paranoid or a seccomp profile allow it?)\n",
				cpu, strerror(-err));
			return err;
		}
		t->perf_fds[t->n_perf] = fd;
		link = bpf_program__attach_perf_event(t->skel->progs.sample, fd);
		if (!link) {
			err = -errno;
			close(fd);
			dump_libbpf_log();
			fprintf(stderr,
				"ebpf-profiler: attaching to the perf event of cpu %d: %s\n",
				cpu, strerror(-err));
			return err;
		}
		t->perf_links[t->n_perf++] = link;
	}
	return 0;
}

int tracer_enable(struct tracer *t, bool on)
{
	int i, err = 0;

	for (i = 0; i < t->n_perf; i++)
		if (ioctl(t->perf_fds[i],
			  on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0))
			err = -errno;
	return err;
}

/* The queue's records to the callbacks, in the order they were drained. */
static int dispatch_queued(struct tracer *t, int timeout_ms)
{
	struct recq_rec *r;
	int n = 0;

	while (n < POLL_MAX_RECORDS &&
	       (r = recq_pop(t->q, n ? 0 : timeout_ms))) {
		if (r->type == REC_TRACE)
			dispatch_trace(t, r->data, r->len);
		else
			dispatch_event(t, r->data, r->len);
		recq_release(t->q, r);
		n++;
	}
	return n;
}

int tracer_poll(struct tracer *t, int timeout_ms)
{
	int n, m;

	if (t->threaded)
		return dispatch_queued(t, timeout_ms);
	n = ring_buffer__poll(t->rb, timeout_ms);
	/* trace records do not wake us (BPF_RB_NO_WAKEUP): drain them */
	if (n < 0 && n != -EINTR)
		return n;
	m = drain_pass(t);
	if (m < 0)
		return m;
	/* records the drain thread queued before it stopped */
	if (t->q)
		m += dispatch_queued(t, 0);
	return (n > 0 ? n : 0) + m;
}

int tracer_flush(struct tracer *t)
{
	struct timespec until;
	uint64_t want;
	int n, total = 0;

	if (t->threaded) {
		/* a pass that starts after this call: it sees every record
		 * written so far */
		pthread_mutex_lock(&t->drain_lock);
		want = t->passes + 2;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 1;
		while (t->passes < want &&
		       pthread_cond_timedwait(&t->drained, &t->drain_lock,
					      &until) == 0)
			;
		pthread_mutex_unlock(&t->drain_lock);
	}
	while ((n = tracer_poll(t, 0)) > 0)
		total += n;
	return n < 0 ? n : total;
}

void tracer_drain_stats(struct tracer *t, struct tracer_drain_stats *out)
{
	struct recq_stats qs = { 0 };

	if (t->q)
		recq_get_stats(t->q, &qs);
	out->threaded = t->threaded;
	out->stall_ns_max = __atomic_load_n(&t->stall_ns_max, __ATOMIC_RELAXED);
	out->queue_drops = qs.drops;
	out->trace_drops = __atomic_load_n(&t->trace_drops, __ATOMIC_RELAXED);
	out->queue_bytes = qs.bytes;
	out->queue_bytes_max = qs.bytes_max;
	out->queue_bound = qs.max_bytes;
}

void tracer_read_metrics(struct tracer *t, uint64_t *out)
{
	int fd = bpf_map__fd(t->skel->maps.metrics), ncpu = t->ncpus_possible;
	__u64 *vals = calloc(ncpu, sizeof(__u64));
	__u32 id;
	int c;

	memset(out, 0, sizeof(*out) * METRIC_COUNT);
	if (!vals)
		return;
	for (id = 0; id < METRIC_COUNT; id++) {
		if (bpf_map_lookup_elem(fd, &id, vals))
			continue;
		for (c = 0; c < ncpu; c++)
			out[id] += vals[c];
	}
	free(vals);
}

struct bpfmaps *tracer_maps(struct tracer *t)
{
	return &t->bm;
}

int tracer_prog_stats(struct tracer *t, struct tracer_prog_stats *out, int max)
{
	struct bpf_program *p;
	int n = 0;

	bpf_object__for_each_program(p, t->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (n >= max)
			break;
		if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
			continue;
		out[n].name = bpf_program__name(p);
		out[n].run_cnt = info.run_cnt;
		out[n].run_time_ns = info.run_time_ns;
		n++;
	}
	return n;
}

int tracer_nprogs(struct tracer *t)
{
	struct bpf_program *p;
	int n = 0;

	bpf_object__for_each_program(p, t->skel->obj)
		if (bpf_program__fd(p) >= 0)
			n++;
	return n;
}

int tracer_nevents(struct tracer *t)
{
	return t->n_perf;
}

void tracer_free(struct tracer *t)
{
	int i;

	if (!t)
		return;
	stop_drain(t);
	for (i = 0; i < t->n_perf; i++) {
		bpf_link__destroy(t->perf_links[i]);
		close(t->perf_fds[i]);
	}
	free(t->perf_links);
	free(t->perf_fds);
	ring_buffer__free(t->rb);
	recq_free(t->q);
	pthread_cond_destroy(&t->drained);
	pthread_mutex_destroy(&t->drain_lock);
	for (i = 0; t->bm.chunks && i < (int)t->bm.max_chunks; i++)
		if (t->bm.chunks[i])
			munmap(t->bm.chunks[i], CHUNK_BYTES);
	free(t->bm.chunks);
	if (t->bm.rules)
		munmap(t->bm.rules, t->rules_len);
	profiler__destroy(t->skel);
	for (i = 0; i < t->n_own; i++)
		close(t->own_fds[i]);
	if (t->btf_fd >= 0)
		close(t->btf_fd);
	free(t);
}
