#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The kernel-matrix check, the same in a qemu guest (run by the initramfs'
# /init) and on the host (run by run-matrix.sh directly).  POSIX sh and
# busybox tools only.  It mounts only a BPF file system of its own under
# EP_WORKDIR (-keep-programs, below), and unmounts it.
#
# Starts two workloads: split-nofp-pie (no frame pointers: the stack-delta
# unwinder must work on this kernel) and, when EP_PYTHON is set, pyburn.py
# (60/30/10 of CPU over heavy/medium/light: the CPython unwinder must work
# on this kernel too).  One daemon profiles both (-pid twice) for
# EP_DURATION seconds at EP_HZ (then SIGTERM, which makes it write its
# output and exit).  The check passes when every BPF program
# loaded, samples were taken, the native workload's stacks reach main with
# chain_a in them, and the Python workload's stacks are complete with its
# split where the script puts it.  With -keep-programs, the daemon leaves a
# verified set of its programs pinned at exit; a second, short run on the
# native workload must take it (no verification) and reach main as the
# first (kept=1/<samples>; kept=- when no BPF file system could be
# mounted).  Prints one line
#   RESULT PASS kernel=<release> programs=<n> samples=<n> key=value...
#   RESULT FAIL kernel=<release> programs=<n> samples=<n> reason=<word> ...
# and, on failure, the profiler's stderr (which holds the verifier log when
# a program was rejected) between "---- profiler stderr" and "---- end".
# Exits 0 on PASS, 1 on FAIL.
#
# Environment:
#   EP_BIN              the profiler (default: ebpf-profiler in PATH)
#   EP_WORKLOAD         the split-nofp-pie workload
#   EP_PYTHON           a CPython interpreter; unset or empty: no Python check
#   EP_PYSCRIPT         tests/qemu/pyburn.py
#   EP_WORKDIR          scratch directory (default: /tmp/ep-check)
#   EP_EXPECT_PROGRAMS  BPF programs the skeleton holds; 0 or unset: any > 0
#   EP_DURATION         seconds of sampling after the daemon started (5)
#   EP_HZ               samples per second and CPU (499)
#   EP_START_TIMEOUT    seconds the daemon, or pyburn.py, may take to start (240)
#   EP_PY_MIN_SAMPLES   fewest Python samples for a PASS (200)
#   EP_PROFILER_ARGS    extra profiler flags (e.g. -bpf-log-level 2)
#   EP_RUNTIMES         interpreters also profiled, of perl php ruby (the
#                       arm64 rows' EP_ARM64_RUNTIMES=1): EP_PERL, EP_PHP,
#                       EP_RUBY run EP_RTDIR/split.pl, split.php, split.rb
#                       (tests/workloads), whose stacks must be 95 in 100
#                       complete and split 60/30/10 within 3 points
#                       and php-jit: EP_PHP_JIT (EP_PHP under another
#                       name) runs split.php under opcache's tracing JIT,
#                       checked as php's, and the BPF counter of JIT
#                       frames (bpf_php_jit_frames) must be > 0
#                       and ruby-threads: EP_RUBY_THREADS (EP_RUBY under
#                       another name) runs threads.rb, whose two threads
#                       must each have their own frames (their own
#                       execution context, not the main thread's)
#                       and java-xint, java: EP_JAVA_XINT (EP_JAVA under
#                       another name) runs Split.java with -Xint, EP_JAVA
#                       with default flags (EP_JVMDIR holds the classes),
#                       whose main threads must be 95 in 100 complete
#                       (native frames to the thread's start in libc,
#                       Java frames to Split.main) and split 60/30/10
#                       within 3 points
#   EP_RT_MIN_SAMPLES   fewest samples of each of them for a PASS (500)
#   EP_DUMP_FOLDED      a comm whose folded stacks are printed whole, each
#                       line after "FOLDED " (a guest's only output is its
#                       console)

bin=${EP_BIN:-ebpf-profiler}
workload=${EP_WORKLOAD:?EP_WORKLOAD: path of split-nofp-pie}
python=${EP_PYTHON:-}
pyscript=${EP_PYSCRIPT:-}
work=${EP_WORKDIR:-/tmp/ep-check}
expect=${EP_EXPECT_PROGRAMS:-0}
duration=${EP_DURATION:-5}
hz=${EP_HZ:-499}
start_timeout=${EP_START_TIMEOUT:-240}
# fewest Python samples that make a split worth checking (see below)
py_min_samples=${EP_PY_MIN_SAMPLES:-200}
kernel=$(uname -r)

