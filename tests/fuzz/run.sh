#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Run the fuzz targets built by tests/fuzz/fuzz.mk:
#   run.sh FUZZDIR SECONDS TARGET...   run each for SECONDS from its seeds
#                                      and corpus, FUZZ_JOBS at once; print
#                                      exec/s and coverage; exit 1 if any
#                                      found a crash, leak or timeout
#   run.sh --text-seeds SEEDDIR PYTHON...
#                                      add the seeds made from text: /proc
#                                      maps and cgroup files, kallsyms, the
#                                      line tables of each Python
set -u

if [ "${1:-}" = "--text-seeds" ]; then
	seeds=$2
	shift 2
	mkdir -p "$seeds/procfs" "$seeds/ksyms" "$seeds/pyline"
	for p in self 1; do
		cat /proc/$p/maps > "$seeds/procfs/maps-$p" 2>/dev/null
		cat /proc/$p/cgroup > "$seeds/procfs/cgroup-$p" 2>/dev/null
	done
	id=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
	printf '0::/system.slice/docker-%s.scope\n' $id > "$seeds/procfs/docker"
	printf '0::/kubepods/burstable/pod1/%s\n' $id > "$seeds/procfs/k8s"
	printf '12:pids:/crio-%s.scope\n0::/\n' $id > "$seeds/procfs/crio"
	if [ -r /proc/kallsyms ]; then
		head -n 300 /proc/kallsyms > "$seeds/ksyms/head"
		grep '\[' /proc/kallsyms | head -n 100 > "$seeds/ksyms/modules"
	fi
	printf 'ffffffff81000000 T _stext\nffffffff81000010 t x [mod]\n' \
		> "$seeds/ksyms/small"
	for py in "$@"; do
		"$py" tests/fuzz/pyline_seeds.py "$seeds/pyline" 2>/dev/null
	done
	exit 0
fi

dir=$1
secs=$2
shift 2
jobs=${FUZZ_JOBS:-$(nproc)}
mkdir -p "$dir/corpus" "$dir/artifacts" "$dir/logs"

run_one() {
	t=$1
	mkdir -p "$dir/corpus/$t" "$dir/seeds/$t"
	# -timeout: an input that takes 10 s is a hang; -rss_limit_mb: the
	# parsers must not need gigabytes for any input
	"$dir/fuzz_$t" -max_total_time="$secs" -print_final_stats=1 \
		-timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$dir/artifacts/$t-" \
		"$dir/corpus/$t" "$dir/seeds/$t" > "$dir/logs/$t.log" 2>&1
	echo $? > "$dir/logs/$t.rc"
}

start=$(date +%s)
running=0
for t in "$@"; do
	run_one "$t" &
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

failed=0
printf '\n  %-10s %8s %10s %8s %8s %8s  %s\n' target runs exec/s cov ft corpus result
for t in "$@"; do
	log=$dir/logs/$t.log
	rc=$(cat "$dir/logs/$t.rc" 2>/dev/null || echo 1)
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1)
	cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
	if [ "$rc" = 0 ]; then
		res=ok
	else
		res="FAILED (rc $rc, see $log)"
		failed=1
	fi
	printf '  %-10s %8s %10s %8s %8s %8s  %s\n' "$t" "${runs:--}" \
		"${eps:--}" "${cov:--}" "${ft:--}" "${corp:--}" "$res"
done
printf '  %d targets, %d s each, %d s in all\n' $# "$secs" \
	$(($(date +%s) - start))
exit $failed
