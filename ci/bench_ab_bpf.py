#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Per-trace BPF cost of two builds side by side (make bench-ab): the
same workload profiled by the build before (EP_BIN_BEFORE) and after
(EP_BIN), alternating, N runs each, with kernel.bpf_stats_enabled; the
kernel's own accounting (bpf_ns_per_trace in the summary).  Medians, and
their ratio.  Workload: BENCH_CMD (default: python3.11 on the 60/30/10
split), 4 s at 999 Hz per run.
Environment: EP_BIN, EP_BIN_BEFORE, EP_SRCDIR, BENCH_REPEAT (5), BENCH_CMD.
"""
import os, re, shlex, statistics, subprocess, sys, tempfile, time

SRC = os.environ.get("EP_SRCDIR", ".")
AFTER = os.environ.get("EP_BIN", "./ebpf-profiler")
BEFORE = os.environ.get("EP_BIN_BEFORE")
N = int(os.environ.get("BENCH_REPEAT", "5"))
CMD = shlex.split(os.environ.get(
    "BENCH_CMD", "/usr/bin/python3.11 %s/tests/workloads/python/split.py 30" % SRC))
OUT = os.path.join(tempfile.mkdtemp(prefix="ep-bench-ab-"), "o.folded")


def stats(on):
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1" if on else "0")


def run(binary):
    w = subprocess.Popen(CMD, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.7)
    stats(True)
    p = subprocess.run([binary, "-pid", str(w.pid), "-duration", "4s",
                        "-samples-per-second", "999", "-no-cache", "-output", OUT],
                       stderr=subprocess.PIPE, text=True)
    stats(False)
    w.kill()
    w.wait()
    v = dict(re.findall(r"(\w+)=([\d.]+)", p.stderr))
    return (float(v.get("bpf_ns_per_trace", "nan")), int(v.get("complete", 0)),
            int(v.get("samples", 0)))


def main():
    if not BEFORE:
        sys.exit("bench-ab: set EP_BIN_BEFORE to the build to compare with")
    before, after = [], []
    for i in range(N):
        a, b = run(BEFORE), run(AFTER)
        before.append(a[0])
        after.append(b[0])
        print("run %d: before %.0f ns (%d/%d complete), after %.0f ns (%d/%d complete)"
              % (i + 1, a[0], a[1], a[2], b[0], b[1], b[2]), flush=True)
    mb, ma = statistics.median(before), statistics.median(after)
    print("median per-trace BPF cost: before %.0f ns, after %.0f ns, ratio %.3f"
          % (mb, ma, ma / mb))


if __name__ == "__main__":
    main()
