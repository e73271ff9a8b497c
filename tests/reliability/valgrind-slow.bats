#!/usr/bin/env bats
# The core pipeline under valgrind (memcheck): convert, train, evaluate, export, and tf-serve answering one REST request; no invalid access, no use of uninitialised memory, no definite leak.

bats_require_minimum_version 1.5.0
load ../cli/helpers

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	command -v valgrind > /dev/null || skip "valgrind is not installed (make check-slow installs it)"
}

teardown() {
	kill_quietly "${SPID:-}"
}

# Run a command under memcheck; exit 99 (and the report) on any error.
VG=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
	--show-leak-kinds=definite --track-origins=yes --log-file=vg.%p.log)
vg() {
	"${VG[@]}" "$@"
}

@test "convert, train, eval, export and serve one request, each clean under valgrind" {
	head -n 201 "$DATA/breast_cancer.csv" > bc.csv
	vg tf-csv2record -q bc.csv -o bc.tfrecord
	vg tf-train -q --epochs 2 --batch-size 32 --checkpoint-dir ck bc.tfrecord > train.json
	vg tf-eval -d ck bc.tfrecord > eval.json
	vg tf-export -d ck --export-base models > export.json
	tf-records head -n 1 --raw bc.tfrecord | vg tf-eval -d ck --predict > expected.json
	# tf-serve as users start it, one request, SIGTERM: exit 0, no error
	"${VG[@]}" tf-serve --model-base models --rest-api-port 0 --grpc-port 0 --listen-address 127.0.0.1 2> serve.log 3>&- &
	SPID=$!
	for _ in $(seq 600); do
		port=$(sed -n 's|.*REST API on http://[0-9.]*:\([0-9]*\)/.*|\1|p' serve.log)
		grep -q 'version 1 loaded' serve.log && [ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ]
	/usr/bin/python3 -c '
import csv, json, sys
r = list(csv.reader(open("bc.csv")))
print(json.dumps({"instances": [dict(zip(r[0][:-1], map(float, r[1][:-1])))]}))' > one.json
	run -0 curl -s -d @one.json "http://127.0.0.1:$port/v1/models/model:predict"
	echo "$output"
	[[ "$output" == *'"predictions"'* ]]
	kill -TERM "$SPID"
	rc=0
	wait "$SPID" || rc=$?
	SPID=
	cat vg.*.log
	[ "$rc" = 0 ]
	# -q: a log holds something only when memcheck found an error
	[ -z "$(cat vg.*.log)" ]
}
