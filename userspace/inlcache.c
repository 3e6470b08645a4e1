// SPDX-License-Identifier: Apache-2.0
#include "inlcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "debugfind.h"
#include "elfmap.h"
#include "hashmap.h"
#include "store.h"

struct inl_cache {
	struct inl_opts o;
	/* file id64 -> table pointer, 0: none, or PENDING(generation): its
	 * debug file is being downloaded (pointers are even) */
	struct hm by_id;
	struct inl_stats st;
};

#define PENDING(gen) (((gen) << 1) | 1)

int inl_new(const struct inl_opts *o, struct inl_cache **out)
{
	struct inl_cache *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return -ENOMEM;
	if (o)
		c->o = *o;
	if (!c->o.max_bytes)
		c->o.max_bytes = INL_MAX_BYTES;
	if (!c->o.max_files)
		c->o.max_files = INL_MAX_FILES;
	if (!c->o.max_build_ns)
		c->o.max_build_ns = INL_MAX_BUILD_NS;
	hm_init(&c->by_id);
	*out = c;
	return 0;
}

void inl_free(struct inl_cache *c)
{
	uint32_t it = 0;
	uint64_t k, v;

	if (!c)
		return;
	while (hm_next(&c->by_id, &it, &k, &v))
		if (!(v & 1))
			dwi_free((struct dwi_table *)(uintptr_t)v);
	hm_free(&c->by_id);
	free(c);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* f's table, built now; NULL when it has none (remembered). */
/* The file holding f's DWARF: f itself when it has .debug_info, else its
 * separate debug file (debugfind.h: build id, .gnu_debuglink, fetch
 * hook).  An fd the caller closes, or a negative errno. */
static int own_debug_fd(const struct exe_file *f)
{
	struct elfm *e = NULL;
	int fd = exe_fd(f), ret;

	if (f->is_vdso || fd < 0)
		return -ENODATA;
	ret = elfm_open_fd(fd, &e);
	if (ret)
		return ret;
	if (elfm_section(e, ".debug_info")) {
		ret = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (ret < 0)
			ret = -errno;
	} else {
		ret = dbgf_open_fd(e, f->path, NULL);
	}
	elfm_free(e);
	return ret;
}

static int load_stored(void *arg, const void *val, size_t len)
{
	return dwi_load(val, len, arg);
}

/* f's table from the persistent cache, or NULL.  A record that passed
 * the store's checksum but not dwi_load's checks (another version, or
 * written damaged) is counted, and replaced by the table built next. */
static struct dwi_table *stored(struct inl_cache *c, const struct exe_file *f)
{
	struct dwi_table *t = NULL;
	int err;

	if (!c->o.store)
		return NULL;
	err = store_read(c->o.store, f->id.b, STORE_KIND_INLINE, load_stored,
			 &t);
	if (!err) {
		c->st.from_store++;
		return t;
	}
	if (err == -EPROTO || err == -EBADMSG)
		c->st.store_rejected++;
	return NULL;
}

static void keep(struct inl_cache *c, const struct exe_file *f,
		 const struct dwi_table *t)
{
	const void *blob;
	size_t len;

	if (!c->o.store)
		return;
	blob = dwi_blob(t, &len);
	if (store_put(c->o.store, f->id.b, STORE_KIND_INLINE, blob, len))
		c->st.store_errors++;
}

static struct dwi_table *build(struct inl_cache *c, const struct exe_file *f)
{
	struct dwi_opts o = { .max_bytes = c->o.file_max_bytes,
			      .max_ns = c->o.max_build_ns };
	struct dwi_table *t = NULL;
	struct dwi_stats ds = { 0 };
	uint64_t t0 = now_ns();
	int fd, err;

	if (c->by_id.count >= c->o.max_files ||
	    c->st.bytes >= c->o.max_bytes) {
		c->st.full++;
		goto none;
	}
	t = stored(c, f);
	if (t)
		goto have;
	fd = c->o.debug_fd ? c->o.debug_fd(c->o.arg, f) : own_debug_fd(f);
	if (fd == -EAGAIN && c->o.fetch_gen) {
		/* asked again when a download has ended */
		if (hm_put(&c->by_id, f->id64,
			   PENDING(c->o.fetch_gen(c->o.fetch_arg))) == 0)
			c->st.pending++;
		return NULL;
	}
	err = fd < 0 ? fd : dwi_build_fd(fd, &o, &t);
	if (fd >= 0)
		close(fd);
	c->st.build_ns += now_ns() - t0;
	if (err) {
		if (err == -ENODATA || err == -ENOENT || err == -ENOEXEC)
			c->st.no_dwarf++;
		else if (err == -ETIMEDOUT)
			c->st.timeouts++;
		else
			c->st.errors++;
		goto none;
	}
	c->st.built++;
	keep(c, f, t);
have:
	dwi_stats(t, &ds);
	if (c->st.bytes + ds.bytes > c->o.max_bytes) {
		c->st.full++;
		dwi_free(t);
		t = NULL;
	}
none:
	/* a failed put only means building again next time */
	if (hm_put(&c->by_id, f->id64, (uintptr_t)t)) {
		dwi_free(t);
		return NULL;
	}
	if (t) {
		c->st.bytes += ds.bytes;
		c->st.tables++;
		if (dwi_flags(t) & DWI_FUNCS_ONLY) {
			c->st.funcs_only++;
			budget_over(BUDGET_INLINE);
		}
	}
	return t;
}

int inl_lookup(struct inl_cache *c, const struct exe_file *f, uint64_t addr,
	       struct dwi_frame *out)
{
	struct dwi_table *t;
	uint64_t v;

	if (!hm_get(&c->by_id, f->id64, &v)) {
		t = build(c, f);
	} else if (v & 1) {
		if (PENDING(c->o.fetch_gen(c->o.fetch_arg)) == v)
			return 0;
		hm_del(&c->by_id, f->id64);
		c->st.pending--;
		t = build(c, f);
	} else {
		t = (struct dwi_table *)(uintptr_t)v;
	}
	return t ? dwi_lookup(t, addr, out, INL_MAX_FRAMES) : 0;
}

bool inl_busy(struct inl_cache *c)
{
	return c->o.fetch_busy && c->o.fetch_busy(c->o.fetch_arg);
}

void inl_get_stats(const struct inl_cache *c, struct inl_stats *out)
{
	*out = c->st;
}
