#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Overhead benchmark (make bench): a CPU-bound native workload's throughput
with no profiler, with ebpf-profiler, with `perf record -g` (frame pointers),
`perf record --call-graph dwarf` and bpftrace, each at 20, 99 and 999 Hz,
whole system; per-sample BPF cost from the kernel's run-time statistics;
each tool's own CPU, peak RSS and output volume.

Method
- The workload is tests/workloads/split built without frame pointers, one
  instance per CPU, for BENCH_SECONDS.  Its throughput is work per CPU
  second: blocks of its inner loop over its own CPU time.  The kernel here
  does not account IRQ time apart (CONFIG_IRQ_TIME_ACCOUNTING is off on
  most distribution kernels), so the sample handler's time - the perf
  interrupt, the BPF program, perf's stack copy - is charged to the
  interrupted thread and shows as less work per CPU second.  Other load on
  the machine takes wall time, not the workload's CPU time, so this stays
  steady on a busy machine where rounds per wall second do not.  "work"
  compares medians with no profiler.
- Runs are interleaved: repeat r runs every configuration once, in a fresh
  random order, so drift on a noisy machine spreads over all of them.
- A profiler is started, then we wait until it is ready (ours: its metrics
  endpoint has its first snapshot, after the /proc scan; the others: 2 s),
  then the workload runs.  Agent CPU is the profiler process' utime+stime
  over the workload's run only (steady state; ours reports start-up apart).
- BPF cost: BPF_ENABLE_STATS is held for the whole benchmark (an fd, so a
  neighbour writing kernel.bpf_stats_enabled cannot switch it off), and the
  cost per sample is run_time_ns / run_cnt of the tool's own perf_event
  programs (from its /proc/PID/fdinfo), tail calls included.  bpftrace's
  programs are read the same way; perf has no BPF program (its kernel cost
  shows in the throughput only).
- What each tool does per sample differs: perf -g and bpftrace walk frame
  pointers, which this workload does not keep, so their stacks stop after
  a frame or two (cheap and wrong); perf --call-graph dwarf copies 8 KiB of
  stack per sample and unwinds it later; ours unwinds completely in the
  kernel and aggregates and symbolizes online.  perf's CPU is its recording
  only: "post s" is the CPU of `perf report` turning the recording into
  stacks (first repeat), which ours has already done.
- bpftrace's maps are raised to 65536 keys (BPFTRACE_MAP_KEYS_MAX) so that
  it does not drop samples when its default 4096 distinct stacks fill.
- RSS: peak resident set (VmHWM).  For ours "anon" is the private part; the
  rest is shared libraries, the cache's mmap and the mmap'ed BPF row array,
  which is kernel memory the other tools hold too but do not map.

Environment: EP_BIN, EP_WORKLOADS (set by make), BENCH_SECONDS (8),
BENCH_REPEAT (3), BENCH_RATES ("20 99 999"),
BENCH_TOOLS ("ours perf perf-dwarf bpftrace").
"""
import ctypes
import os
import random
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

EP = os.environ.get("EP_BIN", "./ebpf-profiler")
WL = os.environ.get("EP_WORKLOADS", "build/workloads")
SECS = float(os.environ.get("BENCH_SECONDS", "8"))
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
RATES = [int(r) for r in os.environ.get("BENCH_RATES", "20 99 999").split()]
TOOLS = os.environ.get("BENCH_TOOLS", "ours perf perf-dwarf bpftrace").split()
NCPU = os.cpu_count() or 1
WORKLOAD = os.path.join(WL, "split-nofp-pie")
TMP = tempfile.mkdtemp(prefix="ep-bench-")
METRICS_PORT = 19000 + os.getpid() % 1000


def run_workload():
    """One instance per CPU for SECS; returns inner-loop blocks per CPU
    second, over all instances."""
    procs = [subprocess.Popen([WORKLOAD, str(SECS)], stdout=subprocess.PIPE,
                              text=True) for _ in range(NCPU)]
    blocks = cpu = 0
    for p in procs:
        out, _ = p.communicate()
        m = re.search(r"blocks=(\d+) cpu_s=([0-9.]+)", out)
        if m:
            blocks += int(m.group(1))
            cpu += float(m.group(2))
    return blocks / cpu if cpu else 0


def proc_cpu(pid):
    """utime + stime of a process (all its threads), seconds."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def proc_status_mb(pid, key):
    try:
        with open("/proc/%d/status" % pid) as f:
            m = re.search(r"%s:\s+(\d+) kB" % key, f.read())
        return int(m.group(1)) / 1024 if m else None
    except OSError:
        return None


