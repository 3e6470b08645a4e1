// SPDX-License-Identifier: Apache-2.0
/*
 * HotSpot's own tables (gHotSpotVMStructs, Types, Int and Long
 * constants), read from a JVM's memory at attach: every C++ field offset
 * and type size the walk and the names use, the interpreter's code range
 * and the code heaps.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "interp_hotspot_int.h"

/* Bounds: tables hold ~800 entries (JDK 17: 788 fields, 768 types);
 * names are short C++ identifiers. */
#define HS_ENTRIES_MAX 8192
#define HS_STRIDE_MAX 256
#define HS_NAME_MAX 96

/* A C string of the VM's (a table name) into out: 0, or an error when
 * it did not fit or could not be read whole. */
static int rd_cstr(interp_read_fn read, void *arg, pid_t pid, uint64_t addr,
		   char *out, size_t n)
{
	const struct interp_reader r = { read, arg, pid };
	int len = interp_read_cstr(&r, addr, out, n);

	return len < 0 ? len : 0;
}

/* ---- the tables ----------------------------------------------------------- */

/* A table's layout, from the variables. */
struct hs_table {
	uint64_t base, stride, name_off, name2_off, value_off, addr_off,
		static_off, tstr_off;
	uint32_t next; /* the entry table_next reads */
};

/* The struct fields wanted: type, field, where it goes in struct hs_vm,
 * and whether attach needs it (bit k of hs_vm.found: wants[k] was seen;
 * an offset may be 0). */
static const struct hs_want {
	const char *type, *field;
	size_t at;
	bool is_static, needed;
} wants[] = {
#define F(t, f, m, need) { t, f, offsetof(struct hs_vm, m), false, need }
#define S(t, f, m, need) { t, f, offsetof(struct hs_vm, m), true, need }
	S("CodeCache", "_heaps", code_heaps, false),
	S("AbstractInterpreter", "_code", interp_code, true),
	F("StubQueue", "_stub_buffer", stubq_buffer, true),
	F("StubQueue", "_buffer_limit", stubq_limit, true),
	F("Method", "_constMethod", method_const, true),
	F("ConstMethod", "_constants", cm_constants, true),
	F("ConstMethod", "_code_size", cm_code_size, true),
	F("ConstMethod", "_name_index", cm_name_index, true),
	F("ConstMethod", "_signature_index", cm_sig_index, true),
	F("ConstMethod", "_flags", cm_flags, false),
	F("ConstMethod", "_flags._flags", cm_flags, false),
	F("ConstantPool", "_pool_holder", cp_holder, true),
	F("ConstantPool", "_source_file_name_index", cp_source_file, false),
	F("Klass", "_name", klass_name, true),
	F("Symbol", "_length", sym_length, true),
	F("Symbol", "_body", sym_body, true),
	F("CodeBlob", "_name", blob_name, false),
	F("CodeBlob", "_size", blob_size, false),
	F("CodeBlob", "_frame_size", blob_frame_size, false),
	F("CompiledMethod", "_method", nm_method, false), /* to JDK 22 */
	F("nmethod", "_method", nm_method, false),	  /* JDK 23 on */
	F("GrowableArrayBase", "_len", ga_len, false),
	F("GrowableArray<int>", "_data", ga_data, false),
	F("CodeHeap", "_memory", heap_memory, false),
	F("CodeHeap", "_segmap", heap_segmap, false),
	F("CodeHeap", "_log2_segment_size", heap_log2, false),
	F("VirtualSpace", "_low_boundary", vs_low_boundary, false),
	F("VirtualSpace", "_high_boundary", vs_high_boundary, false),
	F("VirtualSpace", "_low", vs_low, false),
	/* a compiled pc's scopes: JDK 17's layout, then JDK 23's */
	F("CodeBlob", "_code_begin", blob_code_begin, false),
	F("CodeBlob", "_code_offset", blob_code_offset, false),
	F("CompiledMethod", "_scopes_data_begin", cm_scopes_data, false),
	F("nmethod", "_dependencies_offset", nm_deps_off, false),
	F("nmethod", "_immutable_data", nm_immutable, false),
	F("nmethod", "_scopes_data_offset", nm_scopes_data_off, false),
	F("nmethod", "_scopes_pcs_offset", nm_scopes_pcs_off, false),
	/* the metadata scopes name methods by: to JDK 22, then JDK 25 */
	F("nmethod", "_metadata_offset", nm_metadata_off, false),
	/* a frame being deoptimized returns into its nmethod's handler */
	F("CompiledMethod", "_deopt_handler_begin", cm_deopt_begin, false),
	F("nmethod", "_deopt_handler_offset", nm_deopt_off, false),
	F("CodeBlob", "_mutable_data", blob_mutable, false),
	F("CodeBlob", "_mutable_data_size", blob_mutable_size, false),
	F("CodeBlob", "_relocation_size", blob_reloc_size, false),
	F("PcDesc", "_pc_offset", pcd_pc, false),
	F("PcDesc", "_scope_decode_offset", pcd_scope, false),
#undef F
#undef S
};
_Static_assert(sizeof(wants) / sizeof(wants[0]) <= 64, "hs_vm.found: a bit each");

