# Shared by the bats tests: paths, fixtures and small checks.
# tests/run puts the built tools first on PATH and sets TFKIT_TOP.

TOP=${TFKIT_TOP:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
DATA=$TOP/share/data

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# The long options a command's --help lists, sorted.
help_options() {
	"$1" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}

# The long options a man page documents (Fl -name), sorted.
man_options() {
	grep -o 'Fl -[a-z][a-z0-9-]*' "$TOP/man/man1/$1.1" | sed 's/^Fl /-/' | sort -u
}

# Flip one byte of a file at an offset.
flip_byte() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import sys
p, off = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read())
b[off] ^= 0x01
open(p, "wb").write(b)
PY
}

# A small CSV with mixed types.
small_csv() {
	printf 'a,b,name,y\n1,2.5,x,0\n2,3,"y, z",1\n3,-1.25,w,1\n'
}

# Two checkpoints hold the same training state: every block, and the
# header but for "config" and "run" (the flags and inputs of the run
# that saved it).
same_state() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import json, struct, sys
def records(p):
    b, out, i = open(p, "rb").read(), [], 0
    while i < len(b):
        n = struct.unpack("<Q", b[i:i + 8])[0]
        out.append(b[i + 12:i + 12 + n])
        i += 16 + n
    return out
a, b = records(sys.argv[1]), records(sys.argv[2])
ha, hb = (json.loads(r[0].split(b"\n", 1)[1]) for r in (a, b))
for h in (ha, hb):
    h.pop("config", None)
    h.pop("run", None)
assert ha == hb, (ha, hb)
assert a[1:] == b[1:], "blocks differ"
PY
}

# A CSV with two categorical features: the label is an interaction of
# colour and shape (flipped for large sizes), which a linear model of the
# numbers cannot learn.
shapes_csv() {
	/usr/bin/python3 - "${1:-3000}" <<'PY'
import random, sys
random.seed(5)
colors = ["red", "green", "blue", "black"]
shapes = ["circle", "square", "star"]
good = {("red", "circle"), ("green", "square"), ("blue", "star"),
        ("black", "circle"), ("red", "star")}
print("size,weight,color,shape,label")
for i in range(int(sys.argv[1])):
    c, s = random.choice(colors), random.choice(shapes)
    size, w = random.gauss(0, 1), random.gauss(5, 2)
    print(f"{size:.3f},{w:.3f},{c},{s},{int(((c, s) in good) != (size > 1.2))}")
PY
}

# N free loopback ports, one a line.
free_ports() {
	/usr/bin/python3 -c '
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print("\n".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

# Start tf-serve on free loopback ports (REST and gRPC) with the given
# flags; sets URL, GPORT and SPID once both ports are logged.  A teardown
# should kill "$SPID" if it is set.
start_server() {
	tf-serve --rest-api-port 0 --grpc-port 0 --listen-address 127.0.0.1 "$@" 2> serve.log 3>&- &
	SPID=$!
	port= GPORT=
	for _ in $(seq 200); do
		port=$(sed -n 's|.*REST API on http://.*:\([0-9]*\)/.*|\1|p' serve.log)
		GPORT=$(sed -n 's|.*gRPC API on .*:\([0-9]*\) .*|\1|p' serve.log)
		[ -n "$port" ] && [ -n "$GPORT" ] && break
		kill -0 "$SPID" 2> /dev/null || { cat serve.log; return 1; }
		sleep 0.05
	done
	[ -n "$port" ] && [ -n "$GPORT" ] || { cat serve.log; return 1; }
	URL=http://127.0.0.1:$port
	export URL GPORT
	# The port is taken before the models load: with --model-base, on
	# until its first look at the base is said (a version loaded or
	# refused, or none there), so the test's first request does not
	# race the load (under ASan on a loaded machine it takes seconds);
	# with --model-config-file, until every model has a version
	# (/readyz), or 30 s
	case " $* " in
	*" --model-base "*)
		for _ in $(seq 600); do
			grep -q '^tf-serve: model ' serve.log && break
			kill -0 "$SPID" 2> /dev/null || break
			sleep 0.05
		done
		;;
	*" --model-config-file "*)
		for _ in $(seq 600); do
			curl -sf -o /dev/null "$URL/readyz" && break
			kill -0 "$SPID" 2> /dev/null || break
			sleep 0.05
		done
		;;
	esac
}

# A teardown's end of background processes (empty arguments are none):
# each killed and waited for, whatever state it is in.
kill_quietly() {
	local p
	for p in "$@"; do
		[ -n "$p" ] || continue
		kill "$p" 2> /dev/null || true
		wait "$p" 2> /dev/null || true
	done
}

# SIGTERM; the server must exit 0.
stop_server() {
	kill -TERM "$SPID"
	wait "$SPID"
	SPID=
}

# NODE_PATH for the export checks' consumer libraries (.ci/run installs
# them in build/node), or skip.
node_libs() {
	command -v node > /dev/null || skip "node is not installed"
	for d in ${NODE_PATH:-} "$TFKIT_BUILD/node/node_modules" "$TOP/build/node/node_modules"; do
		if [ -d "$d/$1" ]; then
			export NODE_PATH=$d
			return 0
		fi
	done
	skip "$1 is not installed (.ci/run installs it: sh mk/node.sh)"
}

# Sessions of pages, one a row (the order task as users' logs): NAME
# gets N rows drawn from SEED, 4 to MAX pages of view, cart, home, search
# and help with one "login" and one "buy" among them, label 1 iff login
# comes first; with USER set, a user column (1 to 5) first.
sessions_csv() {
	/usr/bin/python3 - "$@" <<'PY'
import random, sys
name, seed, n, most = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
user = len(sys.argv) > 5
rng = random.Random(seed)
with open(name, "w") as f:
    f.write(("user," if user else "") + "pages,label\n")
    for i in range(n):
        k = rng.randint(4, most)
        p = [rng.choice(["view", "cart", "home", "search", "help"]) for _ in range(k)]
        a, b = rng.sample(range(k), 2)
        p[a], p[b] = "login", "buy"
        u = "%d," % rng.randint(1, 5) if user else ""
        f.write("%s%s,%d\n" % (u, " ".join(p), int(a < b)))
PY
}
