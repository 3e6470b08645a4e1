// SPDX-License-Identifier: Apache-2.0
/*
 * Minimal kernel BTF for our CO-RE relocations (see kbtf.h).
 *
 * A CO-RE relocation (in the object's .BTF.ext) names a local type and an
 * access string, "0:12:3": an index on the root, then member (or array)
 * indices down the local type.  libbpf finds, in the kernel's BTF, every
 * type of the root's kind and name (ignoring a "___flavour" suffix), and
 * follows the access by member name, looking through anonymous structs and
 * unions.  We follow the same path, mark each kernel member it crosses,
 * and write a BTF that has, for every struct or union on a path, the same
 * name and size and only the marked members, at their own offsets.
 * Typedefs, modifiers, integers, enums and arrays on the way are copied;
 * pointers become pointers to void (CO-RE does not look through them).
 */
#include "kbtf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "arr.h"
#include "elfmap.h"


/* enum bpf_core_relo_kind, include/uapi/linux/bpf.h */
#define RELO_FIELD_LAST 5    /* BYTE_OFFSET .. RSHIFT_U64: a field */
#define RELO_TYPE_ID_LOCAL 6 /* needs nothing of the kernel */

#define MAX_ACCESS 64

struct mini {
	const struct btf *kern;
	struct btf *out;
	uint32_t ntypes;
	uint32_t *map;	/* kernel id -> id in out, 0 = not yet */
	uint8_t **used; /* per kernel struct/union: its marked members */
	uint32_t *roots;
	uint32_t nroots, roots_cap;
};

/* ---- the object: its .BTF and the CO-RE records of .BTF.ext --------- */

