// SPDX-License-Identifier: Apache-2.0
#include "pipeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "arr.h"
#include "elfaddr.h"
#include "hashmap.h"
#include "intern.h"
#include "log.h"
#include "metrics.h"
#include "symbolize.h"

/* A location: what the symbolizer's frame is, whole (enum sy_kind, the
 * interpreter's frame kind, its payload words and the return-address
 * flag in kind; in kind's top byte, a location's depth in its frame's
 * inline chain). */
struct loc_key {
	uint32_t kind, pid;
	uint64_t a, b[FRAME_MAX_PAYLOAD];
};
#define LOC_DEPTH_SHIFT 24
_Static_assert(INL_MAX_FRAMES <= 256 && INTERP_CHAIN_MAX <= 256,
	       "a chain's depth fits kind's top byte");

/* A mapping of a file in a process. */
struct map_key {
	uint32_t pid, pad;
	uint64_t id64, start;
};

/* A sample: one per (process, thread, stack, CPU, comm). */
struct sample_key {
	uint32_t pid, tid, stack, cpu;
	uint32_t kind; /* enum rep_sample_kind: CPU and off-CPU apart */
	char comm[16];
};

struct sample_ext {
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

	struct symbolizer *sy;

	/* Each table's entries and the interner of their keys: a key's id
	 * is its entry's index (reserve the entry, then add the key). */
	struct rep_mapping *maps;
	uint32_t n_maps, cap_maps;
	struct intern map_by_key; /* struct map_key */
	struct hm map_last; /* hash(pid, id64) -> the file's last one in pid */

	struct rep_location *locs;
	uint32_t n_locs, cap_locs;
	struct intern loc_by_key; /* struct loc_key */
	/* a frame standing for an inline chain (DWARF's, or a JIT's):
	 * its locations follow its first one, loc_n[first] of them (1
	 * for any other location) */
	uint8_t *loc_n;
	uint32_t cap_loc_n;

	struct rep_stack *stacks;
	uint32_t n_stacks, cap_stacks;
	struct intern stack_by_key; /* the locations; the stack points at it */

	struct rep_process *procs;
	uint32_t n_procs, cap_procs;
	struct hm proc_by_pid; /* pid -> index: the key itself */

	struct rep_sample *samples;
	struct sample_ext *sx;
	uint32_t n_samples, cap_samples, cap_sx;
	struct intern sample_by_key; /* struct sample_key */

	uint32_t scratch[MAX_KERNEL_FRAMES + MAX_USER_FRAMES + 8];

	/* records waiting for their process' sync, oldest first */
	struct tp_wait **wait;
	uint32_t n_wait, cap_wait;
	size_t wait_bytes;
};

/* The waiting list's bounds: its memory, and how long a record waits
 * for a request the loop has not served.  The requests are served first
 * in first out, at least one a round, so a request is served unless the
 * loop is stuck; the time is a safety net, longer than the longest
 * extraction seen (a few seconds for a 500 MB file), and an interval's
 * cut takes every record anyway. */
#define TP_WAIT_MAX_BYTES (4u << 20)
#define TP_WAIT_MAX_NS (10000000000ULL)

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
	if (sy_new(pm, em, ka, tp->o.interp_frame, tp->o.interp_arg, &tp->sy)) {
		free(tp);
		return -ENOMEM;
	}
	sy_set_inline(tp->sy, tp->o.inlines);
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

/* The id of key in t in one search: added (*added) when new and room is
 * 0, the result of making room for its entries beside t first (so that a
 * key is never added without them); found only, when there is no room.
 * Negative when not there and not added. */
static int64_t intern_with_room(struct intern *t, const void *key, size_t len,
				int room, bool *added)
{
	*added = false;
	return room ? intern_find(t, key, len) : intern_add(t, key, len, added);
}

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
 * mapping that holds it, when the symbolizer knows it. */
