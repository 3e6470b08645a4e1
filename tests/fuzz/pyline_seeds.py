# SPDX-License-Identifier: Apache-2.0
"""Seeds for fuzz_pyline: the line tables of a few real code objects of
the interpreter running this script (python3.X pyline_seeds.py OUTDIR).

Each seed is the minor version (u8), co_firstlineno (s32), an
instruction index (u32), then co_lnotab (3.8, 3.9) or co_linetable."""
import os
import struct
import sys


def sample(a, b=2):
    total = 0
    for i in range(a):
        if i % b:
            total += i
        else:
            total -= (
                i * 2
            )
    try:
        total //= b - 2
    except ZeroDivisionError:
        total = -1
    return [x for x in range(total) if x] if total > 0 else total


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    minor = sys.version_info.minor
    codes = [sample.__code__, main.__code__, os.path.join.__code__,
             os.makedirs.__code__]
    for n, code in enumerate(codes):
        table = code.co_lnotab if minor <= 9 else code.co_linetable
        for instr in (0, 7):
            name = "py3.%d-%d-%d" % (minor, n, instr)
            with open(os.path.join(out, name), "wb") as f:
                f.write(struct.pack("<BiI", minor, code.co_firstlineno,
                                    instr))
                f.write(table)


if __name__ == "__main__":
    main()
