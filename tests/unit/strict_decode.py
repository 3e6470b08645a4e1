#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Decode a pprof or OTLP file with protoc --decode against the UPSTREAM
.proto files (google/pprof's profile.proto, opentelemetry-proto's profiles
protos; `make deps` puts them in PROTO_DIR, see ci/deps.sh), the way a strict
receiver does: protoc, like upb and Go, refuses a message whose proto3
`string` fields are not valid UTF-8.  Then check that every sample carries
cpu.logical_number (pprof: a label; OTLP: an attribute reached through
attribute_indices into the dictionary) and print one line per thread and
CPU, with how many samples (stacks) and events it had:

  thread=<thread.name, as Python's ascii()> tid=<n> cpu=<n> samples=<n> count=<n>

and, for pprof, how many locations a frame in no known file ("[anon]",
"[unknown]", ...) has at one address (one per process that ran it):

  frame=<name> address=0x<hex> locations=<n>

and, for both, each location with more than one line (a machine frame with
inlined functions, innermost first):

  inline=<f1;f2;...>

Usage: strict_decode.py pprof|otlp FILE PROTO_DIR  (gzip'd input unpacked).
Exit 0 when protoc decoded the file with nothing on stderr and every check
passed; problems are printed as "ERROR: ..." lines.
"""
import gzip
import os
import re
import subprocess
import sys

errors = []

TYPES = {
    "pprof": ("pprof", "profile.proto", "perftools.profiles.Profile"),
    "otlp": ("otel",
             "opentelemetry/proto/collector/profiles/v1development/"
             "profiles_service.proto",
             "opentelemetry.proto.collector.profiles.v1development."
             "ExportProfilesServiceRequest"),
}


def unescape(s):
    """protoc's C-escaped string literal body to bytes."""
    out, i = bytearray(), 0
    simple = {"n": 10, "r": 13, "t": 9, '"': 34, "'": 39, "\\": 92,
              "a": 7, "b": 8, "f": 12, "v": 11, "?": 63}
    while i < len(s):
        c = s[i]
        if c != "\\":
            out.append(ord(c))  # read as latin-1: one char per byte
            i += 1
            continue
        c = s[i + 1]
        if c in simple:
            out.append(simple[c])
            i += 2
        elif c in "01234567":
            m = re.match(r"[0-7]{1,3}", s[i + 1:])
            out.append(int(m.group(0), 8))
            i += 1 + len(m.group(0))
        elif c == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", s[i + 2:])
            out.append(int(m.group(0), 16))
            i += 2 + len(m.group(0))
        else:
            raise ValueError("escape \\%s" % c)
    return bytes(out)


def parse(text):
    """Text format to nested {field: [values]}; strings as bytes."""
    root, stack = {}, []
    cur = root
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            cur = stack.pop()
            continue
        m = re.match(r"^([\w.\[\]/]+) \{$", line)
        if m:
            child = {}
            cur.setdefault(m.group(1), []).append(child)
            stack.append(cur)
            cur = child
            continue
        m = re.match(r'^(\w+): (?:"(.*)"|(\S+))$', line)
        if not m:
            raise ValueError("cannot parse %r" % line)
        v = unescape(m.group(2)) if m.group(2) is not None else m.group(3)
        if isinstance(v, str) and re.fullmatch(r"-?\d+", v):
            v = int(v)
        cur.setdefault(m.group(1), []).append(v)
    if stack:
        raise ValueError("unbalanced braces")
    return root


def one(msg, f, default=0):
    v = msg.get(f, [])
    return v[-1] if v else default


def text(b):
    # protoc accepted it, so it must decode; a failure here is a finding.
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError as e:
        errors.append("protoc passed invalid UTF-8: %r" % e)
        return b.decode("utf-8", "replace")


def check_cpu(cpu, where):
    if cpu is None:
        errors.append("%s: no cpu.logical_number" % where)
    elif not (isinstance(cpu, int) and 0 <= cpu < (os.cpu_count() or 1)):
        errors.append("%s: cpu.logical_number %r out of range" % (where, cpu))


def pprof_samples(p):
    strs = [text(s) for s in p.get("string_table", [])]

    def S(i):
        return strs[i] if 0 <= i < len(strs) else None
    names = {one(f, "id"): S(one(f, "name")) for f in p.get("function", [])}
    unknown = {}
    for loc in p.get("location", []):
        for ln in loc.get("line", []):
            name = names.get(one(ln, "function_id"))
            if name and name.startswith("["):
                k = (ascii(name), one(loc, "address"))
                unknown[k] = unknown.get(k, 0) + 1
    for (name, addr), n in sorted(unknown.items()):
        print("frame=%s address=0x%x locations=%d" % (name, addr, n))
    print_inline([[names.get(one(ln, "function_id"))
                   for ln in loc.get("line", [])]
                  for loc in p.get("location", [])])
    out = []
    for n, s in enumerate(p.get("sample", [])):
        labels = {}
        for lb in s.get("label", []):
            k = S(one(lb, "key"))
            labels[k] = S(one(lb, "str")) if "str" in lb else one(lb, "num")
        cpu = labels.get("cpu.logical_number")
        cpu = int(cpu) if isinstance(cpu, str) and cpu.isdigit() else cpu
        check_cpu(cpu, "sample %d" % n)
        out.append((labels.get("thread.name"), labels.get("thread.id"), cpu,
                    s.get("value", [0])[0]))
    return out


def print_inline(chains):
    for c in sorted({";".join(str(n) for n in c) for c in chains if len(c) > 1}):
        print("inline=%s" % c)


def otlp_samples(req):
    d = one(req, "dictionary", {})
    strs = [text(s) for s in d.get("string_table", [])]
    funcs = [strs[one(f, "name_strindex")]
             if 0 <= one(f, "name_strindex") < len(strs) else None
             for f in d.get("function_table", [])]
    print_inline([[funcs[one(ln, "function_index")]
                   if one(ln, "function_index") < len(funcs) else None
                   for ln in loc.get("lines", [])]
                  for loc in d.get("location_table", [])])
    attrs = []
    for a in d.get("attribute_table", []):
        v = one(a, "value", {})
        val = (text(one(v, "string_value", b"")) if "string_value" in v
               else one(v, "int_value", None))
        k = one(a, "key_strindex")
        attrs.append((strs[k] if 0 <= k < len(strs) else None, val))
    out = []
    for rp in req.get("resource_profiles", []):
        for sp in rp.get("scope_profiles", []):
            for p in sp.get("profiles", []):
                for n, s in enumerate(p.get("samples", [])):
                    a = {}
                    for i in s.get("attribute_indices", []):
                        if not 0 < i < len(attrs):
                            errors.append("attribute index %d out of range" % i)
                            continue
                        a[attrs[i][0]] = attrs[i][1]
                    check_cpu(a.get("cpu.logical_number"), "sample %d" % n)
                    count = (sum(s.get("values", [])) or
                             len(s.get("timestamps_unix_nano", [])))
                    out.append((a.get("thread.name"), a.get("thread.id"),
                                a.get("cpu.logical_number"), count))
    return out


def main(kind, path, proto_dir):
    sub, proto, msg = TYPES[kind]
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    r = subprocess.run(["protoc", "-I" + os.path.join(proto_dir, sub),
                        "--decode=" + msg, proto], input=data,
                       capture_output=True)
    if r.returncode or r.stderr:
        errors.append("protoc --decode=%s: exit %d: %s" % (
            msg, r.returncode, r.stderr.decode("utf-8", "replace").strip()))
        return
    tree = parse(r.stdout.decode("latin-1"))
    samples = pprof_samples(tree) if kind == "pprof" else otlp_samples(tree)
    if not samples:
        errors.append("no samples")
    by = {}
    for name, tid, cpu, count in samples:
        n = by.setdefault((ascii(name), str(tid), str(cpu)), [0, 0])
        n[0] += 1
        n[1] += count
    for (name, tid, cpu), (n, count) in sorted(by.items()):
        print("thread=%s tid=%s cpu=%s samples=%d count=%d" % (
            name, tid, cpu, n, count))


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in TYPES:
        sys.exit(__doc__)
    try:
        main(*sys.argv[1:])
    except Exception as e:  # noqa: BLE001 (a decode error is a finding)
        errors.append("cannot decode: %r" % e)
    for e in errors:
        print("ERROR: " + e)
    sys.exit(1 if errors else 0)
