// SPDX-License-Identifier: Apache-2.0
/* The interpreter manager: the registry of modules and what every module
 * shares (the store, the exe_file's blobs, the BPF map, the counters). */
#include "interp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <sys/uio.h>

#include "elfmap.h"
#include "hashmap.h"
#include "log.h"
#include "store.h"

/* ---- the registry --------------------------------------------------------- */

#define INTERP_DECL_(NAME, name, type) extern const struct interp_module interp_module_##name;
INTERPRETERS(INTERP_DECL_)
#undef INTERP_DECL_

static const struct interp_module *const modules[INTERP_COUNT] = {
#define INTERP_ENTRY_(NAME, name, type) [INTERP_##NAME] = &interp_module_##name,
	INTERPRETERS(INTERP_ENTRY_)
#undef INTERP_ENTRY_
};

/* The names, from the same lines: a descriptor does not repeat them, so
 * it cannot disagree with its registry line. */
static const char *const module_names[INTERP_COUNT] = {
#define INTERP_NAME_(NAME, name, type) [INTERP_##NAME] = #name,
	INTERPRETERS(INTERP_NAME_)
#undef INTERP_NAME_
};

const struct interp_module *interp_module(unsigned kind)
{
	return kind > INTERP_NONE && kind < INTERP_COUNT ? modules[kind] : NULL;
}

const char *interp_name(unsigned kind)
{
	return kind > INTERP_NONE && kind < INTERP_COUNT ? module_names[kind] : NULL;
}

const char *interp_tracer_names(void)
{
	static char buf[256];
	size_t n;
	unsigned k;

	if (buf[0])
		return buf;
	n = (size_t)snprintf(buf, sizeof(buf), "native");
	for (k = 1; k < INTERP_COUNT && n < sizeof(buf); k++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, ", %s",
				      module_names[k]);
	return buf;
}

int interp_parse_tracers(const char *tracers, uint32_t *mask)
{
	const char *p = tracers;
	unsigned k;

	*mask = 0;
	if (!tracers || !strcmp(tracers, "all")) {
		for (k = 1; k < INTERP_COUNT; k++)
			if (!modules[k]->opt_in)
				*mask |= 1u << k;
		return 0;
	}
	while (*p) {
		size_t n = strcspn(p, ",");
		bool known = n == 6 && !strncmp(p, "native", 6); /* always on */

		for (k = 1; k < INTERP_COUNT && !known; k++)
			if (strlen(module_names[k]) == n &&
			    !strncmp(p, module_names[k], n)) {
				*mask |= 1u << k;
				known = true;
			}
		if (n && !known) {
			fprintf(stderr,
				"ebpf-profiler: -tracers: unknown tracer \"%.*s\" "
				"(known: %s)\n",
				(int)n, p, interp_tracer_names());
			return -EINVAL;
		}
		p += n + (p[n] == ',');
	}
	return 0;
}

static const struct interp_module *metric_module(unsigned id, unsigned *i)
{
	unsigned kind;

	if (id < METRIC_CORE_COUNT || id >= METRIC_COUNT)
		return NULL;
	kind = (id - METRIC_CORE_COUNT) / METRIC_INTERP_SLOTS + 1;
	*i = (id - METRIC_CORE_COUNT) % METRIC_INTERP_SLOTS;
	if (*i >= modules[kind]->n_metrics)
		return NULL;
	return modules[kind];
}

const char *interp_metric_name(unsigned id)
{
	unsigned i;
	const struct interp_module *m = metric_module(id, &i);

	return m ? m->metric_names[i] : NULL;
}

const char *interp_metric_help(unsigned id)
{
	unsigned i;
	const struct interp_module *m = metric_module(id, &i);

	return m ? m->metric_help[i] : NULL;
}

/* ---- the manager ---------------------------------------------------------- */

