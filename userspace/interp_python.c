// SPDX-License-Identifier: Apache-2.0
/*
 * CPython 3.8-3.13: the per-process value for BPF, symbolization, and the
 * userland twin of the BPF frame walk.  Detection is in
 * interp_python_detect.c, line tables in interp_python_lines.c.  See
 * interp_python.h.
 */
#include "interp_python.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfaddr.h"
#include "hashmap.h"
#include "interp.h"
#include "log.h"

/* A field: its offset (maybe PY_OFF_NONE) and width. */
struct span {
	uint16_t off, width;
};

/* The end of the last present field, at least min.  In 32 bits: an
 * offset near 0xffff plus its width must not wrap to a small size. */
static uint32_t spans_end(const struct span *s, size_t n, uint32_t min)
{
	uint32_t end = min;
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i].off != PY_OFF_NONE &&
		    (uint32_t)s[i].off + s[i].width > end)
			end = (uint32_t)s[i].off + s[i].width;
	return end;
}

/* Bytes of a frame the walk reads at once: up to the last field used. */
static uint32_t frame_read_size(const struct py_offsets *o, bool object)
{
	const struct span s[] = {
		{ o->f_back, 8 },     { o->f_code, 8 },
		{ o->f_lasti, object ? 4 : 8 }, { o->f_is_entry, 1 },
		{ o->f_owner, 1 },
	};

	return (spans_end(s, sizeof(s) / sizeof(s[0]), 0) + 7) & ~7u;
}

/* The bytes of a thread state the BPF walk reads at once: from the first
 * to the end of the last of next, thread_id and the frame pointer. */
static void py_ts_window(const struct py_offsets *o, uint32_t *lo,
			 uint32_t *len)
{
	uint32_t a = o->ts_next, b = o->ts_thread_id, c = o->ts_frame;
	uint32_t min = a < b ? a : b, max = a > b ? a : b;

	min = c < min ? c : min;
	max = c > max ? c : max;
	*lo = min;
	*len = max + 8 - min;
}

/* The offsets struct py_proc carries, named alike in struct py_offsets. */
#define PY_PROC_OFFSETS(X)                                                     \
	X(rt_interp_main) X(is_tstate_head) X(ts_next) X(ts_thread_id)        \
	X(ts_native_tid) X(ts_frame) X(cf_current_frame) X(f_back) X(f_code)  \
	X(f_lasti) X(f_is_entry) X(f_owner) X(co_code_adaptive)

void py_proc_fill(const struct py_info *info, uint64_t bias,
		  struct py_proc *out)
{
	const struct py_offsets *o = &info->off;
	uint32_t fr, lo, len;

	memset(out, 0, sizeof(*out));
	out->runtime = ea_runtime_addr(bias, info->runtime);
	out->code_type = ea_runtime_addr(bias, info->code_type);
	out->tss_key = o->rt_tss_key == PY_OFF_NONE ?
			       0 :
			       ea_runtime_addr(bias, info->runtime) + o->rt_tss_key;
	out->eval_lo = ea_runtime_addr(bias, info->eval_lo);
	out->eval_hi = ea_runtime_addr(bias, info->eval_hi);
	if (info->cold_hi) {
		out->cold_lo = ea_runtime_addr(bias, info->cold_lo);
		out->cold_hi = ea_runtime_addr(bias, info->cold_hi);
	}
	out->version = (uint16_t)(info->major << 8 | info->minor);
	out->frame_model = info->frame_model;
	out->lasti_shift = info->lasti_shift;
	fr = frame_read_size(o, info->frame_model == PY_FRAMES_OBJECT);
	/* too large for the walk, which refuses it (py_info_check) */
	out->f_read_size = fr > UINT16_MAX ? UINT16_MAX : (uint16_t)fr;
	py_ts_window(o, &lo, &len);
	out->ts_read_lo = (uint16_t)lo;
	out->ts_read_len = len > UINT16_MAX ? UINT16_MAX : (uint16_t)len;
#define COPY_(f) out->f = o->f;
	PY_PROC_OFFSETS(COPY_)
#undef COPY_
}

/* ---- the context: processes and the code object cache -------------------- */

#define DEFAULT_MAX_CODE 16384
#define DEFAULT_MAX_BYTES (64u << 20)
#define DEFAULT_MAX_PROCS 4096
/* A line table longer than this is cut (lines past it read as unknown). */
#define LINETABLE_MAX (256u << 10)
/* The code object fields read at once: every offset used is below. */
#define CODE_HDR_MAX 160
/* A str object's header: the largest PyASCIIObject. */
#define UNI_HDR_MAX 64
/* A bytes object's header up to its size field. */
#define BYTES_HDR_MAX 64

