// SPDX-License-Identifier: Apache-2.0
/*
 * V8's module on this machine's node (/usr/bin/node): what detection
 * reads from the v8dbg_* symbols, the version and the embedded builtins'
 * range, against nm and objdump reading the same file (an independent ELF
 * reader); and frame names from a memory image built here the way V8
 * lays its objects out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp.h"
#include "interp_fixture.h"
#include "interp_v8.h"
#include "rep_fixture.h"
#include "test.h"
#include "../fuzz/v8_image.h"
#include "v8.h"

#define NODE "/usr/bin/node"

/* The int32 nm's symbol holds, printed by objdump ("0" for a symbol in
 * .bss, which objdump shows no bytes of), one per line, in order. */
#define INT_OF(file)                                                           \
	"for s in \"$@\"; do a=$(nm -D " file " 2>/dev/null | awk -v s=$s "    \
	"'$3 == s {print $1; exit}'); [ -n \"$a\" ] || a=$(nm " file           \
	" | awk -v s=$s '$3 == s {print $1; exit}'); "                         \
	"h=$(objdump -s --start-address=0x$a --stop-address=$((0x$a + 4)) "    \
	file " | awk '/^ [0-9a-f]+ / {print $2; exit}'); "                     \
	"python3 -c \"import struct,sys; h='$h'; "                             \
	"print(struct.unpack('<i', bytes.fromhex(h))[0] if len(h) == 8 else 0)\"; " \
	"done"

