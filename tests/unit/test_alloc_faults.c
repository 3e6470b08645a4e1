// SPDX-License-Identifier: Apache-2.0
/*
 * Allocation failures in the parsers and the process manager, one at a
 * time at every allocation and then "out of memory from there on"
 * (tests/unit/alloc_fault.h): each run must end with 0 or -ENOMEM, never
 * a crash, and under make test-asan never a leak.  The store has its own
 * (store_fault_alloc in test_store.c); CPython symbolization is in
 * test_python.c (python_alloc_faults).
 */
#include "test.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc_fault.h"
#include "bpfmaps_mem.h"
#include "config.h"
#include "deltas.h"
#include "exemgr.h"
#include "ksyms.h"
#include "procmgr.h"
#include "symbols.h"

#define LDSO "/lib64/ld-linux-x86-64.so.2"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
/* Runs at most per operation: every allocation of the small ones. */
#define MAX_RUNS 2000

static int extract_path(void *arg)
{
	struct dt_extract_opts o = { .no_debuglink = true };
	struct dt_file *f = NULL;
	int fd = open(arg, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = dt_extract_file_opts(fd, arg, &o, &f);
	close(fd);
	dt_file_free(f);
	return err;
}

struct blob {
	const void *p;
	size_t len;
};

static int extract_blob(void *arg)
{
	struct dt_extract_opts o = { .no_debuglink = true };
	const struct blob *b = arg;
	struct dt_file *f = NULL;
	int err = dt_extract_mem(b->p, b->len, &o, &f);

	dt_file_free(f);
	return err;
}

static int deserialize(void *arg)
{
	const struct blob *b = arg;
	struct dt_file *f = NULL;
	int err = dt_file_deserialize(b->p, b->len, &f);

	dt_file_free(f);
	return err;
}

static int run_each(const char *what, int (*op)(void *), void *arg,
		    const int *ok)
{
	int n = alloc_fail_each(what, op, arg, false, ok, MAX_RUNS);

	alloc_fail_each(what, op, arg, true, ok, MAX_RUNS);
	return n;
}

TEST(alloc_faults_extraction)
{
	const uint8_t *vdso = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct dt_file *f = NULL;
	struct blob b = { 0 };
	void *buf = NULL;
	int n;

	n = run_each("extract ld.so", extract_path, LDSO, NULL);
	test_note("ld.so: %d allocations", n - 1);
	if (vdso) {
		/* the vDSO image ends with its section headers */
		const Elf64_Ehdr *eh = (const void *)vdso;

		b.p = vdso;
		b.len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
		n = run_each("extract the vDSO", extract_blob, &b, NULL);
		test_note("vDSO: %d allocations", n - 1);
	}
	if (extract_path(LDSO) == 0) {
		int fd = open(LDSO, O_RDONLY | O_CLOEXEC);

		if (fd >= 0 && dt_extract_file(fd, LDSO, &f) == 0 &&
		    dt_file_serialize(f, &buf, &b.len) == 0) {
			b.p = buf;
			run_each("deserialize", deserialize, &b, NULL);
		}
		if (fd >= 0)
			close(fd);
	}
	dt_file_free(f);
	free(buf);
}

static int load_symbols(void *arg)
{
	struct symb_table *t = NULL;
	int fd = open(arg, O_RDONLY | O_CLOEXEC), err;
	uint64_t off;

	if (fd < 0)
		return -errno;
	err = symb_load_fd(fd, &t);
	close(fd);
	if (!err)
		symb_lookup(t, 0x30000, &off);
	symb_free(t);
	return err;
}

static int load_ksyms(void *arg)
{
	struct ksyms *k = NULL;
	int err = ksyms_load(arg, &k);

	ksyms_free(k);
	return err;
}

static int parse_config(void *arg)
{
	char *argv[] = { "ebpf-profiler", "-config", arg, NULL };
	struct config c;

	config_init(&c);
	return config_parse(&c, 3, argv);
}

TEST(alloc_faults_symbols_and_text)
{
	const char *ks = test_tmppath("kallsyms"), *cfg = test_tmppath("cfg");
	FILE *f;
	int n;

	n = run_each("symbols of libc", load_symbols, LIBC, NULL);
	test_note("libc symbols: %d allocations", n - 1);
	f = fopen(ks, "w");
	if (!ASSERT_NOT_NULL(f, "kallsyms file"))
		return;
	fprintf(f, "ffffffff81000000 T _stext\n"
		   "ffffffff81000100 t do_thing\n"
		   "ffffffffc0000000 t mod_func\t[mymod]\n");
	fclose(f);
	run_each("kallsyms", load_ksyms, (void *)ks, NULL);
	f = fopen(cfg, "w");
	if (!ASSERT_NOT_NULL(f, "config file"))
		return;
	fprintf(f, "output /tmp/x.folded\ncache-dir /tmp/c\ntracers native\n");
	fclose(f);
	run_each("-config file", parse_config, (void *)cfg, NULL);
}

/* A process whose mappings the process manager loads: the maps parser,
 * map_files, file ids, extraction, the BPF maps (in memory). */
struct pm_arg {
	pid_t pid;
};

static int sync_process(void *arg)
{
	const struct pm_arg *a = arg;
	struct bpfmaps *bm = NULL;
	struct exe_mgr *em = NULL;
	struct pm *pm = NULL;
	int err;

	err = bm_mem_new(1 << 12, &bm);
	if (!err)
		err = exe_mgr_new(bm, NULL, &em);
	if (!err)
		err = pm_new(em, bm, &pm);
	if (!err)
		err = pm_sync(pm, a->pid);
	if (!err)
		err = pm_exec(pm, a->pid);
	pm_free(pm);
	exe_mgr_free(em);
	bm_mem_free(bm);
	return err;
}

TEST(alloc_faults_process_manager)
{
	char *argv[] = { "/bin/sleep", "60", NULL };
	struct pm_arg a;
	int n;

	a.pid = fork();
	if (a.pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	if (!ASSERT_GT(a.pid, 0, "fork"))
		return;
	usleep(100000); /* exec'd */
	if (ASSERT_OK(sync_process(&a), "without faults")) {
		n = run_each("pm_sync", sync_process, &a, NULL);
		test_note("pm_sync of /bin/sleep: %d allocations", n - 1);
	}
	kill(a.pid, SIGKILL);
	waitpid(a.pid, NULL, 0);
}
