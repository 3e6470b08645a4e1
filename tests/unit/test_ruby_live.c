// SPDX-License-Identifier: Apache-2.0
/*
 * Ruby's module against independent sources on this machine's Debian
 * ruby (3.1): what detection reads from libruby (the version, the TLS
 * relocation of ruby_current_ec, rb_vm_exec, the ID table found in
 * rb_id2str's code) against RbConfig, readelf and objdump; and the
 * offsets against a live process: tests/workloads/ruby/sleeper.rb asleep
 * in a known stack, stopped with ptrace (its fs base from the registers,
 * as BPF reads task->thread.fsbase), where the execution context found
 * through the thread's DTV (the unwinder's way) must be the one the VM
 * names as its main thread's, and the control frames walked from it must
 * name Kernel#sleep, Sleeper#nap, the singleton method Sleeper.start,
 * Object#outer and <main> at their lines in the script (nap's past the
 * immediate part of its line table's succinct index).
 * Root is not needed: the test is the script's parent.
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "interp.h"
#include "interp_fixture.h"
#include "interp_ruby.h"
#include "test_regs.h"
#include "rep_fixture.h"
#include "ruby.h"
#include "symbols.h"

#define RUBY "/usr/bin/ruby"
#define LIBRUBY "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1"

/* objdump of 64 bytes at the dynamic symbol's address (or at $a) */
#define DUMP_AT(file, addr)                                                    \
	"objdump -d --no-show-raw-insn --start-address=$((" addr "))"          \
	" --stop-address=$((" addr " + 64)) " file
#define SYM_ADDR(file, sym)                                                    \
	"a=0x$(readelf -Ws --dyn-syms " file " | awk '$8 == \"" sym "\" || "   \
	"$8 ~ /^" sym "@@/ {print $2; exit}'); "

/* Ruby's record of the file at path, detected and described into *r:
 * 0, or the first error. */
static int ruby_of(const char *path, struct ruby_info *r)
{
	void *data = NULL;
	size_t len = 0;
	int err = fix_detect(INTERP_RUBY, path, &data, &len);

	if (!err)
		err = fix_record(INTERP_RUBY, data, len, r,
				 sizeof(*r));
	free(data);
	return err;
}

static int detect_libruby(struct ruby_info *r)
{
	if (access(LIBRUBY, R_OK)) {
		test_skip("%s: %s (make deps installs ruby)", LIBRUBY,
			  strerror(errno));
		return -ENOENT;
	}
	return ruby_of(LIBRUBY, r);
}

TEST(ruby_detect_vs_rbconfig_readelf_objdump)
{
	unsigned long long slot = 0, val = 0, lo = 0, size = 0, gs = 0;
	unsigned major = 0, minor = 0, teeny = 0, shift = 0, last = 0;
	struct ruby_info r;
	char out[512];

	if (detect_libruby(&r)) {
		if (!test_skipped())
			ASSERT_TRUE(false, "libruby detected");
		return;
	}
	ASSERT_OK(fix_run(RUBY " -e 'c = RbConfig::CONFIG; print c[\"MAJOR\"], "
			  "\" \", c[\"MINOR\"], \" \", c[\"TEENY\"]'",
			  out, sizeof(out)), "RbConfig");
	ASSERT_EQ(sscanf(out, "%u %u %u", &major, &minor, &teeny), 3, out);
	ASSERT_OK(fix_run("readelf -rW " LIBRUBY " | awk '$3 == "
			  "\"R_X86_64_DTPMOD64\" && $5 == \"ruby_current_ec\" "
			  "{print $1, $4; exit}' | (read a v; echo $((0x$a)) "
			  "$((0x$v)))", out, sizeof(out)), "readelf -r");
	ASSERT_EQ(sscanf(out, "%llu %llu", &slot, &val), 2, out);
	ASSERT_OK(fix_run("readelf -Ws --dyn-syms " LIBRUBY " | awk '$8 == "
			  "\"rb_vm_exec\" {print $2, $3; exit}' | "
			  "(read a s; echo $((0x$a)) $s)", out, sizeof(out)),
		  "readelf -s");
	ASSERT_EQ(sscanf(out, "%llu %llu", &lo, &size), 2, out);
	/* rb_id2str: shr $S,%rax; cmp $L,%rdi; ...; jmp T; at T: cmp
	 * %eN,GS(%rip) (last_id) */
	ASSERT_OK(fix_run(SYM_ADDR(LIBRUBY, "rb_id2str") DUMP_AT(LIBRUBY, "$a")
			  " > /tmp/ep_rb_id2str.$$; t=$(python3 -c 'import re,sys;"
			  " t=open(sys.argv[1]).read(); print(\"0x\" + re.search("
			  "r\"jmp +([0-9a-f]+)\", t)[1])' /tmp/ep_rb_id2str.$$); "
			  "(cat /tmp/ep_rb_id2str.$$; " DUMP_AT(LIBRUBY, "$t")
			  ") | python3 -c 'import re,sys; t=sys.stdin.read(); "
			  "s=re.search(r\"shr +\\$0x([0-9a-f]+),%rax\", t); "
			  "l=re.search(r\"cmp +\\$0x([0-9a-f]+),%rdi\", t); "
			  "g=re.search(r\"cmp +%e\\w+,0x[0-9a-f]+\\(%rip\\) +# "
			  "([0-9a-f]+)\", t); "
			  "print(int(s[1],16), int(l[1],16), int(g[1],16))'; "
			  "rm -f /tmp/ep_rb_id2str.$$", out, sizeof(out)),
		  "objdump");
	ASSERT_EQ(sscanf(out, "%u %u %llu", &shift, &last, &gs), 3, out);
	test_note("ruby %u.%u.%u (RbConfig %u.%u.%u); ruby_current_ec: module "
		  "id at GOT %#llx (readelf %#llx), offset %lld (%llu); "
		  "rb_vm_exec %#llx+%llu; ruby_global_symbols %#llx (objdump "
		  "%#llx), IDs: >> %u above %#x",
		  r.major, r.minor, r.patch, major, minor, teeny,
		  (unsigned long long)r.ec_addr, slot, (long long)r.ec_off, val,
		  (unsigned long long)r.loop_lo,
		  (unsigned long long)(r.loop_hi - r.loop_lo),
		  (unsigned long long)r.global_symbols, gs, r.id_shift,
		  r.last_op_id);
	ASSERT_EQ(r.major, major, "major version");
	ASSERT_EQ(r.minor, minor, "minor version");
	ASSERT_EQ(r.patch, teeny, "teeny version");
	ASSERT_EQ(r.ec_mode, RUBY_EC_DTV, "the ec through the DTV (GD TLS)");
	ASSERT_EQ(r.ec_addr, slot, "the GOT slot of its module id");
	ASSERT_EQ((unsigned long long)r.ec_off, val, "its offset in the block");
	ASSERT_EQ(r.loop_lo, lo, "rb_vm_exec");
	ASSERT_EQ(r.loop_hi - r.loop_lo, size, "its size");
	ASSERT_EQ(r.global_symbols, gs, "ruby_global_symbols");
	ASSERT_EQ(r.id_shift, shift, "RUBY_ID_SCOPE_SHIFT");
	ASSERT_EQ(r.last_op_id, last, "tLAST_OP_ID");
}

/* ---- a live process ------------------------------------------------------ */

static uint64_t peek(pid_t pid, uint64_t addr)
{
	uint64_t v = 0;

	return interp_read_process(NULL, pid, addr, &v, 8) ? 0 : v;
}

/* libruby's load bias: its mapping at file offset 0 (its first PT_LOAD
 * is at address 0). */
