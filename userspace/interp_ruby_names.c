// SPDX-License-Identifier: Apache-2.0
/*
 * Ruby's frames named from a process' memory (the frames: bpf/ruby.h): an
 * iseq's label and file, its line from the pc through the iseq's
 * instruction table (its succinct index), its method's class from the
 * method entry's owner (the class's __classpath__, or 3.3+'s classext);
 * a C function's method name (its ID, through ruby_global_symbols), its
 * class and the C function's own name where the file's symbols have it.
 * Every read goes through the caller's reader (a live process, or a
 * fuzzer's image) and every pointer followed may be anything.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "interp_ruby_int.h"
#include "ruby.h"

/* RBasic.flags: the type, and the user flags these layouts use */
#define T_MASK 0x1f
#define T_STRING 0x05
#define T_ARRAY 0x07
#define FL_USER1 (1ull << 13)
#define RSTRING_EMBED_SHIFT 14 /* before 3.2: the length in the flags */
#define RSTRING_EMBED_MASK 0x1f
#define RARRAY_EMBED_SHIFT 15
#define RARRAY_EMBED_MASK 0x7f

/* A String's text into out (cut at n - 1 bytes).  0, or an error. */
static int read_rstring(const struct interp_reader *r,
			const struct ruby_offsets *o, uint64_t str, char *out,
			size_t n)
{
	uint64_t flags = interp_rd64(r, str), len, ptr;
	int err;

	out[0] = 0;
	if (!str || (str & 7) || (flags & T_MASK) != T_STRING)
		return -EINVAL;
	if (o->rstring_v32) {
		len = interp_rd64(r, str + 16);
		ptr = flags & FL_USER1 ? interp_rd64(r, str + 24) : str + 24;
	} else if (flags & FL_USER1) {
		len = interp_rd64(r, str + 16);
		ptr = interp_rd64(r, str + 24);
	} else {
		len = (flags >> RSTRING_EMBED_SHIFT) & RSTRING_EMBED_MASK;
		ptr = str + 16;
	}
	if (len > (1u << 20))
		return -EINVAL;
	if (len >= n)
		len = n - 1;
	err = len ? interp_rd(r, ptr, out, len) : 0;
	if (err)
		return err;
	out[len] = 0;
	return strlen(out) == len ? 0 : -EINVAL;
}

/* Element i of an Array, 0 when out of it or unreadable. */
static uint64_t rarray_at(const struct interp_reader *r, uint64_t ary,
			  uint64_t i)
{
	uint64_t flags = interp_rd64(r, ary);

	if (!ary || (ary & 7) || (flags & T_MASK) != T_ARRAY)
		return 0;
	if (flags & FL_USER1) {
		if (i >= ((flags >> RARRAY_EMBED_SHIFT) & RARRAY_EMBED_MASK))
			return 0;
		return interp_rd64(r, ary + 16 + 8 * i);
	}
	if (i >= interp_rd64(r, ary + 16))
		return 0;
	return interp_rd64(r, interp_rd64(r, ary + 32) + 8 * i);
}

/* The name of an ID, through ruby_global_symbols (last_id: u32 at 0; ids
 * at 16: an Array of Arrays of ID_ENTRY_UNIT (str, sym) pairs). */
#define ID_ENTRY_UNIT 512
static int id_name(const struct interp_reader *r, const struct ruby_offsets *o,
		   uint64_t gs, uint64_t id, char *out, size_t n)
{
	uint64_t serial, ids, chunk;
	uint32_t last = 0;

	out[0] = 0;
	if (!gs || !id || !o->id_shift)
		return -ENOENT;
	serial = id > o->last_op_id ? id >> o->id_shift : id;
	if (interp_rd(r, gs, &last, 4) || !serial || serial > last)
		return -ENOENT;
	ids = interp_rd64(r, gs + 16);
	chunk = rarray_at(r, ids, serial / ID_ENTRY_UNIT);
	return read_rstring(r, o, rarray_at(r, chunk,
					    (serial % ID_ENTRY_UNIT) * 2),
			    out, n);
}

/* Bits of the succinct index table (iseq.c, VM_INSN_INFO_TABLE_IMPL 2):
 * the rank of the first 54 positions in 7-bit fields of six words, then
 * blocks of 512 bits, each a rank, seven 9-bit ranks of its 64-bit words
 * and the words. */
