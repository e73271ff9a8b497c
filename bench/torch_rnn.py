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
import sys

import torch

from csv_cache import load
from torch_loop import options, run

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
device, batch, epochs = options(extra)
run(model, x, y, nn.CrossEntropyLoss(), device, batch, epochs)
