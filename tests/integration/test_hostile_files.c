// SPDX-License-Identifier: Apache-2.0
/*
 * Issue 16, part A: files a local user controls must not stall, bloat or
 * leak through the whole-system daemon.  Each case runs a hostile
 * program as user nobody, from files it made in a directory of its own,
 * while a CPU-bound victim (split-nofp-pie, root's) runs alongside and
 * the daemon profiles the whole system at 499 Hz (enough samples on a
 * loaded machine for a 90% threshold to be above the noise).  Asserted per case:
 *
 *   - the victim keeps >= 90% of its expected samples (its CPU time, from
 *     wait4, times the rate: the machine may be loaded, the daemon may
 *     not lose what ran; >100% is the rate's jitter);
 *   - the daemon's peak RSS (rss_max_kb) stays under 200 MB, and it loses
 *     at most 2% of the host's samples;
 *   - nothing the daemon writes holds a string of a file nobody cannot
 *     read, and (fanotify) the daemon never opened that file;
 *   - the case's files_over_budget reason moved, in the summary line.
 *
 * The cases: stall (a .gnu_debuglink naming a 4 GiB sparse file, which
 * was CRC'd on the main thread), bloat (1.5 million symbols sharing one
 * 1000-byte name; a compressed .debug_frame of 512 MiB of zeros), leak
 * (a debuglink name that is a symlink to a root-only debug file).
 */
#include "../unit/test.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/fanotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/synth_elf.h"
#include "harness.h"

#define HZ 499
#define VICTIM_S "8"
#define NOBODY 65534
#define SECRET_NAME "ep_i16_secret_fn"
/* split-nofp-pie under a name of its own: other tests on the machine run
 * split-nofp-pie too, and the daemon sees the whole system */
#define VICTIM "victim-i16a"

/* The hostile program: burns CPU in its own code for argv[1] seconds.
 * The copy whose debug file only root may read names its function
 * SECRET_NAME (-DFN=...): that name must never reach the output. */
static const char loop_c[] =
	"#include <stdlib.h>\n"
	"#ifndef FN\n#define FN spin\n#endif\n"
	"#include <time.h>\n"
	"static double now(void) { struct timespec t;\n"
	"  clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }\n"
	"volatile unsigned long sink;\n"
	"__attribute__((noinline)) void FN(void) {\n"
	"  for (int i = 0; i < 100000; i++) sink += i; }\n"
	"int main(int argc, char **argv) {\n"
	"  double end = now() + (argc > 1 ? atof(argv[1]) : 5);\n"
	"  while (now() < end) FN();\n"
	"  return 0; }\n";

