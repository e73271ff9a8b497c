#!/usr/bin/python3
"""PyTorch baseline for bench/train: the same 28-128-32-8-1 network, Adam,
batch 1024, one epoch, data already in memory as a tensor (so this times
compute only).  Prints examples/s.

    torch_train.py CSV THREADS [dnn|lr]
"""
import sys
import time

import numpy as np
import torch

# The CSV parsed once, kept beside it as .npy (bench/train runs this
# many times; the parse is not what is timed).
cache = sys.argv[1] + ".npy"
try:
    data = np.load(cache)
except OSError:
    data = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1,
                      dtype=np.float32)
    try:
        np.save(cache, data)
    except OSError:
        pass
torch.set_num_threads(int(sys.argv[2]))
x = torch.from_numpy(data[:, :-1])
x = (x - x.mean(0)) / x.std(0)
y = torch.from_numpy(data[:, -1:])
if len(sys.argv) > 3 and sys.argv[3] == "lr":
    model = torch.nn.Linear(28, 1)
else:
    model = torch.nn.Sequential(
        torch.nn.Linear(28, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32),
        torch.nn.ReLU(), torch.nn.Linear(32, 8), torch.nn.ReLU(),
        torch.nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.001)
loss_fn = torch.nn.BCEWithLogitsLoss()
t0 = time.time()
for i in range(0, len(x), 1024):
    opt.zero_grad()
    loss = loss_fn(model(x[i:i + 1024]), y[i:i + 1024])
    loss.backward()
    opt.step()
print(f"{len(x) / (time.time() - t0):.0f}")
