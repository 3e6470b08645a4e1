// SPDX-License-Identifier: Apache-2.0
/*
 * The Rust v0 demangler's lower layer: the output buffer, lexing, base-62
 * and decimal numbers, Punycode, identifiers, lifetimes, binders and back
 * references.  The grammar above it is in rustdemangle.c and
 * rustdemangle_const.c.
 */
#include "rustdemangle_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ---- output ------------------------------------------------------------ */

int rdm_put(struct rdm *d, const char *p, size_t n)
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

int rdm_put_str(struct rdm *d, const char *s)
{
	return rdm_put(d, s, strlen(s));
}

int rdm_put_num(struct rdm *d, uint64_t v, unsigned base)
{
	char buf[24];
	size_t i = sizeof(buf);

	do {
		buf[--i] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	return rdm_put(d, buf + i, sizeof(buf) - i);
}

int rdm_put_utf8(struct rdm *d, uint32_t c)
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
	return rdm_put(d, b, n);
}

/*
 * A character of a char or string literal, escaped like Rust's
 * escape_debug for ASCII and the C1 controls; other non-ASCII characters
 * print as themselves.  The other kind of quote is not escaped.
 */
int rdm_put_escaped(struct rdm *d, uint32_t c, char quote)
{
	switch (c) {
	case 0:
		return rdm_put_str(d, "\\0");
	case '\t':
		return rdm_put_str(d, "\\t");
	case '\r':
		return rdm_put_str(d, "\\r");
	case '\n':
		return rdm_put_str(d, "\\n");
	case '\\':
		return rdm_put_str(d, "\\\\");
	}
	if (c == (unsigned char)quote) {
		TRY(rdm_put_str(d, "\\"));
		return rdm_put(d, &quote, 1);
	}
	if (c < 0x20 || (c >= 0x7f && c < 0xa0)) {
		TRY(rdm_put_str(d, "\\u{"));
		TRY(rdm_put_num(d, c, 16));
		return rdm_put_str(d, "}");
	}
	return rdm_put_utf8(d, c);
}

/* ---- lexing -------------------------------------------------------------- */

bool rdm_eat(struct rdm *d, char c)
{
	if (d->pos < d->len && d->s[d->pos] == c) {
		d->pos++;
		d->work++;
		return true;
	}
	return false;
}

int rdm_next(struct rdm *d, char *c)
{
	if (d->pos >= d->len)
		return -EINVAL;
	*c = d->s[d->pos++];
	d->work++;
	return 0;
}

/* Every entry into a path, type, constant or back reference. */
int rdm_enter(struct rdm *d)
{
	if (++d->depth > RDM_MAX_DEPTH)
		return -EINVAL;
	if (d->work > d->max_work)
		return -ENAMETOOLONG;
	return 0;
}

