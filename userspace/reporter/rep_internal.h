/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pieces the reporter's encoders and sinks share; not part of the module's
 * interface (reporter.h is).  Nothing here knows a batch's meaning except
 * the naming helpers at the end.
 */
#ifndef EP_REP_INTERNAL_H
#define EP_REP_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "intern.h"
#include "reporter.h"

/* ---- growable byte buffer ------------------------------------------- */

/* Appends never fail loudly: the first allocation failure sets err and
 * later appends do nothing, so a writer checks once at the end. */
struct rep_buf {
	char *p;
	size_t len, cap;
	int err; /* 0 or -ENOMEM */
};

void rep_buf_add(struct rep_buf *b, const void *data, size_t n);
void rep_buf_puts(struct rep_buf *b, const char *s);
void rep_buf_printf(struct rep_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Hand the bytes over (NUL-terminated, not counted in *len): returns 0 or
 * the buffer's error, after which the buffer is empty either way. */
int rep_buf_take(struct rep_buf *b, char **out, size_t *len);
void rep_buf_free(struct rep_buf *b);

/* ---- repeated message fields (pprof and OTLP) ----------------------- */

/*
 * A repeated message field of n messages in the arena: field gets the
 * array of n pointers that protobuf-c takes, to n messages of field's
 * type in one block, each initialised by init (the type's __init), and
 * count (the field's n_ member) gets n.  One spare slot each, so that
 * n == 0 still gives non-NULL arrays.  False when memory is short.
 */
#define REP_MSG_TABLE(arena, field, count, n, init)                            \
	({                                                                     \
		size_t n_ = (n), i_;                                           \
		__typeof__(*(field)) m_ = arena_calloc((arena), n_ + 1,        \
						       sizeof(*m_));           \
		(field) = arena_calloc((arena), n_ + 1, sizeof(*(field)));     \
		for (i_ = 0; m_ && (field) && i_ < n_; i_++) {                 \
			init(&m_[i_]);                                         \
			(field)[i_] = &m_[i_];                                 \
		}                                                              \
		(count) = n_;                                                  \
		m_ && (field);                                                 \
	})

/* ---- string table (pprof and OTLP both index strings) --------------- */

/* Entry 0 is "" as both formats require. */
struct rep_strtab {
	struct intern map;
	int err;
};

int rep_strtab_init(struct rep_strtab *t);
/* The index of s (NULL means ""); on failure sets t->err and returns 0. */
int32_t rep_strtab_add(struct rep_strtab *t, const char *s);
/* The strings by index, as the generated protobuf-c structs take them;
 * valid until rep_strtab_free. */
char **rep_strtab_strings(const struct rep_strtab *t, size_t *n);
void rep_strtab_free(struct rep_strtab *t);

/* ---- UTF-8 (rep_utf8_fix() is in reporter.h) ------------------------- */

#define REP_UTF8_REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* How many bytes the character at s takes, *ok set, or, when the bytes
 * there are not UTF-8 (*ok false), the length of the ill-formed maximal
 * subpart that one U+FFFD stands for (at least 1).  Stops at a NUL. */
size_t rep_utf8_next(const unsigned char *s, bool *ok);
/* Drop an ill-formed sequence that ends the string: what is left when a
 * character was cut by a byte limit. */
void rep_utf8_trim(char *s);

/* ---- compression ------------------------------------------------------ */

/* gzip in[0..len) into a malloc'd buffer that starts with headroom unused
 * bytes (for the gRPC frame header).  Returns 0 or -ENOMEM/-EIO. */
int rep_gzip(const void *in, size_t len, size_t headroom, void **out,
	     size_t *out_len);

/* ---- sinks ------------------------------------------------------------ */

struct rep_sink_ops {
	int (*write)(struct rep_sink *s, const struct rep_batch *b);
	/* flush and stop (may be NULL: nothing pending); called again by
	 * close, which must then not wait */
	void (*finish)(struct rep_sink *s, unsigned timeout_ms);
	void (*close)(struct rep_sink *s, unsigned timeout_ms); /* and free */
};

/* The head of every sink; stats are under lock (the OTLP sender thread
 * updates them). */
struct rep_sink {
	const struct rep_sink_ops *ops;
	pthread_mutex_t lock;
	struct rep_stats stats;
};

void rep_sink_init(struct rep_sink *s, const struct rep_sink_ops *ops);
/* Samples in a batch: the sum of the counts. */
uint64_t rep_batch_events(const struct rep_batch *b);

/* Where an OTLP sink sends, resolved from its options (see reporter.h). */
struct rep_otlp_target {
	char *url;   /* malloc'd */
	bool grpc;   /* else OTLP/HTTP */
	bool tls;
	bool gzip;
};

/* Returns 0 or -EINVAL (logged) / -ENOMEM; free t->url. */
int rep_otlp_target(const struct rep_otlp_opts *o, struct rep_otlp_target *t);
/* "k=v,k2=v2" (percent-encoded, spaces around items ignored) into "k: v"
 * header lines appended to *list.  Returns 0 or -EINVAL (logged). */
struct curl_slist;
int rep_otlp_headers(const char *spec, struct curl_slist **list);
/* Free a list rep_otlp_headers made (libcurl is loaded at run time). */
void rep_otlp_slist_free(struct curl_slist *l);

/* ---- batches ---------------------------------------------------------- */

const char *rep_basename(const char *path);
/* 32 lowercase hex digits and a NUL. */
void rep_hex(const uint8_t *p, size_t n, char *out);
/* What the folded and SVG formats print for a thread: its comm, else the
 * process's executable name, else "[unknown]". */
/* Make s one folded frame: ';' becomes ':', control characters '?'. */
void rep_name_sanitize(char *s);
const char *rep_thread_label(const struct rep_batch *b,
			     const struct rep_sample *s);

/* Display names of every location of a batch, computed once. */
struct rep_names {
	char **loc; /* by location index */
	struct arena arena;
};

int rep_names_init(struct rep_names *n, const struct rep_batch *b);
void rep_names_free(struct rep_names *n);

/*
 * A sample's frames root first, as folded and SVG draw them: user frames
 * (outermost first) then kernel frames, whatever order the pipeline put
 * them in, so the kernel is always above the code that called into it.
 * out must hold the stack's n entries; returns how many were written
 * (locations out of range are skipped).
 */
uint32_t rep_sample_path(const struct rep_batch *b, const struct rep_sample *s,
			 uint32_t *out);

#endif
