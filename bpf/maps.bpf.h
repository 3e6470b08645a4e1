/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Maps, load-time knobs and small helpers shared by every program.  The
 * maps are __weak so that each *.bpf.c can include this header and the
 * static linker (bpftool gen object) merges them into one.
 */
#ifndef EP_MAPS_BPF_H
#define EP_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "profiler.h"

/* ---- scratch space ------------------------------------------------------ */

#define ST_RETURN_ADDR 0x1 /* state.pc is a return address */
#define ST_UNSYNCED 0x2	   /* process not loaded: raw pcs, FP walk */
#define ST_DONE 0x4	   /* the user stack is finished */
#define ST_MAP_VALID 0x8   /* st->cur is a valid mapping */
#define ST_REPORTED_PC 0x10 /* unknown pc already reported this sample */
#define ST_LR_VALID 0x20   /* arm64: regs[R_LR] is this frame's link
			    * register (the leaf, or after a signal frame) */
#define ST_EPOCH 0x40	   /* ustate.epoch is the process' pid_epoch count */

/* Registers of the frame being unwound, in DWARF numbering (enum
 * rule_reg): all of them at the leaf, from the sample; above it, rsp and
 * rbp from each step, the callee-saved ones as the CFI restores them, the
 * rest carried from the frame below (as libgcc and libdw do). */
#define R_FP RULE_REG_FP
#define R_SP RULE_REG_SP

struct ustate {
	__u64 pc;
	__u64 regs[RULE_REG_COUNT];
	/* the mappings of the last two pcs, so frames in the same files
	 * skip the trie lookup (stacks go back and forth between a program
	 * and libc); prev.end == 0 when empty */
	struct mapping_info cur, prev;
	__u32 n_words;	/* user words written after the kernel frames */
	__u32 flags;	/* ST_* */
	__u32 tail_calls;
	__u32 next_prog; /* program to tail-call when the loop stops */
	__u32 interp_done; /* bit per interp_kind: whole VM stack walked */
	__u32 icur_live; /* bit per interp_kind: its icur row zeroed */
	__u32 interp_pushed; /* frames the last interpreter walk pushed */
	/* frames unwound per kind, added to the counters once per sample */
	__u16 n_native, n_fp;
	__u16 n_cached; /* rule lookups the rule cache answered */
	__u16 n_map_cached; /* mapping lookups the mapping cache answered */
	__u16 n_trail;	    /* rule lookups the trail answered */
	/* the trail (scratch.trail, see struct trail_ent): the next entry
	 * of the last sample's to compare, the entries written for this
	 * one, TRAIL_UNCHECKED/VALID/INVALID */
	__u8 trail_c, trail_n, trail_state, trail_pad;
	/* the thread's own structure in its runtime, when an unwinder
	 * found it: the runtime's kind and the address, kept for the next
	 * sample of the thread (trail_hdr, interp_thread_hint) */
	__u32 thread_kind;
	__u64 thread_ctx;
	__u16 n_interp[INTERP_COUNT];
	__u32 pid;
	__u32 proc_interps; /* pid_info.interp_mask: runtimes of the process,
			     * asked at anonymous code (their JIT) */
	__u32 map_gen;	    /* pid_info.map_gen (map_cache) */
	__u32 epoch;	    /* its pid_epoch counter at the sample (ST_EPOCH) */
	__u32 cpu;	    /* trace_hdr.cpu: the caches' slice of this CPU */
	/* the block of the user stack in scratch.stk: its address and bytes
	 * (0: none) */
	__u64 stk_base;
	__u32 stk_len;
	/* the block of an interpreter's memory in scratch.iblk (0: none) */
	__u32 iblk_len;
	__u64 iblk_base;
	/* each interpreter's cursor between its calls in one sample (the
	 * meaning is the unwinder's own): zeroed before its first call of
	 * the sample (interp_unwind, icur_live), not with the rest of the
	 * state, so a sample writes the rows of the runtimes it meets only;
	 * the last member (trace_begin zeroes the state up to it) */
	__u64 icur[INTERP_COUNT][INTERP_CURSOR_WORDS];
};

/* 8-byte slots below the CFA that a frame needs at least: the return
 * address (slot -1) and the registers most functions push after it. */
