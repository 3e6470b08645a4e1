/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Runtime detection on a file, as the interpreter manager runs it, for
 * the unit tests that check a module's record against an oracle.
 */
#ifndef EP_INTERP_FIXTURE_H
#define EP_INTERP_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

/* Detect runtime kind (INTERP_*) in the file at path, opened and closed
 * here.  Returns 0 with its record in *data (malloc'd; the caller frees
 * it, also after an error) and *len, detect's error (-EIO when the file
 * was cut short while it was read, as the manager says), or -errno when
 * the file does not open. */
int fix_detect(unsigned kind, const char *path, void **data, size_t *len);
/* The same in the file open as fd (path: its name, for the module). */
int fix_detect_fd(unsigned kind, const char *path, int fd, void **data,
		  size_t *len);
/* A stored record of runtime kind (data, len: fix_detect's) checked as
 * the daemon checks one from the store (interp_record_check) and copied
 * to info, the module's record struct (interp_<name>.h) of size bytes.
 * 0 or -EINVAL. */
int fix_record(unsigned kind, const void *data, size_t len, void *info,
	       size_t size);
/* For the tests that check an installed runtime's record against an
 * oracle: the test is skipped where the file at path is not readable
 * (how says how to get it); else fix_detect, asserted with found, and
 * fix_record into info of size bytes, asserted as "its record".  Whether
 * info holds the record. */
bool fix_installed_record(unsigned kind, const char *path, const char *how,
			  const char *found, void *info, size_t size);

/* A shell command: objdump of the first 64 bytes of the function at the
 * dynamic symbol sym (name@@... too) of file, for a python filter that
 * prints what the code says; binutils names the tools' prefix ("" or
 * "aarch64-linux-gnu-").  file and sym are string literals. */
#define DISASM_BY(binutils, file, sym)                                         \
	"a=$(" binutils "readelf -Ws --dyn-syms " file " | awk '$8 == \"" sym \
	"\" || $8 ~ /^" sym "@@/ {print $2; exit}'); " binutils               \
	"objdump -d --start-address=0x$a --stop-address=$((0x$a + 64)) " file

/* A file of Debian's arm64 packages, for the tests that parse one on any
 * host, into path: $env when set; else rel (its path in the package, as
 * "usr/bin/php8.2") when it is under the host's arm64 multiarch
 * directory (installed beside the amd64 libraries); else the copy make
 * deps unpacks into $EP_ARM64_DIR (default
 * /var/cache/ebpf-profiler-test/arm64, by its base name); else the arm64
 * guests' userland (tests/qemu/cache/arm64/rt-root, EP_ARM64_RUNTIMES=1).
 * Whether it is readable. */
bool fix_arm64_file(const char *env, const char *rel, char *path, size_t cap);

#endif
