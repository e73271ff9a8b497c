#!/usr/bin/env bats
# tf-serve: the TF Serving REST API on a loopback port (curl), errors,
# health and metrics, hot reload under load, corrupt versions, archives,
# the nng endpoint, the stdin filter, shutdown.

bats_require_minimum_version 1.5.0
load helpers

# A breast-cancer dnn (binary) and an iris model (multiclass), exported.
setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	tf-csv2record "$TOP/share/data/breast_cancer.csv" -o bc.tfrecord
	tf-train -q --epochs 10 --batch-size 32 --enable-bn --validate bc.tfrecord \
		--checkpoint-dir ck bc.tfrecord > /dev/null
	tf-export -d ck --export-base models > /dev/null
	tf-csv2record "$TOP/share/data/iris.csv" -o iris.tfrecord
	tf-train -q --epochs 20 --batch-size 16 --checkpoint-dir ick iris.tfrecord > /dev/null
	tf-export -d ick --export-base iris > /dev/null
	# requests: two rows of features by name, and as dense lists
	/usr/bin/python3 - "$TOP/share/data/breast_cancer.csv" <<'PY'
import csv, json, sys
r = list(csv.reader(open(sys.argv[1])))
h = r[0][:-1]
rows = [[float(v) for v in row[:-1]] for row in r[1:3]]
named = [dict(zip(h, row)) for row in rows]
json.dump({"instances": named}, open("named.json", "w"))
json.dump({"instances": rows}, open("dense.json", "w"))
json.dump({"inputs": {k: [x[k] for x in named] for k in h}}, open("columns.json", "w"))
json.dump({"examples": named}, open("examples.json", "w"))
json.dump({"instances": rows[:1]}, open("one.json", "w"))
PY
	tf-records head -n 2 --raw bc.tfrecord | tf-eval -d ck --predict > expected.json
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	F=$BATS_FILE_TMPDIR
}

teardown() {
	kill_quietly "${SPID:-}"
}

# curl: prints the body, then the status on a line of its own.
req() {
	curl -s -w '\n%{http_code}' "$@"
}

@test "-h and --help print the same usage on stdout" {
	run -0 --separate-stderr tf-serve --help
	[[ "$output" == Usage:* ]]
	[ -z "$stderr" ]
	help=$output
	run -0 tf-serve -h
	[ "$output" = "$help" ]
}

@test "--version names the command and the library" {
	run -0 tf-serve --version
	[[ "$output" =~ ^tf-serve\ [0-9]+\.[0-9]+\.[0-9]+\ \(libtfcore ]]
}

@test "the man page documents exactly the options --help lists" {
	diff <(help_options tf-serve) <(man_options tf-serve)
}

@test "model status and metadata in TF Serving's shapes" {
	start_server --model-base "$F/models" --model-name cancer
	run -0 req "$URL/v1/models/cancer"
	[ "${lines[-1]}" = 200 ]
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1].rsplit("\n", 1)[0])
assert j == {"model_version_status": [{"version": "1", "state": "AVAILABLE",
    "status": {"error_code": "OK", "error_message": ""}}]}, j' "$output"
	run -0 req "$URL/v1/models/cancer/versions/1"
	[ "${lines[-1]}" = 200 ]
	run -0 req "$URL/v1/models/cancer/metadata"
	[ "${lines[-1]}" = 200 ]
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1].rsplit("\n", 1)[0])
assert j["model_spec"] == {"name": "cancer", "signature_name": "", "version": "1"}, j["model_spec"]
s = j["metadata"]["signature_def"]["signature_def"]
d = s["serving_default"]
assert d["method_name"] == "tensorflow/serving/predict", d
assert len(d["inputs"]) == 30, len(d["inputs"])
x = d["inputs"]["mean_radius"]
assert x == {"dtype": "DT_FLOAT", "tensor_shape": {"dim": [{"size": "-1", "name": ""}],
    "unknown_rank": False}, "name": "mean_radius:0"}, x
