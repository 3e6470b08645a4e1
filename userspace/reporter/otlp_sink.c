// SPDX-License-Identifier: Apache-2.0
/*
 * The OTLP sink.  rep_sink_write() encodes (and gzips) the batch on the
 * caller's thread and queues the bytes; a sender thread posts them with
 * libcurl, OTLP/HTTP or OTLP/gRPC (HTTP/2 with the 5-byte message framing,
 * h2c prior knowledge without TLS, ALPN h2 with it).  The caller never
 * waits for the network.
 *
 * While the receiver is down or slow the head of the queue is retried with
 * exponential backoff and jitter, or after the receiver's Retry-After;
 * gRPC UNAVAILABLE, RESOURCE_EXHAUSTED and the other transient codes and
 * HTTP 429/502/503/504 are retried, other refusals drop the batch
 * (send_rejected).  The queue is bounded in batches and bytes; when a new
 * batch does not fit, the oldest go (queue_drops), so memory stays within
 * queue_max_bytes plus the one request in flight.
 */
#include "rep_internal.h"

#include <ctype.h>
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "dlib.h"
#include "log.h"

#define GRPC_PATH "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"
#define HTTP_PATH "/v1development/profiles"
#define DEFAULT_TIMEOUT_MS 10000
#define DEFAULT_QUEUE_MAX 64
#define DEFAULT_QUEUE_BYTES (64u << 20)
#define DEFAULT_RETRY_INITIAL_MS 1000
#define DEFAULT_RETRY_MAX_MS 30000
#ifndef EP_VERSION
#define EP_VERSION "0.0.0"
#endif
/* A receiver asking for more than this is not believed. */
#define MAX_RETRY_AFTER_MS (300 * 1000)

/* libcurl, loaded with the first OTLP sink (dlopen) rather than linked:
 * its tree of libraries (TLS, Kerberos, LDAP, IDN, ...) cost every start
 * of the daemon 7 ms of loading and constructors, and most runs never
 * export.  Its functions we call: */
static struct {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	const char *(*easy_strerror)(CURLcode rc);
	void (*easy_cleanup)(CURL *c);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
	time_t (*getdate)(const char *s, const time_t *unused);
} lc;
static pthread_once_t lc_once = PTHREAD_ONCE_INIT;
static int lc_err; /* 0, or why libcurl is not there */

