// SPDX-License-Identifier: Apache-2.0
#include "symbolize.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfaddr.h"
#include "metrics.h"
#include "profiler.h"

struct symbolizer {
	struct pm *pm;
	struct exe_mgr *em;
	struct ksyms_async *ka;
	sy_interp_fn interp;
	void *interp_arg;
	struct sy_stats st;
	struct inl_cache *inl; /* NULL: no inline frames */
};

int sy_new(struct pm *pm, struct exe_mgr *em, struct ksyms_async *ka,
	   sy_interp_fn interp, void *interp_arg, struct symbolizer **out)
{
	struct symbolizer *sy = calloc(1, sizeof(*sy));

	*out = NULL;
	if (!sy)
		return -ENOMEM;
	sy->pm = pm;
	sy->em = em;
	sy->ka = ka;
	sy->interp = interp;
	sy->interp_arg = interp_arg;
	*out = sy;
	return 0;
}

void sy_free(struct symbolizer *sy)
{
	free(sy);
}

void sy_kernel_frame(uint64_t addr, struct sy_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->kind = SY_KERNEL;
	f->addr = addr;
}

void sy_record_init(struct sy_record *r, uint32_t pid, const __u64 *uw,
		    uint32_t n)
{
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->uw = uw;
	r->n = n;
}

/* A raw pc (an unsynced process, or a pc BPF did not know): through our
 * copy of the process' mappings, which its sync read (the record waited
 * for it in the pipeline). */
static void raw_frame(struct symbolizer *sy, struct sy_record *r, uint64_t pc,
		      struct sy_frame *f)
{
	const struct pm_mapping *m = NULL;

	if (!r->proc_tried) {
		r->proc_tried = true;
		r->proc = pm_find(sy->pm, (pid_t)r->pid);
	}
	if (r->proc)
		m = pm_find_mapping(r->proc, pc - (f->ret_addr ? 1 : 0));
	if (m && m->file) {
		f->kind = SY_NATIVE;
		f->file = m->file;
		f->map = m;
		f->addr = ea_elf_addr(m->bias, pc);
		return;
	}
	sy->st.raw_unresolved++;
	f->kind = SY_UNKNOWN;
	f->addr = pc;
	f->code = m ? SY_UNKNOWN_ANON : SY_UNKNOWN_PC;
}

int sy_next_frame(struct symbolizer *sy, struct sy_record *r,
		  struct sy_frame *f)
{
	unsigned kind, np;
	__u64 w;

	if (r->i >= r->n)
		return 0;
	w = r->uw[r->i];
	kind = FRAME_KIND(w);
	np = FRAME_NPAYLOAD(w);
	if (np > FRAME_MAX_PAYLOAD || r->i + np >= r->n)
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	f->pid = r->pid;
	f->ret_addr = FRAME_FLAGS(w) & FRAME_F_RETURN_ADDR;
	switch (kind) {
	case FRAME_NATIVE:
		if (np != 1)
			return -EINVAL;
		f->addr = FRAME_DATA(w);
		f->file = exe_find(sy->em, r->uw[r->i + 1]);
		if (f->file) {
			f->kind = SY_NATIVE;
		} else {
			/* file id 0: a mapping of anonymous code (a JIT's) */
			f->kind = SY_UNKNOWN;
			f->code = r->uw[r->i + 1] ? SY_UNKNOWN_FILE : SY_UNKNOWN_ANON;
		}
		r->i += 2;
		return 1;
	case FRAME_RAW:
		raw_frame(sy, r, FRAME_DATA(w), f);
		r->i += 1 + np;
		return 1;
	case FRAME_ERROR:
		f->kind = SY_ERROR;
		f->code = (uint32_t)FRAME_DATA(w);
		r->i += 1 + np;
		return 1;
	default:
		if (!FRAME_IS_INTERP(kind))
			return -EINVAL;
		f->kind = SY_INTERP;
		f->frame_kind = kind;
		f->interp.kind = kind - FRAME_INTERP_BASE;
		f->interp.flags = FRAME_FLAGS(w);
		f->interp.data = FRAME_DATA(w);
		f->interp.n_payload = np;
		memcpy(f->interp.payload, r->uw + r->i + 1,
		       np * sizeof(*r->uw));
		r->i += 1 + np;
		return 1;
	}
}