p = d["outputs"]["probabilities"]["tensor_shape"]["dim"]
assert p == [{"size": "-1", "name": ""}, {"size": "2", "name": ""}], p
assert s["classification"]["method_name"] == "tensorflow/serving/classify"
assert s["regression"]["method_name"] == "tensorflow/serving/regress"
assert j["metadata"]["tfkit"]["provenance"]["step"] > 0' "$output"
	stop_server
}

@test ":predict: named instances, dense lists and columnar inputs agree with tf-eval" {
	start_server --model-base "$F/models" --model-name cancer
	for f in named dense columns; do
		req -d @"$F/$f.json" "$URL/v1/models/cancer:predict" > $f.out
		[ "$(tail -n 1 $f.out)" = 200 ]
	done
	/usr/bin/python3 - "$F/expected.json" <<'PY'
import json, sys
want = [json.loads(l) for l in open(sys.argv[1])]
named = json.loads(open("named.out").read().rsplit("\n", 1)[0])
dense = json.loads(open("dense.out").read().rsplit("\n", 1)[0])
cols = json.loads(open("columns.out").read().rsplit("\n", 1)[0])
assert named == dense, (named, dense)
p = named["predictions"]
assert len(p) == 2
for got, w in zip(p, want):
    # one shape: tf-eval --predict prints the rows :predict answers
    assert got == w, (got, w)
    assert set(got) == {"probabilities", "class_ids", "classes"}, got
    assert got["classes"] == str(got["class_ids"]), got
    assert abs(sum(got["probabilities"]) - 1) < 1e-6
o = cols["outputs"]
assert o["probabilities"] == [x["probabilities"] for x in p], (o, p)
assert o["class_ids"] == [x["class_ids"] for x in p], o
assert o["classes"] == [x["classes"] for x in p], o
PY
	# the same request names the version
	run -0 req -d @"$F/named.json" "$URL/v1/models/cancer/versions/1:predict"
	[ "${lines[-1]}" = 200 ]
	stop_server
}

@test ":classify and :regress take Examples; multiclass labels" {
	start_server --model-config-file <(printf '{"models": [{"name": "cancer", "base_path": "%s"}, {"name": "iris", "base_path": "%s"}]}' "$F/models" "$F/iris")
	run -0 req -d @"$F/examples.json" "$URL/v1/models/cancer:classify"
	[ "${lines[-1]}" = 200 ]
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1].rsplit("\n", 1)[0])
r = j["results"]
assert len(r) == 2 and [l for l, _ in r[0]] == ["0", "1"], r
assert abs(sum(s for _, s in r[0]) - 1) < 1e-6, r' "$output"
	run -0 req -d @"$F/examples.json" "$URL/v1/models/cancer:regress"
	[ "${lines[-1]}" = 200 ]
	[[ "${lines[0]}" == '{"results":['*']}' ]]
	# a missing feature is a 400 naming it; unknown ones are ignored
	run -0 req -d '{"examples": [{"sepal_length": 5.1, "petal_length": 1.4, "colour": "blue"}]}' "$URL/v1/models/iris:classify"
	[ "${lines[-1]}" = 400 ]
	[[ "${lines[0]}" == *"example 0: no feature 'sepal_width' (tf-serve --allow-missing"* ]]
	run -0 req -d '{"examples": [{"bogus": 5}]}' "$URL/v1/models/cancer:classify"
	[ "${lines[-1]}" = 400 ]
	run -0 req -d '{"examples": [{"sepal_length": 5.1, "sepal_width": 3.5, "petal_length": 1.4, "petal_width": 0.2, "colour": "blue"}]}' "$URL/v1/models/iris:classify"
	[ "${lines[-1]}" = 200 ]
	[[ "${lines[0]}" == '{"results":[[["0",'*'],["1",'*'],["2",'*']]]}' ]]
	run -0 req -d '{"examples": [{"sepal_length": 5.1, "sepal_width": 3.5, "petal_length": 1.4, "petal_width": 0.2}]}' "$URL/v1/models/iris:regress"
	[ "${lines[-1]}" = 400 ]
	[[ "${lines[0]}" == *"no regression signature"* ]]
	run -0 req -d '{"instances": [[5.1, 3.5, 1.4, 0.2]]}' "$URL/v1/models/iris:predict"
	[ "${lines[-1]}" = 200 ]
	[[ "${lines[0]}" == '{"predictions":[{"probabilities":['*'],"class_ids":0,"classes":"0"}]}' ]]
	stop_server
	# asked for: a missing feature counts as its training mean
	start_server --model-base "$F/iris" --model-name iris --allow-missing
	run -0 req -d '{"examples": [{"sepal_length": 5.1, "petal_length": 1.4}]}' "$URL/v1/models/iris:classify"
	[ "${lines[-1]}" = 200 ]
	stop_server
}

