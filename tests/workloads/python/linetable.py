# SPDX-License-Identifier: Apache-2.0
# linetable.py: the line of every instruction of many code objects, as
# CPython itself computes it, to check a line-table decoder against.
# For each code object:
#   code FIRSTLINENO HEX(co_lnotab or co_linetable)
#   lines L0 L1 ...      (line of instruction index i, code units; -1: none)
# Sources: a few stdlib modules and a synthetic one with long jumps, big
# and negative line deltas and lines without location.
import dis, sys

SYNTH = "def f(x):\n" + "\n" * 300 + "    y = x + 1\n" + \
    "    z = [\n" + "        y,\n" * 200 + "    ]\n" + \
    "    if x:\n" + "        q = (\n1 +\n2)\n" * 50 + \
    "    return (y +\n" + "\n" * 140 + "        len(z))\n" + \
    "for i in range(3):\n    pass\n" + \
    "class C:\n    def m(self): return [i for i in range(3)]\n"

def codes(co):
    yield co
    for k in co.co_consts:
        if hasattr(k, "co_code"):
            yield from codes(k)

def lines_of(co):
    n = len(co.co_code) // 2
    out = [-1] * n
    if sys.version_info >= (3, 10):
        for start, end, line in co.co_lines():
            for i in range(start // 2, end // 2):
                if i < n:
                    out[i] = -1 if line is None else line
    else:
        starts = list(dis.findlinestarts(co))
        j = 0
        line = co.co_firstlineno
        for i in range(n):
            while j < len(starts) and starts[j][0] <= 2 * i:
                line = starts[j][1]
                j += 1
            out[i] = line
    return out

def table_of(co):
    if sys.version_info >= (3, 10):
        return co.co_linetable
    return co.co_lnotab

def main():
    sources = [("<synth>", SYNTH)]
    for mod in ("argparse", "json.decoder", "dis", "threading"):
        m = __import__(mod, fromlist=["x"])
        with open(m.__file__) as f:
            sources.append((m.__file__, f.read()))
    for name, src in sources:
        for co in codes(compile(src, name, "exec")):
            print("code", co.co_firstlineno, table_of(co).hex())
            print("lines", " ".join(map(str, lines_of(co))))

main()
