// SPDX-License-Identifier: Apache-2.0
/*
 * Perl's module (the walk: bpf/perl.h).  Detection, per file: the
 * interpreter's symbols (Perl_runops_standard: the perl binary, or
 * libperl; PL_curcop and PL_curstackinfo in a non-threaded build, else
 * PL_curinterp), its version from the
 * PL_revision, PL_version and PL_subversion bytes, the structure offsets
 * of that version and build.  Names,
 * per frame, from the process: the sub's name and package from its CV,
 * whether the CV has a glob (GV) or is a "named" CV without one (every
 * sub defined before its first call, on 5.36), the file and line from
 * the frame's COP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfmap.h"
#include "interp.h"
#include "interp_perl.h"
#include "log.h"
#include "perl.h"


/*
 * Offsets per version and build, from each version's headers: the
 * compiler's layout, by tests/tools/interp_offsets.sh (its output,
 * tests/tools/perl_offsets.txt, is what the unit tests check this table
 * against).  5.36 threaded is Debian 12's, each offset also checked on a
 * live process.  From 5.30 to 5.40 what moves is the interpreter's
 * curcop (5.34 packs the variables before it tighter), blk_sub.cv and
 * the context's size (5.32: block_sub's old_cxsubix), si_type (5.32:
 * si_cxsubix), and the stash's aux struct, in the HV body from 5.36
 * (after the bucket array before).
 * A non-threaded build has the same structures but for the interpreter
 * (its variables are globals) and COP's file (a GV, "_<file").
 */
#define PERL_COMMON                                                            \
	.walk.si_cxstack = 0x08, .walk.si_prev = 0x10, .walk.si_cxix = 0x20,  \
	.walk.cx_oldcop = 0x10, .walk.cop_line = 0x24, .cop_file = 0x30,     \
	.cv_stash = 0x20, .cv_gv = 0x38, .cv_flags = 0x5c, .gv_gp = 0x10,    \
	.gp_egv = 0x38, .gv_namehek = 0x20, .gv_stash = 0x28, .hv_max = 0x18, \
	.hv_array = 0x10, .aux_name = 0, .aux_name_count = 0x1c
#define PERL_VERSION(v, curcop, sitype, cxsize, cxcv, aux)                     \
	{ v, true,                                                             \
	  { PERL_COMMON, .walk.i_curcop = curcop,                             \
	    .walk.i_curstackinfo = curcop + 0x10, .walk.si_type = sitype,     \
	    .walk.cx_size = cxsize, .walk.cx_cv = cxcv, .hv_aux = aux } },    \
	{ v, false,                                                            \
	  { PERL_COMMON, .cop_file_gv = 1, .walk.si_type = sitype,            \
	    .walk.cx_size = cxsize, .walk.cx_cv = cxcv, .hv_aux = aux } }

static const struct perl_layout {
	uint8_t version;
	bool threaded;
	struct perl_offsets o;
} layouts[] = {
	PERL_VERSION(30, 0xe0, 0x28, 0x60, 0x40, 0),
	PERL_VERSION(32, 0xe0, 0x2c, 0x68, 0x48, 0),
	PERL_VERSION(34, 0xd0, 0x2c, 0x68, 0x48, 0),
	PERL_VERSION(36, 0xd0, 0x2c, 0x68, 0x48, 0x20),
	PERL_VERSION(38, 0xd0, 0x2c, 0x68, 0x48, 0x20),
	PERL_VERSION(40, 0xd0, 0x2c, 0x68, 0x48, 0x20),
};

const struct perl_offsets *perl_offsets_of(unsigned revision,
					   unsigned version, bool threaded)
{
	size_t i;

	if (revision != 5)
		return NULL;
	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == version &&
		    layouts[i].threaded == threaded)
			return &layouts[i].o;
	return NULL;
}

