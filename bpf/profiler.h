/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one header shared by the BPF programs and userland.
 *
 * It includes nothing and uses only fixed-width types that both sides
 * define (the BPF side through vmlinux.h, userland through <stdint.h> via
 * the __u* typedefs of <linux/types.h>).  Every struct has explicit padding
 * and a size assertion, because the two compilers must agree byte for byte.
 */
#ifndef EBPF_PROFILER_SHARED_H
#define EBPF_PROFILER_SHARED_H

/* ---- limits ------------------------------------------------------------ */

/* PERF_MAX_STACK_DEPTH in the kernel: bpf_get_stack never returns more. */
#define MAX_KERNEL_FRAMES 127
/* Native frames a sample may hold.  The reference agent stops near 145. */
#define MAX_USER_FRAMES 1024
/* Words in one trace record after the header.  A native frame takes two
 * words, an interpreter frame two or three; keep the record under the
 * 32 KiB a per-CPU map value may take. */
#define MAX_TRACE_WORDS 2304
/* Stack-delta pages are 64 KiB: the row's address is the low 16 bits, so a
 * page holds at most 65536 rows and the binary search takes 16 steps. */
#define DELTA_PAGE_BITS 16
#define DELTA_SEARCH_STEPS 17
/* Rows are stored 16 to an array element (64 bytes) to avoid the 8-byte
 * rounding the kernel applies to each array value. */
#define ROWS_PER_BLOCK 16
#define ROWS_PER_BLOCK_SHIFT 4
/* The rows live in chunks: mmap-able arrays of DELTA_CHUNK_ROWS rows
 * (1 MiB), created by userland as files need them, up to a bound, and
 * reached through the array of maps "delta_rows".  A row's global index
 * is chunk << DELTA_CHUNK_SHIFT | index in the chunk; a page's rows never
 * cross a chunk, so one lookup per frame finds the chunk.  1 MiB: a small
 * host pays one or two, and a chunk holds the largest page (65536 rows)
 * four times over. */
#define DELTA_CHUNK_SHIFT 18
#define DELTA_CHUNK_ROWS (1u << DELTA_CHUNK_SHIFT)
#define DELTA_CHUNK_BLOCKS (DELTA_CHUNK_ROWS / ROWS_PER_BLOCK)
/* The default bound on rows: 8 Mi (32 MiB of chunks).  libLLVM-14 and
 * libclang-cpp (2 M rows), node (370 K), a JVM (230 K) and Chromium
 * (60 K) fit together with room for the rest of a host. */
#define DELTA_ROWS_DEFAULT (1u << 23)
/* The largest bound (-max-delta-rows): global row indices stay in 32 bits
 * with room for a page past the last chunk. */
#define DELTA_ROWS_MAX (1u << 30)
/* The tail-call budget: the kernel allows 33; one is kept for the send. */
#define MAX_TAIL_CALLS 29

/* Off-CPU: threads whose switch-out stack waits for their switch-in, by
 * default (-off-cpu-max-threads). */
#define OFFCPU_THREADS_DEFAULT 4096

/* ---- tail-call program indices (prog_array "progs") --------------------- */
/* The interpreter unwinders run inside the native program (bpf/interp.bpf.h);
 * an unwinder too large for that gets its own slot here. */
enum prog_index {
	PROG_NATIVE = 0,
	PROG_COUNT = 1,
};

/* ---- interpreters: the one registry ------------------------------------- */
/*
 * X(NAME, name, frame type): every interpreter unwinder, in this order.
 * NAME gives INTERP_NAME; name is the -tracers word, the prefix of the
 * module's files (bpf/<name>.bpf.h, userspace/interp_<name>.c) and of its
 * symbols (<name>_unwind in BPF, interp_module_<name> in userland); the
 * frame type is the OTLP profile.frame.type of its frames.  A runtime is
 * added here, in its own files, and by one include in bpf/interp.bpf.h.
 */
#define INTERPRETERS(X)                                                        \
	X(PYTHON, python, "cpython")                                           \
	X(TEST, test, "test")                                                  \
	X(PHP, php, "php")                                                     \
	X(PERL, perl, "perl")                                                  \
	X(RUBY, ruby, "ruby")                                                  \
	X(HOTSPOT, hotspot, "jvm")                                             \
	X(V8, v8, "v8js")

