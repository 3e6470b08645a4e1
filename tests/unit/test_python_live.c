// SPDX-License-Identifier: Apache-2.0
/*
 * The BPF walk, done in userland (fix_py_walk, py_fixture.c) on running
 * interpreters:
 * tests/workloads/python/deep.py runs on each CPython build, prints its
 * main thread's frames as Python sees them (code object ids, names,
 * lines), and then the test stops that thread with ptrace, takes its fs
 * base from the registers (as BPF reads task->thread.fsbase), finds the
 * thread state by thread_id, walks and symbolizes, and compares:
 *   burn <- c <- b <- a <- K.meth <- <lambda> <- viac <- <module>
 * Root is not needed: the test is the interpreter's parent, which ptrace
 * and process_vm_readv allow (unless Yama's ptrace_scope is 3).
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <elf.h>

#include "interp_python.h"
#include "py_fixture.h"
#include "python_interps.h"
#include "test_regs.h"

#define LIVE_FRAMES 8

struct child {
	pid_t pid;
	int in, out; /* its stdin (we write), its stdout (we read) */
	char buf[16384];
	size_t len;
};

struct seen_frame {
	uint64_t code;
	int first, line;
	char name[128];
	char file[PATH_MAX];
};

static int spawn(struct child *ch, const char *bin, const char *script)
{
	int pin[2], pout[2];

	memset(ch, 0, sizeof(*ch));
	ch->pid = ch->in = ch->out = -1;
	if (pipe2(pin, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(pout, O_CLOEXEC) < 0) {
		close(pin[0]);
		close(pin[1]);
		return -errno;
	}
	ch->pid = fork();
	if (ch->pid == 0) {
		dup2(pin[0], 0);
		dup2(pout[1], 1);
		execl(bin, bin, script, "120", "--poke", (char *)NULL);
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	ch->in = pin[1];
	ch->out = pout[0];
	return ch->pid < 0 ? -ECHILD : 0;
}

static void reap(struct child *ch)
{
	if (ch->pid > 0) {
		kill(ch->pid, SIGKILL);
		waitpid(ch->pid, NULL, 0);
	}
	if (ch->in >= 0)
		close(ch->in);
	if (ch->out >= 0)
		close(ch->out);
}

/* One line of the child's output, within 10 s. */
static bool get_line(struct child *ch, char *line, size_t cap)
{
	for (;;) {
		char *nl = memchr(ch->buf, '\n', ch->len);
		struct pollfd pfd = { ch->out, POLLIN, 0 };
		ssize_t r;

		if (nl) {
			size_t n = nl - ch->buf;

			snprintf(line, cap, "%.*s", (int)n, ch->buf);
			memmove(ch->buf, nl + 1, ch->len - n - 1);
			ch->len -= n + 1;
			return true;
		}
		if (ch->len == sizeof(ch->buf) || poll(&pfd, 1, 10000) <= 0)
			return false;
		r = read(ch->out, ch->buf + ch->len, sizeof(ch->buf) - ch->len);
		if (r <= 0)
			return false;
		ch->len += r;
	}
}

/* Ask for the main thread's frames; returns how many, -1 on error. */
static int poke(struct child *ch, struct seen_frame *fr, int max)
{
	char line[PATH_MAX + 256];
	int n = 0;

	if (write(ch->in, "dump\n", 5) != 5)
		return -1;
	while (get_line(ch, line, sizeof(line))) {
		struct seen_frame f = { 0 };
		int pos = 0;

		if (strcmp(line, "end") == 0)
			return n;
		if (sscanf(line, "frame %" SCNu64 " %d %d %127s %n", &f.code,
			   &f.first, &f.line, f.name, &pos) < 4 || !pos)
			return -1;
		snprintf(f.file, sizeof(f.file), "%s", line + pos);
		if (n < max)
			fr[n++] = f;
	}
	return -1;
}

/* Stop one thread (PTRACE_SEIZE + PTRACE_INTERRUPT) and read its fs base. */
static int stop_thread(pid_t tid, uint64_t *fsbase)
{
	struct test_regs regs = { 0 };
	int status, err;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0 ||
	    waitpid(tid, &status, __WALL) < 0) {
		err = -errno;
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return err;
	}
	err = test_regs_get(tid, &regs);
	if (err) {
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return err;
	}
	*fsbase = regs.tp;
	return 0;
}

/* The load bias of file path in process pid: where its first PT_LOAD
 * segment is mapped minus that segment's page-aligned address. */
static int load_bias(pid_t pid, const char *path, uint64_t *bias)
{
	char maps[64], line[PATH_MAX + 128], real[PATH_MAX];
	uint64_t lo_vaddr = UINT64_MAX;
	Elf64_Ehdr eh;
	FILE *f;
	int fd, i, err = -ENOENT;

	if (!realpath(path, real))
		return -errno;
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh)) {
		close(fd);
		return -EIO;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) ==
			    sizeof(ph) &&
		    ph.p_type == PT_LOAD && ph.p_vaddr < lo_vaddr)
			lo_vaddr = ph.p_vaddr & ~0xfffULL;
	}
	close(fd);
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, off;
		int pos = 0;

		if (sscanf(line, "%" SCNx64 "-%*x %*s %" SCNx64 " %*s %*d %n",
			   &start, &off, &pos) < 2 || !pos)
			continue;
		line[strcspn(line, "\n")] = 0;
		if (off == 0 && strcmp(line + pos, real) == 0) {
			*bias = start - lo_vaddr;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

/* The tid of a thread of pid other than the main one. */
static pid_t other_thread(pid_t pid)
{
	char cmd[128], *out;
	pid_t tid;

	snprintf(cmd, sizeof(cmd), "ls /proc/%d/task | grep -vx %d | head -1",
		 pid, pid);
	out = pyi_run("%s", cmd);
	tid = out ? atoi(out) : 0;
	free(out);
	return tid;
}

static const char *const names_311[LIVE_FRAMES] = {
	"burn", "c", "b", "a", "K.meth", "viac.<locals>.<lambda>", "viac",
	"<module>",
};
static const char *const names_38[LIVE_FRAMES] = {
	"burn", "c", "b", "a", "meth", "<lambda>", "viac", "<module>",
};

/* Compare the walk of the main thread with what Python printed. */
static void check_main(struct py_ctx *ctx, const struct pyi *p, pid_t pid,
		       const struct py_walk_frame *w, const struct py_walk *wk,
		       const struct seen_frame *seen, int nseen)
{
	const char *const *names = p->minor >= 11 ? names_311 : names_38;
	char stack[1024];
	size_t len = 0;
	uint32_t k;

	ASSERT_EQ(wk->n, LIVE_FRAMES, "python frames");
	ASSERT_EQ(nseen, LIVE_FRAMES, "frames Python printed");
	ASSERT_FALSE(wk->truncated, "not truncated");
	for (k = 0; k < wk->n && k < (uint32_t)nseen; k++) {
		struct py_frame_info fi;
		bool end;

		ASSERT_EQ(w[k].code, seen[k].code, "code object = id(code)");
		if (!ASSERT_OK(py_symbolize(ctx, pid, w[k].code, w[k].instr,
					    &fi),
			       "symbolize"))
			continue;
		ASSERT_STREQ(fi.name, names[k], "name");
		ASSERT_STREQ(fi.name, seen[k].name, "name as Python says");
		ASSERT_STREQ(fi.file, seen[k].file, "file");
		ASSERT_EQ(fi.first_line, seen[k].first, "first line");
		if (k == 0) {
			/* burn ran on between the dump and the stop: any line
			 * of its body */
			ASSERT_GT(fi.line, seen[k].first, "burn line");
			ASSERT_LE(fi.line, seen[k].first + 5, "burn line");
		} else {
			ASSERT_EQ(fi.line, seen[k].line, "line = f_lineno");
		}
		/* 3.8-3.10: a native eval frame per Python frame; later, the
		 * lambda ends the inner invocation, <module> the outer. */
		end = p->minor <= 10 || k == 5 || k == 7;
		ASSERT_EQ(w[k].flags, end ? PY_WF_CALL_END : 0,
			  "invocation boundaries");
		len += snprintf(stack + len, sizeof(stack) - len, "%s%s:%d%s",
				k ? " <- " : "", fi.name, fi.line,
				w[k].flags & PY_WF_CALL_END ? " |" : "");
		if (len >= sizeof(stack))
			len = sizeof(stack) - 1;
	}
	if (len)
		test_note("%s: %s", p->label, stack);
}

/* Cross-checks of the thread state found by thread_id: the kernel's tid
 * in native_thread_id (3.11+), and glibc's TSD slot of autoTSSkey. */
static void check_tstate(struct py_ctx *ctx, pid_t pid, pid_t tid,
			 uint64_t fsbase, uint64_t tstate)
{
	const struct py_proc *pp = py_ctx_proc(ctx, pid);
	struct iovec l, r;
	uint64_t v = 0;
	uint32_t key = 0;

	if (pp->ts_native_tid != PY_OFF_NONE) {
		l = (struct iovec){ &v, 8 };
		r = (struct iovec){
			(void *)(uintptr_t)(tstate + pp->ts_native_tid), 8
		};
		ASSERT_EQ(process_vm_readv(pid, &l, 1, &r, 1, 0), 8, "read");
		ASSERT_EQ(v, tid, "native_thread_id is the tid");
	}
	/* glibc 2.36 x86-64: struct pthread keeps its first 32 TSD slots
	 * at 0x310, 16 bytes each {seq, data}. */
	if (strcmp(gnu_get_libc_version(), "2.36") != 0 || !pp->tss_key)
		return;
	l = (struct iovec){ &key, 4 };
	r = (struct iovec){ (void *)(uintptr_t)pp->tss_key, 4 };
	ASSERT_EQ(process_vm_readv(pid, &l, 1, &r, 1, 0), 4, "read key");
	if (!ASSERT_LT(key, 32, "autoTSSkey in the first block"))
		return;
	l = (struct iovec){ &v, 8 };
	r = (struct iovec){ (void *)(uintptr_t)(fsbase + 0x310 + 16 * key + 8),
			    8 };
	ASSERT_EQ(process_vm_readv(pid, &l, 1, &r, 1, 0), 8, "read slot");
	ASSERT_EQ(v, tstate, "pthread_getspecific(autoTSSkey) agrees");
}

static void live_one(const struct pyi *p)
{
	struct py_ctx *ctx = NULL;
	char script[PATH_MAX], line[256];
	struct seen_frame seen[16];
	struct py_walk_frame w[32];
	struct py_walk wk;
	struct py_info in;
	struct child ch = { .pid = -1, .in = -1, .out = -1 };
	uint64_t ident = 0, helper = 0, fsbase, bias;
	pid_t pid, tid;
	int tries, nseen = -1, err;

	snprintf(script, sizeof(script), "%s/tests/workloads/python/deep.py",
		 test_srcdir());
	if (!ASSERT_OK(fix_py_detect(p->lib, 0, &in), "detect") ||
	    !ASSERT_OK(py_ctx_new(NULL, &ctx), "ctx"))
		goto cleanup;
	if (!ASSERT_OK(spawn(&ch, p->bin, script), "spawn"))
		goto cleanup;
	pid = ch.pid;
	if (!ASSERT_TRUE(get_line(&ch, line, sizeof(line)) &&
				 sscanf(line, "ready %*d %" SCNu64,
					&ident) == 1,
			 "ready line") ||
	    !ASSERT_TRUE(get_line(&ch, line, sizeof(line)) &&
				 sscanf(line, "helper %" SCNu64, &helper) == 1,
			 "helper line"))
		goto cleanup;
	/* Until the main thread is in burn. */
	for (tries = 0; tries < 100; tries++) {
		nseen = poke(&ch, seen, 16);
		if (nseen > 0 && strcmp(seen[0].name, "burn") == 0)
			break;
		usleep(20000);
	}
	if (!ASSERT_EQ(nseen, LIVE_FRAMES, "deep stack reached"))
		goto cleanup;
	if (!ASSERT_OK(load_bias(pid, p->lib, &bias), "load bias") ||
	    !ASSERT_OK(py_ctx_add_proc(ctx, pid, &in, bias), "add proc"))
		goto cleanup;

	/* The main thread, stopped. */
	err = stop_thread(pid, &fsbase);
	if (err == -EPERM) {
		test_skip("ptrace not permitted (Yama ptrace_scope?)");
		goto cleanup;
	}
	if (!ASSERT_OK(err, "stop main thread"))
		goto cleanup;
	ASSERT_EQ(fsbase, ident, "fs base = threading.get_ident()");
	err = fix_py_walk(py_ctx_proc(ctx, pid), interp_read_process,
			  NULL, pid, fsbase, w, 32, &wk);
	if (ASSERT_OK(err, "walk main thread")) {
		check_main(ctx, p, pid, w, &wk, seen, nseen);
		check_tstate(ctx, pid, pid, fsbase, wk.tstate);
	}
	ptrace(PTRACE_DETACH, pid, 0, 0);

	/* The helper thread: another state in the list, its own frames. */
	tid = other_thread(pid);
	if (ASSERT_GT(tid, 0, "helper tid") &&
	    ASSERT_OK(stop_thread(tid, &fsbase), "stop helper")) {
		struct py_frame_info top, bottom;

		ASSERT_EQ(fsbase, helper, "helper fs base = its ident");
		err = fix_py_walk(py_ctx_proc(ctx, pid), interp_read_process,
				  NULL, pid, fsbase, w, 32, &wk);
		if (ASSERT_OK(err, "walk helper") &&
		    ASSERT_GE(wk.n, 2, "helper frames") &&
		    ASSERT_OK(py_symbolize(ctx, pid, w[0].code, w[0].instr,
					   &top),
			      "helper top") &&
		    ASSERT_OK(py_symbolize(ctx, pid, w[wk.n - 1].code,
					   w[wk.n - 1].instr, &bottom),
			      "helper bottom")) {
			/* stopped waiting for a line, or (a race with the
			 * answer it just gave) still in dump() under it */
			if (!strcmp(top.name, "dump") && wk.n >= 3 &&
			    py_symbolize(ctx, pid, w[1].code, w[1].instr, &top))
				top.name[0] = 0;
			ASSERT_STREQ(top.name, "poke_loop", "helper top frame");
			ASSERT_STREQ(bottom.name,
				     p->minor >= 11 ? "Thread._bootstrap" :
						      "_bootstrap",
				     "helper bottom frame");
			check_tstate(ctx, pid, tid, fsbase, wk.tstate);
		}
		ptrace(PTRACE_DETACH, tid, 0, 0);
	}
	ASSERT_EQ(fix_py_tstate(py_ctx_proc(ctx, pid), interp_read_process,
				NULL, pid, 0x1000, &bias), -ESRCH,
		  "no state for an unknown thread");
cleanup:
	py_ctx_free(ctx);
	reap(&ch);
}

TEST(python_live_walk)
{
	if (!TEST_REGS_X86) {
		test_skip("reads x86-64 registers and layouts (test_regs.h)");
		return;
	}
	pyi_each(live_one);
}
