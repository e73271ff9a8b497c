#!/usr/bin/env python3
"""Hostile HTTP clients for tests/reliability/hostile-http.bats (stdlib
only).  Each scenario prints one JSON line of what it saw; while the
hostile connections are open it sends normal :predict requests (BODY, a
file) and reports their slowest time, so the test can say they were still
answered in time.

    hostile.py HOST PORT BODY slow N SECONDS   N connections sending their
                                              headers a byte a second
    hostile.py HOST PORT BODY idle N SECONDS   N connections that send nothing
    hostile.py HOST PORT BODY raw FILE         FILE's bytes as a request; the
                                              status line that comes back

The crowd goes to $CROWD_PORT when it is set (the gRPC port, say), the
normal requests always to PORT.
"""
import json
import os
import socket
import sys
import time

HOST, PORT, BODY = sys.argv[1], int(sys.argv[2]), open(sys.argv[3], "rb").read()
CROWD_PORT = int(os.environ.get("CROWD_PORT", PORT))
PATH = "/v1/models/model:predict"


def normal():
    """One normal request on its own connection: (seconds, status)."""
    t0 = time.monotonic()
    s = socket.create_connection((HOST, PORT), timeout=10)
    s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\nConnection: close\r\n\r\n" % (PATH.encode(), len(BODY)) + BODY)
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    return time.monotonic() - t0, status


def closed(s):
    """Whether the server has closed s (EOF, a reset or an answer)."""
    s.setblocking(False)
    try:
        b = s.recv(4096)
        return True if b == b"" else b[:12].decode(errors="replace")
    except BlockingIOError:
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True
    finally:
        s.setblocking(True)


def crowd(n, seconds, trickle):
    socks, refused = [], 0
    for _ in range(n):
        try:
            s = socket.create_connection((HOST, CROWD_PORT), timeout=5)
            socks.append(s)
        except OSError:
            refused += 1
    head = b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nX-Slow: " % PATH.encode()
    worst, statuses, sent = 0.0, set(), 0
    t_end = time.monotonic() + seconds
    closed_at = {}
    while time.monotonic() < t_end:
        if trickle:
            for i, s in enumerate(socks):
                if i in closed_at:
                    continue
                try:
                    s.send(head[sent:sent + 1] if sent < len(head) else b"a")
                except OSError:
                    closed_at[i] = time.monotonic()
            sent += 1
        t, st = normal()
        worst = max(worst, t)
        statuses.add(st)
        for i, s in enumerate(socks):
            if i not in closed_at and closed(s):
                closed_at[i] = time.monotonic()
        time.sleep(max(0.0, 1.0 - t))
    still_open = sum(1 for i in range(len(socks)) if i not in closed_at)
    for s in socks:
        s.close()
    print(json.dumps({"opened": len(socks), "refused": refused, "closed": len(closed_at),
                      "open_at_end": still_open, "normal_worst_s": round(worst, 3),
                      "normal_statuses": sorted(statuses)}))


def raw(path):
    s = socket.create_connection((HOST, PORT), timeout=10)
    data = open(path, "rb").read()
    try:
        s.sendall(data)
    except OSError:
        pass  # the server stopped reading: its answer is what counts
    got = b""
    try:
        while b"\r\n\r\n" not in got:
            b = s.recv(65536)
            if not b:
                break
            got += b
    except OSError:
        pass
    s.close()
    line = got.split(b"\r\n", 1)[0].decode(errors="replace")
    t, st = normal()
    print(json.dumps({"status_line": line, "normal_s": round(t, 3), "normal_status": st}))


what = sys.argv[4]
if what in ("slow", "idle"):
    crowd(int(sys.argv[5]), float(sys.argv[6]), what == "slow")
else:
    raw(sys.argv[5])
