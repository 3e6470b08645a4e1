/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interpreter unwinders, reached from the native step by the mapping's
 * interpreter bits: the native loop names no language.  Each unwinder
 * lives in bpf/<name>.bpf.h and provides
 *
 *   static __always_inline int <name>_unwind(struct scratch *s, __u64 lookup)
 *
 * called at a native frame of a file that holds its runtime, or of
 * anonymous code in a process that runs it (s->st.cur.file_id 0: maybe
 * its JIT's) (lookup: the frame's pc, minus one for a return address),
 * returning enum interp_result.  It keeps its state in
 * s->st.icur[INTERP_<NAME>] (zeroed before its first call in a sample),
 * reads into s->ibuf or s->iblk, pushes its frames with interp_push
 * (which counts them in s->st.n_interp[INTERP_<NAME>]), and calls
 * interp_end once its whole VM stack is walked or an error (counted in
 * its own METRIC_INTERP_BASE range) ends the walk.  The unwinders run
 * inside the native program's loop (each in its own nested bpf_loop when
 * it walks frames): no tail calls, so mixed stacks of any depth fit.  A
 * new runtime adds its line to INTERPRETERS (profiler.h) and one include
 * here.
 */
#ifndef EP_INTERP_BPF_H
#define EP_INTERP_BPF_H

#include "maps.bpf.h"

/* The u64 at byte o of s->ibuf, into which an unwinder read bytes (at
 * most INTERP_BUF_MAX): 0 when o + 8 is past them.  The bound is checked
 * on both sides of the mask, so that the verifier sees the index in range
 * whatever it keeps of the first check. */
static __always_inline __u64 interp_ibuf_u64(struct scratch *s, __u32 o,
					     __u32 bytes)
{
	if (bytes > INTERP_BUF_MAX || bytes < 8 || o > bytes - 8)
		return 0;
	o &= INTERP_BUF_MAX - 1;
	if (o > INTERP_BUF_MAX - 8)
		return 0;
	return *(__u64 *)&s->ibuf[o];
}

/* The walk of runtime kind is over for this sample: its whole VM stack
 * walked, or an error, err (a METRIC_ERR_* counter; 0: none). */
static __always_inline void interp_end(struct scratch *s, __u32 kind,
				       __u32 err)
{
	if (err)
		metric_inc(s, err);
	s->st.interp_done |= 1u << kind;
}

/* Read the first bytes of the frame at addr into s->ibuf, for a runtime
 * whose frames link to each other: false when the walk ends there, at
 * its last frame (addr 0) or a read that fails (err counted). */
static __always_inline bool interp_read_frame(struct scratch *s, __u32 kind,
					      __u64 addr, __u32 bytes,
					      __u32 err)
{
	if (!addr) {
		interp_end(s, kind, 0);
		return false;
	}
	if (read_user(s->ibuf, bytes, addr)) {
		interp_end(s, kind, err);
		return false;
	}
	return true;
}

/* The end of step i of a bpf_loop over the frames of one invocation of a
 * VM loop that nests on the native stack: 1 (stop) at the invocation's
 * first frame, call_top (the frames after it belong to the invocations
 * below it on the native stack), else 0, counting too_deep when the
 * loop's max steps are used up before it. */
static __always_inline long interp_step_end(struct scratch *s, bool call_top,
					    __u32 i, __u32 max, __u32 too_deep)
{
	if (call_top)
		return 1;
	if (i + 1 >= max)
		metric_inc(s, too_deep);
	return 0;
}

/* Push a frame of runtime kind (data in its header word; np payload
 * words p0, p1: push_frame) and count it.  False when the trace is full:
 * the runtime's walk ends there (its interp_done bit). */
static __always_inline bool interp_push(struct scratch *s, __u32 kind,
					__u64 data, __u64 p0, __u64 p1,
					__u32 np)
{
	if (!push_frame(s, FRAME_WORD(FRAME_INTERP(kind), 0, data), p0, p1,
			np)) {
		interp_end(s, kind, 0);
		return false;
	}
	s->st.n_interp[kind]++;
	s->st.interp_pushed++;
	return true;
}

