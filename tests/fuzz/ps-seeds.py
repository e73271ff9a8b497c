#!/usr/bin/env python3
"""Seeds for fuzz_ps (tests/fuzz/corpus/ps): conversations with one ps,
encoded by hand (tfkit.ps.Request, libtfcore/proto/ps.proto).  Each
seed is [config byte] then [context][length LE16][Request] ...
    python3 tests/fuzz/ps-seeds.py tests/fuzz/corpus/ps"""
import os
import struct
import sys


def varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, wire, payload):
    return varint(num << 3 | wire) + payload


def req(**kw):
    nums = {"version": 1, "token": 2, "kind": 3, "worker": 4, "step": 5,
            "seq": 6, "n": 7, "values": 8, "slots": 9, "learning_rate": 10,
            "examples": 11, "optimizer": 12, "hparams": 13, "sync": 14,
            "replicas_to_aggregate": 15, "total_replicas": 16,
            "staleness": 17, "peer_timeout": 18, "epoch": 19, "done": 20,
            "sparse": 22, "blocks": 23, "want": 24}
    kw.setdefault("version", 1)
    out = b""
    for k, v in kw.items():
        n = nums[k]
        if k in ("token", "optimizer", "hparams"):
            v = v.encode()
        if isinstance(v, bytes):
            out += field(n, 2, varint(len(v)) + v)
        elif isinstance(v, list):
            body = b"".join(varint(x) for x in v)
            out += field(n, 2, varint(len(body)) + body)
        elif k == "learning_rate":
            out += field(n, 5, struct.pack("<f", v))
        elif k == "peer_timeout":
            out += field(n, 1, struct.pack("<d", v))
        else:
            out += field(n, 0, varint(int(v)))
    return out


def conv(config, msgs):
    out = bytes([config])
    for ctx, m in msgs:
        out += bytes([ctx]) + struct.pack("<H", len(m)) + m
    return out


def floats(*v):
    return struct.pack("<%df" % len(v), *v)


INIT, PUSH, PULL, SNAP, DONE, STATUS, FINISH = 1, 2, 0, 3, 4, 5, 6
N = 4
init = req(kind=INIT, n=N, values=floats(1, 2, 3, 4), optimizer="sgd",
           total_replicas=2, replicas_to_aggregate=2)
adam = req(kind=INIT, n=N, values=floats(1, 2, 3, 4), optimizer="adam",
           hparams="beta1=0.8", total_replicas=2)
g = floats(0.5, 0.5, 0.5, 0.5)
seeds = {
    # async: init, pushes (one resent), a stale one, pull, status, done
    "async": conv(0x10, [
        (0, init),
        (1, req(kind=PUSH, n=N, worker=0, step=0, seq=1, values=g,
                learning_rate=0.1, examples=8, epoch=0, done=8)),
        (1, req(kind=PUSH, n=N, worker=0, step=0, seq=1, values=g,
                learning_rate=0.1)),
        (2, req(kind=PUSH, n=N, worker=1, step=0, seq=1, values=g,
                learning_rate=0.1)),
        (0, req(kind=PULL, n=N, worker=1)),
        (3, req(kind=STATUS)),
        (0, req(kind=DONE, n=N, worker=0)),
        (0, req(kind=FINISH, n=N, worker=0))]),
    # sync with two trainers: a held push answered by the second
    "sync": conv(0x11, [
        (0, init),
        (1, req(kind=PUSH, n=N, worker=0, step=0, seq=1, values=g,
                learning_rate=0.1)),
        (2, req(kind=SNAP, n=N, worker=0, step=1)),
        (3, req(kind=PUSH, n=N, worker=1, step=0, seq=1, values=g,
                learning_rate=0.1)),
        (1, req(kind=PUSH, n=N, worker=1, step=0, seq=2, values=g,
                learning_rate=0.1))]),
    # sparse pushes and pulls of ranges, an adam shard with its slots
    "sparse": conv(0x10, [
        (0, adam),
        (1, req(kind=PUSH, n=N, worker=0, step=0, seq=1, sparse=1,
                blocks=[1, 2], values=floats(0.1, 0.2), want=[0, 1, 3, 1],
                learning_rate=0.01)),
        (1, req(kind=PULL, n=N, worker=1, sparse=1, want=[2, 2])),
        (2, req(kind=SNAP, n=N, worker=0, step=0))]),
    # two shards: the second of two, and a token
    "shard": conv(0x0e, [
        (0, req(kind=INIT, token="secret", n=5, values=floats(3, 4, 5),
                optimizer="momentum", total_replicas=1)),
        (1, req(kind=PUSH, token="secret", n=5, worker=0, seq=1,
                values=floats(1, 1, 1), learning_rate=0.5)),
        (2, req(kind=PUSH, token="wrong", n=5, worker=0, seq=2,
                values=floats(1, 1, 1), learning_rate=0.5))]),
    # refused: before INIT, wrong version, a bad INIT, garbage
    "refused": conv(0x00, [
        (0, req(kind=PULL, n=N)),
        (1, req(kind=STATUS, version=2)),
        (2, req(kind=INIT, n=N, values=floats(1), optimizer="sgd",
                total_replicas=1)),
        (3, req(kind=INIT, n=N, values=floats(1, 2, 3, 4),
                optimizer="nope", total_replicas=1)),
        (0, b"\xff\xff\xff"),
        (1, init),
        (2, req(kind=PUSH, n=N, worker=7, values=g)),
        (3, req(kind=PUSH, n=N, worker=0, values=floats(1))),
        (0, req(kind=PUSH, n=N, worker=0, sparse=1, blocks=[3, 5],
                values=floats(1)))]),
}
os.makedirs(sys.argv[1], exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(sys.argv[1], name), "wb") as f:
        f.write(data)
