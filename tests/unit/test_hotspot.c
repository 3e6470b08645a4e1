// SPDX-License-Identifier: Apache-2.0
/*
 * HotSpot's userland reader against live JVMs (each JDK present): the
 * VM's tables found and read from /proc/PID memory, checked against
 * jhsdb's own dump of them (vmstructsdump), and one interpreted frame of
 * the running Java thread (stopped with ptrace at a pc in the
 * interpreter) named back to its class, method, file and line.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "interp.h"
#include "interp_fixture.h"
#include "interp_hotspot.h"
#include "hotspot.h"
#include "test_regs.h"

struct jdk {
	const char *name, *home;
};

static const struct jdk jdks[] = {
	{ "OpenJDK 17", "/usr/lib/jvm/java-17-openjdk-amd64" },
	{ "Temurin 25", "/usr/lib/jvm/temurin-25-jdk-amd64" },
};

static int run_cmd(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Compile tests/workloads/java/Split.java into dir with the JDK's javac. */
static bool compile_split(const struct jdk *j, const char *dir)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s/bin/javac -d %s %s/tests/workloads/java/Split.java",
		 j->home, dir, test_srcdir());
	return run_cmd(cmd) == 0;
}

static pid_t start_java(const struct jdk *j, const char *dir)
{
	char java[512];
	pid_t pid;

	snprintf(java, sizeof(java), "%s/bin/java", j->home);
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		execl(java, java, "-Xint", "-cp", dir, "Split", "60", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* libjvm.so's record and its load bias in pid (the start of its mapping
 * at file offset 0). */
static int jvm_syms(pid_t pid, uint64_t sym[HS_SYM_COUNT])
{
	char path[64], line[1024], file[512] = "";
	unsigned long long lo, off, bias = 0;
	struct hs_info info = { 0 };
	void *data = NULL;
	size_t len = 0;
	unsigned i;
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "/libjvm.so");

		if (!p || sscanf(line, "%llx-%*x %*s %llx", &lo, &off) != 2)
			continue;
		if (off == 0) {
			bias = lo;
			sscanf(strchr(line, '/'), "%511s", file);
		}
	}
	fclose(f);
	if (!file[0])
		return -ENOENT;
	err = fix_detect(INTERP_HOTSPOT, file, &data, &len);
	if (!err)
		err = fix_record(INTERP_HOTSPOT, data, len, &info, sizeof(info));
	free(data);
	memcpy(sym, info.sym, sizeof(info.sym));
	for (i = 0; !err && i < HS_SYM_COUNT; i++)
		sym[i] += bias;
	return err;
}

/* A field or type line of jhsdb's vmstructsdump: its offset or size. */
static long long jhsdb_value(const char *dump, const char *key)
{
	const char *p = dump;
	size_t n = strlen(key);

	while ((p = strstr(p, key))) {
		const char *eol = strchr(p, '\n');
		long long v = -1;

		if (p[n] == ' ' && eol) {
			if (!strncmp(key, "type ", 5)) {
				/* type NAME super oop int unsigned SIZE */
				const char *s = eol;

				while (s > p && s[-1] != ' ')
					s--;
				v = atoll(s);
			} else {
				/* field T F typestring static OFFSET addr */
				char buf[256];
				char *tok[16], *save;
				int k = 0;

				snprintf(buf, sizeof(buf), "%.*s", (int)(eol - p), p);
				for (tok[k] = strtok_r(buf, " ", &save); tok[k] && k < 15;
				     tok[++k] = strtok_r(NULL, " ", &save))
					;
				if (k >= 3)
					v = atoll(tok[k - 2]);
			}
			return v;
		}
		p += n;
	}
	return -1;
}

static char *jhsdb_dump(const struct jdk *j, pid_t pid)
{
	char cmd[1024], *buf;
	size_t cap = 1 << 20, n;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "echo vmstructsdump | timeout 60 %s/bin/jhsdb clhsdb --pid %d 2>/dev/null",
		 j->home, pid);
	f = popen(cmd, "r");
	if (!f)
		return NULL;
	buf = malloc(cap + 1);
	n = buf ? fread(buf, 1, cap, f) : 0;
	pclose(f);
	if (!buf)
		return NULL;
	buf[n] = 0;
	if (!strstr(buf, "field ")) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The Java main thread: comm "java", not the process' first thread. */
static pid_t java_thread(pid_t pid)
{
	char path[96], comm[32];
	struct dirent *d;
	pid_t tid = -1;
	DIR *dir;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		pid_t t = atoi(d->d_name);

		if (t <= 0 || t == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, t);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strcmp(comm, "java\n") &&
		    (tid < 0 || t < tid))
			tid = t;
		fclose(f);
	}
	closedir(dir);
	return tid;
}

