#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Overhead benchmark (make bench): a CPU-bound native workload's throughput
with no profiler, with ebpf-profiler at 20, 99 and 999 Hz, and with
`perf record -g` and bpftrace at the same rates, side by side in one run;
per-sample BPF cost from the kernel's bpf_stats; agent CPU and RSS.

Each configuration runs REPEAT times (median reported): the machine is
noisy, so compare ratios within one run, not absolute numbers across runs.
Environment: EP_BIN, EP_WORKLOADS (set by make), BENCH_SECONDS (8),
BENCH_REPEAT (3), BENCH_RATES ("20 99 999"), BENCH_TOOLS ("ours perf bpftrace").
"""
import os, re, shutil, signal, statistics, subprocess, sys, tempfile, time

EP = os.environ.get("EP_BIN", "./ebpf-profiler")
WL = os.environ.get("EP_WORKLOADS", "build/workloads")
SECS = float(os.environ.get("BENCH_SECONDS", "8"))
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
RATES = [int(r) for r in os.environ.get("BENCH_RATES", "20 99 999").split()]
TOOLS = os.environ.get("BENCH_TOOLS", "ours perf bpftrace").split()
NCPU = os.cpu_count() or 1
WORKLOAD = os.path.join(WL, "split-nofp-pie")
TMP = tempfile.mkdtemp(prefix="ep-bench-")


def run_workload():
    """One instance per CPU for SECS; returns total rounds per second."""
    procs = [subprocess.Popen([WORKLOAD, str(SECS)], stdout=subprocess.PIPE,
                              text=True) for _ in range(NCPU)]
    total = 0
    for p in procs:
        out, _ = p.communicate()
        m = re.search(r"rounds=(\d+)", out)
        total += int(m.group(1)) if m else 0
    return total / SECS


def proc_cpu(pid):
    """utime + stime of a process, seconds."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def proc_hwm_mb(pid):
    """Peak resident set of a process, MiB."""
    try:
        with open("/proc/%d/status" % pid) as f:
            m = re.search(r"VmHWM:\s+(\d+) kB", f.read())
        return int(m.group(1)) / 1024 if m else None
    except OSError:
        return None


def set_bpf_stats(on):
    try:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write("1" if on else "0")
    except OSError:
        pass


def bpftrace_stats():
    """run_time_ns and run_cnt of bpftrace's perf_event programs."""
    out = subprocess.run(["bpftool", "prog", "show"], capture_output=True,
                         text=True).stdout
    ns = cnt = 0
    for m in re.finditer(r"perf_event\s+name \S+.*?run_time_ns (\d+) run_cnt (\d+)", out):
        ns += int(m.group(1))
        cnt += int(m.group(2))
    return ns, cnt


def start_tool(tool, rate):
    """Start a profiler in the background; returns (Popen, finish)."""
    if tool == "ours":
        cmd = [EP, "-samples-per-second", str(rate), "-output",
               os.path.join(TMP, "ours.folded"), "-cache-dir",
               os.path.join(TMP, "cache")]
    elif tool == "perf":
        cmd = ["perf", "record", "-g", "-a", "-F", str(rate), "-o",
               os.path.join(TMP, "perf.data")]
    else:
        cmd = ["bpftrace", "-e",
               "profile:hz:%d { @[kstack, ustack] = count(); }" % rate]
    err = open(os.path.join(TMP, tool + ".err"), "w")
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    time.sleep(2.0 if tool != "perf" else 1.0)  # attached and warmed up
    return p


def stop_tool(p, tool):
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    with open(os.path.join(TMP, tool + ".err")) as f:
        return f.read()


def measure(tool, rate):
    """Throughput with tool at rate, and the tool's own costs."""
    res = {"thr": [], "cpu": [], "rss": [], "bpf": []}
    for _ in range(REPEAT):
        if tool is None:
            res["thr"].append(run_workload())
            continue
        set_bpf_stats(True)
        p = start_tool(tool, rate)
        t0 = time.time()
        cpu0 = proc_cpu(p.pid)
        thr = run_workload()
        cpu1 = proc_cpu(p.pid)
        if cpu0 is not None and cpu1 is not None:
            # steady state only: start-up (the /proc scan) is measured
            # apart, as startup_ms
            res["cpu"].append((cpu1 - cpu0) / (time.time() - t0) * 100)
        if tool == "bpftrace":
            ns, cnt = bpftrace_stats()
            if cnt:
                res["bpf"].append(ns / cnt)
        hwm = proc_hwm_mb(p.pid)
        if hwm is not None:
            res["rss"].append(hwm)
        err = stop_tool(p, tool)
        set_bpf_stats(False)
        res["thr"].append(thr)
        if tool == "ours":
            m = re.search(r"bpf_ns_per_sample=(\d+)", err)
            if m:
                res["bpf"].append(float(m.group(1)))
    return {k: (statistics.median(v) if v else None) for k, v in res.items()
            if not k.startswith("_")}


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main():
    if os.geteuid() != 0:
        print("bench: needs root", file=sys.stderr)
        return 1
    if not os.access(WORKLOAD, os.X_OK):
        print("bench: build the workloads first (make workloads)", file=sys.stderr)
        return 1
    tools = [t for t in TOOLS if t == "ours" or shutil.which(t)]
    print("workload: %d x %s for %.0f s; %d runs each, medians" %
          (NCPU, os.path.basename(WORKLOAD), SECS, REPEAT))
    base = measure(None, 0)["thr"]
    rows = [("none", "-", base, None, None, None)]
    for tool in tools:
        for rate in RATES:
            r = measure(tool, rate)
            rows.append((tool, rate, r["thr"], r["bpf"], r["cpu"], r["rss"]))
            print("  done: %s %s Hz" % (tool, rate), file=sys.stderr)
    print()
    print("| profiler | Hz | throughput (rounds/s) | vs none | BPF ns/sample | agent CPU % of a core | agent max RSS MB |")
    print("|---|---|---|---|---|---|---|")
    for tool, rate, thr, bpf, cpu, rss in rows:
        print("| %s | %s | %.1f | %.1f%% | %s | %s | %s |" % (
            tool, rate, thr, (thr / base - 1) * 100 if base else 0,
            fmt(bpf, ".0f"), fmt(cpu, ".2f"), fmt(rss, ".1f")))
    shutil.rmtree(TMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
