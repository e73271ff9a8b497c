"""The pixels of a PNG as the tests' reference reads them: an 8-bit grey,
non-interlaced image (as mkimages.c writes them), its IDAT chunks
inflated with zlib and each row's filter undone by the PNG
specification's rules, independently of libpng and of tfkit.

    from pngpix import pixels
    rows = pixels(open("x.png", "rb").read())   # [[v, ...], ...] of 0..255
"""
import struct
import zlib


def pixels(png):
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    i, idat, w, h = 8, b"", 0, 0
    while i < len(png):
        n, kind = struct.unpack(">I4s", png[i:i + 8])
        body = png[i + 8:i + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour == 0 and interlace == 0, "not 8-bit grey"
        elif kind == b"IDAT":
            idat += body
        i += 12 + n
    raw = zlib.decompress(idat)
    rows, prev = [], bytearray(w)
    for y in range(h):
        f, cur = raw[y * (w + 1)], bytearray(raw[y * (w + 1) + 1:(y + 1) * (w + 1)])
        for x in range(w):
            a, b, c = (cur[x - 1] if x else 0), prev[x], (prev[x - 1] if x else 0)
            p = a + b - c
            paeth = a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) \
                else (b if abs(p - b) <= abs(p - c) else c)
            cur[x] = (cur[x] + [0, a, b, (a + b) // 2, paeth][f]) & 255
        rows.append(list(cur))
        prev = cur
    return rows
