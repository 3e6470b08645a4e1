// SPDX-License-Identifier: Apache-2.0
#include "ksyms.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "arr.h"
#include "sorted.h"
#include "log.h"

struct ksym {
	uint64_t addr;
	uint32_t name;	 /* offset into strs */
	uint32_t module; /* offset into strs, 0 = none */
};

struct ksyms {
	struct ksym *syms;
	uint32_t n, cap;
	char *strs;
	size_t strs_len, strs_cap;
};

static int add_str(struct ksyms *k, const char *s, uint32_t *off)
{
	size_t n = strlen(s) + 1;

	/* offsets are 32-bit */
	if (k->strs_len + n > UINT32_MAX)
		return -E2BIG;
	if (ARR_RESERVE(k->strs, k->strs_cap, k->strs_len + n, UINT32_MAX))
		return -ENOMEM;
	memcpy(k->strs + k->strs_len, s, n);
	*off = (uint32_t)k->strs_len;
	k->strs_len += n;
	return 0;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return CMP3(x->addr, y->addr);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One "ADDR TYPE NAME[\t[MODULE]]" line, parsed in place (the file has
 * hundreds of thousands; sscanf was most of the start-up's CPU).  Returns
 * false for a line to skip. */
static bool parse_line(char *line, char *end, uint64_t *addr, char *type,
		       char **name, char **mod)
{
	char *p = line;
	uint64_t a = 0;
	int v;

	while (p < end && (v = hexval(*p)) >= 0) {
		a = (a << 4) | (unsigned)v;
		p++;
	}
	if (p == line || p + 3 > end || *p != ' ')
		return false;
	*type = p[1];
	if (p[2] != ' ')
		return false;
	p += 3;
	*name = p;
	while (p < end && *p != '\t' && *p != ' ')
		p++;
	*mod = NULL;
	if (p < end) {
		*p++ = 0;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p < end && *p == '[') {
			char *m = ++p;

			while (p < end && *p != ']')
				p++;
			*p = 0;
			*mod = m;
		}
	} else {
		*p = 0;
	}
	*addr = a;
	return **name != 0;
}

int ksyms_load(const char *path, struct ksyms **out)
{
	size_t len = 0, cap = 0;
	char *buf = NULL, *line, *nl, *end;
	struct ksyms *k = NULL;
	bool nonzero = false, sorted = true;
	uint32_t empty;
	int fd, err = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* read it whole: a seq file, its size is not known in advance */
	for (;;) {
		ssize_t n;

		/* room for 64 KiB more and the NUL */
		if (ARR_RESERVE(buf, cap, len + 65536 + 1, ARR_NO_LIMIT)) {
			err = -ENOMEM;
			goto out;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = 0;
	k = calloc(1, sizeof(*k));
	if (!k) {
		err = -ENOMEM;
		goto out;
	}
	err = add_str(k, "", &empty);
	for (line = buf, end = buf + len; !err && line < end; line = nl + 1) {
		char type, *name, *mod;
		uint64_t addr;
		struct ksym *s;

		nl = memchr(line, '\n', end - line);
		if (!nl)
			nl = end;
		*nl = 0;
		if (!parse_line(line, nl, &addr, &type, &name, &mod))
			continue;
		/* text symbols only: t/T, weak w/W */
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (addr)
			nonzero = true;
		if (ARR_PUSH(k->syms, k->n, k->cap, ARR_NO_LIMIT)) {
			err = -ENOMEM;
			break;
		}
		s = &k->syms[k->n];
		if (k->n && addr < k->syms[k->n - 1].addr)
			sorted = false;
		s->addr = addr;
		s->module = 0;
		err = add_str(k, name, &s->name);
		if (!err && mod && *mod)
			err = add_str(k, mod, &s->module);
		if (!err)
			k->n++;
	}
	if (!err && !nonzero)
		err = -EPERM;
	if (!err && !sorted)
		qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
out:
	close(fd);
	free(buf);
	if (err) {
		ksyms_free(k);
		return err;
	}
	*out = k;
	return 0;
}

void ksyms_free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->strs);
	free(k);
}

const char *ksyms_lookup(const struct ksyms *k, uint64_t addr, uint64_t *off,
			 const char **module)
{
	const struct ksym *s;
	int64_t i;

	if (!k)
		return NULL;
	i = floor_u64(k->syms, k->n, sizeof(*k->syms), addr);
	if (i < 0)
		return NULL;
	s = &k->syms[i];
	if (off)
		*off = addr - s->addr;
	if (module)
		*module = s->module ? k->strs + s->module : NULL;
	return k->strs + s->name;
}

uint32_t ksyms_count(const struct ksyms *k)
{
	return k ? k->n : 0;
}

struct ksyms_async {
	pthread_t thread;
	bool started, joined;
	char *path;
	struct ksyms *k;
	int err;
};

static void *load_thread(void *arg)
{
	struct ksyms_async *a = arg;

	a->err = ksyms_load(a->path, &a->k);
	return NULL;
}

int ksyms_async_new(const char *path, struct ksyms_async **out)
{
	struct ksyms_async *a = calloc(1, sizeof(*a));

	*out = NULL;
	if (!a)
		return -ENOMEM;
	a->path = strdup(path);
	if (!a->path) {
		free(a);
		return -ENOMEM;
	}
	*out = a;
	return 0;
}

void ksyms_async_start(struct ksyms_async *a)
{
	if (!a || a->started)
		return;
	if (pthread_create(&a->thread, NULL, load_thread, a) == 0) {
		a->started = true;
		return;
	}
	load_thread(a); /* no thread: load now */
	a->started = a->joined = true;
}

struct ksyms *ksyms_async_get(struct ksyms_async *a)
{
	if (!a)
		return NULL;
	if (!a->started)
		ksyms_async_start(a);
	if (a->started && !a->joined) {
		pthread_join(a->thread, NULL);
		a->joined = true;
		if (a->err)
			log_warn("kernel symbols unavailable (%s): kernel frames "
				 "show as addresses",
				 strerror(-a->err));
	}
	return a->k;
}

void ksyms_async_free(struct ksyms_async *a)
{
	if (!a)
		return;
	ksyms_async_get(a);
	ksyms_free(a->k);
	free(a->path);
	free(a);
}