static const struct hs_type_want {
	const char *type;
	size_t at;
} type_wants[] = {
	{ "Method", offsetof(struct hs_vm, size_method) },
	{ "ConstMethod", offsetof(struct hs_vm, size_cm) },
	{ "ConstantPool", offsetof(struct hs_vm, size_cp) },
	{ "Symbol", offsetof(struct hs_vm, size_symbol) },
	{ "HeapBlock", offsetof(struct hs_vm, size_heapblock) },
	{ "PcDesc", offsetof(struct hs_vm, size_pcdesc) },
};

/* A field of a table's entries: the variable giving its offset, its
 * width, where the offset goes. */
struct hs_col {
	unsigned id;
	size_t width;
	uint64_t *off;
};

/* The table at variable base with entry stride variable stride and the
 * columns cols, checked to fit the stride. */
static int table_of(interp_read_fn read, void *arg, pid_t pid,
		    const uint64_t *sym, unsigned base, unsigned stride,
		    struct hs_table *t, const struct hs_col *cols, unsigned n)
{
	unsigned i;
	int err;

	err = hs_rd64(read, arg, pid, sym[base], &t->base);
	if (!err)
		err = hs_rd64(read, arg, pid, sym[stride], &t->stride);
	if (err)
		return err;
	if (!t->base)
		return -EAGAIN; /* not filled yet: the VM is starting */
	if (t->stride < 16 || t->stride > HS_STRIDE_MAX || t->stride % 8)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		err = hs_rd64(read, arg, pid, sym[cols[i].id], cols[i].off);
		if (err)
			return err;
		/* stride >= 16 >= width: no wrap-around, unlike off + width
		 * with an offset near 2^64 */
		if (*cols[i].off > t->stride - cols[i].width)
			return -EINVAL;
	}
	return 0;
}

/* The next entry of t into e, and its first name pointer: 1, or 0 at
 * the end marker (which every table has; after HS_ENTRIES_MAX entries),
 * or an error. */
static int table_next(interp_read_fn read, void *arg, pid_t pid,
		      struct hs_table *t, uint8_t *e, uint64_t *name)
{
	int err;

	if (t->next >= HS_ENTRIES_MAX)
		return 0;
	err = hs_rd(read, arg, pid, t->base + t->next * t->stride, e, t->stride);
	if (err)
		return err;
	t->next++;
	memcpy(name, e + t->name_off, 8);
	return *name != 0;
}

static void put32(struct hs_vm *vm, size_t at, uint64_t v)
{
	uint32_t x = v > UINT32_MAX ? 0 : (uint32_t)v;

	memcpy((char *)vm + at, &x, sizeof(x));
}

static int read_structs(interp_read_fn read, void *arg, pid_t pid,
			const uint64_t *sym, struct hs_vm *vm)
{
	uint8_t e[HS_STRIDE_MAX];
	char type[HS_NAME_MAX], field[HS_NAME_MAX], tstr[HS_NAME_MAX];
	struct hs_table t = { 0 };
	const struct hs_col cols[] = {
		{ HS_SYM_S_TYPE, 8, &t.name_off },
		{ HS_SYM_S_FIELD, 8, &t.name2_off },
		{ HS_SYM_S_TSTR, 8, &t.tstr_off },
		{ HS_SYM_S_STATIC, 4, &t.static_off },
		{ HS_SYM_S_OFFSET, 8, &t.value_off },
		{ HS_SYM_S_ADDR, 8, &t.addr_off },
	};
	uint64_t tn, fn, ts, off, addr;
	uint32_t is_static;
	unsigned k;
	int err;

	err = table_of(read, arg, pid, sym, HS_SYM_STRUCTS, HS_SYM_S_STRIDE, &t,
		       cols, sizeof(cols) / sizeof(cols[0]));
	if (err)
		return err;
	while ((err = table_next(read, arg, pid, &t, e, &tn)) > 0) {
		memcpy(&fn, e + t.name2_off, 8);
		vm->n_structs++;
		if (!fn || rd_cstr(read, arg, pid, tn, type, sizeof(type)))
			continue;
		for (k = 0; k < sizeof(wants) / sizeof(wants[0]); k++)
			if (!strcmp(wants[k].type, type))
				break;
		if (k == sizeof(wants) / sizeof(wants[0]) ||
		    rd_cstr(read, arg, pid, fn, field, sizeof(field)))
			continue;
		for (k = 0; k < sizeof(wants) / sizeof(wants[0]); k++) {
			const struct hs_want *w = &wants[k];

			if (strcmp(w->type, type) || strcmp(w->field, field))
				continue;
			memcpy(&is_static, e + t.static_off, 4);
			memcpy(&off, e + t.value_off, 8);
			memcpy(&addr, e + t.addr_off, 8);
			if (!!is_static != w->is_static)
				continue;
			vm->found |= 1ull << k;
			if (w->is_static)
				memcpy((char *)vm + w->at, &addr, 8);
			else
				put32(vm, w->at, off);
			if (w->at == offsetof(struct hs_vm, cm_flags)) {
				/* its width: u2 in JDK 17, u4 later */
				memcpy(&ts, e + t.tstr_off, 8);
				vm->cm_flags_size = 2;
				if (ts && !rd_cstr(read, arg, pid, ts, tstr,
						   sizeof(tstr)) &&
				    (!strcmp(tstr, "u4") || !strcmp(tstr, "int")))
					vm->cm_flags_size = 4;
			}
		}
	}
	return err;
}

