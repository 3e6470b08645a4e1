// SPDX-License-Identifier: Apache-2.0
/*
 * What the interpreter modules read from machine code, against objdump's
 * disassembly of the same bytes (an independent decoder) on this
 * machine's real files: glibc's pthread_getspecific (the TSD layout Perl's
 * unwinder uses) and PHP's zend_is_executing (the offset of
 * executor_globals.current_execute_data), execute_ex from readelf.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deltas.h"
#include "interp.h"
#include "interp_fixture.h"
#include "interp_php.h"
#include "rep_fixture.h"
#include "store.h"
#include "test.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define PHP "/usr/bin/php8.2"

#define DISASM(file, sym) DISASM_BY("", file, sym)

/* A python3 filter of a disassembly: a, s and v, what the regular
 * expressions A, S and V match in it, printed through the expression P. */
#define TSD_ORACLE(disasm, A, S, V, P)                                         \
	disasm " | python3 -c 'import re,sys; t=sys.stdin.read(); "            \
	"a=re.search(r\"" A "\", t); s=re.search(r\"" S "\", t); "             \
	"v=re.search(r\"" V "\", t); print(" P ")'"

/* The TSD layout interp_tsd_of_fd reads from fd (closed; < 0: skipped
 * by the caller) is what the oracle command cmd prints of the same code,
 * "A S V": the first-level block at A from the thread pointer, or at
 * A << S when shifted (x86-64 adds before the shift), a key's stride
 * 1 << S, the value at V in its slot. */
static void tsd_vs_oracle(const char *name, int fd, const char *cmd,
			  bool shifted)
{
	struct interp_tsd t;
	char out[256];
	int a = 0, sh = 0, v = 0;

	if (fd < 0)
		return;
	ASSERT_OK(interp_tsd_of_fd(fd, &t), "the layout read from the code");
	close(fd);
	ASSERT_OK(fix_run(cmd, out, sizeof(out)), "objdump");
	ASSERT_EQ(sscanf(out, "%d %d %d", &a, &sh, &v), 3, out);
	test_note("%s: value at tp %+d + %u * key + %u (objdump: %+d, shift "
		  "%d, value at %d)", name, t.off, t.mul, t.val, a, sh, v);
	ASSERT_EQ(t.off, shifted ? (long long)a << sh : a,
		  "offset of the first-level block");
	ASSERT_EQ(t.mul, 1u << sh, "a key's stride");
	ASSERT_EQ(t.val, v, "the value's place in its slot");
}

TEST(interp_libc_tsd_vs_objdump)
{
	int fd = open(LIBC, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		test_skip("%s: %s", LIBC, strerror(errno));
		return;
	}
	/* add $A,%rax; shl $S,%rax; add %fs:0x10,%rax; mov V(%rax),%rdx */
	tsd_vs_oracle("libc", fd,
		      TSD_ORACLE(DISASM(LIBC, "pthread_getspecific"),
				 "add +\\$0x([0-9a-f]+),%rax",
				 "shl +\\$0x([0-9a-f]+),%rax",
				 "mov +0x([0-9a-f]+)\\(%rax\\),%r[ad]x",
				 "int(a[1],16), int(s[1],16), int(v[1],16)"),
		      true);
}

TEST(interp_php_detect_vs_objdump)
{
	struct php_info r;
	unsigned long long lo = 0, size = 0, off = 0;
	char out[256];

	if (!fix_installed_record(INTERP_PHP, PHP, "make deps installs php8.2-cli",
				  "PHP found", &r, sizeof(r)))
		return;
	/* cmpq $0x0,DISP(%rax) after lea executor_globals(%rip),%rax */
	ASSERT_OK(fix_run(DISASM(PHP, "zend_is_executing") " | python3 -c '"
		  "import re,sys; t=sys.stdin.read(); "
		  "print(int(re.search(r\"cmpq +\\$0x0,0x([0-9a-f]+)\\(%rax\\)\", t)[1], 16))'",
		  out, sizeof(out)), "objdump");
	off = strtoull(out, NULL, 10);
	ASSERT_OK(fix_run("readelf -Ws --dyn-syms " PHP " | awk '$8 == "
			  "\"execute_ex\" {print $2, $3; exit}' | "
			  "(read a s; echo $((0x$a)) $s)", out, sizeof(out)),
		  "readelf");
	ASSERT_EQ(sscanf(out, "%llu %llu", &lo, &size), 2, out);
	test_note("php %u.%u: current_execute_data at +%u (objdump %llu), "
		  "execute_ex %#llx..%#llx (readelf %#llx, %llu bytes), JIT "
		  "frames resume at %#llx",
		  r.major, r.minor, r.current_off, off,
		  (unsigned long long)r.loop_lo, (unsigned long long)r.loop_hi,
		  lo, size, (unsigned long long)r.resume_pc);
	ASSERT_EQ(r.current_off, off, "EG.current_execute_data");
	ASSERT_EQ(r.loop_lo, lo, "execute_ex");
	ASSERT_EQ(r.loop_hi - r.loop_lo, size, "its size");
	/* from the x86 file's CFI, which an arm64 runner (qemu) does not
	 * lower: no JIT unwinding there */
	if (DT_HOST_MACHINE != EM_X86_64)
		ASSERT_EQ(r.resume_pc, 0, "no JIT on another machine's file");
	else
		ASSERT_TRUE(r.resume_pc > r.loop_lo && r.resume_pc < r.loop_hi,
			    "the resume address is inside execute_ex");
}