static void lc_load(void)
{
	/* Debian's OpenSSL build, then its GnuTLS one */
	static const char *const sonames[] = { "libcurl.so.4",
					       "libcurl-gnutls.so.4" };
	const struct dl_sym syms[] = {
		{ "curl_global_init", (void **)&lc.global_init },
		{ "curl_easy_init", (void **)&lc.easy_init },
		{ "curl_easy_setopt", (void **)&lc.easy_setopt },
		{ "curl_easy_perform", (void **)&lc.easy_perform },
		{ "curl_easy_getinfo", (void **)&lc.easy_getinfo },
		{ "curl_easy_strerror", (void **)&lc.easy_strerror },
		{ "curl_easy_cleanup", (void **)&lc.easy_cleanup },
		{ "curl_slist_append", (void **)&lc.slist_append },
		{ "curl_slist_free_all", (void **)&lc.slist_free_all },
		{ "curl_getdate", (void **)&lc.getdate },
	};
	const char *missing;

	/* the library stays loaded: its global state lives to the exit */
	if (!dl_open_syms(sonames, sizeof(sonames) / sizeof(sonames[0]), syms,
			  sizeof(syms) / sizeof(syms[0]), &missing)) {
		if (missing)
			log_error("reporter: otlp: libcurl lacks %s", missing);
		else
			log_error("reporter: otlp: libcurl (libcurl.so.4) "
				  "cannot be loaded: %s", dlerror());
		lc_err = -ENOSYS;
		return;
	}
	if (lc.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		lc_err = -ENOMEM;
}

/* 0 once libcurl is loaded and set up, else a negative errno. */
static int lc_ready(void)
{
	pthread_once(&lc_once, lc_load);
	return lc_err;
}

void rep_otlp_slist_free(struct curl_slist *l)
{
	if (l && !lc_ready())
		lc.slist_free_all(l);
}

struct item {
	struct item *next;
	uint8_t *data;
	size_t len;
	uint64_t events;
};

struct otlp_sink {
	struct rep_sink base; /* base.lock guards everything below too */
	struct rep_otlp_target target;
	struct curl_slist *headers;
	char *ca_file;
	unsigned timeout_ms, queue_max, retry_initial_ms, retry_max_ms;
	size_t queue_max_bytes;

	pthread_cond_t cond; /* work, stop */
	struct item *head, *tail;
	size_t queue_bytes;
	bool stop;
	uint64_t deadline_ms;	/* with stop: give up sending then */
	uint64_t next_try_ms;	/* backoff: not before */
	unsigned backoff_ms;
	bool failing;		/* logged that the receiver is failing */
	uint64_t rng;		/* xorshift state for the jitter */
	pthread_t thread;
	bool joined;		/* the sender has ended (finish) */
	CURL *curl;
};

enum send_result { SEND_OK, SEND_RETRY, SEND_REJECTED };

struct response {
	long grpc_status; /* -1: none seen */
	long retry_after_ms; /* -1: none */
	char message[160];  /* grpc-message or the start of an HTTP body */
	size_t message_len;
	const struct otlp_sink *sink;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- options ----------------------------------------------------------- */

static const char *env2(const char *name, char *var, size_t n)
{
	const char *v;

	snprintf(var, n, "OTEL_EXPORTER_OTLP_PROFILES_%s", name);
	v = getenv(var);
	if (v && *v)
		return v;
	snprintf(var, n, "OTEL_EXPORTER_OTLP_%s", name);
	v = getenv(var);
	return v && *v ? v : NULL;
}

static int bad_env(const char *var, const char *v)
{
	log_error("reporter: otlp: %s=%s: invalid value, ignored", var, v);
	return -EINVAL;
}

int rep_otlp_opts_from_env(struct rep_otlp_opts *o)
{
	char var[64];
	const char *v;
	int err = 0;

	if (!o->endpoint) {
		v = getenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT");
		if (v && *v) {
			o->endpoint = v;
			o->endpoint_as_is = true; /* a per-signal URL */
		} else if ((v = getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) && *v) {
			o->endpoint = v;
		}
	}
	if (!o->protocol && (v = env2("PROTOCOL", var, sizeof(var)))) {
		if (!strcmp(v, "grpc") || !strcmp(v, "http/protobuf"))
			o->protocol = v;
		else
			err = bad_env(var, v);
	}
	if (!o->headers && (v = env2("HEADERS", var, sizeof(var))))
		o->headers = v;
	if (!o->timeout_ms && (v = env2("TIMEOUT", var, sizeof(var)))) {
		char *end;
		unsigned long ms;

		errno = 0;
		ms = strtoul(v, &end, 10);
		if (errno || *end || !ms || ms > UINT32_MAX)
			err = bad_env(var, v);
		else
			o->timeout_ms = (unsigned)ms;
	}
	if (!o->compression && (v = env2("COMPRESSION", var, sizeof(var)))) {
		if (!strcmp(v, "gzip") || !strcmp(v, "none"))
			o->compression = v;
		else
			err = bad_env(var, v);
	}
	if (!o->insecure && (v = env2("INSECURE", var, sizeof(var)))) {
		if (!strcasecmp(v, "true"))
			o->insecure = true;
		else if (strcasecmp(v, "false"))
			err = bad_env(var, v);
	}
	if (!o->ca_file && (v = env2("CERTIFICATE", var, sizeof(var))))
		o->ca_file = v;
	return err;
}

int rep_otlp_target(const struct rep_otlp_opts *o, struct rep_otlp_target *t)
{
	const char *ep = o->endpoint, *rest, *scheme;
	bool has_scheme, grpc;
	size_t n;
	int r;

	memset(t, 0, sizeof(*t));
	has_scheme = ep && strstr(ep, "://");
	if (o->protocol && strcmp(o->protocol, "grpc") &&
	    strcmp(o->protocol, "http/protobuf")) {
		log_error("reporter: otlp: protocol %s: want grpc or http/protobuf",
			  o->protocol);
		return -EINVAL;
	}
	/* The reference agent's -collection-agent host:port is gRPC; a URL
	 * follows the OTLP default, http/protobuf. */
	grpc = o->protocol ? !strcmp(o->protocol, "grpc") : ep && !has_scheme;
	if (!ep || !*ep)
		ep = grpc ? "http://localhost:4317" : "http://localhost:4318";
	if (strstr(ep, "://")) {
		if (!strncmp(ep, "http://", 7)) {
			t->tls = false;
		} else if (!strncmp(ep, "https://", 8)) {
			t->tls = true;
		} else {
			log_error("reporter: otlp: endpoint %s: want http:// or https://", ep);
			return -EINVAL;
		}
		rest = strstr(ep, "://") + 3;
	} else {
		t->tls = !o->insecure;
		rest = ep;
	}
	if (!*rest || *rest == '/') {
		log_error("reporter: otlp: endpoint %s: no host", ep);
		return -EINVAL;
	}
	scheme = t->tls ? "https://" : "http://";
	t->grpc = grpc;
	if (o->compression && strcmp(o->compression, "gzip") &&
	    strcmp(o->compression, "none")) {
		log_error("reporter: otlp: compression %s: want gzip or none",
			  o->compression);
		return -EINVAL;
	}
	t->gzip = !o->compression || !strcmp(o->compression, "gzip");
	if (grpc) {
		n = strcspn(rest, "/"); /* gRPC: the method path replaces any path */
		r = asprintf(&t->url, "%s%.*s" GRPC_PATH, scheme, (int)n, rest);
	} else if (o->endpoint_as_is) {
		r = asprintf(&t->url, "%s%s", scheme, rest);
	} else {
		n = strlen(rest);
		while (n && rest[n - 1] == '/')
			n--;
		r = asprintf(&t->url, "%s%.*s" HTTP_PATH, scheme, (int)n, rest);
	}
	if (r < 0) {
		t->url = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int unhex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decode s[0..n) with surrounding blanks trimmed into out (n + 1
 * bytes).  CR, LF and NUL would break the request: refused. */
static int decode_item(const char *s, size_t n, char *out)
{
	size_t i, k = 0;

	while (n && isblank((unsigned char)*s))
		s++, n--;
	while (n && isblank((unsigned char)s[n - 1]))
		n--;
	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (c == '%' && i + 2 < n && unhex(s[i + 1]) >= 0 &&
		    unhex(s[i + 2]) >= 0) {
			c = unhex(s[i + 1]) * 16 + unhex(s[i + 2]);
			i += 2;
		}
		if (c == '\r' || c == '\n' || c == 0)
			return -EINVAL;
		out[k++] = (char)c;
	}
	out[k] = 0;
	return 0;
}

int rep_otlp_headers(const char *spec, struct curl_slist **list)
{
	const char *p = spec;

	if (lc_ready())
		return -ENOSYS;

	while (p && *p) {
		size_t n = strcspn(p, ","), kn;
		const char *eq = memchr(p, '=', n);
		char *key = NULL, *val = NULL, *line = NULL;
		struct curl_slist *l;
		int err = 0;

		if (n == strspn(p, " \t")) { /* empty item */
			p += n + (p[n] == ',');
			continue;
		}
		if (!eq)
			goto bad;
		kn = (size_t)(eq - p);
		key = malloc(kn + 1);
		val = malloc(n - kn);
		if (!key || !val)
			err = -ENOMEM;
		else if (decode_item(p, kn, key) || decode_item(eq + 1, n - kn - 1, val) ||
			 !*key || strchr(key, ':'))
			err = -EINVAL;
		else if (asprintf(&line, "%s: %s", key, val) < 0)
			err = -ENOMEM, line = NULL;
		free(key);
		free(val);
		if (err == -EINVAL)
			goto bad;
		if (err)
			return err;
		l = lc.slist_append(*list, line);
		free(line);
		if (!l)
			return -ENOMEM;
		*list = l;
		p += n + (p[n] == ',');
		continue;
bad:
		log_error("reporter: otlp: headers: bad item \"%.*s\" (want key=value)",
			  (int)n, p);
		return -EINVAL;
	}
	return 0;
}

/* ---- the queue ---------------------------------------------------------- */

static void item_free(struct item *it)
{
	if (it) {
		free(it->data);
		free(it);
	}
}

static struct item *pop_head(struct otlp_sink *o)
{
	struct item *it = o->head;

	o->head = it->next;
	if (!o->head)
		o->tail = NULL;
	o->queue_bytes -= it->len;
	o->base.stats.queue_len--;
	return it;
}

/* Whether one more batch of len bytes is within the bounds.  Under lock. */
static bool fits(const struct otlp_sink *o, size_t len)
{
	return o->base.stats.queue_len + 1 <= o->queue_max &&
	       o->queue_bytes + len <= o->queue_max_bytes;
}

/* Drop from the head (the oldest) until a batch of len bytes fits. */
static void make_room(struct otlp_sink *o, size_t len)
{
	while (o->head && !fits(o, len)) {
		item_free(pop_head(o));
		o->base.stats.queue_drops++;
	}
}

static void push_tail(struct otlp_sink *o, struct item *it)
{
	it->next = NULL;
	if (o->tail)
		o->tail->next = it;
	else
		o->head = it;
	o->tail = it;
	o->queue_bytes += it->len;
	o->base.stats.queue_len++;
}

static void push_head(struct otlp_sink *o, struct item *it)
{
	it->next = o->head;
	o->head = it;
	if (!o->tail)
		o->tail = it;
	o->queue_bytes += it->len;
	o->base.stats.queue_len++;
}

/* ---- sending ----------------------------------------------------------- */

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct response *r = arg;
	size_t len = size * n;
	char line[256];
	char *v;

	if (len >= sizeof(line))
		return len;
	memcpy(line, p, len);
	line[len] = 0;
	line[strcspn(line, "\r\n")] = 0;
	v = strchr(line, ':');
	if (!v)
		return len;
	*v++ = 0;
	while (*v == ' ' || *v == '\t')
		v++;
	if (!strcasecmp(line, "grpc-status")) {
		r->grpc_status = strtol(v, NULL, 10);
	} else if (!strcasecmp(line, "grpc-message")) {
		snprintf(r->message, sizeof(r->message), "%s", v);
		r->message_len = strlen(r->message);
	} else if (!strcasecmp(line, "retry-after")) {
		char *end;
		long secs = strtol(v, &end, 10);

		if (end != v && !*end && secs >= 0) {
			r->retry_after_ms = secs * 1000;
		} else {
			time_t t = lc.getdate(v, NULL);

			if (t != -1)
				r->retry_after_ms = t > time(NULL) ? (t - time(NULL)) * 1000 : 0;
		}
	}
	return len;
}

/* Keep the start of an HTTP error body for the log; discard the rest. */
static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct response *r = arg;
	size_t len = size * n, room = sizeof(r->message) - 1 - r->message_len;

	if (!r->sink->target.grpc && room) {
		size_t k = len < room ? len : room, i;

		for (i = 0; i < k; i++)
			r->message[r->message_len++] = isprint((unsigned char)p[i]) ? p[i] : '.';
		r->message[r->message_len] = 0;
	}
	return len;
}

/* Abort a transfer once close() has given up waiting. */
static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c,
		       curl_off_t d)
{
	struct otlp_sink *o = (struct otlp_sink *)((struct response *)arg)->sink;
	int abort_now;

	(void)a;
	(void)b;
	(void)c;
	(void)d;
	pthread_mutex_lock(&o->base.lock);
	abort_now = o->stop && now_ms() >= o->deadline_ms;
	pthread_mutex_unlock(&o->base.lock);
	return abort_now;
}

