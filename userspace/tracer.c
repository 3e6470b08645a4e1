// SPDX-License-Identifier: Apache-2.0
#include "tracer.h"
#include "tracer_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <pthread.h>
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

#include "arr.h"
#include "exemgr.h"
#include "fsutil.h"
#include "log.h"
#include "profiler.skel.h"
#include "recq.h"

#define MAX_CPUS 1024

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
	if (ARR_RESERVE(libbpf_log, libbpf_log_cap, libbpf_log_len + n + 1,
			ARR_NO_LIMIT)) {
		pthread_mutex_unlock(&libbpf_log_lock);
		free(buf);
		return 0;
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

/* The maps with an entry or a slice of entries per CPU are plain arrays
 * indexed from the CPU (bpf/maps.bpf.h: a lookup is arithmetic, where a
 * per-CPU array reads the entry's pointer first, a second cold line).
 * A cache is at most this many bytes over all CPUs. */
#define PER_CPU_MAP_MAX_BYTES (1ull << 31)

/* A cache of n entries a CPU, rounded up to a power of two (0: off, one
 * unused slot) and down to PER_CPU_MAP_MAX_BYTES in all; its index mask
 * (0 when off) and in *shift the log2 of a CPU's slice. */
static __u32 size_cache(struct bpf_map *m, uint32_t n, int ncpu,
			volatile __u32 *shift)
{
	uint64_t p = n ? next_pow2(n) : 1;

	while (p > 1 && p * ncpu * bpf_map__value_size(m) > PER_CPU_MAP_MAX_BYTES)
		p >>= 1;
	*shift = (__u32)__builtin_ctzll(p); /* p is a power of two */
	bpf_map__set_max_entries(m, (__u32)(p * (uint64_t)ncpu));
	return n ? (__u32)p - 1 : 0;
}

/* ---- open / load / attach ------------------------------------------------ */

/* Whether a perf program may use a hash map that allocates its entries as
 * they are added (BPF_F_NO_PREALLOC): kernels before the BPF memory
 * allocator (6.1) refuse it.  A map of one entry and a program that
 * looks it up, loaded and dropped: about 0.2 ms. */
static bool probe_no_prealloc(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_NO_PREALLOC);
	int map = bpf_map_create(BPF_MAP_TYPE_HASH, "ep_probe_grow", 4, 4, 1,
				 &mo), prog;
	struct bpf_insn insns[] = {
		/* *(u32 *)(r10 - 4) = 0 */
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10,
		  .off = -4 },
		/* r1 = the map */
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map },
		{ 0 },
		/* r2 = r10 - 4 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2,
		  .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2,
		  .imm = -4 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		/* return 0 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	if (map < 0)
		return false;
	prog = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "ep_probe_grow", "GPL",
			     insns, sizeof(insns) / sizeof(insns[0]), NULL);
	close(map);
	if (prog < 0)
		return false;
	close(prog);
	return true;
}

/* The hash maps userland fills (the stack-delta pages, the processes, the
 * runtimes' per-process entries, the filters) take kernel memory for the
 * entries they hold, not for all they could: preallocated, the defaults
 * held ~8 MB whatever the host ran (delta_pages alone 32K entries of ~136
 * bytes), and -map-scale-factor doubled it a step. */
static void size_hash_maps(struct tracer *t, struct profiler *skel)
{
	struct bpf_map *m;

	if (!t->grow_hash_maps)
		return;
	bpf_object__for_each_map(m, skel->obj)
		if (bpf_map__type(m) == BPF_MAP_TYPE_HASH)
			bpf_map__set_map_flags(m, bpf_map__map_flags(m) |
							  BPF_F_NO_PREALLOC);
}

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
	size_hash_maps(t, skel);
	/* what each CPU has of its own: a scratch, the counters, the
	 * caches (a power of two, or off: one unused slot) */
	bpf_map__set_max_entries(skel->maps.scratch_map, t->ncpus_possible);
	bpf_map__set_max_entries(skel->maps.offcpu_scratch, t->ncpus_possible);
	skel->rodata->rule_cache_mask =
		size_cache(skel->maps.rule_cache, o->rule_cache_entries,
			   t->ncpus_possible, &skel->rodata->rule_cache_shift);
	skel->rodata->map_cache_mask =
		size_cache(skel->maps.map_cache, o->map_cache_entries,
			   t->ncpus_possible, &skel->rodata->map_cache_shift);
	if (o->log_level > 0) {
		struct bpf_program *p;

		bpf_object__for_each_program(p, skel->obj)
			bpf_program__set_log_level(p, o->log_level);
	}
}