umount "$work/bpffs" 2>/dev/null
rm -rf "$work"
mkdir -p "$work/cache" "$work/bpffs" || exit 1
# -keep-programs into a BPF file system of our own
keep=""
if mount -t bpf bpf "$work/bpffs" 2>/dev/null; then
	keep="-keep-programs -keep-programs-dir $work/bpffs/ep"
fi

pids="" pypid="" pyup=1 rtpids=""
runtimes=${EP_RUNTIMES:-}
rt_min_samples=${EP_RT_MIN_SAMPLES:-500}
# The runtimes start first: their start-up (a second or two under TCG)
# is over long before the daemon's, so the profile holds only their loop.
for rt in $runtimes; do
	case $rt in
	perl) set -- "$EP_PERL" "$EP_RTDIR/split.pl" ;;
	php) set -- "$EP_PHP" -n "$EP_RTDIR/split.php" ;; # -n: no php.ini
	# the flags of the x86 test php_split_60_30_10_tracing_jit, with
	# opcache loaded by name (-n: no ini file does it)
	php-jit) set -- "$EP_PHP_JIT" -n -d zend_extension=opcache.so \
		-d opcache.enable_cli=1 -d opcache.jit=tracing \
		-d opcache.jit_buffer_size=64M "$EP_RTDIR/split.php" ;;
	ruby) set -- "$EP_RUBY" --disable-gems "$EP_RTDIR/split.rb" ;;
	# under another name (a link), so that its main thread's comm is not
	# split.rb's
	ruby-threads) set -- "$EP_RUBY_THREADS" --disable-gems "$EP_RTDIR/threads.rb" ;;
	# a small heap: two JVMs and the rest share the guest's memory
	java-xint) set -- "$EP_JAVA_XINT" -Xint -Xmx128m -cp "$EP_JVMDIR" JvmReady ;;
	java) set -- "$EP_JAVA" -Xmx128m -cp "$EP_JVMDIR" JvmReady ;;
	*) continue ;;
	esac
	"$@" 600 >"$work/$rt.stdout" 2>"$work/$rt.stderr" &
	rtpids="$rtpids $!"
	pids="$pids -pid $!"
done
# A JVM's start takes a minute under TCG on a busy machine, its main
# thread without Split frames meanwhile: the profiler starts once each
# says it runs Split (tests/qemu/JvmReady.java), or gives up waiting.
for rt in $runtimes; do
	case $rt in
	java | java-xint) ;;
	*) continue ;;
	esac
	ticks=0
	while ! grep -qs '^jvm: running' "$work/$rt.stdout" &&
		[ "$ticks" -lt $((start_timeout * 5)) ]; do
		sleep 0.2
		ticks=$((ticks + 1))
	done
done
if [ -n "$python" ]; then
	# -S -E: no site module, no PYTHON* variables; the guest holds only
	# the few stdlib files an interpreter needs to start (run-matrix.sh).
	# The daemon starts once the script says it runs: the interpreter's
	# own start-up has no <module> frame, and under TCG on a busy machine
	# it lasts seconds.
	"$python" -S -E "$pyscript" 600 \
		>"$work/python.stdout" 2>"$work/python.stderr" &
	pypid=$!
	pids="$pids -pid $pypid"
	ticks=0 pyup=0
	while kill -0 "$pypid" 2>/dev/null && [ "$ticks" -lt $((start_timeout * 5)) ]; do
		if grep -qs '^pyburn: running' "$work/python.stdout"; then
			pyup=1
			break
		fi
		sleep 0.2
		ticks=$((ticks + 1))
	done
