#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Ring drain benchmark (make bench-ring): does the BPF ring keep being
drained while a huge file's unwind tables are extracted?

A generated ELF executable of about 500 MB with about a million FDEs (its
text is a hole in the file: what costs is its .eh_frame) is exec'd while
the profiler samples the whole machine at 999 Hz and a CPU-bound workload
runs on every CPU.  Its exec makes the profiler sync the process, which
extracts the file's stack deltas (the cache is off, so every run
extracts).  Reported, medians over BENCH_REPEAT runs:

  stall_ms    longest time between two ring drains (the longest gap
              between two epoll_wait calls of one thread, from strace:
              the same measure for both binaries), and the daemon's own
              drain_stall_ms when it has one
  lost        trace records the kernel dropped (ringbuf_full), events
              dropped (events_full), and records the daemon dropped after
              the ring (record_queue_drops)
  extract_s   extraction time over the run (extraction_seconds_total
              after the exec less before it)
  service_ms  the daemon's longest pm_service step, when it has one

Environment: EP_BIN (the binary), EP_BIN_BEFORE (another binary to
compare, e.g. main's), BENCH_REPEAT (3), BENCH_FDES (1000000),
BENCH_MB (500), BENCH_DIR (/tmp/ep-bench-ring: the generated file is
kept there and reused), EP_WORKLOADS (build/workloads: recurse is the
CPU-bound program), BENCH_DEPTH (100: its stack depth).
"""
import os, re, shutil, socket, statistics, struct, subprocess, sys, tempfile, time

EP = os.path.abspath(os.environ.get("EP_BIN", "./ebpf-profiler"))
EP_BEFORE = os.environ.get("EP_BIN_BEFORE")
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
FDES = int(os.environ.get("BENCH_FDES", "1000000"))
MB = int(os.environ.get("BENCH_MB", "500"))
DIR = os.environ.get("BENCH_DIR", "/tmp/ep-bench-ring")
WORKLOADS = os.environ.get("EP_WORKLOADS", "build/workloads")
DEPTH = os.environ.get("BENCH_DEPTH", "100")
HZ = "999"
RUN_S = 14      # the profiler's -duration
EXEC_AT_S = 4   # the big program starts this long after the profiler


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def sleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if (v == 0 and not b & 0x40) or (v == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def make_elf(path, n_fdes, total_mb):
    """An x86-64 ET_EXEC: _start sleeps 30 s and exits; n_fdes functions
    of equal size fill a text of about total_mb MB, each with an FDE of
    14 rows (six registers saved and restored)."""
    base = 0x400000
    text_off = 0x1000
    fn_size = max(64, (total_mb << 20) // n_fdes) & ~15
    text_len = 0x100 + n_fdes * fn_size
    # _start: nanosleep(&ts, 0); exit(0)
    code = bytes([0xB8, 35, 0, 0, 0,                     # mov eax, 35
                  0x48, 0x8D, 0x3D, 0x10, 0, 0, 0,       # lea rdi, [rip+16]
                  0x31, 0xF6,                            # xor esi, esi
                  0x0F, 0x05,                            # syscall
                  0xB8, 60, 0, 0, 0,                     # mov eax, 60
                  0x31, 0xFF,                            # xor edi, edi
                  0x0F, 0x05])                           # syscall
    ts = struct.pack("<qq", 30, 0)
    # the lea's target: code offset 12 + 16 = 28 -> pad code to 28
    start = code + b"\x90" * (28 - len(code)) + ts
    ehf_off = (text_off + text_len + 15) & ~15
    ehf_vaddr = base + ehf_off
    # CIE: "zR", code align 1, data align -8, RA 16, pcrel|sdata4
    cie_body = (struct.pack("<I", 0) + b"\x01" + b"zR\x00" + uleb(1) +
                sleb(-8) + uleb(16) + uleb(1) + b"\x1b" +
                b"\x0c\x07\x08" + b"\x90\x01")       # cfa = rsp+8, ra at cfa-8
    cie_body += b"\x00" * ((-len(cie_body) - 4) % 8)
    cie = struct.pack("<I", len(cie_body)) + cie_body
    # FDE instructions: a function of -O2 code without a frame pointer
    # that saves the six callee-saved registers (push r15, r14, r13, r12,
    # rbp, rbx; sub rsp, 40) and restores them at its end: 14 rows
    ins = bytearray()
    at = 0
    cfa = 8
    for size, reg in ((2, 15), (2, 14), (2, 13), (2, 12), (1, 6), (1, 3)):
        at += size
        cfa += 8
        ins += bytes([0x40 | size, 0x0E]) + uleb(cfa) + bytes([0x80 | reg]) + uleb(cfa // 8)
    at += 4
    ins += bytes([0x44, 0x0E]) + uleb(cfa + 40)
    epi = fn_size - 1 - 10 - 4  # add rsp, 40; six pops; ret
    ins += b"\x03" + struct.pack("<H", epi - at) + b"\x0e" + uleb(cfa)
    for size in (1, 1, 2, 2, 2, 2):
        cfa -= 8
        ins += bytes([0x40 | size, 0x0E]) + uleb(cfa)
    ins = bytes(ins)
    fde_len = 4 + 4 + 4 + 1 + len(ins)
    pad = (-(fde_len + 4)) % 8
    fde_len += pad
    tail = b"\x00" + ins + b"\x00" * pad
    parts = [cie]
    pos = ehf_vaddr + len(cie)
    fn0 = base + text_off + 0x100
    pack = struct.Struct("<IIii").pack
    for i in range(n_fdes):
        fn = fn0 + i * fn_size
        # length, CIE pointer (back to offset 0), pc_begin (pcrel from
        # its own field), pc_range
        parts.append(pack(fde_len, pos + 4 - ehf_vaddr, fn - (pos + 8),
                          fn_size) + tail)
        pos += 4 + fde_len
    parts.append(b"\x00" * 4)  # terminator
    ehf = b"".join(parts)
    shstr = b"\x00.text\x00.eh_frame\x00.shstrtab\x00"
    shstr_off = ehf_off + len(ehf)
    sh_off = (shstr_off + len(shstr) + 7) & ~7
    file_len = sh_off + 4 * 64
    load_len = shstr_off
    ehdr = struct.pack("<16sHHIQQQIHHHHHH",
                       b"\x7fELF\x02\x01\x01" + b"\x00" * 9, 2, 62, 1,
                       base + text_off, 64, sh_off, 0, 64, 56, 1, 64, 4, 3)
    phdr = struct.pack("<IIQQQQQQ", 1, 5, 0, base, base, load_len,
                       load_len, 0x1000)

    def shdr(name, typ, flags, addr, off, size, align):
        return struct.pack("<IIQQQQIIQQ", name, typ, flags, addr, off, size,
                           0, 0, align, 0)
    shdrs = (b"\x00" * 64 +
             shdr(1, 1, 6, base + text_off, text_off, text_len, 16) +
             shdr(7, 1, 2, ehf_vaddr, ehf_off, len(ehf), 8) +
             shdr(17, 3, 0, 0, shstr_off, len(shstr), 1))
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(ehdr + phdr)
        f.seek(text_off)
        f.write(start)
        # the functions' bytes stay a hole: what costs is their FDEs
        f.seek(ehf_off)
        f.write(ehf)
        f.write(shstr)
        f.seek(sh_off)
        f.write(shdrs)
        assert f.tell() == file_len
    os.chmod(tmp, 0o755)
    os.rename(tmp, path)


def big_file():
    os.makedirs(DIR, exist_ok=True)
    path = os.path.join(DIR, "big-%d-%d.elf" % (FDES, MB))
    if not os.path.exists(path):
        t0 = time.time()
        make_elf(path, FDES, MB)
        print("generated %s (%.0f MB, %d FDEs) in %.1f s" %
              (path, os.path.getsize(path) / 1e6, FDES, time.time() - t0))
    return path


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scrape(port, name):
    """A metric's value from /metrics, or None."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
            data = b""
            while True:
                b = s.recv(65536)
                if not b:
                    break
                data += b
    except OSError:
        return None
    m = re.search(rb"^ebpf_profiler_" + name.encode() + rb" ([\d.e+-]+)$",
                  data, re.M)
    return float(m.group(1)) if m else None


def epoll_gaps(path):
    """The longest gap between two epoll_wait calls of one thread (ms),
    over the threads that called it at least 20 times."""
    last, gap, calls = {}, {}, {}
    pat = re.compile(r"^(\d+)\s+(\d+\.\d+) epoll_wait\(")
    with open(path) as f:
        for line in f:
            m = pat.match(line)
            if not m:
                continue
            tid, t = int(m.group(1)), float(m.group(2))
            if tid in last:
                gap[tid] = max(gap.get(tid, 0), t - last[tid])
            last[tid] = t
            calls[tid] = calls.get(tid, 0) + 1
    g = [gap[t] for t in gap if calls[t] >= 20]
    return max(g) * 1e3 if g else float("nan")


def workload():
    """A CPU-bound program for each CPU: tests/workloads' recurse, DEPTH
    frames deep (records of about 16 bytes a frame), else a shell loop."""
    rec = os.path.join(WORKLOADS, "recurse")
    if os.access(rec, os.X_OK):
        return [rec, str(RUN_S + 5), DEPTH]
    return ["sh", "-c", "while :; do :; done"]


def one_run(ep, big, tmp):
    port = free_port()
    trace = os.path.join(tmp, "strace.txt")
    spin = [subprocess.Popen(workload()) for _ in range(os.cpu_count() or 1)]
    cmd = [ep, "-duration", "%ds" % RUN_S, "-samples-per-second", HZ,
           "-no-cache", "-max-delta-rows", str(FDES * 16),
           "-metrics-address", str(port),
           "-output", os.path.join(tmp, "p.folded")]
    # strace follows every thread, reports only epoll_wait (seccomp: the
    # other calls run at full speed)
    prof = subprocess.Popen(["strace", "-f", "-ttt", "--seccomp-bpf", "-qq",
                             "-e", "trace=epoll_wait", "-o", trace] + cmd,
                            stderr=subprocess.PIPE, text=True)
    big_proc = None
    try:
        time.sleep(EXEC_AT_S)
        before = scrape(port, "extraction_seconds_total")
        big_proc = subprocess.Popen([big])
        time.sleep(RUN_S - EXEC_AT_S - 1)
        after = scrape(port, "extraction_seconds_total")
        _, err = prof.communicate(timeout=120)
    finally:
        for p in spin + ([big_proc] if big_proc else []):
            p.kill()
            p.wait()
        if prof.poll() is None:
            prof.kill()
            prof.wait()
    summary = err.strip().splitlines()[-1] if err.strip() else ""
    vals = {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", summary)}
    if "samples" not in vals:
        sys.exit("bench-ring: %s printed no summary:\n%s" % (ep, err[-2000:]))
    r = {
        "stall_ms": epoll_gaps(trace),
        "drain_stall_ms": vals.get("drain_stall_ms", float("nan")),
        "service_ms": vals.get("service_ms_max", float("nan")),
        # a binary without these figures in its summary: lost is
        # ringbuf_full plus the aggregation's drops (none here), and
        # events_lost is events_full
        "ringbuf_full": vals.get("ringbuf_full", vals.get("lost", float("nan"))),
        "events_full": vals.get("events_full",
                                vals.get("events_lost", float("nan"))),
        "record_queue_drops": vals.get("record_queue_drops", 0),
        "lost": vals.get("lost", float("nan")),
        "samples": vals["samples"],
        "extract_s": (after - before) if after is not None and
                     before is not None else float("nan"),
    }
    return r


def median(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def bench(ep, big):
    runs = []
    for i in range(REPEAT):
        tmp = tempfile.mkdtemp(prefix="ep-bench-ring-")
        try:
            r = one_run(ep, big, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print("  run %d: %s" % (i + 1, " ".join(
            "%s=%.1f" % (k, v) for k, v in r.items())), flush=True)
        runs.append(r)
    return {k: median([r[k] for r in runs]) for k in runs[0]}


def main():
    if os.geteuid() != 0:
        sys.exit("bench-ring: needs root (it loads BPF programs)")
    if not shutil.which("strace"):
        sys.exit("bench-ring: needs strace (apt-get install strace)")
    big = big_file()
    t0 = time.time()
    out = subprocess.run([EP, "deltas", big, "0x401102"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    print("offline extraction of %s (`ebpf-profiler deltas`): %.1f s%s" %
          (os.path.basename(big), time.time() - t0,
           "" if out.returncode == 0 else " (failed: %s)" % out.stderr.strip()))
    results = []
    for name, ep in (("before", EP_BEFORE), ("after", EP)):
        if not ep:
            continue
        print("%s: %s, %d runs of %d s at %s Hz, the big program exec'd at %d s"
              % (name, ep, REPEAT, RUN_S, HZ, EXEC_AT_S), flush=True)
        results.append((name, bench(os.path.abspath(ep), big)))
    print("\nmedians of %d runs: %d FDEs, %d MB file; workload: %s on each CPU"
          % (REPEAT, FDES, MB, " ".join(os.path.basename(a) for a in workload())))
    print("%-7s %9s %15s %11s %13s %12s %19s %10s %9s" % (
        "", "stall_ms", "drain_stall_ms", "service_ms", "ringbuf_full",
        "events_full", "record_queue_drops", "extract_s", "samples"))
    for name, r in results:
        print("%-7s %9.0f %15.1f %11.0f %13.0f %12.0f %19.0f %10.2f %9.0f" % (
            name, r["stall_ms"], r["drain_stall_ms"], r["service_ms"],
            r["ringbuf_full"], r["events_full"], r["record_queue_drops"],
            r["extract_s"], r["samples"]))


if __name__ == "__main__":
    main()