def enable_bpf_stats():
    """BPF_ENABLE_STATS: run-time statistics on while the fd is open."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(16)  # enable_stats.type = RUN_TIME (0)
    fd = libc.syscall(321, 32, attr, 16)  # SYS_bpf, BPF_ENABLE_STATS
    if fd < 0:
        # an old kernel: the sysctl (global; a neighbour may reset it)
        try:
            with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
                f.write("1")
        except OSError:
            pass
    return fd


def bpf_prog_ids(pid):
    ids = set()
    d = "/proc/%d/fdinfo" % pid
    try:
        for fd in os.listdir(d):
            try:
                with open(os.path.join(d, fd)) as f:
                    m = re.search(r"^prog_id:\s+(\d+)", f.read(), re.M)
                if m:
                    ids.add(int(m.group(1)))
            except OSError:
                pass
    except OSError:
        pass
    return ids


def perf_event_prog_stats(ids):
    """run_time_ns and run_cnt summed over those perf_event programs."""
    ns = cnt = 0
    for i in ids:
        out = subprocess.run(["bpftool", "prog", "show", "id", str(i)],
                             capture_output=True, text=True).stdout
        m = re.search(r"perf_event .*?run_time_ns (\d+) run_cnt (\d+)", out, re.S)
        if m:
            ns += int(m.group(1))
            cnt += int(m.group(2))
    return ns, cnt


def wait_ours_ready(p, timeout=120):
    """Until the metrics endpoint has its first snapshot (after start-up)."""
    end = time.time() + timeout
    url = "http://127.0.0.1:%d/metrics" % METRICS_PORT
    while time.time() < end and p.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if b"ebpf_profiler_startup_seconds" in r.read():
                    return
        except OSError:
            pass
        time.sleep(0.1)


def start_tool(tool, rate):
    """Start a profiler in the background; returns its Popen."""
    env = dict(os.environ)
    if tool == "ours":
        cmd = [EP, "-samples-per-second", str(rate), "-output",
               os.path.join(TMP, "ours.folded"), "-cache-dir",
               os.path.join(TMP, "cache"), "-metrics-address",
               str(METRICS_PORT)]
    elif tool == "perf":
        cmd = ["perf", "record", "-g", "-a", "-F", str(rate), "-o",
               os.path.join(TMP, "perf.data")]
    elif tool == "perf-dwarf":
        cmd = ["perf", "record", "--call-graph", "dwarf", "-a", "-F",
               str(rate), "-o", os.path.join(TMP, "perf.data")]
    else:
        env["BPFTRACE_MAP_KEYS_MAX"] = "65536"
        cmd = ["bpftrace", "-e",
               "profile:hz:%d { @[kstack, ustack] = count(); }" % rate]
    err = open(os.path.join(TMP, tool + ".err"), "w")
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
    if tool == "ours":
        wait_ours_ready(p)
    else:
        time.sleep(2.0)  # attached
    return p


def interrupt(p, timeout=120):
    """SIGINT (each tool writes its output and exits), then SIGKILL after
    timeout seconds."""
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def stop_tool(p, tool):
    interrupt(p)
    with open(os.path.join(TMP, tool + ".err")) as f:
        return f.read()


def output_bytes(tool):
    """What the tool wrote: perf's recording, or our rotated files."""
    if tool.startswith("perf"):
        try:
            return os.path.getsize(os.path.join(TMP, "perf.data"))
        except OSError:
            return None
    if tool == "ours":
        n = 0
        for f in os.listdir(TMP):
            if f.startswith("ours-"):
                n += os.path.getsize(os.path.join(TMP, f))
                os.unlink(os.path.join(TMP, f))
        return n
    return None