TEST(v8_detect_node_vs_nm)
{
	static const char *const names[] = {
		"v8dbg_off_fp_function",
		"v8dbg_off_fp_context",
		"v8dbg_off_fp_bytecode_array",
		"v8dbg_off_fp_bytecode_offset",
		"v8dbg_class_JSFunction__shared__SharedFunctionInfo",
		"v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object",
		"v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject",
		"v8dbg_class_Script__name__Object",
		"v8dbg_class_Map__instance_type__uint16_t",
		"v8dbg_class_HeapObject__map__Map",
		"v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE",
		"v8dbg_type_Script__SCRIPT_TYPE",
		"v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE",
		"_ZN2v88internal7Version6major_E",
		"_ZN2v88internal7Version6minor_E",
		"_ZN2v88internal7Version6build_E",
		"v8_Default_embedded_blob_code_size_",
	};
	long long want[sizeof(names) / sizeof(names[0])];
	char cmd[4096], out[1024], *p;
	unsigned long long blob = 0;
	struct v8_info r;
	size_t i, n;

	if (!fix_installed_record(INTERP_V8, NODE, "make deps installs nodejs",
				  "V8 found in node", &r, sizeof(r)))
		return;
	n = (size_t)snprintf(cmd, sizeof(cmd), "set -- ");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "%s ", names[i]);
	snprintf(cmd + n, sizeof(cmd) - n, "; %s", INT_OF(NODE));
	if (!ASSERT_OK(fix_run(cmd, out, sizeof(out)), "nm and objdump"))
		return;
	for (p = out, i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		want[i] = strtoll(p, &p, 10);
	ASSERT_OK(fix_run("nm " NODE " | awk '$3 == \"v8_Default_embedded_blob_code_\""
			  " {print $1; exit}'", out, sizeof(out)), "nm");
	blob = strtoull(out, NULL, 16);
	test_note("node: V8 %u.%u.%u.%u, builtins %#llx..%#llx (nm %#llx + "
		  "%lld), fp slots function %d context %d bytecode array %d "
		  "offset %d, %u optional fields defaulted",
		  r.major, r.minor, r.build, r.patch,
		  (unsigned long long)r.blob_lo, (unsigned long long)r.blob_hi,
		  blob, want[16], r.off_function, r.off_context,
		  r.off_bytecode_array, r.off_bytecode_offset, r.missing);
	ASSERT_EQ(r.off_function, want[0], "off_fp_function");
	ASSERT_EQ(r.off_context, want[1], "off_fp_context");
	ASSERT_EQ(r.off_bytecode_array, want[2], "off_fp_bytecode_array");
	ASSERT_EQ(r.off_bytecode_offset, want[3], "off_fp_bytecode_offset");
	ASSERT_EQ(r.l.fn_shared, want[4], "JSFunction::shared");
	ASSERT_EQ(r.l.sfi_name, want[5], "SFI::name_or_scope_info");
	ASSERT_EQ(r.l.sfi_script, want[6], "SFI::script_or_debug_info");
	ASSERT_EQ(r.l.script_name, want[7], "Script::name");
	ASSERT_EQ(r.l.map_type, want[8], "Map::instance_type");
	ASSERT_EQ(r.l.map, want[9], "HeapObject::map (in .bss: 0)");
	ASSERT_EQ(r.l.type_sfi, want[10], "SHARED_FUNCTION_INFO_TYPE");
	ASSERT_EQ(r.l.type_script, want[11], "SCRIPT_TYPE");
	ASSERT_EQ(r.l.type_scope_info, want[12], "SCOPE_INFO_TYPE");
	ASSERT_EQ(r.major, want[13], "V8 major");
	ASSERT_EQ(r.minor, want[14], "V8 minor");
	ASSERT_EQ(r.build, want[15], "V8 build");
	ASSERT_EQ(r.blob_lo, blob, "the embedded builtins start");
	ASSERT_EQ(r.blob_hi - r.blob_lo, want[16], "their size");
	ASSERT_EQ(r.missing, 9, "every field has its symbol in node 20 but "
		  "BytecodeArray::source_position_table (V8 11 names none), "
		  "the TrustedByteArray type and BytecodeArray::wrapper (V8 12's), "
		  "Code's instruction start (two spellings), size and flags "
		  "(V8 11 lost them) and SharedFunctionInfoWrapper's (V8 13's)");
	/* Code's fields from those V8 11 names (seen in node 20's memory) */
	ASSERT_EQ(r.l.code_deopt, 16, "Code::deoptimization_data");
	ASSERT_EQ(r.l.code_positions, 24, "Code::source_position_table");
	ASSERT_EQ(r.l.code_instr_start, 40, "Code::instruction_start");
	ASSERT_EQ(r.l.code_flags, 48, "Code::flags");
	ASSERT_EQ(r.l.code_instr_size, 56, "Code::instruction_size");
	ASSERT_EQ(r.l.istream_header, 16, "InstructionStream's header");
	/* kBytecodeSizes: 3 scales of every bytecode, the prefixes 1 byte */
	ASSERT_GT(r.l.bc_count, 100, "Bytecodes::kBytecodeSizes");
	ASSERT_EQ(r.l.bc_sizes[0], 1, "Wide's size");
}

/* A file without V8 is not one: libc. */
TEST(v8_detect_not_in_libc)
{
	void *data = NULL;
	size_t len = 0;
	int fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		test_skip("no libc: %s", strerror(errno));
		return;
	}
	ASSERT_EQ(fix_detect_fd(INTERP_V8, "libc.so.6", fd, &data, &len),
		  -ENOENT, "no V8 in libc");
	close(fd);
	free(data);
}

/* Debian's node 18 keeps V8 in libnode.so.108 (stripped: .dynsym only), a
 * shared library whose DefaultEmbeddedBlobCode() loads the builtins'
 * address from a relocated pointer: the address and size against
 * objdump's disassembly and dump of the same bytes.  make deps unpacks
 * the library from Debian's libnode108 package. */
