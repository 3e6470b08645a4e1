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

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/*
 * Nesting of paths, types, constants and back references.  rustc-demangle
 * gives up at 500; the deepest of the ~300000 names of rustc's own
 * libraries nests 95 levels, and 256 levels take about 50 KiB of stack
 * (110 KiB with sanitizers).
 */
#define RDM_MAX_DEPTH 256
/* Bytes of name read while printing: a real name reads at most ~3 times
 * as many as it prints, and the most any name of rustc's own libraries
 * reads is ~10000. */
#define RDM_MAX_WORK (1u << 22)
/* Code points of one Punycode identifier decoded in place (4 bytes each, on
 * the stack); a longer one prints as "punycode{...}", as rustc-demangle
 * does past its own limit. */
#define RDM_PUNY_MAX 256

#define TRY(x)                                                                 \
	do {                                                                   \
		int err_ = (x);                                                \
		if (err_)                                                      \
			return err_;                                           \
	} while (0)

struct rdm {
	const char *s; /* the name after "_R" */
	size_t len;    /* up to the suffix */
	size_t pos;
	char *out;
	size_t cap; /* bytes of text out holds (out_len - 1) */
	size_t n;   /* bytes of text written */
	unsigned skip; /* > 0: parse without printing or following back refs */
	unsigned depth;
	uint64_t bound; /* lifetimes bound by the enclosing for<...> */
	uint64_t work, max_work;
};

/* An identifier: plain bytes, or Punycode's basic part and its deltas. */
struct ident {
	const char *ascii, *puny;
	size_t nascii, npuny; /* npuny > 0: Punycode */
};

/* ---- output ------------------------------------------------------------ */

static int put(struct rdm *d, const char *p, size_t n)
{
	size_t room;

	if (d->skip)
		return 0;
	room = d->cap - d->n;
	if (n > room) {
		memcpy(d->out + d->n, p, room);
		d->n = d->cap;
		return -ENAMETOOLONG;
	}
	memcpy(d->out + d->n, p, n);
	d->n += n;
	return 0;
}

static int put_str(struct rdm *d, const char *s)
{
	return put(d, s, strlen(s));
}

