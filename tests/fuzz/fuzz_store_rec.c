// SPDX-License-Identifier: Apache-2.0
/*
 * Store records (store/) through the path the daemon takes: the input
 * is a kind byte and a record's stored bytes (header and payload), put
 * as they are (store_test_put_raw); then the lookups check the header,
 * and a payload that passes goes where the daemon sends it: a DELTAS
 * payload to dt_file_deserialize, an interpreter's to its module's check
 * and attach (CPython's: py_info_check, py_ctx_add_proc).  Now and then store_verify walks everything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deltas.h"
#include "fuzz.h"
#include "interp.h"
#include "store.h"
#include "store_test.h"

static struct store *st;
static struct interp_mgr *im;
static void *state[INTERP_COUNT];
static char dir[] = "/tmp/ep-fuzz-store-XXXXXX";

static void cleanup(void)
{
	char cmd[64];

	unsigned k;

	store_free(st);
	for (k = 1; k < INTERP_COUNT; k++)
		if (interp_module(k)->fini)
			interp_module(k)->fini(state[k]);
	interp_mgr_free(im);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_store_rec: could not remove %s\n", dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct store_opts o = { .max_bytes = 64 << 20, .no_sync = true };

	(void)argc;
	(void)argv;
	unsigned k;

	if (!mkdtemp(dir) || store_open(dir, &o, &st) != 0 ||
	    interp_mgr_new(NULL, NULL, "native", &im) != 0)
		abort();
	for (k = 1; k < INTERP_COUNT; k++)
		if (interp_module(k)->init && interp_module(k)->init(&state[k]))
			abort();
	atexit(cleanup);
	return 0;
}

/* What the daemon does with a payload of this kind: a table is
 * deserialized and searched; an interpreter's record goes through its
 * module's check, and attach when it passes (interp.c's detect_one and
 * interp_synced, without a process or BPF maps). */
static void consume(unsigned kind, const void *buf, size_t len)
{
	struct dt_file *f = NULL;
	unsigned k = kind - STORE_KIND_INTERP_BASE;

	if (kind == STORE_KIND_DELTAS && len) {
		if (dt_file_deserialize(buf, len, &f) == 0)
			dt_file_lookup(f, f->text_lo);
		dt_file_free(f);
	} else if (kind >= STORE_KIND_INTERP_BASE && interp_module(k) && len) {
		const struct interp_module *m = interp_module(k);
		struct pm_mapping map = { .start = 0x1000, .end = 0x2000,
					  .bias = 0x1000 };
		struct interp_file_map fm = { .data = buf, .len = len,
					      .bias = 0x1000, .map = &map };
		struct interp_attach a = { .pid = 1, .files = &fm, .n_files = 1 };

		/* detached whatever attach said, as interp_synced does */
		if (interp_record_check(m, buf, len) == 0) {
			m->attach(state[k], im, &a);
			if (m->detach)
				m->detach(state[k], 1);
		}
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