#define CFA_WINDOW 8
/* The user stack is read in blocks of this many bytes from the first
 * frame's window up (never past the end of its page): one read serves the
 * frames above it that lie in the block (a frame of native code is tens of
 * bytes, an interpreter loop's hundreds), and the block's lines are
 * fetched together, not one cold line per frame and helper call.  The
 * read's fixed cost dwarfs its copy: a sample through an interpreter's
 * loop made 2.7 reads with 512-byte blocks, 1.5 with these. */
#define STK_BYTES 2048
#define STK_WORDS (STK_BYTES / 8)
/* An interpreter's frames read in blocks of this many bytes
 * (interp_read_down). */
#define IBLK_BYTES 512
/* An x86-64 sigcontext's general registers: r8..r15, rdi, rsi, rbp, rbx,
 * rdx, rax, rcx, rsp, rip. */
#define SIGCTX_REGS 17

/*
 * The trail: the rules the last sample on this CPU looked up, frame by
 * frame from the leaf down (in the order of their stack pointers).  The
 * next sample of the same thread, in the same mappings, finds the frames
 * below its leaf there in the same order: the caller frames of a busy
 * thread (main down to _start, an interpreter's loop and what calls it)
 * are the same from one sample to the next.  Read in sequence, the trail
 * costs a cold line for every entry or two, where the rule cache costs
 * one a frame (its entries are spread by hashing).  An entry is used only
 * for the frame with its stack pointer and pc, in a file of its load_gen:
 * the rule is the one the lookup would give.  Two buffers: the sample
 * reads the last one while it writes the other, committed when the trace
 * is sent.
 */
#define TRAIL_MAX 32 /* entries a sample records: the first lookups */
#define TRAIL_SKIP 8 /* entries a frame may pass over to find its own */
_Static_assert((TRAIL_MAX & (TRAIL_MAX - 1)) == 0, "TRAIL_MAX: a power of two");
struct trail_ent {
	__u64 sp; /* the frame's stack pointer (ascending in a trail) */
	__u64 pc; /* the address looked up */
	__u32 gen; /* mapping_info.load_gen of the file */
	__u32 idx; /* the rule's index */
	struct unwind_rule rule;
};
_Static_assert(sizeof(struct trail_ent) == 48, "trail_ent layout");
struct trail_hdr {
	__u32 pid, tid, map_gen, n;
	/* the sample's ustate.thread_kind and thread_ctx */
	__u32 thread_kind, pad;
	__u64 thread_ctx;
};
#define TRAIL_UNCHECKED 0
#define TRAIL_VALID 1
#define TRAIL_INVALID 2

/* What a sample touches lies together: the state, the blocks read, the
 * trail, then the record (header, words), whose first words follow; the
 * words past them (up to 18 KiB) are touched only by deep stacks.  So a
 * sample's accesses fall in two pages, not four (each cold page a TLB miss
 * by the next sample: a few hundred ns under nested paging), and every
 * CPU's entry starts a page.  A record is the bytes from hdr, as
 * offcpu_rec's are. */
/* A page's entry of "delta_pages" (struct page_info), copied by a search
 * of it: the next search of that page on this CPU reads the copy (a line
 * of the scratch) rather than the hash map (the key's hash, a bucket and
 * an element, cold by then: ~1.2-1.7 µs of a search's ~2.7, timed).
 * Valid for the file's load (gen: mapping_info.load_gen), as the rule
 * cache's answers are: a load's pages do not change, and the next load has
 * another number. */
struct page_memo {
	__u64 file_id, page;
	__u32 gen, pad;
	struct page_info pi;
};
/* entries in the scratch, by the file and page: a power of two */
#define PAGE_MEMOS 8