static int perl_detect(void *state, const struct interp_file *file,
		       void **data, size_t *len)
{
	static const char *const names[] = {
		"Perl_runops_standard", "PL_curinterp",	  "PL_revision",
		"PL_version",		"PL_subversion",  "PL_thr_key",
		"PL_curcop",		"PL_curstackinfo"
	};
	uint64_t value[8] = { 0 }, size[8] = { 0 };
	const uint8_t *b[3];
	struct perl_info *info;
	size_t avail;
	bool threaded;
	int i;

	(void)state;
	elfm_find_syms(file->elf, names, 8, value, size);
	if (!size[0] || !size[2] || !size[3])
		return -ENOENT; /* no Perl interpreter */
	for (i = 0; i < 3; i++)
		if (elfm_vaddr_bytes(file->elf, value[2 + i], 1, &b[i], &avail))
			return -ENOENT;
	/* non-threaded: the interpreter's variables are globals (a
	 * PL_curinterp is there too, unused); threaded: they are in the
	 * struct of PL_curinterp, or of a TSD slot */
	threaded = !size[6] || !size[7];
	if ((threaded && !size[1]) || !perl_offsets_of(*b[0], *b[1], threaded))
		return -ENOTSUP; /* a version whose offsets are not known */
	info = calloc(1, sizeof(*info));
	if (!info)
		return -ENOMEM;
	*info = (struct perl_info){ .format = PERL_INFO_FORMAT,
				    .revision = *b[0], .version = *b[1],
				    .subversion = *b[2], .threaded = threaded,
				    .interp = threaded ? value[1] : 0,
				    .thr_key = threaded && size[5] ? value[5] : 0,
				    .curcop = threaded ? 0 : value[6],
				    .curstackinfo = threaded ? 0 : value[7],
				    .loop_lo = value[0],
				    .loop_hi = value[0] + size[0] };
	*data = info;
	*len = sizeof(*info);
	return 0;
}

static int perl_check(const void *record)
{
	const struct perl_info *info = record;

	if (info->loop_hi <= info->loop_lo || info->threaded > 1 ||
	    !perl_offsets_of(info->revision, info->version, info->threaded) ||
	    (info->threaded ? !info->interp :
			      !info->curcop || !info->curstackinfo))
		return -EINVAL;
	return 0;
}

static int perl_attach(void *state, struct interp_mgr *im,
		       const struct interp_attach *a)
{
	const struct perl_info *info = a->files[0].data;
	const struct perl_offsets *o =
		perl_offsets_of(info->revision, info->version, info->threaded);
	uint64_t bias = a->files[0].bias;
	uint32_t key = (uint32_t)a->pid;
	struct perl_proc pp = {
		.interp = info->threaded ? info->interp + bias : 0,
		.thr_key = info->thr_key ? info->thr_key + bias : 0,
		.g_curcop = info->threaded ? 0 : info->curcop + bias,
		.g_curstackinfo = info->threaded ? 0 : info->curstackinfo + bias,
		.loop_lo = info->loop_lo + bias,
		.loop_hi = info->loop_hi + bias,
		.walk = o->walk,
	};
	struct interp_tsd tsd;
	int err;

	/* the thread's interpreter through its TSD slot, as this process'
	 * glibc keeps it; else PL_curinterp, the main thread only */
	if (pp.thr_key && interp_libc_tsd(im, a->proc, &tsd) == 0) {
		pp.tsd_off = tsd.off;
		pp.tsd_mul = tsd.mul;
		pp.tsd_val = tsd.val;
	}
	/* the version and build, for the names' offsets */
	err = interp_procs_put(state, a->pid,
			       info->version | (uint64_t)info->threaded << 8);
	if (err)
		return err;
	return interp_map_update(im, INTERP_PERL, &key, &pp);
}

/* ---- names ---------------------------------------------------------------- */

/* A HEK's key (len at +4, key at +8) into out; false when unreadable. */
static bool read_hek(const struct interp_reader *r, uint64_t hek, char *out,
		     size_t n)
{
	int32_t len = 0;

	out[0] = 0;
	if (!hek || interp_rd(r, hek + PERL_HEK_LEN, &len, 4) || len < 0 ||
	    len > (1 << 16))
		return false;
	if ((size_t)len >= n)
		len = (int32_t)n - 1;
	if (interp_rd(r, hek + PERL_HEK_KEY, out, (size_t)len))
		return false;
	out[len] = 0;
	return strlen(out) == (size_t)len;
}

/* A stash's name: the HEK in its aux struct (HvAUX: in the body from
 * 5.36, after the bucket array before), or the first of its names when
 * it has several. */
static bool stash_name(const struct interp_reader *r, const struct perl_offsets *o,
		       uint64_t hv, char *out, size_t n)
{
	uint32_t flags = 0;
	int32_t count = 0;
	uint64_t body, max, array, aux, name;

	out[0] = 0;
	if (!hv || interp_rd(r, hv + PERL_SV_FLAGS, &flags, 4) ||
	    !(flags & PERL_SVF_OOK))
		return false;
	body = interp_rd64(r, hv);
	if (!body)
		return false;
	if (o->hv_aux) {
		aux = body + o->hv_aux;
	} else {
		max = interp_rd64(r, body + o->hv_max);
		array = interp_rd64(r, hv + o->hv_array);
		if (!array || max > (1u << 24))
			return false;
		aux = array + (max + 1) * 8;
	}
	name = interp_rd64(r, aux + o->aux_name);
	if (interp_rd(r, aux + o->aux_name_count, &count, 4))
		return false;
	if (count) /* a list of names: the first that is set */
		name = interp_rd64(r, name) ?: interp_rd64(r, name + 8);
	return read_hek(r, name, out, n);
}


