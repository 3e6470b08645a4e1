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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interp_hotspot.h"

/* The nmethod's layout of JDK 17 (jdk25 false: code and scopes
 * absolute, PcDescs and metadata header-relative) or of JDK 25 (the
 * PcDescs and scopes in the immutable data, the metadata after the
 * relocations in the mutable data, offsets header-relative), each field
 * marked found.  A field the other JDK's layout alone has is left as it
 * is and not marked. */
static inline void hs_offsets_nm(struct hs_vm *vm, bool jdk25)
{
	/* One row per field: JDK 17's offset, JDK 25's; NO for none. */
	enum { NO = -1 };
	const struct {
		uint32_t *field;
		int32_t off[2];
	} nm[] = {
		{ &vm->blob_code_begin, { 32, NO } },
		{ &vm->cm_scopes_data, { 120, NO } },
		{ &vm->cm_deopt_begin, { 128, NO } },
		{ &vm->nm_deps_off, { 272, NO } },
		{ &vm->nm_scopes_pcs_off, { 268, 196 } },
		{ &vm->nm_metadata_off, { 260, NO } },
		{ &vm->nm_method, { 112, 80 } },
		{ &vm->blob_code_offset, { NO, 36 } },
		{ &vm->nm_immutable, { NO, 96 } },
		{ &vm->nm_scopes_data_off, { NO, 200 } },
		{ &vm->nm_deopt_off, { NO, 176 } },
		{ &vm->blob_mutable, { NO, 16 } },
		{ &vm->blob_reloc_size, { NO, 28 } },
		{ &vm->blob_mutable_size, { NO, 48 } },
	};
	unsigned i;

	for (i = 0; i < sizeof(nm) / sizeof(nm[0]); i++) {
		if (nm[i].off[jdk25] == NO)
			continue;
		*nm[i].field = nm[i].off[jdk25];
		hs_vm_have(vm, (size_t)((char *)nm[i].field - (char *)vm));
	}
}

/* JDK 17: what names a method, and its nmethods' layout, marked found. */
static inline struct hs_vm hs_offsets_jdk17(void)
{
	struct hs_vm vm = {
		.method_const = 8, .cm_constants = 8, .cm_code_size = 32,
		.cm_name_index = 34, .cm_sig_index = 36, .cm_flags = 28,
		.cm_flags_size = 2, .cp_holder = 24, .cp_source_file = 54,
		.klass_name = 24, .sym_length = 4, .sym_body = 6,
		.size_cm = 48, .size_cp = 72, .has_linenumber = 1,
		.pcd_pc = 0, .pcd_scope = 4, .size_pcdesc = 16,
	};

	hs_offsets_nm(&vm, false);
	return vm;
}

/* JDK 25's nmethod layout in place of JDK 17's (the names' offsets
 * stay), only its fields marked found. */
static inline void hs_offsets_nm25(struct hs_vm *vm)
{
	vm->found = 0;
	hs_offsets_nm(vm, true);
}

#endif