/* Run cmd with sh in dir, as root or as nobody; true when it exits 0. */
static bool run_sh(const char *dir, bool nobody, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static bool run_sh(const char *dir, bool nobody, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int status;
	pid_t pid;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	pid = fork();
	if (pid == 0) {
		if (nobody && (setgroups(0, NULL) || setgid(NOBODY) ||
			       setuid(NOBODY)))
			_exit(126);
		if (chdir(dir))
			_exit(125);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid &&
	       WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Start path with one argument as nobody, output to /dev/null. */
static pid_t spawn_nobody(const char *path, const char *arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 1);
		dup2(fd, 2);
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(126);
		execl(path, path, arg, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* The whole file (binary: h_slurp stops at a NUL), malloc'd, or NULL. */
static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *buf = NULL;

	if (f && fstat(fileno(f), &st) == 0 && st.st_size > 0) {
		buf = malloc(st.st_size);
		if (buf && fread(buf, 1, st.st_size, f) != (size_t)st.st_size) {
			free(buf);
			buf = NULL;
		}
		*len = st.st_size;
	}
	if (f)
		fclose(f);
	return buf;
}

/* A section to append to an ELF file. */
struct app_sec {
	const char *name;
	uint32_t type;
	uint64_t flags;
	const void *data;
	size_t size;
	int link; /* index among the appended sections, -1 for none */
	uint64_t entsize;
};

/*
 * Copy the ELF file in to out with these sections appended (data at the
 * end, then a new .shstrtab and section header table): the program still
 * runs, and the daemon sees the new sections.
 */
static bool append_sections(const char *in, const char *out,
			    const struct app_sec *secs, int n)
{
	size_t size = 0, off, strlen_old, strsz;
	char *data = read_all(in, &size), *shstr = NULL;
	Elf64_Shdr *sh = NULL;
	Elf64_Ehdr eh;
	unsigned shnum;
	bool ok = false;
	FILE *f = NULL;
	int i;

	if (!data || size < sizeof(eh))
		goto out;
	memcpy(&eh, data, sizeof(eh));
	shnum = eh.e_shnum;
	if (!shnum || eh.e_shstrndx >= shnum ||
	    eh.e_shoff + (uint64_t)shnum * sizeof(*sh) > size)
		goto out;
	sh = calloc(shnum + n, sizeof(*sh));
	if (!sh)
		goto out;
	memcpy(sh, data + eh.e_shoff, shnum * sizeof(*sh));
	strlen_old = sh[eh.e_shstrndx].sh_size;
	strsz = strlen_old;
	for (i = 0; i < n; i++)
		strsz += strlen(secs[i].name) + 1;
	shstr = malloc(strsz);
	if (!shstr)
		goto out;
	memcpy(shstr, data + sh[eh.e_shstrndx].sh_offset, strlen_old);
	f = fopen(out, "wb");
	if (!f || fwrite(data, 1, size, f) != size)
		goto out;
	off = size;
	strsz = strlen_old;
	for (i = 0; i < n; i++) {
		static const char pad[8];
		size_t p = (8 - off % 8) % 8;
		Elf64_Shdr *s = &sh[shnum + i];

		fwrite(pad, 1, p, f);
		off += p;
		*s = (Elf64_Shdr){ .sh_name = (uint32_t)strsz,
				   .sh_type = secs[i].type,
				   .sh_flags = secs[i].flags,
				   .sh_offset = off,
				   .sh_size = secs[i].size,
				   .sh_link = secs[i].link < 0 ? 0 : shnum + secs[i].link,
				   .sh_addralign = 8,
				   .sh_entsize = secs[i].entsize };
		if (secs[i].type == SHT_SYMTAB)
			s->sh_info = 1; /* the first global: all are */
		memcpy(shstr + strsz, secs[i].name, strlen(secs[i].name) + 1);
		strsz += strlen(secs[i].name) + 1;
		if (fwrite(secs[i].data, 1, secs[i].size, f) != secs[i].size)
			goto out;
		off += secs[i].size;
	}
	sh[eh.e_shstrndx].sh_offset = off;
	sh[eh.e_shstrndx].sh_size = strsz;
	fwrite(shstr, 1, strsz, f);
	off += strsz;
	while (off % 8) {
		fputc(0, f);
		off++;
	}
	eh.e_shoff = off;
	eh.e_shnum = shnum + n;
	fwrite(sh, sizeof(*sh), shnum + n, f);
	ok = fseek(f, 0, SEEK_SET) == 0 && fwrite(&eh, sizeof(eh), 1, f) == 1;
out:
	if (f && fclose(f))
		ok = false;
	free(shstr);
	free(sh);
	free(data);
	return ok && chmod(out, 0755) == 0;
}

/* build/<name>: the loop with n symbols sharing one 1000-byte name. */
static bool make_names(const char *build, uint32_t n)
{
	char in[1024], out[1024];
	Elf64_Sym *syms = calloc((size_t)n + 1, sizeof(*syms));
	char *strs = calloc(1, 1002);
	struct app_sec secs[2] = {
		{ ".symtab.many", SHT_SYMTAB, 0, syms, ((size_t)n + 1) * sizeof(*syms),
		  1, sizeof(Elf64_Sym) },
		{ ".strtab.many", SHT_STRTAB, 0, strs, 1002, -1, 0 },
	};
	uint32_t i;
	bool ok;

	if (!syms || !strs) {
		free(syms);
		free(strs);
		return false;
	}
	memset(strs + 1, 'n', 1000);
	for (i = 1; i <= n; i++)
		syms[i] = (Elf64_Sym){ .st_name = 1,
				       .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				       .st_shndx = 1,
				       .st_value = 0x100000 + 16ULL * i,
				       .st_size = 16 };
	snprintf(in, sizeof(in), "%s/loop", build);
	snprintf(out, sizeof(out), "%s/names", build);
	ok = append_sections(in, out, secs, 2);
	free(syms);
	free(strs);
	return ok;
}

/* build/bomb: the loop with a .debug_frame of `zeros` zero bytes,
 * compressed (zlib, level 9: about 1/1030). */
static bool make_bomb(const char *build, size_t zeros)
{
	struct app_sec s = { ".debug_frame", SHT_PROGBITS, SHF_COMPRESSED, NULL,
			     0, -1, 0 };
	char src[1024], out[1024];
	uint8_t *sec = synth_zlib_zeros(zeros, &s.size);
	bool ok;

	if (!sec)
		return false;
	s.data = sec;
	snprintf(src, sizeof(src), "%s/loop", build);
	snprintf(out, sizeof(out), "%s/bomb", build);
	ok = append_sections(src, out, &s, 1);
	test_note("bomb: %zu MiB of zeros in a %zu KiB section", zeros >> 20,
		  s.size >> 10);
	free(sec);
	return ok;
}

/* How many times the process prof opened or read the file fan watches
 * (others on the machine may: they are noted, not counted). */
static int daemon_opens(int fan, pid_t prof)
{
	char buf[4096] __attribute__((aligned(8)));
	int opens = 0;
	ssize_t n;

	while ((n = read(fan, buf, sizeof(buf))) > 0) {
		struct fanotify_event_metadata *m = (void *)buf;

		for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			if (m->fd >= 0)
				close(m->fd);
			if (m->pid == prof)
				opens++;
			else
				test_note("root-only file opened by pid %d, not the daemon",
					  (int)m->pid);
		}
	}
	return opens;
}

struct hostile_case {
	const char *name;	/* also the hostile program's file name */
	const char *reason;	/* files_over_budget reason it must move */
	const char *setup;	/* sh as nobody in the hostile directory */
};

/* Dirs: tmp/build (root's builds), tmp/secret (0700, root-only), tmp/h
 * (0777, the hostile user's). */
static void run_case(const struct hostile_case *c)
{
	char out[1024], errp[1024], key[64], hostile[1024], secret[1024];
	const char *args[] = { "-samples-per-second", "499", "-duration", "12s",
			       "-no-cache", "-output", out, "-v", NULL };
	const char *tmp = test_tmpdir();
	char *err = NULL, *folded = NULL, *wargv[3] = { NULL };
	struct folded f = { 0 };
	struct rusage ru = { 0 };
	uint64_t victim;
	double cpu_s, expected;
	long long rss, moved;
	int status, ino = -1, opens = 0;
	pid_t prof, h = -1, v = -1;
	char dir[512], victim_path[1024];

	snprintf(dir, sizeof(dir), "%s/h", tmp);
	snprintf(out, sizeof(out), "%s/%s.folded", tmp, c->name);
	snprintf(errp, sizeof(errp), "%s/%s.err", tmp, c->name);
	snprintf(hostile, sizeof(hostile), "%s/%s", dir, c->name);
	snprintf(secret, sizeof(secret), "%s/secret/peek.debug", tmp);
	if (!ASSERT_TRUE(run_sh(dir, true, "rm -rf ./* ./.debug; %s", c->setup),
			 "hostile files made by nobody"))
		return;
	/* root opening the root-only file is the leak's first step */
	ino = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK | FAN_CLOEXEC,
			    O_RDONLY | O_CLOEXEC);
	if (ino >= 0 && fanotify_mark(ino, FAN_MARK_ADD, FAN_OPEN | FAN_ACCESS,
				      AT_FDCWD, secret)) {
		close(ino);
		ino = -1;
	}
	ASSERT_GE(ino, 0, "fanotify on the root-only file");
	prof = h_profile_started(args, errp, 60);
	if (!ASSERT_GT(prof, 0, "profiler started"))
		goto out;
	h = spawn_nobody(hostile, "10");
	usleep(300000);
	snprintf(victim_path, sizeof(victim_path), "%s/build/" VICTIM, tmp);
	wargv[0] = victim_path;
	wargv[1] = (char *)VICTIM_S;
	v = h_spawn(wargv);
	if (ASSERT_GT(v, 0, "victim") && wait4(v, &status, 0, &ru) == v)
		v = -1;
	cpu_s = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	status = h_wait(prof, 90);
	err = h_slurp(errp);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "profiler exit 0");
	h_read_folded(out, &f);
	folded = h_slurp(out);
	victim = h_count_comm(&f, VICTIM);
	expected = cpu_s * HZ;
	rss = h_summary_value(err, "rss_max_kb");
	snprintf(key, sizeof(key), "over_budget_%s", c->reason);
	moved = h_summary_value(err, key);
	if (ino >= 0)
		opens = daemon_opens(ino, prof);
	test_note("%s: victim %llu of %.0f expected samples (%.1f%%, %.2f s CPU), "
		  "hostile %llu, daemon rss_max %lld KiB, %s=%lld, "
		  "files_over_budget=%lld lost=%lld unsynced=%lld",
		  c->name, (unsigned long long)victim, expected,
		  100.0 * victim / (expected > 0 ? expected : 1), cpu_s,
		  (unsigned long long)h_count_comm(&f, c->name), rss, key, moved,
		  h_summary_value(err, "files_over_budget"),
		  h_summary_value(err, "lost"), h_summary_value(err, "unsynced"));
	ASSERT_GT(cpu_s * 10, 5, "the victim ran (0.5 s of CPU)");
	ASSERT_GE(victim * 100, (uint64_t)(expected * 90), "victim keeps >= 90%");
	/* the stall lost half of all samples on the host */
	ASSERT_LE(h_summary_value(err, "lost") * 50, h_summary_value(err, "samples"),
		  "host samples lost <= 2%");
	ASSERT_GT(rss, 0, "rss_max_kb in the summary");
	ASSERT_LT(rss, 200 * 1024, "daemon peak RSS < 200 MB");
	ASSERT_GE(moved, 1, "the case's budget counter moved");
	ASSERT_EQ(opens, 0, "the root-only file never opened");
	ASSERT_TRUE(!err || !strstr(err, SECRET_NAME), "no secret in stderr");
	ASSERT_TRUE(!folded || !strstr(folded, SECRET_NAME),
		    "no secret in the profile");
	if (test_skipped() || !err || !strstr(err, "files_over_budget"))
		printf("%s", err ? err : "");
out:
	if (ino >= 0)
		close(ino);
	if (h > 0) {
		kill(h, SIGKILL);
		waitpid(h, NULL, 0);
	}
	if (v > 0) {
		kill(v, SIGKILL);
		waitpid(v, NULL, 0);
	}
	h_free_folded(&f);
	free(folded);
	free(err);
}

