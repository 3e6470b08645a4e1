// SPDX-License-Identifier: Apache-2.0
/*
 * Foundation: the BPF sampler in the host kernel with frame-pointer and
 * kernel stacks, the CLI's error paths, and that nothing stays attached.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../unit/test.h"
#include "harness.h"

static int profile_workload(const char *workload, const char *secs_run,
			    const char *secs_profile, const char *hz,
			    struct folded *f, char **err)
{
	char *wargv[] = { (char *)h_workload(workload), (char *)secs_run, NULL };

	return h_profile_workload(wargv, secs_profile, hz, NULL, f, err);
}

TEST_ROOT(fp_split_60_30_10)
{
	struct folded f;
	char *err = NULL;
	uint64_t total, a, b, c, main_;

	if (!ASSERT_EQ(profile_workload("split-fp", "12", "6s", "999", &f, &err),
		       0, "profiler exit code")) {
		printf("%s", err ? err : "");
		goto out;
	}
	total = h_count_comm(&f, "split-fp");
	main_ = h_count_with(&f, "split-fp", "main");
	a = h_count_with(&f, "split-fp", "main;chain_a");
	b = h_count_with(&f, "split-fp", "main;chain_b");
	c = h_count_with(&f, "split-fp", "main;chain_c");
	test_note("samples=%llu main=%.2f%% a=%.1f%% b=%.1f%% c=%.1f%%",
		  (unsigned long long)total, 100.0 * main_ / (total ? total : 1),
		  100.0 * a / (total ? total : 1), 100.0 * b / (total ? total : 1),
		  100.0 * c / (total ? total : 1));
	if (!ASSERT_GE(total, 300, "samples of the workload"))
		goto out;
	ASSERT_GE(main_ * 100, total * 99, ">= 99% of samples reach main");
	ASSERT_NEAR(100.0 * a / total, 60, 3, "chain_a share");
	ASSERT_NEAR(100.0 * b / total, 30, 3, "chain_b share");
	ASSERT_NEAR(100.0 * c / total, 10, 3, "chain_c share");
	if (test_skipped() == false && main_ * 100 < total * 99)
		h_dump_top(&f, "split-fp", 10);
out:
	ASSERT_TRUE(err && strstr(err, "samples="), "summary line on stderr");
	ASSERT_TRUE(h_summary_value(err, "lost") >= 0, "lost=");
	ASSERT_TRUE(h_summary_value(err, "processes") >= 1, "processes=");
	ASSERT_TRUE(h_summary_value(err, "unwind_errors") >= 0, "unwind_errors=");
	free(err);
	h_free_folded(&f);
}

/* Kernel frames sit on top of complete user frames. */
TEST_ROOT(syscall_kernel_on_user)
{
	struct folded f;
	char *err = NULL;
	uint64_t total, kern = 0, kern_complete = 0, misordered = 0;
	int i;

	if (!ASSERT_EQ(profile_workload("syscalls-fp", "10", "4s", "99", &f, &err),
		       0, "profiler exit code")) {
		printf("%s", err ? err : "");
		goto out;
	}
	total = h_count_comm(&f, "syscalls-fp");
	for (i = 0; i < f.n; i++) {
		const char *s = f.lines[i].stack, *k;

		if (strncmp(s, "syscalls-fp;", 12))
			continue;
		k = strstr(s, "_[k]");
		if (!k)
			continue;
		kern += f.lines[i].count;
		if (strstr(s, ";main;do_io;write_loop;"))
			kern_complete += f.lines[i].count;
		/* after the first kernel frame, only kernel frames */
		for (const char *p = strchr(k, ';'); p; p = strchr(p + 1, ';')) {
			const char *e = strchr(p + 1, ';');
			size_t len = e ? (size_t)(e - p - 1) : strlen(p + 1);
			if (len < 4 || strncmp(p + 1 + len - 4, "_[k]", 4)) {
				misordered += f.lines[i].count;
				break;
			}
		}
	}
	test_note("samples=%llu with kernel frames=%llu complete user stack=%.1f%%",
		  (unsigned long long)total, (unsigned long long)kern,
		  100.0 * kern_complete / (kern ? kern : 1));
	ASSERT_GE(total, 200, "samples of the workload");
	ASSERT_GE(kern * 2, total, "most samples are in the kernel");
	ASSERT_GE(kern_complete * 100, kern * 95,
		  ">= 95% of kernel samples have main;do_io;write_loop under them");
	ASSERT_EQ(misordered, 0, "kernel frames come after all user frames");
	if (kern_complete * 100 < kern * 95)
		h_dump_top(&f, "syscalls-fp", 10);
out:
	free(err);
	h_free_folded(&f);
}

/* Count BPF programs of ours loaded in the kernel (by name).  The kernel
 * frees programs after an RCU grace period: wait up to 3 s for zero. */
