#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Footprint benchmark (make bench-footprint): what the daemon costs on a
busy host, in three parts (BENCH_PARTS, default "rss execs startup").

rss: BENCH_PROCS (3,000) sleeping processes of BENCH_BINARIES (30) distinct
  binaries (one small C program built 30 times with a different string, so
  30 build ids and 30 files to identify); the daemon runs whole-system for
  BENCH_SECONDS (12) at 99 Hz.  Reported: VmRSS steady (the median of the
  readings of the second half of the run), VmHWM (the peak) read just
  before the end, RssAnon and RssFile, and the BPF maps the daemon mmaps
  (anon_inode:bpf-map in its smaps: kernel memory that the maps hold
  whether or not they are mapped, counted in RSS as shared pages),
  separately.
execs: a spawner execs each of BENCH_EXECS ("/bin/true;/bin/sleep 0.05":
  processes that end at once, and ones that live 50 ms without using the
  CPU) BENCH_RATE (300) times a second for BENCH_SECONDS while the daemon
  runs; the daemon's user+system time
  over that window, in % of one core (the daemon is started first and its
  start-up is not counted), beside the same window just before without
  the spawner (what the rest of a shared machine costs it); medians of
  BENCH_REPEAT (5) such pairs.
startup: a JVM, node, python, perl and ruby, each busy about 20% of the
  time; with a warm cache (a first run fills it: every file the runtimes
  map) and cold: the daemon's own startup_ms (from its start until the
  BPF programs are attached and sampling is live; it included loading
  every process when processes loaded at start), and the time from the
  daemon's exec until every runtime is loaded (its stack deltas and its
  runtime's tables in the BPF maps: from then on its stacks are
  complete), which with load-on-first-sample includes the wait for each
  runtime's first sample; and the longest single load.  Medians of
  BENCH_REPEAT (5) runs, with the load average over them (the machine is
  shared).  EP_BEFORE names an earlier build to run in turn with EP in
  every repeat, so that both see the same neighbours.  A build with
  -keep-programs also gets a third row, "warm, programs kept": the cold
  run is made with the flag (at its exit it pins a verified set of its
  programs in a BPF file system: /sys/fs/bpf if mounted, else one the
  benchmark mounts in its temporary directory), and the third run takes
  that set instead of verifying.

Medians everywhere: the machine is shared and noisy.  Needs root.
Environment: EP_BIN, EP_BEFORE, BENCH_PARTS, BENCH_PROCS, BENCH_BINARIES,
BENCH_SECONDS, BENCH_RATE, BENCH_EXECS, BENCH_REPEAT.
"""
import os, re, shutil, signal, statistics, subprocess, sys, tempfile, \
    threading, time

EP = os.environ.get("EP_BIN", "./ebpf-profiler")
PARTS = os.environ.get("BENCH_PARTS", "rss execs startup").split()
NPROCS = int(os.environ.get("BENCH_PROCS", "3000"))
NBIN = int(os.environ.get("BENCH_BINARIES", "30"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "12"))
RATE = float(os.environ.get("BENCH_RATE", "300"))
EXECS = os.environ.get("BENCH_EXECS", "/bin/true;/bin/sleep 0.05").split(";")
REPEAT = int(os.environ.get("BENCH_REPEAT", "5"))
TMP = tempfile.mkdtemp(prefix="ep-bench-footprint-")
HZ = os.sysconf("SC_CLK_TCK")

SLEEPER_SRC = r"""
#include <unistd.h>
/* distinct contents, so a distinct build id and file id per copy */
const char tag[] = "ep-bench-footprint sleeper %d";
int main(void) { volatile const char *t = tag; (void)t; pause(); return 0; }
"""


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def status_kb(pid):
    """VmRSS, VmHWM, RssAnon, RssFile, RssShmem of pid, in KiB."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"):
                out[k] = int(v.split()[0])
    return out


def rss_parts_kb(pid):
    """Resident KiB of pid by kind: the BPF maps (arrays, rings) it has
    mmap'ed, the cache's data file, its heap and anonymous mappings, and
    the rest (its binary and libraries)."""
    parts = {"bpf": 0, "cache": 0, "anon": 0, "files": 0}
    kind = None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                f6 = line.split(None, 5)
                name = f6[5].strip() if len(f6) > 5 else ""
                kind = "bpf" if name.startswith("anon_inode:bpf") else \
                    "cache" if name.endswith("data.mdb") else \
                    "anon" if name in ("", "[heap]") else "files"
            elif line.startswith("Rss:"):
                parts[kind] += int(line.split()[1])
    return parts


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def summary(text):
    """The exit summary's figures (its line starts with samples=)."""
    out = {}
    for line in text.splitlines():
        if line.startswith("samples="):
            for k, v in re.findall(r"(\w+)=(\d+(?:\.\d+)?)(?=\s|$)", line):
                out[k] = float(v)
    return out


