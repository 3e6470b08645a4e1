// SPDX-License-Identifier: Apache-2.0
/*
 * HotSpot's names, per frame: Method -> ConstMethod -> ConstantPool ->
 * the holder Klass' name, the method's name and source file Symbols, and
 * the line of the bytecode index from the compressed line-number table
 * that follows the bytecodes; a compiled frame's inlined methods from its
 * scopes (interp_hotspot_scope.c); a stub by its blob's name.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "interp_hotspot_int.h"
#include "hotspot.h"

/* A class name read at most. */
#define HS_SYMBOL_MAX 1024

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
	err = hs_rd(read, arg, pid, sym + vm->sym_length, &len, 2);
	if (err)
		return err;
	if (len >= n)
		len = (uint16_t)(n - 1);
	err = hs_rd(read, arg, pid, sym + vm->sym_body, out, len);
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
		if (hs_rd(read, arg, pid, cm + vm->cm_flags, &flags,
			  vm->cm_flags_size == 4 ? 4 : 2) ||
		    !(flags & (uint64_t)vm->has_linenumber))
			return 0;
	}
	/* one read covers a method's table but for the longest methods;
	 * near the end of a mapping, read less */
	while (len >= 16 && hs_rd(read, arg, pid, at, tab, len))
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
	err = hs_rd64(read, arg, pid, method + vm->method_const, cm);
	if (!err)
		err = hs_rd64(read, arg, pid, *cm + vm->cm_constants, &cp);
	if (!err)
		err = hs_rd(read, arg, pid, *cm + vm->cm_code_size, code_size, 2);
	if (!err)
		err = hs_rd(read, arg, pid, *cm + vm->cm_name_index, &name_index, 2);
	if (!err)
		err = hs_rd64(read, arg, pid, cp + vm->cp_holder, &holder);
	if (!err)
		err = hs_rd64(read, arg, pid, holder + vm->klass_name, &kname);
	if (!err)
		err = hs_rd64(read, arg, pid, cp + vm->size_cp + 8ull * name_index,
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
	    !hs_rd(read, arg, pid, cp + vm->cp_source_file, &file_index, 2) &&
	    file_index &&
	    !hs_rd64(read, arg, pid, cp + vm->size_cp + 8ull * file_index, &s_file))
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
	const struct interp_reader r = { read, arg, pid };
	char name[HS_STUB_NAME_MAX];
	uint64_t blob = f->payload[1] & ~(HOTSPOT_COMPILED | HOTSPOT_STUB);
	uint64_t method = 0, cm;
	uint16_t code_size;

	/* a longer name is cut */
	interp_read_cstr(&r, f->payload[0], name, sizeof(name));
	if (!name[0])
		return -EFAULT;
	if (!strcmp(name, "native nmethod") && vm->nm_method &&
	    !hs_rd64(read, arg, pid, blob + vm->nm_method, &method) && method &&
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