static uint64_t libruby_bias(pid_t pid)
{
	char path[64], line[512];
	unsigned long long start = 0, off = 1;
	uint64_t bias = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!bias && fgets(line, sizeof(line), f))
		if (strstr(line, "libruby") &&
		    sscanf(line, "%llx-%*[0-9a-f] %*s %llx", &start, &off) == 2 &&
		    off == 0)
			bias = start;
	fclose(f);
	return bias;
}

struct cfunc_ctx {
	struct symb_table *syms;
	uint64_t bias;
};

static const char *cfunc_sym(void *arg, uint64_t func)
{
	struct cfunc_ctx *c = arg;
	uint64_t off = 1;
	const char *n = c->syms ? symb_lookup(c->syms, func - c->bias, &off) :
				  NULL;

	return n && !off ? n : NULL;
}

#define LIVE_MAX 8

TEST(ruby_live_offsets)
{
	static const struct {
		const char *name;
		unsigned line;
	} want[] = { { "Kernel#sleep", 0 }, { "Sleeper#nap", 8 },
		     { "Sleeper.start", 10 }, { "Object#outer", 13 },
		     { "<main>", 14 } };
	struct interp_symbol sym[LIVE_MAX];
	struct test_regs regs = { 0 };
	struct ruby_info r;
	struct ruby_namer nm;
	struct cfunc_ctx cc = { 0 };
	char script[512], *real = NULL;
	uint64_t bias, ec_dtv, ec_vm, v, cfp, end;
	unsigned n = 0, i, tries;
	pid_t pid;
	int st, fd;

	if (!TEST_REGS_X86) {
		test_skip("reads x86-64 registers and layouts (test_regs.h)");
		return;
	}
	if (detect_libruby(&r)) {
		if (!test_skipped())
			ASSERT_TRUE(false, "libruby detected");
		return;
	}
	snprintf(script, sizeof(script), "%s/tests/workloads/ruby/sleeper.rb",
		 test_srcdir());
	real = realpath(script, NULL);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		execl(RUBY, RUBY, "--disable-gems", script, "60", (char *)NULL);
		_exit(127);
	}
	if (!ASSERT_TRUE(pid > 0, "fork"))
		goto out;
	/* asleep in nap once its frames are there */
	for (tries = 0; tries < 50; tries++) {
		char path[64], wchan[64] = "";
		FILE *f;

		usleep(100000);
		snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
		f = fopen(path, "re");
		if (f) {
			if (!fgets(wchan, sizeof(wchan), f))
				wchan[0] = 0;
			fclose(f);
		}
		if (tries >= 5 && wchan[0] && strcmp(wchan, "0"))
			break;
	}
	if (!ASSERT_OK(ptrace(PTRACE_ATTACH, pid, 0, 0), "ptrace attach"))
		goto kill;
	waitpid(pid, &st, 0);
	if (!ASSERT_OK(test_regs_get(pid, &regs), "registers"))
		goto detach;
	bias = libruby_bias(pid);
	ASSERT_TRUE(bias != 0, "libruby mapped");
	/* the unwinder's way: module id from the GOT, the DTV at fs + 8 */
	v = peek(pid, bias + r.ec_addr);
	ec_dtv = peek(pid, peek(pid, peek(pid, regs.tp + 8) + v * 16) +
			       r.ec_off);
	/* the VM's: ruby_current_vm_ptr->ractor.main_thread->ec (3.1) */
	ec_vm = peek(pid, peek(pid, peek(pid, bias + r.vm_ptr) + 40) + 40);
	test_note("module id %llu, ec %#llx through the DTV, %#llx through "
		  "the VM", (unsigned long long)v, (unsigned long long)ec_dtv,
		  (unsigned long long)ec_vm);
	ASSERT_TRUE(ec_dtv != 0, "an ec through the DTV");
	ASSERT_EQ(ec_dtv, ec_vm, "the main thread's ec, both ways");
	/* the control frames, as the unwinder walks them */
	fd = open(LIBRUBY, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (symb_load_fd(fd, &cc.syms))
			cc.syms = NULL;
		close(fd);
	}
	cc.bias = bias;
	nm = (struct ruby_namer){ .global_symbols = bias + r.global_symbols,
				  .cfunc = cfunc_sym, .cfunc_arg = &cc };
	ASSERT_OK(ruby_find_class_ids(interp_read_process, NULL, pid,
				      &ruby_offsets_3_1, nm.global_symbols,
				      &nm.classpath_id, &nm.attached_id),
		  "the IDs classes are named by");
	cfp = peek(pid, ec_dtv + 16);
	end = peek(pid, ec_dtv) + 8 * peek(pid, ec_dtv + 8);
	for (i = 0; cfp && cfp < end && i < 64 && n < LIVE_MAX; i++, cfp += 64) {
		uint64_t iseq = peek(pid, cfp + 16), ep = peek(pid, cfp + 32);
		uint32_t magic = (uint32_t)peek(pid, ep) & RUBY_FRAME_MAGIC_MASK;
		struct interp_frame f = { .kind = INTERP_RUBY, .n_payload = 2 };

		if (magic == RUBY_FRAME_MAGIC_CFUNC) {
			f.data = RUBY_FRAME_CFUNC;
			f.payload[0] = peek(pid, ep + RUBY_EP_ME_CREF);
		} else if (iseq && magic != RUBY_FRAME_MAGIC_IFUNC &&
			   magic != RUBY_FRAME_MAGIC_DUMMY) {
			/* a method's frame: its own environment is local */
			f.data = RUBY_FRAME_DATA(RUBY_FRAME_ISEQ,
						 peek(pid, ep + RUBY_EP_ME_CREF));
			f.payload[0] = iseq;
			f.payload[1] = peek(pid, cfp);
		} else {
			continue;
		}
		if (ruby_frame_name(interp_read_process, NULL, pid,
				    &ruby_offsets_3_1, &nm, &f, &sym[n]) == 0)
			n++;
	}
	for (i = 0; i < n; i++)
		test_note("frame %u: %s (%s:%u)", i, sym[i].name, sym[i].file,
			  sym[i].line);
	if (ASSERT_EQ(n, 5, "five frames"))
		for (i = 0; i < 5; i++) {
			ASSERT_TRUE(!strncmp(sym[i].name, want[i].name,
					     strlen(want[i].name)),
				    want[i].name);
			if (!want[i].line)
				continue;
			ASSERT_EQ(sym[i].line, want[i].line, "its line");
			ASSERT_TRUE(real && !strcmp(sym[i].file, real),
				    "the script's path");
		}
	symb_free(cc.syms);