#define LIBNODE "/var/cache/ebpf-profiler-test/node/18-debian/libnode.so.108"
TEST(v8_detect_libnode_vs_objdump)
{
	unsigned long long lo = 0, size = 0;
	struct v8_info r;
	char out[256];

	if (!fix_installed_record(INTERP_V8, LIBNODE, "make deps unpacks it",
				  "V8 found in libnode", &r, sizeof(r)))
		return;
	/* the pointer the code loads (objdump's "# addr" comment), then its
	 * 8 bytes; the size's uint32 likewise */
#define TARGET_OF(sym)                                                         \
	"a=$(nm -D " LIBNODE " | awk '$3 == \"" sym "\" {print $1}'); "         \
	"objdump -d --start-address=0x$a --stop-address=$((0x$a + 8)) " LIBNODE \
	" | awk '/lea/ {for (i = 1; i < NF; i++) if ($i == \"#\") {print $(i + 1); exit}}'"
#define BYTES_AT(var, n)                                                       \
	"$(objdump -s --start-address=0x$" var " --stop-address=$((0x$" var   \
	" + " #n ")) " LIBNODE " | awk '/^ [0-9a-f]+ / {print $2 $3; exit}')"
	ASSERT_OK(fix_run("p=$(" TARGET_OF("_ZN2v88internal23DefaultEmbeddedBlobCodeEv")
			  "); s=$(" TARGET_OF("_ZN2v88internal27DefaultEmbeddedBlobCodeSizeEv")
			  "); python3 -c \"import struct; print("
			  "struct.unpack('<Q', bytes.fromhex('" BYTES_AT("p", 8) "'))[0], "
			  "struct.unpack('<I', bytes.fromhex('" BYTES_AT("s", 4) "'[:8]))[0])\"",
			  out, sizeof(out)), "objdump");
#undef BYTES_AT
#undef TARGET_OF
	ASSERT_EQ(sscanf(out, "%llu %llu", &lo, &size), 2, out);
	test_note("libnode.so.108: V8 %u.%u.%u.%u, builtins %#llx..%#llx "
		  "(objdump %#llx + %llu), %u optional fields defaulted",
		  r.major, r.minor, r.build, r.patch,
		  (unsigned long long)r.blob_lo, (unsigned long long)r.blob_hi,
		  lo, size, r.missing);
	ASSERT_EQ(r.major, 10, "V8 10 (node 18)");
	ASSERT_EQ(r.blob_lo, lo, "the builtins' address");
	ASSERT_EQ(r.blob_hi - r.blob_lo, size, "their size");
	ASSERT_EQ(r.off_function, -16, "off_fp_function");
}

/* A process image laid out as node 20 has its objects, read in place of
 * the process: a cons-string name, a two-byte script name, and the line
 * from the bytecode's source positions at the frame's bytecode offset. */
struct image {
	uint8_t b[2048];
};

static int image_read(void *arg, pid_t pid, uint64_t addr, void *buf,
		      size_t len)
{
	const struct image *im = arg;

	(void)pid;
	if (addr < 0x10000 || addr - 0x10000 + len > sizeof(im->b))
		return -EFAULT;
	memcpy(buf, im->b + (addr - 0x10000), len);
	return 0;
}

static void put_ptr(struct image *im, unsigned at, unsigned to)
{
	uint64_t v = 0x10000 + to + 1;

	memcpy(im->b + at, &v, 8);
}

static void put_u32(struct image *im, unsigned at, uint32_t v)
{
	memcpy(im->b + at, &v, 4);
}

/* A string object at at: map, length, chars (one byte). */
static void put_str(struct image *im, unsigned at, unsigned map,
		    const char *s)
{
	put_ptr(im, at, map);
	put_u32(im, at + 12, (uint32_t)strlen(s));
	memcpy(im->b + at + 16, s, strlen(s));
}

