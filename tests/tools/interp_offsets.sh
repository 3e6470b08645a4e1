#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The header oracle of the runtimes' offset tables: compiles a small
# program against each version's own headers and prints what the compiler
# laid out, one "version build name value" a line.  Its output is kept in
# tests/tools/<runtime>_offsets.txt, which the unit tests check the tables
# of userspace/interp_<runtime>.c against, so neither CI nor the tests need
# the runtimes' sources.  Regenerate after adding a version:
#
#   tests/tools/interp_offsets.sh perl PERL5_GIT_DIR > tests/tools/perl_offsets.txt
#   tests/tools/interp_offsets.sh php PHP_INCLUDE_DIR... > tests/tools/php_offsets.txt
#
# PERL5_GIT_DIR: a clone of github.com/Perl/perl5 with its v5.X.0 tags.
# Perl's generated config.h is Debian's (libperl5.36's CORE/config.h, or
# PERL_CONFIG_H): threaded as it is, non-threaded with USE_ITHREADS,
# MULTIPLICITY and USE_THREADS undefined.  Files the snapshot may lack
# (charclass_invlists.h, generated, large) are stubbed: nothing the
# unwinder reads depends on them.
#
# PHP_INCLUDE_DIR: the headers a phpX.Y-dev package installs (its
# usr/include/php/API directory: Zend/, main/ with the build's generated
# php_config.h, TSRM/), one per version.  The kept output is from Debian's
# php7.4-dev (bullseye), php8.2-dev (bookworm) and php8.4-dev (trixie),
# unpacked with `apt-get download` and `dpkg-deb -x`; no Debian release
# has 8.0, 8.1 or 8.3.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
usage='usage: interp_offsets.sh perl GIT_DIR | php INCLUDE_DIR...'
runtime=${1:?$usage}
git_dir=${2:?$usage}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The .h files at the top of a tag, into dir (missing blobs left out).
headers() {
	local tag=$1 dir=$2 f
	mkdir -p "$dir"
	git --git-dir="$git_dir" ls-tree --name-only "$tag" | grep '\.h$' |
		while read -r f; do
			git --git-dir="$git_dir" show "$tag:$f" >"$dir/$f" 2>/dev/null ||
				rm -f "$dir/$f"
		done
}

# The "#ORACLE name value" lines of the assembly of src.
oracle() {
	local src=$1
	shift
	gcc -w -S -o - "$@" "$src" | awk '$1 == "#ORACLE" { print $2, $3 }'
}

case $runtime in
perl)
	cfg=${PERL_CONFIG_H:-/usr/lib/x86_64-linux-gnu/perl/5.36/CORE/config.h}
	mkdir -p "$tmp/t" "$tmp/n" "$tmp/stub"
	cp "$cfg" "$tmp/t/config.h"
	sed -E 's@^#define\s+(USE_ITHREADS|MULTIPLICITY|USE_THREADS)\s.*@/* #undef \1 */@' \
		"$cfg" >"$tmp/n/config.h"
	# Unicode data (MAX_FOLD_FROMS sizes regex match state only)
	echo '#define MAX_FOLD_FROMS 3' >"$tmp/stub/charclass_invlists.h"
	for v in 30 32 34 36 38 40; do
		src=$tmp/5.$v
		headers "v5.$v.0" "$src"
		aux=
		grep -q 'struct xpvhv_with_aux {' "$src/hv.h" && aux=-DEP_HV_WITH_AUX
		for build in threaded nonthreaded; do
			oracle "$here/perl_oracle.c" -I"$tmp/${build:0:1}" -I"$src" \
				-I"$tmp/stub" $aux | sed "s/^/5.$v $build /"
		done
	done
	;;
php)
	shift
	for inc in "$@"; do
		oracle "$here/php_oracle.c" -I"$inc" -I"$inc/main" -I"$inc/Zend" \
			-I"$inc/TSRM" >"$tmp/php"
		v=$(awk '$1 == "major" { M = $2 } $1 == "minor" { m = $2 }
			END { print M "." m }' "$tmp/php")
		build=nts
		grep -q '^zts 1' "$tmp/php" && build=zts
		sed "s/^/$v $build /" "$tmp/php"
	done
	;;
*)
	echo "unknown runtime $runtime" >&2
	exit 2
	;;
esac
