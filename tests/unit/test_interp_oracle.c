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

#include "interp.h"
#include "interp_php.h"
#include "rep_fixture.h"
#include "test.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define PHP "/usr/bin/php8.2"

/* objdump of the function at the dynamic symbol name (name@@... too),
 * read by a python filter that prints what the code says. */
#define DISASM(file, sym)                                                      \
	"a=$(readelf -Ws --dyn-syms " file " | awk '$8 == \"" sym "\" || "     \
	"$8 ~ /^" sym "@@/ {print $2; exit}'); "                               \
	"objdump -d --start-address=0x$a --stop-address=$((0x$a + 64)) " file

TEST(interp_libc_tsd_vs_objdump)
{
	struct interp_tsd t;
	char out[256];
	unsigned a = 0, sh = 0, v = 0;
	int fd = open(LIBC, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		test_skip("%s: %s", LIBC, strerror(errno));
		return;
	}
	ASSERT_OK(interp_tsd_of_fd(fd, &t), "the layout read from the code");
	close(fd);
	/* add $A,%rax; shl $S,%rax; add %fs:0x10,%rax; mov V(%rax),%rdx */
	ASSERT_OK(fix_run(DISASM(LIBC, "pthread_getspecific") " | python3 -c '"
		  "import re,sys; t=sys.stdin.read(); "
		  "a=re.search(r\"add +\\$0x([0-9a-f]+),%rax\", t); "
		  "s=re.search(r\"shl +\\$0x([0-9a-f]+),%rax\", t); "
		  "v=re.search(r\"mov +0x([0-9a-f]+)\\(%rax\\),%r[ad]x\", t); "
		  "print(int(a[1],16), int(s[1],16), int(v[1],16))'",
		  out, sizeof(out)), "objdump");
	ASSERT_EQ(sscanf(out, "%u %u %u", &a, &sh, &v), 3, out);
	test_note("libc: value at tp + %u + %u * key + %u (objdump: add $%#x, "
		  "shl $%u, mov %#x(%%rax))", t.off, t.mul, t.val, a, sh, v);
	ASSERT_EQ(t.off, a << sh, "offset of the first-level block");
	ASSERT_EQ(t.mul, 1u << sh, "a key's stride");
	ASSERT_EQ(t.val, v, "the value's place in its slot");
}

TEST(interp_php_detect_vs_objdump)
{
	const struct interp_module *m = interp_module(INTERP_PHP);
	struct php_record r;
	unsigned long long lo = 0, size = 0, off = 0;
	char out[256];
	void *data = NULL;
	size_t len = 0;
	int fd = open(PHP, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		test_skip("%s: %s (make deps installs php8.2-cli)", PHP,
			  strerror(errno));
		return;
	}
	ASSERT_OK(m->detect(NULL, PHP, fd, &data, &len), "PHP found");
	close(fd);
	if (!ASSERT_OK(php_record_describe(data, len, &r), "its record"))
		goto out;
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
	ASSERT_TRUE(r.resume_pc > r.loop_lo && r.resume_pc < r.loop_hi,
		    "the resume address is inside execute_ex");
out:
	free(data);
}