struct obj_btf {
	struct elfm *elf; /* over the caller's bytes */
	struct btf *local;
	const uint8_t *ext;
	size_t ext_len;
	const uint8_t *relo; /* the CO-RE part of .BTF.ext */
	size_t relo_len;
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void obj_close(struct obj_btf *o)
{
	btf__free(o->local);
	elfm_free(o->elf);
	memset(o, 0, sizeof(*o));
}

static int obj_open(const void *obj, size_t len, struct obj_btf *o)
{
	const uint8_t *btf_data = NULL;
	size_t btf_len = 0, hdr_len, off, rlen;
	const Elf64_Shdr *sh;

	memset(o, 0, sizeof(*o));
	if (elfm_open_mem(obj, len, &o->elf))
		goto bad;
	sh = elfm_section(o->elf, ".BTF");
	if (sh && elfm_section_bytes(o->elf, sh, &btf_data, &btf_len))
		goto bad;
	sh = elfm_section(o->elf, ".BTF.ext");
	if (sh && elfm_section_bytes(o->elf, sh, &o->ext, &o->ext_len))
		goto bad;
	if (!btf_data)
		goto bad;
	o->local = btf__new(btf_data, btf_len);
	if (!o->local) {
		o->local = NULL;
		goto bad;
	}
	if (!o->ext)
		return 0; /* no relocations at all */
	/* struct btf_ext_header: magic (16 bits), version, flags (8 each),
	 * hdr_len, then func_info, line_info and (from 32 bytes on)
	 * core_relo offset/length pairs (32 bits each), offsets from the
	 * end of the header */
	if (o->ext_len < 8 || rd32(o->ext) != 0x0001eb9f)
		goto bad;
	hdr_len = rd32(o->ext + 4);
	if (hdr_len < 24 || hdr_len > o->ext_len)
		goto bad;
	if (hdr_len < 32)
		return 0;
	off = rd32(o->ext + 24);
	rlen = rd32(o->ext + 28);
	if (off > o->ext_len - hdr_len || rlen > o->ext_len - hdr_len - off)
		goto bad;
	o->relo = o->ext + hdr_len + off;
	o->relo_len = rlen;
	return 0;
bad:
	obj_close(o);
	return -EINVAL;
}

/* Calls fn for each CO-RE record: (type id, access string, kind). */
typedef int relo_fn(void *arg, const struct btf *local, uint32_t type_id,
		    const char *access, uint32_t kind);

static int each_relo(const struct obj_btf *o, relo_fn *fn, void *arg)
{
	const uint8_t *p = o->relo, *end = o->relo + o->relo_len;
	uint32_t rec_size;
	int n = 0, err;

	if (!o->relo_len)
		return 0;
	if (o->relo_len < 4)
		return -EINVAL;
	rec_size = rd32(p);
	p += 4;
	if (rec_size < 16)
		return -EINVAL;
	while (p < end) {
		uint32_t i, nrec;

		if (end - p < 8)
			return -EINVAL;
		nrec = rd32(p + 4);
		p += 8;
		if (nrec > (size_t)(end - p) / rec_size)
			return -EINVAL;
		for (i = 0; i < nrec; i++, p += rec_size, n++) {
			const char *acc = btf__name_by_offset(o->local, rd32(p + 8));

			if (!acc || !fn)
				continue;
			err = fn(arg, o->local, rd32(p + 4), acc, rd32(p + 12));
			if (err)
				return err;
		}
	}
	return n;
}

int kbtf_count_relos(const void *obj, size_t obj_len)
{
	struct obj_btf o;
	int n = obj_open(obj, obj_len, &o);

	if (n)
		return n;
	n = each_relo(&o, NULL, NULL);
	obj_close(&o);
	return n;
}

/* ---- following an access path ---------------------------------------- */

static const struct btf_type *skip_mods(const struct btf *b, uint32_t id,
					uint32_t *res)
{
	const struct btf_type *t = btf__type_by_id(b, id);
	int guard = 0;

	while (t && (btf_is_mod(t) || btf_is_typedef(t)) && guard++ < 64) {
		id = t->type;
		t = btf__type_by_id(b, id);
	}
	if (res)
		*res = id;
	return t;
}

/* "foo___v2" and "foo" are the same type to CO-RE */
static size_t essential_len(const char *name)
{
	const char *s = strstr(name, "___");

	return s ? (size_t)(s - name) : strlen(name);
}

static int mark(struct mini *m, uint32_t comp, uint32_t idx)
{
	const struct btf_type *t = btf__type_by_id(m->kern, comp);

	if (!m->used[comp]) {
		m->used[comp] = calloc(btf_vlen(t) ? btf_vlen(t) : 1, 1);
		if (!m->used[comp])
			return -ENOMEM;
	}
	m->used[comp][idx] = 1;
	return 0;
}

/* Member `name` of kernel struct/union comp, looking into anonymous
 * members; marks the members crossed.  0, -ENOENT or -ENOMEM. */
static int find_member(struct mini *m, uint32_t comp, const char *name,
		       uint32_t *type, int depth)
{
	const struct btf_type *t = btf__type_by_id(m->kern, comp);
	const struct btf_member *mem = btf_members(t);
	uint16_t i, n = btf_vlen(t);

	if (depth > 32)
		return -ENOENT;
	for (i = 0; i < n; i++) {
		const char *mn = btf__name_by_offset(m->kern, mem[i].name_off);
		const struct btf_type *mt;
		uint32_t sub;
		int err;

		if (mn && *mn) {
			if (strcmp(mn, name))
				continue;
			*type = mem[i].type;
			return mark(m, comp, i);
		}
		mt = skip_mods(m->kern, mem[i].type, &sub);
		if (!mt || !btf_is_composite(mt))
			continue;
		err = find_member(m, sub, name, type, depth + 1);
		if (err == -ENOENT)
			continue;
		return err ? err : mark(m, comp, i);
	}
	return -ENOENT;
}

/* Follow access (after its root index) from local type lid and kernel type
 * kid.  0, -ENOENT (not this candidate) or -ENOMEM. */
static int follow(struct mini *m, const struct btf *local, uint32_t lid,
		  uint32_t kid, const int *acc, int nacc)
{
	int i, err;

	for (i = 1; i < nacc; i++) {
		const struct btf_type *lt = skip_mods(local, lid, &lid);
		const struct btf_type *kt = skip_mods(m->kern, kid, &kid);

		if (!lt || !kt)
			return -ENOENT;
		if (btf_is_composite(lt)) {
			const struct btf_member *lm;
			const char *name;

			if (!btf_is_composite(kt) || acc[i] >= btf_vlen(lt))
				return -ENOENT;
			lm = btf_members(lt) + acc[i];
			name = btf__name_by_offset(local, lm->name_off);
			lid = lm->type;
			if (!name || !*name)
				continue; /* anonymous: the kernel side is found by name */
			err = find_member(m, kid, name, &kid, 0);
			if (err)
				return err;
		} else if (btf_is_array(lt)) {
			if (!btf_is_array(kt))
				return -ENOENT;
			lid = btf_array(lt)->type;
			kid = btf_array(kt)->type;
		} else {
			return -ENOENT;
		}
	}
	return 0;
}

static int add_root(struct mini *m, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < m->nroots; i++)
		if (m->roots[i] == id)
			return 0;
	if (ARR_PUSH(m->roots, m->nroots, m->roots_cap, ARR_NO_LIMIT))
		return -ENOMEM;
	m->roots[m->nroots++] = id;
	return 0;
}

