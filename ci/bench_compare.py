#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Per-sample BPF cost beside bpftrace, in the same window (make bench-compare).

Both profilers are attached at once, whole system, at the same rate, while a
workload runs; the kernel's own accounting (BPF_ENABLE_STATS, run_time_ns /
run_cnt of each tool's perf_event programs, tail calls counted in the entry
program) gives each one's cost per sample over the same seconds, so the
neighbours' load, the cache pressure and the page walks of this nested VM
fall on both alike.  Counters are read after our start-up is done and again
SECONDS later; only the difference counts.

Ours runs in three configurations, each beside its own bpftrace:
  fp      -frame-pointers-only -tracers native  (the same walk as bpftrace)
  native  -tracers native                       (stack deltas)
  all     the default tracers (native + the runtimes, Python among them)
over four workloads:
  native  split-nofp-pie, one per CPU (C without frame pointers)
  python  tests/workloads/python/split.py, one per CPU
  deep    recurse 300, one per CPU (300 frames without frame pointers)
  idle    nothing of ours: whatever the machine runs

bpftrace's walk stops after a frame or two on code without frame pointers,
so its cost is what a wrong stack costs; the ratio says what a right one
costs more.

Then the cost per user frame: ours alone (-pid) on recurse at several
depths; the user frames per sample come from the folded output, and a
least-squares line through (frames, ns) gives the fixed cost per sample and
the cost per frame.

perf has no BPF program: its per-sample cost (the kernel's frame-pointer
walk, or an 8 KiB stack copy with --call-graph dwarf) is not in any counter
this benchmark can read, so perf is compared on workload cost by
`make bench` instead.

Environment: EP_BIN, EP_WORKLOADS, EP_SRCDIR, BENCH_SECONDS (8),
BENCH_REPEAT (3), BENCH_HZ (99), BENCH_WORKLOADS ("native python deep idle"),
BENCH_CONFIGS ("fp native all"), BENCH_DEPTHS ("10 100 300").
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (shared helpers: bpf stats, prog ids, readiness)

EP = os.environ.get("EP_BIN", "./ebpf-profiler")
# another build of ours attached in the same window too (A/B)
BEFORE = os.environ.get("EP_BIN_BEFORE")
WL = os.environ.get("EP_WORKLOADS", "build/workloads")
SRC = os.environ.get("EP_SRCDIR", ".")
SECS = float(os.environ.get("BENCH_SECONDS", "8"))
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
HZ = int(os.environ.get("BENCH_HZ", "99"))
WORKLOADS = os.environ.get("BENCH_WORKLOADS", "native python deep idle").split()
CONFIGS = os.environ.get("BENCH_CONFIGS", "fp native all").split()
DEPTHS = [int(d) for d in os.environ.get("BENCH_DEPTHS", "10 100 300").split()]
NCPU = os.cpu_count() or 1
TMP = tempfile.mkdtemp(prefix="ep-bench-cmp-")
CONFIG_FLAGS = {
    "fp": ["-frame-pointers-only", "-tracers", "native"],
    "native": ["-tracers", "native"],
    "all": [],
}
# long enough for start-up, the window and the stop
RUN_S = SECS + 60


def workload_cmds(name):
    if name == "native":
        return [[os.path.join(WL, "split-nofp-pie"), str(RUN_S)]] * NCPU
    if name == "python":
        return [["python3", os.path.join(SRC, "tests/workloads/python/split.py"),
                 str(RUN_S)]] * NCPU
    if name == "deep":
        return [[os.path.join(WL, "recurse"), str(RUN_S), "300"]] * NCPU
    return []


def start_ours(flags, port, out, binary=None):
    err = open(out + ".err", "w")
    cmd = [binary or EP, "-samples-per-second", str(HZ), "-output", out,
           "-cache-dir", os.path.join(TMP, "cache"),
           "-metrics-address", str(port)] + flags
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)


def start_bpftrace():
    env = dict(os.environ, BPFTRACE_MAP_KEYS_MAX="65536")
    return subprocess.Popen(
        ["bpftrace", "-e", "profile:hz:%d { @[kstack, ustack] = count(); }" % HZ],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)


def stats(ids):
    return bench.perf_event_prog_stats(ids)


def wait_progs(pid, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        ids = bench.bpf_prog_ids(pid)
        if ids and stats(ids)[1] >= 0 and any(
                "perf_event" in subprocess.run(
                    ["bpftool", "prog", "show", "id", str(i)],
                    capture_output=True, text=True).stdout for i in ids):
            return ids
        time.sleep(0.2)
    return set()


def window(procs):
    """(ns/sample, samples) of each tool over the same SECS; the last one
    is bpftrace."""
    ids = [bench.bpf_prog_ids(p.pid) for p in procs[:-1]]
    ids.append(wait_progs(procs[-1].pid))
    s0 = [stats(i) for i in ids]
    time.sleep(SECS)
    s1 = [stats(i) for i in ids]

    def per(a, b):
        n = b[1] - a[1]
        return ((b[0] - a[0]) / n, n) if n > 0 else (float("nan"), 0)
    return [per(a, b) for a, b in zip(s0, s1)]


def one_compare(wl, cfg, port):
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
             for c in workload_cmds(wl)]
    try:
        time.sleep(0.5)
        tools = [start_ours(CONFIG_FLAGS[cfg], port,
                            os.path.join(TMP, "cmp.folded"))]
        if BEFORE:
            tools.append(start_ours(CONFIG_FLAGS[cfg], port + 1,
                                    os.path.join(TMP, "before.folded"),
                                    BEFORE))
        tools.append(start_bpftrace())
        try:
            for i, p in enumerate(tools[:-1]):
                bench.METRICS_PORT = port + i
                bench.wait_ours_ready(p)
            time.sleep(1.0)  # bpftrace attached, first maps warm
            return window(tools)
        finally:
            for p in tools:
                bench.interrupt(p)
    finally:
        for p in procs:
            p.kill()
            p.wait()