struct py_pent {
	pid_t pid;
	uint16_t code_hdr; /* bytes of a code object to read */
	struct py_info info;
	struct py_proc proc;
};

/* What must not change for a cached code object to still be the same:
 * a freed object's address reused by another code object shows up as a
 * different type, name, file, line table or first line. */
struct py_sig {
	uint64_t type, file, name, qual, table;
	int32_t first;
	int32_t pad;
};

struct py_code {
	struct py_code *prev, *next; /* LRU list, most recent first */
	pid_t pid;
	uint64_t addr;
	struct py_sig sig;
	size_t bytes; /* accounted size */
	uint32_t fi_flags;
	uint32_t table_len;
	const char *name, *file;
	const uint8_t *table;
	char data[]; /* name, file, table */
};

struct py_ctx {
	struct py_ctx_opts opts;
	struct py_pent *procs; /* sorted by pid */
	size_t nprocs;
	struct hm codes; /* code_key(pid, addr) -> struct py_code * */
	struct py_code *lru_head, *lru_tail;
	struct py_stats st;
};

int py_ctx_new(const struct py_ctx_opts *opts, struct py_ctx **out)
{
	struct py_ctx *ctx;

	*out = NULL;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	if (opts)
		ctx->opts = *opts;
	if (!ctx->opts.max_code)
		ctx->opts.max_code = DEFAULT_MAX_CODE;
	if (!ctx->opts.max_bytes)
		ctx->opts.max_bytes = DEFAULT_MAX_BYTES;
	if (!ctx->opts.max_procs)
		ctx->opts.max_procs = DEFAULT_MAX_PROCS;
	if (!ctx->opts.read)
		ctx->opts.read = interp_read_process;
	ctx->procs = calloc(ctx->opts.max_procs, sizeof(*ctx->procs));
	if (!ctx->procs) {
		py_ctx_free(ctx);
		return -ENOMEM;
	}
	*out = ctx;
	return 0;
}

void py_ctx_free(struct py_ctx *ctx)
{
	struct py_code *c, *next;

	if (!ctx)
		return;
	for (c = ctx->lru_head; c; c = next) {
		next = c->next;
		free(c);
	}
	hm_free(&ctx->codes);
	free(ctx->procs);
	free(ctx);
}

/* The codes map's key of a code object: a hash of (pid, addr).  An entry
 * whose key a newer one took (two objects of one hash, one in 2^64)
 * stays in the LRU list, found by no lookup, until evicted. */
static uint64_t code_key(pid_t pid, uint64_t addr)
{
	const uint64_t k[2] = { addr, (uint64_t)(uint32_t)pid };

	return hm_hash(k, sizeof(k), 0);
}

static void code_unlink(struct py_ctx *ctx, struct py_code *c)
{
	uint64_t key = code_key(c->pid, c->addr), v;

	if (hm_get(&ctx->codes, key, &v) && v == (uintptr_t)c)
		hm_del(&ctx->codes, key);
	if (c->prev)
		c->prev->next = c->next;
	else
		ctx->lru_head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		ctx->lru_tail = c->prev;
	ctx->st.entries--;
	ctx->st.bytes -= c->bytes;
	free(c);
}

static void lru_push_front(struct py_ctx *ctx, struct py_code *c)
{
	c->prev = NULL;
	c->next = ctx->lru_head;
	if (ctx->lru_head)
		ctx->lru_head->prev = c;
	ctx->lru_head = c;
	if (!ctx->lru_tail)
		ctx->lru_tail = c;
}

static void lru_touch(struct py_ctx *ctx, struct py_code *c)
{
	if (ctx->lru_head == c)
		return;
	c->prev->next = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		ctx->lru_tail = c->prev;
	lru_push_front(ctx, c);
}

static struct py_code *code_find(struct py_ctx *ctx, pid_t pid, uint64_t addr)
{
	struct py_code *c = hm_get_ptr(&ctx->codes, code_key(pid, addr));

	return c && c->pid == pid && c->addr == addr ? c : NULL;
}

static void drop_pid(struct py_ctx *ctx, pid_t pid)
{
	struct py_code *c, *next;

	for (c = ctx->lru_head; c; c = next) {
		next = c->next;
		if (c->pid == pid)
			code_unlink(ctx, c);
	}
}