static bool grpc_retryable(long code)
{
	/* CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED,
	 * OUT_OF_RANGE, UNAVAILABLE, DATA_LOSS */
	return code == 1 || code == 4 || code == 8 || code == 10 || code == 11 ||
	       code == 14 || code == 15;
}

static enum send_result send_one(struct otlp_sink *o, const struct item *it,
				 struct response *r, char *why, size_t why_len)
{
	CURL *c = o->curl;
	long http = 0;
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	r->grpc_status = -1;
	r->retry_after_ms = -1;
	r->sink = o;
	lc.easy_setopt(c, CURLOPT_URL, o->target.url);
	lc.easy_setopt(c, CURLOPT_POST, 1L);
	lc.easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)it->data);
	lc.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)it->len);
	lc.easy_setopt(c, CURLOPT_HTTPHEADER, o->headers);
	lc.easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)o->timeout_ms);
	lc.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)o->timeout_ms);
	lc.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	lc.easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	lc.easy_setopt(c, CURLOPT_HEADERDATA, r);
	lc.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	lc.easy_setopt(c, CURLOPT_WRITEDATA, r);
	lc.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	lc.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	lc.easy_setopt(c, CURLOPT_XFERINFODATA, r);
	lc.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (o->ca_file)
		lc.easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
	if (o->target.grpc) {
		lc.easy_setopt(c, CURLOPT_HTTP_VERSION,
				 o->target.tls ? (long)CURL_HTTP_VERSION_2TLS :
						 (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
		/* libcurl 7.88 (Debian 12) fails the second request on a reused
		 * HTTP/2 connection to a grpcio server ("Error in the HTTP2
		 * framing layer", the curl tool too); one connection per
		 * request costs a handshake every reporting interval. */
		lc.easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
	}
	rc = lc.easy_perform(c);
	if (rc != CURLE_OK) {
		snprintf(why, why_len, "%s", lc.easy_strerror(rc));
		return SEND_RETRY;
	}
	lc.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &http);
	if (o->target.grpc && http == 200) {
		if (r->grpc_status == 0)
			return SEND_OK;
		if (r->grpc_status < 0) {
			snprintf(why, why_len, "no grpc-status in the response");
			return SEND_RETRY;
		}
		snprintf(why, why_len, "grpc-status %ld: %s", r->grpc_status, r->message);
		return grpc_retryable(r->grpc_status) ? SEND_RETRY : SEND_REJECTED;
	}
	if (http >= 200 && http < 300)
		return SEND_OK;
	snprintf(why, why_len, "HTTP %ld: %s", http, r->message);
	if (http == 429 || http == 502 || http == 503 || http == 504)
		return SEND_RETRY;
	return SEND_REJECTED;
}