static int count_programs(void);
static int our_programs(void)
{
	int i, n = 0;

	for (i = 0; i < 30; i++) {
		n = count_programs();
		if (n == 0)
			break;
		usleep(100000);
	}
	return n;
}

static int count_programs(void)
{
	FILE *p = popen("bpftool prog show 2>/dev/null", "r");
	char line[1024];
	int n = 0;

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (strstr(line, " name sample ") ||
		    strstr(line, " name unwind_native ") ||
		    strstr(line, " name on_exec ") || strstr(line, " name on_exit "))
			n++;
	pclose(p);
	return n;
}

TEST_ROOT(errors_are_clear_and_leave_nothing)
{
	char *err = NULL;
	int rc;

	ASSERT_EQ(our_programs(), 0, "no programs of ours before");
	if (test_start_subtest("no_such_pid")) {
		const char *args[] = { "-pid", "999999999", "-duration", "1s", NULL };
		rc = h_profile(args, &err, 30);
		ASSERT_EQ(rc, 1, "exit code");
		ASSERT_TRUE(err && strstr(err, "no such process: 999999999"),
			    "clear message");
		ASSERT_EQ(err ? (int)(strchr(err, '\n') - err + 1 == (int)strlen(err)) : 0,
			  1, "one line");
		free(err);
	}
	if (test_start_subtest("bad_flag")) {
		const char *args[] = { "-no-such-flag", NULL };
		rc = h_profile(args, &err, 30);
		ASSERT_EQ(rc, 1, "exit code");
		ASSERT_TRUE(err && strstr(err, "unknown flag"), "clear message");
		free(err);
	}
	if (test_start_subtest("bad_duration")) {
		const char *args[] = { "-duration", "5 parsecs", NULL };
		rc = h_profile(args, &err, 30);
		ASSERT_EQ(rc, 1, "exit code");
		ASSERT_TRUE(err && strstr(err, "is not a duration"), "clear message");
		free(err);
	}
	if (test_start_subtest("not_root")) {
		char cmd[1024];
		FILE *p;
		char buf[1024] = "";
		int status;

		snprintf(cmd, sizeof(cmd),
			 "setpriv --reuid=65534 --regid=65534 --clear-groups "
			 "--inh-caps=-all %s -duration 1s 2>&1",
			 test_bin());
		p = popen(cmd, "r");
		if (p) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, p);
			buf[n] = 0;
			status = pclose(p);
			ASSERT_EQ(WEXITSTATUS(status), 1, "exit code");
			ASSERT_TRUE(strstr(buf, "needs root"), "clear message");
			if (!strstr(buf, "needs root"))
				printf("      got: %s\n", buf);
		}
	}
	ASSERT_EQ(our_programs(), 0, "nothing left attached");
}

/* Durations in Go form, both dash styles, and a clean exit on SIGTERM. */
TEST_ROOT(cli_duration_and_sigterm)
{
	char out[512], *err = NULL;
	double t0, ms;
	pid_t pid;
	int status;

	snprintf(out, sizeof(out), "%s/all.folded", test_tmpdir());
	if (test_start_subtest("double_dash_1500ms")) {
		const char *args[] = { "--duration", "1500ms", "--output", out, NULL };

		t0 = h_now_ms();
		ASSERT_EQ(h_profile(args, &err, 60), 0, "exit code");
		ms = h_now_ms() - t0;
		test_note("-duration 1500ms took %.0f ms", ms);
		ASSERT_GE(ms, 1450, "ran at least the duration");
		ASSERT_LT(ms, 15000, "stopped");
		ASSERT_EQ(access(out, R_OK), 0, "output written");
		free(err);
	}
	if (test_start_subtest("sigterm_writes_rotated_output")) {
		/* continuous mode: files rotate per interval, named with the
		 * interval's start; the last one is written on exit */
		char rot[512];
		const char *args[] = { "-output", rot, "-reporter-interval", "1s",
				       NULL };
		int files = 0;
		DIR *d;
		struct dirent *e;

		snprintf(rot, sizeof(rot), "%s/rot.folded", test_tmpdir());
		pid = h_profile_bg(args, NULL);
		sleep(3);
		kill(pid, SIGTERM);
		status = h_wait(pid, 30);
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			    "exit 0 on SIGTERM");
		d = opendir(test_tmpdir());
		while (d && (e = readdir(d)))
			if (!strncmp(e->d_name, "rot-", 4) &&
			    strstr(e->d_name, ".folded"))
				files++;
		if (d)
			closedir(d);
		test_note("%d rotated files in 3 s at 1 s intervals", files);
		ASSERT_GE(files, 2, "rotated files");
		ASSERT_EQ(our_programs(), 0, "nothing left attached");
	}
}