@test "client errors: 400 with TF Serving's messages, 404 for unknown models" {
	start_server --model-base "$F/models" --model-name cancer --max-request-rows 1 --max-body-bytes 4096
	check() { # status substring curl-args...
		local want=$1 text=$2
		shift 2
		run -0 req "$@"
		[ "${lines[-1]}" = "$want" ] || { echo "got ${lines[-1]}: $output"; return 1; }
		[[ "$output" == *"$text"* ]] || { echo "no '$text' in $output"; return 1; }
	}
	P=$URL/v1/models/cancer:predict
	check 400 '{ "error": "JSON Parse error: ' -d '{"instances": [1,' "$P"
		check 400 "Missing 'inputs' or 'instances' key" -d '{}' "$P"
	check 400 "'inputs' holds no rows" -d '{"inputs": []}' "$P"
	check 400 "'instances' must be a non-empty list" -d '{"instances": []}' "$P"
	check 404 "Unrecognized servable version label: stable" -d @"$F/one.json" "$URL/v1/models/cancer/labels/stable:predict"
	check 400 "Only one of 'instances' or 'inputs'" -d '{"instances": [[1]], "inputs": [[1]]}' "$P"
	check 400 "instance 0: unknown input 'radius'" -d '{"instances": [{"radius": 1}]}' "$P"
	check 400 "instance 0: missing input 'mean_texture'" -d '{"instances": [{"mean_radius": 1}]}' "$P"
	check 400 "expected a list of 30 numbers" -d '{"instances": [[1, 2]]}' "$P"
	check 400 "expected a number, got a string" -d '{"instances": [{"mean_radius": "x"}]}' "$P"
	check 400 "more than the limit of 1" -d @"$F/dense.json" "$P"
	/usr/bin/python3 -c 'print("{\"instances\": [" + ",".join(["[1]"] * 2000) + "]}")' > big.json
	check 413 "larger than 4096 bytes" -d @big.json "$P"
	check 400 'Serving signature name: \"nope\" not found' -d '{"signature_name": "nope", "instances": [[1]]}' "$P"
	check 400 "Malformed request: GET /v1/models/cancer:predict" "$P"
	check 400 "Malformed request: POST /v1/models/cancer:explain" -d '{}' "$URL/v1/models/cancer:explain"
	check 400 "Missing model name in request." "$URL/v1/models"
	check 404 "Servable not found for request: Latest(dog)" -d @"$F/one.json" "$URL/v1/models/dog:predict"
	check 404 "Servable not found for request: Specific(cancer, 9)" -d @"$F/one.json" "$URL/v1/models/cancer/versions/9:predict"
	check 404 "Could not find any versions of model dog" "$URL/v1/models/dog"
	check 404 "Not Found" "$URL/v2/nothing"
	# the server is still fine
	check 200 '"predictions"' -d @"$F/one.json" "$P"
	stop_server
}

