// SPDX-License-Identifier: Apache-2.0
/*
 * Sinks: the common head (stats) and the file sink.  A file sink encodes a
 * batch in the format its extension names, writes it to a temporary file in
 * the same directory and renames it over the target, so a reader never
 * sees a half-written profile.  With rotate, every batch gets its own file:
 * the interval's start (UTC) goes in before the extension,
 * profile.pb.gz -> profile-20261122T101500Z.pb.gz.
 */
#include "rep_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "log.h"

void rep_sink_init(struct rep_sink *s, const struct rep_sink_ops *ops)
{
	s->ops = ops;
	pthread_mutex_init(&s->lock, NULL);
	memset(&s->stats, 0, sizeof(s->stats));
}

uint64_t rep_batch_events(const struct rep_batch *b)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < b->n_samples; i++)
		n += b->samples[i].count;
	return n;
}

bool rep_batch_has(const struct rep_batch *b, unsigned kind)
{
	uint32_t i;

	for (i = 0; i < b->n_samples; i++)
		if (b->samples[i].kind == kind && b->samples[i].count)
			return true;
	return false;
}

int rep_batch_view(const struct rep_batch *b, unsigned kind,
		   struct rep_batch *view, struct rep_sample **samples)
{
	struct rep_sample *v = calloc(b->n_samples + 1, sizeof(*v));
	uint32_t i, n = 0;

	*samples = v;
	if (!v)
		return -ENOMEM;
	for (i = 0; i < b->n_samples; i++) {
		const struct rep_sample *s = &b->samples[i];

		if (s->kind != kind)
			continue;
		v[n] = *s;
		if (kind == REP_SAMPLE_OFFCPU) {
			v[n].count = (s->value + 500) / 1000;
			v[n].n_timestamps = 0;
			v[n].timestamps = NULL;
		}
		if (v[n].count)
			n++;
	}
	*view = *b;
	view->samples = v;
	view->n_samples = n;
	if (kind == REP_SAMPLE_OFFCPU)
		view->period_ns = 0; /* microseconds, not samples at a rate */
	return 0;
}

int rep_sink_write(struct rep_sink *s, const struct rep_batch *b)
{
	return s->ops->write(s, b);
}

void rep_sink_stats(struct rep_sink *s, struct rep_stats *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->stats;
	pthread_mutex_unlock(&s->lock);
}

void rep_sink_finish(struct rep_sink *s, unsigned timeout_ms)
{
	if (s && s->ops->finish)
		s->ops->finish(s, timeout_ms);
}

void rep_sink_close(struct rep_sink *s, unsigned timeout_ms)
{
	if (s)
		s->ops->close(s, timeout_ms);
}

/* ---- file sink ------------------------------------------------------ */

enum file_format { FMT_FOLDED, FMT_PPROF, FMT_SVG, FMT_OTLP };

static const struct {
	const char *ext;
	enum file_format fmt;
} formats[] = {
	{ ".folded", FMT_FOLDED }, { ".pb.gz", FMT_PPROF }, { ".pprof", FMT_PPROF },
	{ ".svg", FMT_SVG },	   { ".otlp", FMT_OTLP },
};

struct file_sink {
	struct rep_sink base;
	char *path;
	size_t ext_len; /* the extension's length at the end of path */
	enum file_format fmt;
	bool rotate;
};

/* kind: for folded and SVG, the one kind of samples the file shows. */
static int encode(const struct file_sink *f, const struct rep_batch *b,
		  unsigned kind, void **buf, size_t *len)
{
	struct rep_sample *samples = NULL;
	struct rep_batch v;
	char title[256];
	int err;

	switch (f->fmt) {
	case FMT_PPROF:
		return rep_encode_pprof(b, buf, len);
	case FMT_OTLP:
		return rep_encode_otlp(b, buf, len);
	case FMT_FOLDED:
	case FMT_SVG:
		break;
	}
	err = rep_batch_view(b, kind, &v, &samples);
	if (!err && f->fmt == FMT_FOLDED) {
		err = rep_encode_folded(&v, (char **)buf, len);
	} else if (!err) {
		snprintf(title, sizeof(title), "%s flame graph%s%s",
			 kind == REP_SAMPLE_OFFCPU ? "Off-CPU (microseconds)" :
						     "CPU",
			 b->host_name ? ": " : "", b->host_name ? b->host_name : "");
		err = rep_encode_svg(&v, title, (char **)buf, len);
	}
	free(samples);
	return err;
}