fi
# The profile covers EP_DURATION seconds from the moment the daemon says
# it started: its startup (mostly the verifier, 20-30 times slower under
# TCG) would otherwise eat into a -duration, which counts from exec.  The
# workload runs until the profile is written.
"$workload" 600 &
wpid=$!
pids="$pids -pid $wpid"
# shellcheck disable=SC2086 # $pids and EP_PROFILER_ARGS are lists of flags
# -off-cpu-threshold: the off-CPU program (sched_switch, BTF) loads too,
# so every program of the skeleton is checked on every kernel
"$bin" $pids -samples-per-second "$hz" -output "$work/out.folded" \
	-cache-dir "$work/cache" -off-cpu-threshold 0.01 -v $EP_PROFILER_ARGS \
	$keep >"$work/stdout" 2>"$work/stderr" &
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
# With the runtimes, five CPU-bound processes share the guest's two
# vCPUs: they are stopped first, so that the daemon's output (the
# interpreters' frames named from their memory) is not starved past the
# 30 s it gets, 120 s here.
stop_ticks=150
if [ -n "$runtimes" ]; then
	# shellcheck disable=SC2086 # lists of pids
	kill -STOP "$wpid" $pypid $rtpids 2>/dev/null
	stop_ticks=600
fi
kill -TERM "$ppid" 2>/dev/null
ticks=0
while kill -0 "$ppid" 2>/dev/null && [ "$ticks" -lt "$stop_ticks" ]; do
	sleep 0.2
	ticks=$((ticks + 1))
done
kill -KILL "$ppid" 2>/dev/null
wait "$ppid"
rc=$?
# The set the run kept at its exit: a second run with the same flags (one
# -pid, the native workload's, is the same set: the filter's on) takes it
# and samples for 2 s; its exit verifies the next set.
kept="-" kept_main=0 kept_samples=0 kept_startup_ms=0
if [ -n "$keep" ] && [ "$rc" = 0 ]; then
	kill -CONT "$wpid" 2>/dev/null
	# shellcheck disable=SC2086 # lists of flags
	"$bin" -pid "$wpid" -samples-per-second "$hz" \
		-output "$work/kept.folded" -cache-dir "$work/cache" \
		-off-cpu-threshold 0.01 -v $EP_PROFILER_ARGS $keep -duration 2s \
		>/dev/null 2>"$work/kept.stderr" &
	kpid=$!
	ticks=0
	while kill -0 "$kpid" 2>/dev/null &&
		[ "$ticks" -lt $((start_timeout * 5)) ]; do
		sleep 0.2
		ticks=$((ticks + 1))
	done
	kill -KILL "$kpid" 2>/dev/null
	wait "$kpid"
	kept=0
	grep -q 'the programs kept verified by the last run' \
		"$work/kept.stderr" && kept=1
	# shellcheck disable=SC2046 # two numbers
	set -- $(awk '
		{
			n = split(substr($0, 1, length($0) - length($NF) - 1), f, ";")
			if (f[1] != "split-nofp-pie")
				next
			total += $NF
			for (i = 2; i <= n; i++)
				if (f[i] == "main") { m += $NF; break }
		}
		END { printf "%d %d\n", total, m }' "$work/kept.folded" 2>/dev/null ||
		echo 0 0)
	kept_samples=${1:-0} kept_main=${2:-0}
	kept_startup_ms=$(grep '^samples=' "$work/kept.stderr" | tail -n 1 |
		tr ' ' '\n' | sed -n 's/^startup_ms=//p' | head -n 1)
	: "${kept_startup_ms:=0}"
fi
umount "$work/bpffs" 2>/dev/null
# shellcheck disable=SC2086 # lists of pids
kill "$wpid" $pypid $rtpids 2>/dev/null
# shellcheck disable=SC2086
[ -n "$runtimes" ] && kill -CONT "$wpid" $pypid $rtpids 2>/dev/null
# shellcheck disable=SC2086
wait "$wpid" $pypid $rtpids 2>/dev/null

# the CPU profile's files (rotated ones too), not the off-CPU ones beside
# them (NAME.offcpu.folded, weighted in microseconds)
cpu_folded=$(ls "$work"/out*.folded 2>/dev/null | grep -v '\.offcpu\.folded$')
# none (the daemon failed to start): /dev/null, or the awk scripts below,
# given no file, would read their stdin, which in a guest is the console,
# and wait there until qemu's timeout instead of printing the verifier log
: "${cpu_folded:=/dev/null}"

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
' $cpu_folded 2>/dev/null || echo 0 0 0)
wsamples=${1:-0} wmain=${2:-0} wchain_a=${3:-0}

