#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Off-CPU profiling's cost (make bench-offcpu): a context-switch-heavy
load (the pingpong workload: two threads passing a byte through two pipes,
two blocking reads and two wake-ups a round trip, both pinned to CPU 0) run
alone, then under
the profiler (-pid, 20 Hz CPU sampling) with -off-cpu-threshold 0 (off),
0.01, 0.1 and 1.  Per configuration, medians of BENCH_REPEAT runs of:
the load's round trips per second and its slowdown against running alone,
and, from kernel.bpf_stats_enabled, the sched_switch program's runs (every
context switch of the host) and its mean cost per run; off-CPU records the
profiler received.
Environment: EP_BIN, EP_WORKLOADS, BENCH_REPEAT (5), BENCH_SECONDS (3).
"""
import os, re, signal, statistics, subprocess, sys, tempfile, time

BIN = os.environ.get("EP_BIN", "./ebpf-profiler")
WL = os.path.join(os.environ.get("EP_WORKLOADS", "build/workloads"), "pingpong")
N = int(os.environ.get("BENCH_REPEAT", "5"))
SECS = float(os.environ.get("BENCH_SECONDS", "3"))
TMP = tempfile.mkdtemp(prefix="ep-bench-offcpu-")
CONFIGS = [None, "0", "0.01", "0.1", "1"]


def stats(on):
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1" if on else "0")


def ops_of(out):
    m = re.search(r"ops_per_s=(\d+) cpu_ns_per_op=(\d+)", out)
    return (float(m.group(1)), float(m.group(2))) if m else \
        (float("nan"), float("nan"))


def run(p):
    """One run: ((round trips/s, CPU ns per round trip), sched_switch runs,
    ns per run, records)."""
    # both threads on one CPU: each round trip is two switches on it, the
    # figure does not swing with where the scheduler puts the pair
    w = subprocess.Popen(["taskset", "-c", "0", WL, str(SECS), "wait"],
                         stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    if p is None:
        time.sleep(0.5)
        w.send_signal(signal.SIGUSR1)
        return ops_of(w.communicate()[0]), 0, float("nan"), 0
    err = os.path.join(TMP, "err")
    stats(True)
    prof = subprocess.Popen(
        [BIN, "-v", "-pid", str(w.pid), "-off-cpu-threshold", p,
         "-duration", "%.0fs" % (SECS + 4), "-no-cache",
         "-output", os.path.join(TMP, "o.folded")],
        stdout=subprocess.DEVNULL, stderr=open(err, "w"))
    t0 = time.time()
    while time.time() - t0 < 30:
        if "started in" in open(err).read() or prof.poll() is not None:
            break
        time.sleep(0.05)
    w.send_signal(signal.SIGUSR1)
    ops = ops_of(w.communicate()[0])
    prof.send_signal(signal.SIGINT)
    prof.wait()
    stats(False)
    v = dict(re.findall(r"(\w+)=([\d.]+)", open(err).read()))
    return (ops, int(v.get("bpf_switches", 0)),
            float(v.get("bpf_ns_per_switch", "nan")), int(v.get("offcpu", 0)))


def main():
    if not os.access(WL, os.X_OK):
        sys.exit("bench-offcpu: no %s (make workloads)" % WL)
    res = {c: [] for c in CONFIGS}
    for i in range(N):
        for c in CONFIGS:
            r = run(c)
            res[c].append(r)
            print("run %d %-12s ops/s %7.0f  cpu ns/op %6.0f  switches %8d  "
                  "ns/switch %6.0f  off-CPU records %7d"
                  % (i + 1, c or "no profiler", r[0][0], r[0][1], *r[1:]),
                  flush=True)
    base = statistics.median(r[0][0] for r in res[None])
    cbase = statistics.median(r[0][1] for r in res[None])
    print("\nmedians of %d runs, %.0f s each: pingpong round trips/s and CPU "
          "ns per round trip\n(slowdown: of the CPU per round trip), the "
          "sched_switch program per run (every switch\nof the host):" % (N, SECS))
    print("%-20s %9s %10s %9s %11s %10s %9s" % ("-off-cpu-threshold", "ops/s",
          "cpu ns/op", "slowdown", "switches", "ns/switch", "records"))
    for c in CONFIGS:
        ops = statistics.median(r[0][0] for r in res[c])
        cpu = statistics.median(r[0][1] for r in res[c])
        sw = statistics.median(r[1] for r in res[c])
        ns = statistics.median(r[2] for r in res[c]) if c not in (None, "0") \
            else float("nan")
        rec = statistics.median(r[3] for r in res[c])
        print("%-20s %9.0f %10.0f %8.1f%% %11.0f %10.0f %9.0f" % (
            "no profiler" if c is None else c + (" (off)" if c == "0" else ""),
            ops, cpu, 100.0 * (cpu - cbase) / cbase, sw, ns, rec))


if __name__ == "__main__":
    main()
