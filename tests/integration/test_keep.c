// SPDX-License-Identifier: Apache-2.0
/*
 * -keep-programs (issue 25, start-up): at exit the daemon pins a fresh,
 * verified set of its programs and maps in a BPF file system; the next
 * start with the same flags takes it instead of verifying, and profiles
 * the same complete stacks.  A private BPF file system under the test's
 * directory: nothing of the host's /sys/fs/bpf is touched.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../unit/test.h"
#include "harness.h"

#define HZ "999"

/* The entries of dir (none of "." and ".."), at most 4 names kept. */
static int list_dir(const char *dir, char names[4][64])
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n < 4)
			snprintf(names[n], 64, "%.63s", e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/* The one set in keep (its name into set), with the unwinder and the
 * sampler among its pins. */
static bool one_set(const char *keep, char set[64], const char *what)
{
	char names[4][64], path[512];
	int n = list_dir(keep, names);

	test_note("%s: %d entr%s in the directory%s%s", what, n,
		  n == 1 ? "y" : "ies", n > 0 ? ", the first " : "",
		  n > 0 ? names[0] : "");
	if (!ASSERT_EQ(n, 1, what) || !ASSERT_TRUE(!strncmp(names[0], "set-", 4),
						  "a set-<key> directory"))
		return false;
	snprintf(set, 64, "%s", names[0]);
	snprintf(path, sizeof(path), "%s/%s/prog_unwind_native", keep, set);
	ASSERT_OK(access(path, F_OK), "the unwinder pinned");
	snprintf(path, sizeof(path), "%s/%s/prog_sample", keep, set);
	ASSERT_OK(access(path, F_OK), "the sampler pinned");
	return true;
}

/* The split workload profiled with flags; the 60/30/10 split checked
 * from its entry; *kept from the summary. */
static bool split_run(const char *const *flags, long long *kept,
		      char **err_out)
{
	static const char *const chains[3] = {
		"main;chain_a;mid_a;leaf_a", "main;chain_b;mid_b;leaf_b",
		"main;chain_c;mid_c;leaf_c"
	};
	const double want[3] = { 60, 30, 10 };
	char *wargv[] = { (char *)h_workload("split-nofp-pie"), "8", NULL };
	struct h_run run;
	uint64_t total;
	int i;

	*kept = -1;
	*err_out = NULL;
	if (!h_run_workload(wargv, "3s", HZ, flags, &run))
		return false;
	total = h_count_comm(&run.f, "split-nofp-pie");
	ASSERT_GE(total, 300, "samples");
	ASSERT_GE(h_share(&run.f, "split-nofp-pie", "split-nofp-pie;_start") *
			  100,
		  99, "stacks reach _start");
	for (i = 0; i < 3; i++) {
		double s = 100 * h_share(&run.f, "split-nofp-pie", chains[i]);

		test_note("%s: %.1f%% (want %.0f)", chains[i], s, want[i]);
		ASSERT_NEAR(s, want[i], 4, chains[i]);
	}
	*kept = h_summary_value(run.err, "programs_kept");
	*err_out = run.err;
	run.err = NULL;
	h_run_free(&run);
	return true;
}

TEST_ROOT(kept_programs_start_without_the_verifier)
{
	char fs[400], keep[512], set1[64], set3[64], from[600], to[600];
	const char *flags[] = { "-v", "-keep-programs", "-keep-programs-dir",
				keep, NULL, NULL, NULL };
	long long kept;
	char *err;

	if (access(h_workload("split-nofp-pie"), X_OK)) {
		test_skip("split-nofp-pie not built: see the workloads build");
		return;
	}
	snprintf(fs, sizeof(fs), "%s/bpffs", test_tmpdir());
	snprintf(keep, sizeof(keep), "%s/ep", fs);
	mkdir(fs, 0700);
	if (mount("bpf", fs, "bpf", 0, NULL)) {
		test_skip("cannot mount a BPF file system at %s: %s", fs,
			  strerror(errno));
		return;
	}

	/* 1: nothing kept yet: verified, and a set left at exit */
	if (split_run(flags, &kept, &err)) {
		ASSERT_EQ(kept, 0, "first run: programs verified");
		ASSERT_TRUE(err && strstr(err, "kept the BPF programs for the next start"),
			    "says it kept a set");
		one_set(keep, set1, "after the first run");
	}
	free(err);

	/* 2: the same flags take the set: nothing verified, the same
	 * stacks, and a fresh set for the next start */
	if (split_run(flags, &kept, &err)) {
		ASSERT_EQ(kept, 1, "second run: the kept programs");
		ASSERT_TRUE(err && strstr(err, "the programs kept verified by the last run"),
			    "says so when it starts");
		one_set(keep, set3, "after the second run");
		ASSERT_STREQ(set3, set1, "the same flags, the same set");
	}
	free(err);

	/* 3: other flags (the runtimes off: other read-only values) do not
	 * take it, and replace it at exit */
	flags[4] = "-tracers";
	flags[5] = "native";
	/* and what is not a name it gives stays: the directory may be
	 * shared with others' pins */
	snprintf(from, sizeof(from), "%s/foreign", keep);
	snprintf(to, sizeof(to), "%s/set-not-ours", keep);
	ASSERT_OK(mkdir(from, 0700), "a foreign directory");
	ASSERT_OK(mkdir(to, 0700), "another");
	if (split_run(flags, &kept, &err)) {
		ASSERT_EQ(kept, 0, "other flags: verified");
		ASSERT_OK(access(from, F_OK), "the foreign directory left alone");
		ASSERT_OK(access(to, F_OK), "set-not-ours left alone");
		rmdir(from);
		rmdir(to);
		if (one_set(keep, set3, "after the run with other flags"))
			ASSERT_TRUE(strcmp(set3, set1) != 0,
				    "one set, of the last flags");
	}
	free(err);

	/* 4: a set under the wrong name (the native-only programs where
	 * the full set's key says): its read-only values differ, so it is
	 * refused and removed, and the programs load as usual */
	flags[4] = NULL;
	snprintf(from, sizeof(from), "%s/%s", keep, set3);
	snprintf(to, sizeof(to), "%s/%s", keep, set1);
	if (ASSERT_OK(rename(from, to), "the set renamed") &&
	    split_run(flags, &kept, &err)) {
		ASSERT_EQ(kept, 0, "a mislabelled set is not taken");
		ASSERT_TRUE(err && strstr(err, "did not match"), "and says so");
		one_set(keep, set3, "after the refused set");
		ASSERT_STREQ(set3, set1, "its own set left at exit");
		free(err);
	}
	/* 5: a directory on another file system: a warning, nothing kept,
	 * nothing made there */
	{
		char plain[512], out[512];
		const char *args[] = { "-v", "-keep-programs", "-keep-programs-dir",
				       plain, "-duration", "200ms", "-o", out,
				       NULL };

		snprintf(plain, sizeof(plain), "%s/not-bpffs", test_tmpdir());
		snprintf(out, sizeof(out), "%s/plain.folded", test_tmpdir());
		err = NULL;
		ASSERT_EQ(h_profile(args, &err, 60), 0, "runs without it");
		ASSERT_TRUE(err && strstr(err, "is not on a BPF file system"),
			    "says the directory is not on a BPF file system");
		ASSERT_TRUE(access(plain, F_OK) != 0, "and makes nothing there");
		free(err);
	}

	/* 6: rm -r of the directory frees all a set holds */
	{
		struct h_bpf_ids ids = { .n_progs = 0 };
		char cmd[1400], *out;

		snprintf(cmd, sizeof(cmd),
			 "bpftool prog show pinned %s/%s/prog_unwind_native; "
			 "bpftool map show pinned %s/%s/map00",
			 keep, set1, keep, set1);
		out = h_cmd_output(cmd);
		if (out && sscanf(out, "%u:", &ids.progs[0]) == 1) {
			char *m = strchr(out, '\n');

			ids.n_progs = 1;
			while (m && *++m && !(m[0] >= '0' && m[0] <= '9'))
				m = strchr(m, '\n');
			if (m && sscanf(m, "%u:", &ids.maps[0]) == 1)
				ids.n_maps = 1;
		}
		free(out);
		ASSERT_EQ(ids.n_progs + ids.n_maps, 2,
			  "the kept unwinder and a map found by their pins");
		snprintf(cmd, sizeof(cmd), "rm -r %s", keep);
		ASSERT_OK(system(cmd), "rm -r the directory");
		ASSERT_EQ(h_bpf_ids_alive(&ids), 0,
			  "the kernel freed the kept program and map");
	}
	umount2(fs, MNT_DETACH);
}