/* The verifier's work at load is most of a start-up (about 2 us an
 * instruction on this machine).  A loop the verifier walks iteration by
 * iteration once tripled it unnoticed (51,194 instructions for the main
 * unwinder, start-up 99-129 ms); the budget keeps it in sight.  On 6.18
 * the four programs took 17,020, then 10,351 once loop state and the
 * values that split the verifier's states went through the scratch
 * (README, Footprint): half as much again is the budget. */
#define VERIFIED_INSNS_BUDGET 16000

TEST_ROOT(verifier_work_within_budget)
{
	char out[512], *err = NULL;
	const char *args[] = { "-duration", "200ms", "-o", out, NULL };
	long long insns, startup;

	snprintf(out, sizeof(out), "%s/v.folded", test_tmpdir());
	if (!ASSERT_EQ(h_profile(args, &err, 60), 0, "exit code"))
		goto out;
	insns = h_summary_value(err, "bpf_verified_insns");
	startup = h_summary_value(err, "startup_ms");
	if (insns <= 0) {
		test_skip("the kernel does not report verified instructions (5.16+)");
		goto out;
	}
	test_note("%lld instructions verified (budget %d), started in %lld ms",
		  insns, VERIFIED_INSNS_BUDGET, startup);
	ASSERT_LE(insns, VERIFIED_INSNS_BUDGET,
		  "the verifier's work within its budget");
out:
	free(err);
}

/* One of our maps, as bpftool shows it: its flags, its capacity and the
 * kernel memory it holds (memlock).  False when map id is not name. */
static bool map_show(uint32_t id, const char *name, unsigned *flags,
		     unsigned long long *entries, unsigned long long *entry,
		     unsigned long long *memlock)
{
	char cmd[96], want[64], *text;
	const char *p;

	snprintf(cmd, sizeof(cmd), "bpftool map show id %u 2>/dev/null", id);
	text = h_cmd_output(cmd);
	snprintf(want, sizeof(want), " name %s ", name);
	if (!text || !strstr(text, want)) {
		free(text);
		return false;
	}
	*flags = (p = strstr(text, " flags 0x")) ?
			 (unsigned)strtoul(p + 9, NULL, 16) : 0;
	*entries = (p = strstr(text, "max_entries ")) ?
			   strtoull(p + 12, NULL, 10) : 0;
	*memlock = (p = strstr(text, "memlock ")) ?
			   strtoull(p + 8, NULL, 10) : 0;
	*entry = (p = strstr(text, "key ")) ? strtoull(p + 4, NULL, 10) : 0;
	*entry += (p = strstr(text, "value ")) ? strtoull(p + 6, NULL, 10) : 0;
	free(text);
	return true;
}

/* The hash maps userland fills take kernel memory for the entries they
 * hold, not for all they could (kernel 6.1+, where perf programs may use
 * them: the daemon probes): delta_pages preallocated held ~4.9 MB at the
 * default 32K entries whatever the host ran. */
TEST_ROOT(hash_maps_hold_their_entries_only)
{
	static const char *const names[] = { "delta_pages", "pid_info",
					     "py_procs" };
	char out[512], errp[512];
	const char *args[] = { "-v", "-duration", "30s", "-o", out, NULL };
	struct h_bpf_ids ids;
	unsigned major = 0, minor = 0, flags;
	unsigned long long entries, entry, memlock;
	struct utsname u;
	pid_t d;
	int i, k, found = 0;

	if (uname(&u) == 0)
		sscanf(u.release, "%u.%u", &major, &minor);
	if (major < 6 || (major == 6 && minor < 1)) {
		test_skip("kernel %s: perf programs need preallocated hash maps before 6.1",
			  u.release);
		return;
	}
	snprintf(out, sizeof(out), "%s/grow.folded", test_tmpdir());
	snprintf(errp, sizeof(errp), "%s/grow.err", test_tmpdir());
	d = h_profile_started(args, errp, 60);
	if (!ASSERT_GT(d, 0, "profiler started"))
		return;
	sleep(1);
	ASSERT_OK(h_bpf_ids_of(d, &ids), "its maps");
	for (k = 0; k < 3; k++)
		for (i = 0; i < ids.n_maps; i++) {
			if (!map_show(ids.maps[i], names[k], &flags, &entries,
				      &entry, &memlock))
				continue;
			found++;
			test_note("%s: flags %#x, %llu entries of %llu bytes at "
				  "most, %llu bytes of kernel memory", names[k],
				  flags, entries, entry, memlock);
			ASSERT_TRUE(flags & 1, "BPF_F_NO_PREALLOC");
			/* the buckets (16 bytes an entry) are allocated
			 * whole; the entries of the two with large values,
			 * as they are added */
			if (k != 1)
				ASSERT_LT(memlock, entries * entry / 2,
					  "less than half of its entries' keys and values");
			break;
		}
	ASSERT_EQ(found, 3, "the three maps found");
	kill(d, SIGTERM);
	ASSERT_EQ(h_wait(d, 60), 0, "exit 0");
}