struct scratch {
	/* the CPU's counters (METRIC_*), first, where userland sums them
	 * through its mmap of the scratch maps (the off-CPU program's
	 * scratch has its own): a counter is a store at a known offset of
	 * memory the program holds, where a map of counters cost a lookup
	 * and a check at each of sixty places (a twentieth of the
	 * unwinder's verification) */
	__u64 ctr[METRIC_STRIDE];
	struct ustate st;
	/* the rule of the native frame being unwound, from the trail, the
	 * rule cache or the table, and its index: the native step keeps
	 * them here, not on its stack, and reads them back after a compiler
	 * barrier, so that to the verifier the three ways of finding a rule
	 * end in one state (the rule's application was checked again for
	 * each, 26 times); and the outcome of the rule's application, read
	 * back so */
	struct unwind_rule rule;
	__u32 rule_idx, step_err;
	__u64 cfa; /* and the frame's CFA (apply_rule), so too */
	__u64 sigctx[SIGCTX_REGS]; /* a signal frame's saved registers */
	__u64 stk[STK_WORDS];	/* a block of the user stack (ustate.stk_*) */
	__u8 iblk[IBLK_BYTES];	/* a block of an interpreter's memory */
	__u8 ibuf[INTERP_BUF_MAX]; /* an interpreter's reads, one at a time */
	/* the pid_info of the last synced process sampled here, valid while
	 * its pid_epoch counter is still epoch (pid 0: none) */
	struct {
		__u32 pid, epoch, interp_mask, map_gen;
	} pic;
	/* a copy of the runtime entry (interp_proc) of kind for pid, valid
	 * while the pid's pid_epoch counter is still epoch (pid 0: none):
	 * userland bumps it after each change of the entry */
	struct {
		__u32 pid, epoch, kind, pad;
		__u8 data[INTERP_PROC_MAX] __attribute__((aligned(8)));
	} ipc;
	struct page_memo pmemo[PAGE_MEMOS];
	/* the trail: the buffer committed last, the two buffers */
	__u32 trail_last;
	struct trail_hdr trail_hdr[2];
	struct trail_ent trail[2][TRAIL_MAX] __attribute__((aligned(64)));
	struct trace_hdr hdr;
	__u64 words[MAX_TRACE_WORDS];
} __attribute__((aligned(4096)));

/* What an interpreter unwinder (<name>_unwind, bpf/interp.bpf.h) did at a
 * native frame of a file holding its runtime. */
enum interp_result {
	INTERP_NOT_HERE = 0, /* not its code: the native frame stays */
	INTERP_REPLACED = 1, /* it pushed the frames this native frame runs;
			      * the native step unwinds the frame itself */
	INTERP_UNWOUND = 2,  /* it pushed frames and moved pc and the
			      * registers to the caller (JIT code without
			      * CFI) */
};

#define NO_PROG 0xffffffffu
/* include/linux/sched.h; not in BTF */
#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000

/* ---- knobs set before load --------------------------------------------- */

/* Drop samples of processes not in pid_filter / tasks neither in nor
 * below a cgroup of cgroup_filter. */
__weak const volatile __u32 filter_pids = 0;
__weak const volatile __u32 filter_cgroups = 0;
/* Minimum time between two reports of the same process (ns). */
__weak const volatile __u64 report_interval_ns = 500000000ULL;
/* Interpreter unwinders enabled (-tracers): bit per enum interp_kind. */
__weak const volatile __u32 enabled_interps = 0;
/* Frames a sample may hold (<= MAX_USER_FRAMES). */
__weak const volatile __u32 max_frames = MAX_USER_FRAMES;
/* Off-CPU: a context switch is recorded when a random u32 is below this
 * (-off-cpu-threshold times 2^32; 2^32 records every one). */
__weak const volatile __u64 offcpu_threshold = 0;

/* Entries of rule_cache - 1 (a power of two minus one); 0: no cache. */
__weak const volatile __u32 rule_cache_mask = 0;
/* Entries of map_cache - 1 (a power of two minus one); 0: no cache. */
__weak const volatile __u32 map_cache_mask = 0;
/* log2 of each cache's entries per CPU: a CPU's entries are
 * [cpu << shift, (cpu + 1) << shift) of the map */
__weak const volatile __u32 rule_cache_shift = 0;
__weak const volatile __u32 map_cache_shift = 0;

/* ---- maps --------------------------------------------------------------- */

/* A hash map: its name, key and value types, and bound (the bound of the
 * ones userland sizes is the default). */
#define HASH_MAP(name, key_type, value_type, entries)                          \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_HASH);                               \
		__uint(max_entries, entries);                                  \
		__type(key, key_type);                                         \
		__type(value, value_type);                                     \
	} name SEC(".maps") __weak

/* An array map indexed by __u32: its name, value type and bound (the bound
 * of the ones userland sizes is the default).  Mmapable, so its values
 * start on a page: userland maps the scratches, the rules and pid_epoch
 * (values 8 bytes apart whatever their size), and the caches lay each
 * CPU's entries out by 4 KiB page. */
