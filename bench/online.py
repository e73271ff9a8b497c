#!/usr/bin/python3
"""bench/online.py: a served model that learns from what clients post.

    online.py BUILD DIR

A model is trained on rows of one concept (label = x0 > 0, four features
of N(0, 1)) and exported; tf-serve serves it with --train-queue and a
tf-train --stream trains the queue, publishing a version every
EXPORT_EVERY seconds (1), which the server picks up every POLL seconds
(0.5).  Then a client posts (batches of 100 on :train) 2,000 more rows of
that concept and, from there on, rows whose concept has shifted (label =
x1 > 0) in chunks of 250.  After each chunk it waits until the served
version has trained on every row acknowledged so far (the server's
tfkit_model_examples_trained), timing that from the chunk's last 200,
and asks the served version (:predict) about 1,000 held-out rows of the
new concept.  Prints the latency figures, the accuracy curve and after
how many new-concept rows the served accuracy came within 0.02 of the
old concept's; a cron round every M minutes lags by whatever arrives in
M minutes.
"""
import json
import os
import random
import re
import socket
import subprocess
import sys
import time
import urllib.request

B, D = sys.argv[1], sys.argv[2]
EXPORT_EVERY = float(os.environ.get("EXPORT_EVERY", "1"))
POLL = float(os.environ.get("POLL", "0.5"))
rng = random.Random(7)
NAMES = ["x0", "x1", "x2", "x3"]


def rows(n, concept):
    out = []
    for _ in range(n):
        x = [round(rng.gauss(0, 1), 4) for _ in NAMES]
        out.append((x, int(x[concept] > 0)))
    return out


def port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def trained(base):
    text = urllib.request.urlopen(base + "/monitoring/prometheus/metrics", timeout=10).read().decode()
    m = re.search(r'^tfkit_model_examples_trained\{model="model"\} (\d+)', text, re.M)
    return int(m.group(1)) if m else -1


def accuracy(base, test):
    inst = [dict(zip(NAMES, x)) for x, _ in test]
    p = post(base + "/v1/models/model:predict", {"instances": inst})["predictions"]
    return sum(int(q["class_ids"] == y) for q, (_, y) in zip(p, test)) / len(test)


def main():
    os.makedirs(D, exist_ok=True)
    os.chdir(D)
    subprocess.run("rm -rf ck models q", shell=True, check=True)
    with open("start.csv", "w") as f:
        f.write(",".join(NAMES) + ",label\n")
        for x, y in rows(2000, 0):
            f.write(",".join(map(str, x)) + ",%d\n" % y)
    tool = lambda name: os.path.join(B, "bin", name)
    subprocess.run([tool("tf-csv2record"), "-q", "-o", "start.tfrecord", "start.csv"], check=True)
    subprocess.run([tool("tf-train"), "-q", "--model", "lr", "-e", "5", "-b", "32",
                    "--learning-rate", "0.05", "--checkpoint-dir", "ck", "start.tfrecord"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([tool("tf-export"), "-d", "ck", "--export-base", "models"],
                   check=True, stdout=subprocess.DEVNULL)
    p = port()
    base = "http://127.0.0.1:%d" % p
    log = open("serve.log", "w")
    server = subprocess.Popen([tool("tf-serve"), "--model-base", "models", "--train-queue", "q",
                               "--rest-api-port", str(p), "--grpc-port", "off",
                               "--listen-address", "127.0.0.1", "--poll-interval", str(POLL)],
                              stderr=log)
    trainer = None
    try:
        for _ in range(200):
            try:
                start = trained(base)
                break
            except OSError:
                time.sleep(0.05)
        trainer = subprocess.Popen([tool("tf-train"), "-q", "--stream", "q", "-b", "32",
                                    "--checkpoint-dir", "ck", "--export-base", "models",
                                    "--export-every", str(EXPORT_EVERY)],
                                   stdout=open("train.json", "w"), stderr=open("train.err", "w"))
        url = base + "/v1/models/model:train"
        test_old, test_new = rows(1000, 0), rows(1000, 1)
        posted = 0

        def send(batch):
            nonlocal posted
            for i in range(0, len(batch), 100):
                ex = [dict(zip(NAMES, x), label=y) for x, y in batch[i:i + 100]]
                posted += post(url, {"examples": ex})["accepted"]
            return time.time()

        def served():
            t0 = time.time()
            while trained(base) < start + posted:
                if time.time() - t0 > 60:
                    raise SystemExit("online: the served version never caught up")
                time.sleep(0.02)
            return time.time()

        acked = send(rows(2000, 0))
        lat = [served() - acked]
        old = accuracy(base, test_old)
        curve, seen, recovered = [(0, accuracy(base, test_new))], 0, None
        while seen < 5000:
            acked = send(rows(250, 1))
            lat.append(served() - acked)
            seen += 250
            a = accuracy(base, test_new)
            curve.append((seen, a))
            if recovered is None and a >= old - 0.02:
                recovered = seen
        lat.sort()
        print("post -> served version trained on it (--export-every %g, --poll-interval %g): "
              "median %.2f s, max %.2f s over %d rounds (bound: %.1f s plus the export's own time)"
              % (EXPORT_EVERY, POLL, lat[len(lat) // 2], lat[-1], len(lat), EXPORT_EVERY + POLL))
        print("served accuracy, old concept before the shift: %.3f" % old)
        print("served accuracy on the new concept after N new-concept examples: "
              + " ".join("%d:%.3f" % c for c in curve))
        if recovered is not None:
            print("recovered (within 0.02 of the old concept's accuracy) after %d new-concept examples"
                  % recovered)
        else:
            print("not recovered within 5000 new-concept examples")
    finally:
        if trainer is not None:
            trainer.terminate()
            trainer.wait()
        server.terminate()
        server.wait()


main()