/* A file holding a runtime in a build its module does not support (a
 * thread-safe PHP: executor_globals_offset instead of executor_globals)
 * is counted as such, and still after a restart from the cache. */
TEST(interp_unsupported_counted_from_the_cache)
{
	static const char src[] =
		"const char version[] = \"X-Powered-By: PHP/8.2.0\";\n"
		"unsigned long executor_globals_offset = 8;\n"
		"int execute_ex(int x) { return x * 3 + (int)version[0]; }\n"
		"int main(void) { return execute_ex(1) + (int)executor_globals_offset; }\n";
	const char *c = test_tmppath("zts.c"), *bin = test_tmppath("zts");
	char cmd[1024], dir[512];
	struct exe_file f = { .path = (char *)bin, .fd = -1 };
	struct interp_stats st;
	struct store_opts o = { .no_sync = true };
	struct interp_mgr *im;
	struct store *s;
	int i, fd;

	ASSERT_OK(fix_write_file(c, src, sizeof(src) - 1), "source");
	snprintf(cmd, sizeof(cmd), "cc -O1 -o %s %s", bin, c);
	ASSERT_OK(fix_run(cmd, NULL, 0), "cc");
	snprintf(dir, sizeof(dir), "%s/zts-cache", test_tmpdir());
	memset(f.id.b, 0x5a, sizeof(f.id.b));
	for (i = 0; i < 2; i++) { /* a daemon, then its restart */
		if (!ASSERT_OK(store_open(dir, &o, &s), "store"))
			return;
		ASSERT_OK(interp_mgr_new(NULL, s, "php", &im), "manager");
		fd = open(bin, O_RDONLY | O_CLOEXEC);
		interp_detect(im, &f, fd);
		close(fd);
		interp_get_stats(im, INTERP_PHP, &st);
		ASSERT_EQ(st.files_unsupported, 1, "the file is counted as unsupported");
		ASSERT_EQ(st.files, 0, "and not attached");
		ASSERT_EQ(st.detect_cached, i, "the second time from the cache");
		ASSERT_EQ(f.interp_mask, 0, "no runtime kept on the file");
		interp_mgr_free(im);
		store_free(s);
	}
}

#define LIBC_A64 "/usr/lib/aarch64-linux-gnu/libc.so.6"
/* objdump of an arm64 function, as DISASM */
#define DISASM_A64(file, sym) DISASM_BY("aarch64-linux-gnu-", file, sym)

/* An arm64 file and its disassembler (libc6:arm64 and
 * binutils-aarch64-linux-gnu, from make deps), or a skip. */
static int open_a64_libc(void)
{
	int fd;

	if (system("aarch64-linux-gnu-objdump --version >/dev/null 2>&1")) {
		test_skip("aarch64-linux-gnu-objdump not installed (make deps)");
		return -1;
	}
	fd = open(LIBC_A64, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		test_skip("%s: %s (make deps: libc6:arm64)", LIBC_A64,
			  strerror(errno));
	return fd;
}

/* AArch64 glibc's TSD: the key's slot is below the thread pointer. */
TEST(interp_libc_tsd_arm64_vs_objdump)
{
	/* ubfiz xK, x1, #S, #32; sub xK, xK, #A; ldr x0, [xT, #V] */
	tsd_vs_oracle("arm64 libc", open_a64_libc(),
		      TSD_ORACLE(DISASM_A64(LIBC_A64, "pthread_getspecific"),
				 "(sub|add)\\s+x\\d+, x\\d+, #0x([0-9a-f]+)",
				 "ubfiz\\s+x\\d+, x\\d+, #(\\d+), #32",
				 "ldr\\s+x0, \\[x\\d+, #(\\d+)\\]",
				 "(-1 if a[1] == \"sub\" else 1) * int(a[2],16), "
				 "int(s[1]), int(v[1])"),
		      false);
}

/* pthread_self() - thread pointer: 0 on x86-64, the size of struct
 * pthread below TPIDR_EL0 on arm64 (CPython's thread matching). */
TEST(interp_libc_self_vs_objdump)
{
	char out[256];
	int32_t off = 1;
	int fd = open(LIBC, O_RDONLY | O_CLOEXEC), want = 0;

	if (fd >= 0) {
		ASSERT_OK(interp_self_off_of_fd(fd, &off), "x86-64 libc");
		close(fd);
		ASSERT_EQ(off, 0, "x86-64: pthread_self is the thread pointer");
	}
	fd = open_a64_libc();
	if (fd < 0)
		return;
	ASSERT_OK(interp_self_off_of_fd(fd, &off), "arm64 libc");
	close(fd);
	/* mrs x0, tpidr_el0; sub x0, x0, #N; ret */
	ASSERT_OK(fix_run(DISASM_A64(LIBC_A64, "pthread_self") " | python3 -c '"
		  "import re,sys; t=sys.stdin.read(); "
		  "assert re.search(r\"mrs\\s+x0, tpidr_el0\", t); "
		  "a=re.search(r\"sub\\s+x0, x0, #0x([0-9a-f]+)\", t); "
		  "print(-int(a[1],16))'",
		  out, sizeof(out)), "objdump");
	ASSERT_EQ(sscanf(out, "%d", &want), 1, out);
	test_note("arm64 libc: pthread_self = tp %+d (objdump %+d)", off, want);
	ASSERT_EQ(off, want, "arm64: struct pthread below the thread pointer");
	ASSERT_LT(off, -512, "a struct pthread's size");
}
