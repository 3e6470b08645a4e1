// SPDX-License-Identifier: Apache-2.0
#include "py_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "elfmap.h"

int fix_py_detect_fd(int fd, const char *name, unsigned flags,
		     struct py_info *out)
{
	struct elfm *elf;
	int err;

	memset(out, 0, sizeof(*out));
	err = elfm_open_fd(fd, &elf);
	if (err)
		return err == -ENOMEM ? err : -ENOEXEC;
	/* a file cut short under the mapping: what was read was zeros */
	err = elfm_release(elf, py_detect_elf(elf, fd, name, flags, out));
	if (err)
		memset(out, 0, sizeof(*out));
	return err;
}

int fix_py_detect(const char *path, unsigned flags, struct py_info *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0) {
		memset(out, 0, sizeof(*out));
		return -errno;
	}
	err = fix_py_detect_fd(fd, path, flags, out);
	close(fd);
	return err;
}

static uint64_t get_u64(const uint8_t *b, uint16_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* Reads go through interp_rd: -EFAULT at address 0, as BPF's reads of
 * user memory fail there. */
static int tstate_of(const struct py_proc *pp, const struct interp_reader *r,
		     uint64_t fsbase, uint64_t *tstate)
{
	uint64_t interp, ts = 0, tid;
	unsigned i;
	int err;

	*tstate = 0;
	if (!pp)
		return -ESRCH;
	err = interp_rd(r, pp->runtime + pp->rt_interp_main, &interp, 8);
	if (!err && !interp)
		return -ESRCH; /* not initialized yet, or finalized */
	if (!err)
		err = interp_rd(r, interp + pp->is_tstate_head, &ts, 8);
	for (i = 0; !err && ts && i < PY_TSTATE_SCAN_MAX; i++) {
		err = interp_rd(r, ts + pp->ts_thread_id, &tid, 8);
		if (err)
			break;
		if (tid == fsbase) {
			*tstate = ts;
			return 0;
		}
		err = interp_rd(r, ts + pp->ts_next, &ts, 8);
	}
	return err ? err : -ESRCH;
}

int fix_py_tstate(const struct py_proc *pp, interp_read_fn read, void *arg,
		  pid_t pid, uint64_t fsbase, uint64_t *tstate)
{
	struct interp_reader r = { read, arg, pid };

	return tstate_of(pp, &r, fsbase, tstate);
}

/* The instruction index of a frame, in code units, from its raw fields. */
static uint32_t frame_instr(const struct py_proc *pp, const uint8_t *f,
			    uint64_t code)
{
	if (pp->frame_model == PY_FRAMES_OBJECT) {
		int32_t lasti;

		memcpy(&lasti, f + pp->f_lasti, sizeof(lasti));
		return lasti < 0 ? PY_INSTR_NONE :
				   (uint32_t)lasti >> pp->lasti_shift;
	} else {
		/* prev_instr (3.11, 3.12) is one unit before the code until
		 * the frame starts; instr_ptr (3.13) points at the code. */
		int64_t d = (int64_t)(get_u64(f, pp->f_lasti) - code -
				      pp->co_code_adaptive);

		return d < 0 || d / 2 >= PY_INSTR_NONE ? PY_INSTR_NONE :
							 (uint32_t)(d / 2);
	}
}

int fix_py_walk(const struct py_proc *pp, interp_read_fn read, void *arg,
		pid_t pid, uint64_t fsbase, struct py_walk_frame *frames,
		uint32_t max, struct py_walk *out)
{
	struct interp_reader r = { read, arg, pid };
	uint8_t f[PY_FRAME_READ_MAX];
	uint64_t frame;
	uint32_t steps = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (!pp)
		return -ESRCH;
	if (pp->f_read_size > sizeof(f))
		return -EINVAL;
	err = tstate_of(pp, &r, fsbase, &out->tstate);
	if (!err)
		err = interp_rd(&r, out->tstate + pp->ts_frame, &frame, 8);
	if (!err && frame && pp->cf_current_frame != PY_OFF_NONE)
		err = interp_rd(&r, frame + pp->cf_current_frame, &frame, 8);
	while (!err && frame) {
		struct py_walk_frame *w;
		uint64_t code;

		/* Shims push nothing: bound the steps too, against a cycle. */
		if (++steps > 2 * max + 2) {
			out->truncated = true;
			break;
		}
		err = interp_rd(&r, frame, f, pp->f_read_size);
		if (err)
			break;
		if (pp->frame_model == PY_FRAMES_SHIM &&
		    f[pp->f_owner] == PY_OWNED_BY_CSTACK) {
			/* The boundary of an invocation: back to native. */
			if (out->n)
				frames[out->n - 1].flags |= PY_WF_CALL_END;
			frame = get_u64(f, pp->f_back);
			continue;
		}
		if (out->n >= max) {
			out->truncated = true;
			break;
		}
		code = get_u64(f, pp->f_code);
		w = &frames[out->n++];
		w->code = code;
		w->instr = frame_instr(pp, f, code);
		w->flags = 0;
		if (pp->frame_model == PY_FRAMES_OBJECT ||
		    (pp->frame_model == PY_FRAMES_ENTRY && f[pp->f_is_entry]))
			w->flags |= PY_WF_CALL_END;
		frame = get_u64(f, pp->f_back);
	}
	return err;
}