/* Stop tid at a pc in the interpreter (up to 200 tries) and name the
 * frame its rbp holds. */
static bool name_live_frame(pid_t pid, pid_t tid, const struct hs_vm *vm,
			    struct interp_symbol *out)
{
	int tries;

	for (tries = 0; tries < 200; tries++) {
		struct test_regs r = { 0 };
		struct interp_frame f = { .kind = INTERP_HOTSPOT, .n_payload = 1 };
		uint64_t method = 0, bcp = 0;
		int st, got = -1;

		if (ptrace(PTRACE_SEIZE, tid, 0, 0))
			return false;
		if (!ptrace(PTRACE_INTERRUPT, tid, 0, 0) &&
		    waitpid(tid, &st, __WALL) == tid &&
		    !test_regs_get(tid, &r) && r.pc >= vm->interp_lo &&
		    r.pc < vm->interp_hi &&
		    !interp_read_process(NULL, pid, r.fp + HOTSPOT_X86_METHOD_SLOT,
					 &method, 8)) {
			/* at the leaf the interpreter keeps the bcp in r13
			 * (the frame's slot is written at calls) */
			bcp = r.r13;
			f.data = bcp;
			f.payload[0] = method;
			got = hs_frame_name(interp_read_process, NULL, pid, vm, &f,
					    out);
		}
		ptrace(PTRACE_DETACH, tid, 0, 0);
		if (getenv("HS_DEBUG"))
			fprintf(stderr, "try %d rip %llx rbp %llx method %llx bcp %llx got %d %s %s:%u\n",
				tries, (unsigned long long)r.pc, (unsigned long long)r.fp,
				(unsigned long long)method, (unsigned long long)bcp, got,
				got == 0 ? out->name : "", got == 0 ? out->file : "",
				got == 0 ? out->line : 0);
		if (got == 0 && out->line)
			return true;
		usleep(20000);
	}
	return false;
}

static void check_jdk(const struct jdk *j)
{
	static const char *const fields[][2] = {
		{ "field Method _constMethod", "method_const" },
		{ "field ConstMethod _constants", "cm_constants" },
		{ "field ConstMethod _code_size", "cm_code_size" },
		{ "field ConstMethod _name_index", "cm_name_index" },
		{ "field ConstantPool _pool_holder", "cp_holder" },
		{ "field Klass _name", "klass_name" },
		{ "field Symbol _body", "sym_body" },
		{ "field StubQueue _buffer_limit", "stubq_limit" },
		{ "type ConstMethod", "size_cm" },
		{ "type ConstantPool", "size_cp" },
	};
	char dir[512], java[512];
	uint64_t sym[HS_SYM_COUNT];
	struct hs_vm vm;
	struct interp_symbol sy;
	char *dump;
	pid_t pid, tid;
	int err = -EAGAIN, i, agree = 0;

	snprintf(java, sizeof(java), "%s/bin/java", j->home);
	if (access(java, X_OK)) {
		test_note("%s: SKIP, %s absent", j->name, java);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/hs-%s", test_tmpdir(), j->name + strlen(j->name) - 2);
	mkdir(dir, 0755);
	if (!ASSERT_TRUE(compile_split(j, dir), "javac Split.java"))
		return;
	pid = start_java(j, dir);
	if (!ASSERT_GT(pid, 0, "java started"))
		return;
	/* the VM fills its tables while it starts: up to 15 s */
	for (i = 0; i < 150 && err; i++) {
		usleep(100000);
		err = jvm_syms(pid, sym);
		if (!err)
			err = hs_read_vm(interp_read_process, NULL, pid, sym, &vm);
		if (err == -EINVAL)
			break;
	}
	if (!ASSERT_OK(err, "the VM's tables read from the process"))
		goto out;
	test_note("%s: %u fields, %u types, %u int and %u long constants; interpreter %#llx-%#llx; "
		  "ConstMethod %u bytes, ConstantPool %u, linenumber flag %lld (%u-byte flags)",
		  j->name, vm.n_structs, vm.n_types, vm.n_ints, vm.n_longs,
		  (unsigned long long)vm.interp_lo, (unsigned long long)vm.interp_hi,
		  vm.size_cm, vm.size_cp, (long long)vm.has_linenumber, vm.cm_flags_size);
	ASSERT_GE(vm.n_structs, 500, "struct fields");
	ASSERT_GE(vm.n_types, 300, "types");
	ASSERT_GE(vm.n_ints, 100, "int constants");
	ASSERT_GE(vm.n_longs, 20, "long constants");
	ASSERT_GT(vm.interp_hi - vm.interp_lo, 65536, "the interpreter's code");
	ASSERT_GT(vm.has_linenumber, 0, "the line-number flag found");
	/* -Xint: one code heap (no tiered compilation, no segmentation) */
	ASSERT_GE(vm.n_heaps, 1, "the code heaps");
	ASSERT_TRUE(vm.n_heaps && vm.interp_lo >= vm.heaps[0].lo &&
			    vm.interp_hi <= vm.heaps[0].hi,
		    "the interpreter inside the code heap");
	dump = jhsdb_dump(j, pid);
	if (dump) {
		const uint32_t mine[] = { vm.method_const, vm.cm_constants,
					  vm.cm_code_size, vm.cm_name_index,
					  vm.cp_holder, vm.klass_name,
					  vm.sym_body, vm.stubq_limit,
					  vm.size_cm, vm.size_cp };

		for (i = 0; i < (int)(sizeof(fields) / sizeof(fields[0])); i++) {
			long long want = jhsdb_value(dump, fields[i][0]);

			if (ASSERT_EQ(mine[i], want, fields[i][0]))
				agree++;
		}
		test_note("%s: %d of %zu offsets and sizes agree with jhsdb vmstructsdump",
			  j->name, agree, sizeof(fields) / sizeof(fields[0]));
		free(dump);
	} else {
		test_note("%s: jhsdb could not attach: offsets not compared", j->name);
	}
	tid = java_thread(pid);
	if (!ASSERT_GT(tid, 0, "the Java main thread"))
		goto out;
	if (!ASSERT_TRUE(name_live_frame(pid, tid, &vm, &sy),
			 "an interpreted frame of the live thread named"))
		goto out;
	test_note("%s: live frame %s (%s:%u)", j->name, sy.name, sy.file, sy.line);
	ASSERT_TRUE(!strncmp(sy.name, "Split.", 6) || !strncmp(sy.name, "java.", 5) ||
			    !strncmp(sy.name, "sun.", 4) || !strncmp(sy.name, "jdk.", 4),
		    "a class of the program or the JDK");
	ASSERT_TRUE(strstr(sy.file, ".java") != NULL, "a .java source file");
	ASSERT_GT(sy.line, 0, "a line");
out:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

TEST(hotspot_vmstructs_live)
{
	size_t i;

	if (!TEST_REGS_X86) {
		test_skip("reads x86-64 registers and layouts (test_regs.h)");
		return;
	}
	for (i = 0; i < sizeof(jdks) / sizeof(jdks[0]); i++)
		check_jdk(&jdks[i]);
}

/* The compressed line-number stream: short pairs (bci delta << 3 | line
 * delta) and the 0xff escape with two signed UNSIGNED5 numbers. */
TEST(hotspot_line_table)
{
	/* bci 0 line 10 (escape: +0, +10 -> zigzag 20), bci 4 line 11
	 * (4 << 3 | 1), bci 9 line 8 (escape +5 -> 10, -3 -> 5), end */
	static const uint8_t tab[] = { 0xff, 0, 20, (4 << 3) | 1, 0xff, 10, 5, 0 };
	static const uint8_t tab21[] = { 0xff, 1, 21, (4 << 3) | 1, 0xff, 11, 6, 0 };

	ASSERT_EQ(hs_line_of(tab, sizeof(tab), 0, 0), 10, "bci 0");
	ASSERT_EQ(hs_line_of(tab, sizeof(tab), 3, 0), 10, "bci 3");
	ASSERT_EQ(hs_line_of(tab, sizeof(tab), 4, 0), 11, "bci 4");
	ASSERT_EQ(hs_line_of(tab, sizeof(tab), 8, 0), 11, "bci 8");
	ASSERT_EQ(hs_line_of(tab, sizeof(tab), 9, 0), 8, "bci 9");
	ASSERT_EQ(hs_line_of(tab, sizeof(tab), 500, 0), 8, "past the end");
	ASSERT_EQ(hs_line_of(tab, 2, 0, 0), 0, "a cut stream");
	/* JDK 21+: every byte of a number one more */
	ASSERT_EQ(hs_line_of(tab21, sizeof(tab21), 0, 1), 10, "excess 1: bci 0");
	ASSERT_EQ(hs_line_of(tab21, sizeof(tab21), 9, 1), 8, "excess 1: bci 9");
}