def folded_user_frames(path, comm):
    """Mean frames per sample of the samples of COMM (kernel frames, marked
    _[k], left out), over PATH and its rotated files (PATH-TIME.folded)."""
    frames = samples = 0
    stem = os.path.basename(path)[:-len(".folded")]
    files = [os.path.join(TMP, f) for f in os.listdir(TMP)
             if f.endswith(".folded") and (f == stem + ".folded" or
                                            f.startswith(stem + "-"))]
    try:
        for name in files:
            with open(name) as f:
                lines = f.read().splitlines()
            for line in lines:
                stack, _, n = line.rpartition(" ")
                parts = stack.split(";")
                if not parts or not parts[0].startswith(comm):
                    continue
                user = [p for p in parts[1:] if not p.endswith("_[k]")]
                frames += len(user) * int(n)
                samples += int(n)
    except (OSError, ValueError):
        return None
    return frames / samples if samples else None


def one_depth(depth):
    """ns per sent trace (the summary's bpf_ns_per_trace: run time over
    the traces of the chosen process, while run_cnt also counts the runs
    that filtered other processes out) and user frames per sample."""
    w = subprocess.Popen([os.path.join(WL, "recurse"), str(RUN_S), str(depth)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = os.path.join(TMP, "depth%d.folded" % depth)
    try:
        time.sleep(0.3)
        p = subprocess.run(
            [EP, "-samples-per-second", str(HZ), "-pid", str(w.pid), "-output",
             out, "-cache-dir", os.path.join(TMP, "cache"), "-duration",
             "%gs" % SECS, "-tracers", "native"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    finally:
        w.kill()
        w.wait()
    m = re.search(r"bpf_ns_per_trace=([\d.]+)", p.stderr)
    frames = folded_user_frames(out, "recurse")
    for f in os.listdir(TMP):
        if f.endswith(".folded"):
            os.unlink(os.path.join(TMP, f))
    return (float(m.group(1)) if m else float("nan"), frames)


def med(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def main():
    if os.geteuid() != 0:
        print("bench-compare: needs root (BPF, bpf_stats)")
        return 1
    if not shutil.which("bpftrace"):
        print("bench-compare: SKIP: bpftrace is not installed")
        return 0
    fd = bench.enable_bpf_stats()
    port = 19500 + os.getpid() % 400
    res = {}
    for r in range(REPEAT):
        for wl in WORKLOADS:
            for cfg in CONFIGS:
                w = one_compare(wl, cfg, port)
                res.setdefault((wl, cfg), []).append([x[0] for x in w])
                print("# run %d %s/%s: %s" % (r + 1, wl, cfg, " ".join(
                    "%s %.0f ns (%d)" % (name, ns, n) for name, (ns, n) in
                    zip(("ours", "before", "bpftrace") if BEFORE else
                        ("ours", "bpftrace"), w))), flush=True)
    print()
    print("Whole system at %d Hz, both attached in the same %.0f s window; "
          "medians of %d runs (ratio: median of the per-run ratios)" %
          (HZ, SECS, REPEAT))
    print()
    extra = " before ns/sample | ours/before |" if BEFORE else ""
    print("| workload | ours | ours ns/sample | bpftrace ns/sample | ratio |" + extra)
    print("|---|---|---|---|---|" + ("---|---|" if BEFORE else ""))
    for wl in WORKLOADS:
        for cfg in CONFIGS:
            runs = res[(wl, cfg)]
            line = "| %s | %s | %.0f | %.0f | %.2f |" % (
                wl, cfg, med([r[0] for r in runs]), med([r[-1] for r in runs]),
                med([r[0] / r[-1] for r in runs if r[-1] == r[-1] and r[-1] > 0]))
            if BEFORE:
                line += " %.0f | %.2f |" % (
                    med([r[1] for r in runs]),
                    med([r[0] / r[1] for r in runs if r[1] == r[1] and r[1] > 0]))
            print(line)
    pts = []
    for r in range(REPEAT):
        for d in DEPTHS:
            ns, fr = one_depth(d)
            if fr is not None and ns == ns:
                pts.append((fr, ns))
                print("# depth %d: %.1f user frames, %.0f ns/sample" % (d, fr, ns),
                      flush=True)
    if len(pts) >= 2 and len({p[0] for p in pts}) >= 2:
        mx = statistics.mean(p[0] for p in pts)
        my = statistics.mean(p[1] for p in pts)
        sxx = sum((p[0] - mx) ** 2 for p in pts)
        slope = sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx
        print()
        print("Ours alone on recurse (-pid, -tracers native, %d Hz), depths %s: "
              "%.1f ns per user frame, %.0f ns fixed per sample" %
              (HZ, " ".join(map(str, DEPTHS)), slope, my - slope * mx))
    if fd >= 0:
        os.close(fd)
    shutil.rmtree(TMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
