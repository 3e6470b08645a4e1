// SPDX-License-Identifier: Apache-2.0
/*
 * `cache` with the real extractor.  Apart from cache_cmd.c so that the
 * tests can run the command with their own extractor without linking
 * the unwind-table parsers.
 */
#include "cache_cmd.h"

#include <errno.h>
#include <stdlib.h>

#include "deltas.h"
#include "fileid.h"
#include "interp.h"
#include "kbtf.h"
#include "procmgr.h"
#include "store.h"
#include "tracer.h"

static int extract_deltas(int fd, const char *path, void **buf, size_t *len)
{
	struct dt_file *f = NULL;
	int err;

	*buf = NULL;
	*len = 0;
	err = dt_extract_file(fd, path, &f);
	if (!err)
		err = dt_file_record(f, buf, len);
	dt_file_free(f);
	return err;
}

/* The vDSO is not a file on disk but every process maps it: store its
 * deltas too, so a warmed cache covers every process' mappings. */
static int warm_vdso(struct store *s)
{
	struct dt_file *f = NULL;
	struct file_id id;
	const void *data;
	void *buf = NULL;
	size_t len, blen = 0;
	int err;

	err = pm_vdso_image(&data, &len);
	if (!err)
		err = fileid_from_mem(data, len, &id);
	if (err)
		return err;
	if (store_has(s, id.b, STORE_KIND_DELTAS) == 0)
		return 0; /* already there */
	err = dt_extract_mem(data, len, NULL, &f);
	if (!err)
		err = dt_file_record(f, &buf, &blen);
	if (!err)
		err = store_put(s, id.b, STORE_KIND_DELTAS, buf, blen);
	free(buf);
	dt_file_free(f);
	return err;
}

/* The running kernel's types for CO-RE (kbtf.h), as the daemon keeps
 * them: a golden image booted on this kernel never parses its BTF. */
static int warm_kernel_types(struct store *s)
{
	size_t olen, len = 0;
	const void *obj = tracer_object(&olen);
	struct file_id key;
	void *types = NULL;
	int err;

	err = kbtf_key(obj, olen, &key);
	if (err)
		return err;
	if (store_has(s, key.b, STORE_KIND_KTYPES) == 0)
		return 0;
	err = kbtf_build(obj, olen, &types, &len);
	if (!err)
		err = store_put(s, key.b, STORE_KIND_KTYPES, types, len);
	free(types);
	return err;
}

/* The interpreter runtimes the daemon would find, for warm_file: the
 * runtimes on by default, detected into the warm run's store. */
static struct interp_mgr *warm_im;

static int warm_extra(struct store *s)
{
	int err = warm_vdso(s), err2 = warm_kernel_types(s);

	if (!warm_im && interp_mgr_new(NULL, s, "all", &warm_im))
		warm_im = NULL; /* no memory: files get their deltas only */
	return err ? err : err2;
}

static unsigned warm_file(const uint8_t id[16], const char *path, int fd)
{
	return warm_im ? interp_warm(warm_im, id, path, fd) : 0;
}

int cache_cmd_main(int argc, char **argv)
{
	static const struct cache_extractor deltas = { extract_deltas, warm_extra,
						       warm_file };
	int rc;

	rc = cache_cmd_run(argc, argv, &deltas);
	interp_mgr_free(warm_im);
	warm_im = NULL;
	return rc;
}
