#!/usr/bin/env python3
"""Run the commands of a README section as a user types them.

    runtour.py README "A tour" "Building and installing"

Takes the indented "$ command" lines between the two headings (a line
ending in a backslash continues on the next), in order, in the current
directory, each with bash -o pipefail.  The indented lines after a
command are what the README shows it printing: each must match a line of
the command's output, "..." standing for any text; a shown line that is
an error ("tf-NAME: ..." that is not a note) means the command must fail.
A command ending in "&" is started in the background (a server or a
task of a cluster); after tf-serve the next command waits until it
answers on the port it shows.  Those still running at the end are
stopped.  Exit status 0 when every command did what the README says.
"""
import re
import socket
import subprocess
import sys
import time


def section(path, start, end):
    lines = open(path).read().splitlines()
    i = next(k for k, l in enumerate(lines) if l.strip() == start)
    j = next(k for k, l in enumerate(lines) if k > i and l.strip() == end)
    return lines[i + 1:j]


def commands(lines):
    """(command, shown output lines) in order."""
    out, k = [], 0
    while k < len(lines):
        line = lines[k]
        m = re.match(r"^ {4}\$ (.*)$", line)
        if not m:
            k += 1
            continue
        cmd = m.group(1)
        while cmd.endswith("\\"):
            k += 1
            cmd = cmd[:-1] + " " + lines[k].strip()
        k += 1
        shown = []
        while (k < len(lines) and lines[k].startswith("    ")
               and not lines[k].startswith("    $ ")
               and not re.match(r"^ {4}[*0-9]", lines[k])):
            shown.append(lines[k][4:])
            k += 1
        out.append((cmd, shown))
    return out


def pattern(shown):
    return re.compile(".*".join(re.escape(p) for p in shown.split("...")))


def free(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def main():
    path, start, end = sys.argv[1:4]
    tour = commands(section(path, start, end))
    if not tour:
        print("no commands in the section")
        return 1
    port, servers = 8501, []
    if not free(port):  # someone else's server: the tour's on another port
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    try:
        for cmd, shown in tour:
            if port != 8501:
                cmd = cmd.replace("localhost:8501", "localhost:%d" % port)
                if cmd.startswith("tf-serve "):
                    cmd = cmd.replace("tf-serve ", "tf-serve --rest-api-port %d " % port, 1)
            if cmd.startswith("tf-serve ") and not free(8500):
                # the gRPC port is someone else's: any free one
                cmd = cmd.replace("tf-serve ", "tf-serve --grpc-port 0 ", 1)
            print("# $ " + cmd)
            if cmd.endswith("&"):
                servers.append(subprocess.Popen(["bash", "-c", "exec " + cmd[:-1]]))
                if not cmd.startswith("tf-serve "):
                    continue  # a task of a cluster: it ends by itself
                for _ in range(200):
                    if servers[-1].poll() is not None:
                        print("the server exited %d" % servers[-1].returncode)
                        return 1
                    r = subprocess.run(["curl", "-sf", "-o", "/dev/null",
                                        "localhost:%d/readyz" % port])
                    if r.returncode == 0:
                        break
                    time.sleep(0.1)
                else:
                    print("the server never became ready")
                    return 1
                continue
            r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=600)
            text = r.stdout.decode("utf-8", "replace").splitlines()
            want_fail = bool(shown) and re.match(r"^tf-[\w-]+: ", shown[0]) \
                and ": note:" not in shown[0]
            if (r.returncode != 0) != bool(want_fail):
                print("exit status %d%s" % (r.returncode,
                      " (the README shows an error)" if want_fail else ""))
                print("\n".join(text[-20:]))
                return 1
            for s in shown:
                if s.strip() == "...":
                    continue
                p = pattern(s)
                if not any(p.fullmatch(t) for t in text):
                    print("the README shows: " + s)
                    print("the command printed:\n" + "\n".join(text[-20:]))
                    return 1
    finally:
        for p in servers:
            p.terminate()
            p.wait()
    print("# %d commands ran as the README says" % len(tour))
    return 0


if __name__ == "__main__":
    sys.exit(main())
