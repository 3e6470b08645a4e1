#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Install the Debian 12 packages the build, the tests and the benchmarks need.
# Idempotent: does nothing when every package is already installed.
set -eu

BUILD="make gcc g++ clang llvm pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
liblmdb-dev lmdb-utils libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
libcurl4-openssl-dev libssl-dev libdw-dev libzstd-dev libxxhash-dev binutils"
TEST="golang-1.19-go python3 python3-grpcio linux-perf bpftrace chromium
libxml2-utils qemu-system-x86 cpio xz-utils zstd lz4 procps iproute2 file
python3-yaml systemd sqlite3 perl openssl libc6-dbg"

missing=""
for p in $BUILD $TEST; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ]; then
	echo "deps: all packages installed"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing; run 'make deps' as root" >&2
	exit 1
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
# shellcheck disable=SC2086
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing
