# kill.bash - the SIGKILL scenarios of kill.bats (20 tries each, with
# make check) and kill-slow.bats (200, make check-slow): each function is
# one scenario, run TRIES times.


# Start a command in the background, SIGKILL it after ms milliseconds,
# wait; sets KILLED=1 when the signal ended it, 0 when it had exited by
# itself (with status 0: any other status fails the test).
kill_after() { # ms command...
	local ms=$1
	shift
	"$@" > /dev/null 2> kill.err &
	local pid=$!
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
	kill -KILL "$pid" 2> /dev/null || true
	local rc=0
	wait "$pid" 2> /dev/null || rc=$?
	KILLED=$((rc == 137))
	if [ "$rc" != 0 ] && [ "$rc" != 137 ]; then
		echo "exit status $rc: $(cat kill.err)"
		return 1
	fi
}

# Milliseconds a command takes (at least 50).
time_ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" > /dev/null 2>&1
	t1=$(date +%s%N)
	local ms=$(((t1 - t0) / 1000000))
	echo $((ms < 50 ? 50 : ms))
}

# The fastest of three runs of a command that does the same work each
# time: on a busy machine one slow run would put most kills after the end.
fastest_ms() {
	local best= ms
	for _ in 1 2 3; do
		ms=$(time_ms "$@")
		[ -n "$best" ] && [ "$best" -le "$ms" ] || best=$ms
	done
	echo "$best"
}

# tf-train killed while it checkpoints, TRIES times at least, ends with the unbroken run's weights
kill_train() {
	tf-csv2record "$DATA/breast_cancer.csv" -o bc.tfrecord
	args=(-q --epochs 40 --batch-size 16 --save-every 3 --keep 3 bc.tfrecord)
	tf-train --checkpoint-dir whole "${args[@]}" > /dev/null
	ms=$(time_ms tf-train --checkpoint-dir timing "${args[@]}")
	# killed at a random moment of each try (starting, loading the
	# checkpoint, training, writing one) until a try gets to the end
	latest() { echo "$1/$(sed -n 's/^model_checkpoint_path: "\(.*\)"$/\1/p' "$1/checkpoint")"; }
	RANDOM=7
	kills=0
	for _ in $(seq $((TRIES * 10))); do
		kill_after $((RANDOM % (ms / TRIES + 1))) tf-train --checkpoint-dir ck "${args[@]}"
		[ "$KILLED" = 1 ] || break
		kills=$((kills + 1))
		# whatever was killed, the directory holds a checkpoint that loads
		[ ! -e ck/checkpoint ] || tf-eval -d ck bc.tfrecord > /dev/null
		# killed after the run was over (exiting): it is done
		[ ! -e ck/checkpoint ] || ! grep -aq '"finished":true' "$(latest ck)" || break
	done
	echo "$kills runs killed on the way (a run takes ${ms} ms)"
	[ "$kills" -ge "$TRIES" ]
	# the last try killed before the end: the run goes on to it
	grep -aq '"finished":true' "$(latest ck)" || tf-train --checkpoint-dir ck "${args[@]}" > /dev/null
	same_state "$(latest ck)" "$(latest whole)"
	# a run after them (here one that trains on) removes what the killed
	# ones left half-written
	tf-train --checkpoint-dir ck "${args[@]}" > /dev/null
	[ -z "$(ls ck | grep '\.tmp\.')" ]
}