detach:
	ptrace(PTRACE_DETACH, pid, 0, 0);
kill:
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
out:
	free(real);
}

/* A stand-in for a ruby with the VM linked in (version @V@): the symbols
 * detection reads, ruby_current_ec in the executable's TLS block behind
 * an over-aligned variable; it prints the variable's offset from the
 * thread pointer. */
static const char fake_ruby_src[] =
	"#include <stdio.h>\n"
	"__thread long pad[3] __attribute__((aligned(64))) = { 1, 2, 3 };\n"
	"__thread void *ruby_current_ec;\n"
	"const char ruby_version[] = \"@V@\";\n"
	"void rb_vm_exec(void) { pad[0]++; }\n"
	"int main(void) { printf(\"%ld\\n\", (long)((char *)&ruby_current_ec"
	" - (char *)__builtin_thread_pointer())); rb_vm_exec(); return 0; }\n";

/* Build the stand-in as version ver with cc, run it (through run, for
 * another architecture) for *want, and detect it into *r.  -ECHILD when
 * it could not be built or run, else detection's result. */
static int fake_ruby(const char *cc, const char *run, const char *ver,
		     const char *bin, long *want, struct ruby_info *r)
{
	char cmd[2048], out[256];

	snprintf(cmd, sizeof(cmd),
		 "printf '%%s' '%s' | sed 's/@V@/%s/' | %s -x c -O1 -rdynamic "
		 "-o %s - && %s %s", fake_ruby_src, ver, cc, bin, run, bin);
	if (fix_run(cmd, out, sizeof(out))) {
		test_note("%s: %s", cmd, out);
		return -ECHILD;
	}
	*want = strtol(out, NULL, 10);
	return ruby_of(bin, r);
}

