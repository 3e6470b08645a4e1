// SPDX-License-Identifier: Apache-2.0
/*
 * PHP's detection on Debian 12's arm64 php8.2 (php8.2-cli:arm64, which
 * make deps unpacks), against aarch64-linux-gnu-objdump's disassembly of
 * the same bytes: zend_vm_kind's aarch64 code (mov w0, #4; ret: the
 * hybrid VM, whose execute_ex JIT code runs on) and the prologue of
 * execute_ex, from which the daemon takes how far x29 is above the
 * body's sp (fp_sp: at a JIT frame sp = x29 - fp_sp, bpf/php.bpf.h).
 *
 * The JIT half is read from the file's CFI, which the daemon lowers only
 * for its own machine: it is asserted where the runner is an aarch64
 * build (qemu-aarch64-static -L / build-arm64/tests/runner php_arm64);
 * the x86 runner asserts that its daemon leaves it off for this file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deltas.h"
#include "interp.h"
#include "interp_fixture.h"
#include "interp_php.h"
#include "rep_fixture.h"
#include "test.h"

#define A64 "aarch64-linux-gnu-"

/*
 * The oracle of fp_sp: the prologue's sp and x29 followed through the
 * 16 instructions the daemon reads (DISASM_BY's 64 bytes), up to the
 * first branch: sp lowered by "sub sp, sp, #N" and pre-indexed stores
 * ("stp x29, x30, [sp, #-N]!"), x29 set by "add x29, sp, #M" or "mov
 * x29, sp".  Prints x29 - sp (the body's sp is x29 minus that), the
 * frame's size and where the frame record (x29, x30) was stored relative
 * to x29 (0: x29 points at it, as AAPCS64 wants).
 */
#define PROLOGUE_ORACLE                                                        \
	" | python3 -c '"                                                      \
	"import re,sys\n"                                                      \
	"sp=0; fp=None; rec=None\n"                                            \
	"for l in sys.stdin:\n"                                                \
	" m=re.match(r\"\\s*[0-9a-f]+:\\s+[0-9a-f]{8}\\s+(\\S+)\\s*(.*)\", l)\n" \
	" if not m: continue\n"                                                \
	" op,a=m[1],m[2].split(\"//\")[0].strip()\n"                           \
	" if op in (\"b\",\"bl\",\"br\",\"blr\",\"ret\",\"cbz\",\"cbnz\","     \
	"\"tbz\",\"tbnz\") or op.startswith(\"b.\"): break\n"                  \
	" i=re.fullmatch(r\"sp, sp, #(\\w+)\", a)\n"                           \
	" if op==\"sub\" and i: sp-=int(i[1],0)\n"                             \
	" if op==\"add\" and i: sp+=int(i[1],0)\n"                             \
	" s=re.search(r\"\\[sp, #(-?\\w+)\\](!?)\", a)\n"                      \
	" if op==\"stp\" and a.startswith(\"x29, x30,\") and s: "              \
	"rec=sp+int(s[1],0)\n"                                                 \
	" if s and s[2]: sp+=int(s[1],0)\n"                                    \
	" i=re.fullmatch(r\"x29, sp, #(\\w+)\", a)\n"                          \
	" if op==\"add\" and i: fp=sp+int(i[1],0)\n"                           \
	" if op==\"mov\" and a==\"x29, sp\": fp=sp\n"                          \
	"print(fp-sp, -sp, rec-fp)'"

/* zend_vm_kind's first two words and what objdump says of them: kind of
 * "mov w0, #K", 1 when the second is "ret". */
#define VM_KIND_ORACLE                                                         \
	" | python3 -c '"                                                      \
	"import re,sys\n"                                                      \
	"w=re.findall(r\"^\\s*[0-9a-f]+:\\s+([0-9a-f]{8})\\s+(\\S+)\\s*(.*)$\"," \
	" sys.stdin.read(), re.M)\n"                                           \
	"k=re.fullmatch(r\"w0, #(\\w+)(\\s*//.*)?\", w[0][2])\n"               \
	"print(w[0][0], w[1][0], int(k[1],0) if w[0][1]==\"mov\" and k else -1,"\
	" int(w[1][1]==\"ret\"))'"

/* The CFI row (readelf -wF) covering pc (argv[1]) in the FDE that starts
 * at execute_ex (argv[2]): its CFA's sp offset and x29's save slot below
 * the CFA; CFA - slot is where the unwind table puts x29 above sp. */
#define CFI_ORACLE                                                             \
	" | python3 -c '"                                                      \
	"import re,sys\n"                                                      \
	"p,lo=int(sys.argv[1]),int(sys.argv[2]); fde=0; row=None\n"            \
	"for l in sys.stdin:\n"                                                \
	" f=re.search(r\"FDE .* pc=([0-9a-f]+)\\.\\.\", l)\n"                   \
	" if f: fde=int(f[1],16)==lo; continue\n"                              \
	" if not fde: continue\n"                                              \
	" if l.split()[:1]==[\"LOC\"]: cols=l.split(); continue\n"             \
	" c=l.split()\n"                                                       \
	" if c and re.fullmatch(r\"[0-9a-f]{16}\", c[0]) and int(c[0],16)<=p:"\
	" row=dict(zip(cols,c))\n"                                             \
	"cfa=re.fullmatch(r\"sp\\+(\\d+)\", row[\"CFA\"])\n"                     \
	"fp=re.fullmatch(r\"c-(\\d+)\", row[\"x29\"])\n"                          \
	"print(int(cfa[1]), int(fp[1]))'"

