#!/usr/bin/env bats
# Hostile peers of a tf-ps while a real run trains through it: garbage, truncated, oversized and wrong-version messages, a wrong token, a flood from one client; each refused and logged, no crash, and the run ends with the same checkpoint, byte for byte, as one nobody disturbed.

bats_require_minimum_version 1.5.0
load ../cli/helpers

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	tf-csv2record -q "$DATA/breast_cancer.csv" -o bc.tfrecord
	echo sesame > token
}

teardown() {
	kill_quietly ${PIDS:-}
}

# One async run of 1 ps and 1 worker in directory $1, while the hostile
# requests of "$2" (a function) run against its ps; the ps exits 0.
run_job() {
	mkdir "$1" && cd "$1" || return 1
	mapfile -t ports < <(free_ports 2)
	C="--ps-hosts localhost:${ports[0]} --worker-hosts localhost:${ports[1]}"
	args="-q --epochs 0 --max-steps 60000 --batch-size 16 --seed 4 --auth-token-file ../token --checkpoint-dir ck"
	# bounded: a ps or trainer that hangs fails the test, never the suite
	timeout -k 5 240 tf-ps $C --task-index 0 $args 2> ps.log 3>&- &
	local ps=$!
	PIDS+=" $ps"
	U=tcp://127.0.0.1:${ports[0]}
	timeout -k 5 240 tf-train $C --job-name worker --task-index 0 $args ../bc.tfrecord > chief.json 2> chief.err 3>&- &
	local chief=$!
	PIDS+=" $chief"
	"$2"
	wait "$chief"
	wait "$ps"
	PIDS=
	cd ..
}

quiet() { :; }

hostile() {
	local q=$TFKIT_BUILD/tests/psreq
	# until the ps has its shard (the limits below apply from INIT)
	for _ in $(seq 100); do
		"$q" "$U" "status token=sesame" 2> /dev/null | grep -q '"step":[1-9]' && break
		sleep 0.05
	done
	# garbage, truncated, wrong version, wrong token: each answered ERROR
	run -0 "$q" "$U" "raw hex=ffffffffff" "raw hex=0801180240" "raw hex=0a" \
		"pull version=9 token=sesame n=8369" "push token=wrong worker=0 n=8369 values=1,2"
	echo "$output"
	# (the second number is the ps's step: the run goes on)
	[[ "${lines[0]}" == "ERROR "*" malformed request" ]]
	[[ "${lines[1]}" == "ERROR "*" malformed request" ]]
	[[ "${lines[2]}" == "ERROR "*" malformed request" ]]
	[[ "${lines[3]}" == "ERROR "*" protocol version 9; this ps speaks 1" ]]
	[[ "${lines[4]}" == "ERROR "*" wrong token" ]]
	# a flood of 5,000 requests from one client, all refused
	run -0 "$q" "$U" "push token=wrong worker=0 n=8369 values=1 repeat=5000"
	[[ "$output" == "ERROR "*" wrong token" ]]
	# oversized: past what any request of this shard can be, nng drops
	# it unread (no reply comes)
	run -1 --separate-stderr "$q" "$U" "raw hex=0a size=20000000 timeout=1000"
	[[ "$stderr" == "psreq: Timed out"* ]]
	# and the ps is still there, answering
	run -0 "$q" "$U" "status token=sesame"
	[[ "$output" == OK* ]]
}

@test "garbage, truncated, oversized, wrong-version and wrong-token requests and a flood, during a run: refused, logged, the run unaffected" {
	run_job calm quiet
	run_job stormy hostile
	# the run went on as if nothing happened: the same last checkpoint
	cmp calm/ck/model.ckpt-60000 stormy/ck/model.ckpt-60000
	grep -q "a malformed request of 5 bytes: refused" stormy/ps.log
	grep -q "a request of protocol version 9; this ps speaks 1: refused" stormy/ps.log
	[ "$(grep -c 'a request with a wrong token (worker 0): refused' stormy/ps.log)" -ge 5000 ]
	# the token never appears in the logs
	! grep -q sesame stormy/ps.log stormy/chief.err
}