/* A non-threaded COP's file: its GV's name, "_<" and the file. */
static void cop_file_of_gv(const struct interp_reader *r,
			   const struct perl_offsets *o, uint64_t gv, char *out,
			   size_t n)
{
	uint64_t body = gv ? interp_rd64(r, gv) : 0;
	char name[sizeof(((struct interp_symbol *)0)->file) + 2];
	const char *f;
	size_t len;

	out[0] = 0;
	if (!body || !read_hek(r, interp_rd64(r, body + o->gv_namehek), name,
			       sizeof(name)))
		return;
	f = name[0] == '_' && name[1] == '<' ? name + 2 : name;
	len = strnlen(f, n - 1);
	memcpy(out, f, len);
	out[len] = 0;
}

int perl_frame_name(interp_read_fn read, void *arg, pid_t pid,
		    const struct perl_offsets *o, const struct interp_frame *f,
		    struct interp_symbol *out)
{
	const struct interp_reader r = { read, arg, pid };
	uint64_t cv = f->n_payload > 0 ? f->payload[0] : 0;
	uint64_t cop = f->n_payload > 1 ? f->payload[1] : 0;
	uint64_t body, gv, stash = 0, file;
	uint32_t flags = 0;
	char sub[128], pkg[128];

	out->name[0] = out->file[0] = 0;
	out->line = (uint32_t)f->data;
	file = cop ? interp_rd64(&r, cop + o->cop_file) : 0;
	if (o->cop_file_gv)
		cop_file_of_gv(&r, o, file, out->file, sizeof(out->file));
	else
		interp_read_cstr(&r, file, out->file, sizeof(out->file));
	if (cv == 0) {
		snprintf(out->name, sizeof(out->name), "main");
		return 0;
	}
	if (cv == 1) {
		snprintf(out->name, sizeof(out->name), "(eval)");
		return 0;
	}
	body = interp_rd64(&r, cv);
	if (!body || interp_rd(&r, body + o->cv_flags, &flags, 4))
		return -EFAULT;
	gv = interp_rd64(&r, body + o->cv_gv);
	if (flags & PERL_CVF_NAMED) {
		/* no glob: the name is a HEK in the CV itself */
		if (!read_hek(&r, gv, sub, sizeof(sub)))
			return -EFAULT;
		stash = interp_rd64(&r, body + o->cv_stash);
	} else {
		uint64_t gp = gv ? interp_rd64(&r, gv + o->gv_gp) : 0;
		uint64_t egv = gp ? interp_rd64(&r, gp + o->gp_egv) : 0;
		uint64_t gbody = interp_rd64(&r, egv ? egv : gv);

		if (!gbody ||
		    !read_hek(&r, interp_rd64(&r, gbody + o->gv_namehek), sub,
			      sizeof(sub)))
			return -EFAULT;
		stash = interp_rd64(&r, gbody + o->gv_stash);
	}
	if (stash_name(&r, o, stash, pkg, sizeof(pkg)))
		snprintf(out->name, sizeof(out->name), "%s::%s", pkg, sub);
	else
		snprintf(out->name, sizeof(out->name), "%s", sub);
	return 0;
}

static int perl_symbolize(void *state, pid_t pid, const struct interp_frame *f,
			  struct interp_symbol *out, unsigned max)
{
	const struct perl_offsets *o;
	uint64_t word;
	int err;

	(void)max; /* one function a frame: nothing inlined */
	if (!interp_procs_get(state, pid, &word))
		return -ESRCH;
	o = perl_offsets_of(5, (unsigned)(word & 0xff), (word >> 8) & 1);
	if (!o)
		return -ESRCH;
	err = perl_frame_name(interp_read_process, NULL, pid, o, f, out);
	return err ? err : 1;
}

const struct interp_module interp_module_perl = {
	INTERP_MODULE_METRICS(PERL_METRICS),
	INTERP_MODULE_DATA(perl, struct perl_info, PERL_INFO_FORMAT),
	INTERP_MODULE_FUNCS(perl, interp_procs),
};