struct interp_mgr {
	struct bpfmaps *bm;
	struct store *store;
	uint32_t mask; /* enabled and usable modules */
	void *state[INTERP_COUNT];
	struct interp_stats st[INTERP_COUNT];
	/* pid -> the runtimes attached in it (a bit per kind) */
	struct hm procs;
	/* libc file id -> its TSD layout (interp_libc_tsd), or 0: none */
	struct hm libc_tsd;
	/* libc file id -> pthread_self's offset (interp_libc_self), or 0 */
	struct hm libc_self;
};

int interp_mgr_new(struct bpfmaps *bm, struct store *store,
		   const char *tracers, struct interp_mgr **out)
{
	struct interp_mgr *im = calloc(1, sizeof(*im));
	unsigned k;
	int err;

	*out = NULL;
	if (!im)
		return -ENOMEM;
	im->bm = bm;
	im->store = store;
	hm_init(&im->procs);
	hm_init(&im->libc_tsd);
	hm_init(&im->libc_self);
	err = interp_parse_tracers(tracers, &im->mask);
	for (k = 1; k < INTERP_COUNT && !err; k++) {
		const struct interp_module *m = modules[k];

		if (!(im->mask & (1u << k)))
			continue;
		if (m->init)
			err = m->init(&im->state[k]);
		if (!err && bm && m->map_name &&
		    bm_bind(bm, BM_INTERP(k), m->map_name, m->map_key_size,
			    m->map_val_size)) {
			log_warn("%s: BPF map %s not found: its frames are not unwound",
				 module_names[k], m->map_name);
			im->mask &= ~(1u << k);
		}
	}
	if (err) {
		interp_mgr_free(im);
		return err;
	}
	*out = im;
	return 0;
}

void interp_mgr_free(struct interp_mgr *im)
{
	unsigned k;

	if (!im)
		return;
	for (k = 1; k < INTERP_COUNT; k++)
		if (im->state[k] && modules[k]->fini)
			modules[k]->fini(im->state[k]);
	hm_free(&im->procs);
	hm_free(&im->libc_tsd);
	hm_free(&im->libc_self);
	free(im);
}

int interp_map_update(struct interp_mgr *im, unsigned kind, const void *key,
		      const void *val)
{
	if (!im->bm)
		return 0;
	int err = bm_update(im->bm, BM_INTERP(kind), key, val);

	if (err) {
		/* a map that allocates as it fills (tracer.c) can also find
		 * the kernel out of memory */
		if (!im->st[kind].map_full++)
			log_warn("%s map %s: %s frames of new processes are not unwound",
				 modules[kind]->map_name,
				 err == -ENOMEM ?
					 "got no kernel memory for a new entry" :
					 "is full",
				 module_names[kind]);
		return -ENOSPC;
	}
	return 0;
}

/* ---- files ---------------------------------------------------------------- */

int interp_record_check(const struct interp_module *m, const void *data,
			size_t len)
{
	uint32_t format;

	if (!data || len != m->record_size || len < sizeof(format))
		return -EINVAL;
	memcpy(&format, data, sizeof(format));
	if (format != m->record_format)
		return -EINVAL;
	return m->check(data);
}

/* A file's blob for one runtime, from the store or detected and stored.
 * Besides the module's record, the store keeps a verdict (struct
 * interp_verdict): "not this runtime", or "this runtime in a version or
 * build not supported" (so the count of those survives a restart).  A
 * verdict names the module and its record format: a build that supports
 * more versions (a new format), or whose registry gives this kind to
 * another runtime (kinds are positions in INTERPRETERS), detects again
 * rather than believe another build's verdict; so does an empty record,
 * the "not this runtime" of builds before verdicts had names.  *cached:
 * answered by the store. */
void interp_verdict(unsigned kind, int err, struct interp_verdict *v)
{
	const struct interp_module *m = modules[kind];

	v->mark = err == -ENOTSUP ? INTERP_VERDICT_UNSUPPORTED :
				    INTERP_VERDICT_NOT_HERE;
	v->format = m->record_format;
	v->name = (uint32_t)XXH3_64bits(module_names[kind],
					strlen(module_names[kind]));
}

