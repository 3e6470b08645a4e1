// SPDX-License-Identifier: Apache-2.0
#include "pipeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "elfaddr.h"
#include "hashmap.h"
#include "log.h"
#include "metrics.h"

/* ---- an arena whose memory never moves: strings and stack arrays ------ */

struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

struct arena {
	struct chunk *head;
	size_t total;
};

static void *arena_alloc(struct arena *a, size_t n, size_t align)
{
	struct chunk *c = a->head;
	size_t off;

	if (c) {
		off = (c->used + align - 1) & ~(align - 1);
		if (off + n <= c->cap) {
			c->used = off + n;
			return c->data + off;
		}
	}
	size_t cap = n > 65536 ? n : 65536;
	c = malloc(sizeof(*c) + cap);
	if (!c)
		return NULL;
	c->next = a->head;
	c->used = n;
	c->cap = cap;
	a->head = c;
	a->total += cap;
	return c->data;
}

static void arena_free(struct arena *a)
{
	struct chunk *c = a->head, *n;

	for (; c; c = n) {
		n = c->next;
		free(c);
	}
	a->head = NULL;
	a->total = 0;
}

/* ---- growable arrays ---------------------------------------------------- */

#define ARR_PUSH(arr, n, cap, limit)                                           \
	({                                                                     \
		int ok_ = 1;                                                   \
		if ((n) == (cap)) {                                            \
			uint32_t nc_ = (cap) ? (cap)*2 : 256;                  \
			void *p_;                                              \
			if (nc_ > (limit))                                     \
				nc_ = (limit);                                 \
			if ((n) >= nc_ ||                                      \
			    !(p_ = realloc((arr), (size_t)nc_ * sizeof(*(arr))))) \
				ok_ = 0;                                       \
			else {                                                 \
				(arr) = p_;                                    \
				(cap) = nc_;                                   \
			}                                                      \
		}                                                              \
		ok_;                                                           \
	})

struct sample_ext {
	uint64_t key_hash;
	uint32_t next; /* hash chain */
	uint32_t ts_cap;
	uint64_t *ts;
};

struct tp {
	struct pm *pm;
	struct exe_mgr *em;
	struct ksyms_async *ka;
	struct tp_opts o;
	struct tp_stats st;
	struct arena arena;
	char host[256];
	char kernel[128];
	int64_t mono_to_real; /* add to ktime for unix ns */
	uint64_t start_ns;    /* interval start, unix ns */

	struct rep_mapping *maps;
	uint32_t n_maps, cap_maps;
	struct hm map_by_file; /* hash(pid, id64, start) -> index; hash(pid,
				* id64) -> the file's last one in pid */

	struct rep_location *locs;
	uint32_t n_locs, cap_locs;
	uint32_t *loc_next;
	struct hm loc_by_key; /* hash -> first index */
	uint64_t *loc_key;    /* the key hash of each location */

	struct rep_stack *stacks;
	uint32_t n_stacks, cap_stacks;
	uint32_t *stack_next;
	uint64_t *stack_hash;
	struct hm stack_by_hash;

	struct rep_process *procs;
	uint32_t n_procs, cap_procs;
	struct hm proc_by_pid;

	struct rep_sample *samples;
	struct sample_ext *sx;
	uint32_t n_samples, cap_samples, cap_sx;
	struct hm sample_by_hash;

	uint32_t scratch[MAX_KERNEL_FRAMES + MAX_USER_FRAMES + 8];

	/* records waiting for their process' sync, oldest first */
	struct tp_wait **wait;
	uint32_t n_wait, cap_wait;
	size_t wait_bytes;
};

/* The waiting list's bounds: its memory, and how long a record waits
 * for a request the loop has not served (a sync that takes longer is
 * not waited for: the record is named by what is known). */
#define TP_WAIT_MAX_BYTES (4u << 20)
#define TP_WAIT_MAX_NS (2000000000ULL)

static int64_t clock_offset(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((int64_t)r.tv_sec - m.tv_sec) * 1000000000LL +
	       (r.tv_nsec - m.tv_nsec);
}

