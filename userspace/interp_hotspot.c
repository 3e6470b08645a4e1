// SPDX-License-Identifier: Apache-2.0
/*
 * HotSpot's module (the walk: bpf/hotspot.h).  Detection, per file: the
 * gHotSpotVM* variables libjvm.so exports.  Attach, per process: the
 * VM's own tables read from its memory (the variables are filled when
 * the VM starts), giving every C++ offset used here, and the interpreter's
 * code range for the BPF map.  Names, per frame: Method -> ConstMethod ->
 * ConstantPool -> the holder Klass' name, the method's name and source
 * file Symbols, and the line of the bytecode index from the compressed
 * line-number table that follows the bytecodes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deltas.h"
#include "elfmap.h"
#include "hashmap.h"
#include "interp.h"
#include "interp_hotspot.h"
#include "log.h"
#include "hotspot.h"

#define HS_INFO_FORMAT 1

/* What detection keeps (store record): ELF addresses of the variables. */
struct hs_info {
	uint32_t format;
	uint32_t pad;
	uint64_t sym[HS_SYM_COUNT];
};

static const char *const sym_names[] = {
#define HS_SYM_NAME_(id, name) name,
	HS_SYMBOLS(HS_SYM_NAME_)
#undef HS_SYM_NAME_
};

/* Bounds: tables hold ~800 entries (JDK 17: 788 fields, 768 types);
 * names are short C++ identifiers. */
#define HS_ENTRIES_MAX 8192
#define HS_STRIDE_MAX 256
#define HS_NAME_MAX 96
/* A line-number table read at most (bytes), and a class name. */
#define HS_LINETAB_MAX 65536
#define HS_SYMBOL_MAX 1024

static int rd(interp_read_fn read, void *arg, pid_t pid, uint64_t addr,
	      void *buf, size_t len)
{
	if (!addr)
		return -EFAULT;
	return read(arg, pid, addr, buf, len);
}

static int rd64(interp_read_fn read, void *arg, pid_t pid, uint64_t addr,
		uint64_t *v)
{
	*v = 0;
	return rd(read, arg, pid, addr, v, 8);
}

/* A C string of the VM's (a table name) into out, read in small chunks so
 * the end of a mapping does not fail a short string. */
static int rd_cstr(interp_read_fn read, void *arg, pid_t pid, uint64_t addr,
		   char *out, size_t n)
{
	size_t got = 0;
	int err;

	while (got + 16 <= n) {
		err = rd(read, arg, pid, addr + got, out + got, 16);
		if (err)
			return err;
		if (memchr(out + got, 0, 16))
			return 0;
		got += 16;
	}
	return -ENAMETOOLONG;
}

/* ---- the tables ----------------------------------------------------------- */

/* A table's layout, from the variables. */
struct hs_table {
	uint64_t base, stride, name_off, name2_off, value_off, addr_off,
		static_off, tstr_off;
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

	err = rd64(read, arg, pid, sym[base], &t->base);
	if (!err)
		err = rd64(read, arg, pid, sym[stride], &t->stride);
	if (err)
		return err;
	if (!t->base)
		return -EAGAIN; /* not filled yet: the VM is starting */
	if (t->stride < 16 || t->stride > HS_STRIDE_MAX || t->stride % 8)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		err = rd64(read, arg, pid, sym[cols[i].id], cols[i].off);
		if (err)
			return err;
		if (*cols[i].off + cols[i].width > t->stride)
			return -EINVAL;
	}
	return 0;
}

/* Entry i of t into e, and its first name pointer: 0 at the end marker,
 * which every table has. */
