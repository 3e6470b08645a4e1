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
#include "interp_v8.h"
#include "rep_fixture.h"
#include "test.h"

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
	const struct interp_module *m = interp_module(INTERP_V8);
	long long want[sizeof(names) / sizeof(names[0])];
	char cmd[4096], out[1024], *p;
	unsigned long long blob = 0;
	struct v8_record r;
	void *data = NULL;
	size_t len = 0, i, n;
	int fd = open(NODE, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		test_skip("%s: %s (make deps installs nodejs)", NODE,
			  strerror(errno));
		return;
	}
	ASSERT_OK(m->detect(NULL, NODE, fd, &data, &len), "V8 found in node");
	close(fd);
	if (!ASSERT_OK(v8_record_describe(data, len, &r), "its record"))
		goto out;
	n = (size_t)snprintf(cmd, sizeof(cmd), "set -- ");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "%s ", names[i]);
	snprintf(cmd + n, sizeof(cmd) - n, "; %s", INT_OF(NODE));
	if (!ASSERT_OK(fix_run(cmd, out, sizeof(out)), "nm and objdump"))
		goto out;
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
		  blob, want[16], r.off_fp_function, r.off_fp_context,
		  r.off_fp_bytecode_array, r.off_fp_bytecode_offset, r.missing);
	ASSERT_EQ(r.off_fp_function, want[0], "off_fp_function");
	ASSERT_EQ(r.off_fp_context, want[1], "off_fp_context");
	ASSERT_EQ(r.off_fp_bytecode_array, want[2], "off_fp_bytecode_array");
	ASSERT_EQ(r.off_fp_bytecode_offset, want[3], "off_fp_bytecode_offset");
	ASSERT_EQ(r.layout.fn_shared, want[4], "JSFunction::shared");
	ASSERT_EQ(r.layout.sfi_name, want[5], "SFI::name_or_scope_info");
	ASSERT_EQ(r.layout.sfi_script, want[6], "SFI::script_or_debug_info");
	ASSERT_EQ(r.layout.script_name, want[7], "Script::name");
	ASSERT_EQ(r.layout.map_type, want[8], "Map::instance_type");
	ASSERT_EQ(r.layout.map, want[9], "HeapObject::map (in .bss: 0)");
	ASSERT_EQ(r.layout.type_sfi, want[10], "SHARED_FUNCTION_INFO_TYPE");
	ASSERT_EQ(r.layout.type_script, want[11], "SCRIPT_TYPE");
	ASSERT_EQ(r.layout.type_scope_info, want[12], "SCOPE_INFO_TYPE");
	ASSERT_EQ(r.major, want[13], "V8 major");
	ASSERT_EQ(r.minor, want[14], "V8 minor");
	ASSERT_EQ(r.build, want[15], "V8 build");
	ASSERT_EQ(r.blob_lo, blob, "the embedded builtins start");
	ASSERT_EQ(r.blob_hi - r.blob_lo, want[16], "their size");
	ASSERT_EQ(r.missing, 3, "every field has its symbol in node 20 but "
		  "BytecodeArray::source_position_table (V8 11 names none), and "
		  "the TrustedByteArray type and BytecodeArray::wrapper (V8 12's)");
out:
	free(data);
}

/* A file without V8 is not one: libc. */
TEST(v8_detect_not_in_libc)
{
	const struct interp_module *m = interp_module(INTERP_V8);
	void *data = NULL;
	size_t len = 0;
	int fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		test_skip("no libc: %s", strerror(errno));
		return;
	}
	ASSERT_EQ(m->detect(NULL, "libc.so.6", fd, &data, &len), -ENOENT,
		  "no V8 in libc");
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
	const struct interp_module *m = interp_module(INTERP_V8);
	unsigned long long lo = 0, size = 0;
	struct v8_record r;
	char out[256];
	void *data = NULL;
	size_t len = 0;
	int fd = open(LIBNODE, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		test_skip("%s: %s (make deps unpacks it)", LIBNODE, strerror(errno));
		return;
	}
	ASSERT_OK(m->detect(NULL, LIBNODE, fd, &data, &len), "V8 found in libnode");
	close(fd);
	if (!ASSERT_OK(v8_record_describe(data, len, &r), "its record"))
		goto out;
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
	ASSERT_EQ(r.off_fp_function, -16, "off_fp_function");
out:
	free(data);
}