TEST(v8_frame_name_from_image)
{
	static const struct v8_layout l = {
		.map = 0, .map_type = 12, .fn_shared = 24, .sfi_name = 16,
		.sfi_script = 32, .script_name = 16, .str_length = 12,
		.seq1_chars = 16, .seq2_chars = 16, .cons_first = 16,
		.cons_second = 24, .thin_actual = 16, .fixed_data = 16,
		.si_ncontextlocals = 2, .si_first_vars = 3,
		.first_nonstring = 128, .not_string_mask = 0xff80,
		.enc_mask = 8, .one_byte_tag = 8, .repr_mask = 7, .seq_tag = 0,
		.cons_tag = 1, .thin_tag = 5, .type_sfi = 262,
		.type_script = 167, .type_scope_info = 261,
		.sfi_function_data = 8, .bca_positions = 32, .bca_data = 54,
		.script_source = 8, .type_bytecode_array = 191,
		.type_byte_array = 190,
	};
	/* maps: SFI, one-byte seq string, Script, cons one-byte, two-byte
	 * seq string, BytecodeArray, ByteArray */
	static const unsigned maps[][2] = { { 1792, 262 }, { 1824, 8 },
					    { 1856, 167 }, { 1888, 9 },
					    { 1920, 0 }, { 1952, 191 },
					    { 1984, 190 } };
	static const char src[] = "// one\n// two\nfunction chain_60() {\n\treturn 1;\n}\n";
	static const char file[] = "/srv/split.js";
	/* positions: (offset 0, script offset 14: "function"), then
	 * (offset 4, statement, script offset 37: "return"); each a
	 * zigzag VLQ, positions as (offset + 1) << 1 */
	static const uint8_t table[] = { 0x01, (15 << 1) << 1, 4 << 1,
					 (23 << 1) << 1 };
	struct interp_frame f = { .kind = INTERP_V8, .n_payload = 2 };
	struct interp_symbol out;
	struct image im = { { 0 } };
	unsigned i;

	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		memcpy(im.b + maps[i][0] + 12, &maps[i][1], 2);
	put_ptr(&im, 24, 64);		/* JSFunction.shared */
	put_ptr(&im, 64, 1792);		/* SFI */
	put_ptr(&im, 64 + 16, 256);	/* its name: a cons string */
	put_ptr(&im, 64 + 32, 320);	/* its script */
	put_ptr(&im, 64 + 8, 1024);	/* its bytecode */
	put_ptr(&im, 256, 1888);
	put_u32(&im, 256 + 12, 8);
	put_ptr(&im, 256 + 16, 128);
	put_ptr(&im, 256 + 24, 192);
	put_str(&im, 128, 1824, "chain");
	put_str(&im, 192, 1824, "_60");
	put_ptr(&im, 320, 1856);	/* Script */
	put_ptr(&im, 320 + 16, 384);	/* name: two-byte */
	put_ptr(&im, 320 + 8, 512);	/* source */
	put_ptr(&im, 384, 1920);
	put_u32(&im, 384 + 12, sizeof(file) - 1);
	for (i = 0; i < sizeof(file) - 1; i++)
		im.b[384 + 16 + 2 * i] = (uint8_t)file[i];
	put_str(&im, 512, 1824, src);
	put_ptr(&im, 1024, 1952);	/* BytecodeArray */
	put_ptr(&im, 1024 + 32, 1152);	/* its positions */
	put_ptr(&im, 1152, 1984);
	memcpy(im.b + 1152 + 8, &(uint64_t){ (uint64_t)sizeof(table) << 32 }, 8);
	memcpy(im.b + 1152 + 16, table, sizeof(table));

	/* an interpreted frame at bytecode 5: the statement at 4 */
	f.payload[0] = 0x10000 + 1;
	f.payload[1] = 0x10000 + 1024 + 1;
	f.data = V8_FRAME_DATA(53 + 5, true);
	ASSERT_EQ(v8_frame_symbolize(image_read, &im, 1, &l, &f, &out, 1, NULL), 1, "named");
	ASSERT_STREQ(out.name, "chain_60", "the cons string's text");
	ASSERT_STREQ(out.file, "/srv/split.js", "the two-byte script name");
	ASSERT_EQ(out.line, 4, "the line of the statement it runs");
	/* a compiled frame: the function's own first line */
	f.payload[1] = 0;
	f.data = 0;
	ASSERT_EQ(v8_frame_symbolize(image_read, &im, 1, &l, &f, &out, 1, NULL), 1, "named");
	ASSERT_EQ(out.line, 3, "the function's first line");
	/* not a JSFunction: its shared is no SharedFunctionInfo */
	memcpy(im.b + 1792 + 12, &(uint16_t){ 7 }, 2);
	ASSERT_LT(v8_frame_symbolize(image_read, &im, 1, &l, &f, &out, 1, NULL), 0,
		   "refused");
}