@test "healthz, readyz (503 until a version loads) and Prometheus metrics" {
	mkdir base
	start_server --model-base base --model-name m --poll-interval 0.1
	run -0 req "$URL/healthz"
	[ "${lines[-1]}" = 200 ]
	run -0 req "$URL/readyz"
	[ "${lines[-1]}" = 503 ]
	run -0 req -d @"$F/one.json" "$URL/v1/models/m:predict"
	[ "${lines[-1]}" = 404 ]
	cp -r "$F/models/1" base/.incoming && mv base/.incoming base/3
	for _ in $(seq 50); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/readyz")" = 200 ] && break
		sleep 0.1
	done
	run -0 req "$URL/readyz"
	[ "${lines[-1]}" = 200 ]
	req -d @"$F/one.json" "$URL/v1/models/m:predict" > /dev/null
	req "$URL/v1/models/m" > /dev/null
	req "$URL/v1/models/m/metadata" > /dev/null
	req "$URL/v1/models/m/versions/9/metadata" > /dev/null
	run -0 curl -s "$URL/monitoring/prometheus/metrics"
	[[ "$output" == *'tfkit_requests_total{model="m",method="predict",code="200"} 1'* ]]
	[[ "$output" == *'tfkit_requests_total{model="m",method="predict",code="404"} 1'* ]]
	[[ "$output" == *'tfkit_requests_total{model="m",method="status",code="200"} 1'* ]]
	[[ "$output" == *'tfkit_requests_total{model="m",method="metadata",code="200"} 1'* ]]
	[[ "$output" == *'tfkit_requests_total{model="m",method="metadata",code="404"} 1'* ]]
	# only inference is timed
	[[ "$output" == *'tfkit_request_duration_seconds_count{model="m"} 2'* ]]
	[[ "$output" == *'tfkit_request_duration_seconds_bucket{model="m",le="+Inf"} 2'* ]]
	[[ "$output" == *'tfkit_model_version{model="m"} 3'* ]]
	[[ "$output" == *'tfkit_model_load_failures_total{model="m"} 0'* ]]
	grep -q 'version 3 loaded' serve.log
	stop_server
}

@test "hot reload under continuous requests: no request fails; a corrupt version is refused" {
	mkdir base
	cp -r "$F/models/1" base/1
	start_server --model-base base --model-name m --poll-interval 0.05 --threads 2
	# clients: requests back to back until told to stop
	for c in 1 2; do
		(while [ ! -e stop ]; do
			curl -s -o /dev/null -w '%{http_code}\n' -d @"$F/one.json" "$URL/v1/models/m:predict"
		done > codes.$c) 3>&- &
	done
	# requests answered so far reach N (at most 30 s: a loaded machine
	# is slow, not stopped)
	answered() {
		for _ in $(seq 600); do
			[ "$(cat codes.1 codes.2 2> /dev/null | wc -l)" -ge "$1" ] && return 0
			sleep 0.05
		done
		return 1
	}
	sleep 0.3
	answered 10
	for v in 2 3 4; do
		tf-export -d "$F/ck" --export-base base > /dev/null
		sleep 0.3
		answered $((10 + 10 * (v - 1)))
	done
	# a damaged version 5 (a flipped byte) and a half-written 6 (only
	# model.json), each appearing at once so each is refused once
	cp -r base/4 base/.x && flip_byte base/.x/variables.bin 64 && mv base/.x base/5
	mkdir base/.y && cp base/4/model.json base/.y/ && mv base/.y base/6
	sleep 0.5
	answered 55
	touch stop
	wait_clients() { while [ "$(jobs -r | wc -l)" -gt 1 ]; do sleep 0.05; done; }
	wait_clients
	n=$(cat codes.1 codes.2 | wc -l)
	bad=$(cat codes.1 codes.2 | grep -vc '^200$' || true)
	echo "requests $n, not 200: $bad"
	[ "$n" -gt 50 ]
	[ "$bad" = 0 ]
	run -0 req "$URL/v1/models/m"
	[[ "$output" == *'"version": "6",'*'"state": "END"'*'"error_code": "DATA_LOSS"'*'no manifest.json'* ]]
	[[ "$output" == *'"version": "5",'*'"state": "END"'*'"error_code": "DATA_LOSS"'*'variables.bin does not match the manifest'* ]]
	[[ "$output" == *'"version": "4",'*'"state": "AVAILABLE"'* ]]
	[[ "$output" == *'"version": "3",'*'"state": "END",'*'"error_code": "OK"'* ]]
	run -0 curl -s "$URL/monitoring/prometheus/metrics"
	[[ "$output" == *'tfkit_model_version{model="m"} 4'* ]]
	[[ "$output" == *'tfkit_model_load_failures_total{model="m"} 2'* ]]
	[[ "$output" == *'tfkit_model_loads_total{model="m"} 4'* ]]
	grep -q 'version 5 refused' serve.log
	stop_server
}