#define SUCC_IMM 54
#define SUCC_BLOCK_BITS 512
#define SUCC_BLOCK_SIZE 80 /* rank (4, padded), small ranks (8), bits (64) */
static int succ_rank(const struct interp_reader *r, uint64_t sd, uint64_t x,
		     uint32_t *rank)
{
	uint64_t imm, blk, word, small, bits;
	uint32_t base = 0, i, b;

	if (x < SUCC_IMM) {
		if (interp_rd(r, sd + 8 * (x / 9), &imm, 8))
			return -EFAULT;
		*rank = (uint32_t)(imm >> (7 * (x % 9))) & 0x7f;
		return 0;
	}
	x -= SUCC_IMM;
	blk = sd + 8 * (SUCC_IMM / 9) + SUCC_BLOCK_SIZE * (x / SUCC_BLOCK_BITS);
	b = x % SUCC_BLOCK_BITS;
	i = b / 64;
	if (interp_rd(r, blk, &base, 4) || interp_rd(r, blk + 8, &small, 8) ||
	    interp_rd(r, blk + 16 + 8 * i, &word, 8))
		return -EFAULT;
	bits = word << (63 - b % 64);
	*rank = base + (i ? (uint32_t)(small >> (9 * (i - 1))) & 0x1ff : 0) +
		(uint32_t)__builtin_popcountll(bits);
	return 0;
}

uint32_t ruby_iseq_line(interp_read_fn read, void *arg, pid_t pid,
			const struct ruby_offsets *o, uint64_t iseq, uint64_t pc)
{
	const struct interp_reader r = { read, arg, pid };
	uint64_t body = interp_rd64(&r, iseq + o->iseq_body);
	uint64_t enc, pos, info, succ, positions, first;
	uint32_t size = 0, idx = 0, p, line = 0;
	int32_t l;

	if (!body)
		return 0;
	enc = interp_rd64(&r, body + o->body_encoded);
	info = interp_rd64(&r, body + o->body_info);
	positions = interp_rd64(&r, body + o->body_positions);
	succ = interp_rd64(&r, body + o->body_succ);
	if (interp_rd(&r, body + o->body_info_size, &size, 4) || !info ||
	    !size || size > (1u << 24))
		goto first;
	/* the pc is past the instruction that runs (it points at the next
	 * one once the instruction started): the position before it */
	pos = pc > enc ? (pc - enc) / 8 : 0;
	if (pos)
		pos--;
	if (size == 1) {
		idx = 0;
	} else if (positions) {
		/* the last entry at or before pos (few: a linear walk) */
		for (idx = 0; idx + 1 < size && idx < 4096; idx++)
			if (interp_rd(&r, positions + 4 * (idx + 1), &p, 4) ||
			    p > pos)
				break;
	} else if (succ && pos < (1u << 24)) {
		if (succ_rank(&r, succ, pos, &idx) || !idx || idx > size)
			goto first;
		idx--;
	} else {
		goto first;
	}
	if (interp_rd(&r, info + (uint64_t)idx * o->info_entry_size, &l, 4) ||
	    l <= 0)
		goto first;
	return (uint32_t)l;
first:
	/* the iseq's first line: a Fixnum, or an int from 3.2 */
	first = interp_rd64(&r, body + o->body_first_line);
	l = o->first_line_int ? (int32_t)(uint32_t)first :
				(int32_t)(first >> 1);
	line = l > 0 ? (uint32_t)l : 0;
	return line;
}

/* Where a class keeps its instance variables (3.1: classext->iv_tbl, an
 * st_table of entries {hash, key, record}) and the two it is named by. */