def start_daemon(args, errpath):
    err = open(errpath, "w")
    p = subprocess.Popen([EP] + args, stdout=subprocess.DEVNULL, stderr=err)
    err.close()
    return p


def wait_started(p, errpath, timeout=120):
    """Until the daemon says it started (its log at -v)."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        if p.poll() is not None:
            return False
        with open(errpath) as f:
            if "started in" in f.read():
                return True
        time.sleep(0.05)
    return False


def stop_daemon(p, errpath):
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=120)
    with open(errpath) as f:
        return summary(f.read())


# ---- rss ------------------------------------------------------------------

def build_sleepers():
    paths = []
    for i in range(NBIN):
        src = os.path.join(TMP, "sleeper%d.c" % i)
        exe = os.path.join(TMP, "sleeper%d" % i)
        with open(src, "w") as f:
            f.write(SLEEPER_SRC % i)
        subprocess.run(["cc", "-O2", "-Wl,--build-id", "-o", exe, src],
                       check=True)
        paths.append(exe)
    return paths


def part_rss():
    bins = build_sleepers()
    procs = []
    try:
        for i in range(NPROCS):
            procs.append(subprocess.Popen([bins[i % NBIN]],
                                          stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
        time.sleep(1)
        errpath = os.path.join(TMP, "rss.err")
        p = start_daemon(["-samples-per-second", "99", "-v", "-output",
                          os.path.join(TMP, "rss.folded")], errpath)
        t0 = time.time()
        if not wait_started(p, errpath):
            print("rss: the daemon did not start")
            p.kill()
            return
        started = time.time() - t0
        readings = []
        while time.time() - t0 < SECONDS:
            readings.append((time.time() - t0, status_kb(p.pid)))
            time.sleep(0.1)
        last = status_kb(p.pid)
        parts = rss_parts_kb(p.pid)
        s = stop_daemon(p, errpath)
    finally:
        for q in procs:
            q.kill()
        for q in procs:
            q.wait()
    half = [r for t, r in readings if t >= SECONDS / 2]
    steady = median([r["VmRSS"] for r in half])
    print("%d sleeping processes of %d binaries; the daemon started in "
          "%.2f s (startup_ms=%.0f), %d readings; load average %.1f" %
          (NPROCS, NBIN, started, s.get("startup_ms", -1), len(readings),
           loadavg()))
    print("start-up scan: listed=%.0f running=%.0f busy=%.0f ran=%.0f" %
          (s.get("scan_listed", -1), s.get("scan_running", -1),
           s.get("scan_busy", -1), s.get("scan_ran", -1)))
    print("summary: syncs=%.0f processes_tracked=%.0f files=%.0f "
          "mappings=%.0f rss_max_kb=%.0f" %
          (s.get("syncs", -1), s.get("processes_tracked", -1),
           s.get("files", -1), s.get("mappings", -1),
           s.get("rss_max_kb", -1)))
    print()
    print("| VmRSS steady MB | VmHWM peak MB | RssAnon MB | RssFile MB | "
          "of RSS at the end: BPF maps mmap'ed MB | cache file MB | heap "
          "and anonymous MB | binary and libraries MB |")
    print("|---|---|---|---|---|---|---|---|")
    print("| %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |" %
          (steady / 1024, last["VmHWM"] / 1024, last["RssAnon"] / 1024,
           last["RssFile"] / 1024, parts["bpf"] / 1024,
           parts["cache"] / 1024, parts["anon"] / 1024,
           parts["files"] / 1024))


# ---- execs ----------------------------------------------------------------

def spawner(argv, seconds, rate):
    """A child that spawns argv rate times a second for seconds, and writes
    how many it started, and in how long, to a file; returns its pid and
    the file."""
    out = os.path.join(TMP, "spawned")
    pid = os.fork()
    if pid:
        return pid, out
    n, t0 = 0, time.time()
    try:
        while time.time() - t0 < seconds:
            due = int((time.time() - t0) * rate)
            while n < due:
                os.posix_spawn(argv[0], argv, {})
                n += 1
            while True:
                try:
                    if os.waitpid(-1, os.WNOHANG)[0] == 0:
                        break
                except ChildProcessError:
                    break
            time.sleep(0.002)
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break
        with open(out, "w") as f:
            f.write("%d %.3f" % (n, time.time() - t0))
    finally:
        os._exit(0)


def part_execs():
    errpath = os.path.join(TMP, "execs.err")
    p = start_daemon(["-samples-per-second", "99", "-v", "-output",
                      os.path.join(TMP, "execs.folded")], errpath)
    if not wait_started(p, errpath):
        print("execs: the daemon did not start")
        p.kill()
        return
    time.sleep(1)
    rows = []
    for cmd in EXECS:
        argv = cmd.split()
        busy, idle, rates = [], [], []
        for _ in range(REPEAT):
            # the same window without the spawner first: what the rest
            # of the machine (other jobs' processes) costs the daemon
            c0, t0 = cpu_s(p.pid), time.time()
            time.sleep(SECONDS)
            c1, t1 = cpu_s(p.pid), time.time()
            sp, out = spawner(argv, SECONDS, RATE)
            os.waitpid(sp, 0)
            c2, t2 = cpu_s(p.pid), time.time()
            with open(out) as f:
                n, secs = f.read().split()
            rates.append(int(n) / float(secs))
            idle.append(100 * (c1 - c0) / (t1 - t0))
            busy.append(100 * (c2 - c1) / (t2 - t1))
        rows.append((cmd, median(rates), median(busy), median(idle),
                     median([b - i for b, i in zip(busy, idle)])))
    s = stop_daemon(p, errpath)
    print("medians of %d windows of %.0f s (with the spawner, and just "
          "before without it)" % (REPEAT, SECONDS))
    print("| exec'd | execs/s | agent CPU % of a core | without the spawner "
          "| difference |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| `%s` | %.0f | %.2f | %.2f | %.2f |" % r)
    print("whole run: syncs=%.0f exec events=%.0f unknown-pid events=%.0f" %
          (s.get("syncs", -1), s.get("process_events_exec", -1),
           s.get("process_events_unknown_pid", -1)))


# ---- startup --------------------------------------------------------------

JAVA_SRC = """
public class Busy { public static void main(String[] a) throws Exception {
  long s = 0;
  for (;;) { for (int i = 0; i < 2000000; i++) s += i; Thread.sleep(8); } } }