static uint32_t intern_mapping(struct tp *tp, uint32_t pid, struct exe_file *f,
			       const struct pm_mapping *pmm, uint64_t addr)
{
	struct map_key k = { .pid = pid, .id64 = f->id64 };
	uint64_t last = hm_hash(&k, sizeof(k), 0), v;
	const struct map_key *lk;
	struct rep_mapping *m;
	bool added;
	int64_t id;
	uint32_t i;

	/* the file's last mapping in the process, almost always the one */
	if (hm_get(&tp->map_last, last, &v) &&
	    (lk = intern_key(&tp->map_by_key, (uint32_t)v, NULL)) &&
	    lk->pid == pid && lk->id64 == f->id64 &&
	    rep_holds(&tp->maps[v], addr))
		return (uint32_t)v;
	if (!pmm)
		pmm = sy_file_mapping(tp->sy, pid, f, addr);
	k.start = pmm ? pmm->start : 0;
	id = intern_with_room(&tp->map_by_key, &k, sizeof(k),
			      ARR_PUSH(tp->maps, tp->n_maps, tp->cap_maps,
				       tp->o.max_locations),
			      &added);
	if (id < 0)
		return REP_NONE;
	i = (uint32_t)id;
	if (!added)
		goto found;
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
	i = tp->n_maps++;
found:
	if (hm_put(&tp->map_last, last, i))
		return REP_NONE;
	return i;
}

/* Add location l under key k (not there yet); its index, or REP_NONE. */
static uint32_t add_loc(struct tp *tp, const struct loc_key *k,
			const struct rep_location *l)
{
	bool added;

	/* an inline chain's keys are new with its first: added stays true
	 * unless that breaks, which would part ids from indices */
	if (ARR_PUSH(tp->locs, tp->n_locs, tp->cap_locs, tp->o.max_locations) ||
	    ARR_PUSH(tp->loc_n, tp->n_locs, tp->cap_loc_n, tp->o.max_locations) ||
	    intern_add(&tp->loc_by_key, k, sizeof(*k), &added) < 0 || !added)
		return REP_NONE;
	tp->locs[tp->n_locs] = *l;
	tp->locs[tp->n_locs].function = arena_str(tp, l->function);
	tp->locs[tp->n_locs].filename = arena_str(tp, l->filename);
	tp->loc_n[tp->n_locs] = 1;
	return tp->n_locs++;
}

/* A frame standing for n functions (an inline chain, innermost first:
 * leaf first, as the stack): its n locations, the first under the
 * frame's key k and the others after it (the depth in the key's kind:
 * the payload words are the frame's own).
 * All of the chain or none: a chain cut by the bound would stand for the
 * frame, short, for the rest of the interval.  The first's index, or
 * REP_NONE. */
static uint32_t add_chain(struct tp *tp, const struct loc_key *k,
			  const struct rep_location *l, int n)
{
	struct loc_key kk = *k;
	uint32_t first = REP_NONE, i;
	int j;

	if (tp->n_locs + (uint64_t)n > tp->o.max_locations)
		return REP_NONE;
	for (j = 0; j < n; j++) {
		kk.kind = k->kind | (uint32_t)j << LOC_DEPTH_SHIFT;
		i = add_loc(tp, &kk, &l[j]);
		if (i == REP_NONE)
			return REP_NONE;
		if (!j)
			first = i;
	}
	tp->loc_n[first] = n;
	return first;
}

/* A native frame's inline chain from DWARF (add_chain); *n: 0 when
 * DWARF does not name the frame. */
static uint32_t add_inlined(struct tp *tp, const struct sy_frame *f,
			    const struct loc_key *k, uint32_t map, uint32_t *n)
{
	struct dwi_frame fr[INL_MAX_FRAMES];
	struct rep_location l[INL_MAX_FRAMES];
	int m = sy_inline_frames(tp->sy, f, fr), j;

	for (j = 0; j < m; j++)
		l[j] = (struct rep_location){
			.kind = FRAME_NATIVE,
			.mapping = map,
			.address = f->addr,
			.function = fr[j].func,
			.filename = fr[j].file,
			.line = fr[j].line,
			.inl_more = j + 1 < m,
		};
	*n = m;
	return m ? add_chain(tp, k, l, m) : REP_NONE;
}

