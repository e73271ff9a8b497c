#!/usr/bin/env bats
# tf-serve under wrk at full speed for 60 s while a new version is exported every 3 s, one of them damaged: no failed or wrong response, the damaged version refused and counted, the resident memory at the end within a few MB of what it was after warm-up.

bats_require_minimum_version 1.5.0
load ../cli/helpers

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	command -v wrk > /dev/null || skip "wrk is not installed (make check-slow installs it)"
}

teardown() {
	touch stop
	kill_quietly "${SPID:-}"
}

rss_kb() {
	sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$SPID/status"
}

@test "60 s of wrk with a version exported every 3 s, one damaged: every response right, memory flat" {
	tf-csv2record -q "$DATA/breast_cancer.csv" -o bc.tfrecord
	tf-train -q --epochs 3 --checkpoint-dir ck bc.tfrecord > /dev/null
	tf-export -d ck --export-base base > /dev/null
	/usr/bin/python3 - "$DATA/breast_cancer.csv" <<'PY'
import csv, json, sys
r = list(csv.reader(open(sys.argv[1])))
json.dump({"instances": [[float(v) for v in r[1][:-1]]]}, open("one.json", "w"))
PY
	start_server --model-base base --poll-interval 0.2 --threads 2
	expected=$(curl -s -d @one.json "$URL/v1/models/model:predict")
	# every version is exported from the same checkpoint: every answer
	# must be this one, byte for byte, whichever version gives it
	{
		printf 'wrk.method = "POST"\nwrk.body = [==[%s]==]\n' "$(cat one.json)"
		printf 'wrk.headers["Content-Type"] = "application/json"\n'
		printf 'local expected = [==[%s]==]\nlocal wrong = 0\n' "$expected"
		cat <<'LUA'
response = function(status, headers, body)
	if status ~= 200 or body ~= expected then wrong = wrong + 1 end
end
done = function(summary, latency, requests)
	io.write(string.format("wrong %d\n", wrong))
end
LUA
	} > check.lua
	# warm-up, then the resident memory to compare with
	wrk -t1 -c8 -d5s -s check.lua "$URL/v1/models/model:predict" > warm.out
	rss0=$(rss_kb)
	(
		v=1
		while [ ! -e stop ]; do
			sleep 3
			v=$((v + 1))
			if [ "$v" = 6 ]; then
				# damaged: a flipped byte, appearing whole at once
				cp -r base/$((v - 1)) base/.x && flip_byte base/.x/variables.bin 64 && mv base/.x "base/$v"
			else
				tf-export -d ck --export-base base > /dev/null
			fi
		done
	) 3>&- &
	run -0 wrk -t1 -c16 -d60s --latency -s check.lua "$URL/v1/models/model:predict"
	touch stop
	echo "$output"
	rss1=$(rss_kb)
	echo "RSS after warm-up ${rss0} kB, at the end ${rss1} kB"
	requests=$(echo "$output" | sed -n 's/^ *\([0-9]*\) requests in .*/\1/p')
	[ "$requests" -gt 100000 ]
	[[ "$output" == *"wrong 0"* ]]
	[[ "$output" != *"Non-2xx"* ]]
	[[ "$output" != *"Socket errors"* ]]
	# within 4 MB of the warmed-up server
	[ $((rss1 - rss0)) -lt 4096 ]
	run -0 curl -s "$URL/monitoring/prometheus/metrics"
	[[ "$output" == *'tfkit_model_load_failures_total{model="model"} 1'* ]]
	loads=$(echo "$output" | sed -n 's/^tfkit_model_loads_total{model="model"} //p')
	echo "versions loaded: $loads"
	[ "$loads" -ge 15 ]
	grep -q 'version 6 refused' serve.log
	stop_server
}
