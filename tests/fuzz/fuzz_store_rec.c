// SPDX-License-Identifier: Apache-2.0
/*
 * Store records (store.c) through the path the daemon takes: the input
 * is a kind byte and a record's stored bytes (header and payload), put
 * as they are (store_test_put_raw); then the lookups check the header,
 * and a payload that passes goes where the daemon sends it: a DELTAS
 * payload to dt_file_deserialize, a PYTHON one, as struct py_info, to
 * py_ctx_add_proc.  Now and then store_verify walks everything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deltas.h"
#include "fuzz.h"
#include "interp_python.h"
#include "store.h"

static struct store *st;
static struct py_ctx *py;
static char dir[] = "/tmp/ep-fuzz-store-XXXXXX";

static void cleanup(void)
{
	char cmd[64];

	store_free(st);
	py_ctx_free(py);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_store_rec: could not remove %s\n", dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct store_opts o = { .max_bytes = 64 << 20, .no_sync = true };

	if (!mkdtemp(dir) || store_open(dir, &o, &st) != 0 ||
	    py_ctx_new(NULL, &py) != 0)
		abort();
	atexit(cleanup);
	return 0;
}

/* What the daemon does with a payload of this kind. */
static void consume(unsigned kind, const void *buf, size_t len)
{
	struct dt_file *f = NULL;
	struct py_info info;

	if (kind == STORE_KIND_DELTAS && len) {
		if (dt_file_deserialize(buf, len, &f) == 0)
			dt_file_lookup(f, f->text_lo);
		dt_file_free(f);
	} else if (kind == STORE_KIND_INTERP(INTERP_PYTHON) && len == sizeof(info)) {
		memcpy(&info, buf, sizeof(info));
		if (info.format == PY_INFO_FORMAT &&
		    py_ctx_add_proc(py, 1, &info, 0x1000) == 0)
			py_ctx_remove_proc(py, 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t id[16] = { 0xf0, 0x22 };
	static unsigned runs;
	unsigned kind;
	void *buf = NULL;
	size_t len = 0;

	if (size < 1)
		return 0;
	kind = 1 + data[0] % (STORE_KIND_MAX - 1);
	if (store_test_put_raw(st, id, kind, data + 1, size - 1) != 0)
		return 0;
	store_has(st, id, kind);
	if (store_get(st, id, kind, &buf, &len) == 0)
		consume(kind, buf, len);
	free(buf);
	if (++runs % 256 == 0)
		store_verify(st, NULL);
	store_del(st, id, kind);
	return 0;
}
