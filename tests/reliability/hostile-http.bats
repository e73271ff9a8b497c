#!/usr/bin/env bats
# Hostile HTTP clients against tf-serve's REST API (and idle crowds on its gRPC port): oversized bodies, slow headers from many connections, invalid UTF-8, deeply nested JSON, huge batches, huge headers, a crowd of idle connections; each is refused with the right status or closed, and a normal request sent meanwhile is answered in time (hostile.py).

bats_require_minimum_version 1.5.0
load ../cli/helpers

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	tf-csv2record -q "$DATA/breast_cancer.csv" -o bc.tfrecord
	tf-train -q --epochs 2 --checkpoint-dir ck bc.tfrecord > /dev/null
	tf-export -d ck --export-base models > /dev/null
	/usr/bin/python3 - "$DATA/breast_cancer.csv" <<'PY'
import csv, json, sys
r = list(csv.reader(open(sys.argv[1])))
row = [float(v) for v in r[1][:-1]]
json.dump({"instances": [row]}, open("one.json", "w"))
P = b"POST /v1/models/model:predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
def req(body):
    return P + b"Content-Length: %d\r\n\r\n" % len(body) + body
raw = {
    "announced-too-big": P + b"Content-Length: 100000000\r\n\r\n" + b"[" * 200000,
    "chunked-too-big": P + b"Transfer-Encoding: chunked\r\n\r\n"
        + (b"10000\r\n" + b" " * 65536 + b"\r\n") * 3 + b"0\r\n\r\n",
    "invalid-utf8": req(b'{"instances": [{"mean_radius": "\xff\xfe"}]}'),
    "invalid-utf8-key": req(b'{"instances": [{"\xc3\x28": 1}]}'),
    "deep-arrays": req(b"[" * 50000 + b"]" * 50000),
    "deep-objects": req(b'{"instances":' + b'{"a":' * 9000 + b"1" + b"}" * 9000 + b"}"),
    "huge-batch": req(json.dumps({"instances": [row] * 101}).encode()),
    "huge-header": P + b"X-Big: " + b"a" * 100000 + b"\r\nContent-Length: 2\r\n\r\n{}",
    "many-headers": P + b"".join(b"X-%d: v\r\n" % i for i in range(20000)) + b"Content-Length: 2\r\n\r\n{}",
    "negative-length": P + b"Content-Length: -5\r\n\r\n{}",
    "garbage": b"\x00\x01\x02 garbage\r\n\r\n",
}
for k, v in raw.items():
    open(k, "wb").write(v)
open("invalid-utf8.body", "wb").write(b'{"instances": [{"mean_radius": "\xff\xfe"}]}')
PY
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	F=$BATS_FILE_TMPDIR
}

teardown() {
	kill_quietly "${SPID:-}"
}

hostile() {
	/usr/bin/python3 "$BATS_TEST_DIRNAME/hostile.py" 127.0.0.1 "${URL##*:}" "$F/one.json" "$@"
}

# The JSON field $2 of the line $1.
field() {
	/usr/bin/python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"
}

# A request refused with this status line or closed without one; a normal
# request right after is answered (200) within a second.
refused() { # file "status line or empty"
	run -0 hostile raw "$F/$1"
	echo "$1: $output"
	[ "$(field "$output" status_line)" = "$2" ]
	[ "$(field "$output" normal_status)" = 200 ]
	/usr/bin/python3 -c 'import sys; assert float(sys.argv[1]) < 1.0' "$(field "$output" normal_s)"
}

@test "oversized, malformed and hostile requests: each refused with its status, the server answers the next one" {
	start_server --model-base "$F/models" --max-body-bytes 100000 --max-request-rows 100
	refused announced-too-big "HTTP/1.1 413 Content Too Large"
	refused chunked-too-big "HTTP/1.1 413 Content Too Large"
	refused invalid-utf8 "HTTP/1.1 400 Bad Request"
	refused invalid-utf8-key "HTTP/1.1 400 Bad Request"
	refused deep-arrays "HTTP/1.1 400 Bad Request"
	refused deep-objects "HTTP/1.1 400 Bad Request"
	refused huge-batch "HTTP/1.1 400 Bad Request"
	refused huge-header "HTTP/1.1 431 Request Header Fields Too Large"
	refused many-headers "HTTP/1.1 431 Request Header Fields Too Large"
	refused negative-length "HTTP/1.1 400 Bad Request"
	refused garbage ""
	# the messages say what was wrong
	run -0 curl -s --data-binary @"$F/invalid-utf8.body" "$URL/v1/models/model:predict"
	[[ "$output" == *"unable to decode byte 0xff"* ]]
	run -0 curl -s --data-binary "$(printf '[%.0s' $(seq 3000))" "$URL/v1/models/model:predict"
	[[ "$output" == *"maximum parsing depth reached"* ]]
	run -0 curl -s -H 'Content-Length: 100000000' --data-binary '{}' "$URL/v1/models/model:predict"
	[[ "$output" == *"request body larger than 100000 bytes (--max-body-bytes)"* ]]
	kill -0 "$SPID"
	stop_server
}

@test "slowloris: 300 connections trickling their headers are closed after --idle-timeout; normal requests meanwhile take milliseconds" {
	start_server --model-base "$F/models" --idle-timeout 2
	run -0 hostile slow 300 5
	echo "$output"
	[ "$(field "$output" opened)" = 300 ]
	[ "$(field "$output" closed)" = 300 ]
	[ "$(field "$output" normal_statuses)" = "[200]" ]
	/usr/bin/python3 -c 'import sys; assert float(sys.argv[1]) < 0.5' "$(field "$output" normal_worst_s)"
	run -0 curl -s "$URL/monitoring/prometheus/metrics"
	[[ "$output" == *'tfkit_connections_closed_total{reason="idle"} 300'* ]]
	stop_server
}

@test "3,000 idle connections: past --max-connections the longest waiting are closed, a normal request still gets in at once" {
	start_server --model-base "$F/models" --max-connections 1000
	run -0 hostile idle 3000 3
	echo "$output"
	[ "$(field "$output" opened)" = 3000 ]
	[ "$(field "$output" refused)" = 0 ]
	# the newest 1,000 (less the normal requests' room) are still open
	open=$(field "$output" open_at_end)
	[ "$open" -le 1000 ] && [ "$open" -ge 990 ]
	[ "$(field "$output" normal_statuses)" = "[200]" ]
	/usr/bin/python3 -c 'import sys; assert float(sys.argv[1]) < 0.5' "$(field "$output" normal_worst_s)"
	closed=$(curl -s "$URL/monitoring/prometheus/metrics" | sed -n 's/^tfkit_connections_closed_total{reason="limit"} //p')
	[ "$closed" -ge 2000 ]
	stop_server
}

@test "the gRPC port: 300 idle connections closed after --idle-timeout, past --max-connections closed at once" {
	start_server --model-base "$F/models" --idle-timeout 2 --max-connections 200
	CROWD_PORT=$GPORT run -0 hostile idle 300 5
	echo "$output"
	[ "$(field "$output" opened)" = 300 ]
	[ "$(field "$output" closed)" = 300 ]
	[ "$(field "$output" normal_statuses)" = "[200]" ]
	/usr/bin/python3 -c 'import sys; assert float(sys.argv[1]) < 0.5' "$(field "$output" normal_worst_s)"
	stop_server
}