static uint64_t unix_now(void)
{
	struct timespec r;

	clock_gettime(CLOCK_REALTIME, &r);
	return (uint64_t)r.tv_sec * 1000000000ULL + r.tv_nsec;
}

int tp_new(struct pm *pm, struct exe_mgr *em, struct ksyms_async *ka,
	   const struct tp_opts *opts, struct tp **out)
{
	struct tp *tp = calloc(1, sizeof(*tp));
	struct utsname u;

	*out = NULL;
	if (!tp)
		return -ENOMEM;
	tp->pm = pm;
	tp->em = em;
	tp->ka = ka;
	tp->o = *opts;
	if (!tp->o.max_timestamps)
		tp->o.max_timestamps = 256;
	if (!tp->o.max_samples)
		tp->o.max_samples = 1 << 20;
	if (!tp->o.max_locations)
		tp->o.max_locations = 1 << 20;
	/* The host's strings are the batch's for the daemon's life: made
	 * valid UTF-8 here, once (the others in arena_str). */
	if (uname(&u) == 0) {
		rep_utf8_fix(tp->host, sizeof(tp->host), u.nodename);
		rep_utf8_fix(tp->kernel, sizeof(tp->kernel), u.release);
	}
	tp->mono_to_real = clock_offset();
	tp->start_ns = unix_now();
	*out = tp;
	return 0;
}

/* Every string from outside (comm, /proc, ELF, process memory) enters the
 * batch here, once per interval, and is made valid UTF-8 on the way: the
 * one place every encoder's strings pass (reporter.h).  A comm the kernel
 * cut inside a character keeps its bytes and ends in U+FFFD. */
static const char *arena_str(struct tp *tp, const char *s)
{
	size_t n;
	char *p;

	if (!s)
		return NULL;
	n = rep_utf8_fix(NULL, 0, s) + 1;
	p = arena_alloc(&tp->arena, n, 1);
	if (p)
		rep_utf8_fix(p, n, s);
	return p;
}

/* ---- interning ------------------------------------------------------- */

/* Does rep mapping m hold f's ELF address addr?  A mapping of a process
 * we never read (limit 0) stands for the whole file. */
static bool rep_holds(const struct rep_mapping *m, uint64_t addr)
{
	uint64_t pc = ea_runtime_addr(m->bias, addr);

	return !m->limit || (pc >= m->start && pc < m->limit);
}

/* One mapping per mapping of a file in a process: runtime addresses
 * differ between processes, and a file with split text has several
 * mappings.  addr is the frame's ELF address in f; pmm the process'
 * mapping that holds it, when the caller knows it. */
static uint32_t intern_mapping(struct tp *tp, uint32_t pid, struct exe_file *f,
			       const struct pm_mapping *pmm, uint64_t addr)
{
	uint64_t key[3] = { pid, f->id64, 0 }, v;
	uint64_t last = hm_hash(key, sizeof(key), 5), h;
	struct rep_mapping *m;

	/* the file's last mapping in the process, almost always the one */
	if (hm_get(&tp->map_by_file, last, &v) && rep_holds(&tp->maps[v], addr))
		return (uint32_t)v;
	if (!pmm)
		pmm = pm_find_file_mapping(pm_find(tp->pm, (pid_t)pid), f, addr);
	key[2] = pmm ? pmm->start : 0;
	h = hm_hash(key, sizeof(key), 6);
	if (hm_get(&tp->map_by_file, h, &v))
		goto found;
	if (!ARR_PUSH(tp->maps, tp->n_maps, tp->cap_maps, tp->o.max_locations))
		return REP_NONE;
	m = &tp->maps[tp->n_maps];
	memset(m, 0, sizeof(*m));
	if (pmm) {
		m->start = pmm->start;
		m->limit = pmm->end;
		m->file_offset = pmm->offset;
		m->bias = pmm->bias;
	}
	m->path = arena_str(tp, f->path);
	memcpy(m->file_id, f->id.b, 16);
	m->gnu_build_id = arena_str(tp, exe_build_id(tp->em, f));
	if (hm_put(&tp->map_by_file, h, tp->n_maps))
		return REP_NONE;
	v = tp->n_maps++;
found:
	if (hm_put(&tp->map_by_file, last, v))
		return REP_NONE;
	return (uint32_t)v;
}

