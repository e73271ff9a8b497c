#!/usr/bin/python3
"""PyTorch baseline for bench/cnn: the same convolutional network as
tf-train's, Adam, batch 64, one epoch over the rows of CSV (pixels in
H, W, C order, then the label), data already in memory as a tensor.
Prints examples/s.

    torch_cnn.py CSV THREADS lenet|small [cpu|cuda BATCH EPOCHS]

lenet: 28x28x1, conv5-6 (same), relu, max_pool 2, conv5-16 (valid), relu,
max_pool 2, dense 120, 84, 10 (relu between).  small: 32x32x3, conv3-32,
relu, max_pool 2, conv3-64, relu, max_pool 2 (same padding), dense 128,
10.  Both as tf-train builds them (NHWC rows read as NCHW tensors, the
order of the flattened features aside, which costs nothing).
"""
import sys

import torch

from csv_cache import load
from torch_loop import options, run

data = load(sys.argv[1])
torch.set_num_threads(int(sys.argv[2]))
kind = sys.argv[3]
extra = sys.argv[4:]
nn = torch.nn
if kind == "lenet":
    h, w, c = 28, 28, 1
    model = nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10))
else:
    h, w, c = 32, 32, 3
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(4096, 128), nn.ReLU(), nn.Linear(128, 10))
x = torch.from_numpy(data[:, :-1])
x = (x - x.mean(0)) / (x.std(0) + 1e-6)
x = x.reshape(-1, h, w, c).permute(0, 3, 1, 2).contiguous()
y = torch.from_numpy(data[:, -1]).long()
device, batch, epochs = options(extra)
run(model, x, y, nn.CrossEntropyLoss(), device, batch, epochs)