/* The next backoff: doubled up to the cap, with "equal jitter" (half
 * fixed, half random) so many agents do not retry in step. */
static uint64_t backoff(struct otlp_sink *o, long retry_after_ms)
{
	unsigned b;

	if (retry_after_ms >= 0)
		return retry_after_ms < MAX_RETRY_AFTER_MS ? (uint64_t)retry_after_ms :
							     MAX_RETRY_AFTER_MS;
	b = o->backoff_ms ? o->backoff_ms * 2 : o->retry_initial_ms;
	if (b > o->retry_max_ms || b < o->backoff_ms)
		b = o->retry_max_ms;
	o->backoff_ms = b;
	o->rng ^= o->rng << 13;
	o->rng ^= o->rng >> 7;
	o->rng ^= o->rng << 17;
	return b / 2 + o->rng % (b / 2 + 1);
}

static void wait_until(struct otlp_sink *o, uint64_t when_ms)
{
	struct timespec ts;

	if (when_ms == UINT64_MAX) {
		pthread_cond_wait(&o->cond, &o->base.lock);
		return;
	}
	ts.tv_sec = (time_t)(when_ms / 1000);
	ts.tv_nsec = (long)(when_ms % 1000) * 1000000;
	pthread_cond_timedwait(&o->cond, &o->base.lock, &ts);
}