/* Find or add a location keyed by (kind, id, addr). */
static uint32_t find_loc(struct tp *tp, unsigned kind, uint64_t id,
			 uint64_t addr, uint64_t *hash_out, bool *found)
{
	uint64_t key[3] = { kind, id, addr }, h = hm_hash(key, sizeof(key), 7), v;

	*hash_out = h;
	*found = false;
	if (hm_get(&tp->loc_by_key, h, &v)) {
		uint32_t i = (uint32_t)v;
		*found = true;
		return i; /* collisions of the 64-bit hash are ignored */
	}
	return REP_NONE;
}

static uint32_t add_loc(struct tp *tp, uint64_t h, const struct rep_location *l)
{
	uint32_t old_cap = tp->cap_locs;

	if (!ARR_PUSH(tp->locs, tp->n_locs, tp->cap_locs, tp->o.max_locations))
		return REP_NONE;
	if (tp->cap_locs != old_cap) {
		uint64_t *k = realloc(tp->loc_key, tp->cap_locs * sizeof(*k));
		if (!k)
			return REP_NONE;
		tp->loc_key = k;
	}
	tp->locs[tp->n_locs] = *l;
	tp->loc_key[tp->n_locs] = h;
	if (hm_put(&tp->loc_by_key, h, tp->n_locs))
		return REP_NONE;
	return tp->n_locs++;
}

static uint32_t kernel_loc(struct tp *tp, uint64_t addr)
{
	struct rep_location l = { .kind = REP_FRAME_KERNEL, .mapping = REP_NONE,
				  .address = addr };
	uint64_t h, off;
	bool found;
	uint32_t i = find_loc(tp, REP_FRAME_KERNEL, 0, addr, &h, &found);
	const char *name;
	char buf[64];

	if (found)
		return i;
	name = ksyms_lookup(ksyms_async_get(tp->ka), addr, &off, NULL);
	if (!name) {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)addr);
		name = buf;
	}
	l.function = arena_str(tp, name);
	return add_loc(tp, h, &l);
}

/* A native frame of process pid: file f at ELF address addr. */
static uint32_t native_loc(struct tp *tp, uint32_t pid, struct exe_file *f,
			   const struct pm_mapping *pmm, uint64_t addr,
			   bool ret_addr)
{
	struct rep_location l = { .kind = REP_FRAME_NATIVE, .address = addr };
	uint64_t h, off;
	bool found;
	uint32_t i, map = intern_mapping(tp, pid, f, pmm,
					 addr - (ret_addr ? 1 : 0));

	if (map == REP_NONE)
		return REP_NONE;
	i = find_loc(tp, REP_FRAME_NATIVE, map, addr, &h, &found);
	if (found)
		return i;
	l.mapping = map;
	/* a return address points after the call: name the call */
	l.function = arena_str(tp, exe_symbolize(tp->em, f,
						 addr - (ret_addr ? 1 : 0), &off));
	return add_loc(tp, h, &l);
}

/* A pc in no known file: what is a literal ("[anon]", "[unknown]",
 * "[unknown file]").  The same pc means different code in two processes,
 * and one pc may be named differently (a mapping appeared), so the key is
 * (process, pc, label). */
static uint32_t unknown_loc(struct tp *tp, uint32_t pid, uint64_t pc,
			    const char *what)
{
	struct rep_location l = { .kind = REP_FRAME_NATIVE, .mapping = REP_NONE,
				  .address = pc };
	uint64_t h, id = hm_hash(what, strlen(what), pid);
	bool found;
	uint32_t i = find_loc(tp, 100, id, pc, &h, &found);

	if (found)
		return i;
	l.function = what;
	return add_loc(tp, h, &l);
}