#define ARRAY_MAP(name, value_type, entries)                                   \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_ARRAY);                              \
		__uint(map_flags, BPF_F_MMAPABLE);                             \
		__uint(max_entries, entries);                                  \
		__type(key, __u32);                                            \
		__type(value, value_type);                                     \
	} name SEC(".maps") __weak

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* resized by userland */
} traces SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18);
} events SEC(".maps") __weak;

ARRAY_MAP(scratch_map, struct scratch, 1);

/* The off-CPU program's own scratch: a perf sample (an NMI) may interrupt
 * it on its CPU, and the CPU sampler must not overwrite its stack. */
ARRAY_MAP(offcpu_scratch, struct scratch, 1);

/* A thread's stack at its switch-out, until its switch-in: the scratch's
 * header and words (laid out as in struct scratch from hdr on, so one
 * copy stores them), and a word for the duration, written at the
 * switch-in. */
struct offcpu_rec {
	struct trace_hdr hdr;
	__u64 words[MAX_TRACE_WORDS + 1];
};

/* tid -> its switch-out stack.  Not preallocated: an entry (18 KiB) lives
 * only while a chosen thread is off the CPU; max_entries is the bound
 * (-off-cpu-max-threads), a full map counts METRIC_OFFCPU_FULL. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_THREADS_DEFAULT);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct offcpu_rec);
} offcpu_stacks SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, PROG_COUNT);
	__type(key, __u32);
	__type(value, __u32);
} progs SEC(".maps") __weak;

HASH_MAP(pid_info, __u32, struct pid_info, 65536);

/* 64-bit counters: an array's memory, which userland mmaps, holds its
 * values 8 bytes apart whatever their size (a u32 counter's slot k lay at
 * byte 8k, where userland, indexing an array of u32, bumped byte 4k) */
ARRAY_MAP(pid_epoch, __u64, PID_EPOCH_SLOTS);

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1 << 19);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct mapping_key);
	__type(value, struct mapping_info);
} mappings SEC(".maps") __weak;

HASH_MAP(delta_pages, struct page_key, struct page_info, 1 << 16);

/* One chunk of rows (DELTA_CHUNK_BLOCKS blocks of 16).  Every chunk has
 * the same size and flags, so the verifier inlines the lookup in a chunk
 * as it does for a plain array (a chunk of another size would need
 * BPF_F_INNER_MAP, which turns that off).  Sizes rather than types: in
 * an object that never names struct row_block (sched.bpf.c), clang
 * leaves the type of an inner map's value undefined. */
struct delta_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DELTA_CHUNK_BLOCKS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct row_block));
};

/* The chunks, created by userland on demand; max_entries is the bound in
 * chunks (resized). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, DELTA_ROWS_DEFAULT / DELTA_CHUNK_ROWS);
	__type(key, __u32);
	__array(values, struct delta_chunk);
} delta_rows SEC(".maps") __weak;

ARRAY_MAP(rules, struct unwind_rule, MAX_RULES);

/* Recent stack-delta lookups per CPU (struct rule_cache_ent); sized by
 * userland (-rule-cache-entries). */
ARRAY_MAP(rule_cache, struct rule_cache_ent, RULE_CACHE_DEFAULT);

/* Recent mapping lookups per CPU (struct map_cache_ent); sized by
 * userland (-map-cache-entries). */
ARRAY_MAP(map_cache, struct map_cache_ent, MAP_CACHE_DEFAULT);

/* Rate limit for process events: (pid << 8 | type) -> last ktime. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} reported SEC(".maps") __weak;

HASH_MAP(pid_filter, __u32, __u8, 1024);

HASH_MAP(cgroup_filter, __u64, __u8, 1024);

/* ---- helpers ------------------------------------------------------------ */

/* Count n for counter id in this CPU's scratch. */
static __always_inline void metric_add(struct scratch *s, __u32 id, __u64 n)
{
	/* a constant id (most) is a store at a known offset */
	if (__builtin_constant_p(id)) {
		s->ctr[id] += n;
		return;
	}
	/* else the check on the register the index uses: an id the
	 * verifier does not know (a global function's result) is checked
	 * on a copy otherwise, and 6.1 does not carry a 32-bit check over
	 * to it */
	barrier_var(id);
	if (id < METRIC_STRIDE)
		s->ctr[id] += n;
}

static __always_inline void metric_inc(struct scratch *s, __u32 id)
{
	metric_add(s, id, 1);
}

/* Levels of the cgroup v2 tree checked against the filter; deeper
 * cgroups match through their ancestors at these levels. */