enum interp_kind {
	INTERP_NONE = 0,
#define INTERP_ENUM_(NAME, name, type) INTERP_##NAME,
	INTERPRETERS(INTERP_ENUM_)
#undef INTERP_ENUM_
	INTERP_COUNT,
};
/* Cursor words an unwinder keeps in the per-sample state between its calls
 * (struct ustate.icur), and the bytes of its read buffer (scratch.ibuf). */
#define INTERP_CURSOR_WORDS 6
/* The largest per-process entry of a runtime (struct <name>_proc). */
#define INTERP_PROC_MAX 128
#define INTERP_BUF_MAX 256

/* ---- per-CPU counters (X-macro: name, description) ---------------------- */
/* The counters every sample adds to come first, in one or two lines of
 * the per-CPU array (each line a cache miss by the next sample). */
#define METRICS_LIST(X)                                                        \
	X(SAMPLES, "perf samples that ran the entry program")                  \
	X(SAMPLES_SENT, "trace records written to the ring buffer")            \
	X(FRAMES_NATIVE, "native frames unwound with stack deltas")            \
	X(FRAMES_FP, "frames unwound by frame pointer")                        \
	X(STOP_ENTRY, "stacks that reached a stop marker (process/thread entry)") \
	X(RULE_CACHE_HITS, "stack-delta lookups answered by the per-CPU rule cache") \
	X(MAP_CACHE_HITS, "mapping lookups answered by the per-CPU mapping cache") \
	X(TRAIL_HITS, "stack-delta lookups answered by the rules of the CPU's last sample of the thread") \
	X(THREAD_HINT_HITS, "interpreter thread states taken from the CPU's last sample of the thread, checked by one read") \
	X(PROC_COPY_HITS, "runtime entries of a process taken from the CPU's copy, not its map") \
	X(PID_CACHE_HITS, "samples that took their process' state from the CPU's last sample of it") \
	X(PAGE_MEMO_HITS, "stack-delta searches that took their page's entry from the CPU's copy, not its map") \
	X(UNSYNCED, "samples of a process whose mappings were not loaded")     \
	X(SAMPLES_IDLE, "samples of the idle task, skipped")                   \
	X(SAMPLES_FILTERED, "samples dropped by the pid or cgroup filter")     \
	X(SAMPLES_PAUSED, "samples skipped while probabilistic mode is off")   \
	X(RINGBUF_FULL, "trace records lost: ring buffer full")                \
	X(KSTACK_ERR, "bpf_get_stack failed for the kernel stack")             \
	X(NO_USER_REGS, "no user registers (kernel thread or exiting task)")   \
	X(EVENTS_FULL, "process events lost: event ring full")                 \
	X(EVENTS_SENT, "process events sent to userland")                      \
	X(TAIL_CALL_FAIL, "tail call failed (program missing)")                \
	X(TAIL_CALL_LIMIT, "stack cut: tail-call budget spent")                \
	X(ERR_NO_MAPPING, "unwind: pc in no known mapping")                    \
	X(ERR_NO_PAGE, "unwind: no stack-delta page for pc")                   \
	X(ERR_NO_CFI, "unwind: no unwind information covers the pc")         \
	X(ERR_RULE_UNSUPPORTED, "unwind: the CFI at the pc has a form we do not evaluate") \
	X(ERR_BAD_RULE, "unwind: rule index out of range or unsupported")      \
	X(ERR_READ_FAULT, "unwind: reading user memory failed")                \
	X(ERR_TOO_DEEP, "unwind: stack longer than the frame limit")           \
	X(ERR_SP_LOOP, "unwind: stack pointer did not move up")                \
	X(ERR_PC_ZERO, "unwind: return address zero without stop marker")      \
	X(ERR_FP_BAD, "unwind: frame-pointer walk left the stack")             \
	X(ERR_GO_SWITCH, "unwind: Go stack switch: no goroutine behind g0")     \
	X(ERR_LR_INVALID, "unwind: return address in the link register above the leaf (arm64)") \
	X(OFFCPU_KEPT, "off-CPU: switch-outs unwound and kept until the switch-in") \
	X(OFFCPU_FULL, "off-CPU: switch-outs lost: the per-thread map was full")   \
	X(OFFCPU_SENT, "off-CPU: records written at the switch-in")

