#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Compare our folded profile of a process with perf's DWARF-unwound one.

    vs_perf.py OURS.folded PERF.txt [--interp-loop FUNC] [--top N] [--window T0 T1]

PERF.txt is `perf script -F comm,tid,time,ip,sym,dso --demangle --no-inline`
output (no inline frames: ours has only the physical ones), recorded with
`-k CLOCK_MONOTONIC`; --window keeps perf's samples taken between T0 and T1
(seconds of CLOCK_MONOTONIC), the time our profiler sampled, so a program
that changes phases (a compiler) is compared over the same stretch.  Kernel
frames are left out on both sides.  Prints, for the C test to read:

    ours samples=N complete=P          P: % of samples whose user stack
    perf samples=N complete=P          reaches the entry; T: perf's first
      first=T last=T                   and last sample (did perf cover the
                                       whole window?)
    trunk n=K                          frames on >= 97% of both (they agree
    trunk-frame NAME ours=P perf=P     within 3 points by construction)
    top NAME ours=P perf=P diff=D      the N frames with the highest
                                       inclusive share in either profile,
                                       the trunk left out
    worst NAME ours=P perf=P diff=D    the largest |D| among them, and its
      sigma=S                          sampling noise

What makes the two comparable:
- Names: perf's version suffix (`@@GLIBC_2.34`) is dropped, and aliases
  (symbols at one address of one file: `clone3`, `__clone3`,
  `__GI___clone3`) become one name, from `nm` of every file perf saw and of
  its separate debug file (/usr/lib/debug/.build-id: perf reads it, and so
  do we).  C++ names lose their parameter list (we print none).
- Frames neither names (perf `[unknown]`, ours `file+0xADDR`) are named
  `file+0xADDR` on both sides with the ELF address: perf prints an offset in
  the file, converted through the LOAD segments, and subtracts 1 from
  return addresses, added back, so a call site has one name on both.
- --interp-loop FUNC: we show an interpreter's loop invocation as the
  frames it runs (`name (file:line)`) where perf shows the loop function
  (CPython's `_PyEval_EvalFrameDefault`, Perl's `Perl_runops_standard`);
  each such frame is counted as that loop.  The inclusive share of every
  native function, and of the loop, is then what perf can see.
- The entry: `_start` (or the ELF entry point of a file without symbols) and
  `clone3`/`clone`: the outermost frame of a main thread and of a thread.
"""
import argparse
import collections
import math
import os
import re
import subprocess
import sys

ENTRY_NAMES = ("_start", "clone3", "clone", "__clone3", "__clone")
TRUNK = 97.0
INTERP_FRAME = re.compile(r" \([^()]*:\d+\)$")
PERF_FRAME = re.compile(r"^\s+([0-9a-f]+) (.*) \(([^()]*)\)$")


class Files:
    """What the ELF files tell: LOAD segments, entry points, aliases."""

    def __init__(self):
        self.segs = {}  # path -> [(offset, vaddr, filesz)]
        self.entry = {}  # basename -> e_entry (executables)
        self.canon = {}  # name -> canonical alias

    def load(self, path):
        if path in self.segs:
            return
        self.segs[path] = []
        try:
            out = subprocess.run(["readelf", "-lhnW", path], capture_output=True,
                                 text=True, check=False).stdout
        except OSError:
            return
        build_id = None
        for line in out.splitlines():
            f = line.split()
            if f[:1] == ["LOAD"]:
                self.segs[path].append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
            elif line.strip().startswith("Entry point address:"):
                self.entry[os.path.basename(path)] = int(f[-1], 16)
            elif "Build ID:" in line:
                build_id = f[-1]
        files = [path]
        if build_id:
            dbg = "/usr/lib/debug/.build-id/%s/%s.debug" % (build_id[:2], build_id[2:])
            if os.path.exists(dbg):
                files.append(dbg)
        self.aliases(files)

    def aliases(self, files):
        by_addr = collections.defaultdict(set)
        for f in files:
            for args in (["nm", "-C", "--defined-only"], ["nm", "-C", "-D", "--defined-only"]):
                out = subprocess.run(args + [f], capture_output=True, text=True,
                                     check=False).stdout
                for line in out.splitlines():
                    p = line.split(" ", 2)
                    if len(p) == 3 and p[1] in "TtWwiI":
                        by_addr[int(p[0], 16)].add(clean(p[2]))
        for names in by_addr.values():
            # one choice for every alias group: the shortest, then by name
            first = min(names, key=lambda n: (len(n), n))
            for n in names:
                self.canon.setdefault(n, first)

    def vaddr(self, path, off):
        for o, v, size in self.segs.get(path, ()):
            if o <= off < o + size:
                return off - o + v
        return off

    def name(self, n):
        return self.canon.get(n, n)

    def is_entry(self, n):
        if n in ENTRY_NAMES or n in (self.name(e) for e in ENTRY_NAMES):
            return True
        m = re.match(r"^(.*)\+0x([0-9a-f]+)$", n)
        if m and m.group(1) in self.entry:
            # a file without symbols: _start is its first bytes
            return 0 <= int(m.group(2), 16) - self.entry[m.group(1)] < 0x40
        return False


def strip_params(n):
    """`ns::f(int, char*) const` -> `ns::f`: drop the last balanced (...)."""
    if not n.endswith(")") and not n.endswith(") const"):
        return n
    depth, i = 0, len(n) - 1
    while i >= 0:
        if n[i] == ")":
            depth += 1
        elif n[i] == "(":
            depth -= 1
            if depth == 0:
                break
        i -= 1
    return n[:i] if i > 0 else n


def clean(n):
    n = re.sub(r"@@?[A-Za-z0-9_.]+$", "", n)
    return strip_params(n)


def read_perf(path, files, window):
    """[(frames root first)], perf's user frames named as described above,
    and the times of perf's first and last sample, in the window or not."""
    samples, raw, cur, times = [], [], None, []
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if not line.strip():
            continue
        if not line[0].isspace():
            t = [float(w[:-1]) for w in line.split() if re.match(r"^\d+\.\d+:$", w)]
            times += t[:1]
            cur = None
            if window and (not t or not window[0] <= t[0] <= window[1]):
                continue
            cur = []
            raw.append(cur)
            continue
        m = PERF_FRAME.match(line)
        if m and cur is not None:
            cur.append((int(m.group(1), 16), m.group(2), m.group(3)))
    for frames in raw:
        user = [f for f in frames if not f[2].startswith("[kernel") and f[0] < 1 << 47]
        names = []
        for i, (ip, sym, dso) in enumerate(user):
            if dso.startswith("/"):
                files.load(dso)
            if sym == "[unknown]" or sym.endswith("@plt"):
                # no symbol; a PLT entry has none in the file either (perf
                # makes `memcmp@plt` up, we show its address)
                va = files.vaddr(dso, ip) + (1 if i else 0)
                names.append("%s+0x%x" % (os.path.basename(dso), va))
            else:
                names.append(clean(sym))
        samples.append(names[::-1])
    return samples, (min(times), max(times)) if times else (0, 0)


