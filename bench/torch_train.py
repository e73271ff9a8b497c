#!/usr/bin/python3
"""PyTorch baseline for bench/train and bench/gpu: the same 28-128-32-8-1
network (or lr, or the wide 28-1024-1024-1024-1), Adam, batch 1024 (wide:
4096), one epoch (or STEPS steps), data already in memory as a tensor, on
the GPU for cuda (so this times compute only).  Prints examples/s.

    torch_train.py CSV THREADS [dnn|lr|wide] [cpu|cuda] [STEPS]

TORCH_TF32=1 lets the GPU's matrix products use TF32.
"""
import sys

import torch

from csv_cache import load
from torch_loop import run

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
run(model, x, y, torch.nn.BCEWithLogitsLoss(), device, batch, 1, steps)
