#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The kernel matrix: every BPF program loaded, and a profile taken, on each
# of Debian 12's kernels booted under qemu, and on the host kernel.
#
#   tests/qemu/run-matrix.sh [ROW...]      (make test-qemu KERNELS="ROW...")
#
# Rows: 6.1-generic 6.1-cloud 6.1-rt 6.12-generic 6.12-cloud 6.12-rt
# 6.1-cloud-arm64 6.12-cloud-arm64 host (default: all of them), and, only
# when named, 6.1-generic-arm64 6.12-generic-arm64.  The -arm64 rows boot
# Debian's arm64 kernels under qemu-system-aarch64 (always TCG) with the
# cross-built daemon (make ARCH=arm64); without it they are SKIP.
# Prints one line per row,
#   PASS|FAIL|SKIP <row> <release> programs=N samples=N python=C/T split=H/M/L gap=G/A
#                  kept=1/M/S startup_ms=verified/kept (Ts)
# then a summary; exits 1 when a row failed, 2 on a usage or setup error.
# A failing row's guest output (the verifier log, when a program was
# rejected) is printed under its line: in full when one row was asked for
# or V=1, else its last lines and the path of the whole log.
#
# Environment:
#   EP_QEMU_CACHE     cache of kernels, busybox, the arm64 userland and logs
#                     (tests/qemu/cache)
#   EP_QEMU_TIMEOUT   seconds a guest may run (default 300)
#   EP_QEMU_ACCEL     tcg or kvm (default: kvm when the CPU has vmx/svm and
#                     /dev/kvm is writable, else tcg)
#   EP_BPF_LOG_LEVEL  passed as -bpf-log-level to the profiler
#   EP_DURATION       seconds of sampling in each row (default 5)
#   EP_HZ             samples per second and CPU (default 499)
#   V=1               progress on stderr, full logs of failed rows
#   EP_DUMP_FOLDED    a comm: the guest prints that comm's folded stacks
#                     into the row's log (lines "FOLDED <stack> <count>")
#   EP_BIN, EP_WORKLOAD, EP_SKEL   the profiler, split-nofp-pie and the skeleton
#                     header (default: the ones the top Makefile builds)
#   EP_PYTHON         the CPython that runs pyburn.py in every x86 row, staged
#                     in the guests with the few stdlib files it needs to
#                     start (default /usr/bin/python3.11; empty: no Python,
#                     in the arm64 rows too, which run Debian's arm64
#                     python3.11, unpacked from its packages)
#   EP_BIN_ARM64, EP_SKEL_ARM64   the cross-built profiler and its skeleton
#                     header (default: build-arm64/, from make ARCH=arm64)
#   EP_WORKLOAD_ARM64 split-nofp-pie for arm64 (default: build-arm64's, else
#                     cross-built into the cache from tests/workloads)
#   EP_ARM64_RUNTIMES 1: the arm64 rows also run Perl, PHP (twice: also under
#                     the tracing JIT) and Ruby (Debian's
#                     arm64 perl, php8.2, ruby3.1, unpacked into
#                     cache/arm64/rt-root) on tests/workloads/*/split.*,
#                     profiled by the same daemon for 20 s (EP_DURATION), in
#                     their own initramfs and 1 GiB guests.  Opt-in: about
#                     40 s more a row, which CI has no room for.
#   EP_ARM64_JVM      1: the arm64 rows also run HotSpot (Debian's arm64
#                     openjdk-17-jre-headless, unpacked into
#                     cache/arm64/jvm-root) on tests/workloads/java/Split.java
#                     (compiled here by EP_JAVAC), twice: -Xint and default
#                     flags, profiled with the rest for 20 s, in an
#                     initramfs of their own (207 MB, 260 MB with the
#                     runtimes) and 2 GiB guests.
#                     Opt-in: a JVM's start under TCG takes a minute.
#   EP_JAVAC          the javac that compiles Split.java for the arm64 JVM
#                     (default: /usr/lib/jvm/java-17-openjdk-amd64/bin/javac)
#
# See tests/qemu/README.md for the costs and the traps.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${EP_QEMU_CACHE:-$here/cache}
bin=${EP_BIN:-$top/ebpf-profiler}
workload=${EP_WORKLOAD:-$top/build/workloads/split-nofp-pie}
skel=${EP_SKEL:-$top/build/skel/profiler.skel.h}
python=${EP_PYTHON-/usr/bin/python3.11}
timeout_s=${EP_QEMU_TIMEOUT:-300}
verbose=${V:-0}
apt_opts=(-o DPkg::Lock::Timeout=600 -q)

bin_arm64=${EP_BIN_ARM64:-$top/build-arm64/ebpf-profiler}
skel_arm64=${EP_SKEL_ARM64:-$top/build-arm64/skel/profiler.skel.h}
workload_arm64=${EP_WORKLOAD_ARM64:-$top/build-arm64/workloads/split-nofp-pie}
runtimes_arm64=${EP_ARM64_RUNTIMES:-0}
jvm_arm64=${EP_ARM64_JVM:-0}
javac=${EP_JAVAC:-/usr/lib/jvm/java-17-openjdk-amd64/bin/javac}

ALL_ROWS="6.1-generic 6.1-cloud 6.1-rt 6.12-generic 6.12-cloud 6.12-rt"
ALL_ROWS="$ALL_ROWS 6.1-cloud-arm64 6.12-cloud-arm64 host"
# 60-93 MB downloads and slower boots than the cloud builds for the same
# verifier: run only when named
MORE_ROWS="6.1-generic-arm64 6.12-generic-arm64"