/* A skeleton whose CO-RE relocations read the kernel types from our
 * memfd (filled in tracer_load()), so libbpf never parses the kernel's
 * BTF itself when we have the types it needs. */
int tr_open_skel(struct tracer *t, struct profiler **out)
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
	pthread_mutex_init(&t->chunk_lock, NULL);
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
	t->grow_hash_maps = probe_no_prealloc();
	log_debug("hash maps: %s", t->grow_hash_maps ?
		  "entries allocated as they are added" :
		  "preallocated (this kernel's perf programs need it)");
	err = tr_open_skel(t, &skel);
	if (err)
		goto fail;
	t->skel = skel;
	/* -keep-programs: the last run's set, verified, its maps unused */
	tk_take(t);
	skel = t->skel;
	if (!skel) {
		err = -ENOMEM;
		goto fail;
	}
	if (!t->kept) {
		err = tr_create_maps(t);
		if (err)
			goto fail;
	}

	/* the rules array and the rows' chunks are mmap'ed: loading a
	 * file's rows is a memcpy, a new rule a store */
	t->rows_fd = bpf_map__fd(skel->maps.delta_rows);
	t->chunk_shape =
		tr_shape_of(bpf_map__inner_map(skel->maps.delta_rows));
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
	t->bm.rules = tr_map_memory(bpf_map__fd(skel->maps.rules),
				    t->rules_len, &err);
	if (!t->bm.rules) {
		fprintf(stderr, "ebpf-profiler: mmap of the BPF map rules: %s\n",
			strerror(-err));
		goto fail;
	}
	/* the counters lie at the start of each CPU's scratch */
	t->metrics_stride = bpf_map__value_size(skel->maps.scratch_map);
	t->metrics_len =
		(size_t)bpf_map__max_entries(skel->maps.scratch_map) *
		t->metrics_stride;
	t->metrics_mem[0] = tr_map_memory(bpf_map__fd(skel->maps.scratch_map),
					  t->metrics_len, &err);
	if (t->metrics_mem[0])
		t->metrics_mem[1] =
			tr_map_memory(bpf_map__fd(skel->maps.offcpu_scratch),
				      t->metrics_len, &err);
	if (!t->metrics_mem[1]) {
		fprintf(stderr,
			"ebpf-profiler: mmap of the BPF scratch maps (the "
			"counters): %s\n",
			strerror(-err));
		goto fail;
	}
	t->pid_epoch_mem = tr_map_memory(bpf_map__fd(skel->maps.pid_epoch),
					 PID_EPOCH_SLOTS * sizeof(__u64), &err);
	if (!t->pid_epoch_mem) {
		fprintf(stderr,
			"ebpf-profiler: mmap of the BPF map pid_epoch: %s\n",
			strerror(-err));
		goto fail;
	}
	t->bm.ops = &tr_libbpf_ops;
	t->bm.ctx = t;
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

int tr_set_tail_calls(struct profiler *skel, int unwind_native_fd)
{
	__u32 key = PROG_NATIVE, fd = (__u32)unwind_native_fd;

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.progs), &key, &fd, 0))
		return -errno;
	return 0;
}

