// SPDX-License-Identifier: Apache-2.0
/*
 * dt_extract_file: every source of unwind information of one ELF file,
 * layered into one dt_file (see deltas.h for the order and priorities).
 */
#include <errno.h>
#include <string.h>

#include "debugfind.h"
#include "deltas.h"
#include "ehframe.h"
#include "elfmap.h"
#include "gopclntab.h"

/* A file whose own tables describe fewer functions than this follows its
 * debuglink (as the reference agent: crt stubs alone give a few FDEs). */
#define DEBUGLINK_BELOW 8

/* Errors that end extraction; anything else only means "no such
 * table". */
static bool fatal(int err)
{
	return err == -ENOMEM || err == -E2BIG;
}

static int extract(const struct elfm *e, const char *path,
		   const struct dt_extract_opts *opts, struct dt_file **out)
{
	struct dt_extract_stats local, *st = opts && opts->stats ? opts->stats
								 : &local;
	struct gopc_table *go = NULL;
	struct dt_builder *b = NULL;
	struct elfm *dbg = NULL;
	uint64_t lo, hi;
	int err, n, fdes = 0;

	*out = NULL;
	memset(st, 0, sizeof(*st));
	if (elfm_ehdr(e)->e_machine !=
	    (opts && opts->machine ? opts->machine : DT_HOST_MACHINE))
		return -ENOEXEC;
	err = dt_builder_new(&b);
	if (err)
		return err;
	if (elfm_text_span(e, &lo, &hi) == 0)
		dt_builder_set_text(b, lo, hi);

	err = gopc_open(e, &go);
	if (fatal(err))
		goto cleanup;
	if (go) {
		err = gopc_add_rows(e, go, b, st);
		if (err < 0)
			goto cleanup;
	}

	n = ehf_eh_frame(e, e, b, st);
	if (fatal(n)) {
		err = n;
		goto cleanup;
	}
	fdes += n > 0 ? n : 0;

	/* Go's own .debug_frame says only what its pclntab says, less. */
	if (!go) {
		n = ehf_debug_frame(e, e, DT_SRC_DEBUG_FRAME, b, st);
		if (fatal(n)) {
			err = n;
			goto cleanup;
		}
		fdes += n > 0 ? n : 0;
	}

	if (!go && fdes < DEBUGLINK_BELOW && path &&
	    !(opts && opts->no_debuglink) &&
	    dbgf_open(e, path, opts ? opts->debug_dir : NULL, &dbg,
		      st->debug_file, sizeof(st->debug_file)) == 0) {
		n = ehf_debug_frame(dbg, e, DT_SRC_DEBUG_FRAME | DT_SRC_DEBUGLINK,
				    b, st);
		if (fatal(n)) {
			err = n;
			goto cleanup;
		}
	}

	n = ehf_synth_plt(e, b, st);
	if (fatal(n)) {
		err = n;
		goto cleanup;
	}
	n = ehf_synth_vdso_a64(e, b, st);
	if (fatal(n)) {
		err = n;
		goto cleanup;
	}
	err = dt_builder_finish(b, out);
	/* a file that shrank while we read it gave rows from zeros */
	if (!err && (elfm_damaged(e) || (dbg && elfm_damaged(dbg)))) {
		dt_file_free(*out);
		*out = NULL;
		err = -EIO;
	}
cleanup:
	elfm_free(dbg);
	gopc_free(go);
	dt_builder_free(b);
	return err < 0 ? err : 0;
}

int dt_extract_file_opts(int fd, const char *path,
			 const struct dt_extract_opts *opts,
			 struct dt_file **out)
{
	struct elfm *e;
	int err;

	*out = NULL;
	err = elfm_open_fd(fd, &e);
	if (err)
		return err;
	err = extract(e, path, opts, out);
	elfm_free(e);
	return err;
}

int dt_extract_file(int fd, const char *path, struct dt_file **out)
{
	return dt_extract_file_opts(fd, path, NULL, out);
}

int dt_extract_mem(const void *data, size_t len,
		   const struct dt_extract_opts *opts, struct dt_file **out)
{
	struct elfm *e;
	int err;

	*out = NULL;
	err = elfm_open_mem(data, len, &e);
	if (err)
		return err;
	err = extract(e, NULL, opts, out);
	elfm_free(e);
	return err;
}
