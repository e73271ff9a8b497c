"""The training loop of the PyTorch baselines (bench/torch_train.py,
torch_cnn.py, torch_rnn.py): Adam (lr 0.001) over the rows of x in
order, batch by batch, for some epochs (or a number of steps), on the
CPU or a GPU; prints examples/s.

On cuda: FP32 as tf-train --gpu-math fp32 unless TORCH_TF32=1 (TF32
products, as --gpu-math tf32), cuDNN picking its fastest algorithms for
these shapes (PyTorch at its best), 10 steps' warm-up before the clock
starts, the data already in GPU memory (so this times compute only).
"""
import os
import time

import torch


def options(extra):
    """The cnn and rnn scripts' optional [cpu|cuda BATCH EPOCHS]:
    (device, batch, epochs), by default ("cpu", 64, 1)."""
    return (extra[0] if extra else "cpu",
            int(extra[1]) if len(extra) > 1 else 64,
            int(extra[2]) if len(extra) > 2 else 1)


def run(model, x, y, loss_fn, device, batch, epochs=1, steps=0):
    if device == "cuda":
        tf32 = os.environ.get("TORCH_TF32") == "1"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cudnn.benchmark = True
        x, y, model = x.cuda(), y.cuda(), model.cuda()
    opt = torch.optim.Adam(model.parameters(), lr=0.001)
    starts = list(range(0, len(x) - batch + 1, batch))
    if steps:
        starts = [starts[s % len(starts)] for s in range(steps)]

    def step(i):
        opt.zero_grad()
        loss = loss_fn(model(x[i:i + batch]), y[i:i + batch])
        loss.backward()
        opt.step()

    if device == "cuda":
        for i in starts[:10]:
            step(i)
        torch.cuda.synchronize()
    t0 = time.time()
    for _ in range(epochs):
        for i in starts:
            step(i)
    if device == "cuda":
        torch.cuda.synchronize()
    print(f"{epochs * len(starts) * batch / (time.time() - t0):.0f}")
