#!/usr/bin/python3
"""PyTorch baseline for bench/rnn: the same recurrent network as
tf-train's --model lstm or gru, Adam, batch 64, one epoch over the rows
of CSV (T x F values step by step, then the label), data already in
memory as a tensor.  Prints examples/s.

    torch_rnn.py CSV THREADS lstm|gru T F UNITS [cpu|cuda BATCH EPOCHS]

nn.LSTM or nn.GRU (batch_first) of UNITS over T steps of F features, its
last output through dense 64 (relu) into dense 10, as tf-train --model
lstm --hidden 64 builds it.
"""
import os
import sys
import time

import torch

from csv_cache import load

data = load(sys.argv[1])
torch.set_num_threads(int(sys.argv[2]))
kind, t, f, units = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
extra = sys.argv[7:]
nn = torch.nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        cell = nn.LSTM if kind == "lstm" else nn.GRU
        self.rnn = cell(f, units, batch_first=True)
        self.out = nn.Sequential(nn.Linear(units, 64), nn.ReLU(),
                                 nn.Linear(64, 10))

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.out(y[:, -1, :])


model = Net()
x = torch.from_numpy(data[:, :-1])
x = ((x - x.mean(0)) / (x.std(0) + 1e-6)).reshape(-1, t, f).contiguous()
y = torch.from_numpy(data[:, -1]).long()
device = extra[0] if extra else "cpu"
batch = int(extra[1]) if len(extra) > 1 else 64
epochs = int(extra[2]) if len(extra) > 2 else 1
if device == "cuda":
    # FP32 as tf-train --gpu-math fp32 unless TORCH_TF32=1; cuDNN picks
    # its fastest algorithms for these shapes (PyTorch at its best)
    tf32 = os.environ.get("TORCH_TF32") == "1"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    x, y, model = x.cuda(), y.cuda(), model.cuda()
opt = torch.optim.Adam(model.parameters(), lr=0.001)
loss_fn = nn.CrossEntropyLoss()
starts = list(range(0, len(x) - batch + 1, batch))


def step(i):
    opt.zero_grad()
    loss = loss_fn(model(x[i:i + batch]), y[i:i + batch])
    loss.backward()
    opt.step()


if device == "cuda":
    for i in starts[:10]:  # warm up: cuDNN's choices, kernels loaded
        step(i)
    torch.cuda.synchronize()
t0 = time.time()
for _ in range(epochs):
    for i in starts:
        step(i)
if device == "cuda":
    torch.cuda.synchronize()
print(f"{epochs * len(starts) * batch / (time.time() - t0):.0f}")
