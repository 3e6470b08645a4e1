#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Print "WxH colours=N covered=P" for an 8-bit RGB/RGBA PNG: how many
distinct colours it has and the percentage of pixels that are neither white
nor the first pixel's (background) colour.  Only zlib: no imaging library."""
import struct
import sys
import zlib


def main(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    i, idat = 8, b""
    while i < len(data):
        n, t = struct.unpack(">I4s", data[i:i + 8])
        body = data[i + 8:i + 8 + n]
        if t == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif t == b"IDAT":
            idat += body
        i += 12 + n
    assert depth == 8 and ctype in (2, 6), "unsupported PNG type"
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    colours, covered, bg = set(), 0, None
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[x] = (line[x] + pr) & 255
        for x in range(0, stride, bpp):
            px = bytes(line[x:x + 3])
            if bg is None:
                bg = px
            colours.add(px)
            if px != bg and px != b"\xff\xff\xff":
                covered += 1
        prev = line
    print("%dx%d colours=%d covered=%.1f" % (w, h, len(colours),
                                              100.0 * covered / (w * h)))


main(sys.argv[1])