static int entry_at(interp_read_fn read, void *arg, pid_t pid,
		    const struct hs_table *t, unsigned i, uint8_t *e,
		    uint64_t *name)
{
	int err = rd(read, arg, pid, t->base + i * t->stride, e, t->stride);

	if (!err)
		memcpy(name, e + t->name_off, 8);
	return err;
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
	unsigned i, k;
	int err;

	err = table_of(read, arg, pid, sym, HS_SYM_STRUCTS, HS_SYM_S_STRIDE, &t,
		       cols, sizeof(cols) / sizeof(cols[0]));
	if (err)
		return err;
	for (i = 0; i < HS_ENTRIES_MAX; i++) {
		err = entry_at(read, arg, pid, &t, i, e, &tn);
		if (err)
			return err;
		memcpy(&fn, e + t.name2_off, 8);
		if (!tn)
			break; /* the end marker */
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
	return 0;
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
	unsigned i, k;
	int err;

	err = table_of(read, arg, pid, sym, HS_SYM_TYPES, HS_SYM_T_STRIDE, &t,
		       cols, 2);
	if (err)
		return err;
	for (i = 0; i < HS_ENTRIES_MAX; i++) {
		err = entry_at(read, arg, pid, &t, i, e, &tn);
		if (err)
			return err;
		if (!tn)
			break;
		vm->n_types++;
		if (rd_cstr(read, arg, pid, tn, type, sizeof(type)))
			continue;
		memcpy(&size, e + t.value_off, 8);
		for (k = 0; k < sizeof(type_wants) / sizeof(type_wants[0]); k++)
			if (!strcmp(type_wants[k].type, type))
				put32(vm, type_wants[k].at, size);
	}
	return 0;
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
	uint64_t nm;
	unsigned i;
	int err, found = -ENOENT;

	err = table_of(read, arg, pid, sym, base, base + 3, &t, cols, 2);
	if (err)
		return err;
	for (i = 0; i < HS_ENTRIES_MAX; i++) {
		err = entry_at(read, arg, pid, &t, i, e, &nm);
		if (err)
			return err;
		if (!nm)
			break;
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
	if (rd64(read, arg, pid, vm.interp_code, &stubq) || !stubq)
		return -EAGAIN;
	err = rd64(read, arg, pid, stubq + vm.stubq_buffer, &buf);
	if (!err)
		err = rd(read, arg, pid, stubq + vm.stubq_limit, &limit, 4);
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
static bool have(const struct hs_vm *vm, size_t at)
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
		if (!have(vm, need[i]))
			return;
	if (!vm->code_heaps || !vm->size_heapblock ||
	    rd64(read, arg, pid, vm->code_heaps, &arr) || !arr ||
	    rd(read, arg, pid, arr + vm->ga_len, &len, 4) ||
	    rd64(read, arg, pid, arr + vm->ga_data, &data) || !data || len <= 0)
		return;
	for (i = 0; i < (unsigned)len && vm->n_heaps < HS_HEAPS_MAX; i++) {
		struct hs_heap *h = &vm->heaps[vm->n_heaps];

		if (rd64(read, arg, pid, data + 8ull * i, &heap) || !heap ||
		    rd64(read, arg, pid, heap + vm->heap_memory +
					 vm->vs_low_boundary, &lo) ||
		    rd64(read, arg, pid, heap + vm->heap_memory +
					 vm->vs_high_boundary, &hi) ||
		    rd64(read, arg, pid, heap + vm->heap_segmap + vm->vs_low,
			 &seg) ||
		    rd(read, arg, pid, heap + vm->heap_log2, &log2, 4))
			continue;
		if (!lo || hi <= lo || !seg || log2 < 4 || log2 > 12)
			continue;
		*h = (struct hs_heap){ lo, hi, seg, (uint32_t)log2 };
		vm->n_heaps++;
	}
}

/* ---- names ---------------------------------------------------------------- */

/* A Symbol's text into out (cut at n - 1 bytes); '/' becomes '.' when
 * dots.  0 or an error. */
static int rd_symbol(interp_read_fn read, void *arg, pid_t pid,
		     const struct hs_vm *vm, uint64_t sym, char *out, size_t n,
		     bool dots)
{
	uint16_t len = 0;
	size_t i;
	int err;

	out[0] = 0;
	if (!sym)
		return -ENOENT;
	err = rd(read, arg, pid, sym + vm->sym_length, &len, 2);
	if (err)
		return err;
	if (len >= n)
		len = (uint16_t)(n - 1);
	err = rd(read, arg, pid, sym + vm->sym_body, out, len);
	if (err)
		return err;
	out[len] = 0;
	for (i = 0; i < len; i++) {
		if (!out[i])
			return -EINVAL;
		if (dots && out[i] == '/')
			out[i] = '.';
	}
	return 0;
}

/* Read one UNSIGNED5 number (HotSpot's CompressedStream): a byte below
 * 192 ends it, each further byte counts 64 times more.  From JDK 21 on
 * (UNSIGNED5 with excess 1) every byte is one more, so that no byte of a
 * number is zero, and 191 ends it.  false at the end of the buffer or on
 * a zero byte there. */
#define HS_U5_L 192
#define HS_U5_LG_H 6
static bool u5_read(const uint8_t *tab, size_t len, size_t *pos, uint32_t *v,
		    unsigned excess)
{
	uint32_t sum = 0, shift = 0, b;
	int i;

	for (i = 0; i < 5; i++) {
		if (*pos >= len || tab[*pos] < excess)
			return false;
		b = tab[(*pos)++] - excess;
		sum += b << shift;
		if (b < HS_U5_L - excess || i == 4)
			break;
		shift += HS_U5_LG_H;
	}
	*v = sum;
	return true;
}

static int32_t u5_signed(uint32_t v)
{
	return (int32_t)((v >> 1) ^ -(v & 1));
}

uint32_t hs_line_of(const uint8_t *tab, size_t len, uint32_t bci,
		    unsigned excess)
{
	uint32_t cur_bci = 0, line = 0, best = 0, a, b;
	size_t pos = 0;
	uint8_t next;

	/* pairs (bci delta, line delta), ascending bcis: the line of the
	 * last pair at or before bci */
	while (pos < len) {
		next = tab[pos++];
		if (!next)
			break;
		if (next == 0xff) {
			if (!u5_read(tab, len, &pos, &a, excess) ||
			    !u5_read(tab, len, &pos, &b, excess))
				break;
			cur_bci += (uint32_t)u5_signed(a);
			line += (uint32_t)u5_signed(b);
		} else {
			cur_bci += next >> 3;
			line += next & 7;
		}
		if (cur_bci > bci)
			break;
		best = line;
	}
	return best;
}

/* The line of bci in the method whose ConstMethod is at cm. */
static uint32_t line_of(interp_read_fn read, void *arg, pid_t pid,
			const struct hs_vm *vm, uint64_t cm, uint32_t code_size,
			uint32_t bci)
{
	uint8_t tab[512];
	uint64_t at = cm + vm->size_cm + code_size;
	uint32_t flags = 0;
	size_t len = sizeof(tab);

	if (vm->cm_flags && vm->has_linenumber > 0) {
		if (rd(read, arg, pid, cm + vm->cm_flags, &flags,
		       vm->cm_flags_size == 4 ? 4 : 2) ||
		    !(flags & (uint64_t)vm->has_linenumber))
			return 0;
	}
	/* one read covers a method's table but for the longest methods;
	 * near the end of a mapping, read less */
	while (len >= 16 && rd(read, arg, pid, at, tab, len))
		len /= 2;
	if (len < 16)
		return 0;
	return hs_line_of(tab, len, bci, vm->u5_excess);
}

/* A lambda's hidden class is named with its address
 * ("Sort$$Lambda$14/0x0000000800c03000" in 17, "Sort$$Lambda+0x..." or
 * "Sort$$Lambda$1+0x..." later): cut it, so that the name is the same in
 * every process. */
static void lambda_name(char *cls)
{
	char *p = strstr(cls, "$$Lambda"), *q;

	if (!p)
		return;
	for (q = p + 8; *q; q++)
		if ((*q == '+' || *q == '.') && q[1] == '0' && q[2] == 'x') {
			*q = 0;
			return;
		}
}

/* What naming compiled frames met (symbolize runs on the pipeline's
 * threads): hs_get_counts. */
static struct hs_counts hs_counts;

static void count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

void hs_get_counts(struct hs_counts *out)
{
	out->inlined = __atomic_load_n(&hs_counts.inlined, __ATOMIC_RELAXED);
	out->chain_unread = __atomic_load_n(&hs_counts.chain_unread, __ATOMIC_RELAXED);
	out->chain_mismatch = __atomic_load_n(&hs_counts.chain_mismatch, __ATOMIC_RELAXED);
	out->chain_cut = __atomic_load_n(&hs_counts.chain_cut, __ATOMIC_RELAXED);
	out->scope_unnamed = __atomic_load_n(&hs_counts.scope_unnamed, __ATOMIC_RELAXED);
	out->deopt = __atomic_load_n(&hs_counts.deopt, __ATOMIC_RELAXED);
}

/* Bytes of PcDescs read at once, PcDescs read at most, scopes followed at
 * most (C2's MaxInlineLevel is 15: a chain is 16 scopes at most, and
 * recursive inlining stays under it). */
#define HS_PCDESC_CHUNK 64
#define HS_PCDESC_MAX 65536
#define HS_SCOPE_DEPTH 32

static int32_t rd_i32(interp_read_fn read, void *arg, pid_t pid,
		      uint64_t addr, bool *ok)
{
	int32_t v = 0;

	if (*ok && rd(read, arg, pid, addr, &v, 4))
		*ok = false;
	return v;
}

/* Where an nmethod keeps what names a pc: its code, its PcDescs, its
 * scopes, and the metadata its scopes name methods by (meta 0: not
 * known for this layout, only the outermost scope is then named). */
struct hs_nm {
	uint64_t code, pcs, pcs_end, scopes, meta, meta_end;
	uint64_t deopt; /* its deopt handler (0: not known) */
};

static int nm_layout(interp_read_fn read, void *arg, pid_t pid,
		     const struct hs_vm *vm, uint64_t nm, struct hs_nm *l)
{
	uint64_t imm = 0, mut = 0;
	bool ok = true;

	memset(l, 0, sizeof(*l));
	if (have(vm, offsetof(struct hs_vm, blob_code_begin)) &&
	    have(vm, offsetof(struct hs_vm, cm_scopes_data)) &&
	    have(vm, offsetof(struct hs_vm, nm_deps_off))) {
		/* to JDK 22: absolute code and scopes, header-relative
		 * pcs and metadata (which ends where the scopes begin) */
		if (rd64(read, arg, pid, nm + vm->blob_code_begin, &l->code) ||
		    rd64(read, arg, pid, nm + vm->cm_scopes_data, &l->scopes))
			return -EFAULT;
		l->pcs = nm + (uint32_t)rd_i32(read, arg, pid, nm + vm->nm_scopes_pcs_off, &ok);
		l->pcs_end = nm + (uint32_t)rd_i32(read, arg, pid, nm + vm->nm_deps_off, &ok);
		if (have(vm, offsetof(struct hs_vm, cm_deopt_begin)))
			rd64(read, arg, pid, nm + vm->cm_deopt_begin, &l->deopt);
		if (have(vm, offsetof(struct hs_vm, nm_metadata_off))) {
			l->meta = nm + (uint32_t)rd_i32(read, arg, pid,
							nm + vm->nm_metadata_off, &ok);
			l->meta_end = l->scopes;
		}
	} else if (have(vm, offsetof(struct hs_vm, blob_code_offset)) &&
		   have(vm, offsetof(struct hs_vm, nm_immutable)) &&
		   have(vm, offsetof(struct hs_vm, nm_scopes_data_off))) {
		/* JDK 23 on: the pcs then the scopes in the immutable data;
		 * from JDK 25 the metadata after the relocations in the
		 * mutable data (C heap) */
		l->code = nm + (uint32_t)rd_i32(read, arg, pid, nm + vm->blob_code_offset, &ok);
		if (rd64(read, arg, pid, nm + vm->nm_immutable, &imm) || !imm)
			return -EFAULT;
		l->pcs = imm + (uint32_t)rd_i32(read, arg, pid, nm + vm->nm_scopes_pcs_off, &ok);
		l->scopes = imm + (uint32_t)rd_i32(read, arg, pid, nm + vm->nm_scopes_data_off, &ok);
		l->pcs_end = l->scopes;
		if (have(vm, offsetof(struct hs_vm, nm_deopt_off)))
			l->deopt = nm + (uint32_t)rd_i32(read, arg, pid,
							 nm + vm->nm_deopt_off, &ok);
		if (have(vm, offsetof(struct hs_vm, blob_mutable)) &&
		    have(vm, offsetof(struct hs_vm, blob_mutable_size)) &&
		    have(vm, offsetof(struct hs_vm, blob_reloc_size)) &&
		    !rd64(read, arg, pid, nm + vm->blob_mutable, &mut) && mut) {
			l->meta = mut + (uint32_t)rd_i32(read, arg, pid,
							 nm + vm->blob_reloc_size, &ok);
			l->meta_end = mut + (uint32_t)rd_i32(read, arg, pid,
							     nm + vm->blob_mutable_size, &ok);
		}
	} else {
		return -ENOTSUP;
	}
	if (!ok || l->pcs_end <= l->pcs)
		return -EINVAL;
	if (l->meta_end <= l->meta)
		l->meta = l->meta_end = 0;
	return 0;
}

/* PcDescs from to n, read a chunk at a time: the scope (its decode
 * offset) of the first with a scope whose pc offset is target or more;
 * else the last one's with a scope; 0 when none. */
static int32_t scope_scan(interp_read_fn read, void *arg, pid_t pid,
			  const struct hs_vm *vm, const struct hs_nm *l,
			  uint64_t from, uint64_t n, int32_t target)
{
	uint8_t chunk[HS_PCDESC_CHUNK * 16];
	uint64_t i, base;
	int32_t before = 0;

	for (base = from; base < n; base += HS_PCDESC_CHUNK) {
		uint64_t m = n - base < HS_PCDESC_CHUNK ? n - base : HS_PCDESC_CHUNK;

		if (rd(read, arg, pid, l->pcs + base * vm->size_pcdesc, chunk,
		       m * vm->size_pcdesc))
			return 0;
		for (i = 0; i < m; i++) {
			int32_t po, so;

			memcpy(&po, chunk + i * vm->size_pcdesc + vm->pcd_pc, 4);
			memcpy(&so, chunk + i * vm->size_pcdesc + vm->pcd_scope, 4);
			if (so <= 0)
				continue; /* no scope here (the sentinel) */
			if (po >= target)
				return so;
			before = so;
		}
	}
	return before;
}

/* The decode offset of the innermost scope at pc (data of a compiled
 * frame: a return address minus one, or the leaf's pc): the first PcDesc
 * with a scope at or after pc + 1, as HotSpot's pc_desc_near (a call's
 * PcDesc is at its return address); else the last one before (a leaf in
 * the tail of the code).  0 when none.  The PcDescs are sorted by pc
 * (HotSpot searches them so too): a large nmethod's are narrowed by
 * bisection, 16 reads of 4 bytes at most, to the chunk holding the
 * first at or after pc + 1, then scanned; from the start when nothing
 * from there has a scope. */
static int32_t scope_at(interp_read_fn read, void *arg, pid_t pid,
			const struct hs_vm *vm, const struct hs_nm *l,
			uint64_t pc)
{
	uint64_t n, lo = 0, hi, mid;
	int32_t target, po, so;

	if (pc + 1 < l->code || pc + 1 - l->code > INT32_MAX)
		return 0;
	target = (int32_t)(pc + 1 - l->code);
	n = (l->pcs_end - l->pcs) / vm->size_pcdesc;
	if (n > HS_PCDESC_MAX)
		return 0;
	for (hi = n; hi - lo > HS_PCDESC_CHUNK;) {
		mid = lo + (hi - lo) / 2;
		if (rd(read, arg, pid, l->pcs + mid * vm->size_pcdesc + vm->pcd_pc,
		       &po, 4))
			return 0;
		if (po < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	so = scope_scan(read, arg, pid, vm, l, lo, n, target);
	if (!so && lo)
		so = scope_scan(read, arg, pid, vm, l, 0, n, target);
	return so;
}

int hs_scope_chain(interp_read_fn read, void *arg, pid_t pid,
		   const struct hs_vm *vm, uint64_t nm, uint64_t pc,
		   struct hs_scope *sc, unsigned max, struct hs_scope *outer)
{
	uint8_t sd[32];
	struct hs_nm l;
	uint32_t v[3];
	unsigned n;
	size_t pos;
	int32_t off;
	int k, err;

	if (!max || !vm->size_pcdesc || vm->size_pcdesc > 16 ||
	    vm->pcd_pc + 4 > vm->size_pcdesc ||
	    vm->pcd_scope + 4 > vm->size_pcdesc)
		return -ENOTSUP;
	err = nm_layout(read, arg, pid, vm, nm, &l);
	if (err)
		return err;
	/* a caller being deoptimized: its return address was patched to
	 * the handler, the pc it had is in its frame, not known here */
	if (l.deopt && l.deopt > l.code && pc + 1 >= l.deopt)
		return -ESTALE;
	off = scope_at(read, arg, pid, vm, &l, pc);
	/* each scope: its sender's decode offset (0: the outermost), its
	 * method's index in the metadata (from 1), its bci + 1 */
	for (n = 0; off > 0 && n < HS_SCOPE_DEPTH; n++) {
		size_t len = sizeof(sd);
		struct hs_scope s = { 0 };

		while (len >= 4 && rd(read, arg, pid, l.scopes + (uint32_t)off, sd, len))
			len /= 2;
		if (len < 4)
			return -EFAULT;
		for (pos = 0, k = 0; k < 3; k++)
			if (!u5_read(sd, len, &pos, &v[k], vm->u5_excess))
				return -EINVAL;
		s.bci = (int32_t)v[2] - 1;
		if (l.meta && v[1] &&
		    (uint64_t)v[1] <= (l.meta_end - l.meta) / 8)
			rd64(read, arg, pid, l.meta + 8ull * (v[1] - 1), &s.method);
		/* innermost first, the innermost max kept */
		if (n < max)
			sc[n] = s;
		*outer = s;
		if (!v[0])
			return (int)n + 1;
		if ((int32_t)v[0] == off)
			return -ELOOP;
		off = (int32_t)v[0];
	}
	return off > 0 ? -ELOOP : -ENOENT;
}

/* A Method's holder, name and source file into out; its ConstMethod and
 * bytecode size into *cm and *code_size.  0 or an error. */
static int method_name(interp_read_fn read, void *arg, pid_t pid,
		       const struct hs_vm *vm, uint64_t method,
		       struct interp_symbol *out, uint64_t *cm,
		       uint16_t *code_size)
{
	uint64_t cp, holder, kname, s_name, s_file;
	uint16_t name_index = 0, file_index = 0;
	char cls[HS_SYMBOL_MAX / 2], fn[INTERP_NAME_MAX / 2];
	int err;

	out->name[0] = out->file[0] = 0;
	out->line = 0;
	*code_size = 0;
	if (!method)
		return -EINVAL;
	err = rd64(read, arg, pid, method + vm->method_const, cm);
	if (!err)
		err = rd64(read, arg, pid, *cm + vm->cm_constants, &cp);
	if (!err)
		err = rd(read, arg, pid, *cm + vm->cm_code_size, code_size, 2);
	if (!err)
		err = rd(read, arg, pid, *cm + vm->cm_name_index, &name_index, 2);
	if (!err)
		err = rd64(read, arg, pid, cp + vm->cp_holder, &holder);
	if (!err)
		err = rd64(read, arg, pid, holder + vm->klass_name, &kname);
	if (!err)
		err = rd64(read, arg, pid, cp + vm->size_cp + 8ull * name_index,
			   &s_name);
	if (err)
		return err;
	/* a Utf8 entry is the Symbol*; the low bit may tag it */
	if (rd_symbol(read, arg, pid, vm, kname, cls, sizeof(cls), true))
		snprintf(cls, sizeof(cls), "?");
	lambda_name(cls);
	err = rd_symbol(read, arg, pid, vm, s_name & ~1ull, fn, sizeof(fn),
			false);
	if (err)
		return err;
	snprintf(out->name, sizeof(out->name), "%.160s.%.94s", cls, fn);
	if (vm->cp_source_file &&
	    !rd(read, arg, pid, cp + vm->cp_source_file, &file_index, 2) &&
	    file_index &&
	    !rd64(read, arg, pid, cp + vm->size_cp + 8ull * file_index, &s_file))
		rd_symbol(read, arg, pid, vm, s_file & ~1ull, out->file,
			  sizeof(out->file), false);
	return 0;
}

/* The line of bci in a method read by method_name (the method's entry,
 * InvocationEntryBci -1, is its first line). */
static uint32_t bci_line(interp_read_fn read, void *arg, pid_t pid,
			 const struct hs_vm *vm, uint64_t cm,
			 uint16_t code_size, int32_t bci)
{
	if (bci == -1)
		bci = 0;
	if (bci < 0 || bci >= code_size)
		return 0;
	return line_of(read, arg, pid, vm, cm, code_size, (uint32_t)bci);
}

/* A compiled frame's scopes into out, innermost first: the methods C1/C2
 * inlined at its pc, then its own.  When the chain cannot be read, or
 * names a method the nmethod does not own as its outermost (a layout
 * misread, code freed and reused), the frame's own method alone. */
static int compiled_names(interp_read_fn read, void *arg, pid_t pid,
			  const struct hs_vm *vm, const struct interp_frame *f,
			  struct interp_symbol *out, unsigned max)
{
	struct hs_scope sc[INTERP_CHAIN_MAX], outer = { 0 };
	uint64_t method = f->payload[0], cm;
	uint16_t code_size;
	int n, i, got = 0, err;

	if (max > INTERP_CHAIN_MAX)
		max = INTERP_CHAIN_MAX;
	n = hs_scope_chain(read, arg, pid, vm, f->payload[1] & ~HOTSPOT_COMPILED,
			   f->data, sc, max, &outer);
	if (n == -ESTALE) {
		/* its own method, at a line not known */
		count(&hs_counts.deopt);
		sc[0] = (struct hs_scope){ method, -2 };
		n = 1;
	} else if (n <= 0) {
		count(&hs_counts.chain_unread);
		sc[0] = (struct hs_scope){ method, -1 };
		n = 1;
	} else if (outer.method != method) {
		/* the outermost scope is the nmethod's own method, which
		 * the unwinder read; its bci holds without the metadata
		 * (not read: a layout without it, JDK 23 and 24) */
		if (outer.method)
			count(&hs_counts.chain_mismatch);
		else if (n > 1)
			count(&hs_counts.chain_unread);
		sc[0] = (struct hs_scope){ method, outer.bci };
		n = 1;
	} else if (n > (int)max) {
		count(&hs_counts.chain_cut);
		n = (int)max;
	}
	for (i = 0; i < n; i++) {
		err = method_name(read, arg, pid, vm, sc[i].method, &out[got],
				  &cm, &code_size);
		if (err) {
			/* an inlined method unread: its frame goes, the
			 * others stay; the frame's own must be there */
			if (i == n - 1)
				return err;
			count(&hs_counts.scope_unnamed);
			continue;
		}
		out[got].line = bci_line(read, arg, pid, vm, cm, code_size,
					 sc[i].bci);
		out[got].address = f->data;
		got++;
	}
	if (got > 1)
		__atomic_fetch_add(&hs_counts.inlined, (uint64_t)got - 1,
				   __ATOMIC_RELAXED);
	return got;
}

/* A blob that is not an nmethod (bpf/hotspot.h: payload = its _name and
 * the blob): "[stub: <its name>]" ("StubRoutines (1)", "I2C/C2I
 * adapters", "RuntimeStub - ..."), but a native method's wrapper
 * ("native nmethod") by its Java method, which it runs. */
#define HS_STUB_NAME_MAX 80
static int stub_name(interp_read_fn read, void *arg, pid_t pid,
		     const struct hs_vm *vm, const struct interp_frame *f,
		     struct interp_symbol *out)
{
	char name[HS_STUB_NAME_MAX] = { 0 };
	uint64_t blob = f->payload[1] & ~(HOTSPOT_COMPILED | HOTSPOT_STUB);
	uint64_t method = 0, cm;
	uint16_t code_size;
	size_t got;

	/* 16 bytes a read, a byte a read in the last 16 of a mapping; a
	 * longer name is cut */
	for (got = 0; got + 16 < sizeof(name); got += 16) {
		if (rd(read, arg, pid, f->payload[0] + got, name + got, 16)) {
			size_t i;

			for (i = 0; i < 16; i++)
				if (rd(read, arg, pid, f->payload[0] + got + i,
				       name + got + i, 1) || !name[got + i])
					break;
			name[got + i] = 0;
			break;
		}
		if (memchr(name + got, 0, 16))
			break;
	}
	name[sizeof(name) - 1] = 0;
	if (!name[0])
		return -EFAULT;
	if (!strcmp(name, "native nmethod") && vm->nm_method &&
	    !rd64(read, arg, pid, blob + vm->nm_method, &method) && method &&
	    !method_name(read, arg, pid, vm, method, out, &cm, &code_size))
		return 1;
	snprintf(out->name, sizeof(out->name), "[stub: %s]", name);
	out->file[0] = 0;
	out->line = 0;
	return 1;
}

int hs_frame_names(interp_read_fn read, void *arg, pid_t pid,
		   const struct hs_vm *vm, const struct interp_frame *f,
		   struct interp_symbol *out, unsigned max)
{
	uint64_t method = f->n_payload ? f->payload[0] : 0, bcp = f->data, cm;
	uint16_t code_size;
	int err;

	if (!max)
		return -EINVAL;
	if (f->n_payload > 1 && (f->payload[1] & HOTSPOT_STUB))
		return stub_name(read, arg, pid, vm, f, out);
	if (f->n_payload > 1 && (f->payload[1] & HOTSPOT_COMPILED))
		return compiled_names(read, arg, pid, vm, f, out, max);
	err = method_name(read, arg, pid, vm, method, out, &cm, &code_size);
	if (err)
		return err;
	/* the bytecode index: the bcp within the bytecodes, which follow
	 * the ConstMethod; anything else is not this method's */
	if ((bcp < cm + vm->size_cm || bcp >= cm + vm->size_cm + code_size) &&
	    f->n_payload > 1)
		bcp = f->payload[1]; /* the leaf's r13 was not the bcp */
	if (bcp >= cm + vm->size_cm && bcp < cm + vm->size_cm + code_size)
		out->line = line_of(read, arg, pid, vm, cm, code_size,
				    (uint32_t)(bcp - cm - vm->size_cm));
	out->address = bcp;
	return 1;
}

int hs_frame_name(interp_read_fn read, void *arg, pid_t pid,
		  const struct hs_vm *vm, const struct interp_frame *f,
		  struct interp_symbol *out)
{
	struct interp_symbol chain[INTERP_CHAIN_MAX];
	int n = hs_frame_names(read, arg, pid, vm, f, chain, INTERP_CHAIN_MAX);

	if (n <= 0)
		return n ? n : -EINVAL;
	*out = chain[n - 1];
	return 0;
}

/* ---- the module ----------------------------------------------------------- */

static int hs_detect(void *state, const char *path, int fd, void **data,
		     size_t *len)
{
	uint64_t value[HS_SYM_COUNT] = { 0 }, size[HS_SYM_COUNT] = { 0 };
	struct hs_info *info;
	struct elfm *e;
	unsigned i;
	int err;

	(void)state;
	(void)path;
	err = elfm_open_fd(fd, &e);
	if (err)
		return err;
	elfm_find_syms(e, sym_names, HS_SYM_COUNT, value, size);
	elfm_free(e);
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

int hs_record_syms(const void *data, size_t len, uint64_t sym[HS_SYM_COUNT])
{
	const struct hs_info *info = data;

	if (len != sizeof(*info) || info->format != HS_INFO_FORMAT ||
	    hs_check(data))
		return -EINVAL;
	memcpy(sym, info->sym, sizeof(info->sym));
	return 0;
}

/* State: pid -> its struct hs_vm (malloc'd), bounded by
 * INTERP_PROCS_MAX; the map of interp_procs_init. */
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
	if (!vm)
		return -ENOMEM;
	/* -EAGAIN (the VM is starting): not attached; BPF asks for a sync
	 * at the JVM's code until this succeeds */
	err = hs_read_vm(interp_read_process, NULL, a->pid, sym, vm);
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
	err = interp_map_update(im, INTERP_HOTSPOT, &key, &hp);
	if (err) {
		log_warn_once("hotspot_procs map is full: Java frames of new processes are not unwound");
		hs_detach(state, a->pid);
	}
	return err;
fail:
	free(vm);
	return err;
}

static int hs_symbolize(void *state, pid_t pid, const struct interp_frame *f,
			struct interp_symbol *out, unsigned max)
{
	uint64_t v;

	if (!hm_get(state, (uint64_t)pid, &v))
		return -ESRCH;
	return hs_frame_names(interp_read_process, NULL, pid,
			      (const struct hs_vm *)(uintptr_t)v, f, out, max);
}

const struct interp_module interp_module_hotspot = {
	.name = "hotspot",
	.kind = INTERP_HOTSPOT,
	.on_by_default = true,
	INTERP_MODULE_METRICS(HOTSPOT_METRICS),
	.map_name = "hotspot_procs",
	.map_key_size = sizeof(uint32_t),
	.map_val_size = sizeof(struct hotspot_proc),
	.init = interp_procs_init,
	.fini = hs_fini,
	.detect = hs_detect,
	.record_size = sizeof(struct hs_info),
	.record_format = HS_INFO_FORMAT,
	.check = hs_check,
	.attach = hs_attach,
	.detach = hs_detach,
	.symbolize = hs_symbolize,
};