/* <base-62-number> = {<0-9a-zA-Z>} "_"   ("_" is 0, "0_" is 1, ...) */
int rdm_base62(struct rdm *d, uint64_t *v)
{
	uint64_t x = 0;
	unsigned dig;
	char c;

	if (rdm_eat(d, '_')) {
		*v = 0;
		return 0;
	}
	for (;;) {
		TRY(rdm_next(d, &c));
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
int rdm_opt_base62(struct rdm *d, char tag, uint64_t *v)
{
	*v = 0;
	if (!rdm_eat(d, tag))
		return 0;
	TRY(rdm_base62(d, v));
	if (*v == UINT64_MAX)
		return -EINVAL;
	(*v)++;
	return 0;
}

/* <decimal-number> = "0" | <[1-9]> {<[0-9]>} */
int rdm_decimal(struct rdm *d, uint64_t *v)
{
	uint64_t x;
	unsigned dig;
	char c;

	TRY(rdm_next(d, &c));
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
int rdm_ident(struct rdm *d, struct ident *id)
{
	bool puny = rdm_eat(d, 'u');
	const char *p;
	uint64_t n;
	size_t i;

	TRY(rdm_decimal(d, &n));
	rdm_eat(d, '_');
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

bool rdm_ident_empty(const struct ident *id)
{
	return !id->nascii && !id->npuny;
}

int rdm_put_ident(struct rdm *d, const struct ident *id)
{
	uint32_t cps[RDM_PUNY_MAX];
	size_t n, i;

	if (d->skip)
		return 0;
	if (!id->npuny)
		return rdm_put(d, id->ascii, id->nascii);
	if (puny_decode(id, cps, RDM_PUNY_MAX, &n) == 0) {
		for (i = 0; i < n; i++)
			TRY(rdm_put_utf8(d, cps[i]));
		return 0;
	}
	TRY(rdm_put_str(d, "punycode{"));
	if (id->nascii) {
		TRY(rdm_put(d, id->ascii, id->nascii));
		TRY(rdm_put_str(d, "-"));
	}
	TRY(rdm_put(d, id->puny, id->npuny));
	return rdm_put_str(d, "}");
}

/*
 * A lifetime by its De Bruijn index: 0 is the erased '_, 1 the innermost
 * bound lifetime.  Bound lifetimes are named from the outermost binder:
 * 'a, 'b, ... 'z, '_26, ...
 */
int rdm_put_lifetime(struct rdm *d, uint64_t lt)
{
	uint64_t depth;
	char c;

	if (d->skip)
		return 0;
	TRY(rdm_put_str(d, "'"));
	if (lt == 0)
		return rdm_put_str(d, "_");
	if (lt > d->bound)
		return -EINVAL;
	depth = d->bound - lt;
	if (depth < 26) {
		c = (char)('a' + depth);
		return rdm_put(d, &c, 1);
	}
	TRY(rdm_put_str(d, "_"));
	return rdm_put_num(d, depth, 10);
}

/* <binder> = "G" <base-62-number>: "for<'a, ...> ", to be closed by
 * rdm_binder_close(count) after what it covers. */
int rdm_binder_open(struct rdm *d, uint64_t *count)
{
	uint64_t k;

	TRY(rdm_opt_base62(d, 'G', count));
	if (*count > UINT64_MAX - d->bound)
		return -EINVAL;
	if (!*count)
		return 0;
	if (d->skip) {
		d->bound += *count;
		return 0;
	}
	TRY(rdm_put_str(d, "for<"));
	/* each name printed costs output, so a huge count ends there */
	for (k = 0; k < *count; k++) {
		if (k)
			TRY(rdm_put_str(d, ", "));
		d->bound++;
		TRY(rdm_put_lifetime(d, 1));
	}
	return rdm_put_str(d, "> ");
}

void rdm_binder_close(struct rdm *d, uint64_t count)
{
	d->bound -= count;
}

/* ---- back references ---------------------------------------------------------- */

/*
 * <backref> = "B" <base-62-number>, the "B" eaten: an offset into the name
 * before the "B".  Moves there (*back = where to return) when printing;
 * when parsing only, stays (*back = NOT_FOLLOWED).
 */
static int backref_jump(struct rdm *d, size_t *back)
{
	size_t at = d->pos - 1;
	uint64_t to;

	TRY(rdm_base62(d, &to));
	if (to >= at)
		return -EINVAL;
	*back = NOT_FOLLOWED;
	if (d->skip)
		return 0;
	TRY(rdm_enter(d));
	*back = d->pos;
	d->pos = (size_t)to;
	return 0;
}

static void backref_return(struct rdm *d, size_t back)
{
	d->pos = back;
	d->depth--;
}

/* A back reference to a path, type or constant, followed by follow(d,
 * value) when printing. */
int rdm_backref(struct rdm *d, follow_fn *follow, bool value)
{
	size_t back;

	TRY(backref_jump(d, &back));
	if (back == NOT_FOLLOWED)
		return 0;
	TRY(follow(d, value));
	backref_return(d, back);
	return 0;
}