int tracer_load(struct tracer *t, const void *types, size_t len)
{
	struct profiler *skel;
	int err;

	/* kept programs: the skeleton loads none, only maps its arrays */
	err = load_skel(t, types, len);
	if (err && types && !t->kept) {
		/* the cut-down types did not do: a second skeleton, on the
		 * same maps, with the kernel's whole BTF */
		t->btf_rejected = true;
		clear_libbpf_log();
		log_warn("loading with the cached kernel types failed (%s); "
			 "using /sys/kernel/btf/vmlinux",
			 strerror(-err));
		profiler__destroy(t->skel);
		t->skel = NULL;
		err = tr_open_skel(t, &skel);
		if (err)
			return err;
		t->skel = skel;
		err = tr_reuse_maps(t, skel);
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

	err = tr_set_tail_calls(t->skel,
				tk_prog_fd(t, t->skel->progs.unwind_native));
	if (err) {
		fprintf(stderr, "ebpf-profiler: tail-call table: %s\n",
			strerror(-err));
		return err;
	}
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.traces), tr_on_trace_rec,
				 t, NULL);
	if (!t->rb || ring_buffer__add(t->rb, bpf_map__fd(t->skel->maps.events),
				       tr_on_event_rec, t)) {
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

bool tracer_programs_kept(struct tracer *t)
{
	return t->kept;
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

	/* the chunks of rows made so far are where BPF finds them */
	tr_chunks_defer(t, false);

	/* the rings drain on their own thread from the first record on */
	err = tr_start_drain(t);
	if (err)
		log_warn("no drain thread (%s): the rings drain on the poll loop",
			 strerror(-err));
	err = profiler__attach(t->skel);
	if (!err)
		err = tk_attach(t);
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
		bool ok;
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
		if (t->kept) {
			/* no bpf_program to attach: the event runs the
			 * kept program until its fd closes */
			link = NULL;
			ok = !ioctl(fd, PERF_EVENT_IOC_SET_BPF,
				    tk_prog_fd(t, t->skel->progs.sample)) &&
			     !ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		} else {
			link = bpf_program__attach_perf_event(
				t->skel->progs.sample, fd);
			ok = link != NULL;
		}
		if (!ok) {
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
	t->keep_next = t->o.keep_dir != NULL;
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

void tracer_read_metrics(struct tracer *t, uint64_t *out)
{
	const volatile __u64 *v;
	__u32 id;
	int m, c;

	memset(out, 0, sizeof(*out) * METRIC_COUNT);
	for (m = 0; m < 2; m++) {
		if (!t->metrics_mem[m])
			continue;
		for (c = 0; c < t->ncpus_possible; c++) {
			v = (const volatile __u64 *)((char *)t->metrics_mem[m] +
						     (size_t)c *
							     t->metrics_stride);
			for (id = 0; id < METRIC_COUNT; id++)
				out[id] += v[id];
		}
	}
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
		if (bpf_obj_get_info_by_fd(tk_prog_fd(t, p), &info, &len))
			continue;
		out[n].name = bpf_program__name(p);
		out[n].run_cnt = info.run_cnt;
		out[n].run_time_ns = info.run_time_ns;
		out[n].verified_insns = info.verified_insns;
		n++;
	}
	return n;
}

int tracer_nprogs(struct tracer *t)
{
	struct bpf_program *p;
	int n = 0;

	bpf_object__for_each_program(p, t->skel->obj)
		if (tk_prog_fd(t, p) >= 0)
			n++;
	return n;
}

int tracer_nevents(struct tracer *t)
{
	return t->n_perf;
}

void tracer_defer_chunks(struct tracer *t)
{
	tr_chunks_defer(t, true);
}

void tracer_closing(struct tracer *t)
{
	if (t)
		t->exiting = true;
}

void tracer_free(struct tracer *t)
{
	int i;

	if (!t)
		return;
	tr_stop_drain(t);
	tr_chunks_defer(t, false);
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
	pthread_mutex_destroy(&t->chunk_lock);
	for (i = 0; t->bm.chunks && i < (int)t->bm.max_chunks; i++)
		if (t->bm.chunks[i])
			munmap(t->bm.chunks[i], CHUNK_BYTES);
	free(t->bm.chunks);
	if (t->bm.rules)
		munmap(t->bm.rules, t->rules_len);
	for (i = 0; i < 2; i++)
		if (t->metrics_mem[i])
			munmap(t->metrics_mem[i], t->metrics_len);
	if (t->pid_epoch_mem)
		munmap(t->pid_epoch_mem, PID_EPOCH_SLOTS * sizeof(__u64));
	for (i = 0; i < t->n_kept_links; i++)
		close(t->kept_links[i]);
	for (i = 0; t->kept && i < MAX_PROGS; i++)
		if (t->kept_fds[i] >= 0)
			close(t->kept_fds[i]);
	profiler__destroy(t->skel);
	for (i = 0; i < t->n_own; i++)
		close(t->own_fds[i]);
	/* -keep-programs: a fresh set for the next start, this run's maps
	 * gone first */
	if (t->keep_next)
		tk_make_next(t);
	if (t->btf_fd >= 0)
		close(t->btf_fd);
	free(t);
}