#define CGROUP_MAX_LEVELS 32

/* Is the current task in a -cgroup cgroup or below one?  A slice, a pod
 * or a unit that delegates its subtree selects every cgroup inside it, as
 * systemd and the container runtimes nest them.  The filter is small, so a
 * lookup per level is cheap; a task at level L costs at most L + 1. */
static __always_inline bool cgroup_wanted(void)
{
	int level;

	for (level = 0; level < CGROUP_MAX_LEVELS; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);

		/* 0: deeper than the task's own cgroup */
		if (!id)
			return false;
		if (bpf_map_lookup_elem(&cgroup_filter, &id))
			return true;
	}
	return false;
}

/* After a change of pid's pid_info: the CPUs that keep it look again. */
static __always_inline void pid_info_changed(__u32 pid)
{
	__u32 slot = pid & (PID_EPOCH_SLOTS - 1);
	__u64 *ep = bpf_map_lookup_elem(&pid_epoch, &slot);

	if (ep)
		__sync_fetch_and_add(ep, 1);
}

/* v stored at slot (scratch memory) and read back past a compiler
 * barrier: the verifier does not track map memory, so what comes back is
 * one unknown value, whatever constants or ranges the paths to here gave
 * v (the code after is checked once, not once for each). */
#define scratch_forget(slot, v)                                                \
	({                                                                     \
		(slot) = (v);                                                  \
		barrier();                                                     \
		(slot);                                                        \
	})

static __always_inline struct scratch *get_scratch(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&scratch_map, &cpu);
}

/* Send a process event, at most once per report_interval_ns per (pid,
 * type) unless force is set.  Called on the sample path: never logs. */
static __always_inline void report_pid(struct scratch *s, __u32 pid,
				       __u32 type, __u64 addr, bool force)
{
	__u64 key = ((__u64)pid << 8) | type, now = bpf_ktime_get_ns();
	__u64 *last = bpf_map_lookup_elem(&reported, &key);
	struct pid_event *ev;

	if (!force && last && now - *last < report_interval_ns)
		return;
	bpf_map_update_elem(&reported, &key, &now, BPF_ANY);
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		metric_inc(s, METRIC_EVENTS_FULL);
		return;
	}
	ev->ktime = now;
	ev->pid = pid;
	ev->type = type;
	ev->addr = addr;
	/* a process waits for its load with its stacks walked by frame
	 * pointer: wake the drain thread now (the exec and exit events
	 * before it in the ring wake nobody, so the ring's own "wake when
	 * it was empty" would not) */
	bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
	metric_inc(s, METRIC_EVENTS_SENT);
}

/* Append one word to the user part of the trace.  Returns false when the
 * record is full. */
static __always_inline bool push_word(struct scratch *s, __u64 w)
{
	__u32 n = s->hdr.n_kernel + s->st.n_words;

	if (n >= MAX_TRACE_WORDS)
		return false;
	s->words[n] = w;
	s->st.n_words++;
	return true;
}

/* Append a frame: its header word (FRAME_WORD) and np payload words (p0,
 * p1 in that order; np at most 2).  False when it does not fit: the trace
 * is then marked truncated.  One check of the index for the words: a
 * check a word (push_word) gave the verifier a path a word, at each of
 * the frame pushes it inlines. */
static __always_inline bool push_frame(struct scratch *s, __u64 w0, __u64 p0,
				       __u64 p1, __u32 np)
{
	__u32 n = s->hdr.n_kernel + s->st.n_words;

	/* room for the largest frame (3 words) and a trailing error frame;
	 * the bound on the register the stores use */
	barrier_var(n);
	if (n > MAX_TRACE_WORDS - 4 || s->hdr.n_frames >= max_frames) {
		s->hdr.flags |= TRACE_F_TRUNCATED;
		return false;
	}
	s->words[n] = w0 | ((__u64)(np & 0xf) << 52);
	if (np > 0)
		s->words[n + 1] = p0;
	if (np > 1)
		s->words[n + 2] = p1;
	s->st.n_words += 1 + (np > 1 ? 2 : np);
	s->hdr.n_frames++;
	return true;
}

static __always_inline void push_error(struct scratch *s, __u32 err)
{
	metric_inc(s, err);
	s->hdr.error = err;
	s->hdr.flags |= TRACE_F_ERROR;
	push_word(s, FRAME_WORD(FRAME_ERROR, 0, err));
}

