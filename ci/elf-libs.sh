#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# elf-libs.sh ELF: the shared libraries ELF needs, recursively, and its
# dynamic loader, one host path a line, for an ELF of any architecture the
# machine has multiarch libraries of (ldd runs the binary's own loader, so
# it cannot list an arm64 binary on x86).  Each library is found where the
# guest's loader looks for it: /lib/<triplet> or /usr/lib/<triplet>, so a
# guest gets every line copied to the same path.  Exit 1 when one is missing.
#   ci/elf-libs.sh build-arm64/ebpf-profiler
set -eu

elf=$1
case $(readelf -h "$elf" | awk -F: '/Machine:/ { print $2 }' | sed 's/^ *//') in
AArch64) triplet=aarch64-linux-gnu ;;
"Advanced Micro Devices X86-64") triplet=x86_64-linux-gnu ;;
*) echo "elf-libs: $elf: unknown machine" >&2; exit 1 ;;
esac
dirs="/lib/$triplet /usr/lib/$triplet"

needed() {
	readelf -dW "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}

seen=" "
todo=$(needed "$elf")
status=0
while [ -n "$todo" ]; do
	next=""
	for lib in $todo; do
		case $seen in *" $lib "*) continue ;; esac
		seen="$seen$lib "
		found=""
		for d in $dirs; do
			if [ -e "$d/$lib" ]; then
				found=$d/$lib
				break
			fi
		done
		if [ -z "$found" ]; then
			echo "elf-libs: $lib not found in $dirs" >&2
			status=1
			continue
		fi
		echo "$found"
		next="$next $(needed "$found")"
	done
	todo=$next
done
interp=$(readelf -lW "$elf" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
[ -n "$interp" ] && echo "$interp"
exit $status