TEST_ROOT(hostile_files)
{
	static const struct hostile_case cases[] = {
		{ "stall", "sparse",
		  "cp ../build/stall ../build/loop . && mv loop stall.debug && "
		  "truncate -s 4G stall.debug" },
		{ "names", "symbols", "cp ../build/names ." },
		{ "bomb", "decompressed", "cp ../build/bomb ." },
		{ "peek", "debug_path",
		  "cp ../build/peek . && ln -s ../secret/peek.debug peek.debug" },
	};
	const char *tmp = test_tmpdir(), *only = getenv("EP_HOSTILE_CASE");
	char build[512], path[1024];
	FILE *f;
	size_t i;

	/* nobody may pass through the test's directory, write only in h/ */
	snprintf(build, sizeof(build), "%s/build", tmp);
	if (!ASSERT_OK(chmod(tmp, 0711), "chmod tmpdir") ||
	    !ASSERT_TRUE(run_sh(tmp, false, "mkdir -p build h secret && "
				"chmod 755 build && chmod 777 h && chmod 700 secret"),
			 "dirs"))
		return;
	snprintf(path, sizeof(path), "%s/loop.c", build);
	f = fopen(path, "w");
	if (!f)
		return;
	fputs(loop_c, f);
	fclose(f);
	/* stall: no CFI of its own (so the debuglink is followed), linked
	 * to stall.debug, which nobody then makes an ELF followed by a 4
	 * GiB hole (an ELF: the daemon would map it, then CRC all of it).  peek: its
	 * names only in the debug file, which only root can read. */
	if (!run_sh(build, false,
		    "gcc -O1 -o loop loop.c && "
		    "gcc -O1 -fno-asynchronous-unwind-tables -o stall.full loop.c && "
		    "printf x > stall.debug && "
		    "objcopy --add-gnu-debuglink=stall.debug stall.full stall && "
		    "gcc -O1 -g -fno-asynchronous-unwind-tables -DFN=" SECRET_NAME
		    " -o peek.full loop.c && "
		    "objcopy --only-keep-debug peek.full ../secret/peek.debug && "
		    "objcopy --strip-all --add-gnu-debuglink=../secret/peek.debug "
		    "peek.full peek && chmod 755 loop stall peek && "
		    "cp %s " VICTIM " && "
		    "chmod 600 ../secret/peek.debug", h_workload("split-nofp-pie"))) {
		test_skip("gcc and objcopy could not build the hostile programs");
		return;
	}
	if (!ASSERT_TRUE(make_names(build, 1500000), "names") ||
	    !ASSERT_TRUE(make_bomb(build, 512ULL << 20), "bomb"))
		return;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if ((!only || !strcmp(only, cases[i].name)) &&
		    test_start_subtest(cases[i].name))
			run_case(&cases[i]);
}