TEST(php_arm64_detect_vs_objdump)
{
	unsigned long long lo = 0, size = 0;
	unsigned w0 = 0, w1 = 0;
	int kind = -1, ret = 0, fp_sp = -1, frame = 0, rec = -1;
	int cfa = 0, slot = 0;
	unsigned long long pc;
	char php[1024], cmd[8192], out[256];
	struct php_info r;
	void *data = NULL;
	size_t len = 0;

	if (system("command -v " A64 "readelf >/dev/null && "
		   "command -v " A64 "objdump >/dev/null")) {
		test_skip("aarch64-linux-gnu binutils not installed (make deps)");
		return;
	}
	if (!fix_arm64_file("EP_ARM64_PHP", "usr/bin/php8.2", php,
			    sizeof(php))) {
		test_skip("no arm64 php8.2 (make deps unpacks php8.2-cli:arm64; "
			  "or EP_ARM64_PHP=path)");
		return;
	}
	if (!ASSERT_OK(fix_detect(INTERP_PHP, php, &data, &len), "PHP found") ||
	    !ASSERT_OK(fix_record(INTERP_PHP, data, len, &r,
				 sizeof(r)), "its record"))
		goto out;
	ASSERT_EQ(r.major, 8, "PHP 8");
	ASSERT_EQ(r.minor, 2, "PHP 8.2");

	snprintf(cmd, sizeof(cmd),
		 DISASM_BY(A64, "'%1$s'", "zend_vm_kind") VM_KIND_ORACLE, php);
	if (!ASSERT_OK(fix_run(cmd, out, sizeof(out)), "objdump zend_vm_kind"))
		goto out;
	ASSERT_EQ(sscanf(out, "%x %x %d %d", &w0, &w1, &kind, &ret), 4, out);
	test_note("zend_vm_kind: %08x %08x (objdump: mov w0, #%d; %s)", w0, w1,
		  kind, ret ? "ret" : "not ret");
	ASSERT_EQ(kind, PHP_VM_KIND_HYBRID, "the hybrid VM's kind");
	ASSERT_EQ(ret, 1, "then ret");
	/* the encodings the daemon matches (movz w0, #4; ret x30) */
	ASSERT_EQ(w0, 0x52800000u | PHP_VM_KIND_HYBRID << 5, "mov's word");
	ASSERT_EQ(w1, 0xd65f03c0u, "ret's word");

	snprintf(cmd, sizeof(cmd),
		 A64 "readelf -Ws --dyn-syms '%1$s' | awk '$8 == "
		     "\"execute_ex\" || $8 ~ /^execute_ex@@/ {print $2, $3; "
		     "exit}' | (read a s; echo $((0x$a)) $s)",
		 php);
	if (!ASSERT_OK(fix_run(cmd, out, sizeof(out)), "readelf"))
		goto out;
	ASSERT_EQ(sscanf(out, "%llu %llu", &lo, &size), 2, out);
	ASSERT_EQ(r.loop_lo, lo, "execute_ex");
	ASSERT_EQ(r.loop_hi - r.loop_lo, size, "its size");

	snprintf(cmd, sizeof(cmd),
		 DISASM_BY(A64, "'%1$s'", "execute_ex") PROLOGUE_ORACLE, php);
	if (!ASSERT_OK(fix_run(cmd, out, sizeof(out)), "objdump execute_ex"))
		goto out;
	ASSERT_EQ(sscanf(out, "%d %d %d", &fp_sp, &frame, &rec), 3, out);
	test_note("php %u.%u arm64: execute_ex %#llx..%#llx, prologue (objdump) "
		  "x29 = sp + %d in a %d-byte frame, record at x29 %+d; "
		  "detected: fp_sp %u, JIT frames resume at %#llx",
		  r.major, r.minor, (unsigned long long)r.loop_lo,
		  (unsigned long long)r.loop_hi, fp_sp, frame, rec, r.fp_sp,
		  (unsigned long long)r.resume_pc);
	/* the unwind table at the JIT frames' resume address (at the
	 * middle of execute_ex where the x86 daemon keeps none) */
	pc = r.resume_pc ? r.resume_pc : (r.loop_lo + r.loop_hi) / 2;
	snprintf(cmd, sizeof(cmd),
		 A64 "readelf -wF '%1$s'" CFI_ORACLE " %2$llu %3$llu", php, pc,
		 (unsigned long long)r.loop_lo);
	if (!ASSERT_OK(fix_run(cmd, out, sizeof(out)), "readelf -wF"))
		goto out;
	ASSERT_EQ(sscanf(out, "%d %d", &cfa, &slot), 2, out);
	test_note("CFI at %#llx: CFA = sp + %d, x29 saved at CFA - %d: "
		  "x29 = sp + %d", pc, cfa, slot, cfa - slot);
	ASSERT_EQ(cfa, frame, "the CFI's frame is the prologue's");
	ASSERT_EQ(cfa - slot, fp_sp, "and so is x29's place above sp");
	ASSERT_EQ(rec, 0, "x29 points at the frame record");
	ASSERT_TRUE(fp_sp > 0 && fp_sp < frame, "x29 inside the frame");
	if (DT_HOST_MACHINE != EM_AARCH64) {
		test_note("x86 host: its daemon lowers no arm64 CFI, so no JIT "
			  "unwinding for this file (qemu-aarch64-static -L / "
			  "build-arm64/tests/runner php_arm64 checks it)");
		ASSERT_EQ(r.resume_pc, 0, "no JIT resume address");
		ASSERT_EQ(r.fp_sp, 0, "no fp_sp");
		goto out;
	}
	ASSERT_TRUE(r.resume_pc > r.loop_lo && r.resume_pc < r.loop_hi,
		    "the hybrid VM recognised: JIT frames resume in execute_ex");
	ASSERT_EQ(r.fp_sp, fp_sp, "the body's sp below x29, as the prologue "
				  "sets it");
out:
	free(data);
}