# The Python workload's stacks (its comm: the interpreter's file name, cut
# to 15 bytes).  A frame with ".py:" in it is a Python frame, "name
# (file.py:line)".  Complete: native frames reach _start and the outermost
# Python frame is <module>.  A stack counts for heavy when its Python frames
# begin <module>;run;chain_60;heavy (and so on), as in test_python_bpf.c.
# Prints total, complete, the three shares in percent, the largest gap from
# 60/30/10 and the largest gap allowed, in tenths of a point (integers, for
# the shell).
#
# The gap allowed: 5 points, or 4 standard deviations of the heavy share
# (60%) when n samples leave more doubt, 100 * sqrt(0.6 * 0.4 / n): 5.0
# points from 1536 samples up, 8.8 at 500, 13.9 at 200.  Measured over 21
# rows (three matrices at load 4 to 9, 601 to 2488 Python samples a row),
# the heavy share scattered as sampling noise alone would: 1.00 of that
# deviation rms, 2.6 at most (4.1 points).  4 deviations keep a false
# failure out of a whole matrix; a frame taken for another (light counted
# as medium, a chain missing) still moves a share by 10 points or more.
# The awk functions of the split checks: shares() sets sh, sm and sl to
# the shares of heavy, medium and light in percent and returns the
# largest gap from 60/30/10; take(comm) reads a line of comm's (count,
# stack, its frames f[1..n]: f[1] is the comm) into the total and
# returns n, 0 for another's line; frames() joins the names (without
# their " (file:line)") of the frames f[2..n] that match pat, each after
# a ";".
split_awk='
function abs(x) { return x < 0 ? -x : x }
function take(comm,  n) {
	count = $NF
	stack = substr($0, 1, length($0) - length($NF) - 1)
	n = split(stack, f, ";")
	if (f[1] != comm)
		return 0
	total += count
	return n
}
function frames(n, pat,  i, name, out) {
	out = ""
	for (i = 2; i <= n; i++) {
		if (f[i] !~ pat)
			continue
		name = f[i]
		sub(/ \(.*/, "", name)
		out = out ";" name
	}
	return out
}
function shares(heavy, medium, light, total,  t, g) {
	t = total ? total : 1
	sh = 100 * heavy / t; sm = 100 * medium / t; sl = 100 * light / t
	g = abs(sh - 60)
	if (abs(sm - 30) > g) g = abs(sm - 30)
	if (abs(sl - 10) > g) g = abs(sl - 10)
	return g
}'
pycomm=$(basename "${python:-none}" | cut -c 1-15)
# shellcheck disable=SC2046 # seven numbers
set -- $(awk -v comm="$pycomm" "$split_awk"'
	{
		if (!(n = take(comm)))
			next
		py = frames(n, "\\.py:")
		if (f[2] == "_start" && py ~ /^;<module>(;|$)/)
			full += count
		if (py ~ /^;<module>;run;chain_60;heavy(;|$)/)
			heavy += count
		else if (py ~ /^;<module>;run;chain_30;medium(;|$)/)
			medium += count
		else if (py ~ /^;<module>;run;chain_10;light(;|$)/)
			light += count
	}
	# sqrt() by Newton iterations: busybox-static awk has no math
	function root(x,  r, i) {
		r = x > 1 ? x : 1
		for (i = 0; i < 40; i++)
			r = (r + x / r) / 2
		return r
	}
	END {
		gap = shares(heavy, medium, light, total)
		allow = 400 * root(0.24 / (total ? total : 1))
		if (allow < 5) allow = 5
		printf "%d %d %.1f %.1f %.1f %d %d\n", total, full, sh, sm, sl,
			gap * 10 + 0.5, allow * 10 + 0.5
	}
' $cpu_folded || echo 0 0 0 0 0 1000 0)
pysamples=${1:-0} pyfull=${2:-0} pyheavy=${3:-0} pymedium=${4:-0}
pylight=${5:-0} pygap=${6:-1000} pyallow=${7:-0}

# A runtime's stacks (comm: its interpreter's file name): complete when
# native frames reach _start and the script's own frame is in them (perl
# "main (split.pl:N)", php "{main} (split.php:N)", ruby "<main>
# (split.rb:N)"); a stack counts for heavy when it holds the heavy
# function's frame (main::heavy, heavy, Burner#heavy: Ruby's with its
# class, as on x86), and so on.  Prints
# total, complete, the shares in percent and the largest gap from
# 60/30/10 in tenths of a point.
rt_stacks() {
	awk -v comm="$1" -v top=";$2 (split.$4:" -v pre=";$3" -v ext=" (split.$4:" "$split_awk"'
	{
		if (!take(comm))
			next
		if (f[2] == "_start" && index(stack, top))
			full += count
		if (index(stack, pre "heavy" ext))
			heavy += count
		else if (index(stack, pre "medium" ext))
			medium += count
		else if (index(stack, pre "light" ext))
			light += count
	}
	END {
		gap = shares(heavy, medium, light, total)
		printf "%d %d %.1f %.1f %.1f %d\n", total, full, sh, sm, sl, gap * 10 + 0.5
	}' $cpu_folded
}
# threads.rb: of the samples in its spin, those under worker_a (thread
# a), worker_b (thread b) and main_loop; each thread a share of its own
# (the three take turns on the VM lock: a third each), at least 15 in 100.
# Any comm: Ruby names its threads after the block's file and line.
rt_threads() {
	# shellcheck disable=SC2046 # four numbers
	set -- $(awk '
	{
		count = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		if (!index(stack, ";Object#spin (threads.rb:"))
			next
		total += count
		if (index(stack, ";Object#worker_a (threads.rb:")) a += count
		else if (index(stack, ";Object#worker_b (threads.rb:")) b += count
		else if (index(stack, ";Object#main_loop (threads.rb:")) m += count
	}
	END { printf "%d %d %d %d\n", total, a, b, m }' $cpu_folded)
	rtresult="$rtresult ruby_threads=${2:-0}/${3:-0}/${4:-0}"
	[ -n "$rtreason" ] && return
	if [ "${1:-0}" -lt 200 ]; then
		rtreason="ruby-threads-samples-${1:-0}"
	elif [ $((${2:-0} * 100)) -lt $((${1:-0} * 15)) ] ||
		[ $((${3:-0} * 100)) -lt $((${1:-0} * 15)) ]; then
		rtreason="ruby-threads-$2/$3/$4-of-$1"
	fi
}
# A JVM's main thread (comm: the launcher's name, java or java-xint):
# complete when its native frames start at the thread's start in libc
# (start_thread, which Debian's stripped libc names by its offset) and
# its Java frames reach Split.main; heavy when its Split frames (without
# their lines) begin main;run;heavy;heavyLeaf, whether the JIT inlined
# them or not (a compiled frame gives its inlined methods as frames).
rt_java() {
	awk -v comm="$1" "$split_awk"'
	{
		if (!(n = take(comm)))
			next
		jc = frames(n, "^Split\\.")
		if ((f[2] ~ /^libc\.so\.6\+/ || f[2] == "start_thread" ||
		     f[2] == "thread_start") && jc ~ /^;Split\.main(;|$)/)
			full += count
		if (jc ~ /^;Split\.main;Split\.run;Split\.heavy;Split\.heavyLeaf(;|$)/)
			heavy += count
		else if (jc ~ /^;Split\.main;Split\.run;Split\.medium;Split\.mediumLeaf(;|$)/)
			medium += count
		else if (jc ~ /^;Split\.main;Split\.run;Split\.light;Split\.lightLeaf(;|$)/)
			light += count
	}
	END {
		gap = shares(heavy, medium, light, total)
		printf "%d %d %.1f %.1f %.1f %d\n", total, full, sh, sm, sl, gap * 10 + 0.5
	}' $cpu_folded
}
rtresult="" rtreason=""
# the PHP frames the unwinder pushed from JIT code (php.bpf.h)
jit_frames=$(field bpf_php_jit_frames)
case " $runtimes " in
*" php-jit "*) rtresult=" php_jit_frames=${jit_frames:-0}" ;;
esac
for rt in $runtimes; do
	case $rt in
	# shellcheck disable=SC2046 # six numbers
	perl) set -- $(rt_stacks "$(basename "$EP_PERL" | cut -c 1-15)" main main:: pl) ;;
	php) set -- $(rt_stacks "$(basename "$EP_PHP" | cut -c 1-15)" '{main}' '' php) ;;
	php-jit) set -- $(rt_stacks "$(basename "$EP_PHP_JIT" | cut -c 1-15)" '{main}' '' php) ;;
	ruby) set -- $(rt_stacks "$(basename "$EP_RUBY" | cut -c 1-15)" '<main>' 'Burner#' rb) ;;
	ruby-threads)
		rt_threads
		continue
		;;
	java-xint) set -- $(rt_java "$(basename "$EP_JAVA_XINT" | cut -c 1-15)") ;;
	java) set -- $(rt_java "$(basename "$EP_JAVA" | cut -c 1-15)") ;;
	*) continue ;;
	esac
	key=$(echo "$rt" | tr - _)
	rtresult="$rtresult $key=${2:-0}/${1:-0} split_$key=${3:-0}/${4:-0}/${5:-0}"
	[ -n "$rtreason" ] && continue
	if [ "${1:-0}" -lt "$rt_min_samples" ]; then
		rtreason="$rt-samples-${1:-0}"
	elif [ "$rt" = php-jit ] && [ "${jit_frames:-0}" -eq 0 ]; then
		rtreason="php-jit-no-jit-frames"
	elif [ $((${2:-0} * 100)) -lt $((${1:-0} * 95)) ]; then
		rtreason="$rt-complete-${2:-0}-of-${1:-0}"
	elif [ "${6:-1000}" -gt 30 ]; then
		rtreason="$rt-split-$3/$4/$5"
	fi