static struct py_pent *pent_find(const struct py_ctx *ctx, pid_t pid,
				 size_t *pos)
{
	size_t lo = 0, hi = ctx->nprocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ctx->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (pos)
		*pos = lo;
	return lo < ctx->nprocs && ctx->procs[lo].pid == pid ? &ctx->procs[lo] :
							       NULL;
}

/* Bytes of a code object read at once: ob_type and the fields used. */
static uint32_t code_hdr_size(const struct py_offsets *o)
{
	const struct span s[] = {
		{ o->co_firstlineno, 4 }, { o->co_filename, 8 },
		{ o->co_name, 8 },	  { o->co_qualname, 8 },
		{ o->co_linetable, 8 },
	};

	return spans_end(s, sizeof(s) / sizeof(s[0]), 16);
}

int py_info_check(const struct py_info *info)
{
	const struct py_offsets *o = &info->off;
	bool object = info->frame_model == PY_FRAMES_OBJECT;
	uint32_t ts_lo, ts_len;

	/* the BPF walk reads a thread state's three fields at once */
	if (o->ts_next == PY_OFF_NONE || o->ts_thread_id == PY_OFF_NONE ||
	    o->ts_frame == PY_OFF_NONE)
		return -EINVAL;
	py_ts_window(o, &ts_lo, &ts_len);
	if (ts_len > PY_TSTATE_READ_MAX)
		return -EINVAL;
	/* every field read at a fixed offset of a fixed-size buffer */
	if (code_hdr_size(o) > CODE_HDR_MAX || o->co_firstlineno == PY_OFF_NONE ||
	    o->co_filename == PY_OFF_NONE || o->co_name == PY_OFF_NONE ||
	    o->co_linetable == PY_OFF_NONE)
		return -EINVAL;
	if (o->uni_ascii_size > UNI_HDR_MAX ||
	    o->uni_length + 8 > o->uni_ascii_size ||
	    o->uni_state + 4 > o->uni_ascii_size ||
	    o->bytes_size + 8 > BYTES_HDR_MAX)
		return -EINVAL;
	if (frame_read_size(o, object) > PY_FRAME_READ_MAX ||
	    o->f_back == PY_OFF_NONE || o->f_code == PY_OFF_NONE ||
	    o->f_lasti == PY_OFF_NONE)
		return -EINVAL;
	switch (info->frame_model) {
	case PY_FRAMES_OBJECT:
		/* f_lasti counts bytes (1) or code units (0) */
		return info->lasti_shift <= 1 ? 0 : -EINVAL;
	case PY_FRAMES_ENTRY:
		return o->f_is_entry != PY_OFF_NONE ? 0 : -EINVAL;
	case PY_FRAMES_SHIM:
		return o->f_owner != PY_OFF_NONE ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

int py_ctx_add_proc(struct py_ctx *ctx, pid_t pid, const struct py_info *info,
		    uint64_t bias)
{
	struct py_pent *p;
	size_t pos;

	if (py_info_check(info))
		return -EINVAL;
	p = pent_find(ctx, pid, &pos);
	if (p) {
		drop_pid(ctx, pid);
	} else {
		if (ctx->nprocs >= ctx->opts.max_procs) {
			ctx->st.procs_full++;
			return -ENOSPC;
		}
		memmove(&ctx->procs[pos + 1], &ctx->procs[pos],
			(ctx->nprocs - pos) * sizeof(*ctx->procs));
		ctx->nprocs++;
		p = &ctx->procs[pos];
	}
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->info = *info;
	p->code_hdr = (uint16_t)code_hdr_size(&info->off);
	py_proc_fill(info, bias, &p->proc);
	return 0;
}

void py_ctx_remove_proc(struct py_ctx *ctx, pid_t pid)
{
	size_t pos;

	if (!pent_find(ctx, pid, &pos))
		return;
	drop_pid(ctx, pid);
	memmove(&ctx->procs[pos], &ctx->procs[pos + 1],
		(ctx->nprocs - pos - 1) * sizeof(*ctx->procs));
	ctx->nprocs--;
}

const struct py_proc *py_ctx_proc(const struct py_ctx *ctx, pid_t pid)
{
	const struct py_pent *p = pent_find(ctx, pid, NULL);

	return p ? &p->proc : NULL;
}

void py_ctx_stats(const struct py_ctx *ctx, struct py_stats *out)
{
	*out = ctx->st;
}

static int ctx_read(struct py_ctx *ctx, pid_t pid, uint64_t addr, void *buf,
		    size_t len)
{
	int err;

	if (!addr)
		return -EFAULT;
	err = ctx->opts.read(ctx->opts.read_arg, pid, addr, buf, len);
	if (err < 0)
		ctx->st.read_errors++;
	return err;
}

static uint64_t get_u64(const uint8_t *b, uint16_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static int32_t get_s32(const uint8_t *b, uint16_t off)
{
	int32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* ---- strings ------------------------------------------------------------- */

/* Append code point cp to out[*pos...] as UTF-8, keeping room for the NUL;
 * false when it does not fit.  Surrogates and values past U+10FFFF (not
 * valid in UTF-8) become U+FFFD. */
static bool put_utf8(char *out, size_t cap, size_t *pos, uint32_t cp)
{
	unsigned char b[4];
	size_t n;

	if ((cp >= 0xd800 && cp < 0xe000) || cp > 0x10ffff)
		cp = 0xfffd;
	if (cp < 0x80) {
		b[0] = cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = 0xc0 | cp >> 6;
		b[1] = 0x80 | (cp & 63);
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = 0xe0 | cp >> 12;
		b[1] = 0x80 | ((cp >> 6) & 63);
		b[2] = 0x80 | (cp & 63);
		n = 3;
	} else {
		b[0] = 0xf0 | cp >> 18;
		b[1] = 0x80 | ((cp >> 12) & 63);
		b[2] = 0x80 | ((cp >> 6) & 63);
		b[3] = 0x80 | (cp & 63);
		n = 4;
	}
	if (*pos + n >= cap)
		return false;
	memcpy(out + *pos, b, n);
	*pos += n;
	return true;
}

/*
 * Read the str object at addr into out[0..cap) as UTF-8.  The state word
 * has kind in bits 2-4, compact in bit 5 and ascii in bit 6 in 3.8-3.13.
 * Compact ASCII data follows the PyASCIIObject, other compact data the
 * PyCompactUnicodeObject; a legacy string points to its data from there.
 */
static int read_unicode(struct py_ctx *ctx, pid_t pid,
			const struct py_offsets *o, uint64_t addr, char *out,
			size_t cap, bool *truncated)
{
	uint8_t hdr[UNI_HDR_MAX], *chars = NULL;
	uint64_t data, n, i;
	int64_t length;
	uint32_t state, kind;
	size_t pos = 0;
	int err;

	out[0] = 0;
	*truncated = false;
	/* Only the PyASCIIObject: a short str ends soon after, maybe at the
	 * end of a mapping. */
	err = ctx_read(ctx, pid, addr, hdr, o->uni_ascii_size);
	if (err < 0)
		return err;
	memcpy(&length, hdr + o->uni_length, sizeof(length));
	memcpy(&state, hdr + o->uni_state, sizeof(state));
	kind = (state >> 2) & 7;
	if (length < 0 || (kind != 1 && kind != 2 && kind != 4) ||
	    ((state & 0x40) && kind != 1))
		return -EINVAL;
	if (!(state & 0x20)) {
		/* legacy (PyUnicodeObject): data.any after the compact part */
		err = ctx_read(ctx, pid, addr + o->uni_compact_size, &data,
			       sizeof(data));
		if (err < 0)
			return err;
	} else if (state & 0x40) {
		data = addr + o->uni_ascii_size;
	} else {
		data = addr + o->uni_compact_size;
	}
	/* Each character takes at least one output byte. */
	n = (uint64_t)length < cap - 1 ? (uint64_t)length : cap - 1;
	if (n) {
		chars = malloc(n * kind);
		if (!chars)
			return -ENOMEM;
		err = ctx_read(ctx, pid, data, chars, n * kind);
		if (err < 0)
			goto cleanup;
	}
	for (i = 0; i < n; i++) {
		uint32_t cp;

		if (kind == 1) {
			cp = chars[i];
		} else if (kind == 2) {
			uint16_t u;

			memcpy(&u, chars + i * 2, 2);
			cp = u;
		} else {
			memcpy(&cp, chars + i * 4, 4);
		}
		if (!put_utf8(out, cap, &pos, cp))
			break;
	}
	out[pos] = 0;
	*truncated = i < (uint64_t)length;
cleanup:
	free(chars);
	return err;
}

/* Read a bytes object's contents, at most max bytes, into a malloc'd
 * buffer. */
static int read_bytes(struct py_ctx *ctx, pid_t pid, const struct py_offsets *o,
		      uint64_t addr, size_t max, uint8_t **out, size_t *len,
		      bool *truncated)
{
	uint8_t hdr[BYTES_HDR_MAX];
	int64_t size;
	size_t n;
	int err;

	*out = NULL;
	*len = 0;
	err = ctx_read(ctx, pid, addr, hdr, o->bytes_size + 8);
	if (err < 0)
		return err;
	memcpy(&size, hdr + o->bytes_size, sizeof(size));
	if (size < 0)
		return -EINVAL;
	n = (uint64_t)size < max ? (size_t)size : max;
	*truncated = n < (uint64_t)size;
	*out = malloc(n ? n : 1);
	if (!*out)
		return -ENOMEM;
	if (n) {
		err = ctx_read(ctx, pid, addr + o->bytes_sval, *out, n);
		if (err < 0) {
			free(*out);
			*out = NULL;
			return err;
		}
	}
	*len = n;
	return 0;
}

/* ---- symbolization ------------------------------------------------------- */

static void code_sig(const struct py_pent *p, const uint8_t *hdr,
		     struct py_sig *sig)
{
	const struct py_offsets *o = &p->info.off;

	memset(sig, 0, sizeof(*sig));
	sig->type = get_u64(hdr, 8);
	sig->file = get_u64(hdr, o->co_filename);
	sig->name = get_u64(hdr, o->co_name);
	if (o->co_qualname != PY_OFF_NONE)
		sig->qual = get_u64(hdr, o->co_qualname);
	sig->table = get_u64(hdr, o->co_linetable);
	sig->first = get_s32(hdr, o->co_firstlineno);
}

static void evict(struct py_ctx *ctx, size_t need)
{
	while (ctx->lru_tail && (ctx->st.entries >= ctx->opts.max_code ||
				 ctx->st.bytes + need > ctx->opts.max_bytes)) {
		code_unlink(ctx, ctx->lru_tail);
		ctx->st.evictions++;
	}
}

/* Read a code object's strings and line table into a new cache entry. */
static int code_load(struct py_ctx *ctx, const struct py_pent *p,
		     uint64_t addr, const struct py_sig *sig,
		     struct py_code **out)
{
	const struct py_offsets *o = &p->info.off;
	char name[PY_NAME_MAX], file[PY_FILE_MAX];
	size_t nlen, flen, tlen = 0;
	uint8_t *table = NULL;
	bool ntrunc, ftrunc, ttrunc = false;
	struct py_code *c;
	int err;

	*out = NULL;
	err = read_unicode(ctx, p->pid, o, sig->qual ? sig->qual : sig->name,
			   name, sizeof(name), &ntrunc);
	if (!err)
		err = read_unicode(ctx, p->pid, o, sig->file, file,
				   sizeof(file), &ftrunc);
	if (!err && sig->table)
		err = read_bytes(ctx, p->pid, o, sig->table, LINETABLE_MAX,
				 &table, &tlen, &ttrunc);
	if (err) {
		if (err == -EINVAL)
			ctx->st.bad_objects++;
		goto cleanup;
	}
	nlen = strlen(name) + 1;
	flen = strlen(file) + 1;
	c = malloc(sizeof(*c) + nlen + flen + tlen);
	if (!c) {
		err = -ENOMEM;
		goto cleanup;
	}
	memset(c, 0, sizeof(*c));
	c->pid = p->pid;
	c->addr = addr;
	c->sig = *sig;
	c->bytes = sizeof(*c) + nlen + flen + tlen;
	c->fi_flags = (ntrunc ? PY_FI_NAME_TRUNC : 0) |
		      (ftrunc ? PY_FI_FILE_TRUNC : 0) |
		      (ttrunc ? PY_FI_TABLE_TRUNC : 0);
	memcpy(c->data, name, nlen);
	memcpy(c->data + nlen, file, flen);
	if (tlen)
		memcpy(c->data + nlen + flen, table, tlen);
	c->name = c->data;
	c->file = c->data + nlen;
	c->table = (const uint8_t *)c->data + nlen + flen;
	c->table_len = (uint32_t)tlen;
	*out = c;
cleanup:
	free(table);
	return err;
}

int py_symbolize(struct py_ctx *ctx, pid_t pid, uint64_t code, uint32_t instr,
		 struct py_frame_info *out)
{
	const struct py_pent *p = pent_find(ctx, pid, NULL);
	uint8_t hdr[CODE_HDR_MAX];
	struct py_code *c;
	struct py_sig sig;
	int err, line;

	memset(out, 0, sizeof(*out));
	if (!p)
		return -ESRCH;
	/* One read serves both to validate a cached entry and to load. */
	err = ctx_read(ctx, pid, code, hdr, p->code_hdr);
	if (err < 0)
		return err;
	code_sig(p, hdr, &sig);
	c = code_find(ctx, pid, code);
	if (c && memcmp(&c->sig, &sig, sizeof(sig)) != 0) {
		code_unlink(ctx, c);
		ctx->st.stale++;
		c = NULL;
	}
	if (c) {
		ctx->st.hits++;
		lru_touch(ctx, c);
	} else {
		if (sig.type != p->proc.code_type || !sig.name || !sig.file) {
			ctx->st.bad_objects++;
			return -EINVAL;
		}
		err = code_load(ctx, p, code, &sig, &c);
		if (err < 0)
			return err;
		ctx->st.misses++;
		evict(ctx, c->bytes);
		if (hm_put(&ctx->codes, code_key(pid, code), (uintptr_t)c)) {
			free(c);
			return -ENOMEM;
		}
		lru_push_front(ctx, c);
		ctx->st.entries++;
		ctx->st.bytes += c->bytes;
	}
	snprintf(out->name, sizeof(out->name), "%s", c->name);
	snprintf(out->file, sizeof(out->file), "%s", c->file);
	out->first_line = c->sig.first;
	out->flags = c->fi_flags;
	line = py_line_for_instr(p->info.minor, c->table, c->table_len,
				 c->sig.first, instr);
	out->line = line > 0 ? line : 0;
	return 0;
}

/* ---- the interpreter module (interp.h) ------------------------------------ */

static int python_init(void **state)
{
	return py_ctx_new(NULL, (struct py_ctx **)state);
}

static void python_fini(void *state)
{
	py_ctx_free(state);
}

static int python_detect(void *state, const struct interp_file *file,
			 void **data, size_t *len)
{
	struct py_info *info = malloc(sizeof(*info));
	int err;

	(void)state;
	if (!info)
		return -ENOMEM;
	err = py_detect_elf(file->elf, file->fd, file->path, 0, info);
	if (err) {
		free(info);
		return err;
	}
	*data = info;
	*len = sizeof(*info);
	return 0;
}

static int python_check(const void *record)
{
	return py_info_check(record);
}

/* A process maps one CPython runtime (the first file holding one). */
static int python_attach(void *state, struct interp_mgr *im,
			 const struct interp_attach *a)
{
	const struct interp_file_map *f = &a->files[0];
	uint32_t key = (uint32_t)a->pid;
	struct py_proc pp;
	int err;

	/* userland first: it refuses a layout it cannot read safely, and
	 * then BPF does not get it either */
	err = py_ctx_add_proc(state, a->pid, f->data, f->bias);
	if (err)
		return err;
	py_proc_fill(f->data, f->bias, &pp);
	/* arm64: thread_id (pthread_self) is below the thread pointer; with
	 * no libc read (musl, a static build) 0, as on x86-64 */
	if (interp_libc_self(im, a->proc, &pp.self_off))
		pp.self_off = 0;
	return interp_map_update(im, INTERP_PYTHON, &key, &pp);
}

static void python_detach(void *state, pid_t pid)
{
	py_ctx_remove_proc(state, pid);
}

static int python_symbolize(void *state, pid_t pid,
			    const struct interp_frame *f,
			    struct interp_symbol *out, unsigned max)
{
	struct py_frame_info fi;
	int err;

	(void)max; /* one function a frame: nothing inlined */
	if (f->n_payload < 1)
		return -EINVAL;
	err = py_symbolize(state, pid, f->payload[0], (uint32_t)f->data, &fi);
	if (err)
		return err;
	snprintf(out->name, sizeof(out->name), "%s", fi.name);
	snprintf(out->file, sizeof(out->file), "%s", fi.file);
	out->line = fi.line > 0 ? (uint32_t)fi.line : 0;
	return 1;
}

const struct interp_module interp_module_python = {
	INTERP_MODULE_METRICS(PYTHON_METRICS),
	INTERP_MODULE_DATA(py, struct py_info, PY_INFO_FORMAT),
	INTERP_MODULE_FUNCS(python, python),
};