/* A ruby executable with the VM linked in keeps ruby_current_ec in its
 * own TLS block, at a fixed offset from the thread pointer, with no
 * relocation: detection computes it from PT_TLS, and a stand-in built
 * here (the symbols detection reads, the variable) prints where its
 * thread's copy really is.  A version without a layout is refused. */
TEST(ruby_static_exe_tls_offset)
{
	struct ruby_info r;
	char bin[512];
	long want = 0;
	int err;

	snprintf(bin, sizeof(bin), "%s/fake_ruby_new", test_tmpdir());
	ASSERT_EQ(fake_ruby("cc", "", "9.9.0", bin, &want, &r), -ENOTSUP,
		  "a version without a layout");
	snprintf(bin, sizeof(bin), "%s/fake_ruby", test_tmpdir());
	err = fake_ruby("cc", "", "3.1.2", bin, &want, &r);
	if (!ASSERT_OK(err, "built, run and detected"))
		return;
	test_note("static ruby_current_ec at tp %lld (the program: %ld)",
		  (long long)r.ec_off, want);
	ASSERT_EQ(r.ec_mode, RUBY_EC_STATIC, "the executable's own TLS");
	ASSERT_EQ(r.ec_off, want, "its offset from the thread pointer");
}

/* ---- arm64 (TLS variant I, descriptors) ---------------------------------- */

/* Debian's arm64 libruby: $EP_ARM64_LIBRUBY, the multiarch directory, the
 * one make deps unpacks, or the arm64 guests' userland (tests/qemu/cache,
 * EP_ARM64_RUNTIMES=1). */
#define LIBRUBY_A64 "libruby-3.1.so.3.1"
static bool arm64_libruby(char *path, size_t cap)
{
	return fix_arm64_file("EP_ARM64_LIBRUBY",
			      "usr/lib/aarch64-linux-gnu/" LIBRUBY_A64, path,
			      cap);
}

/*
 * Debian's arm64 libruby reaches ruby_current_ec through a TLS descriptor
 * (R_AARCH64_TLSDESC, GCC's default on aarch64), not the DTPMOD64 slot of
 * x86-64: detection must name that descriptor's GOT slot and the
 * variable's offset in the block, as aarch64-linux-gnu-readelf -r lists
 * them, and the code must call through that slot (objdump: the
 * adrp/ldr/add/blr sequence of a descriptor call, at hundreds of sites).
 */