/* -ENOTSUP or -ENOENT when data is this build's verdict for module k, 0
 * when it is not a verdict of this build. */
static int cached_verdict(unsigned k, const void *data, size_t len)
{
	struct interp_verdict own;

	if (len != sizeof(own))
		return 0;
	interp_verdict(k, -ENOTSUP, &own);
	if (!memcmp(data, &own, sizeof(own)))
		return -ENOTSUP;
	interp_verdict(k, -ENOENT, &own);
	if (!memcmp(data, &own, sizeof(own)))
		return -ENOENT;
	return 0;
}

/* A file the runtimes are detected in: opened for the first that is not
 * answered by the store, once for all of them. */
struct detect_file {
	struct interp_file f;
	bool tried;
	int open_err;
};

static int run_detect(unsigned k, void *state, struct detect_file *df,
		      void **data, size_t *len)
{
	int err;

	if (!df->tried) {
		df->tried = true;
		df->open_err = elfm_open_fd(df->f.fd, &df->f.elf);
	}
	/* not an ELF file (elfm's answer): no runtime in it */
	if (df->open_err)
		return df->open_err == -ENOEXEC ? -ENOENT : df->open_err;
	err = modules[k]->detect(state, &df->f, data, len);
	/* cut short under the mapping while it was read: what was read
	 * there were zeros, an answer not to keep */
	if ((!err || err == -ENOENT || err == -ENOTSUP) &&
	    elfm_damaged(df->f.elf)) {
		if (!err)
			free(*data);
		*data = NULL;
		err = -EIO;
	}
	return err;
}

static int detect_one(struct interp_mgr *im, unsigned k, const uint8_t id[16],
		      struct detect_file *df, void **data, size_t *len,
		      bool *cached)
{
	const struct interp_module *m = modules[k];
	enum store_kind sk = STORE_KIND_INTERP(k);
	int err;

	*data = NULL;
	*len = 0;
	*cached = false;
	if (im->store && store_get(im->store, id, sk, data, len) == 0) {
		err = cached_verdict(k, *data, *len);
		if (!err)
			err = interp_record_check(m, *data, *len);
		if (!err || err == -ENOTSUP || err == -ENOENT) {
			*cached = true;
			if (err) {
				free(*data);
				*data = NULL;
				*len = 0;
			}
			return err;
		}
		/* a record or verdict this build cannot use: detect again */
		free(*data);
		*data = NULL;
		*len = 0;
	}
	err = run_detect(k, im->state[k], df, data, len);
	if (err == 0 && interp_record_check(m, *data, *len))
		err = -EPROTO;
	if (im->store && (err == -ENOTSUP || err == -ENOENT)) {
		struct interp_verdict v;

		interp_verdict(k, err, &v);
		store_put(im->store, id, sk, &v, sizeof(v));
	} else if (im->store && err == 0) {
		store_put(im->store, id, sk, *data, *len);
	}
	if (err) {
		free(*data);
		*data = NULL;
	}
	return err;
}

unsigned interp_warm(struct interp_mgr *im, const uint8_t id[16],
		     const char *path, int fd)
{
	struct detect_file df = { .f = { .path = path, .fd = fd } };
	unsigned k, found = 0;

	for (k = 1; k < INTERP_COUNT; k++) {
		void *data;
		size_t len;
		bool cached;

		if ((im->mask & (1u << k)) &&
		    detect_one(im, k, id, &df, &data, &len, &cached) == 0) {
			free(data);
			found++;
		}
	}
	elfm_free(df.f.elf);
	return found;
}

