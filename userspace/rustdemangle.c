// SPDX-License-Identifier: Apache-2.0
/*
 * Rust v0 symbol demangler, written from the grammar of RFC 2603 ("Rust
 * Symbol Name Mangling v0") and its later additions in the rustc book
 * (structured constants), printing what rustc-demangle's alternate form
 * prints.  The grammar productions are quoted above the functions that parse
 * them.
 *
 * Two passes over the name.  The first only parses: back references are
 * checked to point backwards, not followed, so it takes time linear in the
 * name and decides whether the name is v0 at all.  The second prints and
 * follows back references; a short name whose back references point at
 * other back references can expand enormously, so the second pass stops
 * when the output is full or after RDM_MAX_WORK bytes of name read.  Both
 * passes bound their recursion by RDM_MAX_DEPTH.
 */
#include "rustdemangle.h"
#include "rustdemangle_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ---- paths and types ------------------------------------------------------------- */

/* {<item>} "E", printed with sep between the items */
int rdm_list(struct rdm *d, const char *sep, item_fn *item, uint64_t *count)
{
	uint64_t k;

	for (k = 0; !rdm_eat(d, 'E'); k++) {
		if (k)
			TRY(rdm_put_str(d, sep));
		TRY(item(d));
	}
	if (count)
		*count = k;
	return 0;
}

/* "(" <item> {", " <item>} ")" up to the "E": a 1-tuple keeps its comma,
 * "(a,)". */
int rdm_tuple(struct rdm *d, item_fn *item)
{
	uint64_t count;

	TRY(rdm_put_str(d, "("));
	TRY(rdm_list(d, ", ", item, &count));
	return rdm_put_str(d, count == 1 ? ",)" : ")");
}

/* <lifetime> = "L" <base-62-number>, the "L" eaten */
static int lifetime(struct rdm *d, uint64_t *lt)
{
	return rdm_base62(d, lt);
}

/* <generic-arg> = <lifetime> | <type> | "K" <const> */
static int generic_arg(struct rdm *d)
{
	uint64_t lt;

	if (rdm_eat(d, 'L')) {
		TRY(lifetime(d, &lt));
		return rdm_put_lifetime(d, lt);
	}
	if (rdm_eat(d, 'K'))
		return rdm_cnst(d, false);
	return rdm_type(d);
}

/* A path in type position that may end in generic arguments left open
 * (d->args_open), for the associated type bindings of a dyn trait to
 * join; a follow_fn for the back reference to such a path. */
static int path_open(struct rdm *d, bool value)
{
	(void)value;
	d->args_open = false;
	if (rdm_eat(d, 'B'))
		return rdm_backref(d, path_open, false);
	if (rdm_eat(d, 'I')) {
		TRY(rdm_path(d, false));
		TRY(rdm_put_str(d, "<"));
		TRY(rdm_list(d, ", ", generic_arg, NULL));
		d->args_open = true;
		return 0;
	}
	TRY(rdm_path(d, false));
	/* a dyn trait in the path's arguments may have set it */
	d->args_open = false;
	return 0;
}

/*
 * <dyn-trait> = <path> {<dyn-trait-assoc-binding>}
 * <dyn-trait-assoc-binding> = "p" <undisambiguated-identifier> <type>
 */
static int dyn_trait(struct rdm *d)
{
	struct ident id;
	bool open;

	TRY(path_open(d, false));
	open = d->args_open;
	while (rdm_eat(d, 'p')) {
		TRY(rdm_put_str(d, open ? ", " : "<"));
		open = true;
		TRY(rdm_ident(d, &id));
		TRY(rdm_put_ident(d, &id));
		TRY(rdm_put_str(d, " = "));
		TRY(rdm_type(d));
	}
	return open ? rdm_put_str(d, ">") : 0;
}

