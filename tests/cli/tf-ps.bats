#!/usr/bin/env bats
# tf-ps and distributed tf-train on loopback: the cluster from every
# source, sync and async training to the single-process accuracy, a sync
# run repeated bit for bit, backup workers, a worker killed mid-run, a
# wrong token, --status, and the ps exiting when the run is over.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	tf-csv2record "$TOP/share/data/breast_cancer.csv" -o bc.tfrecord
	tf-records split -n 5 -o bc bc.tfrecord
	cat bc-0000[0-3]-of-00005 > train.tfrecord
	cp bc.schema.json train.tfrecord.schema.json
	# the single-process reference
	tf-train -q --epochs 20 --batch-size 32 --checkpoint-dir one train.tfrecord > /dev/null
	tf-eval -d one bc-00004-of-00005 > one.json
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	F=$BATS_FILE_TMPDIR
	PIDS=
}

teardown() {
	for p in $PIDS; do
		kill -9 "$p" 2> /dev/null || true
	done
	if declare -F slurm_down > /dev/null; then
		slurm_down
	fi
}

# A cluster of P ps and W workers on free ports: sets C (the flags).
cluster() {
	mapfile -t ports < <(free_ports $(($1 + $2)))
	local ps="" wk="" i
	for ((i = 0; i < $1; i++)); do ps+="${ps:+,}localhost:${ports[i]}"; done
	for ((i = $1; i < $1 + $2; i++)); do wk+="${wk:+,}localhost:${ports[i]}"; done
	C="--ps-hosts $ps --worker-hosts $wk"
}

# Start the ps tasks of $C in the background (ps-N.log each).
start_ps() {
	local i
	for ((i = 0; i < $1; i++)); do
		tf-ps $C --task-index "$i" "${@:2}" 2> "ps-$i.log" 3>&- &
		PIDS+=" $!"
	done
}

# Wait for every started process; all must exit 0.
wait_all() {
	local p
	for p in $PIDS; do
		wait "$p" || { echo "pid $p exited $?"; cat ps-*.log; return 1; }
	done
	PIDS=
}

# Two sync runs, a and b, of $C's cluster (PS ps tasks, two workers) on
# train.tfrecord with tf-train ARGS: a/ck and b/ck, the chief's line in
# a.json and b.json.
sync_runs() {
	local run
	for run in a b; do
		mkdir $run && cd $run
		start_ps "$1"
		tf-train $C --job-name worker --task-index 1 "${@:2}" --checkpoint-dir ck ../train.tfrecord \
			> /dev/null 2> w1.err 3>&- &
		PIDS+=" $!"
		tf-train $C --job-name worker --task-index 0 "${@:2}" --checkpoint-dir ck ../train.tfrecord > ../$run.json
		wait_all
		cd ..
	done
}

# Test accuracy of the checkpoint in DIR, against the single process.
accuracy_near_one() {
	tf-eval -d "$1" "$F/bc-00004-of-00005" > dist.json
	/usr/bin/python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["examples"] == b["examples"] == 113, (a, b)
assert a["accuracy"] >= b["accuracy"] - 0.03 and a["auc"] > 0.98, (a, b)' dist.json "$F/one.json"
}

@test "-h and --help print the same usage on stdout" {
	run -0 --separate-stderr tf-ps --help
	[[ "$output" == Usage:* ]]
	[ -z "$stderr" ]
	help=$output
	run -0 tf-ps -h
	[ "$output" = "$help" ]
}

