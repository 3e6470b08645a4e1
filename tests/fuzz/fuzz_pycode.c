// SPDX-License-Identifier: Apache-2.0
/*
 * CPython objects read from process memory (interp_python.c) through the
 * swappable reader.  The target builds a small, well-formed process image
 * for one CPython layout (_PyRuntime, an interpreter, a thread state,
 * three frames, a code object, its strings and line table), then applies
 * the input's patches (struct fz_py_hdr in fuzz.h) to the image and to
 * the struct py_info, and symbolizes and walks it.  Patching a valid
 * image reaches deep states at once; a patched py_info stands for a
 * hostile file (3.13 describes its own layout) or a forged cache record.
 *
 * The layouts: the CPython builds named in EP_FUZZ_PYTHONS (':'
 * separated files, detected with fix_py_detect), after one built-in
 * self-consistent layout so that the target works without Python.
 *
 * The reader behaves like process_vm_readv: it copies what is mapped and
 * fails short, so a length the daemon did not bound shows as an overflow
 * of its buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "interp_python.h"
#include "../unit/py_fixture.h"

#define BASE 0x7f1200000000ULL
#define IMG_SIZE 0x8000
#define FSBASE 0x7f00dead0000ULL
#define PID 4242

#define A_INTERP (BASE + 0x1000)
#define A_TSTATE (BASE + 0x2000)
#define A_CFRAME (BASE + 0x2800)
#define A_FRAME (BASE + 0x3000) /* three, 0x400 apart */
#define A_CODE (BASE + 0x4000)
#define A_NAME (BASE + 0x5000)
#define A_FILE (BASE + 0x5400)
#define A_TABLE (BASE + 0x6000)

#define MAX_LAYOUTS 16

static struct py_info layouts[MAX_LAYOUTS];
static int n_layouts;
static uint8_t img[IMG_SIZE];

static int img_read(void *arg, pid_t pid, uint64_t addr, void *buf,
		    size_t len)
{
	uint64_t off = addr - BASE, n;

	(void)arg;
	(void)pid;
	if (addr < BASE || off >= IMG_SIZE)
		return -EFAULT;
	n = IMG_SIZE - off < len ? IMG_SIZE - off : len;
	memcpy(buf, img + off, n);
	return n == len ? 0 : -EFAULT;
}

/* Writes outside the image (a patched offset) are dropped. */
static void put(uint64_t addr, const void *v, size_t n)
{
	if (addr >= BASE && addr - BASE <= IMG_SIZE - n)
		memcpy(img + (addr - BASE), v, n);
}

static void put_u64(uint64_t addr, uint64_t v)
{
	put(addr, &v, 8);
}

static void put_off(uint64_t base, uint16_t off, uint64_t v)
{
	if (off != PY_OFF_NONE)
		put_u64(base + off, v);
}

/* A compact ASCII str. */
static void put_str(const struct py_offsets *o, uint64_t a, const char *s)
{
	uint32_t state = 1 << 2 | 1 << 5 | 1 << 6; /* kind 1, compact, ascii */

	put_u64(a + o->uni_length, strlen(s));
	put(a + o->uni_state, &state, 4);
	put(a + o->uni_ascii_size, s, strlen(s) + 1);
}

/* A line table saying lines 11, 12, ... for successive instructions. */
static void put_table(const struct py_info *in, uint64_t a)
{
	const struct py_offsets *o = &in->off;
	uint8_t t[16];
	int i;

	for (i = 0; i < 8; i++) {
		if (in->minor >= 11) {
			t[2 * i] = 0x80 | 13 << 3; /* no columns, 1 unit */
			t[2 * i + 1] = 2;	   /* line delta +1 */
		} else {
			t[2 * i] = 2; /* bytes */
			t[2 * i + 1] = 1;
		}
	}
	put_u64(a + o->bytes_size, sizeof(t));
	put(a + o->bytes_sval, t, sizeof(t));
}

static void build(const struct py_info *in, uint64_t bias)
{
	const struct py_offsets *o = &in->off;
	uint64_t runtime = in->runtime + bias;
	uint64_t frame, back;
	int32_t first = 10;
	int i;

	memset(img, 0, sizeof(img));
	put_off(runtime, o->rt_interp_main, A_INTERP);
	put_off(A_INTERP, o->is_tstate_head, A_TSTATE);
	put_off(A_TSTATE, o->ts_thread_id, FSBASE);
	if (o->cf_current_frame != PY_OFF_NONE) {
		put_off(A_TSTATE, o->ts_frame, A_CFRAME);
		put_off(A_CFRAME, o->cf_current_frame, A_FRAME);
	} else {
		put_off(A_TSTATE, o->ts_frame, A_FRAME);
	}
	for (i = 0; i < 3; i++) {
		frame = A_FRAME + 0x400 * i;
		back = i < 2 ? frame + 0x400 : 0;
		put_off(frame, o->f_back, back);
		put_off(frame, o->f_code, A_CODE);
		if (in->frame_model == PY_FRAMES_OBJECT) {
			int32_t lasti = 2 * i;

			if (o->f_lasti != PY_OFF_NONE)
				put(frame + o->f_lasti, &lasti, 4);
		} else {
			put_off(frame, o->f_lasti,
				A_CODE + o->co_code_adaptive + 2 * i);
		}
		if (i == 2 && o->f_owner != PY_OFF_NONE) {
			uint8_t owner = PY_OWNED_BY_CSTACK;

			put(frame + o->f_owner, &owner, 1);
		}
	}
	put_u64(A_CODE + 8, in->code_type + bias);
	if (o->co_firstlineno != PY_OFF_NONE)
		put(A_CODE + o->co_firstlineno, &first, 4);
	put_off(A_CODE, o->co_filename, A_FILE);
	put_off(A_CODE, o->co_name, A_NAME);
	put_off(A_CODE, o->co_qualname, A_NAME);
	put_off(A_CODE, o->co_linetable, A_TABLE);
	put_str(o, A_NAME, "fuzzed_function");
	put_str(o, A_FILE, "/fuzz/file.py");
	put_table(in, A_TABLE);
}