void interp_detect(void *arg, struct exe_file *f, int fd)
{
	struct interp_mgr *im = arg;
	struct detect_file df = { .f = { .path = f->path, .fd = fd } };
	unsigned k;

	if (exe_is_vdso(f))
		return;
	for (k = 1; k < INTERP_COUNT; k++) {
		void *data;
		size_t len;
		bool cached;
		int err;

		if (!(im->mask & (1u << k)))
			continue;
		err = detect_one(im, k, f->id.b, &df, &data, &len, &cached);
		if (cached)
			im->st[k].detect_cached++;
		if (err == -ENOTSUP)
			im->st[k].files_unsupported++;
		if (err)
			continue;
		if (exe_set_interp(f, k, data, len)) {
			free(data);
			continue;
		}
		im->st[k].files++;
		log_info("file %s: %s runtime", f->path, module_names[k]);
	}
	elfm_free(df.f.elf);
}

/* ---- processes ------------------------------------------------------------ */

static uint32_t attached(struct interp_mgr *im, pid_t pid)
{
	uint64_t v = 0;

	hm_get(&im->procs, (uint64_t)pid, &v);
	return (uint32_t)v;
}

/* Detach runtime k from pid; returns the runtimes left. */
static uint32_t detach_kind(struct interp_mgr *im, pid_t pid, uint32_t mask,
			    unsigned k)
{
	uint32_t key = (uint32_t)pid;

	if (!(mask & (1u << k)))
		return mask;
	if (modules[k]->detach)
		modules[k]->detach(im->state[k], pid);
	if (im->bm && modules[k]->map_name)
		bm_remove(im->bm, BM_INTERP(k), &key);
	im->st[k].procs--;
	return mask & ~(1u << k);
}

/* The files of p holding runtime k, one entry per file (its first
 * executable mapping). */
static unsigned files_of(const struct pm_proc *p, unsigned k,
			 struct interp_file_map *out, unsigned max)
{
	unsigned n = 0, j;
	uint32_t i;

	for (i = 0; i < p->n_maps && n < max; i++) {
		const struct pm_mapping *m = &p->maps[i];
		size_t len = 0;
		const void *data = m->file ? exe_interp_data(m->file, k, &len) :
					     NULL;

		if (!data)
			continue;
		for (j = 0; j < n && out[j].map->file != m->file; j++)
			;
		if (j < n)
			continue;
		out[n++] = (struct interp_file_map){ .data = data, .len = len,
						     .bias = m->bias, .map = m };
	}
	return n;
}

/* Files of one runtime a process may map (a program embedding two
 * copies is rare; more are ignored). */
#define ATTACH_FILES_MAX 8

void interp_synced(void *arg, struct pm_proc *p)
{
	struct interp_mgr *im = arg;
	struct interp_file_map files[ATTACH_FILES_MAX];
	uint32_t mask = attached(im, p->pid), before = mask;
	unsigned k;

	for (k = 1; k < INTERP_COUNT; k++) {
		struct interp_attach at = { .pid = p->pid, .proc = p,
					    .files = files };

		if (!(im->mask & (1u << k)))
			continue;
		at.n_files = (p->interp_mask & (1u << k)) ?
				     files_of(p, k, files, ATTACH_FILES_MAX) : 0;
		if (!at.n_files) {
			mask = detach_kind(im, p->pid, mask, k);
			continue;
		}
		/* a resync replaces the process' entry: counted once */
		if (modules[k]->attach(im->state[k], im, &at)) {
			im->st[k].attach_errors++;
			/* what the refused attach kept (a resync's too) */
			if (!(mask & (1u << k)) && modules[k]->detach)
				modules[k]->detach(im->state[k], p->pid);
			mask = detach_kind(im, p->pid, mask, k);
			continue;
		}
		if (!(mask & (1u << k))) {
			mask |= 1u << k;
			im->st[k].procs++;
		}
	}
	if (mask == before)
		return;
	if (!mask)
		hm_del(&im->procs, (uint64_t)p->pid);
	else if (hm_put(&im->procs, (uint64_t)p->pid, mask))
		/* no memory to remember it: undo, so counts stay true */
		for (k = 1; k < INTERP_COUNT; k++)
			mask = detach_kind(im, p->pid, mask, k);
}

