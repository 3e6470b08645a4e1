// SPDX-License-Identifier: Apache-2.0
/*
 * Ruby's module (the walk: bpf/ruby.h): per process the BPF map's entry
 * (the way to the execution context, rb_vm_exec, the offsets of the
 * version) and the names of its frames.  What a file holds is found by
 * interp_ruby_detect.c, frames are named from memory by
 * interp_ruby_names.c; this file keeps the processes, the files' records
 * and symbols (for the names of C functions) and the module's table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "interp.h"
#include "interp_ruby_int.h"
#include "log.h"
#include "ruby.h"
#include "symbols.h"

/* rb_execution_context_t and rb_control_frame_t: the same 2.7 to 3.4 */
#define EC_VM_STACK 0
#define EC_VM_STACK_SIZE 8
#define EC_CFP 16
#define CFP_PC 0
#define CFP_ISEQ 16
#define CFP_EP 32

/* ---- module state: processes and the files' symbols ---------------------- */

/*
 * Per process one word: the file slot (bits 56..63) and libruby's load
 * bias.  Per file (up to RUBY_FILES_MAX, kept until the module ends):
 * its record and its symbols, for the names of C functions.
 */
#define RUBY_FILES_MAX 16
struct ruby_file {
	struct ruby_info info;
	struct symb_table *syms;
	bool used;
};

struct ruby_state {
	void *procs; /* interp_procs_*: pid -> file slot and bias */
	void *ids;   /* interp_procs_*: pid -> the class-naming IDs, once
		      * looked up (classpath << 32 | attached; 0: not found) */
	struct ruby_file files[RUBY_FILES_MAX];
};

static int ruby_init(void **state)
{
	struct ruby_state *rs = calloc(1, sizeof(*rs));
	int err;

	if (!rs)
		return -ENOMEM;
	err = interp_procs_init(&rs->procs);
	if (!err) {
		err = interp_procs_init(&rs->ids);
		if (err)
			interp_procs_fini(rs->procs);
	}
	if (err) {
		free(rs);
		return err;
	}
	*state = rs;
	return 0;
}

static void ruby_fini(void *state)
{
	struct ruby_state *rs = state;
	unsigned i;

	if (!rs)
		return;
	for (i = 0; i < RUBY_FILES_MAX; i++)
		symb_free(rs->files[i].syms);
	interp_procs_fini(rs->procs);
	interp_procs_fini(rs->ids);
	free(rs);
}

static void ruby_detach(void *state, pid_t pid)
{
	struct ruby_state *rs = state;

	interp_procs_detach(rs->procs, pid);
	interp_procs_detach(rs->ids, pid);
}

/* The slot of a file's record (the same record: the same build), -ENOSPC
 * when all are taken by others. */
static int file_slot(struct ruby_state *rs, const struct ruby_info *info,
		     const struct pm_mapping *map)
{
	unsigned i;

	for (i = 0; i < RUBY_FILES_MAX; i++)
		if (rs->files[i].used &&
		    !memcmp(&rs->files[i].info, info, sizeof(*info)))
			return (int)i;
	for (i = 0; i < RUBY_FILES_MAX; i++) {
		struct ruby_file *f = &rs->files[i];

		if (f->used)
			continue;
		f->info = *info;
		f->used = true;
		if (map && map->file && symb_load_fd(exe_fd(map->file), &f->syms))
			f->syms = NULL;
		return (int)i;
	}
	return -ENOSPC;
}