TEST(ruby_arm64_tlsdesc_vs_readelf_objdump)
{
	unsigned long long slot = 0, val = 0, add = 0, lo = 0, size = 0;
	char lib[1024], cmd[4096], out[512];
	unsigned long long sites = 0, gs = 0;
	unsigned shift = 0, last = 0;
	struct ruby_info r;

	if (system("command -v aarch64-linux-gnu-readelf >/dev/null && "
		   "command -v aarch64-linux-gnu-objdump >/dev/null")) {
		test_skip("aarch64-linux-gnu binutils not installed (make deps)");
		return;
	}
	if (!arm64_libruby(lib, sizeof(lib))) {
		test_skip("no arm64 %s (apt-get download libruby3.1:arm64; "
			  "dpkg-deb -x; EP_ARM64_LIBRUBY=path, or "
			  "EP_ARM64_RUNTIMES=1 make test-qemu)", LIBRUBY_A64);
		return;
	}
	if (!ASSERT_OK(ruby_of(lib, &r),
		       "the arm64 libruby opened, detected, its record read"))
		return;
	snprintf(cmd, sizeof(cmd),
		 "aarch64-linux-gnu-readelf -rW '%s' | awk '$3 == "
		 "\"R_AARCH64_TLSDESC\" && $5 == \"ruby_current_ec\" "
		 "{print $1, $4, $7; exit}' | (read a v n; echo $((0x$a)) "
		 "$((0x$v)) $((0x$n)))", lib);
	ASSERT_OK(fix_run(cmd, out, sizeof(out)), "readelf -r");
	if (!ASSERT_EQ(sscanf(out, "%llu %llu %llu", &slot, &val, &add), 3,
		       out))
		return;
	snprintf(cmd, sizeof(cmd),
		 "aarch64-linux-gnu-readelf -Ws --dyn-syms '%s' | awk '$8 == "
		 "\"rb_vm_exec\" {print $2, $3; exit}' | "
		 "(read a s; echo $((0x$a)) $s)", lib);
	ASSERT_OK(fix_run(cmd, out, sizeof(out)), "readelf -s");
	ASSERT_EQ(sscanf(out, "%llu %llu", &lo, &size), 2, out);
	/* descriptor calls: adrp xA, P; ldr xB, [xA, #L]; add x0, xA, #L;
	 * blr xB: the slot is P + L; how many call through ours */
	snprintf(cmd, sizeof(cmd),
		 "aarch64-linux-gnu-objdump -d --no-show-raw-insn '%s' | "
		 "python3 -c 'import re,sys\n"
		 "L=sys.stdin.read().splitlines(); n=0\n"
		 "for i in range(len(L)-3):\n"
		 " a=re.search(r\"adrp\\s+(x\\d+), ([0-9a-f]+)\",L[i])\n"
		 " b=re.search(r\"ldr\\s+(x\\d+), \\[(x\\d+), #(\\d+)\\]\",L[i+1])\n"
		 " c=re.search(r\"add\\s+x0, (x\\d+), #0x([0-9a-f]+)\",L[i+2])\n"
		 " d=re.search(r\"blr\\s+(x\\d+)\",L[i+3])\n"
		 " if a and b and c and d and b[2]==a[1]==c[1] and d[1]==b[1]"
		 " and int(b[3])==int(c[2],16) and"
		 " int(a[2],16)+int(b[3])==%llu: n+=1\n"
		 "print(n)'", lib, slot);
	ASSERT_OK(fix_run(cmd, out, sizeof(out)), "objdump");
	ASSERT_EQ(sscanf(out, "%llu", &sites), 1, out);
	test_note("arm64 ruby %u.%u.%u: ruby_current_ec through the TLSDESC at "
		  "GOT %#llx (readelf %#llx, %llu call sites in objdump), "
		  "offset %lld in the block (readelf %llu + %llu); rb_vm_exec "
		  "%#llx+%llu",
		  r.major, r.minor, r.patch, (unsigned long long)r.ec_addr, slot,
		  sites, (long long)r.ec_off, val, add,
		  (unsigned long long)r.loop_lo,
		  (unsigned long long)(r.loop_hi - r.loop_lo));
	ASSERT_EQ(r.major * 100 + r.minor, 301, "Debian 12's ruby 3.1");
	ASSERT_EQ(r.ec_mode, RUBY_EC_TLSDESC, "the ec through a TLS descriptor");
	ASSERT_EQ(r.ec_addr, slot, "the descriptor's GOT slot");
	ASSERT_EQ((unsigned long long)r.ec_off, val + add,
		  "its offset in the block");
	ASSERT_TRUE(sites >= 10, "the code calls through that descriptor");
	ASSERT_EQ(r.loop_lo, lo, "rb_vm_exec");
	ASSERT_EQ(r.loop_hi - r.loop_lo, size, "its size");
	/* rb_id2str: cmp x0, #L; lsr xN, x0, #S; b T; at T: adrp xD, P;
	 * ldr wM, [xD, #O] (last_id at P + O) */
	snprintf(cmd, sizeof(cmd),
		 "a=0x$(aarch64-linux-gnu-readelf -Ws --dyn-syms '%s' | awk '$8 "
		 "== \"rb_id2str\" {print $2; exit}'); d() { "
		 "aarch64-linux-gnu-objdump -d --no-show-raw-insn "
		 "--start-address=$(($1)) --stop-address=$(($1 + 128)) '%s'; }; "
		 "t=0x$(d $a | awk '$2 == \"b\" {print $3; exit}'); "
		 "(d $a; d $t) | python3 -c 'import re,sys; t=sys.stdin.read(); "
		 "s=re.search(r\"lsr\\s+x\\d+, x0, #(\\d+)\", t); "
		 "l=re.search(r\"cmp\\s+x0, #0x([0-9a-f]+)\", t); "
		 "g=re.search(r\"adrp\\s+x\\d+, ([0-9a-f]+).*\\n.*ldr\\s+w\\d+, "
		 "\\[x\\d+, #(\\d+)\\]\", t); "
		 "print(s[1], int(l[1],16), int(g[1],16) + int(g[2]))'",
		 lib, lib);
	ASSERT_OK(fix_run(cmd, out, sizeof(out)), "objdump rb_id2str");
	if (ASSERT_EQ(sscanf(out, "%u %u %llu", &shift, &last, &gs), 3, out)) {
		test_note("ruby_global_symbols %#llx (objdump %#llx), IDs: >> %u "
			  "above %#x", (unsigned long long)r.global_symbols, gs,
			  r.id_shift, r.last_op_id);
		ASSERT_EQ(r.global_symbols, gs, "ruby_global_symbols");
		ASSERT_EQ(r.id_shift, shift, "RUBY_ID_SCOPE_SHIFT");
		ASSERT_EQ(r.last_op_id, last, "tLAST_OP_ID");
	}
}