static int parse_access(const char *s, int *acc)
{
	int n = 0;

	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s || v < 0 || v > 0xffff || n == MAX_ACCESS)
			return -EINVAL;
		acc[n++] = (int)v;
		s = *end == ':' ? end + 1 : end;
		if (*end && *end != ':')
			return -EINVAL;
	}
	return n ? n : -EINVAL;
}

struct relo {
	uint32_t type_id;
	const char *lname; /* the root's name */
	size_t elen;	   /* its essential length */
	uint16_t kind;	   /* its BTF kind */
	int acc[MAX_ACCESS], nacc;
	bool found;
};

struct relos {
	struct relo *v;
	uint32_t n, cap;
};

static int on_relo(void *arg, const struct btf *local, uint32_t type_id,
		   const char *access, uint32_t kind)
{
	struct relos *rs = arg;
	const struct btf_type *lt = btf__type_by_id(local, type_id);
	struct relo *r;

	if (kind == RELO_TYPE_ID_LOCAL)
		return 0;
	if (kind > RELO_FIELD_LAST)
		return -ENOTSUP; /* type, enum and match relocations */
	if (ARR_PUSH(rs->v, rs->n, rs->cap, ARR_NO_LIMIT))
		return -ENOMEM;
	r = &rs->v[rs->n];
	memset(r, 0, sizeof(*r));
	r->type_id = type_id;
	if (!lt || !(r->lname = btf__name_by_offset(local, lt->name_off)) ||
	    !*r->lname)
		return -EINVAL;
	r->elen = essential_len(r->lname);
	r->kind = btf_kind(lt);
	r->nacc = parse_access(access, r->acc);
	if (r->nacc < 0)
		return r->nacc;
	rs->n++;
	return 0;
}

/* One pass over the kernel's types: each is a candidate for the
 * relocations whose root has its kind and essential name. */
static int match_all(struct mini *m, const struct btf *local,
		     struct relos *rs)
{
	uint32_t id, i;
	int err;

	for (id = 1; id < m->ntypes; id++) {
		const struct btf_type *kt = btf__type_by_id(m->kern, id);
		const char *kname;
		size_t klen;

		if (!kt->name_off)
			continue;
		kname = NULL;
		klen = 0;
		for (i = 0; i < rs->n; i++) {
			struct relo *r = &rs->v[i];

			if (r->kind != btf_kind(kt))
				continue;
			if (!kname) {
				kname = btf__name_by_offset(m->kern, kt->name_off);
				if (!kname)
					break;
				klen = essential_len(kname);
			}
			if (klen != r->elen || strncmp(kname, r->lname, klen))
				continue;
			err = follow(m, local, r->type_id, id, r->acc, r->nacc);
			if (err == -ENOENT)
				continue;
			if (err || (err = add_root(m, id)))
				return err;
			r->found = true;
		}
	}
	for (i = 0; i < rs->n; i++)
		if (!rs->v[i].found)
			return -ENOENT;
	return 0;
}

/* ---- writing the result ---------------------------------------------- */

