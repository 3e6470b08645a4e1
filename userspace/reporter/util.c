// SPDX-License-Identifier: Apache-2.0
/* Buffers, arena, hash map, string table, gzip and naming for the reporter. */
#include "rep_internal.h"

#include "arr.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- growable byte buffer ------------------------------------------- */

static bool buf_reserve(struct rep_buf *b, size_t extra)
{
	if (b->err)
		return false;
	if (extra > SIZE_MAX - b->len - 1 ||
	    ARR_RESERVE(b->p, b->cap, b->len + extra + 1, ARR_NO_LIMIT)) {
		b->err = -ENOMEM;
		return false;
	}
	return true;
}

void rep_buf_add(struct rep_buf *b, const void *data, size_t n)
{
	if (!buf_reserve(b, n))
		return;
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;
}

void rep_buf_puts(struct rep_buf *b, const char *s)
{
	rep_buf_add(b, s, strlen(s));
}

void rep_buf_printf(struct rep_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!buf_reserve(b, 128))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->err = -EINVAL;
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		if (!buf_reserve(b, (size_t)n))
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

int rep_buf_take(struct rep_buf *b, char **out, size_t *len)
{
	int err = b->err;

	if (!err && !b->p)
		buf_reserve(b, 0);
	err = b->err;
	if (err) {
		rep_buf_free(b);
		return err;
	}
	*out = b->p;
	*len = b->len;
	memset(b, 0, sizeof(*b));
	return 0;
}

void rep_buf_free(struct rep_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- string table ------------------------------------------------------ */

int rep_strtab_init(struct rep_strtab *t)
{
	memset(t, 0, sizeof(*t));
	rep_strtab_add(t, "");
	return t->err;
}

int32_t rep_strtab_add(struct rep_strtab *t, const char *s)
{
	int64_t id;

	if (t->err)
		return 0;
	if (!s)
		s = "";
	id = intern_add(&t->map, s, strlen(s), NULL);
	if (id < 0) {
		t->err = (int)id;
		return 0;
	}
	return (int32_t)id;
}

char **rep_strtab_strings(const struct rep_strtab *t, size_t *n)
{
	return (char **)intern_keys(&t->map, n);
}

void rep_strtab_free(struct rep_strtab *t)
{
	intern_free(&t->map);
}

/* ---- UTF-8 ------------------------------------------------------------ */

/* Unicode Table 3-7, the well-formed byte sequences, row by row: the
 * range of the first byte, the length, and the range of the second byte
 * (the others are 0x80..0xbf); none of them an overlong form, a surrogate
 * or past U+10FFFF. */
static const struct {
	unsigned char first_lo, first_hi, n, lo, hi;
} utf8_table[] = {
	{ 0xc2, 0xdf, 2, 0x80, 0xbf },
	{ 0xe0, 0xe0, 3, 0xa0, 0xbf },
	{ 0xe1, 0xec, 3, 0x80, 0xbf },
	{ 0xed, 0xed, 3, 0x80, 0x9f },
	{ 0xee, 0xef, 3, 0x80, 0xbf },
	{ 0xf0, 0xf0, 4, 0x90, 0xbf },
	{ 0xf1, 0xf3, 4, 0x80, 0xbf },
	{ 0xf4, 0xf4, 4, 0x80, 0x8f },
};

size_t rep_utf8_next(const unsigned char *s, bool *ok)
{
	unsigned char c = s[0], lo, hi;
	size_t n, i, r;

	*ok = true;
	if (c < 0x80)
		return 1;
	for (r = 0; r < sizeof(utf8_table) / sizeof(utf8_table[0]); r++)
		if (c >= utf8_table[r].first_lo && c <= utf8_table[r].first_hi)
			break;
	if (r == sizeof(utf8_table) / sizeof(utf8_table[0])) {
		*ok = false;
		return 1;
	}
	n = utf8_table[r].n;
	lo = utf8_table[r].lo;
	hi = utf8_table[r].hi;
	/* A NUL is below every range: the walk stops at the string's end. */
	for (i = 1; i < n; i++, lo = 0x80, hi = 0xbf) {
		if (s[i] < lo || s[i] > hi) {
			*ok = false;
			return i;
		}
	}
	return n;
}

size_t rep_utf8_fix(char *out, size_t size, const char *s)
{
	static const char fffd[] = REP_UTF8_REPLACEMENT;
	const unsigned char *p = (const unsigned char *)s;
	size_t need = 0, w = 0, n, m;
	bool ok;

	for (; *p; p += n) {
		n = rep_utf8_next(p, &ok);
		m = ok ? n : sizeof(fffd) - 1;
		/* Once a character did not fit, nothing after it is written
		 * either: the result stays a prefix. */
		if (w == need && need + m < size) {
			memcpy(out + w, ok ? (const void *)p : fffd, m);
			w += m;
		}
		need += m;
	}
	if (size)
		out[w] = 0;
	return need;
}

void rep_utf8_trim(char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;
	bool ok;

	for (; *p; p += n) {
		n = rep_utf8_next(p, &ok);
		if (!ok && !p[n]) {
			s[p - (const unsigned char *)s] = 0;
			return;
		}
	}
}

/* ---- compression ------------------------------------------------------ */

int rep_gzip(const void *in, size_t len, size_t headroom, void **out,
	     size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap;
	uint8_t *buf;
	int rc;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, len);
	if (cap > SIZE_MAX - headroom) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	buf = malloc(headroom + cap);
	if (!buf) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	/* deflateBound covers the whole output; one call with Z_FINISH. */
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = buf + headroom;
	z.avail_out = (uInt)cap;
	if (len > UINT32_MAX || cap > UINT32_MAX)
		rc = Z_BUF_ERROR;
	else
		rc = deflate(&z, Z_FINISH);
	*out_len = headroom + z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	return 0;
}