void interp_forget(void *arg, pid_t pid)
{
	struct interp_mgr *im = arg;
	uint32_t mask = attached(im, pid);
	unsigned k;

	if (!mask)
		return;
	for (k = 1; k < INTERP_COUNT; k++)
		mask = detach_kind(im, pid, mask, k);
	hm_del(&im->procs, (uint64_t)pid);
}

/* ---- frames --------------------------------------------------------------- */

int interp_symbolize(void *arg, uint32_t pid, const struct interp_frame *f,
		     struct interp_symbol *out, unsigned max)
{
	struct interp_mgr *im = arg;
	unsigned k = f->kind, i;
	int n;

	if (!max)
		return -EINVAL;
	if (max > INTERP_CHAIN_MAX)
		max = INTERP_CHAIN_MAX;
	for (i = 0; i < max; i++) {
		out[i].name[0] = out[i].file[0] = 0;
		out[i].line = 0;
		out[i].address = f->data;
	}
	if (!interp_module(k) || !(im->mask & (1u << k)))
		return -ENOTSUP;
	n = modules[k]->symbolize(im->state[k], (pid_t)pid, f, out, max);
	if (n > (int)max)
		n = -EOVERFLOW; /* a module's bug: not trusted */
	if (n <= 0) {
		im->st[k].symbolize_fail++;
		return n ? n : -EINVAL;
	}
	im->st[k].symbolize_ok++;
	return n;
}

void interp_get_stats(struct interp_mgr *im, unsigned kind,
		      struct interp_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (im && interp_module(kind))
		*out = im->st[kind];
}

/* ---- for modules ------------------------------------------------------------ */

/* glibc 2.26+ pthread_getspecific, first-level keys (x86-64):
 *   cmp $0x1f,%edi; ja; mov %edi,%eax; add $A,%rax; shl $S,%rax;
 *   add %fs:0x10,%rax; mov V(%rax),%rdx
 * so the value is at tp + (A << S) + (key << S) + V. */
static int tsd_from_code_x86(const uint8_t *c, size_t n,
			     struct interp_tsd *out)
{
	static const uint8_t fs_self[] = { 0x64, 0x48, 0x03, 0x04, 0x25,
					   0x10, 0x00, 0x00, 0x00 };
	size_t i;
	int a = -1, sh = -1;

	for (i = 0; i + 4 <= n; i++) {
		if (c[i] == 0x48 && c[i + 1] == 0x83 && c[i + 2] == 0xc0 && a < 0)
			a = c[i + 3];
		else if (c[i] == 0x48 && c[i + 1] == 0xc1 && c[i + 2] == 0xe0 &&
			 a >= 0 && sh < 0)
			sh = c[i + 3];
		else if (sh >= 0 && i + sizeof(fs_self) + 4 <= n &&
			 !memcmp(c + i, fs_self, sizeof(fs_self))) {
			const uint8_t *m = c + i + sizeof(fs_self);

			/* mov disp8(%rax),%rdx or %rax */
			if (m[0] != 0x48 || m[1] != 0x8b ||
			    (m[2] != 0x50 && m[2] != 0x40) || sh > 8)
				return -ENOENT;
			out->off = (int16_t)(a << sh);
			out->mul = (uint16_t)(1u << sh);
			out->val = m[3];
			return out->off && out->mul ? 0 : -ENOENT;
		}
	}
	return -ENOENT;
}

/* AArch64 instruction fields. */
#define A64_RD(w) ((w)&31)
#define A64_RN(w) (((w) >> 5) & 31)
/* mrs xD, tpidr_el0 */
#define A64_IS_MRS_TP(w) (((w) & ~31u) == 0xd53bd040u)
/* add/sub xD, xN, #imm{, lsl #12} (64-bit, flags untouched) */
#define A64_IS_ADDSUB_IMM(w) (((w)&0xbf800000u) == 0x91000000u)