/* Self-consistent offsets (those of 3.12), for machines without Python;
 * grouped by the CPython structure they are in. */
static const struct py_info builtin_layout = {
	.format = PY_INFO_FORMAT,
	.major = 3, .minor = 12, .hexversion = 0x030c0000,
	.frame_model = PY_FRAMES_SHIM,
	.runtime = 0x500000, .code_type = 0x560000,
	.eval_lo = 0x400000, .eval_hi = 0x410000,
	.off = {
		.rt_interp_main = 48, .rt_tss_key = PY_OFF_NONE,
		.is_tstate_head = 72,
		.ts_next = 8, .ts_thread_id = 152, .ts_native_tid = 160,
		.ts_frame = 56,
		.cf_current_frame = 0,
		.f_back = 48, .f_code = 0, .f_lasti = 56,
		.f_is_entry = PY_OFF_NONE, .f_owner = 70,
		.co_code_adaptive = 192, .co_firstlineno = 68,
		.co_filename = 112, .co_name = 120, .co_qualname = 128,
		.co_linetable = 136, .co_basicsize = 192,
		.uni_length = 16, .uni_state = 32, .uni_ascii_size = 40,
		.uni_compact_size = 56,
		.bytes_size = 16, .bytes_sval = 32,
	},
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *env = getenv("EP_FUZZ_PYTHONS");
	char *list, *path, *save = NULL;

	(void)argc;
	(void)argv;
	layouts[n_layouts++] = builtin_layout;
	if (!env)
		return 0;
	list = strdup(env);
	for (path = strtok_r(list, ":", &save);
	     path && n_layouts < MAX_LAYOUTS;
	     path = strtok_r(NULL, ":", &save))
		if (fix_py_detect(path, 0, &layouts[n_layouts]) == 0)
			n_layouts++;
	free(list);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct py_ctx_opts opts = { .max_code = 2, .max_bytes = 4096,
				    .read = img_read };
	struct fz_in in = { data, size, 0 };
	struct py_walk_frame frames[8];
	struct py_frame_info fi;
	struct fz_py_hdr h = { 0 };
	struct py_ctx *ctx = NULL;
	struct py_info info;
	struct py_walk w;
	const uint8_t *p;
	uint64_t bias;
	size_t n;
	uint32_t i;

	p = fz_bytes(&in, sizeof(h), &n);
	memcpy(&h, p, n);
	info = layouts[h.layout % n_layouts];
	bias = BASE - info.runtime;
	/* patches to the py_info first: the image follows its offsets */
	for (i = 0; i < 2; i++) {
		struct fz_in pin = in;

		while (pin.off < pin.len) {
			uint16_t off = (uint16_t)(fz_u8(&pin) |
						  fz_u8(&pin) << 8);
			uint8_t len = fz_u8(&pin);

			p = fz_bytes(&pin, len, &n);
			if (i == 0 && off >= 0x8000) {
				off -= 0x8000;
				if (off < sizeof(info) &&
				    n <= sizeof(info) - off)
					memcpy((uint8_t *)&info + off, p, n);
			} else if (i == 1 && off < 0x8000) {
				if (off < IMG_SIZE && n <= IMG_SIZE - off)
					memcpy(img + off, p, n);
			}
		}
		if (i == 0)
			build(&info, bias);
	}
	if (py_ctx_new(&opts, &ctx) != 0)
		return 0;
	if (py_ctx_add_proc(ctx, PID, &info, bias) != 0)
		goto cleanup;
	if (h.ops & 1) {
		py_symbolize(ctx, PID, A_CODE, h.instr, &fi);
		if (h.ops & 4)
			py_symbolize(ctx, PID, A_CODE, h.instr, &fi);
	}
	if ((h.ops & 2) &&
	    fix_py_walk(py_ctx_proc(ctx, PID), img_read, NULL, PID, FSBASE,
			frames, 8, &w) == 0) {
		for (i = 0; i < w.n; i++)
			py_symbolize(ctx, PID, frames[i].code, frames[i].instr,
				     &fi);
	}
	py_ctx_remove_proc(ctx, PID);
cleanup:
	py_ctx_free(ctx);
	return 0;
}