/* ---- batches ---------------------------------------------------------- */

const char *rep_basename(const char *path)
{
	const char *s;

	if (!path)
		return "";
	s = strrchr(path, '/');
	return s ? s + 1 : path;
}

void rep_hex(const uint8_t *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = 0;
}

const char *rep_thread_label(const struct rep_batch *b,
			     const struct rep_sample *s)
{
	if (s->thread_name && *s->thread_name)
		return s->thread_name;
	if (s->process < b->n_processes) {
		const struct rep_process *p = &b->processes[s->process];

		if (p->exe_name && *p->exe_name)
			return p->exe_name;
	}
	return "[unknown]";
}

int rep_names_init(struct rep_names *n, const struct rep_batch *b)
{
	char name[1024];
	uint32_t i;

	memset(n, 0, sizeof(*n));
	n->loc = arena_calloc(&n->arena, b->n_locations, sizeof(*n->loc));
	if (!n->loc && b->n_locations)
		goto nomem;
	for (i = 0; i < b->n_locations; i++) {
		rep_location_name(b, &b->locations[i], name, sizeof(name));
		n->loc[i] = arena_strdup(&n->arena, name);
		if (!n->loc[i])
			goto nomem;
	}
	return 0;
nomem:
	rep_names_free(n);
	return -ENOMEM;
}

void rep_names_free(struct rep_names *n)
{
	arena_free(&n->arena);
	n->loc = NULL;
}

uint32_t rep_sample_path(const struct rep_batch *b, const struct rep_sample *s,
			 uint32_t *out)
{
	const struct rep_stack *st;
	uint32_t i, k = 0, pass;

	if (s->stack >= b->n_stacks)
		return 0;
	st = &b->stacks[s->stack];
	/* Pass 0: user frames, pass 1: kernel frames; each root first. */
	for (pass = 0; pass < 2; pass++) {
		for (i = st->n; i-- > 0;) {
			uint32_t l = st->locations[i];
			bool kernel;

			if (l >= b->n_locations)
				continue;
			kernel = b->locations[l].kind == FRAME_KERNEL;
			if (kernel == (pass == 1))
				out[k++] = l;
		}
	}
	return k;
}

/* ---- names ---------------------------------------------------------- */

const char *rep_frame_kind_name(unsigned kind)
{
	/* The OTLP profile.frame.type values receivers know (devfiler
	 * rejects anything else). */
	static const char *const names[FRAME_KIND_COUNT] = {
		[FRAME_NATIVE] = "native",
		[FRAME_KERNEL] = "kernel",
		[FRAME_ERROR] = "abort-marker",
#define REP_INTERP_TYPE_(NAME, name, type) [FRAME_INTERP(INTERP_##NAME)] = type,
		INTERPRETERS(REP_INTERP_TYPE_)
#undef REP_INTERP_TYPE_
	};

	return kind < FRAME_KIND_COUNT && names[kind] ? names[kind] : "native";
}

/* Folded separates frames with ';' and lines with '\n': neither may
 * appear inside a name (flamegraph's stackcollapse also maps ';' to ':'). */
void rep_name_sanitize(char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == ';')
			*s = ':';
		else if (c < 0x20 || c == 0x7f)
			*s = '?';
	}
}

void rep_location_name(const struct rep_batch *b, const struct rep_location *l,
		       char *buf, size_t n)
{
	const char *fn = l->function && *l->function ? l->function : NULL;
	const char *suffix = l->kind == FRAME_KERNEL ? "_[k]" : "";
	bool interp = FRAME_IS_INTERP(l->kind);

	if (!n)
		return;
	if (fn && (interp || (b->native_lines && l->kind == FRAME_NATIVE)) &&
	    l->filename && l->line)
		snprintf(buf, n, "%s (%s:%u)", fn, rep_basename(l->filename),
			 l->line);
	else if (fn && interp && l->filename)
		snprintf(buf, n, "%s (%s)", fn, rep_basename(l->filename));
	else if (fn && l->kind == FRAME_ERROR)
		snprintf(buf, n, "[%s]", fn);
	else if (fn)
		snprintf(buf, n, "%s%s", fn, suffix);
	else if (l->mapping < b->n_mappings && b->mappings[l->mapping].path)
		snprintf(buf, n, "%s+0x%" PRIx64 "%s",
			 rep_basename(b->mappings[l->mapping].path), l->address,
			 suffix);
	else
		snprintf(buf, n, "0x%" PRIx64 "%s", l->address, suffix);
	/* A long name cut at n bytes may end inside a character. */
	rep_utf8_trim(buf);
	rep_name_sanitize(buf);
}