static uint32_t error_loc(struct tp *tp, uint32_t code)
{
	struct rep_location l = { .kind = REP_FRAME_ERROR, .mapping = REP_NONE };
	uint64_t h;
	bool found;
	uint32_t i = find_loc(tp, REP_FRAME_ERROR, 0, code, &h, &found);
	char buf[96];

	if (found)
		return i;
	snprintf(buf, sizeof(buf), "[unwind error: %s]",
		 metric_name(code));
	l.function = arena_str(tp, buf);
	return add_loc(tp, h, &l);
}

static uint32_t interp_loc(struct tp *tp, uint32_t pid, unsigned kind,
			   __u64 data, __u64 payload)
{
	struct rep_location l = { .mapping = REP_NONE };
	char name[512], file[512];
	uint64_t h, key[2] = { data, payload };
	bool found;
	uint32_t i;

	/* interpreter objects live in process memory: key by pid too */
	i = find_loc(tp, kind, hm_hash(key, sizeof(key), pid), pid, &h, &found);
	if (found)
		return i;
	name[0] = file[0] = 0;
	if (!tp->o.interp_frame ||
	    tp->o.interp_frame(tp->o.interp_arg, pid, kind, data, payload, &l,
			       name, sizeof(name), file, sizeof(file))) {
		snprintf(name, sizeof(name), "[interp 0x%llx]",
			 (unsigned long long)payload);
		l.kind = REP_FRAME_NATIVE;
	}
	l.function = arena_str(tp, name);
	l.filename = file[0] ? arena_str(tp, file) : NULL;
	return add_loc(tp, h, &l);
}

static uint32_t intern_stack(struct tp *tp, const uint32_t *locs, uint32_t n)
{
	uint64_t h = hm_hash(locs, n * sizeof(*locs), n), v;
	uint32_t *copy, old_cap = tp->cap_stacks;
	struct rep_stack *s;

	if (hm_get(&tp->stack_by_hash, h, &v)) {
		s = &tp->stacks[v];
		if (s->n == n && !memcmp(s->locations, locs, n * sizeof(*locs)))
			return (uint32_t)v;
		/* a 64-bit collision: keep them apart by rehashing */
		h = hm_mix(h + 1);
	}
	if (!ARR_PUSH(tp->stacks, tp->n_stacks, tp->cap_stacks, tp->o.max_samples))
		return REP_NONE;
	(void)old_cap;
	copy = arena_alloc(&tp->arena, (n ? n : 1) * sizeof(*copy), 4);
	if (!copy)
		return REP_NONE;
	memcpy(copy, locs, n * sizeof(*locs));
	s = &tp->stacks[tp->n_stacks];
	s->n = n;
	s->locations = copy;
	if (hm_put(&tp->stack_by_hash, h, tp->n_stacks))
		return REP_NONE;
	return tp->n_stacks++;
}

/* The process of a trace.  Receivers want an executable path and name
 * on every resource: a kernel thread has none ("[kernel]"), and a process
 * that exited before it was read is "[unknown]"; both are named by their
 * command. */