const struct pm_mapping *sy_file_mapping(struct symbolizer *sy, uint32_t pid,
					 const struct exe_file *f,
					 uint64_t addr)
{
	return pm_find_file_mapping(pm_find(sy->pm, (pid_t)pid), f, addr);
}

static const char *const unknown_labels[] = {
	[SY_UNKNOWN_FILE] = "[unknown file]",
	[SY_UNKNOWN_PC] = "[unknown]",
	[SY_UNKNOWN_ANON] = "[anon]",
};

uint32_t sy_offcpu_kernel_start(struct symbolizer *sy, const __u64 *words,
				uint32_t n)
{
	const struct ksyms *k = ksyms_async_get(sy->ka);
	uint64_t off;
	uint32_t i;

	for (i = 0; k && i < n && i < SY_OFFCPU_SCAN; i++) {
		const char *s = ksyms_lookup(k, words[i], &off, NULL);

		if (s && !strcmp(s, "__schedule"))
			return i;
	}
	return 0;
}

void sy_name(struct symbolizer *sy, const struct sy_frame *f,
	     struct rep_location *out, struct interp_symbol *buf)
{
	uint64_t off;
	const char *s;

	memset(out, 0, sizeof(*out));
	out->mapping = REP_NONE;
	buf->name[0] = buf->file[0] = 0;
	switch (f->kind) {
	case SY_KERNEL:
		out->kind = FRAME_KERNEL;
		out->address = f->addr;
		s = ksyms_lookup(ksyms_async_get(sy->ka), f->addr, &off, NULL);
		if (s)
			out->function = s;
		else {
			snprintf(buf->name, sizeof(buf->name), "0x%llx",
				 (unsigned long long)f->addr);
			out->function = buf->name;
		}
		break;
	case SY_NATIVE:
		out->kind = FRAME_NATIVE;
		out->address = f->addr;
		/* a return address points after the call: name the call */
		out->function = exe_symbolize(sy->em, f->file,
					      f->addr - (f->ret_addr ? 1 : 0),
					      &off);
		break;
	case SY_UNKNOWN:
		out->kind = FRAME_NATIVE;
		out->address = f->addr;
		out->function = f->code < sizeof(unknown_labels) /
						  sizeof(unknown_labels[0]) &&
						  unknown_labels[f->code] ?
					unknown_labels[f->code] :
					"[unknown]";
		break;
	case SY_ERROR:
		out->kind = FRAME_ERROR;
		snprintf(buf->name, sizeof(buf->name), "[unwind error: %s]",
			 metric_name(f->code));
		out->function = buf->name;
		break;
	case SY_INTERP:
		sy_interp_names(sy, f, out, buf, 1);
		break;
	}
}

int sy_interp_names(struct symbolizer *sy, const struct sy_frame *f,
		    struct rep_location *out, struct interp_symbol *buf,
		    unsigned max)
{
	const struct interp_frame *fi = &f->interp;
	int n = sy->interp ? sy->interp(sy->interp_arg, f->pid, fi, buf, max) :
			     -ENOTSUP;
	int j;

	if (n <= 0) {
		/* unknown: the runtime's name and what the unwinder had */
		snprintf(buf->name, sizeof(buf->name), "[%s 0x%llx]",
			 rep_frame_kind_name(f->frame_kind),
			 (unsigned long long)(fi->n_payload ? fi->payload[0] :
							      fi->data));
		buf->file[0] = 0;
		buf->line = 0;
		buf->address = fi->data;
		n = 1;
	}
	for (j = 0; j < n; j++) {
		memset(&out[j], 0, sizeof(out[j]));
		out[j].mapping = REP_NONE;
		out[j].kind = f->frame_kind;
		out[j].address = buf[j].address;
		out[j].line = buf[j].line;
		out[j].function = buf[j].name;
		out[j].filename = buf[j].file[0] ? buf[j].file : NULL;
		out[j].inl_more = j + 1 < n;
	}
	return n;
}

void sy_get_stats(struct symbolizer *sy, struct sy_stats *out)
{
	*out = sy->st;
}

void sy_set_inline(struct symbolizer *sy, struct inl_cache *c)
{
	sy->inl = c;
}

int sy_inline_frames(struct symbolizer *sy, const struct sy_frame *f,
		     struct dwi_frame *out)
{
	if (!sy->inl || f->kind != SY_NATIVE || !f->file)
		return 0;
	/* a return address points after the call: the call's chain */
	return inl_lookup(sy->inl, f->file, f->addr - (f->ret_addr ? 1 : 0),
			  out);
}