#define T_CLASS 0x02
#define T_MODULE 0x03
#define T_IMEMO 0x1a
#define T_ICLASS 0x1c
#define FL_SINGLETON (1ull << 12)
#define IMEMO_MENT 6
#define ST_ENTRIES_MAX 64
static uint64_t class_ivar(const struct interp_reader *r,
			   const struct ruby_offsets *o, uint64_t klass,
			   uint64_t id)
{
	uint64_t ext = interp_rd64(r, klass + o->class_ext);
	uint64_t tbl, start, bound, i;
	uint64_t ent[3 * ST_ENTRIES_MAX];

	tbl = ext ? interp_rd64(r, ext + o->ext_iv_tbl) : 0;
	if (!tbl || !id)
		return 0;
	start = interp_rd64(r, tbl + 32);
	bound = interp_rd64(r, tbl + 40);
	if (bound <= start || bound - start > ST_ENTRIES_MAX ||
	    interp_rd(r, interp_rd64(r, tbl + 48) + 24 * start, ent,
		      24 * (bound - start)))
		return 0;
	for (i = 0; i < bound - start; i++)
		if (ent[3 * i + 1] == id)
			return ent[3 * i + 2];
	return 0;
}

/* A class's path or (a singleton class's) attached object, as the
 * version keeps them; 0 when unknown. */
static uint64_t class_var(const struct interp_reader *r,
			  const struct ruby_offsets *o,
			  const struct ruby_namer *nm, uint64_t klass,
			  bool attached)
{
	switch (o->class_mode) {
	case RUBY_CLASS_IVAR:
		return class_ivar(r, o, klass,
				  attached ? nm->attached_id : nm->classpath_id);
	case RUBY_CLASS_EXT:
		return interp_rd64(r, klass + o->class_ext +
					      (attached ? o->ext_attached :
							  o->ext_classpath));
	}
	return 0;
}

/* A class's or module's path ("Foo::Bar") into out; a singleton class
 * gives its object's (a class's) path and *singleton.  0 or an error. */
static int class_path(const struct interp_reader *r,
		      const struct ruby_offsets *o, const struct ruby_namer *nm,
		      uint64_t klass, char *out, size_t n, bool *singleton)
{
	uint64_t flags = interp_rd64(r, klass);

	out[0] = 0;
	if ((flags & T_MASK) == T_ICLASS) {
		/* a module's proxy in an ancestry: RBasic.klass is it */
		klass = interp_rd64(r, klass + 8);
		flags = interp_rd64(r, klass);
	}
	if ((flags & T_MASK) != T_CLASS && (flags & T_MASK) != T_MODULE)
		return -EINVAL;
	if (flags & FL_SINGLETON) {
		klass = class_var(r, o, nm, klass, true);
		flags = interp_rd64(r, klass);
		if ((flags & T_MASK) != T_CLASS && (flags & T_MASK) != T_MODULE)
			return -EINVAL;
		*singleton = true;
	}
	return read_rstring(r, o, class_var(r, o, nm, klass, false), out, n);
}

/* The class part of a method's name from its method entry (an imemo
 * ment; anything else gives ""): "Foo#" or "Foo." into out. */
static void method_class(const struct interp_reader *r,
			 const struct ruby_offsets *o,
			 const struct ruby_namer *nm, uint64_t me, char *out,
			 size_t n)
{
	uint64_t flags = me ? interp_rd64(r, me) : 0;
	bool singleton = false;
	char path[94];

	out[0] = 0;
	if (!nm || o->class_mode == RUBY_CLASS_NONE ||
	    (o->class_mode == RUBY_CLASS_IVAR && !nm->classpath_id) ||
	    (flags & T_MASK) != T_IMEMO ||
	    ((flags >> 12) & 0xf) != IMEMO_MENT ||
	    class_path(r, o, nm, interp_rd64(r, me + o->me_owner), path,
		       sizeof(path), &singleton) ||
	    !path[0])
		return;
	snprintf(out, n, "%s%c", path, singleton ? '.' : '#');
}