done

reason=""
if [ "$pyup" = 0 ]; then
	reason="python-no-start"
elif [ "$timed_out" = 1 ]; then
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
elif [ -z "$python" ]; then
	: # no Python check asked for
elif [ "$pysamples" -lt "$py_min_samples" ]; then
	reason="python-samples-$pysamples"
# 99 in 100 of the Python workload's stacks complete
elif [ $((pyfull * 100)) -lt $((pysamples * 99)) ]; then
	reason="python-complete-$pyfull-of-$pysamples"
elif [ "$pygap" -gt "$pyallow" ]; then
	reason="python-split-$pyheavy/$pymedium/$pylight"
fi
[ -z "$reason" ] && reason=$rtreason
if [ -z "$reason" ] && [ "$kept" != "-" ]; then
	if [ "$kept" = 0 ]; then
		reason="kept-programs-not-taken"
	elif [ "$kept_samples" -eq 0 ] ||
		[ $((kept_main * 10)) -lt $((kept_samples * 9)) ]; then
		reason="kept-main-$kept_main-of-$kept_samples"
	fi
fi
if [ -n "${EP_DUMP_FOLDED:-}" ]; then
	grep -h "^$EP_DUMP_FOLDED;" $cpu_folded 2>/dev/null | sed 's/^/FOLDED /'
