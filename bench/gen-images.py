#!/usr/bin/python3
"""Images for bench/cnn: ROWS rows of H*W*C pixels (0..255, H, W, C
order) and a label 0..9, as CSV with a header.  Each class is a bright
bar at its own place and angle over noise, so a network has something
to learn; the speed measured does not depend on it.

    gen-images.py ROWS H W C SEED [NPY] > images.csv

With NPY, the same rows as float32 (pixels, then the label) are also
saved there with numpy.save: bench/csv_cache.py's cache of the CSV
(images.csv.npy), so the baselines need not parse it.
"""
import sys

import numpy as np

rows, h, w, c, seed = (int(a) for a in sys.argv[1:6])
npy = sys.argv[6] if len(sys.argv) > 6 else None
kept = np.empty((rows, h * w * c + 1), np.float32) if npy else None
rng = np.random.default_rng(seed)
labels = rng.integers(0, 10, rows)
yy, xx = np.mgrid[0:h, 0:w]
out = sys.stdout
out.write(",".join([f"p{i}" for i in range(h * w * c)] + ["label"]) + "\n")
for k in range(rows):
    a = labels[k] * np.pi / 10
    d = np.abs((xx - w / 2) * np.sin(a) - (yy - h / 2) * np.cos(a))
    img = np.where(d < 2, 200.0, 0.0)[:, :, None] + rng.normal(40, 20, (h, w, c))
    px = np.clip(img, 0, 255).astype(np.int64).reshape(-1)
    out.write(",".join(map(str, px)) + f",{labels[k]}\n")
    if npy:
        kept[k, :-1] = px
        kept[k, -1] = labels[k]
if npy:
    np.save(npy, kept)