static void *sender(void *arg)
{
	struct otlp_sink *o = arg;
	struct response r;
	char why[256];

	pthread_mutex_lock(&o->base.lock);
	for (;;) {
		uint64_t now = now_ms(), wake = UINT64_MAX;
		enum send_result res;
		struct item *it;

		/* stopping: done when nothing is left, or when the next try
		 * would come after the deadline anyway */
		if (o->stop && (!o->head || now >= o->deadline_ms ||
				o->next_try_ms >= o->deadline_ms))
			break;
		if (o->head && now >= o->next_try_ms) {
			it = pop_head(o);
			pthread_mutex_unlock(&o->base.lock);
			res = send_one(o, it, &r, why, sizeof(why));
			pthread_mutex_lock(&o->base.lock);
			if (res == SEND_OK) {
				o->base.stats.send_ok++;
				o->base.stats.batches++;
				o->base.stats.samples += it->events;
				o->base.stats.bytes += it->len;
				o->backoff_ms = 0;
				o->next_try_ms = 0;
				if (o->failing)
					log_info("reporter: otlp: %s: sending again",
						 o->target.url);
				o->failing = false;
				item_free(it);
			} else if (res == SEND_RETRY) {
				o->base.stats.send_fail++;
				o->next_try_ms = now_ms() + backoff(o, r.retry_after_ms);
				if (!o->failing)
					log_warn("reporter: otlp: %s: %s; retrying",
						 o->target.url, why);
				o->failing = true;
				/* Back at the head: it is the oldest, so when the
				 * queue filled up meanwhile, it is the one to go. */
				if (!fits(o, it->len)) {
					o->base.stats.queue_drops++;
					item_free(it);
				} else {
					push_head(o, it);
				}
			} else {
				o->base.stats.send_fail++;
				o->base.stats.send_rejected++;
				log_warn("reporter: otlp: %s: %s; batch dropped",
					 o->target.url, why);
				item_free(it);
			}
			continue;
		}
		if (o->head)
			wake = o->next_try_ms;
		if (o->stop && o->deadline_ms < wake)
			wake = o->deadline_ms;
		wait_until(o, wake);
	}
	if (o->head)
		log_warn("reporter: otlp: %s: %" PRIu64 " batches not sent at exit",
			 o->target.url, o->base.stats.queue_len);
	while (o->head) {
		item_free(pop_head(o));
		o->base.stats.queue_drops++;
	}
	pthread_mutex_unlock(&o->base.lock);
	return NULL;
}

