#!/usr/bin/python3
"""PyTorch baseline for bench/train and bench/gpu: the same 28-128-32-8-1
network (or lr, or the wide 28-1024-1024-1024-1), Adam, batch 1024 (wide:
4096), one epoch (or STEPS steps), data already in memory as a tensor, on
the GPU for cuda (so this times compute only).  Prints examples/s.

    torch_train.py CSV THREADS [dnn|lr|wide] [cpu|cuda] [STEPS]

TORCH_TF32=1 lets the GPU's matrix products use TF32.
"""
import os
import sys
import time

import torch

from csv_cache import load

data = load(sys.argv[1])
torch.set_num_threads(int(sys.argv[2]))
kind = sys.argv[3] if len(sys.argv) > 3 else "dnn"
device = sys.argv[4] if len(sys.argv) > 4 else "cpu"
steps = int(sys.argv[5]) if len(sys.argv) > 5 else 0
x = torch.from_numpy(data[:, :-1])
x = (x - x.mean(0)) / x.std(0)
y = torch.from_numpy(data[:, -1:])
batch = 4096 if kind == "wide" else 1024
if kind == "lr":
    model = torch.nn.Linear(28, 1)
elif kind == "wide":
    model = torch.nn.Sequential(
        torch.nn.Linear(28, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1))
else:
    model = torch.nn.Sequential(
        torch.nn.Linear(28, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32),
        torch.nn.ReLU(), torch.nn.Linear(32, 8), torch.nn.ReLU(),
        torch.nn.Linear(8, 1))
if device == "cuda":
    # FP32, as tf-train's --gpu-math fp32; TORCH_TF32=1: TF32 products,
    # as --gpu-math tf32
    tf32 = os.environ.get("TORCH_TF32") == "1"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    x, y, model = x.cuda(), y.cuda(), model.cuda()
opt = torch.optim.Adam(model.parameters(), lr=0.001)
loss_fn = torch.nn.BCEWithLogitsLoss()
starts = list(range(0, len(x) - batch + 1, batch))
if steps:
    starts = [starts[s % len(starts)] for s in range(steps)]


def step(i):
    opt.zero_grad()
    loss = loss_fn(model(x[i:i + batch]), y[i:i + batch])
    loss.backward()
    opt.step()


if device == "cuda":
    for i in starts[:10]:  # warm up: cuBLAS handles, kernels loaded
        step(i)
    torch.cuda.synchronize()
t0 = time.time()
for i in starts:
    step(i)
if device == "cuda":
    torch.cuda.synchronize()
print(f"{len(starts) * batch / (time.time() - t0):.0f}")
