// SPDX-License-Identifier: Apache-2.0
/*
 * CPython frames inside mixed native stacks, unwound in the host kernel:
 * Debian's python3.11 and every pyenv CPython 3.8 to 3.13 on the machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit/python_interps.h"
#include "../unit/test.h"
#include "harness.h"

#define HZ "999"

/* The kernel's comm: the executable's name, cut to 15 bytes. */
static void comm_of(const char *bin, char out[16])
{
	const char *b = strrchr(bin, '/');

	b = b ? b + 1 : bin;
	memset(out, 0, 16);
	memcpy(out, b, strnlen(b, 15));
}

/* The frames of a folded stack after the comm, split in place. */
static int frames_of(char *stack, char **fr, int max)
{
	int n = 0;
	char *p = strchr(stack, ';'), *e;

	while (p && n < max) {
		p++;
		e = strchr(p, ';');
		if (e)
			*e = 0;
		fr[n++] = p;
		p = e;
	}
	return n;
}

static bool is_python(const char *frame)
{
	return strstr(frame, ".py:") != NULL;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A stack is complete when native frames reach _start and the Python
 * frames reach the module. */
static bool complete(char **fr, int n)
{
	int i;

	if (n == 0 || strcmp(fr[0], "_start"))
		return false;
	for (i = 0; i < n; i++)
		if (starts(fr[i], "<module> ("))
			return true;
	return false;
}

/* The Python frames of fr, in order, begin with names[] (prefix match,
 * "name (" each). */
static bool py_seq(char **fr, int n, const char *const *names, int k)
{
	int i, j = 0;
	char want[128];

	for (i = 0; i < n && j < k; i++) {
		if (!is_python(fr[i]))
			continue;
		snprintf(want, sizeof(want), "%s (", names[j]);
		if (!starts(fr[i], want)) {
			if (j)
				return false;
			continue; /* before the sequence */
		}
		j++;
	}
	return j == k;
}

/* Run script_name under interpreter p and profile it for duration (extra
 * profiler flags in extra, may be NULL); fills f and comm, and the exit
 * summary in *summary when summary is not NULL (the caller frees it).
 * False (after reporting) when the profiler failed. */
static bool profile_script(const struct pyi *p, const char *script_name,
			   const char *duration, const char *const *extra,
			   struct folded *f, char comm[16], char **summary)
{
	char script[512], *err = NULL;
	char *wargv[] = { (char *)p->bin, script, "12", NULL };
	int rc;

	snprintf(script, sizeof(script), "%s/tests/workloads/python/%s",
		 test_srcdir(), script_name);
	comm_of(p->bin, comm);
	rc = h_profile_workload(wargv, duration, HZ, extra, f, &err);
	h_profiled(rc, err);
	if (summary && rc == 0)
		*summary = err;
	else
		free(err);
	return rc == 0;
}

/* The frames of line i when its comm is comm (a malloc'd copy in *copy,
 * split in place), else -1. */
static int line_frames(const struct folded *f, int i, const char *comm,
		       char **copy, char **fr, int max)
{
	size_t n = strlen(comm);

	if (strncmp(f->lines[i].stack, comm, n) || f->lines[i].stack[n] != ';')
		return -1;
	*copy = strdup(f->lines[i].stack);
	return *copy ? frames_of(*copy, fr, max) : -1;
}

/* split.py's samples of comm in f: all, complete ones, and those in each
 * of its three chains (heavy, medium, light). */
static void split_tally(const struct folded *f, const char *comm,
			uint64_t *total, uint64_t *full, uint64_t in[3])
{
	static const char *const chains[3][3] = {
		{ "run", "chain_60", "heavy" },
		{ "run", "chain_30", "medium" },
		{ "run", "chain_10", "light" },
	};
	int i, c;

	*total = *full = in[0] = in[1] = in[2] = 0;
	for (i = 0; i < f->n; i++) {
		char *copy = NULL, *fr[2048];
		int n = line_frames(f, i, comm, &copy, fr, 2048);

		if (n < 0)
			continue;
		*total += f->lines[i].count;
		if (complete(fr, n))
			*full += f->lines[i].count;
		for (c = 0; c < 3; c++)
			if (py_seq(fr, n, chains[c], 3))
				in[c] += f->lines[i].count;
		free(copy);
	}
}

static void split_one(const struct pyi *p)
{
	static const char *const names[3] = { "heavy", "medium", "light" };
	const double want[3] = { 60, 30, 10 };
	uint64_t total, full, in[3];
	char comm[16], *summary = NULL;
	long long hints, copies;
	struct folded f;
	int c;

	if (!profile_script(p, "split.py", "5s", NULL, &f, comm, &summary))
		return;
	split_tally(&f, comm, &total, &full, in);
	/* a busy thread's samples take its thread state from its last
	 * sample on the CPU (checked by one read) */
	hints = h_summary_value(summary, "bpf_thread_hint_hits");
	/* and the process' py_procs entry from the CPU's copy */
	copies = h_summary_value(summary, "bpf_proc_copy_hits");
	test_note("%s: %llu samples, %.1f%% complete; heavy %.1f%% medium %.1f%% light %.1f%%; %lld thread states from the thread's last sample, %lld runtime entries from the CPU's copy",
		  p->label, (unsigned long long)total,
		  100.0 * full / (total ? total : 1),
		  100.0 * in[0] / (total ? total : 1),
		  100.0 * in[1] / (total ? total : 1),
		  100.0 * in[2] / (total ? total : 1), hints, copies);
	free(summary);
	ASSERT_GE(total, 1500, "samples");
	ASSERT_GE((uint64_t)(hints > 0 ? hints : 0) * 2, total,
		  "at least half the samples took the thread state from the last");
	ASSERT_GE((uint64_t)(copies > 0 ? copies : 0) * 2, total,
		  "at least half the samples took the entry from the copy");
	if (!ASSERT_GE(full * 100, total * 95,
		       ">= 95% complete (Python to <module>, native to _start)"))
		h_dump_top(&f, comm, 5);
	for (c = 0; c < 3; c++)
		ASSERT_NEAR(100.0 * in[c] / (total ? total : 1), want[c], 3,
			    names[c]);
	h_free_folded(&f);
}

TEST_ROOT(python_split_60_30_10)
{
	pyi_each(split_one);
}

/* A process that runs one CPython and then execs another (the same pid):
 * the new interpreter's frames are walked with its own layout, not with a
 * copy of the old one's entry that a CPU kept (userland's change of the
 * entry makes every CPU look it up again). */
TEST_ROOT(python_exec_into_another_version)
{
	struct pyi list[PYI_MAX];
	int n = pyi_find(list, PYI_MAX), i, a = -1, b = -1;
	char script[512], code[1024], comm[16];
	uint64_t total, full, in[3];
	char *wargv[5], *err = NULL;
	struct folded f;
	int rc;

	/* the oldest and the newest minor version present */
	for (i = 0; i < n; i++) {
		if (a < 0 || list[i].minor < list[a].minor)
			a = i;
		if (b < 0 || list[i].minor > list[b].minor)
			b = i;
	}
	if (a < 0 || list[a].minor == list[b].minor) {
		test_skip("needs two CPython minor versions (found %d builds)", n);
		return;
	}
	snprintf(script, sizeof(script), "%s/tests/workloads/python/split.py",
		 test_srcdir());
	/* a second of the old one's loop, then the new one runs split.py */
	snprintf(code, sizeof(code),
		 "import os, time\n"
		 "def old_spin():\n"
		 "    end = time.time() + 1.5\n"
		 "    while time.time() < end: pass\n"
		 "old_spin()\n"
		 "os.execv('%s', ['%s', '%s', '30'])\n",
		 list[b].bin, list[b].bin, script);
	wargv[0] = list[a].bin;
	wargv[1] = "-c";
	wargv[2] = code;
	wargv[3] = NULL;
	comm_of(list[b].bin, comm);
	rc = h_profile_workload(wargv, "5s", HZ, NULL, &f, &err);
	if (!h_profiled(rc, err)) {
		free(err);
		return;
	}
	free(err);
	split_tally(&f, comm, &total, &full, in);
	test_note("%s, then exec'd %s: %llu samples of the new one, %.1f%% complete, heavy %.1f%%",
		  list[a].label, list[b].label, (unsigned long long)total,
		  100.0 * full / (total ? total : 1),
		  100.0 * in[0] / (total ? total : 1));
	ASSERT_GE(total, 1500, "samples after the exec");
	if (!ASSERT_GE(full * 100, total * 95,
		       ">= 95% complete with the new interpreter's layout"))
		h_dump_top(&f, comm, 5);
	ASSERT_NEAR(100.0 * in[0] / (total ? total : 1), 60, 5, "heavy");
	h_free_folded(&f);
}

/* sorted(key=f): the key function sits above sorted's native frames,
 * which sit above viac. */
static void sorted_one(const struct pyi *p)
{
	char comm[16];
	/* 3.8-3.10 name code objects without their class or scope */
	static const char *const up[] = { "meth", "a", "b", "c", "burn" };
	uint64_t burn = 0, ok = 0;
	struct folded f;
	int i;

	if (!profile_script(p, "deep.py", "3s", NULL, &f, comm, NULL))
		return;
	for (i = 0; i < f.n; i++) {
		char *copy = NULL, *fr[2048];
		int n = line_frames(&f, i, comm, &copy, fr, 2048), j;
		int viac = -1, lambda = -1, natives = 0;
		bool chain;

		if (n < 0)
			continue;
		for (j = 0; j < n; j++) {
			if (starts(fr[j], "viac ("))
				viac = j;
			if (strstr(fr[j], "<lambda> (") && lambda < 0)
				lambda = j;
		}
		if (!py_seq(fr, n, (const char *const[]){ "burn" }, 1) &&
		    !strstr(f.lines[i].stack, "burn (")) {
			free(copy);
			continue;
		}
		burn += f.lines[i].count;
		for (j = viac + 1; viac >= 0 && j < lambda; j++)
			if (!is_python(fr[j]))
				natives++;
		/* ...;viac;<native frames of sorted>;<lambda>;[K.]meth;a;b;c;burn */
		chain = lambda > viac && viac >= 0 && natives > 0 &&
			complete(fr, n);
		if (chain) {
			int k = 0;

			for (j = lambda + 1; j < n && k < 5; j++) {
				char want[64];

				if (!is_python(fr[j]))
					continue;
				snprintf(want, sizeof(want), "%s (", up[k]);
				if (!starts(fr[j], want) &&
				    !(k == 0 && starts(fr[j], "K.meth (")))
					break;
				k++;
			}
			chain = k == 5;
		}
		if (chain)
			ok += f.lines[i].count;
		free(copy);
	}
	test_note("%s: %llu samples in burn, %llu with viac;<sorted, native>;<lambda>;meth;a;b;c;burn",
		  p->label, (unsigned long long)burn, (unsigned long long)ok);
	ASSERT_GE(burn, 1000, "samples in burn");
	if (!ASSERT_GE(ok * 100, burn * 95, "the key function between the right frames"))
		h_dump_top(&f, comm, 4);
	h_free_folded(&f);
}

TEST_ROOT(python_sorted_key_between_frames)
{
	pyi_each(sorted_one);
}

/* The busy thread's state lies behind 40 newer ones in the interpreter's
 * list: the thread-state scan walks them all and the stacks are whole.
 * Without the rule cache (and so the trail, which carries the thread's
 * state to its next sample), every sample scans. */
static void threads_one(const struct pyi *p)
{
	static const char *const no_hint[] = { "-rule-cache-entries", "0",
					       NULL };
	char comm[16], *summary = NULL;
	uint64_t spin = 0, ok = 0;
	long long hints;
	struct folded f;
	int i;

	if (!profile_script(p, "threads.py", "3s", no_hint, &f, comm,
			    &summary))
		return;
	for (i = 0; i < f.n; i++) {
		char *copy = NULL, *fr[2048];
		int n = line_frames(&f, i, comm, &copy, fr, 2048), j;
		int run = -1, at = -1;

		if (n < 0)
			continue;
		for (j = 0; j < n; j++) {
			if (strstr(fr[j], "run (threading.py:") && run < 0)
				run = j;
			if (starts(fr[j], "spin (threads.py:"))
				at = j;
		}
		if (strstr(f.lines[i].stack, "start_thread"))
			spin += f.lines[i].count;
		if (run >= 0 && at > run)
			ok += f.lines[i].count;
		free(copy);
	}
	hints = h_summary_value(summary, "bpf_thread_hint_hits");
	free(summary);
	test_note("%s: %llu samples of threads, %llu with Thread.run;...;spin",
		  p->label, (unsigned long long)spin, (unsigned long long)ok);
	ASSERT_GE(spin, 800, "samples of the busy thread");
	ASSERT_EQ(hints, 0, "every sample scanned (no thread state carried)");
	if (!ASSERT_GE(ok * 100, spin * 95,
		       "the busy thread's Python frames, found behind 40 thread states"))
		h_dump_top(&f, comm, 4);
	h_free_folded(&f);
}

TEST_ROOT(python_thread_behind_many)
{
	pyi_each(threads_one);
}