# The metapackage that names each row's current kernel.  The concrete
# package (its ABI number) changes with every security update, so it is
# resolved through apt-cache each run, never written down.
metapackage() {
	case $1 in
	6.1-generic) echo linux-image-amd64 ;;
	6.1-cloud) echo linux-image-cloud-amd64 ;;
	6.1-rt) echo linux-image-rt-amd64 ;;
	6.12-generic) echo linux-image-6.12-amd64 ;;
	6.12-cloud) echo linux-image-6.12-cloud-amd64 ;;
	6.12-rt) echo linux-image-6.12-rt-amd64 ;;
	6.1-generic-arm64) echo linux-image-arm64:arm64 ;;
	6.1-cloud-arm64) echo linux-image-cloud-arm64:arm64 ;;
	6.12-generic-arm64) echo linux-image-6.12-arm64:arm64 ;;
	6.12-cloud-arm64) echo linux-image-6.12-cloud-arm64:arm64 ;;
	*) return 1 ;;
	esac
}

usage() {
	sed -n '/^# The kernel matrix/,/^# See tests/p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

note() {
	[ "$verbose" = 1 ] && echo "  .. $*" >&2
	return 0
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# ---- arguments ---------------------------------------------------------

rows=()
for a in "$@"; do
	case $a in
	-h | --help) usage ;;
	all) read -ra rows <<<"$ALL_ROWS" ;;
	host) rows+=("$a") ;;
	*)
		if ! metapackage "$a" >/dev/null; then
			echo "run-matrix: unknown row '$a' (rows: $ALL_ROWS $MORE_ROWS)" >&2
			exit 2
		fi
		rows+=("$a")
		;;
	esac
done
[ ${#rows[@]} -eq 0 ] && read -ra rows <<<"$ALL_ROWS"
# one row asked for: show its whole failure output
[ ${#rows[@]} -eq 1 ] && verbose_fail=1 || verbose_fail=$verbose

# row_arch ROW: the guest's architecture, as the kernel names it
row_arch() {
	case $1 in
	*-arm64) echo arm64 ;;
	*) echo x86_64 ;;
	esac
}

# count_programs SKEL: the programs of the skeleton's "progs" struct, which
# the daemon must load.
count_programs() {
	awk '
		/^\tstruct \{$/ { inside = 1; n = 0; next }
		inside && /struct bpf_program \*/ { n++ }
		inside && /^\t\} progs;$/ { print n; exit }
		inside && /^\t\}/ { inside = 0 }
	' "$1" 2>/dev/null
}

# The x86 build is needed only when an x86 row (or the host) was asked for:
# the arm64 rows check their own build when they run.
x86_rows=0 expect=""
for row in "${rows[@]}"; do
	[ "$(row_arch "$row")" = x86_64 ] && x86_rows=1
done
if [ "$x86_rows" = 1 ]; then
	for f in "$bin" "$workload"; do
		if [ ! -x "$f" ]; then
			echo "run-matrix: $f is missing: run 'make ebpf-profiler workloads'" >&2
			exit 2
		fi
	done
	if [ -n "$python" ] && [ ! -x "$python" ]; then
		echo "run-matrix: $python is missing (EP_PYTHON= leaves Python out)" >&2
		exit 2
	fi
	expect=$(count_programs "$skel")
	if [ -z "$expect" ] || [ "$expect" -eq 0 ]; then
		echo "run-matrix: cannot count the programs in $skel: run 'make'" >&2
		exit 2
	fi
fi

mkdir -p "$cache/kernels" "$cache/logs" || exit 2
# one run at a time per cache: the initramfs and the logs are shared
exec 9>"$cache/.lock"
if ! flock -n 9; then
	echo "run-matrix: waiting for another run that uses $cache" >&2
	flock 9
fi

# ---- packages ------------------------------------------------------------

apt_updated=0

# Refresh the package lists once per run, when a download failed: the
# archive drops a kernel's previous ABI when a security update lands.
apt_update() {
	[ "$apt_updated" = 1 ] && return 1
	apt_updated=1
	[ "$(id -u)" = 0 ] || return 1
	note "apt-get update"
	apt-get "${apt_opts[@]}" update >"$cache/logs/apt-update.log" 2>&1
}

# resolve METAPACKAGE: print the concrete linux-image package it depends on.
resolve() {
	apt-cache depends --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances "$1" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }'
}

# download DIR PKG...: apt-get download into DIR (PKG:arm64 for arm64's).
download() {
	local dir=$1

	shift
	(cd "$dir" && apt-get "${apt_opts[@]}" download "$@") \
		>"$dir/apt.log" 2>&1
}