def read_ours(path, loop):
    samples = []
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        frames = []
        for f in stack.split(";")[1:]:
            if f.endswith("_[k]"):
                continue
            if loop and INTERP_FRAME.search(f):
                f = loop
            frames.append(clean(f))
        samples.append((frames, int(count)))
    return samples


def shares(samples, files):
    """(total, % complete, {frame: inclusive %})"""
    total = complete = 0
    incl = collections.Counter()
    for frames, n in samples:
        frames = [files.name(f) for f in frames]
        total += n
        if frames and files.is_entry(frames[0]):
            complete += n
        for f in set(frames):
            incl[f] += n
    if not total:
        return 0, 0.0, {}
    return total, 100.0 * complete / total, {f: 100.0 * c / total for f, c in incl.items()}


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("ours")
    ap.add_argument("perf")
    ap.add_argument("--interp-loop")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--window", type=float, nargs=2)
    a = ap.parse_args(argv)
    top = a.top
    files = Files()
    perf, (first, last) = read_perf(a.perf, files, a.window)
    ours = read_ours(a.ours, a.interp_loop)
    pt, pc, ps = shares([(s, 1) for s in perf], files)
    ot, oc, os_ = shares(ours, files)
    print("ours samples=%d complete=%.2f" % (ot, oc))
    print("perf samples=%d complete=%.2f first=%.3f last=%.3f" % (pt, pc, first, last))
    names = set(ps) | set(os_)
    trunk = [n for n in names if ps.get(n, 0) >= TRUNK and os_.get(n, 0) >= TRUNK]
    print("trunk n=%d" % len(trunk))
    for n in sorted(trunk):
        print("trunk-frame %s ours=%.2f perf=%.2f" % (n, os_[n], ps[n]))
    rest = sorted((n for n in names if n not in trunk),
                  key=lambda n: (-max(ps.get(n, 0), os_.get(n, 0)), n))[:top]
    worst = None
    for n in rest:
        o, p = os_.get(n, 0.0), ps.get(n, 0.0)
        print("top %s ours=%.2f perf=%.2f diff=%.2f" % (n, o, p, o - p))
        if worst is None or abs(o - p) > abs(worst[1] - worst[2]):
            worst = (n, o, p)
    if worst:
        # the difference's standard deviation were the two profiles
        # independent random samples of one distribution
        q = (worst[1] + worst[2]) / 200
        sigma = 100 * math.sqrt(q * (1 - q) * (1 / max(ot, 1) + 1 / max(pt, 1)))
        print("worst %s ours=%.2f perf=%.2f diff=%.2f sigma=%.2f" % (
            worst[0], worst[1], worst[2], abs(worst[1] - worst[2]), sigma))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