/* An add/sub immediate's signed value. */
static int64_t a64_addsub_imm(uint32_t w)
{
	int64_t imm = (int64_t)((w >> 10) & 0xfff) << (((w >> 22) & 1) ? 12 : 0);

	return (w & 0x40000000u) ? -imm : imm;
}

static uint32_t a64_word(const uint8_t *c)
{
	return (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 |
	       (uint32_t)c[3] << 24;
}

/* glibc 2.34+ pthread_getspecific, first-level keys (AArch64):
 *   cmp w0, #0x1f; b.hi; ubfiz xK, xkey, #S, #32; mrs xT, tpidr_el0;
 *   sub xK, xK, #A; add xT, xT, xK; ldr x0, [xT, #V]
 * so the value is at tp - A + (key << S) + V. */
static int tsd_from_code_a64(const uint8_t *c, size_t n,
			     struct interp_tsd *out)
{
	int64_t off = 0;
	int sh = -1;
	bool tp = false, have_off = false;
	size_t i;

	for (i = 0; i + 4 <= n; i += 4) {
		uint32_t w = a64_word(c + i);

		/* ubfiz = ubfm xD, xN, #(64 - S), #31 */
		if ((w & 0xffc0fc00u) == 0xd3407c00u && sh < 0)
			sh = 64 - (int)((w >> 16) & 63);
		else if (A64_IS_MRS_TP(w))
			tp = true;
		else if (A64_IS_ADDSUB_IMM(w) && sh >= 0 && !have_off) {
			off = a64_addsub_imm(w);
			have_off = true;
		} else if ((w & 0xffc00000u) == 0xf9400000u && tp && have_off &&
			   sh >= 0) {
			/* ldr xT, [xN, #V]: the first load is the value's */
			if (sh > 8 || off < INT16_MIN || off > INT16_MAX)
				return -ENOENT;
			out->off = (int16_t)off;
			out->mul = (uint16_t)(1u << sh);
			out->val = (uint16_t)(((w >> 10) & 0xfff) * 8);
			return out->off && out->mul ? 0 : -ENOENT;
		}
	}
	return -ENOENT;
}

/*
 * pthread_self() minus the thread pointer.  x86-64 (TLS variant II): the
 * TCB's self pointer, which is the thread pointer (glibc: mov %fs:0x10,
 * %rax; musl: mov %fs:0,%rax): 0.  AArch64 (variant I): struct pthread
 * lies just below TPIDR_EL0 (mrs x0, tpidr_el0; sub x0, x0, #size).
 */
static int self_from_code(uint16_t machine, const uint8_t *c, size_t n,
			  void *outp)
{
	int32_t *out = outp;
	static const uint8_t x86_self[] = { 0x64, 0x48, 0x8b, 0x04, 0x25 };
	uint32_t w0, w1;

	if (machine == EM_X86_64) {
		if (n < 9 || memcmp(c, x86_self, sizeof(x86_self)))
			return -ENOENT;
		*out = 0;
		return 0;
	}
	if (machine != EM_AARCH64 || n < 8)
		return -ENOENT;
	w0 = a64_word(c);
	w1 = a64_word(c + 4);
	if (!A64_IS_MRS_TP(w0) || !A64_IS_ADDSUB_IMM(w1) ||
	    A64_RN(w1) != A64_RD(w0) || A64_RD(w1) != 0)
		return -ENOENT;
	*out = (int32_t)a64_addsub_imm(w1);
	return 0;
}

/* The code of the first of names (two) that e defines, up to 256 bytes. */
static int libc_func(const struct elfm *e, const char *const *names,
		     const uint8_t **code, size_t *len)
{
	uint64_t value[2] = { 0 }, size[2] = { 0 };
	size_t avail;
	int k;

	elfm_find_syms(e, names, 2, value, size);
	k = size[0] ? 0 : 1;
	if (!size[k] || size[k] > 256 ||
	    elfm_vaddr_bytes(e, value[k], size[k], code, &avail))
		return -ENOENT;
	*len = size[k];
	return 0;
}

/* Decode the first of names (two) that the libc open as fd defines with
 * decode (given the file's machine).  0 or a negative errno. */
static int libc_decode(int fd, const char *const *names,
		       int (*decode)(uint16_t machine, const uint8_t *c,
				     size_t n, void *out),
		       void *out)
{
	const uint8_t *code;
	struct elfm *e;
	size_t n;
	int err;

	err = elfm_open_fd(fd, &e);
	if (err)
		return err;
	err = libc_func(e, names, &code, &n);
	if (!err)
		err = decode(elfm_ehdr(e)->e_machine, code, n, out);
	/* a libc cut short while read: the code was zeros */
	return elfm_release(e, err);
}

static int tsd_from_code(uint16_t machine, const uint8_t *c, size_t n,
			 void *out)
{
	return machine == EM_AARCH64 ? tsd_from_code_a64(c, n, out) :
				       tsd_from_code_x86(c, n, out);
}

int interp_tsd_of_fd(int fd, struct interp_tsd *out)
{
	static const char *const names[] = { "pthread_getspecific",
					     "__pthread_getspecific" };

	return libc_decode(fd, names, tsd_from_code, out);
}

int interp_self_off_of_fd(int fd, int32_t *out)
{
	static const char *const names[] = { "pthread_self", "__pthread_self" };

	return libc_decode(fd, names, self_from_code, out);
}

/* The libc the process maps, or NULL (also when there is no process:
 * an attach replayed from a stored record). */
static const struct exe_file *proc_libc(const struct pm_proc *p)
{
	uint32_t i;

	if (!p)
		return NULL;
	for (i = 0; i < p->n_maps; i++) {
		const struct exe_file *f = p->maps[i].file;

		if (f && f->name && !strncmp(f->name, "libc.so", 7))
			return f;
	}
	return NULL;
}

/* What decode reads from libc file f, cached in m by its id: bit 63 set
 * when found, 0 when not.  Bounded: libc files on a host are few; a full
 * cache only means reading the code again.  Not kept: a file cut short
 * while read, or memory short (the answer may differ next time). */
static uint64_t libc_cached(struct hm *m, const struct exe_file *f,
			    int (*decode)(int fd, uint64_t *v))
{
	uint64_t v;
	int err;

	if (!hm_get(m, f->id64, &v)) {
		err = decode(exe_fd(f), &v);
		if (err)
			v = 0;
		if (m->count < 256 && err != -EIO && err != -ENOMEM)
			hm_put(m, f->id64, v);
	}
	return v;
}

static int tsd_word(int fd, uint64_t *v)
{
	struct interp_tsd t;
	int err = interp_tsd_of_fd(fd, &t);

	if (!err)
		*v = (uint64_t)(uint16_t)t.off | (uint64_t)t.mul << 16 |
		     (uint64_t)t.val << 32 | 1ULL << 63;
	return err;
}

static int self_word(int fd, uint64_t *v)
{
	int32_t off;
	int err = interp_self_off_of_fd(fd, &off);

	if (!err)
		*v = (uint64_t)(uint32_t)off | 1ULL << 63;
	return err;
}

int interp_libc_tsd(struct interp_mgr *im, const struct pm_proc *p,
		    struct interp_tsd *out)
{
	const struct exe_file *f = proc_libc(p);
	uint64_t v = f ? libc_cached(&im->libc_tsd, f, tsd_word) : 0;

	if (!v)
		return -ENOENT;
	out->off = (int16_t)(uint16_t)v;
	out->mul = (uint16_t)(v >> 16);
	out->val = (uint16_t)(v >> 32);
	return 0;
}

int interp_libc_self(struct interp_mgr *im, const struct pm_proc *p,
		     int32_t *out)
{
	const struct exe_file *f = proc_libc(p);
	uint64_t v = f ? libc_cached(&im->libc_self, f, self_word) : 0;

	if (!v)
		return -ENOENT;
	*out = (int32_t)(uint32_t)v;
	return 0;
}

int interp_read_process(void *arg, pid_t pid, uint64_t addr, void *buf,
			size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	(void)arg;
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The slot holding page pg (a page address), read in if it is not there:
 * NULL when it cannot be read whole. */
static const uint8_t *paged_page(struct interp_pages *c, uint64_t pg)
{
	unsigned i = c->next;

	for (unsigned k = 0; k < INTERP_PAGES; k++)
		if (c->addr[k] == pg + 1)
			return c->data[k];
	c->misses++;
	if (c->read(c->arg, c->pid, pg, c->data[i], INTERP_PAGE_SIZE))
		return NULL;
	c->addr[i] = pg + 1;
	c->next = (i + 1) % INTERP_PAGES;
	return c->data[i];
}

int interp_read_paged(void *arg, pid_t pid, uint64_t addr, void *buf,
		      size_t len)
{
	struct interp_pages *c = arg;
	uint8_t *out = buf;
	size_t done = 0;

	c->reads++;
	if (pid != c->pid || addr + len < addr)
		return c->read(c->arg, pid, addr, buf, len);
	while (done < len) {
		uint64_t a = addr + done, pg = a & ~(uint64_t)(INTERP_PAGE_SIZE - 1);
		size_t off = a - pg, n = INTERP_PAGE_SIZE - off;
		const uint8_t *p = paged_page(c, pg);

		if (!p) /* part of it may still be readable */
			return c->read(c->arg, pid, addr, buf, len);
		if (n > len - done)
			n = len - done;
		memcpy(out + done, p + off, n);
		done += n;
	}
	return 0;
}

int interp_read_cstr(const struct interp_reader *r, uint64_t addr, char *out,
		     size_t n)
{
	size_t got = 0, chunk = INTERP_CSTR_CHUNK;
	char *end;

	out[0] = 0;
	if (!addr)
		return -EFAULT;
	while (got + 1 < n) {
		if (chunk > n - 1 - got)
			chunk = n - 1 - got;
		if (interp_rd(r, addr + got, out + got, chunk)) {
			/* the chunk runs into unmapped memory: a smaller
			 * one may still hold the NUL */
			out[got] = 0;
			if (chunk == 1)
				return -EFAULT;
			chunk /= 2;
			continue;
		}
		out[got + chunk] = 0;
		end = memchr(out + got, 0, chunk);
		if (end)
			return (int)(end - out);
		got += chunk;
	}
	return -ENAMETOOLONG;
}

const void *interp_version_row(const void *rows, size_t n, size_t size,
			       unsigned major, unsigned minor)
{
	const uint8_t *row = rows;
	struct interp_version_key k;
	size_t i;

	for (i = 0; i < n; i++, row += size) {
		memcpy(&k, row, sizeof(k));
		if (k.major == major && k.minor == minor)
			return row;
	}
	return NULL;
}

int interp_procs_init(void **state)
{
	struct hm *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	hm_init(m);
	*state = m;
	return 0;
}

void interp_procs_fini(void *state)
{
	hm_free(state);
	free(state);
}

void interp_procs_detach(void *state, pid_t pid)
{
	hm_del(state, (uint64_t)pid);
}

int interp_procs_put(void *state, pid_t pid, uint64_t word)
{
	struct hm *m = state;
	bool added;
	uint64_t *slot = hm_slot(m, (uint64_t)pid, &added);

	if (!slot)
		return m->count >= INTERP_PROCS_MAX ? -ENOSPC : -ENOMEM;
	if (added && m->count > INTERP_PROCS_MAX) {
		hm_del(m, (uint64_t)pid);
		return -ENOSPC;
	}
	*slot = word;
	return 0;
}

bool interp_procs_get(void *state, pid_t pid, uint64_t *word)
{
	return hm_get(state, (uint64_t)pid, word);
}
