// SPDX-License-Identifier: Apache-2.0
/*
 * HotSpot's module (the walk: bpf/hotspot.h).  Detection, per file: the
 * gHotSpotVM* variables libjvm.so exports.  Attach, per process: the
 * VM's own tables read from its memory (the variables are filled when
 * the VM starts), giving every C++ offset used here, and the interpreter's
 * code range for the BPF map (the tables: interp_hotspot_vm.c).  Names,
 * per frame: interp_hotspot_names.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "deltas.h"
#include "elfmap.h"
#include "hashmap.h"
#include "interp.h"
#include "interp_hotspot.h"
#include "interp_hotspot_int.h"
#include "log.h"
#include "hotspot.h"

static const char *const sym_names[] = {
#define HS_SYM_NAME_(id, name) name,
	HS_SYMBOLS(HS_SYM_NAME_)
#undef HS_SYM_NAME_
};

static int hs_detect(void *state, const struct interp_file *file,
		     void **data, size_t *len)
{
	uint64_t value[HS_SYM_COUNT] = { 0 }, size[HS_SYM_COUNT] = { 0 };
	struct hs_info *info;
	unsigned i;

	(void)state;
	elfm_find_syms(file->elf, sym_names, HS_SYM_COUNT, value, size);
	if (!value[HS_SYM_STRUCTS])
		return -ENOENT; /* not a JVM */
	for (i = 0; i < HS_SYM_COUNT; i++)
		if (!value[i])
			return -ENOTSUP; /* a JVM without a table we read */
	info = calloc(1, sizeof(*info));
	if (!info)
		return -ENOMEM;
	info->format = HS_INFO_FORMAT;
	memcpy(info->sym, value, sizeof(info->sym));
	*data = info;
	*len = sizeof(*info);
	return 0;
}

static int hs_check(const void *record)
{
	const struct hs_info *info = record;
	unsigned i;

	for (i = 0; i < HS_SYM_COUNT; i++)
		if (!info->sym[i])
			return -EINVAL;
	return 0;
}

/* State: pid -> its struct hs_vm (malloc'd), bounded by
 * INTERP_PROCS_MAX: interp.c's pid -> word table, whose words are freed
 * with their entries. */
static int hs_init(void **state)
{
	return interp_procs_init(state);
}

static void hs_fini(void *state)
{
	struct hm *m = state;
	uint64_t k, v;
	uint32_t it = 0;

	while (hm_next(m, &it, &k, &v))
		free((void *)(uintptr_t)v);
	interp_procs_fini(m);
}

static void hs_detach(void *state, pid_t pid)
{
	uint64_t v;

	if (hm_get(state, (uint64_t)pid, &v)) {
		free((void *)(uintptr_t)v);
		hm_del(state, (uint64_t)pid);
	}
}

static int hs_attach(void *state, struct interp_mgr *im,
		     const struct interp_attach *a)
{
	const struct hs_info *info = a->files[0].data;
	uint64_t bias = a->files[0].bias, sym[HS_SYM_COUNT], v;
	struct hotspot_proc hp = { 0 };
	uint32_t key = (uint32_t)a->pid;
	struct interp_pages *pages;
	struct hs_vm *vm;
	unsigned i;
	int err;

	if (hm_get(state, (uint64_t)a->pid, &v))
		return 0; /* read once; the tables do not move */
	if (((struct hm *)state)->count >= INTERP_PROCS_MAX)
		return -ENOSPC;
	for (i = 0; i < HS_SYM_COUNT; i++)
		sym[i] = info->sym[i] + bias;
	vm = calloc(1, sizeof(*vm));
	pages = calloc(1, sizeof(*pages));
	if (!vm || !pages) {
		free(pages);
		free(vm);
		return -ENOMEM;
	}
	/* the VM tables are static: read by page */
	pages->read = interp_read_process;
	pages->pid = a->pid;
	/* -EAGAIN (the VM is starting): not attached; BPF asks for a sync
	 * at the JVM's code until this succeeds */
	err = hs_read_vm(interp_read_paged, pages, a->pid, sym, vm);
	free(pages);
	if (err)
		goto fail;
	hp.interp_lo = vm->interp_lo;
	hp.interp_hi = vm->interp_hi;
	hp.method_slot = HOTSPOT_X86_METHOD_SLOT;
	/* the JVM runs on the daemon's own machine */
	hp.bcp_slot = DT_HOST_MACHINE == EM_AARCH64 ? HOTSPOT_A64_BCP_SLOT :
						      HOTSPOT_X86_BCP_SLOT;
	hp.sender_sp_slot = HOTSPOT_X86_SENDER_SP_SLOT;
	for (i = 0; i < vm->n_heaps && i < HOTSPOT_HEAPS; i++)
		hp.heaps[i] = (struct hotspot_heap){
			.lo = vm->heaps[i].lo, .hi = vm->heaps[i].hi,
			.segmap = vm->heaps[i].segmap,
			.log2 = vm->heaps[i].log2 };
	hp.heapblock = (__u16)vm->size_heapblock;
	hp.blob_name = (__u16)vm->blob_name;
	hp.blob_frame_size = (__u16)vm->blob_frame_size;
	hp.nm_method = (__u16)vm->nm_method;
	err = hm_put(state, (uint64_t)a->pid, (uint64_t)(uintptr_t)vm);
	if (err)
		goto fail;
	return interp_map_update(im, INTERP_HOTSPOT, &key, &hp);
fail:
	free(vm);
	return err;
}

static int hs_symbolize(void *state, pid_t pid, const struct interp_frame *f,
			struct interp_symbol *out, unsigned max)
{
	const struct hs_vm *vm = hm_get_ptr(state, (uint64_t)pid);

	if (!vm)
		return -ESRCH;
	return hs_frame_names(interp_read_process, NULL, pid, vm, f, out, max);
}

const struct interp_module interp_module_hotspot = {
	INTERP_MODULE_METRICS(HOTSPOT_METRICS),
	INTERP_MODULE_DATA(hotspot, struct hs_info, HS_INFO_FORMAT),
	INTERP_MODULE_FUNCS(hs, hs),
};