static int put_num(struct rdm *d, uint64_t v, unsigned base)
{
	char buf[24];
	size_t i = sizeof(buf);

	do {
		buf[--i] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	return put(d, buf + i, sizeof(buf) - i);
}

static int put_utf8(struct rdm *d, uint32_t c)
{
	char b[4];
	size_t n;

	if (c < 0x80) {
		b[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | (c >> 6 & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | (c >> 12 & 0x3f));
		b[2] = (char)(0x80 | (c >> 6 & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	return put(d, b, n);
}

/*
 * A character of a char or string literal, escaped like Rust's
 * escape_debug for ASCII and the C1 controls; other non-ASCII characters
 * print as themselves.  The other kind of quote is not escaped.
 */
static int put_escaped(struct rdm *d, uint32_t c, char quote)
{
	switch (c) {
	case 0:
		return put_str(d, "\\0");
	case '\t':
		return put_str(d, "\\t");
	case '\r':
		return put_str(d, "\\r");
	case '\n':
		return put_str(d, "\\n");
	case '\\':
		return put_str(d, "\\\\");
	}
	if (c == (unsigned char)quote) {
		TRY(put_str(d, "\\"));
		return put(d, &quote, 1);
	}
	if (c < 0x20 || (c >= 0x7f && c < 0xa0)) {
		TRY(put_str(d, "\\u{"));
		TRY(put_num(d, c, 16));
		return put_str(d, "}");
	}
	return put_utf8(d, c);
}

/* ---- lexing -------------------------------------------------------------- */

static bool eat(struct rdm *d, char c)
{
	if (d->pos < d->len && d->s[d->pos] == c) {
		d->pos++;
		d->work++;
		return true;
	}
	return false;
}

static int next(struct rdm *d, char *c)
{
	if (d->pos >= d->len)
		return -EINVAL;
	*c = d->s[d->pos++];
	d->work++;
	return 0;
}

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Every entry into a path, type, constant or back reference. */
static int enter(struct rdm *d)
{
	if (++d->depth > RDM_MAX_DEPTH)
		return -EINVAL;
	if (d->work > d->max_work)
		return -ENAMETOOLONG;
	return 0;
}

/* <base-62-number> = {<0-9a-zA-Z>} "_"   ("_" is 0, "0_" is 1, ...) */
static int base62(struct rdm *d, uint64_t *v)
{
	uint64_t x = 0;
	unsigned dig;
	char c;

	if (eat(d, '_')) {
		*v = 0;
		return 0;
	}
	for (;;) {
		TRY(next(d, &c));
		if (c == '_')
			break;
		if (is_digit(c))
			dig = c - '0';
		else if (is_lower(c))
			dig = c - 'a' + 10;
		else if (is_upper(c))
			dig = c - 'A' + 36;
		else
			return -EINVAL;
		if (x > (UINT64_MAX - dig) / 62)
			return -EINVAL;
		x = x * 62 + dig;
	}
	if (x == UINT64_MAX)
		return -EINVAL;
	*v = x + 1;
	return 0;
}

/* [tag <base-62-number>]: 0 when absent, else the number + 1.  The
 * disambiguator ("s"), a binder ("G"). */
static int opt_base62(struct rdm *d, char tag, uint64_t *v)
{
	*v = 0;
	if (!eat(d, tag))
		return 0;
	TRY(base62(d, v));
	if (*v == UINT64_MAX)
		return -EINVAL;
	(*v)++;
	return 0;
}

/* <decimal-number> = "0" | <[1-9]> {<[0-9]>} */
static int decimal(struct rdm *d, uint64_t *v)
{
	uint64_t x;
	unsigned dig;
	char c;

	TRY(next(d, &c));
	if (!is_digit(c))
		return -EINVAL;
	x = c - '0';
	while (x && d->pos < d->len && is_digit(d->s[d->pos])) {
		dig = d->s[d->pos] - '0';
		if (x > (UINT64_MAX - dig) / 10)
			return -EINVAL;
		x = x * 10 + dig;
		d->pos++;
		d->work++;
	}
	*v = x;
	return 0;
}

/* ---- Punycode (RFC 3492, '_' for '-') -------------------------------------- */

static uint64_t puny_adapt(uint64_t delta, uint64_t npoints, bool first)
{
	uint64_t k = 0;

	delta = first ? delta / 700 : delta / 2;
	delta += delta / npoints;
	while (delta > 35 * 26 / 2) {
		delta /= 35;
		k += 36;
	}
	return k + 36 * delta / (delta + 38);
}

/*
 * Decode id into buf (cap code points), or with buf NULL only check it.
 * Returns 0 and the number of code points, -EINVAL for bad Punycode (a
 * digit out of the alphabet, an overflow, a truncated delta, a surrogate, a
 * C1 control or a code point past U+10FFFF), -ENOSPC when it is longer
 * than cap.
 */
static int puny_decode(const struct ident *id, uint32_t *buf, size_t cap,
		       size_t *count)
{
	const uint64_t lim = UINT32_MAX;
	uint64_t n = 0x80, i = 0, bias = 72, len = id->nascii;
	uint64_t oldi, w, k, t, dig;
	size_t p = 0, j;
	char c;

	if (buf) {
		if (len > cap)
			return -ENOSPC;
		for (j = 0; j < len; j++)
			buf[j] = (unsigned char)id->ascii[j];
	}
	while (p < id->npuny) {
		oldi = i;
		w = 1;
		for (k = 36;; k += 36) {
			if (p >= id->npuny)
				return -EINVAL;
			c = id->puny[p++];
			if (is_lower(c))
				dig = c - 'a';
			else if (is_digit(c))
				dig = c - '0' + 26;
			else
				return -EINVAL;
			if (dig > (lim - i) / w)
				return -EINVAL;
			i += dig * w;
			t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
			if (dig < t)
				break;
			if (w > lim / (36 - t))
				return -EINVAL;
			w *= 36 - t;
		}
		len++;
		bias = puny_adapt(i - oldi, len, oldi == 0);
		n += i / len;
		i %= len;
		/* no surrogates, nothing past Unicode; and no C1 controls,
		 * which no identifier holds and which would print raw */
		if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff) || n < 0xa0)
			return -EINVAL;
		if (buf) {
			if (len > cap)
				return -ENOSPC;
			memmove(buf + i + 1, buf + i, (len - 1 - i) * sizeof(*buf));
			buf[i] = (uint32_t)n;
		}
		i++;
	}
	if (count)
		*count = len;
	return 0;
}

/* ---- identifiers and lifetimes ---------------------------------------------- */

/*
 * <undisambiguated-identifier> = ["u"] <decimal-number> ["_"] <bytes>
 * With "u" the bytes are Punycode: the basic characters, then after the
 * last '_' the deltas (all deltas when there is no '_').
 */
static int ident(struct rdm *d, struct ident *id)
{
	bool puny = eat(d, 'u');
	const char *p;
	uint64_t n;
	size_t i;

	TRY(decimal(d, &n));
	eat(d, '_');
	if (n > d->len - d->pos)
		return -EINVAL;
	p = d->s + d->pos;
	d->pos += n;
	memset(id, 0, sizeof(*id));
	if (!puny) {
		id->ascii = p;
		id->nascii = n;
		return 0;
	}
	for (i = n; i > 0 && p[i - 1] != '_'; i--)
		;
	id->ascii = p;
	id->nascii = i ? i - 1 : 0;
	id->puny = p + i;
	id->npuny = n - i;
	if (!id->npuny)
		return -EINVAL;
	/* checking costs a pass over the bytes */
	d->work += n;
	return puny_decode(id, NULL, 0, NULL);
}

static bool ident_empty(const struct ident *id)
{
	return !id->nascii && !id->npuny;
}

static int put_ident(struct rdm *d, const struct ident *id)
{
	uint32_t cps[RDM_PUNY_MAX];
	size_t n, i;

	if (d->skip)
		return 0;
	if (!id->npuny)
		return put(d, id->ascii, id->nascii);
	if (puny_decode(id, cps, RDM_PUNY_MAX, &n) == 0) {
		for (i = 0; i < n; i++)
			TRY(put_utf8(d, cps[i]));
		return 0;
	}
	TRY(put_str(d, "punycode{"));
	if (id->nascii) {
		TRY(put(d, id->ascii, id->nascii));
		TRY(put_str(d, "-"));
	}
	TRY(put(d, id->puny, id->npuny));
	return put_str(d, "}");
}

/*
 * A lifetime by its De Bruijn index: 0 is the erased '_, 1 the innermost
 * bound lifetime.  Bound lifetimes are named from the outermost binder:
 * 'a, 'b, ... 'z, '_26, ...
 */
static int put_lifetime(struct rdm *d, uint64_t lt)
{
	uint64_t depth;
	char c;

	if (d->skip)
		return 0;
	TRY(put_str(d, "'"));
	if (lt == 0)
		return put_str(d, "_");
	if (lt > d->bound)
		return -EINVAL;
	depth = d->bound - lt;
	if (depth < 26) {
		c = (char)('a' + depth);
		return put(d, &c, 1);
	}
	TRY(put_str(d, "_"));
	return put_num(d, depth, 10);
}

/* <binder> = "G" <base-62-number>: "for<'a, ...> ", to be closed by
 * binder_close(count) after what it covers. */
static int binder_open(struct rdm *d, uint64_t *count)
{
	uint64_t k;

	TRY(opt_base62(d, 'G', count));
	if (*count > UINT64_MAX - d->bound)
		return -EINVAL;
	if (!*count)
		return 0;
	if (d->skip) {
		d->bound += *count;
		return 0;
	}
	TRY(put_str(d, "for<"));
	/* each name printed costs output, so a huge count ends there */
	for (k = 0; k < *count; k++) {
		if (k)
			TRY(put_str(d, ", "));
		d->bound++;
		TRY(put_lifetime(d, 1));
	}
	return put_str(d, "> ");
}

static void binder_close(struct rdm *d, uint64_t count)
{
	d->bound -= count;
}

/* ---- back references ---------------------------------------------------------- */

#define NOT_FOLLOWED SIZE_MAX

/*
 * <backref> = "B" <base-62-number>, the "B" eaten: an offset into the name
 * before the "B".  Moves there (*back = where to return) when printing;
 * when parsing only, stays (*back = NOT_FOLLOWED).
 */
static int backref_jump(struct rdm *d, size_t *back)
{
	size_t at = d->pos - 1;
	uint64_t to;

	TRY(base62(d, &to));
	if (to >= at)
		return -EINVAL;
	*back = NOT_FOLLOWED;
	if (d->skip)
		return 0;
	TRY(enter(d));
	*back = d->pos;
	d->pos = (size_t)to;
	return 0;
}

static void backref_return(struct rdm *d, size_t back)
{
	d->pos = back;
	d->depth--;
}

/* ---- paths, types, constants ----------------------------------------------------- */

static int path(struct rdm *d, bool value);
static int type(struct rdm *d);
static int cnst(struct rdm *d, bool value);

typedef int item_fn(struct rdm *d);

/* {<item>} "E", printed with sep between the items */
static int list(struct rdm *d, const char *sep, item_fn *item, uint64_t *count)
{
	uint64_t k;

	for (k = 0; !eat(d, 'E'); k++) {
		if (k)
			TRY(put_str(d, sep));
		TRY(item(d));
	}
	if (count)
		*count = k;
	return 0;
}

/* <lifetime> = "L" <base-62-number>, the "L" eaten */
static int lifetime(struct rdm *d, uint64_t *lt)
{
	return base62(d, lt);
}

/* <generic-arg> = <lifetime> | <type> | "K" <const> */
static int generic_arg(struct rdm *d)
{
	uint64_t lt;

	if (eat(d, 'L')) {
		TRY(lifetime(d, &lt));
		return put_lifetime(d, lt);
	}
	if (eat(d, 'K'))
		return cnst(d, false);
	return type(d);
}

/* A path in type position that may end in generic arguments left open
 * (*open), for the associated type bindings of a dyn trait to join. */
static int path_open(struct rdm *d, bool *open)
{
	size_t back;

	*open = false;
	if (eat(d, 'B')) {
		TRY(backref_jump(d, &back));
		if (back == NOT_FOLLOWED)
			return 0;
		TRY(path_open(d, open));
		backref_return(d, back);
		return 0;
	}
	if (eat(d, 'I')) {
		TRY(path(d, false));
		TRY(put_str(d, "<"));
		TRY(list(d, ", ", generic_arg, NULL));
		*open = true;
		return 0;
	}
	return path(d, false);
}

/*
 * <dyn-trait> = <path> {<dyn-trait-assoc-binding>}
 * <dyn-trait-assoc-binding> = "p" <undisambiguated-identifier> <type>
 */
static int dyn_trait(struct rdm *d)
{
	struct ident id;
	bool open;

	TRY(path_open(d, &open));
	while (eat(d, 'p')) {
		TRY(put_str(d, open ? ", " : "<"));
		open = true;
		TRY(ident(d, &id));
		TRY(put_ident(d, &id));
		TRY(put_str(d, " = "));
		TRY(type(d));
	}
	return open ? put_str(d, ">") : 0;
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
static int path(struct rdm *d, bool value)
{
	struct ident id;
	uint64_t dis;
	size_t back;
	char tag, ns;
	int err;

	TRY(enter(d));
	TRY(next(d, &tag));
	switch (tag) {
	case 'C':
		/* the disambiguator is the crate hash, left out */
		TRY(opt_base62(d, 's', &dis));
		TRY(ident(d, &id));
		TRY(put_ident(d, &id));
		break;
	case 'N':
		TRY(next(d, &ns));
		if (!is_upper(ns) && !is_lower(ns))
			return -EINVAL;
		TRY(path(d, value));
		TRY(opt_base62(d, 's', &dis));
		TRY(ident(d, &id));
		if (is_upper(ns)) {
			/* special namespaces: closures, shims, ... */
			TRY(put_str(d, "::{"));
			if (ns == 'C')
				TRY(put_str(d, "closure"));
			else if (ns == 'S')
				TRY(put_str(d, "shim"));
			else
				TRY(put(d, &ns, 1));
			if (!ident_empty(&id)) {
				TRY(put_str(d, ":"));
				TRY(put_ident(d, &id));
			}
			TRY(put_str(d, "#"));
			TRY(put_num(d, dis, 10));
			TRY(put_str(d, "}"));
		} else if (!ident_empty(&id)) {
			TRY(put_str(d, "::"));
			TRY(put_ident(d, &id));
		}
		break;
	case 'M':
	case 'X':
	case 'Y':
		if (tag != 'Y') {
			/* the impl block's own path does not print */
			TRY(opt_base62(d, 's', &dis));
			d->skip++;
			err = path(d, false);
			d->skip--;
			TRY(err);
		}
		TRY(put_str(d, "<"));
		TRY(type(d));
		if (tag != 'M') {
			TRY(put_str(d, " as "));
			TRY(path(d, false));
		}
		TRY(put_str(d, ">"));
		break;
	case 'I':
		TRY(path(d, value));
		TRY(put_str(d, value ? "::<" : "<"));
		TRY(list(d, ", ", generic_arg, NULL));
		TRY(put_str(d, ">"));
		break;
	case 'B':
		TRY(backref_jump(d, &back));
		if (back == NOT_FOLLOWED)
			break;
		TRY(path(d, value));
		backref_return(d, back);
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

	TRY(binder_open(d, &nb));
	is_unsafe = eat(d, 'U');
	has_abi = eat(d, 'K');
	if (has_abi) {
		if (eat(d, 'C')) {
			abi.ascii = "C";
			abi.nascii = 1;
		} else {
			TRY(ident(d, &abi));
			if (!abi.nascii || abi.npuny)
				return -EINVAL;
		}
	}
	if (is_unsafe)
		TRY(put_str(d, "unsafe "));
	if (has_abi) {
		/* '-' in an ABI name ("C-unwind") is mangled as '_' */
		TRY(put_str(d, "extern \""));
		for (i = 0; i < abi.nascii; i++)
			TRY(put(d, abi.ascii[i] == '_' ? "-" : abi.ascii + i,
				1));
		TRY(put_str(d, "\" "));
	}
	TRY(put_str(d, "fn("));
	TRY(list(d, ", ", type, NULL));
	TRY(put_str(d, ")"));
	if (!eat(d, 'u')) {
		TRY(put_str(d, " -> "));
		TRY(type(d));
	}
	binder_close(d, nb);
	return 0;
}

/* "D" <dyn-bounds> <lifetime>, the "D" eaten
 * <dyn-bounds> = [<binder>] {<dyn-trait>} "E" */
static int dyn_type(struct rdm *d)
{
	uint64_t nb, lt;

	TRY(put_str(d, "dyn "));
	TRY(binder_open(d, &nb));
	TRY(list(d, " + ", dyn_trait, NULL));
	binder_close(d, nb);
	if (!eat(d, 'L'))
		return -EINVAL;
	TRY(lifetime(d, &lt));
	if (lt) {
		TRY(put_str(d, " + "));
		TRY(put_lifetime(d, lt));
	}
	return 0;
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
static int type(struct rdm *d)
{
	const char *basic;
	uint64_t lt, count;
	size_t back;
	char tag;

	TRY(next(d, &tag));
	basic = basic_type(tag);
	if (basic)
		return put_str(d, basic);
	TRY(enter(d));
	switch (tag) {
	case 'R':
	case 'Q':
		TRY(put_str(d, "&"));
		if (eat(d, 'L')) {
			TRY(lifetime(d, &lt));
			if (lt) {
				TRY(put_lifetime(d, lt));
				TRY(put_str(d, " "));
			}
		}
		if (tag == 'Q')
			TRY(put_str(d, "mut "));
		TRY(type(d));
		break;
	case 'P':
	case 'O':
		TRY(put_str(d, tag == 'P' ? "*const " : "*mut "));
		TRY(type(d));
		break;
	case 'A':
	case 'S':
		TRY(put_str(d, "["));
		TRY(type(d));
		if (tag == 'A') {
			TRY(put_str(d, "; "));
			TRY(cnst(d, true));
		}
		TRY(put_str(d, "]"));
		break;
	case 'T':
		TRY(put_str(d, "("));
		TRY(list(d, ", ", type, &count));
		/* a 1-tuple keeps its comma */
		TRY(put_str(d, count == 1 ? ",)" : ")"));
		break;
	case 'F':
		TRY(fn_sig(d));
		break;
	case 'D':
		TRY(dyn_type(d));
		break;
	case 'B':
		TRY(backref_jump(d, &back));
		if (back == NOT_FOLLOWED)
			break;
		TRY(type(d));
		backref_return(d, back);
		break;
	default:
		d->pos--;
		TRY(path(d, false));
		break;
	}
	d->depth--;
	return 0;
}

/* ---- constants ----------------------------------------------------------------- */

/* <const-data> = {<hex-digit>} "_", lowercase hex */
struct hex {
	const char *p;
	size_t n;
};

static int hex_digits(struct rdm *d, struct hex *h)
{
	char c;

	h->p = d->s + d->pos;
	for (;;) {
		TRY(next(d, &c));
		if (c == '_')
			break;
		if (!is_digit(c) && !(c >= 'a' && c <= 'f'))
			return -EINVAL;
	}
	h->n = (size_t)(d->s + d->pos - 1 - h->p);
	return 0;
}

static unsigned hex_val(char c)
{
	return is_digit(c) ? (unsigned)(c - '0') : (unsigned)(c - 'a' + 10);
}

/* The value when it fits 64 bits. */
static bool hex_u64(const struct hex *h, uint64_t *v)
{
	size_t i = 0;

	while (i < h->n && h->p[i] == '0')
		i++;
	if (h->n - i > 16)
		return false;
	for (*v = 0; i < h->n; i++)
		*v = *v << 4 | hex_val(h->p[i]);
	return true;
}

/* An integer: decimal when it fits 64 bits, else 0x and its hex digits. */
static int const_uint(struct rdm *d)
{
	struct hex h;
	uint64_t v;

	TRY(hex_digits(d, &h));
	if (hex_u64(&h, &v))
		return put_num(d, v, 10);
	TRY(put_str(d, "0x"));
	return put(d, h.p, h.n);
}

static bool valid_char(uint64_t c)
{
	return c <= 0x10ffff && !(c >= 0xd800 && c <= 0xdfff);
}

/* A str constant: its UTF-8 bytes in hex, printed as a literal.  The
 * bytes must be UTF-8: no overlong forms, surrogates or stray bytes. */
static int const_str(struct rdm *d)
{
	struct hex h;
	uint32_t c = 0, min = 0;
	unsigned b, more = 0;
	size_t i;

	TRY(hex_digits(d, &h));
	if (h.n % 2)
		return -EINVAL;
	TRY(put_str(d, "\""));
	for (i = 0; i < h.n; i += 2) {
		b = hex_val(h.p[i]) << 4 | hex_val(h.p[i + 1]);
		if (more) {
			if ((b & 0xc0) != 0x80)
				return -EINVAL;
			c = c << 6 | (b & 0x3f);
			if (--more)
				continue;
			if (c < min || !valid_char(c))
				return -EINVAL;
		} else if (b < 0x80) {
			c = b;
		} else if (b >= 0xc2 && b < 0xe0) {
			c = b & 0x1f;
			more = 1;
			min = 0x80;
			continue;
		} else if (b >= 0xe0 && b < 0xf0) {
			c = b & 0x0f;
			more = 2;
			min = 0x800;
			continue;
		} else if (b >= 0xf0 && b < 0xf5) {
			c = b & 0x07;
			more = 3;
			min = 0x10000;
			continue;
		} else {
			return -EINVAL;
		}
		TRY(put_escaped(d, c, '"'));
	}
	if (more)
		return -EINVAL;
	return put_str(d, "\"");
}

static int const_value(struct rdm *d)
{
	return cnst(d, true);
}

/* A field of a struct-like variant: [<disambiguator>] <identifier> <const> */
static int const_field(struct rdm *d)
{
	struct ident id;
	uint64_t dis;

	TRY(opt_base62(d, 's', &dis));
	TRY(ident(d, &id));
	TRY(put_ident(d, &id));
	TRY(put_str(d, ": "));
	return cnst(d, true);
}

/*
 * <const> = <type> <const-data>         an integer, bool or char
 *         | "e" <const-data>            str (its UTF-8 bytes)
 *         | "R" <const> | "Q" <const>   &, &mut
 *         | "A" {<const>} "E"           array
 *         | "T" {<const>} "E"           tuple
 *         | "V" <path> <fields>         enum variant or struct
 *         | "p"                         placeholder
 *         | <backref>
 * <fields> = "U" | "T" {<const>} "E" | "S" {<const-field>} "E"
 *
 * value: inside another constant.  A constant that is not a literal prints
 * in braces when it stands alone as a generic argument: ::<{[1, 2]}>.
 */
static int cnst(struct rdm *d, bool value)
{
	struct hex h;
	uint64_t v, count;
	bool brace = false;
	size_t back;
	char tag, f;

	TRY(enter(d));
	TRY(next(d, &tag));
	/* "..." is a literal; &"...", [..], (..) and variants are not */
	if (!value && (tag == 'e' || tag == 'Q' || tag == 'A' || tag == 'T' ||
		       tag == 'V' ||
		       (tag == 'R' && !(d->pos < d->len && d->s[d->pos] == 'e')))) {
		brace = true;
		TRY(put_str(d, "{"));
	}
	switch (tag) {
	case 'p':
		TRY(put_str(d, "_"));
		break;
	case 'a':
	case 's':
	case 'l':
	case 'x':
	case 'n':
	case 'i':
		if (eat(d, 'n'))
			TRY(put_str(d, "-"));
		/* fall through */
	case 'h':
	case 't':
	case 'm':
	case 'y':
	case 'o':
	case 'j':
		TRY(const_uint(d));
		break;
	case 'b':
		TRY(hex_digits(d, &h));
		if (!hex_u64(&h, &v) || v > 1)
			return -EINVAL;
		TRY(put_str(d, v ? "true" : "false"));
		break;
	case 'c':
		TRY(hex_digits(d, &h));
		if (!hex_u64(&h, &v) || !valid_char(v))
			return -EINVAL;
		TRY(put_str(d, "'"));
		TRY(put_escaped(d, (uint32_t)v, '\''));
		TRY(put_str(d, "'"));
		break;
	case 'e':
		/* a literal is a &str: the str itself is *"..." */
		TRY(put_str(d, "*"));
		TRY(const_str(d));
		break;
	case 'R':
	case 'Q':
		/* &*"..." is just "..." */
		if (tag == 'R' && eat(d, 'e')) {
			TRY(const_str(d));
			break;
		}
		TRY(put_str(d, tag == 'R' ? "&" : "&mut "));
		TRY(cnst(d, true));
		break;
	case 'A':
		TRY(put_str(d, "["));
		TRY(list(d, ", ", const_value, NULL));
		TRY(put_str(d, "]"));
		break;
	case 'T':
		TRY(put_str(d, "("));
		TRY(list(d, ", ", const_value, &count));
		TRY(put_str(d, count == 1 ? ",)" : ")"));
		break;
	case 'V':
		TRY(path(d, true));
		TRY(next(d, &f));
		if (f == 'T') {
			TRY(put_str(d, "("));
			TRY(list(d, ", ", const_value, NULL));
			TRY(put_str(d, ")"));
		} else if (f == 'S') {
			TRY(put_str(d, " { "));
			TRY(list(d, ", ", const_field, NULL));
			TRY(put_str(d, " }"));
		} else if (f != 'U') {
			return -EINVAL;
		}
		break;
	case 'B':
		TRY(backref_jump(d, &back));
		if (back == NOT_FOLLOWED)
			break;
		TRY(cnst(d, value));
		backref_return(d, back);
		break;
	default:
		return -EINVAL;
	}
	if (brace)
		TRY(put_str(d, "}"));
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
	err = path(&d, true);
	if (!err && d.pos < d.len)
		err = path(&d, false); /* the instantiating crate */
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
	err = path(&d, true);
	if (!err)
		err = put(&d, sfx, nsfx);
	if (err == -ENAMETOOLONG)
		d.n = utf8_trim(out, d.n);
	out[err == -EINVAL ? 0 : d.n] = 0;
	return err;
}
