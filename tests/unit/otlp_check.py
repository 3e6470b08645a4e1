#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Check an OTLP ExportProfilesServiceRequest (v1.10 layout) independently of
our .proto files and of protobuf-c: a wire decoder with the field numbers of
the reference tables, the dictionary rules (zero elements, indices in range),
what receivers require (profile.frame.type on every location, an htlhash on
every mapping, plain-string resource attributes, one shape per profile), and
a canonical dump of what the request says:

  resource <pid> <exe name> [container] shape=<values|timestamps>
  <thread.name> tid=<tid> cpu=<cpu>: root;...;leaf <count>

Usage: otlp_check.py FILE  (gzip'd input is unpacked).  Exit 0 if every check
passed; problems are printed as "ERROR: ..." lines.
"""
import gzip
import os
import re
import struct
import sys

errors = []


def err(msg):
    errors.append(msg)


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """[(field number, wire type, value)]; LEN values are bytes."""
    out, i = [], 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if f == 0:
            raise ValueError("field number 0")
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v = struct.unpack_from("<Q", b, i)[0]
            i += 8
        elif wt == 2:
            n, i = varint(b, i)
            v = bytes(b[i:i + n])
            if len(v) != n:
                raise ValueError("truncated")
            i += n
        elif wt == 5:
            v = struct.unpack_from("<I", b, i)[0]
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        out.append((f, wt, v))
    return out


def get(msg, f):
    return [v for (n, _, v) in fields(msg) if n == f]


def one(msg, f, default=None):
    v = get(msg, f)
    return v[-1] if v else default


def packed(msg, f, fixed=False):
    out = []
    for (n, wt, v) in fields(msg):
        if n != f:
            continue
        if wt == 2:  # packed
            i = 0
            while i < len(v):
                if fixed:
                    out.append(struct.unpack_from("<Q", v, i)[0])
                    i += 8
                else:
                    x, i = varint(v, i)
                    out.append(x)
        else:
            out.append(v)
    return out


def s64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def anyvalue(b):
    f = fields(b)
    if len(f) != 1:
        err("AnyValue with %d fields" % len(f))
        return None
    n, _, v = f[0]
    if n == 1:
        return v.decode()
    if n == 3:
        return s64(v)
    if n == 8:
        err("AnyValue uses string_value_strindex")
    return v


def main(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    req = data
    top = {n for (n, _, _) in fields(req)}
    if top - {1, 2}:
        err("request has fields %s" % sorted(top - {1, 2}))
    dicts = get(req, 2)
    if len(dicts) != 1:
        err("request has %d dictionaries" % len(dicts))
        return
    d = dicts[0]
    mappings, locations, functions = get(d, 1), get(d, 2), get(d, 3)
    links, strings, attrs, stacks = get(d, 4), get(d, 5), get(d, 6), get(d, 7)
    strings = [s.decode() for s in strings]
    for name, t in (("mapping", mappings), ("location", locations),
                    ("function", functions), ("attribute", attrs),
                    ("stack", stacks), ("string", strings)):
        if not t:
            err("%s_table is empty" % name)
        elif t[0] not in (b"", ""):
            err("%s_table[0] is not the zero element" % name)
    if links and fields(links[0]) and (one(links[0], 1) != bytes(16) or
                                        one(links[0], 2) != bytes(8)):
        err("link_table[0] is not all-zero ids")

    def S(i):
        if not 0 <= i < len(strings):
            err("string index %d out of range" % i)
            return "?"
        return strings[i]

    # attribute_table: KeyValueAndUnit{1 key_strindex, 2 value, 3 unit}
    attr = [None]
    for a in attrs[1:]:
        attr.append((S(one(a, 1, 0)), anyvalue(one(a, 2, b""))))

    def A(idxs, where):
        out = {}
        for i in idxs:
            if not 0 < i < len(attr):
                err("%s: attribute index %d out of range" % (where, i))
                continue
            k, v = attr[i]
            if k in out:
                err("%s: attribute key %s twice" % (where, k))
            out[k] = v
        return out

    for i, m in enumerate(mappings[1:], 1):
        a = A(packed(m, 5), "mapping %d" % i)
        h = a.get("process.executable.build_id.htlhash")
        if not (isinstance(h, str) and re.fullmatch("[0-9a-f]{32}", h)):
            err("mapping %d: htlhash %r" % (i, h))
        S(one(m, 4, 0))
    funcs = [None]
    for f in functions[1:]:
        funcs.append((S(one(f, 1, 0)), S(one(f, 3, 0))))
    frame_types = {"native", "kernel", "jvm", "perl", "cpython", "php",
                   "phpjit", "ruby", "dotnet", "v8js", "beam", "go",
                   "abort-marker"}  # what devfiler accepts
    # a caller may allow more, e.g. the test runtime's own "test" type
    frame_types |= set(filter(None, os.environ.get(
        "OTLP_CHECK_EXTRA_FRAME_TYPES", "").split(",")))
    locname = [None]
    for i, l in enumerate(locations[1:], 1):
        a = A(packed(l, 4), "location %d" % i)
        ft = a.get("profile.frame.type")
        if ft not in frame_types:
            err("location %d: profile.frame.type %r" % (i, ft))
        mi = one(l, 1, 0)
        if not 0 <= mi < len(mappings):
            err("location %d: mapping %d out of range" % (i, mi))
        lines = get(l, 3)
        if lines:
            fi = one(lines[0], 1, 0)
            if not 0 < fi < len(funcs):
                err("location %d: function %d out of range" % (i, fi))
                locname.append("?")
                continue
            name = funcs[fi][0]
            if ft == "kernel":
                name += "_[k]"
            ln = one(lines[0], 2, 0)
            if ft == "cpython":
                name += " (%s:%d)" % (funcs[fi][1].rsplit("/", 1)[-1], ln)
            locname.append(name)
        else:
            fn = S(one(mappings[mi], 4, 0)) if 0 < mi < len(mappings) else ""
            locname.append("%s+0x%x" % (fn, one(l, 2, 0)))
    stk = [[]]
    for i, s in enumerate(stacks[1:], 1):
        idx = packed(s, 1)
        if not idx:
            err("stack %d is empty" % i)
        for x in idx:
            if not 0 < x < len(locations):
                err("stack %d: location %d out of range" % (i, x))
        stk.append([locname[x] if 0 < x < len(locname) else "?"
                    for x in idx])
    out = []
    for rp in get(req, 1):
        res = one(rp, 1, b"")
        rattr = {}
        for kvb in get(res, 1):
            if one(kvb, 3) is not None:
                err("resource attribute uses key_strindex")
            rattr[one(kvb, 1, b"").decode()] = anyvalue(one(kvb, 2, b""))
        for k in ("process.pid", "process.executable.path",
                  "process.executable.name", "host.name", "os.type",
                  "os.version"):
            if k not in rattr:
                err("resource: no %s" % k)
        for sp in get(rp, 2):
            if not one(one(sp, 1, b""), 1):
                err("scope has no name")
            for p in get(sp, 2):
                st, pt = one(p, 1, b""), one(p, 5, b"")
                if (S(one(st, 1, 0)), S(one(st, 2, 0))) != ("samples", "count"):
                    err("sample_type is not samples/count")
                if (S(one(pt, 1, 0)), S(one(pt, 2, 0))) != ("cpu", "nanoseconds"):
                    err("period_type is not cpu/nanoseconds")
                if not one(p, 6, 0):
                    err("period is 0")
                t0, dur = one(p, 3, 0), one(p, 4, 0)
                shapes = set()
                for smp in get(p, 2):
                    si = one(smp, 1, 0)
                    if not 0 < si < len(stk):
                        err("sample: stack %d out of range" % si)
                        continue
                    vals = packed(smp, 4)
                    ts = packed(smp, 5, fixed=True)
                    if not vals and not ts:
                        err("sample without values or timestamps")
                    if vals and ts and len(vals) != len(ts):
                        err("values and timestamps differ in length")
                    for t in ts:
                        if not t0 <= t < t0 + dur:
                            err("timestamp %d outside the profile" % t)
                    shapes.add("both" if vals and ts else
                               "values" if vals else "timestamps")
                    count = sum(vals) if vals else len(ts)
                    a = A(packed(smp, 2), "sample")
                    frames = ";".join(reversed(stk[si]))
                    out.append((rattr.get("process.pid"),
                                "  %s tid=%s cpu=%s: %s %d" % (
                                    a.get("thread.name"), a.get("thread.id"),
                                    a.get("cpu.logical_number"), frames,
                                    count)))
                if len(shapes) > 1:
                    err("profile mixes sample shapes %s" % sorted(shapes))
                out.append((rattr.get("process.pid"), "resource %s %s%s shape=%s" % (
                    rattr.get("process.pid"),
                    rattr.get("process.executable.name"),
                    " container=%s" % rattr["container.id"][:12]
                    if "container.id" in rattr else "",
                    ",".join(sorted(shapes)))))
    # Resources in pid order, the resource line first, samples sorted.
    for pid in sorted({p for p, _ in out}, key=lambda x: (x is None, x)):
        lines = [l for p, l in out if p == pid]
        head = [l for l in lines if l.startswith("resource")]
        print("\n".join(head + sorted(l for l in lines if l not in head)))


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except Exception as e:  # noqa: BLE001 (a decode error is a finding)
        err("cannot decode: %r" % e)
    for e in errors:
        print("ERROR: " + e)
    sys.exit(1 if errors else 0)