/* The thread's state in runtime kind (its address in the process) that
 * the CPU's last sample of this thread found, in the same mappings; 0 when
 * there is none.  A hint: the unwinder checks it (a thread state names its
 * thread) before it uses it, so a state freed since reads as a miss, and
 * the search it spares is the walk from the runtime's globals to the
 * thread's state: dependent reads of cold memory, each sample. */
static __always_inline __u64 interp_thread_hint(struct scratch *s,
						__u32 kind)
{
	struct trail_hdr *h = &s->trail_hdr[s->trail_last & 1];

	if (h->thread_kind != kind || h->tid != s->hdr.tid ||
	    h->pid != s->st.pid || h->map_gen != s->st.map_gen)
		return 0;
	return h->thread_ctx;
}

/* The thread's state in runtime kind, found (or checked) by its
 * unwinder: kept for the next sample of the thread on this CPU. */
static __always_inline void interp_thread_found(struct scratch *s, __u32 kind,
						__u64 ctx)
{
	s->st.thread_kind = kind;
	s->st.thread_ctx = ctx;
}

/* Have s->iblk hold the size bytes at addr (at most INTERP_BUF_MAX), for
 * a runtime whose frames lie in contiguous memory that its walk goes down
 * through (an older frame below a newer one): the block read last when
 * they lie in it, else a new block of up to IBLK_BYTES that ends with them
 * and starts no lower than addr's page (memory below it may be unmapped,
 * and a read that faults fails whole).  One read and its lines fetched
 * together serve the frames that follow in the block, not one cold read a
 * frame, and the fields are read where they lie (interp_blk_field), not
 * copied.  Returns the bytes' offset in s->iblk (at most IBLK_BYTES -
 * size), or -1 when they cannot be read. */
static __always_inline int interp_read_down(struct scratch *s, __u64 addr,
					    __u32 size)
{
	struct ustate *st = &s->st;
	__u64 end = addr + size, lo, len;

	if (size > INTERP_BUF_MAX)
		return -1;
	if (!st->iblk_len || addr < st->iblk_base ||
	    end > st->iblk_base + st->iblk_len) {
		st->iblk_len = 0;
		lo = end - IBLK_BYTES;
		if (lo > end || lo < (addr & ~4095ULL))
			lo = addr & ~4095ULL;
		len = end - lo;
		if (len > IBLK_BYTES || end < addr) {
			lo = addr;
			len = size;
		}
		/* the bound on the register the call takes */
		barrier_var(len);
		if (len > IBLK_BYTES ||
		    bpf_probe_read_user(s->iblk, len, (const void *)lo))
			return -1;
		st->iblk_base = lo;
		st->iblk_len = len;
	}
	return (int)(addr - st->iblk_base);
}

/* Have s->iblk hold the size bytes at addr (at most INTERP_BUF_MAX), for a
 * runtime whose frames are separate objects: read alone, at offset 0.
 * Returns 0, or -1 when they cannot be read. */
static __always_inline int interp_read_at(struct scratch *s, __u64 addr,
					  __u32 size)
{
	struct ustate *st = &s->st;

	st->iblk_len = 0;
	if (size > INTERP_BUF_MAX ||
	    bpf_probe_read_user(s->iblk, size, (const void *)addr))
		return -1;
	st->iblk_base = addr;
	st->iblk_len = size;
	return 0;
}

/* interp_read_down (down) or interp_read_at.  A global function: to the
 * verifier its result is one unknown offset, which interp_blk_field
 * bounds, where the two inlined gave the walk after them a state for each
 * range they return (and checked it again for each). */
__noinline int interp_read(struct scratch *s, __u64 addr, __u32 size,
			   __u32 down)
{
	if (!s)
		return -1;
	return down ? interp_read_down(s, addr, size) :
		      interp_read_at(s, addr, size);
}

/* Read a field of type at byte off of the size bytes at offset base of
 * s->iblk (interp_read_down, interp_read_at) into out: 0 when it lies
 * past them.  The index is checked on both sides of the mask, so that the
 * verifier sees its bound whatever it keeps of the first check. */
#define interp_blk_field(s, base, size, off, type, out)                        \
	({                                                                     \
		__u32 o_ = (off), b_ = (base);                                 \
		int ok_ = o_ <= (size) && sizeof(type) <= (size) - o_ &&       \
			  b_ <= IBLK_BYTES - (size);                           \
		o_ = (b_ + o_) & (IBLK_BYTES - 1);                             \
		if (ok_ && o_ <= IBLK_BYTES - sizeof(type))                    \
			(out) = *(type *)&(s)->iblk[o_];                       \
		else                                                           \
			ok_ = 0;                                               \
		ok_;                                                           \
	})