@test "serves from a tar.gz archive and picks up a rewritten one" {
	tf-export -d "$F/ck" --archive m.tar.gz --version 2 > /dev/null
	start_server --model-base m.tar.gz --model-name cancer --poll-interval 0.1
	run -0 req -d @"$F/dense.json" "$URL/v1/models/cancer:predict"
	[ "${lines[-1]}" = 200 ]
	want=$(req -d @"$F/dense.json" "$URL/v1/models/cancer:predict" | head -n 1)
	tf-export -d "$F/ck" --archive m.tar.gz --version 5 > /dev/null
	for _ in $(seq 50); do
		grep -q 'version 5 loaded' serve.log && break
		sleep 0.1
	done
	run -0 req "$URL/v1/models/cancer"
	[[ "$output" == *'"version": "5",'*'"state": "AVAILABLE"'* ]]
	[ "$(req -d @"$F/dense.json" "$URL/v1/models/cancer:predict" | head -n 1)" = "$want" ]
	stop_server
}

@test "--enable-batching answers concurrent requests as without it" {
	start_server --model-base "$F/models" --model-name cancer --enable-batching --max-batch-size 8 --batch-timeout-micros 2000
	want=$(tf-serve --model-base "$F/models" --stdin < <(/usr/bin/python3 -c '
import json; [print(json.dumps(r)) for r in json.load(open("'"$F"'/dense.json"))["instances"]]') 2> /dev/null)
	pids=
	for i in $(seq 8); do
		curl -s -d @"$F/dense.json" "$URL/v1/models/cancer:predict" > out.$i 3>&- &
		pids="$pids $!"
	done
	wait $pids
	for i in $(seq 8); do
		/usr/bin/python3 -c '
import json, sys
got = json.load(open(sys.argv[1]))["predictions"]
want = [json.loads(l) for l in sys.argv[2].splitlines()]
assert len(got) == len(want) == 2
for g, w in zip(got, want):
    assert g["class_ids"] == w["class_ids"], (g, w)
    assert max(abs(a - b) for a, b in zip(g["probabilities"], w["probabilities"])) < 1e-6, (g, w)' out.$i "$want"
	done
	stop_server
}

@test "the nng endpoint takes the same requests" {
	command -v "$TFKIT_BUILD/tests/nngreq" > /dev/null || skip "nngreq not built"
	sock=ipc://$BATS_TEST_TMPDIR/serve.ipc
	start_server --model-base "$F/models" --model-name cancer --nng-listen "$sock"
	run -0 "$TFKIT_BUILD/tests/nngreq" "$sock" "POST /v1/models/cancer:predict" "$(cat "$F/dense.json")"
	[ "${lines[0]}" = 200 ]
	[ "${lines[1]}" = "$(req -d @"$F/dense.json" "$URL/v1/models/cancer:predict" | head -n 1)" ]
	run -0 "$TFKIT_BUILD/tests/nngreq" "$sock" "GET /v1/models/dog"
	[ "${lines[0]}" = 404 ]
	run -0 "$TFKIT_BUILD/tests/nngreq" "$sock" "bogus"
	[ "${lines[0]}" = 400 ]
	[[ "${lines[1]}" == *"expected 'METHOD PATH'"* ]]
	stop_server
}

@test "--device: cpu serves as the default; a GPU that is not there is exit 69 before any port is taken" {
	/usr/bin/python3 -c '
import json; [print(json.dumps(r)) for r in json.load(open("'"$F"'/named.json"))["instances"]]' > lines.json
	run -0 --separate-stderr tf-serve --model-base "$F/models" --device cpu --stdin < lines.json
	a=$output
	run -0 --separate-stderr tf-serve --model-base "$F/models" --stdin < lines.json
	[ "$a" = "$output" ]
	run --separate-stderr timeout 20 tf-serve --model-base "$F/models" --device cuda --rest-api-port 0 --grpc-port off
	if [ "$status" -eq 124 ]; then
		skip "a GPU is here: it served until the timeout"
	fi
	[ "$status" -eq 69 ]
	[[ "$stderr" == "tf-serve: --device cuda: "* ]]
	[[ "$stderr" != *"REST API on"* ]]
	run -64 --separate-stderr tf-serve --model-base "$F/models" --device cuda:one --stdin
	[[ "$stderr" == *"a GPU is cuda:N"* ]]
}

@test "--stdin: JSON lines or records in, one prediction a line out" {
	/usr/bin/python3 -c '
import json; [print(json.dumps(r)) for r in json.load(open("'"$F"'/named.json"))["instances"]]' > lines.json
	run -0 --separate-stderr tf-serve --model-base "$F/models" --stdin < lines.json
	[ "${#lines[@]}" = 2 ]
	a=$output
	run -0 --separate-stderr tf-serve --model-base "$F/models" --stdin --stdin-format tfrecord < <(tf-records head -n 2 --raw "$F/bc.tfrecord")
	b=$output
	/usr/bin/python3 -c '
import json, sys
for text in sys.argv[1], sys.argv[2]:
    got = [json.loads(l) for l in text.splitlines()]
    want = [json.loads(l) for l in open(sys.argv[3])]
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        assert g == w, (g, w)' "$a" "$b" "$F/expected.json"
	printf '{"mean_radius": 1}\n' > bad.json
	run -65 --separate-stderr tf-serve --model-base "$F/models" --stdin < bad.json
	[[ "$stderr" == *"(stdin):1: instance 0: missing input 'mean_texture'"* ]]
}

@test "SIGINT and SIGTERM drain and exit 0" {
	start_server --model-base "$F/models"
	kill -INT "$SPID"
	wait "$SPID"
	SPID=
	grep -q 'SIGINT: draining' serve.log
	grep -q 'stopped' serve.log
}

@test "bad set-up: usage (64), missing base (66), no valid version or busy port (69)" {
	run -64 --separate-stderr tf-serve
	[[ "$stderr" == *"--model-base"* ]]
	run -64 --separate-stderr tf-serve --model-base "$F/models" --stdin-format csv
	[[ "$stderr" == *"'csv' is not json or tfrecord"* ]]
	run -64 --separate-stderr tf-serve --model-base "$F/models" --rest-api-port 70000
	run -66 --separate-stderr tf-serve --model-base nowhere
	[[ "$stderr" == *"nowhere"* ]]
	mkdir empty
	run -69 --separate-stderr tf-serve --model-base empty --stdin < /dev/null
	[[ "$stderr" == *"no valid version"* ]]
	start_server --model-base "$F/models"
	run -69 --separate-stderr tf-serve --model-base "$F/models" --listen-address 127.0.0.1 --rest-api-port "$port" --grpc-port off
	# the port is named, and taken before any model loads
	[ "$stderr" = "tf-serve: cannot listen on 127.0.0.1:$port: Address already in use" ]
	printf '{"models": [{"name": "a"}]}' > bad.conf
	run -65 --separate-stderr tf-serve --model-config-file bad.conf
	[[ "$stderr" == *'needs "name" and "base_path"'* ]]
	stop_server
}

@test "the default address takes IPv4 and IPv6 clients; --listen-address takes an IPv6 literal" {
	[ -e /proc/net/if_inet6 ] || skip "this machine has no IPv6"
	start_server --model-base "$F/models" --model-name cancer --listen-address 0.0.0.0
	grep -q "REST API on http://0.0.0.0:$port/" serve.log
	run -0 req "http://127.0.0.1:$port/v1/models/cancer"
	[[ "$output" == *'"AVAILABLE"'* && "$output" == *$'\n200' ]]
	run -0 req "http://[::1]:$port/v1/models/cancer"
	[[ "$output" == *'"AVAILABLE"'* && "$output" == *$'\n200' ]]
	# gRPC's port too: HTTP/2 answers on both families
	for host in 127.0.0.1 '[::1]'; do
		run -0 curl -s --http2-prior-knowledge -o /dev/null -w '%{http_version}' \
			"http://$host:$GPORT/tensorflow.serving.PredictionService/Predict"
		[ "$output" = 2 ]
	done
	stop_server
	start_server --model-base "$F/models" --model-name cancer --listen-address ::1
	grep -q "REST API on http://\[::1\]:$port/" serve.log
	grep -q "gRPC API on \[::1\]:$GPORT " serve.log
	run -0 req "http://[::1]:$port/v1/models/cancer"
	[[ "$output" == *$'\n200' ]]
	run req "http://127.0.0.1:$port/v1/models/cancer"
	[ "$status" -ne 0 ]
	run -69 --separate-stderr tf-serve --model-base "$F/models" --listen-address ::1 --rest-api-port "$port" --grpc-port off
	[ "$stderr" = "tf-serve: cannot listen on [::1]:$port: Address already in use" ]
	stop_server
	run -64 --separate-stderr tf-serve --model-base "$F/models" --listen-address localhost
	[[ "$stderr" == *"'localhost' is not an IPv4 or IPv6 address"* ]]
}

@test "a wide_and_deep model takes categorical inputs as strings" {
	shapes_csv 2000 > shapes.csv
	tf-csv2record shapes.csv -o s.tfrecord
	tf-train -q --model wide_and_deep --crosses 'color*shape' --hidden "16 8" \
		--epochs 20 --batch-size 32 --learning-rate 0.01 --checkpoint-dir ck s.tfrecord > /dev/null
	tf-export -d ck --export-base models > /dev/null
	start_server --model-base models --model-name shapes
	run -0 req "$URL/v1/models/shapes/metadata"
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1].rsplit("\n", 1)[0])
i = j["metadata"]["signature_def"]["signature_def"]["serving_default"]["inputs"]
assert {k: v["dtype"] for k, v in i.items()} == {"size": "DT_FLOAT",
    "weight": "DT_FLOAT", "color": "DT_STRING", "shape": "DT_STRING"}, i' "$output"
	# red/circle is class 1, green/circle class 0 (for small sizes)
	run -0 req -d '{"instances": [{"size": 0.1, "weight": 5, "color": "red", "shape": "circle"},
		[0.1, 5, "green", "circle"], [0.1, 5, "mauve", "circle"]]}' "$URL/v1/models/shapes:predict"
	[ "${lines[-1]}" = 200 ]
	[[ "${lines[0]}" == '{"predictions":[{"probabilities":['*'],"class_ids":1,"classes":"1"},{"probabilities":['*'],"class_ids":0,"classes":"0"},'* ]]
	# JSON instances and the records predict as tf-eval does
	tf-records head -n 50 --raw s.tfrecord > head.tfrecord
	tf-eval -d ck --predict head.tfrecord > eval.json
	tf-serve --model-base models --stdin --stdin-format tfrecord < head.tfrecord > records.json 2> /dev/null
	/usr/bin/python3 -c '