# tf-export killed at any moment never leaves a version that does not load
kill_export() {
	tf-csv2record "$DATA/breast_cancer.csv" -o bc.tfrecord
	tf-train -q --epochs 2 --checkpoint-dir ck bc.tfrecord > /dev/null
	ms=$(time_ms tf-export -d ck --export-base timing)
	RANDOM=11
	kills=0
	for _ in $(seq "$TRIES"); do
		kill_after $((RANDOM % ms)) tf-export -d ck --export-base models
		kills=$((kills + KILLED))
		for v in models/*/; do
			[ -d "$v" ] || continue
			# a version directory is whole: it loads and predicts
			tf-eval -d "$v" bc.tfrecord > /dev/null
		done
	done
	echo "$kills of $TRIES exports killed; versions: $(ls models | tr '\n' ' ')"
	[ "$kills" -ge 1 ]
	# and tf-serve takes the newest of them
	n=$(ls models | grep -E '^[0-9]+$' | sort -n | tail -n 1)
	run -0 --separate-stderr tf-serve --model-base models --stdin < <(echo '{"mean_radius": 14}' | /usr/bin/python3 -c '
import csv, json, sys
h = next(csv.reader(open(sys.argv[1])))[:-1]
print(json.dumps({k: 1.0 for k in h}))' "$DATA/breast_cancer.csv")
	[[ "$stderr" == *"version $n loaded"* ]]
}

# tf-csv2record -o killed at any moment leaves the whole output or none under its name
kill_convert() {
	for i in 1 2 3 4 5 6 7 8; do tail -n +2 "$DATA/breast_cancer.csv"; done > body
	(head -n 1 "$DATA/breast_cancer.csv"; cat body body body) > big.csv
	tf-csv2record big.csv -o want.tfrecord
	ms=$(fastest_ms tf-csv2record big.csv -o timing.tfrecord)
	RANDOM=13
	kills=0
	for _ in $(seq "$TRIES"); do
		rm -f out.tfrecord out.tfrecord.schema.json
		# within the first 3/4 of the fastest run: a run that goes
		# faster than the timing ones still gets killed
		kill_after $((RANDOM % (ms * 3 / 4 + 1))) tf-csv2record big.csv -o out.tfrecord
		kills=$((kills + KILLED))
		if [ -e out.tfrecord ]; then
			cmp out.tfrecord want.tfrecord
		fi
	done
	echo "$kills of $TRIES conversions killed"
	[ "$kills" -ge $((TRIES / 2)) ]
}

# tf-records shuffle -o killed TRIES times: the whole output or none
kill_records() {
	for i in 1 2 3 4 5 6 7 8; do tail -n +2 "$DATA/breast_cancer.csv"; done > body
	(head -n 1 "$DATA/breast_cancer.csv"; cat body body body) > big.csv
	tf-csv2record -q big.csv -o big.tfrecord
	tf-records shuffle -s 5 -M 1M big.tfrecord -o want.tfrecord
	ms=$(fastest_ms tf-records shuffle -s 5 -M 1M big.tfrecord -o timing.tfrecord)
	RANDOM=17
	kills=0
	for _ in $(seq "$TRIES"); do
		rm -f out.tfrecord
		# within the first 3/4 of the fastest run: a run that goes
		# faster than the timing ones still gets killed
		kill_after $((RANDOM % (ms * 3 / 4 + 1))) tf-records shuffle -s 5 -M 1M big.tfrecord -o out.tfrecord
		kills=$((kills + KILLED))
		if [ -e out.tfrecord ]; then
			cmp out.tfrecord want.tfrecord
		fi
	done
	echo "$kills of $TRIES shuffles killed"
	[ "$kills" -ge $((TRIES / 2)) ]
}

# The ps of a sync run (1 ps, 2 workers) SIGKILLed TRIES times at random
# moments and started again each time: it takes its shard from the last
# checkpoint, the workers reconnect and the run ends at its step; the
# last ps's counters show no gradient of a worker applied twice in a
# step.  Each random moment is counted from the restarted ps's word on
# its shard: killed before it could read the checkpoint (a start under
# ASan on a loaded machine takes a while), a ps has nothing to say.
kill_ps() {
	tf-csv2record -q "$DATA/breast_cancer.csv" -o bc.tfrecord
	mapfile -t ports < <(free_ports 3)
	C="--ps-hosts localhost:${ports[0]} --worker-hosts localhost:${ports[1]},localhost:${ports[2]}"
	steps=$((TRIES * 1500))
	args="-q --epochs 0 --max-steps $steps --batch-size 16 --save-every 200 --checkpoint-dir ck"
	tf-ps $C --task-index 0 $args 2> ps-0.log 3>&- &
	ps=$!
	tf-train $C --job-name worker --task-index 1 $args bc.tfrecord > /dev/null 2> w1.err 3>&- &
	w1=$!
	tf-train $C --job-name worker --task-index 0 $args bc.tfrecord > chief.json 2> w0.err 3>&- &
	w0=$!
	for _ in $(seq 400); do
		ls ck/model.ckpt-* > /dev/null 2>&1 && break
		sleep 0.05
	done
	RANDOM=19
	kills=0
	while [ "$kills" -lt "$TRIES" ] && kill -0 "$w0" 2> /dev/null; do
		sleep "0.$(printf '%03d' $((100 + RANDOM % 400)))"
		kill -KILL "$ps"
		wait "$ps" 2> /dev/null || true
		kills=$((kills + 1))
		tf-ps $C --task-index 0 $args 2> "ps-$kills.log" 3>&- &
		ps=$!
		for _ in $(seq 600); do
			grep -q 'shard restored\|cannot take its shard' \
				"ps-$kills.log" && break
			kill -0 "$ps" 2> /dev/null || break
			sleep 0.05
		done
	done
	rc=0
	wait "$w0" || rc=$?
	wait "$w1" || rc=$((rc ? rc : $?))
	wait "$ps" || rc=$((rc ? rc : $?))
	echo "the ps killed $kills times in a run of $steps steps"
	if [ "$rc" != 0 ]; then
		# what the trainers and the last ps tasks said, for the reader
		# of a failed run
		tail -n 5 w0.err w1.err
		for f in $(ls -t ps-*.log | head -n 3); do
			echo "== $f"
			tail -n 5 "$f"
		done
		return "$rc"
	fi
	[ "$kills" -ge "$TRIES" ]
	last=ps-$kills.log
	[ "$(grep -c 'shard restored from ck/model.ckpt-' ps-[1-9]*.log | grep -c ':1$')" = "$kills" ]
	/usr/bin/python3 - "$last" "$steps" chief.json <<'PY'
import json, re, sys
log = open(sys.argv[1]).read()
start = int(re.search(r"shard restored from ck/model\.ckpt-(\d+)", log).group(1))
c = json.loads(re.search(r"counters (\{.*\})", log).group(1))
steps = int(sys.argv[2])
final = json.loads(open(sys.argv[3]).read().splitlines()[-1])
assert final["final"] and final["step"] == steps, final
assert c["step"] == steps, c
applied = [w["applied"] for w in c["workers"]]
# sync, two trainers: each step of this ps applied at most one gradient
# of each worker (none twice) and at least one (a push computed on a
# step that already had its share is dropped and counted, not applied)
n = steps - start
assert all(a <= n for a in applied) and sum(applied) >= n, (start, applied)
dropped = [w["dropped"]["backup"] for w in c["workers"]]
print("last ps: from step", start, "to", steps, "applied", applied,
      "dropped", dropped)
PY
}