#define METRIC_ENUM_(name, desc) METRIC_##name,
enum metric_id { METRICS_LIST(METRIC_ENUM_) METRIC_CORE_COUNT };

/* Each interpreter has METRIC_INTERP_SLOTS counters of its own after the
 * core ones, declared in its header as <NAME>_METRICS(X) with the same
 * X(name, description) form; its first is the frames it unwound (added
 * once per sample by the native program), the others its error ids,
 * named ERR_<NAME>_*.  An error id ends a stack as the core ones do. */
#define METRIC_INTERP_SLOTS 8
#define METRIC_INTERP_BASE(kind)                                               \
	(METRIC_CORE_COUNT + ((kind)-1) * METRIC_INTERP_SLOTS)
#define METRIC_COUNT METRIC_INTERP_BASE(INTERP_COUNT)
/* A CPU's counters in the metrics map: whole 64-byte lines of them. */
#define METRIC_STRIDE ((METRIC_COUNT + 7) & ~7)
/* An interpreter's counter ids, METRIC_<name>, from its list. */
#define INTERP_METRIC_IDS(KIND, LIST)                                          \
	enum {                                                                 \
		KIND##_METRIC_BEFORE_ = METRIC_INTERP_BASE(INTERP_##KIND) - 1, \
		LIST(INTERP_METRIC_ID_) KIND##_METRIC_END_                     \
	};                                                                     \
	_Static_assert(KIND##_METRIC_END_ - METRIC_INTERP_BASE(INTERP_##KIND) <= \
			       METRIC_INTERP_SLOTS,                            \
		       #KIND " counters fit their range")
#define INTERP_METRIC_ID_(name, desc) METRIC_##name,

/* ---- trace record (ring buffer "traces") -------------------------------- */

/* Trace flags. */
#define TRACE_F_UNSYNCED 0x1	/* process not loaded yet: raw pcs, FP walk */
#define TRACE_F_TRUNCATED 0x2	/* frame limit or tail-call budget hit */
#define TRACE_F_ERROR 0x4	/* an error frame ends the user stack */
#define TRACE_F_KERNEL_ONLY 0x8 /* no user stack (kernel thread) */
#define TRACE_F_COMPLETE 0x10	/* the user stack reached a stop marker */
/* An off-CPU record: ktime is the switch-out, and one more word follows
 * the frames: the nanoseconds the thread spent off the CPU.  CPU records
 * carry no such word, so they copy nothing more. */
#define TRACE_F_OFFCPU 0x20

struct trace_hdr {
	__u64 ktime;	 /* bpf_ktime_get_ns() at the sample */
	__u32 pid;	 /* thread-group id */
	__u32 tid;
	__u32 cpu;
	__u32 flags;	  /* TRACE_F_* */
	__u16 n_kernel;	  /* kernel frame words (raw addresses, leaf first) */
	__u16 n_user;	  /* user frame words that follow, leaf first */
	__u16 n_frames;	  /* user frames (not words) */
	__u16 error;	  /* METRIC_ERR_* that ended the stack, 0 when none */
	char comm[16];
};
_Static_assert(sizeof(struct trace_hdr) == 48, "trace_hdr layout");

/*
 * A user frame is one header word followed by 0 to 3 payload words:
 *   bits 63..56 kind, 55..52 payload words, 51..48 flags, 47..0 data.
 *   FRAME_NATIVE: data = address in the ELF file's virtual address space
 *                 (pc - load bias); one payload word: the file id's high
 *                 64 bits.
 *   FRAME_RAW:    data = the absolute pc; no payload.  Userland maps it
 *                 through /proc/PID/maps (unsynced process, unknown pc).
 *   FRAME_ERROR:  data = METRIC_ERR_* code; no payload.
 *   FRAME_INTERP(kind): an interpreter's frame; data and payload are its
 *                 unwinder's (bpf/<name>.bpf.h) and go to its symbolizer.
 * Kernel frames are raw 64-bit addresses and come first.  FRAME_KERNEL
 * never appears in a record: it is the kind userland gives kernel frames
 * (Go's frames are native ones).  The one frame-kind number of BPF, the
 * pipeline and the reporter.
 */
enum frame_kind {
	FRAME_NATIVE = 1,
	FRAME_RAW = 2,
	FRAME_ERROR = 3,
	FRAME_KERNEL = 4,
	FRAME_INTERP_BASE = 16,
	FRAME_KIND_COUNT = FRAME_INTERP_BASE + INTERP_COUNT,
};
#define FRAME_INTERP(interp) (FRAME_INTERP_BASE + (interp))
#define FRAME_IS_INTERP(kind)                                                  \
	((kind) > FRAME_INTERP_BASE && (kind) < FRAME_KIND_COUNT)
#define FRAME_F_RETURN_ADDR 0x1 /* pc is a return address: subtract one */
#define FRAME_MAX_PAYLOAD 3
#define FRAME_DATA_MASK 0xffffffffffffULL
#define FRAME_WORD(kind, flags, data)                                          \
	(((__u64)(kind) << 56) | ((__u64)((flags)&0xf) << 48) |                \
	 ((__u64)(data)&FRAME_DATA_MASK))
#define FRAME_KIND(w) ((unsigned)((w) >> 56))
#define FRAME_NPAYLOAD(w) ((unsigned)(((w) >> 52) & 0xf))
#define FRAME_FLAGS(w) ((unsigned)(((w) >> 48) & 0xf))
#define FRAME_DATA(w) ((w)&FRAME_DATA_MASK)

/* ---- process events (ring buffer "events") ------------------------------ */
enum pid_event_type {
	PEV_EXEC = 1,	    /* sched_process_exec */
	PEV_EXIT = 2,	    /* last thread of the process exited */
	PEV_UNKNOWN_PID = 3, /* sample of a process not loaded yet */
	PEV_UNKNOWN_PC = 4,  /* sample at a pc in no known mapping (dlopen) */
};

struct pid_event {
	__u64 ktime;
	__u32 pid;
	__u32 type; /* enum pid_event_type */
	__u64 addr; /* the pc for PEV_UNKNOWN_PC */
};
_Static_assert(sizeof(struct pid_event) == 24, "pid_event layout");

/* ---- process and mapping maps ------------------------------------------- */

/* pid_info: value.  A process is "synced" once userland loaded its
 * mappings. */
#define PID_F_SYNCED 0x1
struct pid_info {
	__u32 flags;
	__u32 interp_mask; /* bit per interp_kind present in the process */
	/* the generation of the process' entries in "mappings": userland
	 * gives every sync a new one (one counter for all processes, so a
	 * reused pid never repeats it); map_cache entries of another
	 * generation are ignored */
	__u32 map_gen;
	__u32 pad;
};
_Static_assert(sizeof(struct pid_info) == 16, "pid_info layout");

/* pid_epoch: a counter per group of pids (the pid's low bits), bumped
 * after every change of the pid_info of a pid in the group or of its entry
 * in a runtime's map: userland's updates and removals (tracer_maps.c), the
 * exec program's removal.  A CPU keeps the pid_info of the last process it
 * sampled with its group's counter (scratch.pic), and the runtime entry it
 * looked up last (scratch.ipc), and the next sample of that process takes
 * them from there while the counter is unchanged, without the hash
 * lookups. */
#define PID_EPOCH_SLOTS 1024
_Static_assert((PID_EPOCH_SLOTS & (PID_EPOCH_SLOTS - 1)) == 0,
	       "PID_EPOCH_SLOTS: a power of two");

/* Key of the LPM trie "mappings": the pid and the address are big-endian
 * so that the pid forms the leading 32 bits of the prefix. */
struct mapping_key {
	__u32 prefixlen; /* 32 + number of significant address bits */
	__u32 pid_be;
	__u64 addr_be;
};
_Static_assert(sizeof(struct mapping_key) == 16, "mapping_key layout");

#define MAP_F_DELTAS 0x1   /* stack deltas are loaded for file_id */
#define MAP_F_FP_ONLY 0x2  /* the file has no CFI: walk frame pointers */
#define MAP_F_INTERP 0x4   /* the file holds interpreter code */
#define MAP_F_VDSO 0x8	   /* the vDSO */
struct mapping_info {
	__u64 file_id; /* high 64 bits of the 128-bit file id */
	__u64 bias;    /* pc - bias = address in the ELF file */
	__u64 start;   /* the mapping's range, to skip lookups for the next */
	__u64 end;     /*   frame in the same mapping */
	__u32 flags;   /* MAP_F_* */
	__u32 interp_mask; /* bit per enum interp_kind, with MAP_F_INTERP: a
			    * file may hold more than one runtime */
	/* which load of the file's stack deltas the mapping uses (userland
	 * numbers each load; never 0 with MAP_F_DELTAS): rule_cache
	 * entries of another load are ignored, since a file reloaded may
	 * use other rule indexes, and freed ones are reused */
	__u32 load_gen;
	__u32 pad;
};
_Static_assert(sizeof(struct mapping_info) == 48, "mapping_info layout");

/* ---- stack deltas ------------------------------------------------------- */

/* Key of "delta_pages": a file and a 64 KiB page of its address space. */
struct page_key {
	__u64 file_id;
	__u64 page; /* ELF address >> DELTA_PAGE_BITS */
};
_Static_assert(sizeof(struct page_key) == 16, "page_key layout");

/* A page of PAGE_FENCES rows or more is cut into PAGE_FENCES runs of
 * rows, run b from row page_run(count, b) to page_run(count, b + 1); its
 * page_info holds the address of each run's first row.  A search reads
 * those (in the entry it has looked up) and then searches one run, a few
 * rows in one or two lines, where a search over the whole page (1,400 rows
 * on average in python3.11, 5.6 KiB) touched a cold line at each of its
 * first steps. */
#define PAGE_FENCES 32
#define PAGE_FENCES_SHIFT 5
#define page_run(count, b) (((__u32)(b) * (__u32)(count)) >> PAGE_FENCES_SHIFT)

/* Rows of the page are rows[first .. first+count) in "delta_rows", all in
 * chunk first >> DELTA_CHUNK_SHIFT; the first row of every page starts at
 * address 0 of the page.  fence[b]: ROW_ADDR of row page_run(count, b)
 * when count >= PAGE_FENCES (fence[0] is 0), else all 0. */
struct page_info {
	__u32 first;
	__u32 count;
	__u16 fence[PAGE_FENCES];
};
_Static_assert(sizeof(struct page_info) == 72, "page_info layout");


/* A per-CPU cache of recent "mappings" lookups: (pid, a 64 KiB region of
 * pcs) -> the mapping holding the pc.  A sample's pcs fall in the same few
 * mappings from one sample of a process to the next, and the trie's walk
 * is a dozen cold nodes; an entry is one line.  Valid while the process'
 * pid_info.map_gen is the one it was cached under.  check: as
 * rule_cache's, against an entry torn by a program that interrupted its
 * writer on the same CPU. */
struct map_cache_ent {
	__u32 pid;
	__u32 gen;
	struct mapping_info mi;
	__u64 check;
};
_Static_assert(sizeof(struct map_cache_ent) == 64, "map_cache_ent layout");
#define MAP_CACHE_CHECK(e)                                                     \
	(((__u64)(e)->pid << 32 | (e)->gen) ^ (e)->mi.file_id ^ (e)->mi.bias ^ \
	 (e)->mi.start ^ (e)->mi.end ^                                         \
	 ((__u64)(e)->mi.flags << 32 | (e)->mi.interp_mask) ^                  \
	 (__u64)(e)->mi.load_gen ^ 0x9ae16a3b2f90404fULL)
/* default entries per CPU (-map-cache-entries), a power of two */
#define MAP_CACHE_DEFAULT 1024
#define MAP_CACHE_REGION_BITS 16
/* entries in a 4 KiB page: log2 */
#define MAP_CACHE_PAGE_SHIFT 6
_Static_assert(sizeof(struct map_cache_ent) << MAP_CACHE_PAGE_SHIFT == 4096,
	       "MAP_CACHE_PAGE_SHIFT: the entries of a 4 KiB page");

/* A row: low 16 bits of the address in the page, and a rule index. */
#define ROW(addr_low, rule) (((__u32)(rule) << 16) | ((__u32)(addr_low)&0xffff))
#define ROW_ADDR(r) ((r)&0xffff)
#define ROW_RULE(r) ((r) >> 16)

struct row_block {
	__u32 rows[ROWS_PER_BLOCK];
};
_Static_assert(sizeof(struct row_block) == 64, "row_block layout");

/* Rule commands.  RULE_CMD_NONE is a normal CFA rule. */
enum rule_cmd {
	RULE_CMD_NONE = 0,
	RULE_CMD_INVALID = 1,	  /* no CFI covers the address (gap) */
	RULE_CMD_STOP = 2,	  /* outermost frame: RA undefined */
	RULE_CMD_PLT = 3,	  /* GCC's PLT CFA expression: CFA = rsp +
				   * cfa_off + ((pc & 15) >= cfa_post ? 8 : 0);
				   * the fixed rule has 8 and 11 */
	RULE_CMD_SIGNAL = 4,	  /* x86-64 rt_sigreturn trampoline */
	RULE_CMD_FRAME_POINTER = 5, /* no CFI: walk frame pointers */
	RULE_CMD_UNSUPPORTED = 6,  /* CFI we cannot lower (a CFA expression,
				    * the return address elsewhere than CFA-8) */
	RULE_CMD_GO_SWITCH = 7	   /* Go's switch to the g0 stack: see below */
};

/*
 * RULE_CMD_GO_SWITCH marks runtime.systemstack, runtime.morestack and
 * runtime.asmcgocall of a Go binary: code that saved the goroutine's
 * registers in its g->sched, moved to the M's g0 stack and called a
 * function there.  The goroutine's stack goes on where Go's own traceback
 * takes it up: g = *(fs_base + tls), m = g->m; when g is m->g0,
 * curg = m->curg (checked: curg->m == m) and the caller's sp, pc and rbp
 * are curg->sched's (the pc is exact: systemstack_switch, or the prologue
 * of the function whose stack had to grow).  While g is not yet g0 (a
 * sample inside the switch code itself) the frame is an empty one: the
 * return address at sp.  Fields:
 *   cfa_off  the thread-pointer offset of g; with RULE_F_GO_TLS_GOT the
 *            ELF address of the GOT slot that holds it (cgo binaries)
 *   fp_off   offsetof(struct m, curg), read from runtime.systemstack's code
 *   flags    RULE_F_GO_TLS_GOT; RULE_F_GO_FP when the layout was not found:
 *            a frame-pointer step then, allowed to move to another stack
 * g.m, g.sched and the gobuf fields have had the offsets below on amd64
 * since Go 1.8; m.g0 is m's first field.
 */
#define RULE_F_GO_TLS_GOT 0x2
#define RULE_F_GO_FP 0x4
#define GO_G_M 0x30
#define GO_G_SCHED 0x38
#define GO_GOBUF_SP 0
#define GO_GOBUF_PC 8
#define GO_GOBUF_BP 48

/* Registers, in the x86-64 DWARF numbering that CFI uses: a CFA may be
 * computed from any general register (OpenSSL's assembly keeps it in rax,
 * rsi, r9..r15; ld.so's _dl_runtime_resolve in rbx).  On arm64 the same
 * slots hold the frame pointer x29 (RULE_REG_FP), sp (RULE_REG_SP) and the
 * link register x30 (RULE_REG_LR, slot 0); its CFI computes a CFA from sp
 * or x29 only. */
enum rule_reg {
	RULE_REG_RAX = 0,
	RULE_REG_LR = 0, /* arm64: x30 */
	RULE_REG_RDX = 1,
	RULE_REG_RCX = 2,
	RULE_REG_RBX = 3,
	RULE_REG_RSI = 4,
	RULE_REG_RDI = 5,
	RULE_REG_FP = 6, /* rbp */
	RULE_REG_SP = 7, /* rsp */
	RULE_REG_R8 = 8,
	RULE_REG_R15 = 15,
	RULE_REG_COUNT = 16,
};

/* How to recover the caller's frame pointer (rbp). */
enum rule_fp {
	RULE_FP_SAME = 0,    /* rbp unchanged */
	RULE_FP_CFA_OFF = 1, /* rbp saved at CFA + fp_off */
	RULE_FP_REG_OFF = 2, /* rbp saved at rbp + fp_off (GCC realign form) */
	RULE_FP_UNDEF = 3,   /* rbp not recoverable: set it to zero */
};

#define RULE_F_DEREF_CFA 0x1 /* CFA = *(reg + cfa_off) + cfa_post */

/* Where the return address is.  Always at CFA - 8 on x86-64; on arm64 the
 * call leaves it in the link register x30, which a function saves (usually
 * beside x29) somewhere below the CFA, or never when it is a leaf. */
enum rule_ra {
	RULE_RA_CFA_M8 = 0,  /* at CFA - 8 */
	RULE_RA_CFA_OFF = 1, /* at CFA + ra_off (a multiple of 8) */
	RULE_RA_LR = 2,	     /* in the link register (arm64 leaf) */
};

/*
 * The other callee-saved registers a rule restores, in this order (rbp
 * has fp_rule).  saved[i] is where the caller's value was saved, in
 * 8-byte slots from the CFA (-2: at CFA - 16); RULE_SAVED_SAME (0) when
 * the register keeps its value, RULE_SAVED_UNDEF when it cannot be
 * recovered (it becomes 0, so no later rule computes from a stale value).
 * Registers that no rule restores carry their value from frame to frame,
 * as libgcc, libunwind and libdw do: a CFA kept in rax by a function is
 * still in rax when its callee returns, unless the callee's CFI says
 * otherwise.
 */
#define RULE_SAVED_COUNT 5
#define RULE_SAVED_SAME 0
#define RULE_SAVED_UNDEF (-128)
#define RULE_SAVED_REGS { RULE_REG_RBX, 12, 13, 14, 15 }

/*
 * One unwind rule, deduplicated in the global table "rules".  The return
 * address is at CFA - 8 on x86-64 (rows whose CFI says otherwise are
 * lowered to RULE_CMD_INVALID); ra_rule says where it is on arm64.  Rule indices below RULE_FIXED_COUNT
 * are the fixed commands, so a row can name a command without a lookup.
 * The size is a multiple of 8: the kernel rounds array values up to 8
 * bytes, and userland writes the table through an mmap of the array.
 */
struct unwind_rule {
	__u8 cmd;     /* enum rule_cmd */
	__u8 cfa_reg; /* enum rule_reg: 0..15 */
	__u8 fp_rule; /* enum rule_fp */
	__u8 flags;   /* RULE_F_* */
	__s32 cfa_off;
	__s32 fp_off;
	__s16 cfa_post;
	__s8 saved[RULE_SAVED_COUNT]; /* rbx, r12..r15; see above */
	__u8 ra_rule;		      /* enum rule_ra */
	__s16 ra_off;		      /* RULE_RA_CFA_OFF: bytes from the CFA */
	__u8 pad[2];
};
_Static_assert(sizeof(struct unwind_rule) == 24, "unwind_rule layout");

/* A per-CPU cache of recent stack-delta lookups: (file, address) -> rule
 * index and a copy of the rule, valid for the load of the file's deltas it
 * was cached from (gen: the mapping's load_gen).  A file's rows and its
 * references on rules stay while any process maps it, so the entries of a
 * loaded file stay right; those of a file unloaded are never matched
 * again, whatever becomes of its rule indexes.  The rule is copied in so
 * that a hit reads one line, not that line and the rule's line in the
 * rules table (each a cache miss by the next sample: timed at ~200 ns a
 * frame).  check guards against an entry torn by a program that
 * interrupted its writer on the same CPU. */
struct rule_cache_ent {
	__u64 file_id;
	__u64 addr;
	__u32 idx; /* the rule's index; rule: rules[idx] */
	__u32 gen;
	struct unwind_rule rule;
	__u64 check;
	__u64 pad;
};
_Static_assert(sizeof(struct rule_cache_ent) == 64, "rule_cache_ent layout");
/* default entries per CPU (-rule-cache-entries), a power of two */
#define RULE_CACHE_DEFAULT 2048
/* entries in a 4 KiB page: log2 */
#define RULE_CACHE_PAGE_SHIFT 6
_Static_assert(sizeof(struct rule_cache_ent) << RULE_CACHE_PAGE_SHIFT == 4096,
	       "RULE_CACHE_PAGE_SHIFT: the entries of a 4 KiB page");

/* Fixed rule indices: the table is preloaded with these. */
enum fixed_rule {
	RULE_IDX_INVALID = 0,
	RULE_IDX_STOP = 1,
	RULE_IDX_PLT = 2,
	RULE_IDX_SIGNAL = 3,
	RULE_IDX_FRAME_POINTER = 4,
	RULE_IDX_UNSUPPORTED = 5,
	RULE_FIXED_COUNT = 6,
};
/* Rows carry a 16-bit rule index. */
#define MAX_RULES 65536

#endif /* EBPF_PROFILER_SHARED_H */