import csv, json
for r in list(csv.DictReader(open("shapes.csv")))[:50]:
    print(json.dumps({"size": float(r["size"]), "weight": float(r["weight"]),
                      "color": r["color"], "shape": r["shape"]}))' > lines.json
	tf-serve --model-base models --stdin < lines.json > lines.out 2> /dev/null
	/usr/bin/python3 -c '
import json
e = [json.loads(l) for l in open("eval.json")]
for f in "records.json", "lines.out":
    g = [json.loads(l) for l in open(f)]
    assert len(g) == len(e) == 50, (f, len(g))
    for a, b in zip(g, e):
        assert a == b, (f, a, b)'
	run -0 req -d '{"examples": [{"size": 0.1, "weight": 5, "color": "red", "shape": "circle"}]}' "$URL/v1/models/shapes:classify"
	[ "${lines[-1]}" = 200 ]
	run -0 req -d '{"instances": [{"size": 0.1, "weight": 5, "color": 3, "shape": "circle"}]}' "$URL/v1/models/shapes:predict"
	[ "${lines[-1]}" = 400 ]
	[[ "${lines[0]}" == *"input 'color': expected a string (a categorical feature)"* ]]
	stop_server
	# TensorFlow.js and ONNX take dense numbers only: refused, 65
	run -65 --separate-stderr tf-export -d ck --format onnx -o m.onnx
	[[ "$stderr" == *"ONNX export: the model reads categorical features (strings looked up as ids), not exported yet; the tfkit format serves it"* ]]
	[ ! -e m.onnx ]
}