/* Per-frame counts, once per stack rather than once per frame. */
static __always_inline void count_frames(struct scratch *s)
{
	__u64 *c = s->ctr;

	c[METRIC_FRAMES_NATIVE] += s->st.n_native;
	c[METRIC_FRAMES_FP] += s->st.n_fp;
	c[METRIC_RULE_CACHE_HITS] += s->st.n_cached;
	c[METRIC_MAP_CACHE_HITS] += s->st.n_map_cached;
	c[METRIC_TRAIL_HITS] += s->st.n_trail;
	for (int k = 1; k < INTERP_COUNT; k++)
		if (s->st.n_interp[k] && METRIC_INTERP_BASE(k) < METRIC_STRIDE)
			c[METRIC_INTERP_BASE(k)] += s->st.n_interp[k];
}

/* The trail this sample wrote becomes the one the next sample reads (a
 * sample that looked no rule up leaves the last one), with the thread's
 * state in its runtime when an unwinder found it. */
static __always_inline void trail_commit(struct scratch *s)
{
	__u32 w = (s->trail_last ^ 1) & 1;

	if (!s->st.trail_n)
		return;
	s->trail_hdr[w].pid = s->hdr.pid;
	s->trail_hdr[w].tid = s->hdr.tid;
	s->trail_hdr[w].map_gen = s->st.map_gen;
	s->trail_hdr[w].n = s->st.trail_n;
	s->trail_hdr[w].thread_kind = s->st.thread_kind;
	s->trail_hdr[w].thread_ctx = s->st.thread_ctx;
	s->trail_last = w;
}

static __always_inline void send_trace(void *ctx, struct scratch *s)
{
	__u32 n = s->hdr.n_kernel + s->st.n_words;
	long ret;

	if (n > MAX_TRACE_WORDS)
		n = MAX_TRACE_WORDS;
	s->hdr.n_user = s->st.n_words;
	/* no wakeup: userland drains the ring on a timer.  A wakeup is an
	 * irq_work per sample, which in a VM costs an exit (measured: half
	 * the per-sample cost on a nested guest). */
	ret = bpf_ringbuf_output(&traces, &s->hdr,
				 sizeof(struct trace_hdr) + (__u64)n * 8,
				 BPF_RB_NO_WAKEUP);
	if (ret)
		metric_inc(s, METRIC_RINGBUF_FULL);
	else
		metric_inc(s, METRIC_SAMPLES_SENT);
	count_frames(s);
	trail_commit(s);
}

/* Tail-call the next unwinder, or send the trace when there is none or
 * the budget is spent. */
static __always_inline void next_unwinder(void *ctx, struct scratch *s)
{
	__u32 prog = s->st.next_prog;

	s->st.next_prog = NO_PROG;
	if (prog != NO_PROG) {
		if (s->st.tail_calls >= MAX_TAIL_CALLS) {
			s->hdr.flags |= TRACE_F_TRUNCATED;
			metric_inc(s, METRIC_TAIL_CALL_LIMIT);
		} else {
			s->st.tail_calls++;
			bpf_tail_call(ctx, &progs, prog);
			metric_inc(s, METRIC_TAIL_CALL_FAIL);
		}
	}
	send_trace(ctx, s);
}

/* len bytes of user memory at addr (a runtime's structures): 0 or a
 * negative errno, dst zeroed then. */
static __always_inline int read_user(void *dst, __u32 len, __u64 addr)
{
	return bpf_probe_read_user(dst, len, (const void *)addr);
}

static __always_inline int read_user_u64(__u64 addr, __u64 *out)
{
	return read_user(out, sizeof(*out), addr);
}

/* The u64 at addr of the user stack, from the block of it this sample
 * read (scratch.stk, ustate.stk_*), else read on its own: a runtime's
 * structure on the native stack (a local of its interpreter loop) is
 * often in the block the frames below it were unwound with. */
static __always_inline int stk_read_u64(struct scratch *s, __u64 addr,
					__u64 *out)
{
	__u64 off = addr - s->st.stk_base;

	if (addr >= s->st.stk_base && off + 8 <= s->st.stk_len && !(off & 7)) {
		*out = s->stk[(off >> 3) & (STK_WORDS - 1)];
		return 0;
	}
	return read_user_u64(addr, out);
}

/* the per-architecture registers and frames (uses struct scratch) */
#include "arch.bpf.h"

#endif