# Decompress a bzImage's payload into an ELF vmlinux.  The setup header
# says where the payload is (boot protocol 2.08+); its magic says which
# tool it needs.  The payload ends with its uncompressed size, which some
# tools call trailing garbage: their status is ignored and the result is
# checked instead.  qemu boots the vmlinux through its PVH entry
# (CONFIG_PVH), which skips the guest's own decompression: twice as fast
# for the XZ kernels under TCG.
extract_vmlinux() {
	local img=$1 out=$2 sects pm off len start magic tool

	sects=$(od -An -tu1 -j $((0x1f1)) -N1 "$img" | tr -d ' ')
	[ "$sects" = 0 ] && sects=4
	pm=$(((sects + 1) * 512))
	off=$(od -An -tu4 -j $((0x248)) -N4 "$img" | tr -d ' ')
	len=$(od -An -tu4 -j $((0x24c)) -N4 "$img" | tr -d ' ')
	start=$((pm + off))
	magic=$(od -An -tx1 -j "$start" -N6 "$img" | tr -d ' \n')
	case $magic in
	1f8b*) tool="gzip -dc" ;;
	fd377a585a00) tool="xz -dc" ;;
	28b52ffd*) tool="zstd -dcq" ;;
	02214c18*) tool="lz4 -dc" ;;
	425a68*) tool="bzip2 -dc" ;;
	5d0000*) tool="xz -dc --format=lzma" ;;
	*) return 1 ;;
	esac
	tail -c +$((start + 1)) "$img" | head -c "$len" | $tool >"$out" 2>/dev/null
	# an ELF with the PVH entry note (Xen note type 18, PHYS32_ENTRY)
	[ "$(head -c 4 "$out" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] &&
		readelf -n "$out" 2>/dev/null | grep '^  Xen' | grep -q '(0x00000012)'
}

# arm64_image VMLINUZ OUT: the raw arm64 Image qemu loads.  Debian's arm64
# vmlinuz is already one (its header's magic "ARM\x64" at 0x38); a gzip'd
# one is inflated here rather than by qemu at every boot.
arm64_image() {
	local img=$1 out=$2

	case $(head -c 2 "$img" | od -An -tx1 | tr -d ' \n') in
	1f8b) gzip -dc "$img" >"$out" || return 1 ;;
	*) cp "$img" "$out" || return 1 ;;
	esac
	[ "$(od -An -tx1 -j $((0x38)) -N4 "$out" | tr -d ' \n')" = 41524d64 ]
}