static const char *name_or_null(const struct btf *b, uint32_t off)
{
	const char *s = btf__name_by_offset(b, off);

	return s && *s ? s : NULL;
}

static int emit(struct mini *m, uint32_t id, int depth);

static int emit_composite(struct mini *m, uint32_t id, int depth)
{
	const struct btf_type *t = btf__type_by_id(m->kern, id);
	const struct btf_member *mem = btf_members(t);
	uint16_t i, n = btf_vlen(t);
	const uint8_t *used = m->used[id];
	int *types = NULL, r = 0;

	if (used && n) {
		types = calloc(n, sizeof(*types));
		if (!types)
			return -ENOMEM;
		/* member types first: a struct's fields follow it directly */
		for (i = 0; i < n && r >= 0; i++)
			if (used[i])
				r = types[i] = emit(m, mem[i].type, depth + 1);
	}
	if (r >= 0)
		r = btf_is_struct(t) ?
			    btf__add_struct(m->out, name_or_null(m->kern, t->name_off), t->size) :
			    btf__add_union(m->out, name_or_null(m->kern, t->name_off), t->size);
	for (i = 0; used && i < n && r >= 0; i++) {
		int e;

		if (!used[i])
			continue;
		e = btf__add_field(m->out, name_or_null(m->kern, mem[i].name_off),
				   types[i], btf_member_bit_offset(t, i),
				   btf_member_bitfield_size(t, i));
		if (e < 0)
			r = e;
	}
	free(types);
	return r;
}

static int emit_enum(struct mini *m, const struct btf_type *t)
{
	const char *name = name_or_null(m->kern, t->name_off);
	uint16_t i, n = btf_vlen(t);
	int r, e = 0;

	if (btf_is_enum(t)) {
		const struct btf_enum *v = btf_enum(t);

		r = btf__add_enum(m->out, name, t->size);
		for (i = 0; i < n && r >= 0 && e >= 0; i++)
			e = btf__add_enum_value(m->out,
						btf__name_by_offset(m->kern, v[i].name_off),
						v[i].val);
	} else {
		const struct btf_enum64 *v = btf_enum64(t);

		r = btf__add_enum64(m->out, name, t->size, btf_kflag(t));
		for (i = 0; i < n && r >= 0 && e >= 0; i++)
			e = btf__add_enum64_value(m->out,
						  btf__name_by_offset(m->kern, v[i].name_off),
						  btf_enum64_value(v + i));
	}
	return e < 0 ? e : r;
}

/* The id in out of kernel type id, written on first use. */
static int emit(struct mini *m, uint32_t id, int depth)
{
	const struct btf_type *t;
	const char *name;
	int r, ref;

	if (id == 0)
		return 0;
	if (id >= m->ntypes || depth > 64)
		return -EINVAL;
	if (m->map[id])
		return (int)m->map[id];
	t = btf__type_by_id(m->kern, id);
	name = name_or_null(m->kern, t->name_off);
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		if (btf_int_offset(t))
			return -ENOTSUP;
		r = btf__add_int(m->out, name, t->size, btf_int_encoding(t));
		break;
	case BTF_KIND_FLOAT:
		r = btf__add_float(m->out, name, t->size);
		break;
	case BTF_KIND_PTR:
		r = btf__add_ptr(m->out, 0);
		break;
	case BTF_KIND_FWD:
		r = btf__add_fwd(m->out, name,
				 btf_kflag(t) ? BTF_FWD_UNION : BTF_FWD_STRUCT);
		break;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		r = emit_enum(m, t);
		break;
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = btf_array(t);
		int idx = emit(m, a->index_type, depth + 1);

		ref = idx < 0 ? idx : emit(m, a->type, depth + 1);
		r = ref < 0 ? ref : btf__add_array(m->out, idx, ref, a->nelems);
		break;
	}
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		ref = emit(m, t->type, depth + 1);
		if (ref < 0)
			return ref;
		switch (btf_kind(t)) {
		case BTF_KIND_TYPEDEF:
			r = btf__add_typedef(m->out, name, ref);
			break;
		case BTF_KIND_VOLATILE:
			r = btf__add_volatile(m->out, ref);
			break;
		case BTF_KIND_CONST:
			r = btf__add_const(m->out, ref);
			break;
		case BTF_KIND_RESTRICT:
			r = btf__add_restrict(m->out, ref);
			break;
		default:
			r = btf__add_type_tag(m->out, name, ref);
		}
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		r = emit_composite(m, id, depth);
		break;
	default:
		return -ENOTSUP; /* functions, variables: never on a field path */
	}
	if (r > 0)
		m->map[id] = (uint32_t)r;
	return r;
}

