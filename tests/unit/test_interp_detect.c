// SPDX-License-Identifier: Apache-2.0
/*
 * The interpreter manager's detection on a file its owner cuts short
 * while the daemon reads it (the file is mapped; what is read past the
 * new end are zeros, elfm_damaged): no runtime's answer is kept, on the
 * file or in the cache, and the whole file is detected afterwards as if
 * nothing had happened.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exemgr.h"
#include "file_cut.h"
#include "interp.h"
#include "rep_fixture.h"
#include "store.h"
#include "test.h"
#include "../integration/harness.h"

#define PYTHON "/usr/bin/python3.11"

/* Detect every runtime in a copy of PYTHON (path) as the daemon does for
 * a new file (f: its id; its runtimes are kept on it), the file cut to
 * cut bytes right after the manager opened it when cut >= 0; the stats
 * of every runtime into st. */
static void detect_copy(struct interp_mgr *im, struct exe_file *f,
			const char *path, off_t cut,
			struct interp_stats st[INTERP_COUNT])
{
	unsigned k;
	int fd;

	if (!ASSERT_OK(fix_run(h_cmdf("cp %s %s", PYTHON, path), NULL, 0),
		       "copy"))
		return;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (!ASSERT_GE(fd, 0, "open"))
		return;
	file_cut_after_open(cut);
	interp_detect(im, f, fd);
	file_cut_after_open(-1);
	close(fd);
	for (k = 1; k < INTERP_COUNT; k++)
		interp_get_stats(im, k, &st[k]);
}

TEST(interp_detect_file_cut_after_open)
{
	struct exe_file f = { .fd = -1 };
	struct interp_stats cut[INTERP_COUNT], whole[INTERP_COUNT];
	struct store_opts o = { .no_sync = true };
	struct interp_mgr *im = NULL;
	struct store *s = NULL;
	uint64_t found = 0, stored = 0;
	char path[512];
	unsigned k;

	snprintf(path, sizeof(path), "%s/python", test_tmpdir());
	f.path = path;
	if (access(PYTHON, R_OK)) {
		test_skip("%s is not installed (make deps: python3.11)", PYTHON);
		return;
	}
	memset(f.id.b, 0x3c, sizeof(f.id.b));
	if (!ASSERT_OK(store_open(test_tmppath("cache"), &o, &s), "store") ||
	    !ASSERT_OK(interp_mgr_new(NULL, s, "all", &im), "manager"))
		goto out;

	/* cut to its first page right after the manager's one open */
	detect_copy(im, &f, f.path, 4096, cut);
	ASSERT_TRUE(file_cut_done(), "the file was cut after its open");
	for (k = 1; k < INTERP_COUNT; k++)
		found += cut[k].files + cut[k].files_unsupported;
	ASSERT_EQ(found, 0, "no runtime's answer counted");
	ASSERT_EQ(f.interp_mask, 0, "nor kept on the file");

	/* the whole file again, the same id: nothing was stored for it */
	detect_copy(im, &f, f.path, -1, whole);
	for (k = 1; k < INTERP_COUNT; k++)
		stored += whole[k].detect_cached - cut[k].detect_cached;
	test_note("cut: %llu answers counted; whole: python %llu, %llu "
		  "answers from the cache",
		  (unsigned long long)found,
		  (unsigned long long)whole[INTERP_PYTHON].files,
		  (unsigned long long)stored);
	ASSERT_EQ(stored, 0, "no answer of the cut file in the cache");
	ASSERT_EQ(whole[INTERP_PYTHON].files, 1, "Python found in the whole file");
	ASSERT_EQ(f.interp_mask, 1u << INTERP_PYTHON, "and kept on it");
out:
	for (k = 0; k < INTERP_COUNT; k++)
		free(f.interp_data[k]);
	interp_mgr_free(im);
	store_free(s);
}

/* The libc code the frame walks need read from (the thread-specific data
 * layout, pthread_self's offset), in a copy of libc cut short right after
 * it was opened: an error that says so (-EIO: not "no such code", which
 * the manager would keep for the file's id), and the whole copy read as
 * before. */
static int tsd_of(int fd)
{
	struct interp_tsd t;

	return interp_tsd_of_fd(fd, &t);
}

static int self_of(int fd)
{
	int32_t off;

	return interp_self_off_of_fd(fd, &off);
}

TEST(interp_libc_code_cut_after_open)
{
	static const char libc[] = "/lib/x86_64-linux-gnu/libc.so.6";
	static const struct {
		int (*read)(int fd);
		const char *what;
	} reads[] = { { tsd_of, "TSD layout" }, { self_of, "pthread_self" } };
	const char *path = test_tmppath("libc.so.6");
	unsigned i, cut;
	int fd;

	if (access(libc, R_OK)) {
		test_skip("%s: not an x86-64 Debian machine", libc);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(reads); i++) {
		for (cut = 0; cut < 2; cut++) {
			if (!ASSERT_OK(fix_run(h_cmdf("cp %s %s", libc, path),
					       NULL, 0),
				       "copy"))
				return;
			fd = open(path, O_RDWR | O_CLOEXEC);
			if (!ASSERT_GE(fd, 0, "open"))
				return;
			file_cut_after_open(cut ? 4096 : -1);
			ASSERT_EQ(reads[i].read(fd), cut ? -EIO : 0,
				  reads[i].what);
			if (cut)
				ASSERT_TRUE(file_cut_done(), "cut after its open");
			file_cut_after_open(-1);
			close(fd);
		}
	}
}
