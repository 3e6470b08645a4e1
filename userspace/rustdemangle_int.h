/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to the Rust v0 demangler's files: rustdemangle.c (paths, types
 * and the entry point), rustdemangle_lex.c (the output buffer, lexing,
 * Punycode, identifiers, lifetimes and back references) and
 * rustdemangle_const.c (constants).  Not for other modules.
 */
#ifndef EP_RUSTDEMANGLE_INT_H
#define EP_RUSTDEMANGLE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	/* the path a dyn trait printed last left its generic arguments
	 * open (path_open), for its associated type bindings to join */
	bool args_open;
};

/* An identifier: plain bytes, or Punycode's basic part and its deltas. */
struct ident {
	const char *ascii, *puny;
	size_t nascii, npuny; /* npuny > 0: Punycode */
};

static inline bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static inline bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

#define NOT_FOLLOWED SIZE_MAX

typedef int item_fn(struct rdm *d);
typedef int follow_fn(struct rdm *d, bool value);

/* rustdemangle_lex.c */
int rdm_put(struct rdm *d, const char *p, size_t n);
int rdm_put_str(struct rdm *d, const char *s);
int rdm_put_num(struct rdm *d, uint64_t v, unsigned base);
int rdm_put_utf8(struct rdm *d, uint32_t c);
int rdm_put_escaped(struct rdm *d, uint32_t c, char quote);
bool rdm_eat(struct rdm *d, char c);
int rdm_next(struct rdm *d, char *c);
int rdm_enter(struct rdm *d);
int rdm_base62(struct rdm *d, uint64_t *v);
int rdm_opt_base62(struct rdm *d, char tag, uint64_t *v);
int rdm_decimal(struct rdm *d, uint64_t *v);
int rdm_ident(struct rdm *d, struct ident *id);
bool rdm_ident_empty(const struct ident *id);
int rdm_put_ident(struct rdm *d, const struct ident *id);
int rdm_put_lifetime(struct rdm *d, uint64_t lt);
int rdm_binder_open(struct rdm *d, uint64_t *count);
void rdm_binder_close(struct rdm *d, uint64_t count);
int rdm_backref(struct rdm *d, follow_fn *follow, bool value);

/* rustdemangle.c */
int rdm_list(struct rdm *d, const char *sep, item_fn *item, uint64_t *count);
int rdm_tuple(struct rdm *d, item_fn *item);
int rdm_path(struct rdm *d, bool value);
int rdm_type(struct rdm *d);

/* rustdemangle_const.c */
int rdm_cnst(struct rdm *d, bool value);

#endif
