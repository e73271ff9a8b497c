#!/usr/bin/env python3
"""train_client.py - post the rows of a CSV file to tf-serve's :train.

    train_client.py --server http://localhost:8501 --model cancer \\
        --schema data.tfrecord.schema.json [--batch 100] rows.csv

Each row becomes an example: its columns by the header's names, typed as
the schema types them (int64, float, bytes), the label among them.  Rows
go in requests of --batch examples.  A 503 (the queue full, or not
writable) is retried after its Retry-After; a connection refused or cut
is retried too, and counted as "unsure": the server may have queued that
request before it went away, and the retry queues it again.  A 400 (a
row the model refuses) stops with the server's message.  One JSON line
at the end: rows posted, examples accepted, retries, unsure.  Only the
Python standard library.
"""
import argparse
import csv
import json
import sys
import time
import urllib.error
import urllib.request


def typed(schema):
    """Column name -> a function from the CSV text to its JSON value."""
    conv = {"int64": int, "float": float, "bytes": str}
    cols = {f["name"]: conv.get(f["type"], str) for f in schema["features"]}
    label = schema.get("label") or {}
    if "name" in label:
        cols[label["name"]] = conv.get(label["type"], str)
    return cols


def post(url, body):
    """Post until an answer that is not a 503: (status, body, retries, unsure)."""
    retries = unsure = 0
    while True:
        req = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, json.loads(r.read()), retries, unsure
        except urllib.error.HTTPError as e:
            if e.code != 503:
                return e.code, json.loads(e.read() or b"{}"), retries, unsure
            time.sleep(float(e.headers.get("Retry-After") or 1))
        except (urllib.error.URLError, ConnectionError, OSError):
            unsure += 1
            time.sleep(0.2)
        retries += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", default="http://localhost:8501")
    ap.add_argument("--model", default="model")
    ap.add_argument("--schema", required=True)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("csv")
    a = ap.parse_args()
    cols = typed(json.load(open(a.schema)))
    url = "%s/v1/models/%s:train" % (a.server.rstrip("/"), a.model)
    rows = csv.reader(open(a.csv, newline=""))
    head = next(rows)
    unknown = [h for h in head if h not in cols]
    if unknown:
        sys.exit("train_client: %s: columns the schema does not have: %s"
                 % (a.csv, ", ".join(unknown)))
    total = {"posted": 0, "accepted": 0, "retries": 0, "unsure": 0}
    batch = []

    def flush():
        status, answer, retries, unsure = post(url, json.dumps({"examples": batch}).encode())
        total["retries"] += retries
        total["unsure"] += unsure
        if status != 200:
            sys.exit("train_client: %d: %s" % (status, answer.get("error", answer)))
        total["posted"] += len(batch)
        total["accepted"] += answer["accepted"]
        batch.clear()

    for row in rows:
        batch.append({h: cols[h](v) for h, v in zip(head, row) if v != ""})
        if len(batch) == a.batch:
            flush()
    if batch:
        flush()
    print(json.dumps(total))


main()