/*
 * <path> = "C" <identifier>                    crate root
 *        | "M" <impl-path> <type>              <T>
 *        | "X" <impl-path> <type> <path>       <T as Trait>
 *        | "Y" <type> <path>                   <T as Trait>
 *        | "N" <namespace> <path> <identifier> ...::name
 *        | "I" <path> {<generic-arg>} "E"      ...<T, U>
 *        | <backref>
 * <identifier> = [<disambiguator>] <undisambiguated-identifier>
 * <impl-path> = [<disambiguator>] <path>
 *
 * value: the path names a value (a function, a static), so its generic
 * arguments print as ::<...>; in a type they print as <...>.
 */
int rdm_path(struct rdm *d, bool value)
{
	struct ident id;
	uint64_t dis;
	char tag, ns;
	int err;

	TRY(rdm_enter(d));
	TRY(rdm_next(d, &tag));
	switch (tag) {
	case 'C':
		/* the disambiguator is the crate hash, left out */
		TRY(rdm_opt_base62(d, 's', &dis));
		TRY(rdm_ident(d, &id));
		TRY(rdm_put_ident(d, &id));
		break;
	case 'N':
		TRY(rdm_next(d, &ns));
		if (!is_upper(ns) && !is_lower(ns))
			return -EINVAL;
		TRY(rdm_path(d, value));
		TRY(rdm_opt_base62(d, 's', &dis));
		TRY(rdm_ident(d, &id));
		if (is_upper(ns)) {
			/* special namespaces: closures, shims, ... */
			TRY(rdm_put_str(d, "::{"));
			if (ns == 'C')
				TRY(rdm_put_str(d, "closure"));
			else if (ns == 'S')
				TRY(rdm_put_str(d, "shim"));
			else
				TRY(rdm_put(d, &ns, 1));
			if (!rdm_ident_empty(&id)) {
				TRY(rdm_put_str(d, ":"));
				TRY(rdm_put_ident(d, &id));
			}
			TRY(rdm_put_str(d, "#"));
			TRY(rdm_put_num(d, dis, 10));
			TRY(rdm_put_str(d, "}"));
		} else if (!rdm_ident_empty(&id)) {
			TRY(rdm_put_str(d, "::"));
			TRY(rdm_put_ident(d, &id));
		}
		break;
	case 'M':
	case 'X':
	case 'Y':
		if (tag != 'Y') {
			/* the impl block's own path does not print */
			TRY(rdm_opt_base62(d, 's', &dis));
			d->skip++;
			err = rdm_path(d, false);
			d->skip--;
			TRY(err);
		}
		TRY(rdm_put_str(d, "<"));
		TRY(rdm_type(d));
		if (tag != 'M') {
			TRY(rdm_put_str(d, " as "));
			TRY(rdm_path(d, false));
		}
		TRY(rdm_put_str(d, ">"));
		break;
	case 'I':
		TRY(rdm_path(d, value));
		TRY(rdm_put_str(d, value ? "::<" : "<"));
		TRY(rdm_list(d, ", ", generic_arg, NULL));
		TRY(rdm_put_str(d, ">"));
		break;
	case 'B':
		TRY(rdm_backref(d, rdm_path, value));
		break;
	default:
		return -EINVAL;
	}
	d->depth--;
	return 0;
}

static const char *basic_type(char tag)
{
	switch (tag) {
	case 'a': return "i8";
	case 'b': return "bool";
	case 'c': return "char";
	case 'd': return "f64";
	case 'e': return "str";
	case 'f': return "f32";
	case 'h': return "u8";
	case 'i': return "isize";
	case 'j': return "usize";
	case 'l': return "i32";
	case 'm': return "u32";
	case 'n': return "i128";
	case 'o': return "u128";
	case 'p': return "_";
	case 's': return "i16";
	case 't': return "u16";
	case 'u': return "()";
	case 'v': return "...";
	case 'x': return "i64";
	case 'y': return "u64";
	case 'z': return "!";
	default: return NULL;
	}
}