/* The location of a symbolized frame: found by its whole key, else named
 * (once an interval) and added.  *n: the locations from there that
 * stand for the frame (more than 1: its inline chain). */
static uint32_t intern_loc(struct tp *tp, const struct sy_frame *f,
			   uint32_t *n)
{
	struct loc_key k = { .kind = f->kind | f->frame_kind << 8 |
				     (f->ret_addr ? 1u << 16 : 0) };
	uint32_t map = REP_NONE, i;
	struct interp_symbol names;
	struct rep_location l;
	int64_t id;

	*n = 1;
	switch (f->kind) {
	case SY_KERNEL:
		k.a = f->addr;
		break;
	case SY_NATIVE:
		map = intern_mapping(tp, f->pid, f->file, f->map,
				     f->addr - (f->ret_addr ? 1 : 0));
		if (map == REP_NONE)
			return REP_NONE;
		k.a = map;
		k.b[0] = f->addr;
		break;
	case SY_UNKNOWN:
		/* the same pc is different code in two processes */
		k.pid = f->pid;
		k.a = f->addr;
		k.b[0] = f->code;
		break;
	case SY_ERROR:
		k.a = f->code;
		break;
	case SY_INTERP:
		/* interpreter objects live in process memory */
		k.pid = f->pid;
		k.kind |= f->interp.n_payload << 20;
		k.a = f->interp.data;
		memcpy(k.b, f->interp.payload,
		       f->interp.n_payload * sizeof(k.b[0]));
		break;
	}
	id = intern_find(&tp->loc_by_key, &k, sizeof(k));
	if (id >= 0) {
		*n = tp->loc_n[id];
		return (uint32_t)id;
	}
	if (f->kind == SY_INTERP) {
		/* a JIT's inlined functions: their own frames always (the
		 * logical call chain of the runtime) */
		struct interp_symbol bufs[INTERP_CHAIN_MAX];
		struct rep_location ls[INTERP_CHAIN_MAX];
		int m = sy_interp_names(tp->sy, f, ls, bufs, INTERP_CHAIN_MAX);

		*n = m;
		return add_chain(tp, &k, ls, m);
	}
	if (f->kind == SY_NATIVE && tp->o.inlines) {
		i = add_inlined(tp, f, &k, map, n);
		if (*n)
			return i;
		*n = 1;
	}
	sy_name(tp->sy, f, &l, &names);
	if (f->kind == SY_NATIVE)
		l.mapping = map;
	return add_loc(tp, &k, &l);
}