"""

# each works a millisecond or two, then sleeps 8 ms: sampled within the
# first tens of milliseconds of a run, without taking the machine
RUNTIMES = [
    ("node", ["node", "-e", "setInterval(() => { let s = 0; "
              "for (let i = 0; i < 2e6; i++) s += i; }, 8)"]),
    ("python3", ["/usr/bin/python3", "-c", "import time\nwhile 1:\n"
                 " sum(range(50000)); time.sleep(0.008)"]),
    ("perl", ["perl", "-e", "while (1) { my $s = 0; $s += $_ for 1..30000; "
              "select(undef, undef, undef, 0.008) }"]),
    ("ruby", ["ruby", "-e", "loop { s = 0; 30000.times { |i| s += i }; "
              "sleep 0.008 }"]),
]


def start_runtimes():
    procs = {}

    def spawn(name, cmd):
        if shutil.which(cmd[0]):
            procs[name] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL)
    src = os.path.join(TMP, "Busy.java")
    with open(src, "w") as f:
        f.write(JAVA_SRC)
    if shutil.which("javac") and \
            subprocess.run(["javac", "-d", TMP, src]).returncode == 0:
        spawn("java", ["java", "-cp", TMP, "Busy"])
    for name, cmd in RUNTIMES:
        spawn(name, cmd)
    time.sleep(3)  # the JVM and node map their libraries
    return procs


def is_bpffs(path):
    return subprocess.run(["stat", "-f", "-c", "%T", path],
                          capture_output=True,
                          text=True).stdout.strip() == "bpf_fs"


def keep_flags(ep):
    """-keep-programs and a directory on a BPF file system, for a build
    that has the flag; else []."""
    if "keep-programs" not in subprocess.run([ep, "-help"],
                                             capture_output=True,
                                             text=True).stdout:
        return []
    base = "/sys/fs/bpf"
    if not is_bpffs(base):
        base = os.path.join(TMP, "bpffs")
        os.makedirs(base, exist_ok=True)
        if not is_bpffs(base) and \
                subprocess.run(["mount", "-t", "bpf", "bpf", base]).returncode:
            return []
    return ["-keep-programs", "-keep-programs-dir",
            os.path.join(base, "ep-bench-%d" % os.getpid())]


def run_once(cache, pids, ep=None, extra=()):
    """One run: the daemon's startup_ms, the time from its exec until the
    last of pids is loaded (its "loaded" line at debug level; a build that
    loads every process before sampling says none: then its "started"
    line), and the longest load of one of pids.  The run ends when all
    are loaded, or after 10 s."""
    env = dict(os.environ, EBPF_PROFILER_DEBUG="1")
    t0 = time.time()
    p = subprocess.Popen([ep or EP, "-v", "-cache-dir", cache, "-output",
                          os.path.join(TMP, "s.folded")] + list(extra),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env=env)
    loaded, state, text = {}, {"started": None}, []

    def reader():
        for line in p.stderr:
            text.append(line)
            now = (time.time() - t0) * 1000
            m = re.search(r"pid (\d+) \(.*\) loaded: .* in ([\d.]+) ms",
                          line)
            if m and int(m.group(1)) in pids and \
                    int(m.group(1)) not in loaded:
                loaded[int(m.group(1))] = (now, float(m.group(2)))
            if state["started"] is None and "started in" in line:
                state["started"] = now
    th = threading.Thread(target=reader)
    th.start()
    while time.time() - t0 < 10 and len(loaded) < len(pids):
        if state["started"] is not None and time.time() - t0 > 3 and \
                not loaded:
            break  # a build that loads at start: no "loaded" lines
        time.sleep(0.02)
    p.send_signal(signal.SIGTERM)
    p.wait()
    th.join()
    s = summary("".join(text))
    if not loaded:
        ready = state["started"]
    elif len(loaded) == len(pids):
        ready = max(t for t, _ in loaded.values())
    else:
        ready = float("nan")  # one was not sampled in 10 s
    slowest = max((d for _, d in loaded.values()), default=0)
    return s.get("startup_ms", float("nan")), ready, slowest, \
        s.get("cache_hits", 0)


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def part_startup():
    """EP_BEFORE: an earlier build run beside EP, each repeat running
    both (cold then warm) in turn, so that both see the same neighbours;
    which goes first alternates, so that neither always follows the
    other's exit.  Two copies of one build differed by 13 ms in medians
    of 10 (55 and 68): read a difference of that size as noise."""
    procs = start_runtimes()
    pids = {p.pid for p in procs.values()}
    cache = os.path.join(TMP, "cache")
    builds = [("", EP)]
    if os.environ.get("EP_BEFORE"):
        builds.insert(0, ("before, ", os.environ["EP_BEFORE"]))
    rows = {}
    loads = []
    keep = {ep: keep_flags(ep) for _, ep in builds}
    try:
        for i in range(REPEAT):
            for label, ep in (builds if i % 2 == 0 else builds[::-1]):
                loads.append(loadavg())
                shutil.rmtree(cache, ignore_errors=True)
                if keep[ep]:
                    shutil.rmtree(keep[ep][-1], ignore_errors=True)
                rows.setdefault(label + "cold", []).append(
                    run_once(cache, pids, ep, keep[ep]))
                rows.setdefault(label + "warm", []).append(
                    run_once(cache, pids, ep))
                if keep[ep]:
                    rows.setdefault(label + "warm, programs kept",
                                    []).append(
                        run_once(cache, pids, ep, keep[ep]))
            loads.append(loadavg())
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
        for flags in keep.values():
            if flags:
                shutil.rmtree(flags[-1], ignore_errors=True)
        if os.path.ismount(os.path.join(TMP, "bpffs")):
            subprocess.run(["umount", os.path.join(TMP, "bpffs")])
    print("running, each busy about 20%% of the time: %s; load average "
          "%.1f to %.1f during the runs" %
          (", ".join(sorted(procs)), min(loads), max(loads)))
    print("| median of %d | startup_ms (sampling live) | exec to every "
          "runtime loaded, ms | the slowest runtime's load, ms | files "
          "from the cache |" % REPEAT)
    print("|---|---|---|---|---|")
    for k in sorted(rows, key=lambda k: ("cold" in k, "kept" in k, k)):
        r = rows[k]
        done = [x[1] for x in r if x[1] == x[1]]  # not nan
        print("| %s | %.0f | %.0f (%d of %d runs) | %.1f | %.0f |" %
              (k, median([x[0] for x in r]), median(done), len(done),
               len(r), median([x[2] for x in r]),
               median([x[3] for x in r])))
    for k in sorted(rows):
        if "warm" in k:
            print("%s runs (startup_ms/loaded): %s" %
                  (k, " ".join("%.0f/%.0f" % (x[0], x[1])
                               for x in rows[k])))


def main():
    if os.geteuid() != 0:
        print("bench-footprint: needs root", file=sys.stderr)
        return 1
    try:
        for part in PARTS:
            print("## %s" % part)
            {"rss": part_rss, "execs": part_execs,
             "startup": part_startup}[part]()
            print()
            sys.stdout.flush()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