@test "--version names the command and the library" {
	run -0 tf-ps --version
	[[ "$output" =~ ^tf-ps\ [0-9]+\.[0-9]+\.[0-9]+\ \(libtfcore ]]
}

@test "the man page documents exactly the options --help lists" {
	diff <(help_options tf-ps) <(man_options tf-ps)
}

@test "--print-cluster: flags, TF_CONFIG, Slurm and MPI give the same cluster" {
	flags=$(tf-train --ps-hosts 127.0.0.1:8888 --worker-hosts 127.0.0.1:8889,127.0.0.1:8890 \
		--job-name worker --task-index 1 --print-cluster)
	[ "$flags" = '{"cluster":{"ps":["127.0.0.1:8888"],"worker":["127.0.0.1:8889","127.0.0.1:8890"]},"task":{"type":"worker","index":1},"chief":"worker:0","source":"flags"}' ]
	want=${flags%,\"source\"*}
	got=$(TF_CONFIG='{"cluster": {"ps": ["127.0.0.1:8888"], "worker": ["127.0.0.1:8889", "127.0.0.1:8890"]}, "task": {"type": "worker", "index": 1}}' \
		tf-train --print-cluster)
	[ "${got%,\"source\"*}" = "$want" ] && [[ "$got" == *'"source":"TF_CONFIG"}' ]]
	got=$(SLURM_PROCID=2 SLURM_NTASKS=3 SLURM_STEP_NODELIST=127.0.0.1 SLURM_STEP_TASKS_PER_NODE=3 \
		tf-train --print-cluster)
	[ "${got%,\"source\"*}" = "$want" ] && [[ "$got" == *'"source":"slurm"}' ]]
	got=$(OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=3 tf-train --print-cluster)
	[ "${got%,\"source\"*}" = "$want" ]
	got=$(PMI_RANK=2 PMI_SIZE=3 tf-train --print-cluster)
	[ "${got%,\"source\"*}" = "$want" ] && [[ "$got" == *'"source":"mpi"}' ]]
	# tf-ps is the ps task of the same line; tf-train --job-name ps too
	run -0 tf-ps --ps-hosts 127.0.0.1:8888 --worker-hosts 127.0.0.1:8889 --task-index 0 --print-cluster
	[[ "$output" == *'"task":{"type":"ps","index":0}'* ]]
	# one process: no cluster
	run -0 tf-train --print-cluster
	[ "$output" = '{"cluster":{},"source":"none"}' ]
}

@test "bad clusters and tasks: usage errors naming the problem" {
	run -64 --separate-stderr tf-ps --print-cluster
	[[ "$stderr" == "tf-ps: --job-name and --task-index need a cluster: --ps-hosts and --worker-hosts, TF_CONFIG, or a Slurm or MPI launcher"* ]]
	run -64 --separate-stderr tf-train --ps-hosts localhost:99999 --worker-hosts localhost:1 --job-name worker --task-index 0
	[[ "$stderr" == "tf-train: --ps-hosts: 'localhost:99999' is not HOST:PORT"* ]]
	run -64 --separate-stderr tf-train --ps-hosts localhost:1 --worker-hosts localhost:2 --job-name worker --task-index 3
	[[ "$stderr" == "tf-train: flags: there is no worker task 3 (the cluster has 1)"* ]]
	TF_CONFIG='{"cluster": {"ps": ["localhost:1"], "worker": ["localhost:2"]}, "task": {"type": "worker", "index": 0}}' \
		run -64 --separate-stderr tf-ps
	[[ "$stderr" == "tf-ps: this task is worker 0 of the cluster (TF_CONFIG): tf-ps runs ps tasks"* ]]
	run -64 --separate-stderr tf-train --sync-mode sometimes --ps-hosts localhost:1 --worker-hosts localhost:2 \
		--job-name worker --task-index 0 "$F/train.tfrecord"
	[[ "$stderr" == "tf-train: --sync-mode: 'sometimes' is neither sync nor async"* ]]
	# a port in use
	cluster 1 1
	/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(5)' "${ports[0]}" 3>&- &
	PIDS+=" $!"
	sleep 0.3
	run -74 --separate-stderr tf-ps $C --task-index 0
	[[ "$stderr" == *"cannot listen on tcp://127.0.0.1:${ports[0]}: Address in use"* ]]
}

@test "2 ps and 2 workers, sync: the single-process accuracy, bit for bit again, the ps exit 0" {
	cluster 2 2
	for run in a b; do
		mkdir "$run" && cd "$run"
		start_ps 2
		tf-train $C --job-name worker --task-index 1 -q --epochs 20 --batch-size 32 \
			--checkpoint-dir ck "$F/train.tfrecord" > w1.out 2> w1.err 3>&- &
		PIDS+=" $!"
		run -0 --separate-stderr tf-train $C --job-name worker --task-index 0 -q --epochs 20 \
			--batch-size 32 --checkpoint-dir ck "$F/train.tfrecord"
		wait_all
		[ ! -s w1.out ] # the chief alone prints
		cd ..
	done
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["final"] and j["cluster"] == {"trainers": 2, "ps": 2}, j
assert j["exchange"]["stale"] == 0 and j["exchange"]["dropped"] == 0, j
# each worker read half of the 456 rows an epoch: 20 epochs, 8 steps each;
# the line metrics: the last epoch (and the rest of its first batch)
assert j["step"] == 160 and j["examples_total"] == 20 * 228, j
assert 228 <= j["examples"] < 228 + 32, j' "${lines[-1]}"
	# the same seed and workers: the same checkpoint, byte for byte
	cmp a/ck/model.ckpt-160 b/ck/model.ckpt-160
	grep -q "ps 0: the run is over at step 160: exiting" a/ps-0.log
	grep -q '"workers_done":2' a/ps-1.log
	accuracy_near_one a/ck
	# a distributed checkpoint is any checkpoint: it resumes in one
	# process, and with three workers
	run -0 tf-train -q --epochs 1 --batch-size 32 --checkpoint-dir a/ck "$F/train.tfrecord"
	[[ "${lines[-1]}" == *'"step":175,'* ]]
	cluster 1 3
	start_ps 1 --checkpoint-dir a/ck
	for i in 1 2; do
		tf-train $C --job-name worker --task-index $i -q --epochs 1 --batch-size 32 \
			--checkpoint-dir a/ck "$F/train.tfrecord" > /dev/null 2> w$i.err 3>&- &
		PIDS+=" $!"
	done
	run -0 --separate-stderr tf-train $C --job-name worker --task-index 0 -q --epochs 1 \
		--batch-size 32 --checkpoint-dir a/ck "$F/train.tfrecord"
	wait_all
	# 456 rows in three shares of 152: 5 steps of 32
	[[ "${lines[-1]}" == *'"step":180,'* ]]
	accuracy_near_one a/ck
}

@test "--model cnn over tf-ps: sync repeats bit for bit (batch norm of channels included) near one process's accuracy; async learns" {
	tf-csv2record "$TOP/share/data/digits.csv" -o digits.tfrecord
	tf-records split -n 5 -o dg digits.tfrecord
	cat dg-0000[0-3]-of-00005 > train.tfrecord
	cp dg.schema.json train.tfrecord.schema.json
	local A="-q --model cnn --conv 8,16 --hidden 32 --enable-bn --epochs 10 --batch-size 32"
	tf-train $A --checkpoint-dir one train.tfrecord > /dev/null
	tf-eval -d one dg-00004-of-00005 > one.json
	cluster 2 2
	sync_runs 2 $A
	# 719 rows a worker: 23 steps an epoch
	grep -q '"step":230,.*"cluster":{"trainers":2,"ps":2}' a.json
	cmp a/ck/model.ckpt-230 b/ck/model.ckpt-230
	cluster 1 2
	start_ps 1 --sync-mode async
	tf-train $C --job-name worker --task-index 1 $A --sync-mode async --checkpoint-dir as train.tfrecord \
		> /dev/null 2> w1.err 3>&- &
	PIDS+=" $!"
	tf-train $C --job-name worker --task-index 0 $A --sync-mode async --checkpoint-dir as train.tfrecord > as.json
	wait_all
	# sync is repeatable: near one process at half its steps (two
	# workers share each epoch); async's updates race, so it is only
	# asked to have learnt (chance is 0.1)
	for ck in a/ck as; do
		tf-eval -d $ck dg-00004-of-00005 > ${ck%/ck}.eval
		/usr/bin/python3 -c '
import json, sys
one, got = (json.load(open(f))["accuracy"] for f in sys.argv[1:3])
print(sys.argv[3], got, one, file=sys.stderr)
assert got >= (one - 0.1 if sys.argv[3] == "a/ck" else 0.7), (got, one)' one.json ${ck%/ck}.eval $ck
	done
}

@test "--model bidirectional_lstm over tf-ps on sequences of varying length (a CSV of sessions): sync repeats bit for bit and learns the order of pages" {
	sessions_csv sessions.csv 1 1600 16
	sessions_csv held.csv 2 300 16
	tf-csv2record -q --sequence pages sessions.csv -o train.tfrecord
	tf-csv2record -q --sequence pages held.csv -o held.tfrecord
	local A="-q --model bidirectional_lstm --rnn-units 12 --hidden 8 --epochs 6 --batch-size 32 --learning-rate 0.01"
	cluster 1 2
	sync_runs 1 $A
	# 800 rows a worker: 25 steps an epoch
	grep -q '"step":150,.*"cluster":{"trainers":2,"ps":1}' a.json
	cmp a/ck/model.ckpt-150 b/ck/model.ckpt-150
	tf-eval -d a/ck held.tfrecord > a.eval
	/usr/bin/python3 -c '
import json
a = json.load(open("a.eval"))
assert a["examples"] == 300 and a["accuracy"] >= 0.95, a'
}

# A whole sync job of 1 ps and 2 workers to --max-steps $1 in ck.
sync_job() {
	cluster 1 2
	local args="-q --epochs 0 --max-steps $1 --batch-size 32 --checkpoint-dir ck"
	start_ps 1 $args
	tf-train $C --job-name worker --task-index 1 $args "$F/train.tfrecord" > /dev/null 2> w1.err 3>&- &
	PIDS+=" $!"
	tf-train $C --job-name worker --task-index 0 $args "$F/train.tfrecord" > chief.json
	wait_all
}

@test "a distributed run stopped and resumed ends as one uninterrupted run: each trainer where it stood" {
	mkdir whole parts
	(cd whole && sync_job 160)
	(cd parts && sync_job 80 && sync_job 160)
	# each trainer's position is in the checkpoint
	grep -aq '"trainers":\[\[' parts/ck/model.ckpt-80
	cmp <(tf-eval -d whole/ck --predict "$F/bc-00004-of-00005") \
		<(tf-eval -d parts/ck --predict "$F/bc-00004-of-00005")
}

@test "async, 1 ps and 2 workers: the single-process accuracy; --status while it runs" {
	cluster 1 2
	start_ps 1
	tf-train $C --job-name worker --task-index 1 -q --epochs 20 --batch-size 32 --sync-mode async \
		"$F/train.tfrecord" > w1.out 2> w1.err 3>&- &
	PIDS+=" $!"
	run -0 --separate-stderr tf-train $C --job-name worker --task-index 0 -q --epochs 20 \
		--batch-size 32 --sync-mode async --checkpoint-dir ck "$F/train.tfrecord"
	wait_all
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
# 2 x 160 gradients, each applied unless staler than the bound (a
# worker that falls behind on a loaded machine): a step each
assert 300 <= j["step"] <= 320 and j["settings"]["sync-mode"] == "async", j' "${lines[-1]}"
	grep -q "async (1 of 2 trainers a step)" ps-0.log
	accuracy_near_one ck
	# the ps's last counters: every gradient sent was applied or dropped
	/usr/bin/python3 -c '
import json, re, sys
line = [l for l in open("ps-0.log") if "counters" in l][0]
c = json.loads(line.split("counters ", 1)[1])
for w in c["workers"]:
    d = w["dropped"]
    assert w["sent"] == w["applied"] + d["stale"] + d["backup"] + d["invalid"], w
    assert w["done"] and w["bytes_in"] > 0 and w["bytes_out"] > 0, w
    assert 0 < w["exchange_ms"] < 1000, w
assert sum(w["sent"] for w in c["workers"]) == 320, c
assert sum(w["applied"] for w in c["workers"]) == c["step"], c'
	# --status asks a running ps
	cluster 1 1
	start_ps 1
	sleep 0.3
	run -0 tf-ps $C --status
	[[ "$output" == '{"ps":0,"initialized":false,"step":0,'* ]]
	kill -TERM "${PIDS# }"
	wait_all
	grep -q "ps 0: stopped at step 0" ps-0.log
	# no ps there: 69
	kill -0 "${PIDS# }" 2> /dev/null || true
	run -69 --separate-stderr tf-ps $C --status
	[[ "$stderr" == *"ps 0 (tcp://localhost:${ports[0]})"* ]]
}

@test "sync with a backup worker: 2 of 3 gradients a step, the late ones dropped and counted" {
	# Which gradient is late is a race: trainer 2 runs at the lowest
	# priority, a straggler, and the run is tried up to three times for
	# one in which some gradient came late (every run must balance).
	for try in 1 2 3; do
		rm -rf ck ps-0.log
		cluster 1 3
		start_ps 1
		for i in 1 2; do
			nice -n $((i == 2 ? 19 : 0)) tf-train $C --job-name worker --task-index $i -q \
				--epochs 30 --batch-size 32 --replicas-to-aggregate 2 "$F/train.tfrecord" \
				> w$i.out 2> w$i.err 3>&- &
			PIDS+=" $!"
		done
		run -0 --separate-stderr tf-train $C --job-name worker --task-index 0 -q --epochs 30 \
			--batch-size 32 --replicas-to-aggregate 2 --checkpoint-dir ck "$F/train.tfrecord"
		wait_all
		grep -q "sync (2 of 3 trainers a step)" ps-0.log
		run -0 /usr/bin/python3 -c '
import json
line = [l for l in open("ps-0.log") if "counters" in l][0]
c = json.loads(line.split("counters ", 1)[1])
sent = sum(w["sent"] for w in c["workers"])
applied = sum(w["applied"] for w in c["workers"])
backup = sum(w["dropped"]["backup"] for w in c["workers"])
assert sent == applied + backup, c
# a step takes 2 gradients, 1 at the end when one trainer is left
assert c["step"] < applied <= 2 * c["step"], c
print(backup)'
		[ "$output" -gt 0 ] && break
	done
	[ "$output" -gt 0 ]
	accuracy_near_one ck
}

@test "a worker killed mid-run: the others finish; the ps says so and exits" {
	cluster 1 2
	start_ps 1
	tf-train $C --job-name worker --task-index 1 -q --epochs 0 --max-steps 100000 --batch-size 32 \
		--peer-timeout 1 "$F/train.tfrecord" > w1.out 2> w1.err 3>&- &
	victim=$!
	# killed once the ps has its model (training has begun), while the
	# chief has thousands of steps to go: it cannot finish first, and it
	# waits for trainer 1's gradients until the ps gives up on it
	(
		for _ in $(seq 100); do
			grep -q 'sync (2 of 2 trainers a step)' ps-0.log 2> /dev/null && break
			sleep 0.1
		done
		sleep 0.2
		kill -9 $victim
	) 3>&- &
	run -0 --separate-stderr tf-train $C --job-name worker --task-index 0 -q --epochs 3000 \
		--batch-size 32 --peer-timeout 1 --checkpoint-dir ck "$F/train.tfrecord"
	wait_all
	# the ps and the chief say which trainer was lost, when, and how
	# many remain
	grep -Eq "ps 0: step [0-9]+: trainer 1 silent for 1 s \(--peer-timeout\): going on without it \(1 of 2 trainers remain; a sync step takes 1 gradient\)" ps-0.log
	[[ "$stderr" =~ tf-train:\ note:\ step\ [0-9]+:\ the\ ps\ tasks\ go\ on\ without\ trainer\ 1\ \(silent\ longer\ than\ --peer-timeout\):\ 1\ of\ 2\ trainers\ remain ]]
	[[ "${lines[-1]}" == '{"final":true,'* ]]
	[ -e ck/checkpoint ]
}

# The final line's pool (chief.json's last line): every epoch of EPOCHS
# trained exactly once (ALREADY records of them by a run before this
# one), nothing applied twice; prints the records each trainer applied.
pool_exact() {
	/usr/bin/python3 -c '
import json, sys
j = json.loads(open("chief.json").read().splitlines()[-1])
p, epochs = j["pool"], int(sys.argv[1])
assert p["complete"] and p["excess"] == 0 and p["records"] == 456, p
assert all(t[1] == 456 for t in p["trained"]), p
assert [t[0] for t in p["trained"]] == list(range(max(0, epochs - 64), epochs)), p
already = int(sys.argv[2]) if len(sys.argv) > 2 else 0
assert already + sum(w["applied"] for w in p["workers"]) == 456 * epochs, p
for w in p["workers"]:
    assert w["handed_out"] == w["applied"] + w["returned"], w
print(" ".join(str(w["applied"]) for w in p["workers"]))' "$@"
}

# Once trainer 1 has taken its first chunk (said in LOG) and trained
# 0.5 s more: kill it with CMD..., and wait until the ps has gone on
# without it.
kill_trainer_1() {
	local log=$1 _
	shift
	for _ in $(seq 300); do
		grep -q 'trainer 1 took its first chunk' "$log" 2> /dev/null && break
		sleep 0.1
	done
	sleep 0.5
	"$@"
	for _ in $(seq 100); do
		grep -q 'trainer 1 silent' "$log" && break
		sleep 0.1
	done
}

# After a run of 1500 epochs in which trainer 1 was killed and started
# again (the ps's log LOG, the chief's line in chief.json): the ps went on
# without it and took the new process, every epoch was trained once, both
# trainers trained, and the model is as good as one process's.
restarted_run_exact() {
	grep -Eq "ps 0: step [0-9]+: trainer 1 silent for 3 s \(--peer-timeout\): going on without it \(1 of 2 trainers remain; a sync step takes 1 gradient\)" "$1"
	grep -Eq "ps 0: step [0-9]+: trainer 1 started again \(a new process\): 2 of 2 trainers remain; a sync step takes 2 gradients" "$1"
	run -0 pool_exact 1500
	read -r a0 a1 <<< "$output"
	[ "$a0" -gt 0 ] && [ "$a1" -gt 0 ]
	accuracy_near_one ck
}

@test "--chunk-size: with a fixed set of workers a sync run repeats bit for bit, each epoch trained once, the chunks dealt evenly" {
	cp "$F"/train.tfrecord* .
	cluster 2 2
	sync_runs 2 -q --epochs 20 --batch-size 32 --chunk-size 70
	ck=$(sed -n 's/^model_checkpoint_path: "\(.*\)"/\1/p' a/ck/checkpoint)
	cmp "a/ck/$ck" "b/ck/$ck"
	cp a.json chief.json
	run -0 pool_exact 20
	grep -q "ps 0: hands out 7 chunks of up to 70 records (456 records an epoch), starting at epoch 0 of 20" a/ps-0.log
	# 7 chunks an epoch for 2 workers: the deal goes on from one epoch
	# to the next, 70 each over the run (not 4 and 3 every epoch)
	/usr/bin/python3 -c '
import json
p = json.loads(open("chief.json").read().splitlines()[-1])["pool"]
assert [w["chunks"] for w in p["workers"]] == [70, 70], p'
	accuracy_near_one a/ck
}

@test "--chunk-size: a worker killed -9 mid-epoch and started again: its chunks go back, every epoch trained once" {
	cluster 2 2
	start_ps 2
	# --peer-timeout 3: a loaded machine can hold any process for 1 s
	a="-q --epochs 1500 --batch-size 32 --chunk-size 50 --peer-timeout 3 --startup-timeout 30"
	tf-train $C --job-name worker --task-index 1 $a "$F/train.tfrecord" > w1.out 2> w1.err 3>&- &
	victim=$!
	tf-train $C --job-name worker --task-index 0 $a --checkpoint-dir ck "$F/train.tfrecord" \
		> chief.json 2> chief.err 3>&- &
	PIDS+=" $!"
	kill_trainer_1 ps-0.log kill -9 $victim
	# --status once the ps has gone on without it: the pool's accounting
	run -0 tf-ps $C --status
	/usr/bin/python3 -c '
import json, sys
s = json.loads(sys.argv[1].splitlines()[0])
p = s["pool"]
assert p["chunk_size"] == 50 and p["chunks"] == 10 and p["records"] == 456, p
assert s["workers"][1]["lost"] and p["workers"][1]["returned"] > 0, s' "$output"
	tf-train $C --job-name worker --task-index 1 $a "$F/train.tfrecord" > w1b.out 2> w1b.err 3>&- &
	PIDS+=" $!"
	wait_all
	grep -Eq "ps 0: step [0-9]+: trainer 1 silent for 3 s \(--peer-timeout\): going on without it \(1 of 2 trainers remain; a sync step takes 1 gradient\); [0-9]+ records it held untrained go back to the pool: chunk [0-9]+ of epoch [0-9]+ \([0-9]+ of 50 records trained\)" ps-0.log
	grep -q "the chunks it held go back to the pool" chief.err
	restarted_run_exact ps-0.log
}

@test "two ps: a trainer whose step a paused ps holds tells the other it is still there, and is not gone on without" {
	cluster 2 1
	start_ps 2
	read -r _ ps1 <<< "$PIDS"
	a="-q --epochs 300 --batch-size 32 --peer-timeout 2 --startup-timeout 30"
	tf-train $C --job-name worker --task-index 0 $a --checkpoint-dir ck "$F/train.tfrecord" \
		> chief.json 2> chief.err 3>&- &
	PIDS+=" $!"
	for _ in $(seq 300); do
		grep -q 'ps 1: values' ps-1.log 2> /dev/null && break
		sleep 0.1
	done
	sleep 0.5
	# ps 1 paused 5 s, past --peer-timeout: the trainer's step waits on
	# it, and ps 0 hears from it all the while
	kill -STOP "$ps1"
	sleep 5
	kill -CONT "$ps1"
	wait_all
	run -1 grep "ps 0: .*trainer 0 .*--peer-timeout" ps-0.log
	/usr/bin/python3 -c '
import json, re, sys
x = json.loads(open("chief.json").read().splitlines()[-1])["exchange"]
assert x["max_ms"] >= 4000 and x["keepalives"] >= 2, x
log = open("ps-0.log").read()
w = json.loads(re.search(r"ps 0: counters (.*)", log).group(1))["workers"][0]
assert not w["lost"] and w["keepalives"] >= 2, w'
	accuracy_near_one ck
}

@test "--chunk-size: a chief validating longer than --peer-timeout steps aside and comes back; it is not gone on without" {
	# a validation of 136,560 rows through two layers of 1024: seconds
	for _ in $(seq 240); do cat "$F/bc.tfrecord"; done > val.tfrecord
	cp "$F/bc.schema.json" val.tfrecord.schema.json
	cluster 1 2
	start_ps 1
	a="-q --epochs 10 --batch-size 32 --chunk-size 50 --peer-timeout 2 --model dnn --hidden 1024,1024"
	tf-train $C --job-name worker --task-index 1 $a "$F/train.tfrecord" > w1.out 2> w1.err 3>&- &
	PIDS+=" $!"
	tf-train $C --job-name worker --task-index 0 $a --checkpoint-dir ck --validate val.tfrecord \
		--steps-to-validate 40 "$F/train.tfrecord" > chief.json 2> chief.err 3>&- &
	PIDS+=" $!"
	wait_all
	run -1 grep "trainer 0 .*--peer-timeout" ps-0.log
	[ "$(grep -c '"validation":{"examples":136560' chief.json)" -ge 2 ]
	# it said it was idle (a sync step went on without it) and there
	/usr/bin/python3 -c '
import json
x = json.loads(open("chief.json").read().splitlines()[-1])["exchange"]
assert x["asides"] >= 1 and x["keepalives"] >= 1, x'
	run -0 pool_exact 10
}

@test "--chunk-size: a third worker joins mid-run and takes chunks; one the ps went on without exits 75" {
	cluster 1 3
	start_ps 1
	a="-q --epochs 2000 --batch-size 32 --chunk-size 50 --peer-timeout 1"
	tf-train $C --job-name worker --task-index 1 $a "$F/train.tfrecord" > w1.out 2> w1.err 3>&- &
	stopped=$!
	tf-train $C --job-name worker --task-index 0 $a --checkpoint-dir ck "$F/train.tfrecord" \
		> chief.json 2> chief.err 3>&- &
	PIDS+=" $!"
	sleep 2
	# trainer 2 was never up: the run went on without it; it joins now
	tf-train $C --job-name worker --task-index 2 $a "$F/train.tfrecord" > w2.out 2> w2.err 3>&- &
	PIDS+=" $!"
	# trainer 1 stopped longer than --peer-timeout: refused when it goes on
	kill -STOP $stopped
	sleep 3
	kill -CONT $stopped
	st=0
	wait $stopped || st=$?
	[ "$st" -eq 75 ]
	grep -q "the ps tasks went on without this trainer (silent longer than --peer-timeout) and its chunks went back to the pool: start it again to rejoin; this trainer stops" w1.err
	wait_all
	grep -Eq "ps 0: step 0: trainer 2 not heard from since the start for 1 s \(--peer-timeout\): going on without it \(2 of 3 trainers remain; a sync step takes 2 gradients\)" ps-0.log
	grep -Eq "ps 0: step [0-9]+: trainer 2 joined: [23] of 3 trainers remain" ps-0.log
	t=$(sed -n 's/.*trainer 2 took its first chunk .* \([0-9.]*\) s after its first request/\1/p' ps-0.log)
	/usr/bin/python3 -c 'import sys; assert float(sys.argv[1]) < 2, sys.argv' "$t"
	run -0 pool_exact 2000
	read -r a0 a1 a2 <<< "$output"
	[ "$a2" -gt 0 ]
}

@test "--chunk-size: a run stopped and resumed with another number of workers trains every record once an epoch" {
	cluster 1 2
	a="-q --epochs 10 --batch-size 32 --chunk-size 50 --checkpoint-dir ck"
	start_ps 1 $a --max-steps 30
	tf-train $C --job-name worker --task-index 1 $a --max-steps 30 "$F/train.tfrecord" > /dev/null 2> w1.err 3>&- &
	PIDS+=" $!"
	tf-train $C --job-name worker --task-index 0 $a --max-steps 30 "$F/train.tfrecord" > chief.json
	wait_all
	grep -aq '"pool":{' ck/model.ckpt-30
	grep -q '"complete":false' chief.json
	before=$(/usr/bin/python3 -c '
import json
p = json.loads(open("chief.json").read().splitlines()[-1])["pool"]
print(sum(w["applied"] for w in p["workers"]))')
	cluster 1 3
	start_ps 1 $a
	for i in 1 2; do
		tf-train $C --job-name worker --task-index $i $a "$F/train.tfrecord" > /dev/null 2> w$i.err 3>&- &
		PIDS+=" $!"
	done
	tf-train $C --job-name worker --task-index 0 $a "$F/train.tfrecord" > chief.json
	wait_all
	grep -q "ps 0: hands out 10 chunks of up to 50 records (456 records an epoch), from epoch" ps-0.log
	run -0 pool_exact 10 "$before"
	# standard input cannot be cut into chunks: a usage error
	run -64 --separate-stderr tf-train $C --job-name worker --task-index 0 $a - < "$F/train.tfrecord"
	[[ "$stderr" == *"--chunk-size cuts files into chunks that any trainer may read: standard input cannot be"* ]]
	# nor a pipe by its name
	run -64 --separate-stderr tf-train $C --job-name worker --task-index 0 $a <(cat "$F/train.tfrecord")
	[[ "$stderr" == *"--chunk-size cuts files into chunks that any trainer may read: /dev/fd/"*" cannot be"* ]]
}

@test "a ps killed for good: the chief says which ps at which step and stops; the other ps says why it exits" {
	cluster 2 1
	start_ps 2 --peer-timeout 1
	victim=${PIDS##* }
	( sleep 1.5; kill -9 "$victim" ) 3>&- &
	run -69 --separate-stderr timeout 120 tf-train $C --job-name worker --task-index 0 -q --epochs 0 \
		--max-steps 1000000 --batch-size 16 --peer-timeout 1 --checkpoint-dir ck "$F/train.tfrecord"
	[[ "$stderr" =~ tf-train:\ step\ [0-9]+:\ ps\ 1\ \(tcp://localhost:[0-9]+\)\ did\ not\ answer:.*\;\ this\ trainer\ stops ]]
	PIDS=${PIDS% *}
	ps0=${PIDS# }
	timeout 60 tail --pid="$ps0" -f /dev/null
	st=0
	wait "$ps0" || st=$?
	PIDS=
	[ "$st" -eq 0 ]
	# ps 0 did not claim the run was done: its trainer was lost, the
	# chief silent longer than its own timeout
	grep -Eq "ps 0: step [0-9]+: trainer 0 silent for 1 s \(--peer-timeout\): going on without it \(0 of 1 trainers remain\)" ps-0.log
	grep -q "ps 0: every trainer has reported done or been lost (1 lost), and the chief has sent nothing for 11 s: it has stopped" ps-0.log
}

@test "start order does not matter: a trainer waits for its ps, saying so; a ps no trainer contacts exits 69" {
	cluster 1 1
	# nothing listening: the trainer gives up after --startup-timeout, 69
	run -69 --separate-stderr timeout 60 tf-train $C --job-name worker --task-index 0 -q --epochs 1 \
		--startup-timeout 3 --checkpoint-dir none "$F/train.tfrecord"
	[[ "$stderr" == *"note: waiting for ps 0 (tcp://localhost:"*") to be reachable (up to --startup-timeout 3 s)"* ]]
	[[ "$stderr" == *"ps 0 (tcp://localhost:"*") cannot be reached after --startup-timeout 3 s (is it running, and without TLS?)"* ]]
	[ ! -e none/checkpoint ]
	# the trainer first, the ps 3 s later: it trains
	timeout 60 tf-train $C --job-name worker --task-index 0 -q --epochs 2 --batch-size 32 \
		--checkpoint-dir ck "$F/train.tfrecord" > w0.out 2> w0.err 3>&- &
	PIDS+=" $!"
	sleep 3
	start_ps 1
	wait_all
	grep -q "note: waiting for ps 0" w0.err
	grep -q '"final":true' w0.out
	# a ps that no trainer contacts: 69 after --startup-timeout, saying so
	run -69 --separate-stderr timeout 60 tf-ps $C --task-index 0 --startup-timeout 1
	[[ "$stderr" == *"ps 0: no trainer has contacted this ps for 1 s (--startup-timeout): exiting"* ]]
}

@test "localhost as Debian has it (::1 and 127.0.0.1): the ps listens on both, trainers reach it" {
	[ "$(id -u)" -eq 0 ] || skip "needs root for a mount namespace"
	unshare -m true 2> /dev/null || skip "no mount namespaces here"
	ip -6 addr show lo 2> /dev/null | grep -q '::1' || skip "no IPv6 loopback"
	printf '::1\tlocalhost ip6-localhost ip6-loopback\n127.0.0.1\tlocalhost\n' > hosts-debian
	printf '127.0.0.1\tlocalhost\n' > hosts-v4
	for h in hosts-debian hosts-v4; do
		cluster 1 2
		run -0 --separate-stderr timeout 120 unshare -m sh -c "
			mount --bind $h /etc/hosts || exit 99
			tf-ps $C --task-index 0 --startup-timeout 60 2> ps.log &
			tf-train $C --job-name worker --task-index 1 -q --epochs 2 --batch-size 32 \
				--startup-timeout 60 '$F/train.tfrecord' > w1.out 2> w1.err &
			tf-train $C --job-name worker --task-index 0 -q --epochs 2 --batch-size 32 \
				--startup-timeout 60 --checkpoint-dir ck-$h '$F/train.tfrecord' || exit \$?
			wait"
		[[ "$output" == *'"final":true'* ]]
		if [ "$h" = hosts-debian ]; then
			grep -Eq "listening on tcp://\[::1\]:[0-9]+ tcp://127.0.0.1:[0-9]+" ps.log
		else
			grep -Eq "listening on tcp://127.0.0.1:[0-9]+$" ps.log
		fi
		grep -q "the run is over" ps.log
	done
}

@test "the ps killed and started again: it takes its shard from the last checkpoint, training goes on" {
	cluster 1 2
	args="-q --epochs 300 --batch-size 32 --save-every 50 --checkpoint-dir ck"
	start_ps 1 $args
	first=${PIDS# }
	tf-train $C --job-name worker --task-index 1 $args "$F/train.tfrecord" > w1.out 2> w1.err 3>&- &
	PIDS+=" $!"
	(
		# the first checkpoint, then the ps dies (within 20 s)
		for _ in $(seq 400); do
			ls ck/model.ckpt-* > /dev/null 2>&1 && break
			sleep 0.05
		done
		kill -9 "$first"
		timeout 300 tf-ps $C --task-index 0 $args 2> ps-again.log
		date +%s.%N > again.end
	) 3>&- &
	again=$!
	run -0 --separate-stderr tf-train $C --job-name worker --task-index 0 $args "$F/train.tfrecord"
	wait "$again"
	PIDS=${PIDS/ $first/}
	wait_all
	grep -q "ps 0: shard restored from ck/model.ckpt-" ps-again.log
	grep -q "ps 0: the run is over at step" ps-again.log
	[[ "${lines[-1]}" == '{"final":true,'* ]]
	accuracy_near_one ck
}

@test "a wrong auth token is refused, and the ps says so" {
	cluster 1 1
	echo sesame > token
	start_ps 1 --auth-token-file token --idle-timeout 3
	run -64 --separate-stderr tf-train $C --job-name worker --task-index 0 -q --auth-token wrong \
		"$F/train.tfrecord"
	[[ "$stderr" == *"ps 0 (tcp://localhost:${ports[0]}): wrong token" ]]
	run -0 --separate-stderr tf-train $C --job-name worker --task-index 0 -q --auth-token sesame \
		--epochs 1 "$F/train.tfrecord"
	wait_all
	grep -q "a request with a wrong token (worker 0): refused" ps-0.log
	# the token is never recorded
	! grep -q sesame <<< "$output"
}

# A base port with the next n free too.
free_base() {
	/usr/bin/python3 -c '
import random, socket, sys
n = int(sys.argv[1])
while True:
    b = random.randrange(20000, 60000 - n)
    try:
        socks = []
        for p in range(b, b + n):
            s = socket.socket(); s.bind(("127.0.0.1", p)); socks.append(s)
        print(b); break
    except OSError:
        pass' "$1"
}

@test "a real Slurm cluster: share/examples/slurm-train as a batch job, every task exits 0" {
	[ "$(id -u)" = 0 ] || skip "starting slurmctld, slurmd and munged needs root"
	load slurm
	slurm_up 4
	base=$(free_base 3)
	run timeout 120 sbatch --wait -n 3 --output=job.out \
		--export=ALL,PORT_BASE=$base "$TOP/share/examples/slurm-train" \
		"$F/train.tfrecord" ck -q --epochs=20 --batch-size=32
	slurm_down
	cat job.out
	[ "$status" -eq 0 ]
	grep -q '"final":true,"step":160,' job.out
	grep -q "ps 0: the run is over at step 160: exiting" job.out
	accuracy_near_one ck
}

@test "MPI launchers: share/examples/mpi-train, one command line for every rank (Open MPI, MPICH)" {
	PORT_BASE=$(free_base 3) run timeout 120 "$TOP/share/examples/mpi-train" 3 "$F/train.tfrecord" ck \
		-q --epochs 20 --batch-size 32
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *'"final":true,"step":160,'* ]]
	accuracy_near_one ck
	# MPICH's launcher, the same cluster, seed and data: the same model
	base=$(free_base 3)
	run timeout 120 mpiexec.hydra -n 3 tf-train --port-base "$base" -q --epochs 20 --batch-size 32 \
		--checkpoint-dir ck2 "$F/train.tfrecord"
	echo "$output"
	[ "$status" -eq 0 ]
	cmp <(tf-eval -d ck --predict "$F/bc-00004-of-00005") <(tf-eval -d ck2 --predict "$F/bc-00004-of-00005")
}

@test "--chunk-size under the launchers: Slurm's batch job and an MPI launcher train every record once an epoch" {
	a="-q --epochs 20 --batch-size 32 --chunk-size 50"
	if [ "$(id -u)" = 0 ]; then
		load slurm
		slurm_up 4
		base=$(free_base 3)
		run timeout 120 sbatch --wait -n 3 --output=job.out \
			--export=ALL,PORT_BASE=$base "$TOP/share/examples/slurm-train" \
			"$F/train.tfrecord" ck $a
		slurm_down
		cat job.out
		[ "$status" -eq 0 ]
		grep '"final":true' job.out > chief.json
		run -0 pool_exact 20
		grep -q "ps 0: hands out 10 chunks of up to 50 records (456 records an epoch)" job.out
		accuracy_near_one ck
		rm -rf ck
	fi
	PORT_BASE=$(free_base 3) run timeout 120 "$TOP/share/examples/mpi-train" 3 "$F/train.tfrecord" ck $a
	echo "$output"
	[ "$status" -eq 0 ]
	grep '"final":true' <<< "$output" > chief.json
	run -0 pool_exact 20
	accuracy_near_one ck
}

@test "--chunk-size in a Slurm job: a worker killed -9, then started again as a new step of the job, every epoch trained once" {
	[ "$(id -u)" = 0 ] || skip "starting slurmctld, slurmd and munged needs root"
	load slurm
	slurm_up 4
	base=$(free_base 3)
	a="-q --epochs=1500 --batch-size=32 --chunk-size=50 --peer-timeout=3 --startup-timeout=30"
	jid=$(sbatch --parsable -n 3 --output=job.out --export=ALL,PORT_BASE=$base \
		"$TOP/share/examples/slurm-train" "$F/train.tfrecord" "$PWD/ck" $a)
	# task 2 of the job's step: worker 1
	kill_trainer_1 job.out pkill -9 -f -- "tf-train --job-name=worker --task-index=1 "
	# a new step of the same allocation, its place in the cluster given
	# by flags (its own Slurm environment is a step of one task)
	srun --jobid="$jid" --overlap -n 1 tf-train --job-name=worker --task-index=1 \
		--ps-hosts=localhost:$base --worker-hosts=localhost:$((base + 1)),localhost:$((base + 2)) \
		$a "$F/train.tfrecord" > w1b.out 2> w1b.err &
	PIDS+=" $!"
	for _ in $(seq 1200); do
		squeue -h -j "$jid" 2> /dev/null | grep -q . || break
		sleep 0.1
	done
	wait_all
	slurm_down
	cat job.out w1b.err
	grep '"final":true' job.out > chief.json
	restarted_run_exact job.out
}

@test "--chunk-size with TF_CONFIG (as Kubernetes starts pods): a worker killed -9 and started again, every epoch trained once" {
	cluster 1 2
	# each process's TF_CONFIG: the cluster of $C, its own task
	hosts() { sed -n "s/.*--$1-hosts \([^ ]*\).*/\1/p" <<< "$C" | sed 's/[^,]*/"&"/g'; }
	tfc() { echo "{\"cluster\": {\"ps\": [$(hosts ps)], \"worker\": [$(hosts worker)]}, \"task\": {\"type\": \"$1\", \"index\": $2}}"; }
	TF_CONFIG=$(tfc ps 0) tf-ps 2> ps-0.log 3>&- &
	PIDS+=" $!"
	a="-q --epochs 1500 --batch-size 32 --chunk-size 50 --peer-timeout 3 --startup-timeout 30"
	TF_CONFIG=$(tfc worker 1) tf-train $a "$F/train.tfrecord" > w1.out 2> w1.err 3>&- &
	victim=$!
	TF_CONFIG=$(tfc worker 0) tf-train $a --checkpoint-dir ck "$F/train.tfrecord" > chief.json 2> chief.err 3>&- &
	PIDS+=" $!"
	kill_trainer_1 ps-0.log kill -9 $victim
	TF_CONFIG=$(tfc worker 1) tf-train $a "$F/train.tfrecord" > w1b.out 2> w1b.err 3>&- &
	PIDS+=" $!"
	wait_all
	restarted_run_exact ps-0.log
}

@test "share/examples/kubernetes.yaml: each pod's TF_CONFIG is the cluster the flags give" {
	/usr/bin/python3 - "$TOP/share/examples/kubernetes.yaml" > pods <<'PY'
import json, sys, yaml
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if doc["kind"] != "Pod":
        continue
    c = doc["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in c["env"]}
    print(c["command"][0], env["TF_CONFIG"].replace(" ", ""), sep="\t")
PY
	[ "$(wc -l < pods)" = 3 ]
	ps=tfkit-ps-0.tfkit.default.svc:2222
	wk=tfkit-worker-0.tfkit.default.svc:2222,tfkit-worker-1.tfkit.default.svc:2222
	while IFS=$'\t' read -r cmd tfc; do
		type=$(jq -r .task.type <<< "$tfc")
		index=$(jq -r .task.index <<< "$tfc")
		got=$(TF_CONFIG=$tfc "$cmd" --print-cluster)
		want=$("$cmd" --ps-hosts $ps --worker-hosts $wk --job-name "$type" --task-index "$index" --print-cluster)
		[ "${got%,\"source\"*}" = "${want%,\"source\"*}" ]
		# the ps pod runs tf-ps, the workers tf-train
		[ "$cmd" = "$([ "$type" = ps ] && echo tf-ps || echo tf-train)" ]
	done < pods
}

@test "TLS: a ps with a certificate, trainers that check it; a trainer that does not trust it gets nothing" {
	openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 \
		-subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2> /dev/null
	cat cert.pem key.pem > ps.pem
	openssl req -x509 -newkey rsa:2048 -nodes -keyout other-key.pem -out other.pem -days 2 \
		-subj /CN=localhost 2> /dev/null
	cluster 1 1
	tls="--tls-cert-key ps.pem --tls-ca cert.pem"
	start_ps 1 $tls --idle-timeout 20
	run -0 --separate-stderr tf-train $C $tls --job-name worker --task-index 0 -q --epochs 5 \
		--checkpoint-dir ck "$F/train.tfrecord"
	wait_all
	grep -Eq "listening on (tls\+tcp://[^ ]* )?tls\+tcp://127.0.0.1:${ports[0]}" ps-0.log
	[[ "${lines[-1]}" == '{"final":true,"step":20,'* ]]
	[ -e ck/checkpoint ]
	# another CA, or no TLS at all: no answer, said so, 69
	start_ps 1 $tls --idle-timeout 20
	run -69 --separate-stderr tf-train $C --tls-ca other.pem --job-name worker --task-index 0 -q \
		--peer-timeout 1 --startup-timeout 2 "$F/train.tfrecord"
	[[ "$stderr" == *"ps 0 (tls+tcp://localhost:${ports[0]}) cannot be reached after --startup-timeout 2 s (is it running, with a certificate --tls-ca trusts?)" ]]
	run -69 --separate-stderr tf-train $C --job-name worker --task-index 0 -q --peer-timeout 1 \
		--startup-timeout 2 "$F/train.tfrecord"
	[[ "$stderr" == *"cannot be reached after --startup-timeout 2 s (is it running, and without TLS?)" ]]
}

@test "the protocol: not ready before INIT, a resent push applied once, staleness, bad requests refused and counted" {
	cluster 1 2
	start_ps 1
	u=tcp://127.0.0.1:${ports[0]}
	run -0 "$TFKIT_BUILD/tests/psreq" "$u" \
		"pull worker=0 n=4" \
		"init n=4 values=1,2,3,4 optimizer=sgd total=2 sync=0 staleness=1" \
		"push worker=0 seq=1 n=4 step=0 values=1,1,1,1 lr=0.5" \
		"push worker=0 seq=1 n=4 step=0 values=1,1,1,1 lr=0.5" \
		"push worker=1 seq=1 n=4 step=0 values=1,1,1,1 lr=0.5" \
		"push worker=1 seq=2 n=4 step=0 values=1,1,1,1 lr=0.5" \
		"push worker=0 seq=2 n=4 step=2 values=1,1 lr=0.5" \
		"pull worker=5 n=4" \
		"pull version=2 n=4" \
		"pull token=x worker=0 n=4" \
		"raw hex=ffffffff" \
		"init n=4 values=9,9,9,9 optimizer=sgd total=2" \
		"alive worker=1 n=4" \
		"alive worker=1 n=5"
	[ "${lines[0]}" = "NOT_READY 0 not initialised yet" ]
	[ "${lines[1]}" = "OK 0 - 1 2 3 4" ]
	# w -= lr * g, once: the resend (same sequence number) is answered
	[ "${lines[2]}" = "OK 1 - 0.5 1.5 2.5 3.5" ]
	[ "${lines[3]}" = "OK 1 - 0.5 1.5 2.5 3.5" ]
	# one step old is within the bound of 1, two are not
	[ "${lines[4]}" = "OK 2 - 0 1 2 3" ]
	[ "${lines[5]}" = "STALE 2 - 0 1 2 3" ]
	[ "${lines[6]}" = "ERROR 2 a gradient of 8 bytes computed at step 2: this shard has 4 values and is at step 2" ]
	[ "${lines[7]}" = "ERROR 2 trainer 5 of a model of 4 values: this ps serves 2 trainers and 4 values" ]
	[ "${lines[8]}" = "ERROR 2 protocol version 2; this ps speaks 1" ]
	[ "${lines[9]}" = "OK 2 - 0 1 2 3" ] # no --auth-token: any token
	[ "${lines[10]}" = "ERROR 2 malformed request" ]
	# a second INIT (a chief started again) changes nothing
	[ "${lines[11]}" = "OK 2 - 0 1 2 3" ]
	# a trainer waiting on another ps says it is still here: counted,
	# nothing else changes; one of another model is refused
	[ "${lines[12]}" = "OK 2 -" ]
	[ "${lines[13]}" = "ERROR 2 trainer 1 of a model of 5 values: this ps serves 2 trainers and 4 values" ]
	run -0 "$TFKIT_BUILD/tests/psreq" "$u" "status"
	/usr/bin/python3 -c '
import json, sys
c = json.loads(sys.argv[1].split(" ", 2)[2])
w0, w1 = c["workers"]
assert (w0["sent"], w0["applied"], w0["dropped"]["invalid"]) == (2, 1, 1), w0
assert (w1["sent"], w1["applied"], w1["dropped"]["stale"]) == (2, 1, 1), w1
assert (w0["keepalives"], w1["keepalives"]) == (0, 1), c
assert c["step"] == 2 and c["mode"] == "async", c' "$output"
	run -0 "$TFKIT_BUILD/tests/psreq" "$u" "done worker=0 n=4" "done worker=1 n=4" "finish worker=0 n=4"
	wait_all
	grep -q "a malformed request of 4 bytes: refused" ps-0.log
	grep -q "a request of protocol version 2; this ps speaks 1: refused" ps-0.log
	grep -q "ps 0: the run is over at step 2: exiting" ps-0.log
}

@test "a snapshot of a step the ps cannot come to is answered at its own step; one it can come to waits for it" {
	cluster 1 2
	start_ps 1 --idle-timeout 20
	u=tcp://127.0.0.1:${ports[0]}
	# A sync ps of two trainers at step 100, as one started again from
	# a checkpoint; the chief asks for step 300, the step it last saw.
	# Both gradients make a step, and the chief sends none while it
	# waits: the step never comes, so the answer is step 100 at once.
	run -0 "$TFKIT_BUILD/tests/psreq" "$u" \
		"init n=4 values=1,2,3,4 optimizer=sgd total=2 sync=1 step=100" \
		"snapshot worker=0 n=4 step=300" \
		"status"
	[ "${lines[1]}" = "OK 100 - 1 2 3 4" ]
	[[ "${lines[2]}" == *'"step":100,'* ]]
	run -0 "$TFKIT_BUILD/tests/psreq" "$u" "done worker=0 n=4" "done worker=1 n=4" "finish worker=0 n=4"
	wait_all
	# One gradient a step (a backup trainer): trainer 1 alone steps the
	# shard, so a snapshot of step 101 waits for it, and has its values.
	PIDS=
	start_ps 1 --idle-timeout 20
	"$TFKIT_BUILD/tests/psreq" "$u" \
		"init n=4 values=1,2,3,4 optimizer=sgd total=2 sync=1 k=1 step=100" > init.out
	"$TFKIT_BUILD/tests/psreq" "$u" "snapshot worker=0 n=4 step=101" > snap.out &
	snap=$!
	sleep 0.5
	[ ! -s snap.out ]
	run -0 "$TFKIT_BUILD/tests/psreq" "$u" "push worker=1 seq=1 n=4 step=100 values=1,1,1,1 lr=0.5"
	[ "${lines[0]}" = "OK 101 - 0.5 1.5 2.5 3.5" ]
	wait "$snap"
	[ "$(cat snap.out)" = "OK 101 - 0.5 1.5 2.5 3.5" ]
	run -0 "$TFKIT_BUILD/tests/psreq" "$u" "done worker=0 n=4" "done worker=1 n=4" "finish worker=0 n=4"
	wait_all
}

@test "embedding tables travel by row: sparse pushes and pulls, the same model as dense" {
	shapes_csv 3000 > shapes.csv
	tf-csv2record shapes.csv -o shapes.tfrecord
	A="-q --model wide_and_deep --crosses color*shape --hash-buckets 65536 --batch-size 64 --epochs 3 --seed 3"
	tf-train $A --checkpoint-dir single shapes.tfrecord > single.json
	# one worker, one ps: the same weights as one process
	cluster 1 1
	start_ps 1
	run -0 --separate-stderr tf-train $C --job-name worker --task-index 0 $A --checkpoint-dir dist shapes.tfrecord
	wait_all
	cmp <(tf-eval -d single --predict shapes.tfrecord) <(tf-eval -d dist --predict shapes.tfrecord)
	echo "${lines[-1]}" > small.json
	# bytes follow the rows a batch touches, not the table's size: the
	# same with 2^20 rows, and far below the dense exchange (2 x 4 bytes
	# x every parameter)
	cluster 1 1
	start_ps 1
	tf-train $C --job-name worker --task-index 0 ${A/65536/1048576} --checkpoint-dir big shapes.tfrecord > big.json
	wait_all
	/usr/bin/python3 -c '
import json, sys
small, big = (json.load(open(f)) for f in ("small.json", "big.json"))
per = [j["exchange"]["step_bytes"] / j["exchange"]["steps"] for j in (small, big)]
assert abs(per[1] - per[0]) < 0.05 * per[0], per
assert per[1] < 2 * 4 * (1 << 20) / 50, per'
	# two ps (the table split between them), two workers, sync: the
	# same checkpoint twice, and the ps see no invalid request
	for run in a b; do
		mkdir "$run" && cd "$run"
		cluster 2 2
		start_ps 2
		tf-train $C --job-name worker --task-index 1 ${A/epochs 3/epochs 12} ../shapes.tfrecord > /dev/null 3>&- &
		PIDS+=" $!"
		tf-train $C --job-name worker --task-index 0 ${A/epochs 3/epochs 12} --checkpoint-dir ck ../shapes.tfrecord > chief.json
		wait_all
		grep -q '"invalid":0' ps-0.log
		! grep -q '"invalid":[1-9]' ps-0.log ps-1.log
		cd ..
	done
	cmp a/ck/model.ckpt-* b/ck/model.ckpt-*
	# and it learns the interaction of the crosses
	tf-eval -d a/ck shapes.tfrecord > two.json
	/usr/bin/python3 -c '
import json, sys
assert json.load(open("two.json"))["accuracy"] > 0.9, open("two.json").read()'
}

@test "a sparse model's out-of-vocabulary rows (--oov-buckets) travel as its others: one worker and one ps give one process's model, and learn the ids of new data through them" {
	# ids f * 65537 + 1 (an id vocabulary), then new data's + 2
	gen() {
		awk -v rows="$1" -v add="$2" 'BEGIN { s = 11
			for (r = 0; r < rows; r++) { line = ""; delete seen
				for (k = 0; k < 5; k++) {
					do { s = (s * 1103515245 + 12345) % 2147483648; f = s % 300 } while (f in seen)
					seen[f] = 1; line = line " " f * 65537 + add ":1" }
				print (f % 3 == 0 ? 1 : 0) line } }'
	}
	gen 1500 1 > a.svm
	gen 300 2 > b.svm
	tf-csv2record -q -f libsvm -o a.tfrecord a.svm
	tf-csv2record -q -f libsvm -o b.tfrecord b.svm
	jq -e '.sparse.id_count > 50' a.tfrecord.schema.json # an id vocabulary
	A="-q --model lr --optimizer ftrl --learning-rate 0.5 --oov-buckets 8 --batch-size 32 --seed 3"
	for data in a b; do
		tf-train $A -e 2 --checkpoint-dir single $data.tfrecord > /dev/null
		cluster 1 1
		start_ps 1
		tf-train $C --job-name worker --task-index 0 $A -e 2 --checkpoint-dir dist $data.tfrecord > /dev/null
		wait_all
		cmp <(tf-eval -d single --predict b.tfrecord) <(tf-eval -d dist --predict b.tfrecord)
	done
	# the new ids moved the buckets: b's predictions changed with b
	tf-train $A -e 2 --checkpoint-dir a-only a.tfrecord > /dev/null
	! cmp -s <(tf-eval -d a-only --predict b.tfrecord) <(tf-eval -d single --predict b.tfrecord)
}

@test "a trainer whose table rows stand for other ids (its data converted apart: another id vocabulary, as many ids) is refused by the ps, saying how to convert, and the chief goes on without it at once; one schema for all trains" {
	awk 'BEGIN { s = 5; for (r = 0; r < 600; r++) { line = ""; delete seen
		for (k = 0; k < 4; k++) { do { s = (s * 69069 + 1) % 4294967296; f = int(s / 65536) % 500 } while (f in seen)
			seen[f] = 1; line = line " " f * 40009 + 7 ":1" }
		print (f % 2) line } }' > a.svm
	# the same rows, each id one more: as many ids, none the same
	awk '{ printf "%s", $1; for (i = 2; i <= NF; i++) { split($i, a, ":"); printf " %d:1", a[1] + 1 } print "" }' a.svm > b.svm
	tf-csv2record -q -f libsvm -o a.tfrecord a.svm
	tf-csv2record -q -f libsvm -o b.tfrecord b.svm
	jq -e --slurpfile b b.tfrecord.schema.json '.sparse.id_count == $b[0].sparse.id_count and .sparse.id_vocab != $b[0].sparse.id_vocab' a.tfrecord.schema.json
	# (the default --peer-timeout, 60 s: the refused trainer is gone at
	# once, the chief's steps do not wait for it)
	A="-q --model lr --optimizer ftrl --batch-size 32"
	cluster 1 2
	start_ps 1
	tf-train $C --job-name worker --task-index 1 $A b.tfrecord > w1.out 2> w1.err 3>&- &
	W1=$!
	SECONDS=0
	run -0 --separate-stderr timeout 50 tf-train $C --job-name worker --task-index 0 $A --checkpoint-dir ck a.tfrecord
	[ "$SECONDS" -lt 30 ]
	run -64 wait "$W1" # (a cluster that does not hold together)
	wait_all
	grep -q "trainer 1's model is not the chief's: its parameters stand for other rows" w1.err
	grep -q "convert all the data in one tf-csv2record run (-n N for a file a trainer), or give each trainer the same --schema" w1.err
	grep -q "a request refused: trainer 1's model is not the chief's" ps-0.log
	grep -q "trainer 1 refused (above): going on without it" ps-0.log
	# both files under one schema (as tf-csv2record -n writes): trained
	cat a.svm b.svm > ab.svm
	tf-csv2record -q -f libsvm -n 2 -o ab.tfrecord ab.svm
	cluster 1 2
	start_ps 1
	tf-train $C --job-name worker --task-index 1 $A --schema ab.tfrecord.schema.json ab.tfrecord-00001-of-00002 > /dev/null 3>&- &
	PIDS+=" $!"
	tf-train $C --job-name worker --task-index 0 $A --schema ab.tfrecord.schema.json --checkpoint-dir ck2 ab.tfrecord-00000-of-00002 > /dev/null
	wait_all
	! grep -q "refused" ps-0.log
}

@test "the protocol, row-sparse: a push of some ranges, the reply of the ranges asked for, bad ranges refused and counted" {
	cluster 1 1
	start_ps 1
	u=tcp://127.0.0.1:${ports[0]}
	run -0 "$TFKIT_BUILD/tests/psreq" "$u" \
		"init n=6 values=1,2,3,4,5,6 optimizer=sgd total=1 sync=1" \
		"push worker=0 seq=1 n=6 step=0 blocks=1,2,5,1 values=2,2,4 want=0,1,4,2 lr=0.5" \
		"pull worker=0 n=6 want=1,3" \
		"pull worker=0 n=6 want=" \
		"push worker=0 seq=2 n=6 step=1 blocks=3,1,2,1 values=1,1 want=0,6 lr=0.5" \
		"push worker=0 seq=3 n=6 step=1 blocks=5,2 values=1,1 lr=0.5" \
		"push worker=0 seq=4 n=6 step=1 blocks=1,2 values=1 lr=0.5" \
		"pull worker=0 n=6 want=4,3" \
		"pull worker=0 n=6"
	[ "${lines[0]}" = "OK 0 - 1 2 3 4 5 6" ]
	# w -= 0.5 g where g is 2, 2 at 1-2 and 4 at 5, zero elsewhere; the
	# reply holds values 0 and 4-5 only
	[ "${lines[1]}" = "OK 1 - 1 5 4" ]
	[ "${lines[2]}" = "OK 1 - 1 2 4" ]
	[ "${lines[3]}" = "OK 1 -" ] # sparse, no range: no values
	[ "${lines[4]}" = "ERROR 1 a gradient of 8 bytes computed at step 1: this shard has 6 values and is at step 1" ]
	[ "${lines[5]}" = "ERROR 1 a gradient of 8 bytes computed at step 1: this shard has 6 values and is at step 1" ]
	[ "${lines[6]}" = "ERROR 1 a gradient of 4 bytes computed at step 1: this shard has 6 values and is at step 1" ]
	[ "${lines[7]}" = "ERROR 1 ranges outside the shard" ]
	[ "${lines[8]}" = "OK 1 - 1 1 2 4 5 4" ]
	run -0 "$TFKIT_BUILD/tests/psreq" "$u" "status"
	/usr/bin/python3 -c '
import json, sys
w = json.loads(sys.argv[1].split(" ", 2)[2])["workers"][0]
assert (w["sent"], w["applied"], w["dropped"]["invalid"]) == (4, 1, 4), w' "$output"
	run -0 "$TFKIT_BUILD/tests/psreq" "$u" "done worker=0 n=6" "finish worker=0 n=6"
	wait_all
}
