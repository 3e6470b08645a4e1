// SPDX-License-Identifier: Apache-2.0
/*
 * The store's database file (store/ over LMDB): the input is written as
 * data.mdb and the store opened on it, which checks the file in a child
 * process first and moves a damaged one aside; whatever it accepts must
 * then be safe to verify, read, write and evict from in this process.
 *
 * A child that dies on a bad file is the design working, not a finding:
 * the child gets default signal handlers and a quiet death callback, so
 * libFuzzer (whose process it is a fork of) does not report it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deltas.h"
#include "fuzz.h"
#include "store.h"

static char dir[] = "/tmp/ep-fuzz-db-XXXXXX";
static char data_path[64], lock_path[64], corrupt_path[64];

static void quiet_death(void)
{
	_exit(1);
}

static void in_child(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE };
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	__sanitizer_set_death_callback(quiet_death);
}

static void cleanup(void)
{
	unlink(data_path);
	unlink(lock_path);
	unlink(corrupt_path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	snprintf(data_path, sizeof(data_path), "%s/data.mdb", dir);
	snprintf(lock_path, sizeof(lock_path), "%s/lock.mdb", dir);
	snprintf(corrupt_path, sizeof(corrupt_path), "%s/data.mdb.corrupt",
		 dir);
	pthread_atfork(NULL, NULL, in_child);
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store_opts o = { .max_bytes = 8 << 20, .no_sync = true,
				.lock_timeout_ms = 100 };
	struct store_stats ss;
	struct store *s = NULL;
	struct dt_file *f;
	uint8_t id[16] = { 0 };
	void *buf;
	size_t len;
	int fd, i;

	unlink(lock_path);
	unlink(corrupt_path);
	fd = open(data_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	close(fd);
	if (store_open(dir, &o, &s) != 0)
		return 0;
	store_get_stats(s, &ss);
	/* the seeds' records have ids 0, 1, 2... in the first byte */
	for (i = 0; i < 4; i++) {
		id[0] = (uint8_t)i;
		if (store_get(s, id, STORE_KIND_DELTAS, &buf, &len) == 0 &&
		    len && dt_file_deserialize(buf, len, &f) == 0)
			dt_file_free(f);
		free(buf);
		store_has(s, id, STORE_KIND_INTERP(INTERP_PYTHON));
	}
	store_verify(s, NULL);
	id[0] = 0x80;
	store_put(s, id, STORE_KIND_KTYPES, data, size < 4096 ? size : 4096);
	store_flush(s);
	store_clear(s);
	store_free(s);
	return 0;
}
