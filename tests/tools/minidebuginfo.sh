#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Give a binary MiniDebugInfo the way Fedora's find-debuginfo does: the
# function symbols .dynsym lacks, kept in a copy of the debug file
# (objcopy --only-keep-debug, then -S --keep-symbols), xz-compressed into
# .gnu_debugdata of the binary stripped whole.
# Usage: minidebuginfo.sh IN OUT [BARE]   (BARE: stripped, no section)
set -eu
in=$1 out=$2 bare=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D "$in" --format=posix --defined-only | awk '{ print $1 }' | sort > "$tmp/dynsyms"
nm "$in" --format=posix --defined-only |
	awk '{ if ($2 == "T" || $2 == "t" || $2 == "D") print $1 }' | sort > "$tmp/funcsyms"
comm -13 "$tmp/dynsyms" "$tmp/funcsyms" > "$tmp/keep"
objcopy --only-keep-debug "$in" "$tmp/debug"
objcopy -S --remove-section .gdb_index --remove-section .comment \
	--keep-symbols="$tmp/keep" "$tmp/debug" "$tmp/mini"
xz "$tmp/mini"
strip --strip-all -o "$tmp/bare" "$in"
objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$tmp/bare" "$out"
if [ -n "$bare" ]; then cp "$tmp/bare" "$bare"; fi
# no .symtab left: the names can only come from .gnu_debugdata
test "$(readelf -S "$out" | grep -c ' \.symtab')" = 0