static int read_types(interp_read_fn read, void *arg, pid_t pid,
		      const uint64_t *sym, struct hs_vm *vm)
{
	uint8_t e[HS_STRIDE_MAX];
	char type[HS_NAME_MAX];
	struct hs_table t = { 0 };
	const struct hs_col cols[] = {
		{ HS_SYM_T_NAME, 8, &t.name_off },
		{ HS_SYM_T_SIZE, 8, &t.value_off },
	};
	uint64_t tn, size;
	unsigned k;
	int err;

	err = table_of(read, arg, pid, sym, HS_SYM_TYPES, HS_SYM_T_STRIDE, &t,
		       cols, 2);
	if (err)
		return err;
	while ((err = table_next(read, arg, pid, &t, e, &tn)) > 0) {
		vm->n_types++;
		if (rd_cstr(read, arg, pid, tn, type, sizeof(type)))
			continue;
		memcpy(&size, e + t.value_off, 8);
		for (k = 0; k < sizeof(type_wants) / sizeof(type_wants[0]); k++)
			if (!strcmp(type_wants[k].type, type))
				put32(vm, type_wants[k].at, size);
	}
	return err;
}

/* Walk an int (is_long false) or long constant table: *count entries;
 * the value of name when given and found (-ENOENT otherwise). */
static int walk_constants(interp_read_fn read, void *arg, pid_t pid,
			  const uint64_t *sym, bool is_long, const char *name,
			  uint32_t *count, int64_t *value)
{
	unsigned base = is_long ? HS_SYM_LONGS : HS_SYM_INTS;
	uint8_t e[HS_STRIDE_MAX];
	char cname[HS_NAME_MAX];
	struct hs_table t = { 0 };
	const struct hs_col cols[] = {
		{ base + 1, 8, &t.name_off },
		{ base + 2, is_long ? 8 : 4, &t.value_off },
	};
	uint64_t nm = 0;
	int err, found = -ENOENT;

	err = table_of(read, arg, pid, sym, base, base + 3, &t, cols, 2);
	if (err)
		return err;
	while ((err = table_next(read, arg, pid, &t, e, &nm)) > 0) {
		if (count)
			(*count)++;
		if (!name || found == 0 ||
		    rd_cstr(read, arg, pid, nm, cname, sizeof(cname)) ||
		    strcmp(cname, name))
			continue;
		if (is_long) {
			memcpy(value, e + t.value_off, 8);
		} else {
			int32_t v;

			memcpy(&v, e + t.value_off, 4);
			*value = v;
		}
		found = 0;
		if (!count)
			break;
	}
	if (err < 0)
		return err;
	return name ? found : 0;
}

int hs_read_vm(interp_read_fn read, void *arg, pid_t pid,
	       const uint64_t sym[HS_SYM_COUNT], struct hs_vm *out)
{
	/* the flag's name in JDK 17, and in JDK 21 on (ConstMethodFlags) */
	static const char *const linenumber[] = {
		"ConstMethod::_has_linenumber_table",
		"ConstMethodFlags::_misc_has_linenumber_table",
	};
	struct hs_vm vm = { .has_linenumber = -1 };
	uint64_t stubq = 0, buf = 0;
	int32_t limit = 0;
	int64_t v;
	unsigned k;
	int err;

	err = read_structs(read, arg, pid, sym, &vm);
	if (!err)
		err = read_types(read, arg, pid, sym, &vm);
	if (!err)
		err = walk_constants(read, arg, pid, sym, false, NULL,
				     &vm.n_ints, NULL);
	if (!err)
		err = walk_constants(read, arg, pid, sym, true, NULL,
				     &vm.n_longs, NULL);
	if (err)
		return err;
	for (k = 0; k < sizeof(linenumber) / sizeof(linenumber[0]); k++)
		if (!walk_constants(read, arg, pid, sym, false, linenumber[k],
				    NULL, &v)) {
			vm.has_linenumber = v;
			/* ConstMethodFlags and UNSIGNED5 streams came
			 * together (JDK 21) */
			vm.u5_excess = k > 0;
			break;
		}
	for (k = 0; k < sizeof(wants) / sizeof(wants[0]); k++)
		if (wants[k].needed && !(vm.found & (1ull << k)))
			return -EINVAL;
	if (!vm.interp_code || !vm.size_cm || !vm.size_cp)
		return -EINVAL;
	hs_read_heaps(read, arg, pid, &vm);
	/* the interpreter: AbstractInterpreter::_code, a StubQueue */
	if (hs_rd64(read, arg, pid, vm.interp_code, &stubq) || !stubq)
		return -EAGAIN;
	err = hs_rd64(read, arg, pid, stubq + vm.stubq_buffer, &buf);
	if (!err)
		err = hs_rd(read, arg, pid, stubq + vm.stubq_limit, &limit, 4);
	if (err)
		return err;
	if (!buf || limit <= 0)
		return -EAGAIN;
	vm.interp_lo = buf;
	vm.interp_hi = buf + (uint32_t)limit;
	*out = vm;
	return 0;
}

/* The code heaps (CodeCache::_heaps, a GrowableArray<CodeHeap*>): each
 * one's reserved range, segment map and segment size, for compiled
 * frames.  Without them (fields missing, unreadable) n_heaps stays 0 and
 * only interpreted frames are unwound. */
bool hs_vm_has(const struct hs_vm *vm, size_t at)
{
	unsigned k;

	for (k = 0; k < sizeof(wants) / sizeof(wants[0]); k++)
		if (wants[k].at == at && (vm->found & (1ull << k)))
			return true;
	return false;
}

void hs_vm_have(struct hs_vm *vm, size_t at)
{
	unsigned k;

	for (k = 0; k < sizeof(wants) / sizeof(wants[0]); k++)
		if (wants[k].at == at)
			vm->found |= 1ull << k;
}

void hs_read_heaps(interp_read_fn read, void *arg, pid_t pid,
		   struct hs_vm *vm)
{
	static const size_t need[] = {
		offsetof(struct hs_vm, ga_len), offsetof(struct hs_vm, ga_data),
		offsetof(struct hs_vm, heap_memory),
		offsetof(struct hs_vm, heap_segmap),
		offsetof(struct hs_vm, heap_log2),
		offsetof(struct hs_vm, vs_low_boundary),
		offsetof(struct hs_vm, vs_high_boundary),
		offsetof(struct hs_vm, vs_low),
		offsetof(struct hs_vm, blob_name),
		offsetof(struct hs_vm, blob_frame_size),
		offsetof(struct hs_vm, nm_method),
	};
	uint64_t arr = 0, data = 0, heap, lo, hi, seg;
	int32_t len = 0, log2;
	unsigned i;

	vm->n_heaps = 0;
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!hs_vm_has(vm, need[i]))
			return;
	if (!vm->code_heaps || !vm->size_heapblock ||
	    hs_rd64(read, arg, pid, vm->code_heaps, &arr) || !arr ||
	    hs_rd(read, arg, pid, arr + vm->ga_len, &len, 4) ||
	    hs_rd64(read, arg, pid, arr + vm->ga_data, &data) || !data || len <= 0)
		return;
	for (i = 0; i < (unsigned)len && vm->n_heaps < HS_HEAPS_MAX; i++) {
		struct hs_heap *h = &vm->heaps[vm->n_heaps];

		if (hs_rd64(read, arg, pid, data + 8ull * i, &heap) || !heap ||
		    hs_rd64(read, arg, pid, heap + vm->heap_memory +
					 vm->vs_low_boundary, &lo) ||
		    hs_rd64(read, arg, pid, heap + vm->heap_memory +
					 vm->vs_high_boundary, &hi) ||
		    hs_rd64(read, arg, pid, heap + vm->heap_segmap + vm->vs_low,
			    &seg) ||
		    hs_rd(read, arg, pid, heap + vm->heap_log2, &log2, 4))
			continue;
		if (!lo || hi <= lo || !seg || log2 < 4 || log2 > 12)
			continue;
		*h = (struct hs_heap){ lo, hi, seg, (uint32_t)log2 };
		vm->n_heaps++;
	}
}