fi

status=PASS
[ -n "$reason" ] && status=FAIL
line="RESULT $status kernel=$kernel programs=$programs samples=$samples"
line="$line events=$events startup_ms=$startup_ms workload=$wsamples"
line="$line main=$wmain chain_a=$wchain_a ktypes=${ktypes:-?}"
[ -n "$python" ] && line="$line python=$pyfull/$pysamples split=$pyheavy/$pymedium/$pylight gap=$((pygap / 10)).$((pygap % 10))/$((pyallow / 10)).$((pyallow % 10))"
line="$line$rtresult kept=$kept/$kept_main/$kept_samples kept_startup_ms=$kept_startup_ms"
[ -n "$reason" ] && line="$line reason=$reason"
echo "$line"
if [ "$status" = FAIL ]; then
	echo "---- profiler stderr (exit $rc)"
	cat "$work/stderr"
	for f in python $runtimes; do
		[ -s "$work/$f.stderr" ] || continue
		echo "---- $f stderr"
		head -n 20 "$work/$f.stderr"
	done
	if [ -s "$work/kept.stderr" ]; then
		echo "---- the kept-programs run's stderr"
		grep -v '^samples=' "$work/kept.stderr" | tail -n 20
	fi
	echo "---- folded (first lines)"
	cat $cpu_folded 2>/dev/null | head -n 20
	for f in ${EP_PERL:-} ${EP_PHP:-} ${EP_PHP_JIT:-} ${EP_RUBY:-} ${EP_JAVA_XINT:-} ${EP_JAVA:-}; do
		[ -n "$runtimes" ] || break
		echo "---- folded ($(basename "$f"), the heaviest)"
		cat $cpu_folded 2>/dev/null | grep "^$(basename "$f" | cut -c 1-15);" |
			sort -t ' ' -k 2 -n -r | head -n 3
	done
	echo "---- end"
	exit 1
fi
exit 0
