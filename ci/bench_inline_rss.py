#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Inline frames on a busy host (make bench-inline-rss): the daemon's memory
with and without -inline-frames, whole system, while libc-, Python- and
compiler-heavy workloads run.

Method
- Workloads, for the whole benchmark: tests/workloads qsort (libc: its
  debug file comes from libc6-dbg), pyenv's Python 3.13 in a loop of json
  and re (libpython3.13 is built -g: 15 MiB of .debug_info, the largest
  here), gcc compiling one of our files in a loop (cc1: no debug info, so
  no table: its frames cost only the lookup that finds none), and the
  inline workload (-O2 -g); plus whatever else runs on the machine.
- Three runs of BENCH_SECONDS (20) at 99 Hz, whole system: without
  -inline-frames; with it on an empty cache directory (tables built from
  DWARF); with it again on that directory (tables read from the cache).
- RSS: VmRSS read every 0.25 s; "steady" is the median over the second
  half of the run, "peak" VmHWM read last before the exit (libdw's heap
  while a table is built shows there).  The exit summary gives the tables'
  count, bytes and build time.

Environment: EP_BIN, EP_WORKLOADS, EP_SRCDIR (set by make), BENCH_SECONDS.
"""
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

EP = os.environ.get("EP_BIN", "./ebpf-profiler")
WL = os.environ.get("EP_WORKLOADS", "build/workloads")
SRC = os.environ.get("EP_SRCDIR", ".")
SECS = int(os.environ.get("BENCH_SECONDS", "20"))
PY = "/root/.pyenv/versions/3.13.0/bin/python3.13"
PY_LOOP = ("import json, re, time\n"
           "end = time.time() + SECS\n"
           "d = {'k' + str(i): [i, str(i) * 3, {'x': i}] for i in range(2000)}\n"
           "while time.time() < end:\n"
           "    s = json.dumps(d)\n"
           "    json.loads(s)\n"
           "    re.findall(r'\"k(\\d+)\"', s)\n")


def status_kb(pid, key):
    try:
        with open("/proc/%d/status" % pid) as f:
            m = re.search(r"%s:\s+(\d+) kB" % key, f.read())
        return int(m.group(1)) if m else None
    except OSError:
        return None


def start_workloads(tmp, secs):
    procs = []
    procs.append(subprocess.Popen([os.path.join(WL, "qsort"), str(secs)],
                                  stdout=subprocess.DEVNULL))
    procs.append(subprocess.Popen([os.path.join(WL, "inline"), str(secs)],
                                  stdout=subprocess.DEVNULL))
    if os.access(PY, os.X_OK):
        procs.append(subprocess.Popen([PY, "-c", PY_LOOP.replace("SECS", str(secs))]))
    cc = ("end=$(( $(date +%%s) + %d )); while [ $(date +%%s) -lt $end ]; do "
          "gcc -O2 -I%s -I%s/bpf -I%s/userspace -I%s/store -I%s/build "
          "-I%s/build/gen -I%s/build/skel -c %s/userspace/dwinline.c "
          "-o %s/cc.o; done") % ((secs, ) + (SRC, ) * 8 + (tmp, ))
    # its own group: the gcc it is running goes with it
    procs.append(subprocess.Popen(["sh", "-c", cc], start_new_session=True))
    return procs


def run(tmp, name, extra):
    out = os.path.join(tmp, name + ".folded")
    errp = os.path.join(tmp, name + ".err")
    cmd = [EP, "-samples-per-second", "99", "-duration", "%ds" % SECS,
           "-output", out] + extra
    with open(errp, "w") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    t0 = time.time()
    rss, hwm, anon = [], None, None
    while p.poll() is None:
        v = status_kb(p.pid, "VmRSS")
        if v:
            rss.append((time.time() - t0, v))
            hwm = status_kb(p.pid, "VmHWM") or hwm
            anon = status_kb(p.pid, "RssAnon") or anon
        time.sleep(0.25)
    with open(errp) as f:
        text = f.read()
    summ = dict(re.findall(r"(\w+)=([0-9.]+)", text.splitlines()[-1]
                           if text.strip() else ""))
    tail = [v for t, v in rss if t >= SECS / 2]
    return {
        "name": name, "rc": p.returncode,
        "steady": statistics.median(tail) / 1024 if tail else 0,
        "peak": (hwm or 0) / 1024, "anon": (anon or 0) / 1024,
        "samples": summ.get("samples", "?"),
        "tables": summ.get("inline_tables", "-"),
        "bytes": float(summ.get("inline_bytes", 0)) / 1048576,
        "build_ms": summ.get("inline_build_ms", "-"),
        "built": summ.get("inline_loaded_built", "-"),
        "cached": summ.get("inline_loaded_cache", "-"),
        "rss_max_kb": summ.get("rss_max_kb", "?"),
    }


def main():
    if os.geteuid() != 0:
        print("bench-inline-rss: needs root (loads BPF)")
        return 1
    tmp = tempfile.mkdtemp(prefix="ep-bench-inline-")
    cache = os.path.join(tmp, "cache")
    total = 3 * (SECS + 15)
    procs = start_workloads(tmp, total)
    time.sleep(1.0)
    res = []
    try:
        res.append(run(tmp, "off", ["-cache-dir", cache + "-off"]))
        res.append(run(tmp, "on-cold", ["-inline-frames", "-cache-dir", cache]))
        res.append(run(tmp, "on-warm", ["-inline-frames", "-cache-dir", cache]))
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except OSError:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d s each at 99 Hz, whole system, workloads: qsort (libc), "
          "python3.13 json/re, gcc (cc1), inline" % SECS)
    print("%-8s %8s %10s %8s %8s %7s %9s %9s %6s %7s" %
          ("run", "samples", "steady MB", "peak MB", "anon MB", "tables",
           "table MB", "build ms", "built", "cached"))
    for r in res:
        print("%-8s %8s %10.1f %8.1f %8.1f %7s %9.2f %9s %6s %7s" %
              (r["name"], r["samples"], r["steady"], r["peak"], r["anon"],
               r["tables"], r["bytes"], r["build_ms"], r["built"],
               r["cached"]))
    return 0 if all(r["rc"] == 0 for r in res) else 1


if __name__ == "__main__":
    sys.exit(main())