/* <fn-sig> = [<binder>] ["U"] ["K" <abi>] {<type>} "E" <type>
 * <abi> = "C" | <undisambiguated-identifier> */
static int fn_sig(struct rdm *d)
{
	struct ident abi = { 0 };
	uint64_t nb;
	bool is_unsafe, has_abi;
	size_t i;

	TRY(rdm_binder_open(d, &nb));
	is_unsafe = rdm_eat(d, 'U');
	has_abi = rdm_eat(d, 'K');
	if (has_abi) {
		if (rdm_eat(d, 'C')) {
			abi.ascii = "C";
			abi.nascii = 1;
		} else {
			TRY(rdm_ident(d, &abi));
			if (!abi.nascii || abi.npuny)
				return -EINVAL;
		}
	}
	if (is_unsafe)
		TRY(rdm_put_str(d, "unsafe "));
	if (has_abi) {
		/* '-' in an ABI name ("C-unwind") is mangled as '_' */
		TRY(rdm_put_str(d, "extern \""));
		for (i = 0; i < abi.nascii; i++)
			TRY(rdm_put(d,
				    abi.ascii[i] == '_' ? "-" : abi.ascii + i, 1));
		TRY(rdm_put_str(d, "\" "));
	}
	TRY(rdm_put_str(d, "fn("));
	TRY(rdm_list(d, ", ", rdm_type, NULL));
	TRY(rdm_put_str(d, ")"));
	if (!rdm_eat(d, 'u')) {
		TRY(rdm_put_str(d, " -> "));
		TRY(rdm_type(d));
	}
	rdm_binder_close(d, nb);
	return 0;
}

/* "D" <dyn-bounds> <lifetime>, the "D" eaten
 * <dyn-bounds> = [<binder>] {<dyn-trait>} "E" */
static int dyn_type(struct rdm *d)
{
	uint64_t nb, lt;

	TRY(rdm_put_str(d, "dyn "));
	TRY(rdm_binder_open(d, &nb));
	TRY(rdm_list(d, " + ", dyn_trait, NULL));
	rdm_binder_close(d, nb);
	if (!rdm_eat(d, 'L'))
		return -EINVAL;
	TRY(lifetime(d, &lt));
	if (lt) {
		TRY(rdm_put_str(d, " + "));
		TRY(rdm_put_lifetime(d, lt));
	}
	return 0;
}

/* A type behind a back reference (rdm_backref's follow_fn). */
static int type_at(struct rdm *d, bool value)
{
	(void)value;
	return rdm_type(d);
}

/*
 * <type> = <basic-type> | <path>
 *        | "A" <type> <const>          [T; N]
 *        | "S" <type>                  [T]
 *        | "T" {<type>} "E"            (T1, T2, ...)
 *        | "R" [<lifetime>] <type>     &T
 *        | "Q" [<lifetime>] <type>     &mut T
 *        | "P" <type>                  *const T
 *        | "O" <type>                  *mut T
 *        | "F" <fn-sig>
 *        | "D" <dyn-bounds> <lifetime>
 *        | <backref>
 */