@test "string labels: trained through the vocabulary, given back by tf-eval and tf-serve" {
	awk -F, 'BEGIN { split("setosa versicolor virginica", n, " ") }
		NR == 1 { sub(/label$/, "species"); print; next }
		{ $5 = n[$5 + 1]; print }' OFS=, "$TOP/share/data/iris.csv" > species.csv
	tf-csv2record species.csv -o species.tfrecord
	run -0 jq -c '.label.type, .vocabularies.species' species.tfrecord.schema.json
	[ "${lines[0]}" = '"bytes"' ]
	[ "${lines[1]}" = '["setosa","versicolor","virginica"]' ]
	tf-train -q --epochs 40 --batch-size 16 --checkpoint-dir sck species.tfrecord > /dev/null
	run -0 tf-eval -d sck species.tfrecord
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["task"] == "multiclass" and j["accuracy"] > 0.9, j' "$output"
	tf-eval -d sck --predict species.tfrecord > species.json
	run -0 jq -r .classes species.json
	[ "$(printf '%s\n' "${lines[@]}" | sort | uniq -c | awk '{ print $2 }' | tr '\n' ' ')" = "setosa versicolor virginica " ]
	[ "${lines[0]}" = setosa ]
	run -0 tf-eval -d sck --predict --csv species.tfrecord
	[ "${lines[0]}" = "class,p_setosa,p_versicolor,p_virginica" ]
	[[ "${lines[1]}" == setosa,* ]]
	# records without a sidecar: the vocabulary inferred from them
	tf-csv2record --no-schema species.csv -o bare.tfrecord
	tf-train -q --label species --epochs 2 --checkpoint-dir bck bare.tfrecord > /dev/null 2> bare.err
	grep -q "label 'species', multiclass" bare.err
	[ "$(tf-eval -d bck --predict bare.tfrecord | head -n 1 | jq -r .classes)" != null ]
	# a class the model does not know: the file, the record, 65
	printf 'sepal_length,sepal_width,petal_length,petal_width,species\n5.1,3.5,1.4,0.2,setosa\n5.0,3.0,1.5,0.2,rosa\n' |
		tf-csv2record --no-schema -o rosa.tfrecord
	run -65 --separate-stderr tf-eval -d sck rosa.tfrecord
	[[ "$stderr" == *"rosa.tfrecord: record 1: label 'species' is 'rosa', not one of the model's 3 classes"* ]]
	# served: :classify names the classes, :predict gives the label
	tf-export -d sck --export-base species > /dev/null
	start_server --model-base species --model-name species
	run -0 req -d '{"examples": [{"sepal_length": 5.1, "sepal_width": 3.5, "petal_length": 1.4, "petal_width": 0.2}]}' "$URL/v1/models/species:classify"
	[ "${lines[-1]}" = 200 ]
	[[ "${lines[0]}" == '{"results":[[["setosa",'*'],["versicolor",'*'],["virginica",'*']]]}' ]]
	run -0 req -d '{"instances": [[5.1, 3.5, 1.4, 0.2]]}' "$URL/v1/models/species:predict"
	[ "${lines[-1]}" = 200 ]
	[ "${lines[0]}" = "{\"predictions\":[$(head -n 1 species.json)]}" ]
	stop_server
}
