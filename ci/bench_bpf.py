#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""BPF cost benchmark (make bench-bpf): the kernel's own accounting
(kernel.bpf_stats_enabled=1, run_time_ns / run_cnt of our programs) for a
profile of one workload at 999 Hz: per trace sent (the unwinding cost) and
per run of the entry program; the stack-delta unwinder beside a
frame-pointer walk; the memory of our BPF maps.  Medians of REPEAT runs.
(Extraction time and rows per file: make bench-extract.)
Environment: EP_BIN, EP_WORKLOADS, EP_SRCDIR, BENCH_REPEAT (5).
"""
import os, re, statistics, subprocess, sys, tempfile, time

EP = os.environ.get("EP_BIN", "./ebpf-profiler")
WL = os.environ.get("EP_WORKLOADS", "build/workloads")
SRC = os.environ.get("EP_SRCDIR", ".")
REPEAT = int(os.environ.get("BENCH_REPEAT", "5"))
TMP = tempfile.mkdtemp(prefix="ep-bench-bpf-")
OUR_MAPS = ("traces", "events", "offcpu_scratch", "scratch_map", "progs", "pid_info",
            "mappings", "delta_pages", "delta_rows", "delta_chunk", "rules",
            "reported", "pid_filter", "cgroup_filter", "py_procs",
            "profiler.rodata", "profiler.bss", "profiler.data")


def set_stats(on):
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1" if on else "0")


def map_memory():
    """Sum of memlock of our maps while a daemon runs."""
    out = subprocess.run(["bpftool", "map", "show"], capture_output=True,
                         text=True).stdout
    total, per = 0, {}
    for m in re.finditer(r"^\d+: \S+\s+name (\S+).*?memlock (\d+)B", out,
                         re.M | re.S):
        name, mem = m.group(1), int(m.group(2))
        if name in OUR_MAPS or name.startswith("profile"):
            per[name] = per.get(name, 0) + mem
            total += mem
    return total, per


def profile(cmd, extra=(), want_maps=False):
    w = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    set_stats(True)
    p = subprocess.Popen([EP, "-pid", str(w.pid), "-duration", "3s",
                          "-samples-per-second", os.environ.get("BENCH_HZ", "999"), "-no-cache", "-output",
                          os.path.join(TMP, "o.folded")] + list(extra),
                         stderr=subprocess.PIPE, text=True)
    maps = None
    if want_maps:
        time.sleep(2)
        maps = map_memory()
    _, err = p.communicate()
    set_stats(False)
    w.kill()
    w.wait()
    v = dict(re.findall(r"(\w+)=([\d.]+)", err))
    return (float(v.get("bpf_ns_per_trace", "nan")),
            float(v.get("bpf_ns_per_sample", "nan")), maps)


def frames(path):
    """Mean frames per stack of the last profile (user + kernel)."""
    total = n = 0
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            c = int(count)
            total += c * (stack.count(";"))
            n += c
    return total / n if n else 0


def main():
    if os.geteuid() != 0:
        print("bench-bpf: needs root", file=sys.stderr)
        return 1
    py = os.path.join(SRC, "tests/workloads/python/split.py")
    cases = [
        ("native, no frame pointers (stack deltas)",
         [os.path.join(WL, "split-nofp-pie"), "60"], []),
        ("native, frame pointers, stack deltas",
         [os.path.join(WL, "split-fp"), "60"], []),
        ("native, frame pointers, frame-pointer walk",
         [os.path.join(WL, "split-fp"), "60"], ["-frame-pointers-only"]),
        ("recursion 300 deep (stack deltas)",
         [os.path.join(WL, "recurse"), "60"], []),
        ("Python 3.11 (Debian), mixed stacks",
         ["/usr/bin/python3.11", py, "60"], []),
    ]
    print("| workload (999 Hz, -pid) | frames/stack | BPF ns per trace | BPF ns per entry run |")
    print("|---|---|---|---|")
    maps = None
    for name, cmd, extra in cases:
        if not os.access(cmd[0], os.X_OK):
            continue
        per_trace, per_run, fr = [], [], []
        for i in range(REPEAT):
            t, r, m = profile(cmd, extra, want_maps=maps is None)
            maps = maps or m
            per_trace.append(t)
            per_run.append(r)
            fr.append(frames(os.path.join(TMP, "o.folded")))
        print("| %s | %.0f | %.0f | %.0f |" % (name, statistics.median(fr),
              statistics.median(per_trace), statistics.median(per_run)))
    if maps:
        total, per = maps
        print()
        print("BPF map memory (memlock, default sizes): %.1f MiB: %s" % (
            total / 2**20, ", ".join("%s %.0f KiB" % (k, v / 1024)
                                     for k, v in sorted(per.items(),
                                                        key=lambda x: -x[1]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