def perf_postprocess_s():
    """CPU seconds `perf report` takes to turn the recording into stacks."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["perf", "report", "-i", os.path.join(TMP, "perf.data"),
                    "--stdio", "-g", "folded"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure_once(tool, rate, res, first):
    """One run of a configuration; appends to res."""
    if tool is None:
        res["thr"].append(run_workload())
        return
    p = start_tool(tool, rate)
    t0 = time.time()
    cpu0 = proc_cpu(p.pid)
    ids = bpf_prog_ids(p.pid)
    ns0, cnt0 = perf_event_prog_stats(ids)
    thr = run_workload()
    cpu1 = proc_cpu(p.pid)
    ns1, cnt1 = perf_event_prog_stats(ids)
    secs = time.time() - t0
    if cpu0 is not None and cpu1 is not None:
        res["cpu"].append((cpu1 - cpu0) / secs * 100)
    if cnt1 > cnt0:
        res["bpf"].append((ns1 - ns0) / (cnt1 - cnt0))
    for key, field in (("rss", "VmHWM"), ("anon", "RssAnon")):
        v = proc_status_mb(p.pid, field)
        if v is not None:
            res[key].append(v)
    err = stop_tool(p, tool)
    res["thr"].append(thr)
    out = output_bytes(tool)
    if out is not None:
        res["out"].append(out / secs / 1024)
    if tool == "ours":
        for key in ("extracted", "syncs"):
            m = re.search(r"\b%s=(\d+)" % key, err)
            if m:
                res[key].append(int(m.group(1)))
    if tool.startswith("perf") and first:
        res["post"].append(perf_postprocess_s())


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main():
    if os.geteuid() != 0:
        print("bench: needs root", file=sys.stderr)
        return 1
    if not os.access(WORKLOAD, os.X_OK):
        print("bench: build the workloads first (make workloads)", file=sys.stderr)
        return 1
    tools = [t for t in TOOLS
             if t == "ours" or shutil.which(t.split("-")[0])]
    configs = [(None, 0)] + [(t, r) for t in tools for r in RATES]
    keys = ("thr", "cpu", "rss", "anon", "bpf", "out", "post", "extracted", "syncs")
    results = {c: {k: [] for k in keys} for c in configs}
    stats_fd = enable_bpf_stats()
    print("workload: %d x %s for %.0f s; %d interleaved runs of %d "
          "configurations, medians" % (NCPU, os.path.basename(WORKLOAD), SECS,
                                        REPEAT, len(configs)))
    # warm our cache once (start-up is not what this measures)
    p = start_tool("ours", 20)
    stop_tool(p, "ours")
    output_bytes("ours")
    for r in range(REPEAT):
        order = configs[:]
        random.shuffle(order)
        for tool, rate in order:
            measure_once(tool, rate, results[(tool, rate)], r == 0)
        print("  repeat %d/%d done" % (r + 1, REPEAT), file=sys.stderr)
    if stats_fd >= 0:
        os.close(stats_fd)

    def med(c, k):
        v = results[c][k]
        return statistics.median(v) if v else None

    base = med((None, 0), "thr")
    print()
    print("| profiler | Hz | work per CPU-s | vs none | BPF ns/sample "
          "| agent CPU % of a core | peak RSS MB (anon) | output KB/s "
          "| post s | notes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c in configs:
        tool, rate = c
        thr = med(c, "thr")
        notes = []
        if tool == "ours":
            notes.append("extracted %s, syncs %s per run with start-up" % (
                fmt(med(c, "extracted"), ".0f"), fmt(med(c, "syncs"), ".0f")))
        spread = results[c]["thr"]
        if len(spread) > 1 and thr:
            notes.append("work spread %.1f%%" % (
                (max(spread) - min(spread)) / thr * 100))
        rss = med(c, "rss")
        anon = med(c, "anon") if tool == "ours" else None
        print("| %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %s |" % (
            tool or "none", rate or "-", thr or 0,
            "%+.2f%%" % ((thr / base - 1) * 100) if base and thr and tool else "-",
            fmt(med(c, "bpf"), ".0f"), fmt(med(c, "cpu"), ".2f"),
            "-" if rss is None else "%.1f%s" % (
                rss, " (%.1f)" % anon if anon is not None else ""),
            fmt(med(c, "out"), ".0f"), fmt(med(c, "post"), ".1f"),
            "; ".join(notes)))
    shutil.rmtree(TMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