static uint32_t intern_stack(struct tp *tp, const uint32_t *locs, uint32_t n)
{
	size_t len = n * sizeof(*locs);
	struct rep_stack *s;
	bool added;
	int64_t id;

	id = intern_with_room(&tp->stack_by_key, locs, len,
			      ARR_PUSH(tp->stacks, tp->n_stacks, tp->cap_stacks,
				       tp->o.max_samples),
			      &added);
	if (id < 0)
		return REP_NONE;
	if (!added)
		return (uint32_t)id;
	s = &tp->stacks[tp->n_stacks];
	s->n = n;
	/* the interner's copy: it stays put until tp_reset */
	s->locations = (uint32_t *)intern_key(&tp->stack_by_key, tp->n_stacks,
					      NULL);
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
	if (ARR_PUSH(tp->procs, tp->n_procs, tp->cap_procs, tp->o.max_samples))
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
static void add_sample(struct tp *tp, const struct trace_hdr *h, uint32_t stack,
		       unsigned kind, uint64_t value)
{
	struct sample_key key = { h->pid, h->tid, stack, h->cpu, kind };
	struct rep_sample *s;
	struct sample_ext *x;
	uint32_t proc;
	uint64_t ts;
	int64_t id;

	memcpy(key.comm, h->comm, sizeof(key.comm));
	key.comm[15] = 0;
	ts = h->ktime + tp->mono_to_real;
	id = intern_find(&tp->sample_by_key, &key, sizeof(key));
	if (id >= 0) {
		s = &tp->samples[id];
		x = &tp->sx[id];
		s->count++;
		s->value += value;
		goto stamp;
	}
	proc = intern_proc(tp, h);
	if (proc == REP_NONE)
		goto full;
	if (ARR_PUSH(tp->samples, tp->n_samples, tp->cap_samples,
		     tp->o.max_samples) ||
	    ARR_PUSH(tp->sx, tp->n_samples, tp->cap_sx, tp->o.max_samples) ||
	    intern_add(&tp->sample_by_key, &key, sizeof(key), NULL) < 0)
		goto full;
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
	s->kind = kind;
	s->value = value;
	tp->n_samples++;
stamp:
	if (s->n_timestamps < tp->o.max_timestamps) {
		if (ARR_PUSH(x->ts, s->n_timestamps, x->ts_cap,
			     tp->o.max_timestamps))
			return;
		s->timestamps = x->ts;
		x->ts[s->n_timestamps++] = ts;
	}
	tp->st.samples++;
	return;
full:
	tp->st.dropped_full++;
}

/* Name the frames of one record (the symbolizer) and aggregate it. */
static void add_record(struct tp *tp, const struct trace_hdr *h,
		       const __u64 *words)
{
	const uint32_t room = sizeof(tp->scratch) / sizeof(tp->scratch[0]);
	uint32_t *locs = tp->scratch, n = 0, i, loc, nl;
	struct sy_record r;
	struct sy_frame f;
	int ret;

	/* leaf first: the kernel frames, then the user frames */
	i = (h->flags & TRACE_F_OFFCPU) ?
		    sy_offcpu_kernel_start(tp->sy, words, h->n_kernel) : 0;
	for (; i < h->n_kernel && i < MAX_KERNEL_FRAMES; i++) {
		sy_kernel_frame(words[i], &f);
		locs[n++] = intern_loc(tp, &f, &nl);
	}
	sy_record_init(&r, h->pid, words + h->n_kernel, h->n_user);
	while (n < MAX_KERNEL_FRAMES + MAX_USER_FRAMES &&
	       (ret = sy_next_frame(tp->sy, &r, &f)) != 0) {
		if (ret < 0) {
			tp->st.bad_records++;
			return;
		}
		if (f.kind == SY_ERROR && !tp->o.send_error_frames)
			continue;
		loc = intern_loc(tp, &f, &nl);
		if (loc == REP_NONE) {
			tp->st.dropped_full++;
			return;
		}
		/* an inline chain past the room keeps its innermost frames */
		for (i = 0; i < nl && n < room; i++)
			locs[n++] = loc + i;
	}
	i = intern_stack(tp, locs, n);
	if (i == REP_NONE) {
		tp->st.dropped_full++;
		return;
	}
	/* an off-CPU record's last word: the nanoseconds it was away */
	if (h->flags & TRACE_F_OFFCPU)
		add_sample(tp, h, i, REP_SAMPLE_OFFCPU,
			   words[h->n_kernel + h->n_user]);
	else
		add_sample(tp, h, i, REP_SAMPLE_CPU, 0);
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
	size_t nw = tp_record_words(h);
	size_t bytes = sizeof(struct tp_wait) + nw * sizeof(__u64);
	struct tp_wait *w;

	if (tp->wait_bytes + bytes > TP_WAIT_MAX_BYTES)
		return false;
	if (ARR_PUSH(tp->wait, tp->n_wait, tp->cap_wait, ARR_NO_LIMIT))
		return false;
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

/* A debug file is being downloaded for the inline tables (inlcache.h):
 * records wait for it, as for a sync, so that a frame is not named
 * without its inline chain for the rest of the interval.  Any record
 * waits, not only those with a frame in that file: finding those would
 * cost every record a walk of its frames.  Bounded as every wait. */
static bool inl_waits(struct tp *tp)
{
	return tp->o.inlines && inl_busy(tp->o.inlines);
}

void tp_add_trace(struct tp *tp, const struct trace_hdr *h, const __u64 *words)
{
	tp->st.traces++;
	if (h->flags & TRACE_F_OFFCPU) {
		tp->st.offcpu++;
		tp->st.offcpu_ns += words[h->n_kernel + h->n_user];
	}
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
	 * files never run here.  A process with a request pending (an exec,
	 * a pc in no known mapping) waits for it too, so the record is named
	 * by the mappings it ran with.  Full: named now, by what is known. */
	if ((h->flags & TRACE_F_UNSYNCED) && !proc_synced(tp, h->pid)) {
		if (pm_request(tp->pm, (pid_t)h->pid, PM_REQ_SYNC) == 0 &&
		    park(tp, h, words))
			return;
		tp->st.wait_full++;
	} else if (h->n_user && (pm_is_pending(tp->pm, (pid_t)h->pid) ||
				 inl_waits(tp))) {
		if (park(tp, h, words))
			return;
		tp->st.wait_full++;
	}
	add_record(tp, h, words);
}

void tp_retry(struct tp *tp, bool force)
{
	uint64_t now = exe_now_ns();
	uint32_t i, kept = 0;
	bool inl = tp->n_wait && inl_waits(tp);

	for (i = 0; i < tp->n_wait; i++) {
		struct tp_wait *w = tp->wait[i];
		bool expired = now - w->since_ns >= TP_WAIT_MAX_NS;

		/* its request served (synced, or the process is gone): named
		 * as well as it can be */
		if (!force && !expired &&
		    (pm_is_pending(tp->pm, (pid_t)w->h.pid) || inl)) {
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
	b->native_lines = tp->o.native_lines;
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

/* The batch's lookup tables and the arena of their keys: emptied, their
 * memory kept for the next batch, or released. */
static void batch_tables(struct tp *tp, bool release)
{
	struct intern *const interned[] = { &tp->map_by_key, &tp->loc_by_key,
					    &tp->stack_by_key,
					    &tp->sample_by_key };
	struct hm *const maps[] = { &tp->map_last, &tp->proc_by_pid };
	size_t i;

	for (i = 0; i < sizeof(interned) / sizeof(interned[0]); i++) {
		if (release)
			intern_free(interned[i]);
		else
			intern_clear(interned[i]);
	}
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		if (release)
			hm_free(maps[i]);
		else
			hm_clear(maps[i]);
	}
	if (release)
		arena_free(&tp->arena);
	else
		arena_reset(&tp->arena);
}

void tp_reset(struct tp *tp)
{
	uint32_t i;

	for (i = 0; i < tp->n_samples; i++)
		free(tp->sx[i].ts);
	tp->n_maps = tp->n_locs = tp->n_stacks = tp->n_procs = tp->n_samples = 0;
	batch_tables(tp, false);
	tp->start_ns = unix_now();
	tp->mono_to_real = clock_offset();
}

void tp_get_stats(struct tp *tp, struct tp_stats *out)
{
	struct sy_stats ss;

	sy_get_stats(tp->sy, &ss);
	*out = tp->st;
	out->raw_unresolved = ss.raw_unresolved;
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
	free(tp->loc_n);
	free(tp->stacks);
	free(tp->procs);
	free(tp->samples);
	free(tp->sx);
	batch_tables(tp, true);
	sy_free(tp->sy);
	free(tp);
}