/* PATH, or PATH with "-YYYYmmddTHHMMSSZ" before the extension; infix
 * (".offcpu", or "") goes last before it. */
static char *target_path(const struct file_sink *f, const struct rep_batch *b,
			 const char *infix)
{
	size_t stem = strlen(f->path) - f->ext_len;
	time_t t = (time_t)(b->start_ns / 1000000000ULL);
	char stamp[32] = "";
	struct tm tm;
	char *p;

	if (f->rotate) {
		gmtime_r(&t, &tm);
		strftime(stamp, sizeof(stamp), "-%Y%m%dT%H%M%SZ", &tm);
	}
	if (asprintf(&p, "%.*s%s%s%s", (int)stem, f->path, stamp, infix,
		     f->path + stem) < 0)
		return NULL;
	return p;
}

/* Write to a temporary file beside path, then rename it over path. */
static int replace_file(const char *path, const void *data, size_t len)
{
	char *tmp = NULL;
	const char *base = strrchr(path, '/');
	int fd = -1, err;

	if (asprintf(&tmp, "%.*s.%s.tmp.XXXXXX", base ? (int)(base - path + 1) : 0,
		     path, base ? base + 1 : path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	err = fs_write_all(fd, data, len);
	/* mkostemp makes 0600; a profile is for reading. */
	if (!err && fchmod(fd, 0644))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	fd = -1;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
cleanup:
	free(tmp);
	return err;
}

static int file_write(struct rep_sink *s, const struct rep_batch *b)
{
	struct file_sink *f = (struct file_sink *)s;
	void *buf = NULL;
	char *path = NULL;
	size_t len = 0;
	int err;

	err = encode(f, b, REP_SAMPLE_CPU, &buf, &len);
	if (!err) {
		path = target_path(f, b, "");
		err = path ? replace_file(path, buf, len) : -ENOMEM;
	}
	/* folded and SVG weigh a stack by one number: off-CPU time goes to
	 * its own file beside the CPU one */
	if (!err && (f->fmt == FMT_FOLDED || f->fmt == FMT_SVG) &&
	    rep_batch_has(b, REP_SAMPLE_OFFCPU)) {
		size_t olen = 0;

		free(buf);
		free(path);
		buf = NULL;
		err = encode(f, b, REP_SAMPLE_OFFCPU, &buf, &olen);
		path = err ? NULL : target_path(f, b, ".offcpu");
		if (!err)
			err = path ? replace_file(path, buf, olen) : -ENOMEM;
		len += olen;
	}
	pthread_mutex_lock(&s->lock);
	if (err) {
		s->stats.write_errors++;
	} else {
		s->stats.batches++;
		s->stats.samples += rep_batch_events(b);
		s->stats.bytes += len;
	}
	pthread_mutex_unlock(&s->lock);
	if (err)
		log_error("reporter: file %s: write: %s", path ? path : f->path,
			  strerror(-err));
	free(path);
	free(buf);
	return err;
}

static void file_close(struct rep_sink *s, unsigned timeout_ms)
{
	struct file_sink *f = (struct file_sink *)s;

	(void)timeout_ms;
	pthread_mutex_destroy(&s->lock);
	free(f->path);
	free(f);
}

static const struct rep_sink_ops file_ops = {
	.write = file_write,
	.close = file_close,
};

int rep_file_sink_open(const char *path, bool rotate, struct rep_sink **out)
{
	size_t n = strlen(rep_basename(path)), i;
	struct file_sink *f;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		size_t e = strlen(formats[i].ext);

		/* A name before the extension, so rotation has a stem. */
		if (n > e && !strcmp(rep_basename(path) + n - e, formats[i].ext))
			break;
	}
	if (i == sizeof(formats) / sizeof(formats[0])) {
		log_error("reporter: file %s: unknown format (want .folded, .pb.gz, "
			  ".pprof, .svg or .otlp)", path);
		return -EINVAL;
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return -ENOMEM;
	}
	rep_sink_init(&f->base, &file_ops);
	f->fmt = formats[i].fmt;
	f->ext_len = strlen(formats[i].ext);
	f->rotate = rotate;
	*out = &f->base;
	return 0;
}