/*
 * An optimized frame (node 20's layout; the image: ../fuzz/v8_image.h)
 * whose pc is in code where TurboFan inlined mid into outer and inner
 * into mid: the code found from the pc by its InstructionStream's
 * header, the position at the pc offset (inlining id 2), its
 * InliningPositions (2: inner, called in mid at id 1; 1: mid, called in
 * outer) and the literal array's SharedFunctionInfos (a weak reference):
 * inner, mid, outer innermost first, each with the line of its own
 * position, the script they share read once for the three lines.
 */
TEST(v8_inlined_chain_from_image)
{
	static const struct v8_layout l = {
		.map = 0, .map_type = 12, .fn_shared = 24, .sfi_name = 16,
		.sfi_script = 32, .script_name = 16, .str_length = 12,
		.seq1_chars = 16, .seq2_chars = 16, .fixed_data = 16,
		.first_nonstring = 128, .not_string_mask = 0xff80,
		.enc_mask = 8, .one_byte_tag = 8, .repr_mask = 7,
		.cons_tag = 1, .thin_tag = 5, .type_sfi = 262,
		.type_script = 167, .script_source = 8,
		.type_bytecode_array = 191, .type_byte_array = 190,
		.type_code = 245, .code_deopt = 16, .code_positions = 24,
		.code_instr_start = 40, .code_flags = 48,
		.code_instr_size = 56, .istream_header = 16,
		.type_istream = 252, .kind_mask = 15, .kind_baseline = 11,
		.deopt_count_idx = 1, .deopt_literals_idx = 2,
		.deopt_inlining_idx = 7,
	};
	struct interp_frame f = { .kind = INTERP_V8, .n_payload = 2 };
	struct interp_symbol out[4];
	struct v8_sym_stats st = { 0 };
	struct image im;

	_Static_assert(sizeof(im.b) == V8_IMAGE_SIZE, "the image's size");
	v8_inline_image(im.b);
	f.payload[0] = V8_IMAGE_BASE + 1;
	f.data = V8_FRAME_PC(V8_IMAGE_PC);
	ASSERT_EQ(v8_frame_symbolize(image_read, &im, 1, &l, &f, out, 4, &st), 3,
		  "three functions at the pc");
	ASSERT_EQ(st.source_reads, 1, "one read of the script's source");
	ASSERT_EQ(st.source_shared, 2, "two lines counted in it again");
	ASSERT_STREQ(out[0].name, "inner", "the innermost first");
	ASSERT_EQ(out[0].line, 5, "at its own position");
	ASSERT_STREQ(out[1].name, "mid", "its caller");
	ASSERT_EQ(out[1].line, 4, "at the call of inner");
	ASSERT_STREQ(out[2].name, "outer", "the frame's own function last");
	ASSERT_EQ(out[2].line, 2, "at the call of mid");
	ASSERT_STREQ(out[2].file, "/srv/inline.js", "its script");
	ASSERT_EQ(v8_frame_symbolize(image_read, &im, 1, &l, &f, out, 2, NULL), 2,
		  "cut to the innermost two");
	ASSERT_STREQ(out[1].name, "mid", "then mid");
	/* a pc past the code's end: the function alone */
	f.data = V8_FRAME_PC(V8_IMAGE_BASE + V8_IMAGE_SIZE + 64);
	ASSERT_EQ(v8_frame_symbolize(image_read, &im, 1, &l, &f, out, 4, NULL), 1,
		  "outer alone");
	ASSERT_STREQ(out[0].name, "outer", "by its JSFunction");
	/* ids that do not decrease: refused, the frame named alone */
	f.data = V8_FRAME_PC(V8_IMAGE_PC);
	v8i_inlining(im.b, 2, v8i_pos(6, 2), 0);
	ASSERT_EQ(v8_frame_symbolize(image_read, &im, 1, &l, &f, out, 4, NULL), 1,
		  "a loop in the inlining ids is not followed");
}