static uint32_t intern_proc(struct tp *tp, const struct trace_hdr *h)
{
	uint32_t pid = h->pid;
	char comm[17];
	struct rep_process *p;
	struct pm_proc *pp;
	uint64_t v;

	if (hm_get(&tp->proc_by_pid, pid, &v))
		return (uint32_t)v;
	if (!ARR_PUSH(tp->procs, tp->n_procs, tp->cap_procs, tp->o.max_samples))
		return REP_NONE;
	p = &tp->procs[tp->n_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	pp = pm_find(tp->pm, (pid_t)pid);
	if (pp) {
		p->exe_path = arena_str(tp, pp->exe_path);
		if (p->exe_path) {
			const char *b = strrchr(p->exe_path, '/');
			p->exe_name = b ? b + 1 : p->exe_path;
		}
		if (pp->container_id[0])
			p->container_id = arena_str(tp, pp->container_id);
	}
	if (!p->exe_path) {
		memcpy(comm, h->comm, 16);
		comm[16] = 0;
		p->exe_path = (h->flags & TRACE_F_KERNEL_ONLY) ? "[kernel]" : "[unknown]";
		p->exe_name = arena_str(tp, pp && pp->comm[0] ? pp->comm : comm);
	}
	if (hm_put(&tp->proc_by_pid, pid, tp->n_procs))
		return REP_NONE;
	return tp->n_procs++;
}

/* One sample per (process, thread, stack, CPU, comm), as the reference
 * agent keeps them: every sample has its cpu.logical_number, and a thread
 * that ran one stack on two CPUs has two samples whose counts add up (the
 * folded and SVG encoders, which show no CPU, merge them again). */
static void add_sample(struct tp *tp, const struct trace_hdr *h, uint32_t stack)
{
	struct {
		uint32_t pid, tid, stack, cpu;
		char comm[16];
	} key = { h->pid, h->tid, stack, h->cpu };
	uint64_t kh, v, ts;
	struct rep_sample *s;
	struct sample_ext *x;
	uint32_t proc;

	memcpy(key.comm, h->comm, sizeof(key.comm));
	key.comm[15] = 0;
	kh = hm_hash(&key, sizeof(key), 3);
	ts = h->ktime + tp->mono_to_real;
	if (hm_get(&tp->sample_by_hash, kh, &v)) {
		s = &tp->samples[v];
		x = &tp->sx[v];
		s->count++;
		goto stamp;
	}
	proc = intern_proc(tp, h);
	if (proc == REP_NONE)
		goto full;
	if (!ARR_PUSH(tp->samples, tp->n_samples, tp->cap_samples,
		      tp->o.max_samples))
		goto full;
	if (tp->cap_sx < tp->cap_samples) {
		x = realloc(tp->sx, tp->cap_samples * sizeof(*x));
		if (!x)
			goto full;
		tp->sx = x;
		tp->cap_sx = tp->cap_samples;
	}
	s = &tp->samples[tp->n_samples];
	x = &tp->sx[tp->n_samples];
	memset(s, 0, sizeof(*s));
	memset(x, 0, sizeof(*x));
	s->process = proc;
	s->stack = stack;
	s->tid = h->tid;
	s->thread_name = arena_str(tp, key.comm);
	s->cpu = (int32_t)h->cpu;
	s->count = 1;
	x->key_hash = kh;
	if (hm_put(&tp->sample_by_hash, kh, tp->n_samples))
		goto full;
	tp->n_samples++;
stamp:
	if (s->n_timestamps < tp->o.max_timestamps) {
		if (s->n_timestamps == x->ts_cap) {
			uint32_t cap = x->ts_cap ? x->ts_cap * 2 : 4;
			uint64_t *p = realloc(x->ts, cap * sizeof(*p));
			if (!p)
				return;
			x->ts = p;
			x->ts_cap = cap;
			s->timestamps = p;
		}
		x->ts[s->n_timestamps++] = ts;
	}
	tp->st.samples++;
	return;
full:
	tp->st.dropped_full++;
}

/* Name the frames of one record and aggregate it. */
static void add_record(struct tp *tp, const struct trace_hdr *h,
		       const __u64 *words)
{
	uint32_t *locs = tp->scratch, n = 0, i;
	const __u64 *uw = words + h->n_kernel;
	struct pm_proc *proc = NULL;
	bool proc_tried = false;


	/* leaf first: the kernel frames, then the user frames */
	for (i = 0; i < h->n_kernel && i < MAX_KERNEL_FRAMES; i++)
		locs[n++] = kernel_loc(tp, words[i]);
	for (i = 0; i < h->n_user && n < MAX_KERNEL_FRAMES + MAX_USER_FRAMES;) {
		__u64 w = uw[i];
		unsigned kind = FRAME_KIND(w), flags = FRAME_FLAGS(w);
		uint64_t data = FRAME_DATA(w);
		bool ret = flags & FRAME_F_RETURN_ADDR;
		uint32_t loc = REP_NONE;

		switch (kind) {
		case FRAME_NATIVE: {
			struct exe_file *f;

			if (i + 1 >= h->n_user)
				goto bad;
			f = exe_find(tp->em, uw[i + 1]);
			if (f)
				loc = native_loc(tp, h->pid, f, NULL, data, ret);
			else
				loc = unknown_loc(tp, h->pid, data, "[unknown file]");
			i += 2;
			break;
		}
		case FRAME_RAW: {
			const struct pm_mapping *m = NULL;

			/* an unsynced process, or a pc BPF did not know:
			 * map it through our copy of the mappings (a record
			 * of a process not loaded waited for its sync) */
			if (!proc_tried) {
				proc_tried = true;
				proc = pm_find(tp->pm, (pid_t)h->pid);
			}
			if (proc)
				m = pm_find_mapping(proc, data - (ret ? 1 : 0));
			if (m && m->file)
				loc = native_loc(tp, h->pid, m->file, m,
						 ea_elf_addr(m->bias, data), ret);
			else {
				tp->st.raw_unresolved++;
				loc = unknown_loc(tp, h->pid, data,
						  m ? "[anon]" : "[unknown]");
			}
			i += 1;
			break;
		}
		case FRAME_ERROR:
			i += 1;
			if (!tp->o.send_error_frames)
				continue;
			loc = error_loc(tp, (uint32_t)data);
			break;
		default:
			if (kind >= FRAME_PYTHON && kind < FRAME_ERROR) {
				if (i + 1 >= h->n_user)
					goto bad;
				loc = interp_loc(tp, h->pid, kind, data, uw[i + 1]);
				i += 2;
				break;
			}
			goto bad;
		}
		if (loc == REP_NONE) {
			tp->st.dropped_full++;
			return;
		}
		locs[n++] = loc;
	}
	i = intern_stack(tp, locs, n);
	if (i == REP_NONE) {
		tp->st.dropped_full++;
		return;
	}
	add_sample(tp, h, i);
	return;
bad:
	tp->st.bad_records++;
}

/* A record of a process whose sync was asked for: kept until the poll
 * loop served the request (tp_retry). */
struct tp_wait {
	uint64_t since_ns;
	size_t bytes;
	struct trace_hdr h;
	__u64 words[];
};

static bool proc_synced(struct tp *tp, uint32_t pid)
{
	struct pm_proc *p = pm_find(tp->pm, (pid_t)pid);

	return p && p->synced;
}

/* Keep a copy of the record; false when the waiting list is full. */
static bool park(struct tp *tp, const struct trace_hdr *h, const __u64 *words)
{
	size_t nw = (size_t)h->n_kernel + h->n_user;
	size_t bytes = sizeof(struct tp_wait) + nw * sizeof(__u64);
	struct tp_wait *w, **arr;

	if (tp->wait_bytes + bytes > TP_WAIT_MAX_BYTES)
		return false;
	if (tp->n_wait == tp->cap_wait) {
		uint32_t cap = tp->cap_wait ? tp->cap_wait * 2 : 64;

		arr = reallocarray(tp->wait, cap, sizeof(*arr));
		if (!arr)
			return false;
		tp->wait = arr;
		tp->cap_wait = cap;
	}
	w = malloc(bytes);
	if (!w)
		return false;
	w->since_ns = exe_now_ns();
	w->bytes = bytes;
	w->h = *h;
	memcpy(w->words, words, nw * sizeof(__u64));
	tp->wait[tp->n_wait++] = w;
	tp->wait_bytes += bytes;
	tp->st.waited++;
	return true;
}

void tp_add_trace(struct tp *tp, const struct trace_hdr *h, const __u64 *words)
{
	tp->st.traces++;
	if (h->flags & TRACE_F_UNSYNCED)
		tp->st.unsynced++;
	if (h->flags & TRACE_F_TRUNCATED)
		tp->st.truncated++;
	if (h->flags & TRACE_F_COMPLETE)
		tp->st.complete++;
	if (h->flags & TRACE_F_KERNEL_ONLY)
		tp->st.kernel_only++;
	if (h->flags & TRACE_F_ERROR) {
		tp->st.unwind_errors++;
		if (h->error < METRIC_COUNT)
			tp->st.errors_by_code[h->error]++;
	}
	/* A process not loaded yet: its raw pcs are named through the
	 * mappings its sync reads.  Ask for it and keep the record until the
	 * poll loop has served the request: reading /proc and extracting
	 * files never run here.  Full: named now, by what is known. */
	if ((h->flags & TRACE_F_UNSYNCED) && !proc_synced(tp, h->pid)) {
		if (pm_request(tp->pm, (pid_t)h->pid, PM_REQ_SYNC) == 0 &&
		    park(tp, h, words))
			return;
		tp->st.wait_full++;
	}
	add_record(tp, h, words);
}

void tp_retry(struct tp *tp, bool force)
{
	uint64_t now = exe_now_ns();
	uint32_t i, kept = 0;

	for (i = 0; i < tp->n_wait; i++) {
		struct tp_wait *w = tp->wait[i];
		bool expired = now - w->since_ns >= TP_WAIT_MAX_NS;

		/* synced, or the request is done and did not sync it (the
		 * process is gone): named as well as it can be */
		if (!force && !expired && !proc_synced(tp, w->h.pid) &&
		    pm_is_pending(tp->pm, (pid_t)w->h.pid)) {
			tp->wait[kept++] = w;
			continue;
		}
		if (expired)
			tp->st.wait_expired++;
		add_record(tp, &w->h, w->words);
		tp->wait_bytes -= w->bytes;
		free(w);
	}
	tp->n_wait = kept;
}

uint32_t tp_waiting(struct tp *tp)
{
	return tp->n_wait;
}

void tp_batch(struct tp *tp, struct rep_batch *b)
{
	memset(b, 0, sizeof(*b));
	b->start_ns = tp->start_ns;
	b->end_ns = unix_now();
	b->period_ns = tp->o.period_ns;
	b->host_name = tp->host;
	b->os_type = "linux";
	b->kernel_release = tp->kernel;
	b->n_mappings = tp->n_maps;
	b->mappings = tp->maps;
	b->n_locations = tp->n_locs;
	b->locations = tp->locs;
	b->n_stacks = tp->n_stacks;
	b->stacks = tp->stacks;
	b->n_processes = tp->n_procs;
	b->processes = tp->procs;
	b->n_samples = tp->n_samples;
	b->samples = tp->samples;
}

void tp_reset(struct tp *tp)
{
	uint32_t i;

	for (i = 0; i < tp->n_samples; i++)
		free(tp->sx[i].ts);
	tp->n_maps = tp->n_locs = tp->n_stacks = tp->n_procs = tp->n_samples = 0;
	hm_clear(&tp->map_by_file);
	hm_clear(&tp->loc_by_key);
	hm_clear(&tp->stack_by_hash);
	hm_clear(&tp->proc_by_pid);
	hm_clear(&tp->sample_by_hash);
	arena_free(&tp->arena);
	tp->start_ns = unix_now();
	tp->mono_to_real = clock_offset();
}

void tp_get_stats(struct tp *tp, struct tp_stats *out)
{
	*out = tp->st;
}

void tp_free(struct tp *tp)
{
	if (!tp)
		return;
	for (uint32_t i = 0; i < tp->n_wait; i++)
		free(tp->wait[i]);
	free(tp->wait);
	tp_reset(tp);
	free(tp->maps);
	free(tp->locs);
	free(tp->loc_key);
	free(tp->stacks);
	free(tp->procs);
	free(tp->samples);
	free(tp->sx);
	hm_free(&tp->map_by_file);
	hm_free(&tp->loc_by_key);
	hm_free(&tp->stack_by_hash);
	hm_free(&tp->proc_by_pid);
	hm_free(&tp->sample_by_hash);
	free(tp);
}