/*
 * An arm64 executable with the VM linked in: its TLS block is above the
 * thread pointer past the 16-byte TCB (variant I).  A stand-in is cross
 * built and run under qemu-aarch64-static, printing where its thread's
 * ruby_current_ec is; detection must find the same offset.
 */
TEST(ruby_arm64_static_exe_tls_offset)
{
	struct ruby_info r;
	char bin[512];
	long want = 0;
	int err;

	if (system("command -v aarch64-linux-gnu-gcc >/dev/null && "
		   "command -v qemu-aarch64-static >/dev/null")) {
		test_skip("aarch64-linux-gnu-gcc or qemu-aarch64-static missing");
		return;
	}
	snprintf(bin, sizeof(bin), "%s/fake_ruby_a64", test_tmpdir());
	err = fake_ruby("aarch64-linux-gnu-gcc",
			"qemu-aarch64-static -L /usr/aarch64-linux-gnu", "3.1.2",
			bin, &want, &r);
	if (err == -ECHILD) {
		test_skip("could not cross build and run the stand-in");
		return;
	}
	if (!ASSERT_OK(err, "detected"))
		return;
	test_note("arm64 static ruby_current_ec at tp + %lld (the program: "
		  "%ld)", (long long)r.ec_off, want);
	ASSERT_EQ(r.ec_mode, RUBY_EC_STATIC, "the executable's own TLS");
	ASSERT_EQ(r.ec_off, want, "its offset from the thread pointer");
}

/*
 * arm64's heap is above 2^47: with 48-bit user addresses the mmap area
 * (and the Ruby heap's pages in it) starts near 2^48, where x86-64's
 * user space has already ended.  The unwinder keeps an iseq frame's
 * method entry in the frame's 48-bit data word, and once dropped any
 * entry at or above 2^47, so that on arm64 every Ruby method came out
 * without its class ("heavy" for "Burner#heavy").  A frame laid out in
 * an image at such an address (a Ruby 3.1 method entry, its class, the
 * class's ivar table holding __classpath__) must survive the data word
 * and be named with its class.
 */