int rdm_type(struct rdm *d)
{
	const char *basic;
	uint64_t lt;
	char tag;

	TRY(rdm_next(d, &tag));
	basic = basic_type(tag);
	if (basic)
		return rdm_put_str(d, basic);
	TRY(rdm_enter(d));
	switch (tag) {
	case 'R':
	case 'Q':
		TRY(rdm_put_str(d, "&"));
		if (rdm_eat(d, 'L')) {
			TRY(lifetime(d, &lt));
			if (lt) {
				TRY(rdm_put_lifetime(d, lt));
				TRY(rdm_put_str(d, " "));
			}
		}
		if (tag == 'Q')
			TRY(rdm_put_str(d, "mut "));
		TRY(rdm_type(d));
		break;
	case 'P':
	case 'O':
		TRY(rdm_put_str(d, tag == 'P' ? "*const " : "*mut "));
		TRY(rdm_type(d));
		break;
	case 'A':
	case 'S':
		TRY(rdm_put_str(d, "["));
		TRY(rdm_type(d));
		if (tag == 'A') {
			TRY(rdm_put_str(d, "; "));
			TRY(rdm_cnst(d, true));
		}
		TRY(rdm_put_str(d, "]"));
		break;
	case 'T':
		TRY(rdm_tuple(d, rdm_type));
		break;
	case 'F':
		TRY(fn_sig(d));
		break;
	case 'D':
		TRY(dyn_type(d));
		break;
	case 'B':
		TRY(rdm_backref(d, type_at, false));
		break;
	default:
		d->pos--;
		TRY(rdm_path(d, false));
		break;
	}
	d->depth--;
	return 0;
}
/* ---- the name ----------------------------------------------------------------- */

/* The length of s without a trailing ".llvm.<hex>" (ThinLTO's renames);
 * '@' joins the hex digits in some LLVM versions. */
static size_t strip_llvm(const char *s, size_t n)
{
	const char *l = strstr(s, ".llvm."), *p;

	if (!l)
		return n;
	for (p = l + 6; *p; p++)
		if (!is_digit(*p) && !(*p >= 'a' && *p <= 'f') &&
		    !(*p >= 'A' && *p <= 'F') && *p != '@')
			return n;
	return (size_t)(l - s);
}

/* Length of s[0..n) without a UTF-8 character cut short at its end. */
static size_t utf8_trim(const char *s, size_t n)
{
	size_t i = n, need;
	unsigned char lead;

	while (i > 0 && n - i < 3 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0 || (unsigned char)s[i - 1] < 0xc0)
		return n;
	lead = (unsigned char)s[i - 1];
	need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
	return n - (i - 1) < need ? i - 1 : n;
}

/* <symbol-name> = "_R" <path> [<instantiating-crate>] */
int rdm_demangle(const char *mangled, char *out, size_t out_len)
{
	struct rdm d = { 0 };
	const char *sfx;
	size_t nsfx, i;
	int err;

	if (out_len)
		out[0] = 0;
	if (!mangled || mangled[0] != '_' || mangled[1] != 'R')
		return -EINVAL;
	d.s = mangled + 2;
	for (; d.s[d.len] && d.s[d.len] != '.'; d.len++) {
		char c = d.s[d.len];
		if (!is_digit(c) && !is_lower(c) && !is_upper(c) && c != '_')
			return -EINVAL;
	}
	/* A path starts with an uppercase tag; a digit here would be an
	 * encoding version, and only the unversioned encoding exists. */
	if (!d.len || !is_upper(d.s[0]))
		return -EINVAL;
	sfx = d.s + d.len;
	nsfx = strlen(sfx);
	for (i = 0; i < nsfx; i++)
		if (sfx[i] <= ' ' || sfx[i] > '~')
			return -EINVAL;
	nsfx = strip_llvm(sfx, nsfx);

	/* pass 1: parse only */
	d.skip = 1;
	d.max_work = UINT64_MAX;
	err = rdm_path(&d, true);
	if (!err && d.pos < d.len)
		err = rdm_path(&d, false); /* the instantiating crate */
	if (err || d.pos != d.len)
		return -EINVAL;
	if (!out_len)
		return -ENAMETOOLONG;

	/* pass 2: print */
	d.skip = 0;
	d.pos = 0;
	d.depth = 0;
	d.bound = 0;
	d.work = 0;
	d.max_work = RDM_MAX_WORK;
	d.out = out;
	d.cap = out_len - 1;
	err = rdm_path(&d, true);
	if (!err)
		err = rdm_put(&d, sfx, nsfx);
	if (err == -ENAMETOOLONG)
		d.n = utf8_trim(out, d.n);
	out[err == -EINVAL ? 0 : d.n] = 0;
	return err;
}