/* ---- the sink ------------------------------------------------------------ */

static int otlp_write(struct rep_sink *s, const struct rep_batch *b)
{
	struct otlp_sink *o = (struct otlp_sink *)s;
	const size_t hdr = o->target.grpc ? 5 : 0;
	struct item *it = NULL;
	void *raw = NULL;
	size_t len = 0;
	int err;

	err = rep_encode_otlp(b, &raw, &len);
	if (err)
		goto fail;
	it = calloc(1, sizeof(*it));
	if (!it) {
		err = -ENOMEM;
		goto fail;
	}
	if (o->target.gzip) {
		err = rep_gzip(raw, len, hdr, (void **)&it->data, &it->len);
		if (err)
			goto fail;
	} else {
		it->data = malloc(hdr + len + 1);
		if (!it->data) {
			err = -ENOMEM;
			goto fail;
		}
		memcpy(it->data + hdr, raw, len);
		it->len = hdr + len;
	}
	if (hdr) {
		/* gRPC message framing: compressed flag, big-endian length. */
		uint32_t n = (uint32_t)(it->len - hdr);

		if (it->len - hdr > UINT32_MAX) {
			err = -E2BIG;
			goto fail;
		}
		it->data[0] = o->target.gzip ? 1 : 0;
		it->data[1] = (uint8_t)(n >> 24);
		it->data[2] = (uint8_t)(n >> 16);
		it->data[3] = (uint8_t)(n >> 8);
		it->data[4] = (uint8_t)n;
	}
	it->events = rep_batch_events(b);
	free(raw);
	pthread_mutex_lock(&s->lock);
	if (it->len > o->queue_max_bytes) {
		s->stats.queue_drops++;
		pthread_mutex_unlock(&s->lock);
		item_free(it);
		return -E2BIG;
	}
	make_room(o, it->len);
	push_tail(o, it);
	pthread_cond_signal(&o->cond);
	pthread_mutex_unlock(&s->lock);
	return 0;
fail:
	free(raw);
	item_free(it);
	pthread_mutex_lock(&s->lock);
	s->stats.queue_drops++;
	pthread_mutex_unlock(&s->lock);
	return err;
}

static void otlp_free(struct otlp_sink *o)
{
	while (o->head)
		item_free(pop_head(o));
	if (o->curl)
		lc.easy_cleanup(o->curl);
	if (o->headers)
		lc.slist_free_all(o->headers);
	free(o->target.url);
	free(o->ca_file);
	pthread_cond_destroy(&o->cond);
	pthread_mutex_destroy(&o->base.lock);
	free(o);
}

