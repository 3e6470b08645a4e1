// SPDX-License-Identifier: Apache-2.0
/*
 * HotSpot's compressed streams (UNSIGNED5): a method's line-number table,
 * and the scopes of a compiled pc (its PcDesc, then each scope's sender:
 * the methods C1/C2 inlined there) read from the nmethod in the JVM's
 * memory.
 */
#include <errno.h>
#include <string.h>

#include "interp_hotspot_int.h"

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

	if (*ok && hs_rd(read, arg, pid, addr, &v, 4))
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
	if (hs_vm_has(vm, offsetof(struct hs_vm, blob_code_begin)) &&
	    hs_vm_has(vm, offsetof(struct hs_vm, cm_scopes_data)) &&
	    hs_vm_has(vm, offsetof(struct hs_vm, nm_deps_off))) {
		/* to JDK 22: absolute code and scopes, header-relative
		 * pcs and metadata (which ends where the scopes begin) */
		if (hs_rd64(read, arg, pid, nm + vm->blob_code_begin, &l->code) ||
		    hs_rd64(read, arg, pid, nm + vm->cm_scopes_data, &l->scopes))
			return -EFAULT;
		l->pcs = nm + (uint32_t)rd_i32(read, arg, pid, nm + vm->nm_scopes_pcs_off, &ok);
		l->pcs_end = nm + (uint32_t)rd_i32(read, arg, pid, nm + vm->nm_deps_off, &ok);
		if (hs_vm_has(vm, offsetof(struct hs_vm, cm_deopt_begin)))
			hs_rd64(read, arg, pid, nm + vm->cm_deopt_begin, &l->deopt);
		if (hs_vm_has(vm, offsetof(struct hs_vm, nm_metadata_off))) {
			l->meta = nm + (uint32_t)rd_i32(read, arg, pid,
							nm + vm->nm_metadata_off, &ok);
			l->meta_end = l->scopes;
		}
	} else if (hs_vm_has(vm, offsetof(struct hs_vm, blob_code_offset)) &&
		   hs_vm_has(vm, offsetof(struct hs_vm, nm_immutable)) &&
		   hs_vm_has(vm, offsetof(struct hs_vm, nm_scopes_data_off))) {
		/* JDK 23 on: the pcs then the scopes in the immutable data;
		 * from JDK 25 the metadata after the relocations in the
		 * mutable data (C heap) */
		l->code = nm + (uint32_t)rd_i32(read, arg, pid, nm + vm->blob_code_offset, &ok);
		if (hs_rd64(read, arg, pid, nm + vm->nm_immutable, &imm) || !imm)
			return -EFAULT;
		l->pcs = imm + (uint32_t)rd_i32(read, arg, pid, nm + vm->nm_scopes_pcs_off, &ok);
		l->scopes = imm + (uint32_t)rd_i32(read, arg, pid, nm + vm->nm_scopes_data_off, &ok);
		l->pcs_end = l->scopes;
		if (hs_vm_has(vm, offsetof(struct hs_vm, nm_deopt_off)))
			l->deopt = nm + (uint32_t)rd_i32(read, arg, pid,
							 nm + vm->nm_deopt_off, &ok);
		if (hs_vm_has(vm, offsetof(struct hs_vm, blob_mutable)) &&
		    hs_vm_has(vm, offsetof(struct hs_vm, blob_mutable_size)) &&
		    hs_vm_has(vm, offsetof(struct hs_vm, blob_reloc_size)) &&
		    !hs_rd64(read, arg, pid, nm + vm->blob_mutable, &mut) && mut) {
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

		if (hs_rd(read, arg, pid, l->pcs + base * vm->size_pcdesc, chunk,
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
		if (hs_rd(read, arg, pid, l->pcs + mid * vm->size_pcdesc + vm->pcd_pc,
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

		while (len >= 4 && hs_rd(read, arg, pid, l.scopes + (uint32_t)off, sd, len))
			len /= 2;
		if (len < 4)
			return -EFAULT;
		for (pos = 0, k = 0; k < 3; k++)
			if (!u5_read(sd, len, &pos, &v[k], vm->u5_excess))
				return -EINVAL;
		s.bci = (int32_t)v[2] - 1;
		if (l.meta && v[1] &&
		    (uint64_t)v[1] <= (l.meta_end - l.meta) / 8)
			hs_rd64(read, arg, pid, l.meta + 8ull * (v[1] - 1), &s.method);
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
