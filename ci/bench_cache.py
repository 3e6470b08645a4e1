#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Cache benchmark (make bench-cache): start-up with a cold and a warm
stack-delta cache on a machine running python3, node, java and a few native
programs; `cache warm` throughput over /usr/lib; store size per file.

startup_ms is the daemon's own figure: from start until the programs
(given with -pid: profiling the whole system, the daemon loads only the
running processes at start, and these sleep) are loaded and sampling is
live.  Medians of REPEAT runs.
Environment: EP_BIN, BENCH_REPEAT (5), BENCH_WARM_DIR (/usr/lib).
"""
import os, re, shutil, statistics, subprocess, sys, tempfile, time

EP = os.environ.get("EP_BIN", "./ebpf-profiler")
REPEAT = int(os.environ.get("BENCH_REPEAT", "5"))
WARM_DIR = os.environ.get("BENCH_WARM_DIR", "/usr/lib")
TMP = tempfile.mkdtemp(prefix="ep-bench-cache-")

JAVA_SRC = """
public class Sleep { public static void main(String[] a) throws Exception {
  Thread.sleep(600000); } }
"""


def start_programs():
    """The machine's workload: interpreters and native programs idling."""
    procs = []
    def spawn(cmd):
        try:
            procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
            return True
        except OSError:
            return False
    names = []
    if spawn(["/usr/bin/python3", "-c", "import time; time.sleep(600)"]):
        names.append("python3")
    if shutil.which("node") and spawn(["node", "-e", "setTimeout(()=>{}, 600000)"]):
        names.append("node")
    if shutil.which("javac") and shutil.which("java"):
        src = os.path.join(TMP, "Sleep.java")
        with open(src, "w") as f:
            f.write(JAVA_SRC)
        if subprocess.run(["javac", "-d", TMP, src]).returncode == 0 and \
                spawn(["java", "-cp", TMP, "Sleep"]):
            names.append("java")
    for cmd in (["sleep", "600"], ["bash", "-c", "sleep 600"],
                ["perl", "-e", "sleep 600"], ["gdb", "-batch", "-ex", "shell sleep 600"]):
        if shutil.which(cmd[0]) and spawn(cmd):
            names.append(cmd[0])
    time.sleep(3)  # let the JVM and node map their libraries
    return procs, names


def run_daemon(cache, procs):
    pids = [a for p in procs for a in ("-pid", str(p.pid))]
    r = subprocess.run([EP, "-duration", "1s", "-cache-dir", cache, "-output",
                        os.path.join(TMP, "p.folded")] + pids,
                       capture_output=True, text=True)
    vals = dict(re.findall(r"(\w+)=([\d.]+)", r.stderr))
    return {k: float(v) for k, v in vals.items()}


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    if os.geteuid() != 0:
        print("bench-cache: needs root", file=sys.stderr)
        return 1
    procs, names = start_programs()
    try:
        cold, warm, extracted, hits = [], [], [], []
        cold_load, warm_load = [], []
        for i in range(REPEAT):
            cache = os.path.join(TMP, "cache%d" % i)
            c = run_daemon(cache, procs)
            w = run_daemon(cache, procs)
            cold.append(c.get("startup_ms", 0))
            warm.append(w.get("startup_ms", 0))
            cold_load.append(c.get("load_ms", 0))
            warm_load.append(w.get("load_ms", 0))
            extracted.append(c.get("extracted", 0))
            hits.append(w.get("cache_hits", 0))
            shutil.rmtree(cache, ignore_errors=True)
        print("running: %s" % ", ".join(names))
        print()
        print("| start-up (median of %d) | startup_ms | of which loading the processes (load_ms) | files extracted | files from the cache |" % REPEAT)
        print("|---|---|---|---|---|")
        print("| cold cache | %.0f | %.0f | %.0f | 0 |" % (median(cold), median(cold_load), median(extracted)))
        print("| warm cache | %.0f | %.0f | 0 | %.0f |" % (median(warm), median(warm_load), median(hits)))
        print("| cold / warm | %.1fx | %.1fx | | |" % (median(cold) / max(median(warm), 1),
              median(cold_load) / max(median(warm_load), 0.1)))
    finally:
        for p in procs:
            p.kill()
            p.wait()
    # cache warm throughput and store size per file
    cache = os.path.join(TMP, "warm")
    t0 = time.time()
    r = subprocess.run([EP, "cache", "warm", "-cache-dir", cache, WARM_DIR],
                       capture_output=True, text=True)
    line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr
    vals = dict(re.findall(r"([\w/]+)=([\d.]+)", line))
    st = subprocess.run([EP, "cache", "stats", "-cache-dir", cache],
                        capture_output=True, text=True).stdout
    size = os.path.getsize(os.path.join(cache, "data.mdb"))
    elf = float(vals.get("elf", 0)) or 1
    print()
    print("`cache warm %s`: %s" % (WARM_DIR, line))
    print()
    print("| cache warm | files/s | MB/s | ELF files | seconds | store file | per ELF file |")
    print("|---|---|---|---|---|---|---|")
    print("| %s | %s | %s | %.0f | %s | %.1f MiB | %.1f KiB |" % (
        WARM_DIR, vals.get("files/s", "?"), vals.get("MB/s", "?"), elf,
        vals.get("seconds", "?"), size / 2**20, size / elf / 1024))
    print()
    print(st)
    shutil.rmtree(TMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