int kbtf_minimize(const void *obj, size_t obj_len, const struct btf *kernel,
		  void **out, size_t *out_len)
{
	struct mini m = { .kern = kernel };
	struct relos rs = { 0 };
	struct obj_btf o;
	const void *raw;
	uint32_t i, size;
	int err;

	*out = NULL;
	*out_len = 0;
	err = obj_open(obj, obj_len, &o);
	if (err)
		return err;
	m.ntypes = btf__type_cnt(kernel);
	m.map = calloc(m.ntypes, sizeof(*m.map));
	m.used = calloc(m.ntypes, sizeof(*m.used));
	m.out = btf__new_empty();
	if (!m.map || !m.used || !m.out) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = each_relo(&o, on_relo, &rs);
	if (err < 0)
		goto cleanup;
	err = match_all(&m, o.local, &rs);
	if (err)
		goto cleanup;
	for (i = 0; i < m.nroots && !err; i++) {
		int r = emit(&m, m.roots[i], 0);

		err = r < 0 ? r : 0;
	}
	if (err)
		goto cleanup;
	raw = btf__raw_data(m.out, &size);
	if (!raw || !(*out = malloc(size))) {
		err = -ENOMEM;
		goto cleanup;
	}
	memcpy(*out, raw, size);
	*out_len = size;
cleanup:
	if (m.used)
		for (i = 0; i < m.ntypes; i++)
			free(m.used[i]);
	free(m.used);
	free(m.map);
	free(m.roots);
	free(rs.v);
	if (m.out)
		btf__free(m.out);
	obj_close(&o);
	return err;
}

int kbtf_build(const void *obj, size_t obj_len, void **out, size_t *out_len)
{
	struct btf *kernel = btf__load_vmlinux_btf();
	int err;

	*out = NULL;
	*out_len = 0;
	if (!kernel)
		return -errno ? -errno : -ENOENT;
	err = kbtf_minimize(obj, obj_len, kernel, out, out_len);
	btf__free(kernel);
	return err;
}

/* ---- the key ----------------------------------------------------------- */

/* The kernel's GNU build id from /sys/kernel/notes, or 0 bytes. */
static size_t kernel_build_id(uint8_t *id, size_t cap)
{
	uint8_t buf[4096];
	const uint8_t *desc;
	size_t len;
	ssize_t n;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0 ||
	    elfm_find_note(buf, (size_t)n, "GNU", NT_GNU_BUILD_ID, &desc, &len))
		return 0;
	if (len > cap)
		len = cap;
	memcpy(id, desc, len);
	return len;
}

int kbtf_key(const void *obj, size_t obj_len, struct file_id *out)
{
	char buf[1024], hex[41] = "";
	uint8_t bid[20];
	struct file_id oid;
	struct utsname u;
	struct stat st;
	size_t i, n = kernel_build_id(bid, sizeof(bid));
	int err, len;

	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	if (uname(&u))
		return -errno;
	if (stat("/sys/kernel/btf/vmlinux", &st))
		return -errno;
	err = fileid_from_mem(obj, obj_len, &oid);
	if (err)
		return err;
	len = snprintf(buf, sizeof(buf), "kernel-types 1|%s|%s|%s|%s|%lld|",
		       hex, u.release, u.version, u.machine,
		       (long long)st.st_size);
	if (len < 0 || (size_t)len + sizeof(oid.b) > sizeof(buf))
		return -EOVERFLOW;
	memcpy(buf + len, oid.b, sizeof(oid.b));
	return fileid_from_mem(buf, (size_t)len + sizeof(oid.b), out);
}