# fetch_kernel ROW PKG: download PKG and extract its kernel into
# $cache/kernels/ROW/PKG (kept between runs; other versions of the row are
# removed; an arm64 PKG is named PKG:arm64, its directory PKG).  Returns 1
# when the archive does not serve PKG.
fetch_kernel() {
	local row=$1 pkg=$2 dir=$cache/kernels/$1/${2%:*} tmp img

	tmp=$(mktemp -d "$cache/kernels/.fetch.XXXXXX") || return 2
	note "$row: apt-get download $pkg"
	if ! download "$tmp" "$pkg"; then
		cp "$tmp/apt.log" "$cache/logs/$row.apt.log"
		rm -rf "$tmp"
		return 1
	fi
	note "$row: extracting the kernel"
	if ! dpkg-deb --fsys-tarfile "$tmp"/*.deb |
		tar -x -C "$tmp" --wildcards './boot/vmlinuz-*' './boot/config-*'; then
		rm -rf "$tmp"
		return 2
	fi
	for img in "$tmp"/boot/vmlinuz-*; do break; done
	if [ ! -f "$img" ]; then
		rm -rf "$tmp"
		return 2
	fi
	mkdir -p "$tmp/k"
	basename "$img" | sed 's/^vmlinuz-//' >"$tmp/k/release"
	cp "$tmp"/boot/config-* "$tmp/k/config" 2>/dev/null
	if [ "$(row_arch "$row")" = arm64 ]; then
		if ! arm64_image "$img" "$tmp/k/Image"; then
			rm -rf "$tmp"
			return 2
		fi
	elif extract_vmlinux "$img" "$tmp/k/vmlinux"; then
		note "$row: booting the uncompressed vmlinux (PVH)"
	else
		# no PVH entry, or an unknown compression: boot the bzImage
		rm -f "$tmp/k/vmlinux"
		mv "$img" "$tmp/k/vmlinuz"
	fi
	rm -rf "$cache/kernels/$row"
	mkdir -p "$cache/kernels/$row"
	mv "$tmp/k" "$dir" && rm -rf "$tmp"
}

# ---- the initramfs ----------------------------------------------------------

# One initramfs per architecture, built once a run: initrd.cpio for the
# x86 guests, initrd-arm64.cpio for the arm64 ones.
initrd="" # the one the current row boots
declare -A initrd_built=()
arm64_root=$cache/arm64/root

# busybox from busybox-static, unpacked, not installed (it conflicts with
# the busybox package).
get_busybox() {
	local bb=$cache/busybox/busybox tmp

	[ -x "$bb" ] && return 0
	tmp=$(mktemp -d "$cache/.busybox.XXXXXX") || return 1
	note "apt-get download busybox-static"
	if ! download "$tmp" busybox-static && ! { apt_update && download "$tmp" busybox-static; }; then
		cat "$tmp/apt.log" >&2
		rm -rf "$tmp"
		return 1
	fi
	mkdir -p "$cache/busybox"
	dpkg-deb --fsys-tarfile "$tmp"/busybox-static_*.deb |
		tar -xO ./bin/busybox >"$bb.tmp" && chmod 755 "$bb.tmp" &&
		mv "$bb.tmp" "$bb"
	rm -rf "$tmp"
	[ -x "$bb" ]
}

# What the arm64 guests run that cannot be installed beside the amd64
# packages, from Debian's arm64 packages, unpacked (never installed) into
# $arm64_root and kept between runs: busybox-static, the python3.11 binary
# (python3.11-minimal) and the stdlib files it reads to start
# (libpython3.11-minimal).  The libraries they and the daemon link come
# from this machine's arm64 multiarch directories (make deps).
ARM64_ROOT_PKGS="busybox-static python3.11-minimal libpython3.11-minimal"
get_arm64_root() {
	unpack_arm64 "$arm64_root" $ARM64_ROOT_PKGS
}

# unpack_arm64 DIR PKG...: the arm64 PKGs downloaded and unpacked into DIR,
# once (DIR/.packages lists their versions); again when a PKG is not
# among them (a list that grew since).
unpack_arm64() {
	local dir=$1 tmp deb p pkgs=() have=1

	shift
	for p in "$@"; do
		grep -qs "^$p	" "$dir/.packages" || have=0
	done
	[ "$have" = 1 ] && return 0
	for p in "$@"; do
		pkgs+=("$p:arm64")
	done
	tmp=$(mktemp -d "$cache/.arm64root.XXXXXX") || return 1
	note "apt-get download ${pkgs[*]}"
	if ! download "$tmp" "${pkgs[@]}" && ! { apt_update && download "$tmp" "${pkgs[@]}"; }; then
		cat "$tmp/apt.log" >&2
		rm -rf "$tmp"
		return 1
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	for deb in "$tmp"/*.deb; do
		if ! dpkg-deb -x "$deb" "$dir"; then
			rm -rf "$tmp" "$dir"
			return 1
		fi
	done
	# which versions the guests run
	for deb in "$tmp"/*.deb; do
		dpkg-deb --show "$deb"
	done >"$dir/.packages"
	rm -rf "$tmp"
}

# The runtimes of EP_ARM64_RUNTIMES=1: perl-base (perl and the two pragmas
# split.pl uses), ruby3.1 and libruby3.1 (libruby, the encoding tables it
# loads at start), php8.2-cli and the libraries it links that this
# machine's arm64 multiarch directories lack (libxml2 brings ICU, 34 MB),
# php8.2-opcache (opcache.so: the tracing JIT of the php-jit run).
# Kept in cache/arm64/rt-root (89 MB unpacked), never committed.
ARM64_RT_PKGS="perl-base ruby3.1 libruby3.1 php8.2-cli php8.2-opcache libxml2 libicu72 libpcre2-8-0 libsodium23 libargon2-1"
rt_root=$cache/arm64/rt-root
ARM64_RT_FILES="usr/bin/perl usr/bin/php8.2 usr/bin/ruby3.1
usr/lib/php/20220829/opcache.so
usr/lib/aarch64-linux-gnu/perl-base/strict.pm
usr/lib/aarch64-linux-gnu/perl-base/warnings.pm
usr/lib/aarch64-linux-gnu/ruby/3.1.0/enc/encdb.so
usr/lib/aarch64-linux-gnu/ruby/3.1.0/enc/trans/transdb.so"

# stage_libs STAGE FILE...: what the FILEs need from this machine's
# multiarch directories (ci/elf-libs.sh), copied into STAGE at the same
# paths unless there already.  The libraries elf-libs.sh cannot find
# there are the packages' own, staged by the caller.
stage_libs() {
	local stage=$1 f lib

	shift
	for f in "$@"; do
		for lib in $("$top/ci/elf-libs.sh" "$f" 2>/dev/null); do
			[ -e "$stage$lib" ] && continue
			mkdir -p "$stage$(dirname "$lib")"
			cp -L "$lib" "$stage$lib" || return 1
		done
	done
}

# stage_runtimes STAGE: with EP_ARM64_RUNTIMES=1, the interpreters and the
# files they read at start at their own paths, the packages' libraries,
# what those need from this machine (ci/elf-libs.sh; the libraries it
# cannot find are the packages' own), and the split workloads in /ep/rt.
stage_runtimes() {
	local stage=$1 f libdir=usr/lib/aarch64-linux-gnu

	[ "$runtimes_arm64" = 1 ] || return 0
	unpack_arm64 "$rt_root" $ARM64_RT_PKGS || return 1
	mkdir -p "$stage/ep/rt" "$stage/$libdir" || return 1
	for f in $ARM64_RT_FILES; do
		mkdir -p "$stage/$(dirname "$f")"
		cp -L "$rt_root/$f" "$stage/$f" || return 1
	done
	# -a: the libraries' symlinks stay links (ICU's data is 30 MB)
	cp -a "$rt_root/$libdir"/*.so.* "$stage/$libdir/" || return 1
	for f in $ARM64_RT_FILES; do
		stage_libs "$stage" "$rt_root/$f" || return 1
	done
	stage_libs "$stage" "$rt_root/$libdir"/*.so.* || return 1
	ln -s ruby3.1 "$stage/usr/bin/ruby-threads" || return 1
	# the tracing JIT's run under a comm of its own
	ln -s php8.2 "$stage/usr/bin/php-jit" || return 1
	for f in perl/split.pl php/split.php ruby/threads.rb; do
		cp "$top/tests/workloads/$f" "$stage/ep/rt/" || return 1
	done
	# split.rb spins 12/6/2 ms of CPU a round, checking the clock every
	# 2000 additions: under TCG those take about a millisecond, which
	# overshoots each spin by as much and made the split 55/31/14.  Five
	# times longer spins (60/30/10 ms, as split.pl and split.php), on the
	# same lines.
	sed 's/spin(0\.012)/spin(0.060)/; s/spin(0\.006)/spin(0.030)/; s/spin(0\.002)/spin(0.010)/' \
		"$top/tests/workloads/ruby/split.rb" >"$stage/ep/rt/split.rb" || return 1
	grep -q 'spin(0.010)' "$stage/ep/rt/split.rb" || return 1
}

# The JVM of EP_ARM64_JVM=1: Debian's arm64 OpenJDK 17 (the version the
# x86 tests run), unpacked into $jvm_root (186 MB, never committed).
# Staged at its own path: the launcher (and a link to it, java-xint, so
# that the -Xint JVM's threads have a comm of their own), every native
# library of lib/, libjvm.so with its CDS archive (classes.jsa: without
# it the JVM's start under TCG takes minutes), the module image (129 MB:
# a smaller one needs jlink of this very build, which the JRE lacks),
# jvm.cfg and conf/ (links into /etc/java-17-openjdk, staged too), and
# what those need from this machine's multiarch directories.
# tests/workloads/java/Split.java and tests/qemu/JvmReady.java are
# compiled here (the bytecode runs on any JVM 17) into /ep/jvm.
ARM64_JVM_PKGS="openjdk-17-jre-headless"
jvm_root=$cache/arm64/jvm-root
JVM_HOME=usr/lib/jvm/java-17-openjdk-arm64

stage_jvm() {
	local stage=$1 home=$JVM_HOME

	[ "$jvm_arm64" = 1 ] || return 0
	unpack_arm64 "$jvm_root" $ARM64_JVM_PKGS || return 1
	mkdir -p "$stage/$home/bin" "$stage/$home/lib/server" "$stage/etc" \
		"$stage/ep/jvm" || return 1
	cp "$jvm_root/$home/bin/java" "$stage/$home/bin/" || return 1
	ln -s java "$stage/$home/bin/java-xint" || return 1
	cp "$jvm_root/$home/lib/"*.so "$jvm_root/$home/lib/modules" \
		"$jvm_root/$home/lib/tzdb.dat" "$stage/$home/lib/" || return 1
	cp -a "$jvm_root/$home/lib/jvm.cfg" "$jvm_root/$home/conf" \
		"$stage/$home/" || return 1
	mv "$stage/$home/jvm.cfg" "$stage/$home/lib/" || return 1
	cp -a "$jvm_root/etc/java-17-openjdk" "$stage/etc/" || return 1
	cp "$jvm_root/$home/lib/server/libjvm.so" \
		"$jvm_root/$home/lib/server/classes.jsa" \
		"$stage/$home/lib/server/" || return 1
	# the JRE's own libraries (libjli, libjvm...) are not in the
	# multiarch directories: staged above
	stage_libs "$stage" "$stage/$home/bin/java" "$stage/$home/lib/"*.so \
		"$stage/$home/lib/server/libjvm.so" || return 1
	# Split's rounds are 6/3/1 ms of CPU: under TCG one turn of a
	# leaf's loop (work() and the clock read, interpreted) takes about
	# a millisecond, by which every phase overshoots, the shortest most
	# (-Xint measured 38/31/23).  Ten times longer (60/30/10 ms, as
	# split.pl's), on the same lines.
	mkdir -p "$stage/ep/jvm/src" || return 1
	sed 's/(6000000 \* f)/(60000000 * f)/; s/(3000000 \* f)/(30000000 * f)/; s/(1000000 \* f)/(10000000 * f)/' \
		"$top/tests/workloads/java/Split.java" >"$stage/ep/jvm/src/Split.java" || return 1
	[ "$(grep -c '0000000 \* f' "$stage/ep/jvm/src/Split.java")" = 3 ] || return 1
	"$javac" -nowarn -d "$stage/ep/jvm" "$here/JvmReady.java" \
		"$stage/ep/jvm/src/Split.java" >"$cache/logs/javac.log" 2>&1 || return 1
	rm -rf "$stage/ep/jvm/src"
}

# arm64_workload: print the arm64 split-nofp-pie, the cross build's or,
# without one, built into the cache by workloads.mk's own rule with the
# cross compiler (the same flags as the x86 rows' workload).
arm64_workload() {
	local w=$cache/arm64/workloads/split-nofp-pie

	if [ -n "${EP_WORKLOAD_ARM64:-}" ] || [ -x "$workload_arm64" ]; then
		echo "$workload_arm64"
		return 0
	fi
	command -v aarch64-linux-gnu-gcc >/dev/null || return 1
	make -s --no-print-directory -C "$top" -f tests/workloads/workloads.mk \
		O="$cache/arm64" CC=aarch64-linux-gnu-gcc "$w" >&2 || return 1
	echo "$w"
}

# needed_libs ARCH FILE: the shared libraries and the loader FILE needs,
# one path a line, the same here and in the guest.  x86: what ldd names
# (nothing for a static binary).  arm64, which ldd cannot run:
# ci/elf-libs.sh, which follows DT_NEEDED through this machine's arm64
# multiarch directories (make deps installs what the daemon and Debian's
# python3.11 link).
needed_libs() {
	if [ "$1" = arm64 ]; then
		"$top/ci/elf-libs.sh" "$2"
		return
	fi
	ldd "$2" 2>/dev/null | awk '
		$2 == "=>" && $3 ~ /^\// { print $3; next }
		$1 ~ /^\// { print $1 }'
}

# copy_elf ARCH FILE STAGE DEST: FILE to STAGE/DEST with the shared
# libraries and the dynamic loader it needs (needed_libs).
copy_elf() {
	local arch=$1 f=$2 stage=$3 dest=$4 libs lib

	mkdir -p "$stage/$(dirname "$dest")"
	cp -L "$f" "$stage/$dest" || return 1
	libs=$(needed_libs "$arch" "$f") || return 1
	for lib in $libs; do
		[ -e "$stage$lib" ] && continue
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib" || return 1
	done
}

# stage_python ARCH STAGE: the interpreter and pyburn.py.  The interpreter
# at its own path, so that it finds its stdlib where it was built to look
# (no PYTHONHOME: check.sh runs it with -E, which ignores PYTHON*
# variables), and of the stdlib only what "python -S -E pyburn.py" reads
# from files: the encodings package's codec search and UTF-8 codec (the
# guest's C locale turns on UTF-8 mode).  codecs, io, abc, os and the rest
# of the start-up modules are frozen into the binary; sys and time, all
# pyburn.py imports, are built in.  os.py and an empty lib-dynload/ are the
# landmarks by which the interpreter recognises its prefix and
# exec_prefix: without them it warns and guesses.  62 KB of stdlib next to
# a 6.8 MB binary.  arm64: Debian's arm64 python3.11 from $arm64_root,
# whose stdlib is where it was built to look, /usr/lib/python3.11.
stage_python() {
	local arch=$1 stage=$2 src=$python dest=$python lib libsrc f

	[ -n "$python" ] || return 0
	if [ "$arch" = arm64 ]; then
		dest=/usr/bin/python3.11 lib=/usr/lib/python3.11
		src=$arm64_root$dest libsrc=$arm64_root$lib
	else
		lib=$("$python" -S -E -c 'import encodings, os.path
print(os.path.dirname(encodings.__path__[0]))') || return 1
		libsrc=$lib
	fi
	copy_elf "$arch" "$src" "$stage" "$dest" || return 1
	mkdir -p "$stage$lib/encodings" "$stage$lib/lib-dynload" || return 1
	for f in encodings/__init__.py encodings/aliases.py encodings/utf_8.py os.py; do
		cp "$libsrc/$f" "$stage$lib/$f" || return 1
	done
	cp "$here/pyburn.py" "$stage/ep/pyburn.py"
	echo "$dest"
}

# build_initrd ARCH: build the initramfs all guests of ARCH boot, and set
# initrd to it: busybox, the profiler and the workload with their
# libraries, the Python interpreter and its workload, check.sh, its
# settings and /init.  An uncompressed cpio: the guest copies it instead
# of inflating it, which under TCG is the faster of the two.
build_initrd() {
	local arch=$1 stage=$cache/initrd.d bb=$cache/busybox/busybox
	local b=$bin w=$workload n=$expect py rt=0 jvm=0 dur=${EP_DURATION:-5}
	local rtlist=""

	initrd=$cache/initrd.cpio
	[ "$arch" = arm64 ] && initrd=$cache/initrd-arm64.cpio
	[ "$arch" = arm64 ] && [ "$runtimes_arm64" = 1 ] &&
		initrd=$cache/initrd-arm64-rt.cpio rt=1
	[ "$arch" = arm64 ] && [ "$jvm_arm64" = 1 ] &&
		initrd=${initrd%.cpio}-jvm.cpio jvm=1
	[ "${initrd_built[$arch]:-0}" = 1 ] && return 0
	if [ "$arch" = arm64 ]; then
		get_arm64_root || return 1
		bb=$arm64_root/bin/busybox b=$bin_arm64 n=$expect_arm64
		w=$(arm64_workload) || return 1
	else
		get_busybox || return 1
	fi
	note "building the $arch initramfs"
	rm -rf "$stage"
	mkdir -p "$stage"/{bin,dev,proc,sys,tmp,ep} || return 1
	cp "$bb" "$stage/bin/busybox"
	cp "$here/init" "$stage/init"
	cp "$here/check.sh" "$stage/ep/check.sh"
	chmod 755 "$stage/init" "$stage/ep/check.sh"
	copy_elf "$arch" "$b" "$stage" /ep/ebpf-profiler || return 1
	copy_elf "$arch" "$w" "$stage" /ep/split-nofp-pie || return 1
	py=$(stage_python "$arch" "$stage") || return 1
	if [ "$rt" = 1 ]; then
		stage_runtimes "$stage" || return 1
		dur=${EP_DURATION:-20}
		rtlist="perl php php-jit ruby ruby-threads"
	fi
	if [ "$jvm" = 1 ]; then
		stage_jvm "$stage" || return 1
		dur=${EP_DURATION:-20}
		rtlist="$rtlist java-xint java"
	fi
	cat >"$stage/ep/check.env" <<-EOF
		EP_BIN=/ep/ebpf-profiler
		EP_WORKLOAD=/ep/split-nofp-pie
		EP_PYTHON='$py'
		EP_PYSCRIPT=/ep/pyburn.py
		EP_WORKDIR=/tmp/ep-check
		EP_EXPECT_PROGRAMS=$n
		EP_DURATION='$dur'
		EP_HZ='${EP_HZ:-499}'
		EP_PROFILER_ARGS='${EP_BPF_LOG_LEVEL:+-bpf-log-level $EP_BPF_LOG_LEVEL}'
		EP_DUMP_FOLDED='${EP_DUMP_FOLDED:-}'
	EOF
	[ -n "$rtlist" ] && echo "EP_RUNTIMES='${rtlist# }'" >>"$stage/ep/check.env"
	[ "$jvm" = 1 ] && cat >>"$stage/ep/check.env" <<-EOF
		EP_JAVA=/$JVM_HOME/bin/java
		EP_JAVA_XINT=/$JVM_HOME/bin/java-xint
		EP_JVMDIR=/ep/jvm
	EOF
	[ "$rt" = 1 ] && cat >>"$stage/ep/check.env" <<-EOF
		EP_PERL=/usr/bin/perl
		EP_PHP=/usr/bin/php8.2
		EP_PHP_JIT=/usr/bin/php-jit
		EP_RUBY=/usr/bin/ruby3.1
		EP_RUBY_THREADS=/usr/bin/ruby-threads
		EP_RTDIR=/ep/rt
	EOF
	# the kernel opens /dev/console for init before devtmpfs is mounted
	[ "$(id -u)" = 0 ] && mknod "$stage/dev/console" c 5 1
	(cd "$stage" && find . | cpio -o -H newc -R 0:0 --quiet) >"$initrd.tmp" &&
		mv "$initrd.tmp" "$initrd" || return 1
	rm -rf "$stage"
	initrd_built[$arch]=1
}

# ---- one row -----------------------------------------------------------------

if grep -qwE 'vmx|svm' /proc/cpuinfo && [ -w /dev/kvm ]; then
	accel=${EP_QEMU_ACCEL:-kvm}
else
	accel=${EP_QEMU_ACCEL:-tcg}
fi
case $accel in
kvm) accel_args=(-accel kvm -cpu host) ;;
tcg) accel_args=(-accel tcg -cpu max) ;;
*)
	echo "run-matrix: EP_QEMU_ACCEL must be kvm or tcg" >&2
	exit 2
	;;
esac

# The arm64 guests: qemu's "virt" board with a Cortex-A72 (ARMv8.0, the
# CPU otel's matrix uses for kernels newer than its qemu), always under TCG
# here (an x86 host).  "-cpu max" boots both kernels too, slower: it
# emulates pointer authentication, which Debian 12's arm64 userland is not
# built to use.
arm64_qemu=(qemu-system-aarch64 -machine virt -cpu cortex-a72 -accel tcg)

# Set by each row: its status, release, the RESULT line and its log.
status="" release="" result="" log=""
expect_arm64=""

# boot ROW KERNEL: run the check in a guest; sets result.
boot() {
	local row=$1 kernel=$2 rc qemu=(qemu-system-x86_64 "${accel_args[@]}") tty=ttyS0
	local mem=512M

	if [ "$(row_arch "$row")" = arm64 ]; then
		qemu=("${arm64_qemu[@]}") tty=ttyAMA0
		# the runtimes' initramfs is 90 MB, held twice while unpacked
		[ "$runtimes_arm64" = 1 ] && mem=1G
		# the JVM's initramfs is 207-260 MB, held twice while unpacked,
		# then two JVMs
		[ "$jvm_arm64" = 1 ] && mem=2G
	fi
	log=$cache/logs/$row.log
	note "$row: booting $(basename "$kernel") (${qemu[*]})"
	timeout "$timeout_s" "${qemu[@]}" -smp 2 -m "$mem" \
		-nodefaults -display none -no-reboot -serial "file:$log" \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=$tty panic=-1 oops=panic quiet" \
		</dev/null >"$cache/logs/$row.qemu.log" 2>&1
	rc=$?
	result=$(tr -d '\r' <"$log" | grep -a '^RESULT ' | tail -n 1)
	if [ -z "$result" ]; then
		[ $rc = 124 ] && result="RESULT FAIL reason=timeout-${timeout_s}s" ||
			result="RESULT FAIL reason=no-result-qemu-exit-$rc"
		cat "$cache/logs/$row.qemu.log" >>"$log"
	fi
}

# arm64_missing: why the arm64 rows cannot run (a SKIP reason), or nothing.
# Checked before any download, so that a machine without the cross build
# spends no time on them.
arm64_missing() {
	if [ ! -x "$bin_arm64" ]; then
		echo "no-arm64-daemon-make-ARCH=arm64"
	elif ! command -v qemu-system-aarch64 >/dev/null; then
		echo "no-qemu-system-aarch64-make-deps"
	elif [ -z "${EP_WORKLOAD_ARM64:-}" ] && [ ! -x "$workload_arm64" ] &&
		! command -v aarch64-linux-gnu-gcc >/dev/null; then
		echo "no-aarch64-linux-gnu-gcc-make-deps"
	fi
}

run_vm_row() {
	local row=$1 arch meta pkg kernel rc why dir

	arch=$(row_arch "$row")
	if [ "$arch" = arm64 ]; then
		why=$(arm64_missing)
		if [ -n "$why" ]; then
			status=SKIP result="reason=$why"
			return
		fi
		[ -n "$expect_arm64" ] || expect_arm64=$(count_programs "$skel_arm64")
		if [ -z "$expect_arm64" ] || [ "$expect_arm64" -eq 0 ]; then
			status=FAIL result="reason=cannot-count-programs-in-$skel_arm64"
			return
		fi
	fi
	meta=$(metapackage "$row")
	pkg=$(resolve "$meta")
	if [ -z "$pkg" ] && apt_update; then
		pkg=$(resolve "$meta")
	fi
	if [ -z "$pkg" ]; then
		status=SKIP release=- result="reason=apt-knows-no-$meta"
		return
	fi
	release=${pkg#linux-image-}
	release=${release%:*}
	if [ ! -d "$cache/kernels/$row/${pkg%:*}" ]; then
		fetch_kernel "$row" "$pkg"
		rc=$?
		if [ $rc = 1 ] && apt_update; then
			# a security update may have replaced the ABI
			pkg=$(resolve "$meta")
			release=${pkg#linux-image-}
			release=${release%:*}
			[ -n "$pkg" ] && fetch_kernel "$row" "$pkg"
			rc=$?
		fi
		if [ $rc = 1 ]; then
			status=SKIP result="reason=archive-does-not-serve-$pkg"
			return
		elif [ $rc != 0 ]; then
			status=FAIL result="reason=cannot-extract-$pkg"
			return
		fi
	fi
	dir=$cache/kernels/$row/${pkg%:*}
	for kernel in "$dir/vmlinux" "$dir/Image" "$dir/vmlinuz"; do
		[ -f "$kernel" ] && break
	done
	release=$(cat "$dir/release")
	if ! build_initrd "$arch"; then
		status=FAIL result="reason=cannot-build-initramfs"
		return
	fi
	boot "$row" "$kernel"
	# A guest kernel that died before /init ran (6.12-rt panics in about
	# one boot in 20 under TCG, before any of ours runs) is booted once
	# more; a guest that reached /init keeps its result.
	if [ -z "$(tr -d '\r' <"$log" | grep -a '^init: ')" ] &&
		[ "${result#RESULT FAIL reason=no-result}" != "$result" ]; then
		note "$row: the guest never reached /init: booting it again"
		cp "$log" "$log.first" 2>/dev/null
		boot "$row" "$kernel"
	fi
}

# The host row: the same check, run directly.  check.sh mounts nothing,
# so it needs no mount namespace.
run_host_row() {
	release=$(uname -r)
	log=$cache/logs/host.log
	if [ "$(id -u)" != 0 ]; then
		status=SKIP result="reason=not-root"
		return
	fi
	EP_BIN=$bin EP_WORKLOAD=$workload EP_WORKDIR=$cache/host-check \
		EP_PYTHON=$python EP_PYSCRIPT=$here/pyburn.py \
		EP_EXPECT_PROGRAMS=$expect \
		EP_PROFILER_ARGS="${EP_BPF_LOG_LEVEL:+-bpf-log-level $EP_BPF_LOG_LEVEL}" \
		sh "$here/check.sh" >"$log" 2>&1
	result=$(grep -a '^RESULT ' "$log" | tail -n 1)
	[ -n "$result" ] || result="RESULT FAIL reason=no-result"
}

# kv KEY: the value of KEY= in the result line.
kv() {
	echo "$result" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}

# Print a failed row's guest output: the block check.sh wrote, or the end
# of the log when the guest never got that far.
show_failure() {
	local out

	[ -f "$log" ] || return
	out=$(tr -d '\r' <"$log" | sed -n '/^---- profiler stderr/,/^---- end/p')
	[ -n "$out" ] || out=$(tr -d '\r' <"$log" | tail -n 40)
	if [ "$verbose_fail" = 1 ]; then
		echo "$out" | sed 's/^/    /' # indent
	else
		echo "$out" | tail -n 40 | sed 's/^/    /'
		echo "    (whole log: $log)"
	fi
}

# ---- the matrix --------------------------------------------------------------

t_all=$(now)
npass=0 nfail=0 nskip=0
for row in "${rows[@]}"; do
	t_row=$(now)
	status="" release="-" result="" log=""
	if [ "$row" = host ]; then
		run_host_row
	else
		run_vm_row "$row"
	fi
	if [ -z "$status" ]; then
		case $result in
		"RESULT PASS"*) status=PASS ;;
		*) status=FAIL ;;
		esac
	fi
	k=$(kv kernel)
	[ -n "$k" ] && release=$k
	programs=$(kv programs) samples=$(kv samples)
	line="$status $row $release programs=${programs:--} samples=${samples:--}"
	py=$(kv python)
	[ -n "$py" ] && line="$line python=$py split=$(kv split) gap=$(kv gap)"
	for rtn in perl php php_jit ruby java_xint java; do
		v=$(kv "$rtn")
		[ -n "$v" ] && line="$line $rtn=$v split_$rtn=$(kv "split_$rtn")"
	done
	v=$(kv php_jit_frames)
	[ -n "$v" ] && line="$line php_jit_frames=$v"
	v=$(kv ruby_threads)
	[ -n "$v" ] && line="$line ruby_threads=$v"
	# -keep-programs: taken/main/samples, and the two starts
	v=$(kv kept)
	[ -n "$v" ] && line="$line kept=$v startup_ms=$(kv startup_ms)/$(kv kept_startup_ms)"
	reason=$(kv reason)
	[ -n "$reason" ] && line="$line reason=$reason"
	echo "$line ($(elapsed "$t_row")s)"
	case $status in
	PASS) npass=$((npass + 1)) ;;
	SKIP) nskip=$((nskip + 1)) ;;
	FAIL)
		nfail=$((nfail + 1))
		show_failure
		;;
	esac
done
echo "matrix: $npass passed, $nfail failed, $nskip skipped ($accel, $(elapsed "$t_all")s)"
[ $nfail = 0 ]
