#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The kernel-matrix check, the same in a qemu guest (run by the initramfs'
# /init) and on the host (run by run-matrix.sh directly).  POSIX sh and
# busybox tools only.  It mounts nothing.
#
# Starts the split-nofp-pie workload (no frame pointers: the stack-delta
# unwinder must work on this kernel), profiles it for EP_DURATION seconds at 99 Hz
# (then SIGTERM, which makes the daemon write its output and exit) and
# checks that every BPF program loaded, that samples were taken and that
# the workload's stacks reach main with chain_a in them.  Prints one line
#   RESULT PASS kernel=<release> programs=<n> samples=<n> key=value...
#   RESULT FAIL kernel=<release> programs=<n> samples=<n> reason=<word> ...
# and, on failure, the profiler's stderr (which holds the verifier log when
# a program was rejected) between "---- profiler stderr" and "---- end".
# Exits 0 on PASS, 1 on FAIL.
#
# Environment:
#   EP_BIN              the profiler (default: ebpf-profiler in PATH)
#   EP_WORKLOAD         the split-nofp-pie workload
#   EP_WORKDIR          scratch directory (default: /tmp/ep-check)
#   EP_EXPECT_PROGRAMS  BPF programs the skeleton holds; 0 or unset: any > 0
#   EP_DURATION         seconds of sampling after the daemon started (3)
#   EP_START_TIMEOUT    seconds the daemon may take to start (240)
#   EP_PROFILER_ARGS    extra profiler flags (e.g. -bpf-log-level 2)

bin=${EP_BIN:-ebpf-profiler}
workload=${EP_WORKLOAD:?EP_WORKLOAD: path of split-nofp-pie}
work=${EP_WORKDIR:-/tmp/ep-check}
expect=${EP_EXPECT_PROGRAMS:-0}
duration=${EP_DURATION:-3}
start_timeout=${EP_START_TIMEOUT:-240}
kernel=$(uname -r)

rm -rf "$work"
mkdir -p "$work/cache" || exit 1

# The profile covers EP_DURATION seconds from the moment the daemon says
# it started: its startup (mostly the verifier, 20-30 times slower under
# TCG) would otherwise eat into a -duration, which counts from exec.  The
# workload runs until the profile is written.
"$workload" 600 &
wpid=$!
# shellcheck disable=SC2086 # EP_PROFILER_ARGS is a list of flags
"$bin" -pid "$wpid" -samples-per-second 99 -output "$work/out.folded" \
	-cache-dir "$work/cache" -v $EP_PROFILER_ARGS \
	>"$work/stdout" 2>"$work/stderr" &
ppid=$!
# wait for "started in", or for the daemon to exit (a load failure)
ticks=0 started=0 timed_out=0
while kill -0 "$ppid" 2>/dev/null; do
	if grep -q 'started in' "$work/stderr"; then
		started=1
		break
	fi
	if [ "$ticks" -ge $((start_timeout * 5)) ]; then
		timed_out=1
		break
	fi
	sleep 0.2
	ticks=$((ticks + 1))
done
[ "$started" = 1 ] && sleep "$duration"
# SIGTERM: the daemon writes the profile and exits; a daemon stuck in its
# startup (no handler yet) dies of it.  Not SIGINT: a background job of a
# non-interactive shell starts with SIGINT ignored.
kill -TERM "$ppid" 2>/dev/null
ticks=0
while kill -0 "$ppid" 2>/dev/null && [ "$ticks" -lt 150 ]; do
	sleep 0.2
	ticks=$((ticks + 1))
done
kill -KILL "$ppid" 2>/dev/null
wait "$ppid"
rc=$?
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null

# "started in N ms: P programs, E perf events" (logged with -v)
programs=$(sed -n 's/.*started in [0-9]* ms: \([0-9]*\) programs, \([0-9]*\) perf events.*/\1/p' \
	"$work/stderr" | tail -n 1)
events=$(sed -n 's/.*started in [0-9]* ms: [0-9]* programs, \([0-9]*\) perf events.*/\1/p' \
	"$work/stderr" | tail -n 1)
# "kernel types from built": the cut-down types for CO-RE (kbtf.c) loaded
# on this kernel; "from kernel" would mean they were rejected
ktypes=$(sed -n 's/.*kernel types from \([a-z]*\).*/\1/p' "$work/stderr" |
	tail -n 1)
# the summary line: samples=N lost=N ... startup_ms=N ...
summary=$(grep '^samples=' "$work/stderr" | tail -n 1)
field() {
	echo "$summary" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}
samples=$(field samples)
startup_ms=$(field startup_ms)
: "${programs:=0}" "${events:=0}" "${samples:=0}" "${startup_ms:=0}"

# Folded stacks: "comm;root;...;leaf count".  Count the workload's samples,
# those whose stack holds a frame named main, and those under chain_a.
# shellcheck disable=SC2046 # three numbers
set -- $(awk '
	{
		count = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		n = split(stack, f, ";")
		if (f[1] != "split-nofp-pie")
			next
		total += count
		m = 0; a = 0
		# complete: the native unwinder reached the process entry
		if (f[2] != "_start")
			next
		for (i = 2; i <= n; i++) {
			if (f[i] == "main") m = 1
			else if (m && f[i] == "chain_a") a = 1
		}
		if (m) main += count
		if (a) chain_a += count
	}
	END { printf "%d %d %d\n", total, main, chain_a }
' "$work"/out*.folded 2>/dev/null || echo 0 0 0)
wsamples=${1:-0} wmain=${2:-0} wchain_a=${3:-0}

reason=""
if [ "$timed_out" = 1 ]; then
	reason="no-start-in-${start_timeout}s"
elif [ "$rc" != 0 ]; then
	reason="exit-$rc"
elif [ "$programs" -eq 0 ]; then
	reason="no-programs"
elif [ "$expect" -gt 0 ] && [ "$programs" -ne "$expect" ]; then
	reason="programs-$programs-of-$expect"
elif [ "$ktypes" = kernel ]; then
	reason="kernel-types-rejected"
elif [ "$samples" -eq 0 ] || [ "$wsamples" -eq 0 ]; then
	reason="no-samples"
# nine in ten of the workload's stacks must reach main
elif [ $((wmain * 10)) -lt $((wsamples * 9)) ]; then
	reason="main-$wmain-of-$wsamples"
elif [ "$wchain_a" -eq 0 ]; then
	reason="no-chain_a"
fi

status=PASS
[ -n "$reason" ] && status=FAIL
line="RESULT $status kernel=$kernel programs=$programs samples=$samples"
line="$line events=$events startup_ms=$startup_ms workload=$wsamples"
line="$line main=$wmain chain_a=$wchain_a ktypes=${ktypes:-?}"
[ -n "$reason" ] && line="$line reason=$reason"
echo "$line"
if [ "$status" = FAIL ]; then
	echo "---- profiler stderr (exit $rc)"
	cat "$work/stderr"
	echo "---- folded (first lines)"
	cat "$work"/out*.folded 2>/dev/null | head -n 20
	echo "---- end"
	exit 1
fi
exit 0
