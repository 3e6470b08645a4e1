// SPDX-License-Identifier: Apache-2.0
/*
 * The Rust v0 demangler's constants (<const>): integers, bools, chars,
 * strs and the structured constants.  Paths and types are in
 * rustdemangle.c.
 */
#include "rustdemangle_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

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
		TRY(rdm_next(d, &c));
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
		return rdm_put_num(d, v, 10);
	TRY(rdm_put_str(d, "0x"));
	return rdm_put(d, h.p, h.n);
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
	TRY(rdm_put_str(d, "\""));
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
		TRY(rdm_put_escaped(d, c, '"'));
	}
	if (more)
		return -EINVAL;
	return rdm_put_str(d, "\"");
}

static int const_value(struct rdm *d)
{
	return rdm_cnst(d, true);
}

/* A field of a struct-like variant: [<disambiguator>] <identifier> <const> */
static int const_field(struct rdm *d)
{
	struct ident id;
	uint64_t dis;

	TRY(rdm_opt_base62(d, 's', &dis));
	TRY(rdm_ident(d, &id));
	TRY(rdm_put_ident(d, &id));
	TRY(rdm_put_str(d, ": "));
	return rdm_cnst(d, true);
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
int rdm_cnst(struct rdm *d, bool value)
{
	struct hex h;
	uint64_t v;
	bool brace = false;
	char tag, f;

	TRY(rdm_enter(d));
	TRY(rdm_next(d, &tag));
	/* "..." is a literal; &"...", [..], (..) and variants are not */
	if (!value && (tag == 'e' || tag == 'Q' || tag == 'A' || tag == 'T' ||
		       tag == 'V' ||
		       (tag == 'R' && !(d->pos < d->len && d->s[d->pos] == 'e')))) {
		brace = true;
		TRY(rdm_put_str(d, "{"));
	}
	switch (tag) {
	case 'p':
		TRY(rdm_put_str(d, "_"));
		break;
	case 'a':
	case 's':
	case 'l':
	case 'x':
	case 'n':
	case 'i':
		if (rdm_eat(d, 'n'))
			TRY(rdm_put_str(d, "-"));
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
		TRY(rdm_put_str(d, v ? "true" : "false"));
		break;
	case 'c':
		TRY(hex_digits(d, &h));
		if (!hex_u64(&h, &v) || !valid_char(v))
			return -EINVAL;
		TRY(rdm_put_str(d, "'"));
		TRY(rdm_put_escaped(d, (uint32_t)v, '\''));
		TRY(rdm_put_str(d, "'"));
		break;
	case 'e':
		/* a literal is a &str: the str itself is *"..." */
		TRY(rdm_put_str(d, "*"));
		TRY(const_str(d));
		break;
	case 'R':
	case 'Q':
		/* &*"..." is just "..." */
		if (tag == 'R' && rdm_eat(d, 'e')) {
			TRY(const_str(d));
			break;
		}
		TRY(rdm_put_str(d, tag == 'R' ? "&" : "&mut "));
		TRY(rdm_cnst(d, true));
		break;
	case 'A':
		TRY(rdm_put_str(d, "["));
		TRY(rdm_list(d, ", ", const_value, NULL));
		TRY(rdm_put_str(d, "]"));
		break;
	case 'T':
		TRY(rdm_tuple(d, const_value));
		break;
	case 'V':
		TRY(rdm_path(d, true));
		TRY(rdm_next(d, &f));
		if (f == 'T') {
			TRY(rdm_put_str(d, "("));
			TRY(rdm_list(d, ", ", const_value, NULL));
			TRY(rdm_put_str(d, ")"));
		} else if (f == 'S') {
			TRY(rdm_put_str(d, " { "));
			TRY(rdm_list(d, ", ", const_field, NULL));
			TRY(rdm_put_str(d, " }"));
		} else if (f != 'U') {
			return -EINVAL;
		}
		break;
	case 'B':
		TRY(rdm_backref(d, rdm_cnst, value));
		break;
	default:
		return -EINVAL;
	}
	if (brace)
		TRY(rdm_put_str(d, "}"));
	d->depth--;
	return 0;
}