static int ruby_attach(void *state, struct interp_mgr *im,
		       const struct interp_attach *a)
{
	struct ruby_state *rs = state;
	const struct ruby_info *info = a->files[0].data;
	const struct ruby_layout *l = ruby_layout_of(info->major, info->minor);
	uint64_t bias = a->files[0].bias;
	uint32_t key = (uint32_t)a->pid;
	struct ruby_proc rp = {
		.ec_mode = info->ec_mode,
		.ec_off = info->ec_off,
		.vm_ptr = info->vm_ptr ? info->vm_ptr + bias : 0,
		.loop_lo = info->loop_lo + bias,
		.loop_hi = info->loop_hi + bias,
		.ec_vm_stack = EC_VM_STACK,
		.ec_vm_stack_size = EC_VM_STACK_SIZE,
		.ec_cfp = EC_CFP,
		.cfp_size = l->cfp_size,
		.cfp_pc = CFP_PC,
		.cfp_iseq = CFP_ISEQ,
		.cfp_ep = CFP_EP,
		.vm_main_thread = l->vm_main_thread,
		.th_ec = l->th_ec,
		.yjit = l->yjit,
	};
	int slot, err;

	if (a->files[0].map) {
		rp.text_lo = a->files[0].map->start;
		rp.text_hi = a->files[0].map->end;
	}
	if (info->ec_mode == RUBY_EC_DTV || info->ec_mode == RUBY_EC_TPOFF ||
	    info->ec_mode == RUBY_EC_TLSDESC || info->ec_mode == RUBY_EC_GLOBAL)
		rp.ec_addr = info->ec_addr + bias;
	if (bias >> 56)
		return -ERANGE;
	slot = file_slot(rs, info, a->files[0].map);
	if (slot < 0)
		return slot;
	err = interp_procs_put(rs->procs, a->pid, (uint64_t)slot << 56 | bias);
	if (err)
		return err;
	return interp_map_update(im, INTERP_RUBY, &key, &rp);
}

/* The C function at a process address, by the file's own symbols: only
 * an exact match (a function's start) names it. */
struct cfunc_namer {
	struct symb_table *syms;
	uint64_t bias;
};

static const char *cfunc_name(void *arg, uint64_t func)
{
	struct cfunc_namer *c = arg;
	const char *name;
	uint64_t off = 1;

	if (!c->syms || func < c->bias)
		return NULL;
	name = symb_lookup(c->syms, func - c->bias, &off);
	return name && !off ? name : NULL;
}

static void offsets_for(const struct ruby_info *info, struct ruby_offsets *o)
{
	const struct ruby_layout *l = ruby_layout_of(info->major, info->minor);

	*o = l->o;
	o->id_shift = info->id_shift;
	o->last_op_id = info->last_op_id;
}

static int ruby_symbolize(void *state, pid_t pid, const struct interp_frame *f,
			  struct interp_symbol *out, unsigned max)
{
	struct ruby_state *rs = state;
	struct ruby_offsets o;
	struct ruby_namer nm;
	struct cfunc_namer cn;
	struct ruby_file *file;
	uint64_t word;
	int err;

	(void)max; /* one function a frame: nothing inlined */
	if (!interp_procs_get(rs->procs, pid, &word) ||
	    (word >> 56) >= RUBY_FILES_MAX)
		return -ESRCH;
	file = &rs->files[word >> 56];
	offsets_for(&file->info, &o);
	cn = (struct cfunc_namer){ file->syms, word & ((1ull << 56) - 1) };
	nm = (struct ruby_namer){
		.global_symbols = file->info.global_symbols ?
					  file->info.global_symbols + cn.bias : 0,
		.cfunc = cfunc_name,
		.cfunc_arg = &cn,
	};
	if (o.class_mode != RUBY_CLASS_IVAR) {
		/* no IDs to look up */
	} else if (!interp_procs_get(rs->ids, pid, &word)) {
		/* once per process (a few hundred small reads) */
		if (ruby_find_class_ids(interp_read_process, NULL, pid, &o,
					nm.global_symbols, &nm.classpath_id,
					&nm.attached_id) ||
		    nm.classpath_id >> 32 || nm.attached_id >> 32)
			nm.classpath_id = nm.attached_id = 0;
		/* full: looked up again next time */
		interp_procs_put(rs->ids, pid,
				 nm.classpath_id << 32 | nm.attached_id);
	} else {
		nm.classpath_id = word >> 32;
		nm.attached_id = word & 0xffffffff;
	}
	err = ruby_frame_name(interp_read_process, NULL, pid, &o, &nm, f, out);
	return err ? err : 1;
}

const struct interp_module interp_module_ruby = {
	INTERP_MODULE_METRICS(RUBY_METRICS),
	INTERP_MODULE_DATA(ruby, struct ruby_info, RUBY_INFO_FORMAT),
	INTERP_MODULE_FUNCS(ruby, ruby),
};