int ruby_frame_name(interp_read_fn read, void *arg, pid_t pid,
		    const struct ruby_offsets *o, const struct ruby_namer *nm,
		    const struct interp_frame *f, struct interp_symbol *out)
{
	const struct interp_reader r = { read, arg, pid };
	uint64_t obj = f->n_payload ? f->payload[0] : 0, body, path, def;
	uint64_t id;
	const char *cname = NULL, *in;
	char mname[128], cls[96], label[160];

	out->name[0] = out->file[0] = 0;
	out->line = 0;
	if (!obj)
		return -EINVAL;
	if (RUBY_FRAME_KIND(f->data) == RUBY_FRAME_CFUNC) {
		def = interp_rd64(&r, obj + o->me_def);
		if (!def)
			return -EFAULT;
		out->address = interp_rd64(&r, def + o->def_func);
		id = interp_rd64(&r, def + o->def_original_id);
		if (!id)
			id = interp_rd64(&r, obj + o->me_called_id);
		if (!nm || id_name(&r, o, nm->global_symbols, id, mname,
				   sizeof(mname)))
			mname[0] = 0;
		if (nm && nm->cfunc && out->address)
			cname = nm->cfunc(nm->cfunc_arg, out->address);
		method_class(&r, o, nm, obj, cls, sizeof(cls));
		if (mname[0] && cname)
			snprintf(out->name, sizeof(out->name), "%s%s [%s]", cls,
				 mname, cname);
		else if (mname[0])
			snprintf(out->name, sizeof(out->name), "%s%s", cls, mname);
		else
			snprintf(out->name, sizeof(out->name), "%s",
				 cname ? cname : "<unknown cfunc>");
		return 0;
	}
	if (RUBY_FRAME_KIND(f->data) != RUBY_FRAME_ISEQ)
		return -EINVAL;
	body = interp_rd64(&r, obj + o->iseq_body);
	if (!body)
		return -EFAULT;
	out->address = f->n_payload > 1 ? f->payload[1] : 0;
	if (read_rstring(&r, o, interp_rd64(&r, body + o->body_label), label,
			 sizeof(label)))
		snprintf(label, sizeof(label), "<unknown>");
	/* "Foo#m", "block in Foo#m": the class before the method's label */
	method_class(&r, o, nm, RUBY_FRAME_ME(f->data), cls, sizeof(cls));
	in = strncmp(label, "block ", 6) ? NULL : strstr(label, " in ");
	if (cls[0] && in)
		snprintf(out->name, sizeof(out->name), "%.*s in %s%s",
			 (int)(in - label), label, cls, in + 4);
	else if (cls[0] && label[0] != '<')
		snprintf(out->name, sizeof(out->name), "%s%s", cls, label);
	else
		snprintf(out->name, sizeof(out->name), "%s", label);
	path = interp_rd64(&r, body + o->body_path);
	if (path && (interp_rd64(&r, path) & T_MASK) == T_ARRAY)
		path = rarray_at(&r, path, 0);
	read_rstring(&r, o, path, out->file, sizeof(out->file));
	out->line = ruby_iseq_line(read, arg, pid, o, obj, out->address);
	return 0;
}

/* The IDs classes are named by ("__classpath__", "__attached__"): the
 * VM interns them as it boots, among its first few hundred IDs; looked
 * up by their text in the ID table.  0 or -ENOENT. */
#define RUBY_IDS_SEARCHED 2048
int ruby_find_class_ids(interp_read_fn read, void *arg, pid_t pid,
			const struct ruby_offsets *o, uint64_t gs,
			uint64_t *classpath, uint64_t *attached)
{
	const struct interp_reader r = { read, arg, pid };
	uint64_t ids, chunk = 0, serial, sym;
	uint32_t last = 0;
	char text[32];

	*classpath = *attached = 0;
	if (!gs || interp_rd(&r, gs, &last, 4))
		return -ENOENT;
	ids = interp_rd64(&r, gs + 16);
	for (serial = 1; serial <= last && serial < RUBY_IDS_SEARCHED; serial++) {
		if (serial == 1 || serial % ID_ENTRY_UNIT == 0)
			chunk = rarray_at(&r, ids, serial / ID_ENTRY_UNIT);
		sym = rarray_at(&r, chunk, (serial % ID_ENTRY_UNIT) * 2 + 1);
		/* a static Symbol: its ID above the flag byte */
		if ((sym & 0xff) != 0x0c ||
		    read_rstring(&r, o, rarray_at(&r, chunk,
						  (serial % ID_ENTRY_UNIT) * 2),
				 text, sizeof(text)))
			continue;
		if (!strcmp(text, "__classpath__"))
			*classpath = sym >> 8;
		else if (!strcmp(text, "__attached__"))
			*attached = sym >> 8;
		if (*classpath && *attached)
			return 0;
	}
	return *classpath ? 0 : -ENOENT;
}