/* A runtime's entry (kind, size bytes) for the sampled process: the
 * copy in the scratch while its pid's pid_epoch count is unchanged, else
 * from its per-process map, copied.  A sample looks it up at the first
 * frame of the runtime's file and again at each frame of its loop, and
 * the next sample of the process on this CPU the same: the copy spares
 * those hash lookups (cold lines each).  Userland bumps the count after
 * it changes or removes the entry; what the unwinder writes into the
 * entry stays in the copy.  The key is copied to the stack: in an
 * unwinder (a global function) s is memory of a known size to the
 * verifier, which before 6.x takes no such pointer as a map key. */
static __always_inline void *interp_proc(void *map, struct scratch *s,
					 __u32 kind, __u32 size)
{
	__u32 pid = s->st.pid;
	void *e;

	if (s->ipc.pid == pid && s->ipc.kind == kind &&
	    s->ipc.epoch == s->st.epoch && (s->st.flags & ST_EPOCH)) {
		metric_inc(s, METRIC_PROC_COPY_HITS);
		return s->ipc.data;
	}
	e = bpf_map_lookup_elem(map, &pid);
	if (!e)
		return NULL;
	/* always the copy (kept only under a known count): one kind of
	 * pointer for the verifier to check the unwinder with, not two.
	 * A helper's copy: inlined, the copy's loads and stores were
	 * checked at every call site on every path (2,000 instructions) */
	if (bpf_probe_read_kernel(s->ipc.data, size, e))
		return NULL;
	s->ipc.pid = (s->st.flags & ST_EPOCH) ? pid : 0;
	s->ipc.kind = kind;
	s->ipc.epoch = s->st.epoch;
	return s->ipc.data;
}

/* The sampled process' entry of runtime KIND (struct type) in map. */
#define INTERP_PROC(s, map, KIND, type)                                        \
	({                                                                     \
		_Static_assert(sizeof(type) <= INTERP_PROC_MAX,                \
			       #type " fits the copy (INTERP_PROC_MAX)");      \
		(type *)interp_proc(&(map), (s), INTERP_##KIND, sizeof(type)); \
	})

#include "python.bpf.h"
#include "test.bpf.h"
#include "php.bpf.h"
#include "perl.bpf.h"
#include "ruby.bpf.h"
#include "hotspot.bpf.h"
#include "v8.bpf.h"

/* Each runtime's unwinder as a global function: the verifier checks it
 * once, on its own, rather than again on every path of the native step
 * that reaches it (a warm start's time was mostly that). */
#define INTERP_GLOBAL_(NAME, name, type)                                       \
	__noinline int name##_unwind_g(struct scratch *s, __u64 lookup)        \
	{                                                                      \
		if (!s)                                                        \
			return INTERP_NOT_HERE;                                \
		return name##_unwind(s, lookup);                               \
	}
INTERPRETERS(INTERP_GLOBAL_)
#undef INTERP_GLOBAL_

static __always_inline int interp_unwind(struct scratch *s, __u64 lookup)
{
	/* a file's runtimes; at anonymous code, the process' (JIT code) */
	__u32 mask = (s->st.cur.file_id ? s->st.cur.interp_mask :
					  s->st.proc_interps) &
		     enabled_interps & ~s->st.interp_done;
	int r;

#define INTERP_TRY_(NAME, name, type)                                          \
	if (mask & (1u << INTERP_##NAME)) {                                    \
		if (!(s->st.icur_live & (1u << INTERP_##NAME))) {              \
			__builtin_memset(s->st.icur[INTERP_##NAME], 0,         \
					 sizeof(s->st.icur[0]));               \
			s->st.icur_live |= 1u << INTERP_##NAME;                \
		}                                                              \
		r = name##_unwind_g(s, lookup);                                \
		if (r != INTERP_NOT_HERE)                                      \
			return r;                                              \
	}
	INTERPRETERS(INTERP_TRY_)
#undef INTERP_TRY_
	return INTERP_NOT_HERE;
}

#endif