struct a64_image {
	uint64_t base;
	uint8_t mem[0x480];
};

static int a64_image_read(void *arg, pid_t pid, uint64_t addr, void *buf,
			  size_t len)
{
	const struct a64_image *im = arg;

	(void)pid;
	if (addr < im->base || addr - im->base > sizeof(im->mem) ||
	    len > sizeof(im->mem) - (addr - im->base))
		return -EFAULT;
	memcpy(buf, im->mem + (addr - im->base), len);
	return 0;
}

static void a64_put(struct a64_image *im, uint64_t off, uint64_t v)
{
	memcpy(im->mem + off, &v, 8);
}

/* An embedded String (before 3.2: its length in the flags). */
static void a64_string(struct a64_image *im, uint64_t off, const char *s)
{
	a64_put(im, off, 0x05 | (uint64_t)strlen(s) << 14);
	memcpy(im->mem + off + 16, s, strlen(s));
}

TEST(ruby_arm64_method_entry_above_2_47_named)
{
	/* where Debian 12's arm64 ruby3.1 maps its heap in the guests */
	static struct a64_image im = { .base = 0xffffa8e40000ull };
	const uint64_t b = im.base, classpath_id = 0x2a71;
	const uint64_t iseq = b, body = b + 0x100, me = b + 0x280;
	struct ruby_namer nm = { .classpath_id = classpath_id };
	struct interp_frame f = { .kind = INTERP_RUBY, .n_payload = 2 };
	struct interp_symbol out;
	uint64_t w;

	a64_put(&im, 0x010, body);		/* iseq->body */
	a64_put(&im, 0x100 + 64, b + 0x240);	/* location.pathobj */
	a64_put(&im, 0x100 + 80, b + 0x200);	/* location.label */
	a64_put(&im, 0x100 + 88, 26 << 1 | 1); /* first_lineno, a Fixnum */
	a64_string(&im, 0x200, "heavy");
	a64_string(&im, 0x240, "split.rb");
	a64_put(&im, 0x280, 0x1a | 6 << 12);	/* imemo, ment */
	a64_put(&im, 0x280 + 32, b + 0x300);	/* me->owner */
	a64_put(&im, 0x300, 0x02);		/* T_CLASS */
	a64_put(&im, 0x300 + 24, b + 0x340);	/* RClass.ptr */
	a64_put(&im, 0x340 + 8, b + 0x380);	/* ->iv_tbl */
	a64_put(&im, 0x380 + 40, 1);		/* entries_bound */
	a64_put(&im, 0x380 + 48, b + 0x3c0);	/* entries */
	a64_put(&im, 0x3c0 + 8, classpath_id);	/* {hash, key, record} */
	a64_put(&im, 0x3c0 + 16, b + 0x400);
	a64_string(&im, 0x400, "Burner");

	ASSERT_TRUE(me >= 1ull << 47, "above x86-64's user space");
	ASSERT_TRUE(me < RUBY_ME_LIMIT, "below what the unwinder keeps");
	w = FRAME_WORD(FRAME_INTERP(INTERP_RUBY), 0,
		       RUBY_FRAME_DATA(RUBY_FRAME_ISEQ, me));
	f.data = FRAME_DATA(w);
	ASSERT_EQ(RUBY_FRAME_KIND(f.data), RUBY_FRAME_ISEQ, "the kind");
	ASSERT_EQ(RUBY_FRAME_ME(f.data), me, "the method entry, whole");
	f.payload[0] = iseq;
	if (!ASSERT_OK(ruby_frame_name(a64_image_read, &im, 1,
				       &ruby_offsets_3_1, &nm, &f, &out),
		       "named"))
		return;
	test_note("%s (%s:%u)", out.name, out.file, out.line);
	ASSERT_STREQ(out.name, "Burner#heavy", "the method with its class");
	ASSERT_STREQ(out.file, "split.rb", "its file");
	ASSERT_EQ(out.line, 26, "its first line");
}
