/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HotSpot's offsets as two JDKs' tables give them, for the fuzz target
 * hotspotframe and the test hotspot_chain_*, which fill a struct hs_vm
 * by hand instead of reading a live JVM's tables (hotspot_vmstructs_live
 * checks the names' offsets against jhsdb; the nmethod's are Temurin
 * 25's and OpenJDK 17's vmstructsdump).
 */
#ifndef EP_HOTSPOT_OFFSETS_H
#define EP_HOTSPOT_OFFSETS_H

#include <stddef.h>

#include "interp_hotspot.h"

/* JDK 17: what names a method, and its nmethods' layout (code and
 * scopes absolute, PcDescs and metadata header-relative), marked found. */
static inline struct hs_vm hs_offsets_jdk17(void)
{
	static const size_t nm[] = {
		offsetof(struct hs_vm, blob_code_begin),
		offsetof(struct hs_vm, cm_scopes_data),
		offsetof(struct hs_vm, cm_deopt_begin),
		offsetof(struct hs_vm, nm_deps_off),
		offsetof(struct hs_vm, nm_scopes_pcs_off),
		offsetof(struct hs_vm, nm_metadata_off),
		offsetof(struct hs_vm, nm_method),
	};
	struct hs_vm vm = {
		.method_const = 8, .cm_constants = 8, .cm_code_size = 32,
		.cm_name_index = 34, .cm_sig_index = 36, .cm_flags = 28,
		.cm_flags_size = 2, .cp_holder = 24, .cp_source_file = 54,
		.klass_name = 24, .sym_length = 4, .sym_body = 6,
		.size_cm = 48, .size_cp = 72, .has_linenumber = 1,
		.blob_code_begin = 32, .cm_scopes_data = 120,
		.cm_deopt_begin = 128, .nm_deps_off = 272,
		.nm_scopes_pcs_off = 268, .nm_metadata_off = 260,
		.nm_method = 112, .pcd_pc = 0, .pcd_scope = 4,
		.size_pcdesc = 16,
	};
	unsigned i;

	for (i = 0; i < sizeof(nm) / sizeof(nm[0]); i++)
		hs_vm_have(&vm, nm[i]);
	return vm;
}

/* JDK 25's nmethod layout in place of JDK 17's (the names' offsets
 * stay): the PcDescs and scopes in the immutable data, the metadata
 * after the relocations in the mutable data, offsets header-relative. */
static inline void hs_offsets_nm25(struct hs_vm *vm)
{
	static const size_t nm[] = {
		offsetof(struct hs_vm, blob_code_offset),
		offsetof(struct hs_vm, nm_immutable),
		offsetof(struct hs_vm, nm_scopes_pcs_off),
		offsetof(struct hs_vm, nm_scopes_data_off),
		offsetof(struct hs_vm, nm_deopt_off),
		offsetof(struct hs_vm, blob_mutable),
		offsetof(struct hs_vm, blob_reloc_size),
		offsetof(struct hs_vm, blob_mutable_size),
		offsetof(struct hs_vm, nm_method),
	};
	unsigned i;

	vm->found = 0;
	vm->blob_code_offset = 36;
	vm->nm_immutable = 96;
	vm->nm_scopes_pcs_off = 196;
	vm->nm_scopes_data_off = 200;
	vm->nm_deopt_off = 176;
	vm->blob_mutable = 16;
	vm->blob_reloc_size = 28;
	vm->blob_mutable_size = 48;
	vm->nm_method = 80;
	for (i = 0; i < sizeof(nm) / sizeof(nm[0]); i++)
		hs_vm_have(vm, nm[i]);
}

#endif