static void otlp_finish(struct rep_sink *s, unsigned timeout_ms)
{
	struct otlp_sink *o = (struct otlp_sink *)s;

	if (o->joined)
		return;
	pthread_mutex_lock(&s->lock);
	o->stop = true;
	o->deadline_ms = now_ms() + timeout_ms;
	pthread_cond_signal(&o->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(o->thread, NULL);
	o->joined = true;
}

static void otlp_close(struct rep_sink *s, unsigned timeout_ms)
{
	otlp_finish(s, timeout_ms);
	otlp_free((struct otlp_sink *)s);
}

static const struct rep_sink_ops otlp_ops = {
	.write = otlp_write,
	.finish = otlp_finish,
	.close = otlp_close,
};

static int add_header(struct curl_slist **list, const char *h)
{
	struct curl_slist *l = lc.slist_append(*list, h);

	if (!l)
		return -ENOMEM;
	*list = l;
	return 0;
}

static int build_headers(struct otlp_sink *o, const char *user)
{
	int err;

	if (o->target.grpc) {
		err = add_header(&o->headers, "Content-Type: application/grpc");
		if (!err)
			err = add_header(&o->headers, "TE: trailers");
		if (!err && o->target.gzip)
			err = add_header(&o->headers, "grpc-encoding: gzip");
		if (!err)
			err = add_header(&o->headers, "grpc-accept-encoding: identity,gzip");
	} else {
		err = add_header(&o->headers, "Content-Type: application/x-protobuf");
		if (!err && o->target.gzip)
			err = add_header(&o->headers, "Content-Encoding: gzip");
	}
	if (!err)
		err = add_header(&o->headers, "User-Agent: ebpf-profiler/" EP_VERSION);
	/* libcurl's "Expect: 100-continue" costs a round trip per request. */
	if (!err)
		err = add_header(&o->headers, "Expect:");
	if (!err && user)
		err = rep_otlp_headers(user, &o->headers);
	return err;
}

int rep_otlp_sink_open(const struct rep_otlp_opts *opts, struct rep_sink **out)
{
	struct otlp_sink *o;
	pthread_condattr_t ca;
	int err;

	err = lc_ready();
	if (err)
		return err;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	rep_sink_init(&o->base, &otlp_ops);
	/* Agents started together should not retry together. */
	o->rng = (now_ms() << 20) ^ ((uint64_t)getpid() << 40) ^ (uintptr_t)o;
	o->rng |= 1;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&o->cond, &ca);
	pthread_condattr_destroy(&ca);
	o->timeout_ms = opts->timeout_ms ? opts->timeout_ms : DEFAULT_TIMEOUT_MS;
	o->queue_max = opts->queue_max ? opts->queue_max : DEFAULT_QUEUE_MAX;
	o->queue_max_bytes = opts->queue_max_bytes ? opts->queue_max_bytes :
						     DEFAULT_QUEUE_BYTES;
	o->retry_initial_ms = opts->retry_initial_ms ? opts->retry_initial_ms :
						       DEFAULT_RETRY_INITIAL_MS;
	o->retry_max_ms = opts->retry_max_ms ? opts->retry_max_ms : DEFAULT_RETRY_MAX_MS;
	if (o->retry_max_ms < o->retry_initial_ms)
		o->retry_max_ms = o->retry_initial_ms;
	err = rep_otlp_target(opts, &o->target);
	if (!err)
		err = build_headers(o, opts->headers);
	if (!err && opts->ca_file && !(o->ca_file = strdup(opts->ca_file)))
		err = -ENOMEM;
	if (!err && !(o->curl = lc.easy_init()))
		err = -ENOMEM;
	if (!err)
		err = -pthread_create(&o->thread, NULL, sender, o);
	if (err) {
		otlp_free(o);
		return err;
	}
	log_info("reporter: otlp: sending to %s (%s%s)", o->target.url,
		 o->target.grpc ? "gRPC" : "HTTP", o->target.gzip ? ", gzip" : "");
	*out = &o->base;
	return 0;
}
