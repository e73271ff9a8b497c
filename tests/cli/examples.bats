#!/usr/bin/env bats
# share/examples: the cron-retrain round against a running tf-serve, and
# the sweep, run as their comments say to run them.

bats_require_minimum_version 1.5.0
load helpers

EX=$TOP/share/examples

teardown() {
	kill_quietly "${SPID:-}"
	kill_quietly "${LPID:-}"
}

@test "cron-retrain: rounds over arriving data, versions only when better, serving throughout" {
	tf-csv2record "$DATA/breast_cancer.csv" -o all.tfrecord
	tf-records split -n 5 -o part all.tfrecord
	mv part-00004-of-00005 test.tfrecord
	cp part.schema.json test.tfrecord.schema.json
	mkdir in
	# round 1: the first part arrives
	cp part-00000-of-00005 in/a.tfrecord
	cp part.schema.json in/a.tfrecord.schema.json
	run -0 env TRAIN_FLAGS="--epochs 3 --batch-size 16" "$EX/cron-retrain" in ck models test.tfrecord
	[[ "$output" == *'"exported":true'* ]]
	[ -d models/1 ] && [ -e in/done/a.tfrecord ] && [ ! -e in/a.tfrecord ]
	# a server on the export base, asked all along
	tf-serve --rest-api-port 0 --grpc-port 0 --listen-address 127.0.0.1 --poll-interval 0.2 \
		--model-base models --model-name bc 2> serve.log 3>&- &
	SPID=$!
	for _ in $(seq 100); do
		port=$(sed -n 's|.*REST API on http://[0-9.]*:\([0-9]*\)/.*|\1|p' serve.log)
		[ -n "$port" ] && break
		sleep 0.05
	done
	[ -n "$port" ]
	tf-records head -n 1 test.tfrecord | /usr/bin/python3 -c '
import json, sys
r = json.loads(sys.stdin.readline())
print(json.dumps({"instances": [{k: v[0] for k, v in r.items() if k != "label"}]}))' > req.json
	(while :; do curl -s -o /dev/null -w '%{http_code}\n' -d @req.json \
		"http://127.0.0.1:$port/v1/models/bc:predict" >> codes; sleep 0.02; done) 3>&- &
	LPID=$!
	# rounds 2-4: more parts; a version only when validation improves
	for p in 1 2 3; do
		cp part-0000$p-of-00005 in/p$p.tfrecord
		cp part.schema.json in/p$p.tfrecord.schema.json
		run -0 env TRAIN_FLAGS="--epochs 3 --batch-size 16" "$EX/cron-retrain" in ck models test.tfrecord
		[[ "$output" == *'"exported":true'* || "$output" == *'"exported":false'* ]]
	done
	# nothing new: a quiet round
	run -0 "$EX/cron-retrain" in ck models test.tfrecord
	[ "$output" = "cron-retrain: nothing new in in" ]
	sleep 0.5
	kill "$LPID"; wait "$LPID" 2> /dev/null || true
	LPID=
	# every request answered, the newest version served
	[ -s codes ]
	[ -z "$(grep -v '^200$' codes)" ]
	newest=$(ls models | sort -n | tail -n 1)
	run -0 curl -s "http://127.0.0.1:$port/v1/models/bc"
	[[ "$output" == *"\"version\": \"$newest\","*'"state": "AVAILABLE"'* ]]
	# versions were exported only when the metric did not fall
	/usr/bin/python3 - models <<'PY'
import json, os, sys
vs = sorted(int(v) for v in os.listdir(sys.argv[1]) if v.isdigit())
auc = [json.load(open(f"{sys.argv[1]}/{v}/model.json"))["provenance"]["validation"]["auc"] for v in vs]
assert all(a <= b for a, b in zip(auc, auc[1:])), auc
PY
	# an overlapping round: 75, and its files stay where they are
	cp part-00001-of-00005 in/late.tfrecord
	cp part.schema.json in/late.tfrecord.schema.json
	flock ck/LOCK sleep 2 3>&- &
	fpid=$!
	sleep 0.3
	run -75 "$EX/cron-retrain" in ck models test.tfrecord
	wait "$fpid"
	[ -e in/late.tfrecord ]
}

@test "cron-retrain: shards and any TFRecord name train, other files are left and named, the round says what it did" {
	tf-csv2record "$DATA/breast_cancer.csv" -o bc.tfrecord
	tf-records split -n 5 -o bc bc.tfrecord
	mkdir in
	# as the README does: tf-records split's shards and their schema
	cp bc-0000[0-2]-of-00005 bc.schema.json in/
	gzip -c bc-00003-of-00005 > in/late.gz
	echo 'not records' > in/notes.txt
	: > in/.bc-00009-of-00010.tmp.1234
	run -0 --separate-stderr env TRAIN_FLAGS="--epochs 2" "$EX/cron-retrain" in ck models bc-00004-of-00005
	[ "${lines[0]}" = "cron-retrain: training on 4 files: in/bc-00000-of-00005 in/bc-00001-of-00005 in/bc-00002-of-00005 in/late.gz" ]
	[[ "$output" == *'"examples_total":912,'* ]]
	[[ "${lines[-1]}" =~ ^cron-retrain:\ the\ next\ round\ continues\ from\ ck/model\.ckpt-[0-9]+\ \(step\ [0-9]+,\ auc\ [0-9.]+\),\ exported\ as\ version\ 1$ ]]
	[[ "$stderr" == *"cron-retrain: leaving in/notes.txt: not TFRecords"* ]]
	[[ "$stderr" != *".tmp."* ]]
	[ "$(ls in)" = "$(printf 'done\nnotes.txt')" ]
	[ -e in/done/bc.schema.json ] && [ -e in/done/late.gz ]
	# the same data again: a tie is no worse, so it exports
	cp in/done/bc-00000-of-00005 in/again.tfrecord
	run -0 env TRAIN_FLAGS="--epochs 1" "$EX/cron-retrain" in ck models bc-00004-of-00005
	[[ "${lines[-1]}" == *"the next round continues from ck/model.ckpt-"* ]]
	[[ "${lines[-1]}" == *", exported as version 2" || "${lines[-1]}" == *", not exported: version 1 (auc "*") stays the served one" ]]
}

@test "sweep: a grid in parallel, every line with its settings, the best by AUC" {
	tf-csv2record "$DATA/breast_cancer.csv" -o all.tfrecord
	tf-records split -n 5 -o part all.tfrecord
	cat part-0000[0-3]-of-00005 > train.tfrecord
	cp part.schema.json train.tfrecord.schema.json
	run -0 env HIDDEN="16 8;8" LR="0.01 0.001" EPOCHS=5 JOBS=2 "$EX/sweep" train.tfrecord part-00004-of-00005 out
	best=$output
	[ "$(ls out/run-*.json | wc -l)" -eq 4 ]
	/usr/bin/python3 - "$best" out/run-*.json <<'PY'
import json, sys
best = json.loads(sys.argv[1])
runs = [json.loads(open(p).read()) for p in sys.argv[2:]]
assert best["validation"]["auc"] == max(r["validation"]["auc"] for r in runs), best
seen = {(r["settings"]["hidden"], r["settings"]["learning-rate"]) for r in runs}
assert seen == {("16 8", 0.01), ("16 8", 0.001), ("8", 0.01), ("8", 0.001)}, seen
PY
	# the same flags and seed again: the same model, byte for byte
	run -0 env HIDDEN="8" LR="0.01" EPOCHS=5 "$EX/sweep" train.tfrecord part-00004-of-00005 again
	n=$(grep -P '\t8\t0.01\t' out/grid | cut -f1)
	same_state out/run-$n/model.ckpt-* again/run-1/model.ckpt-*
}

@test "sweep: a failed run fails the sweep, named with its message; a metric the task lacks is 64" {
	tf-csv2record "$DATA/breast_cancer.csv" -o all.tfrecord
	tf-records split -n 5 -o part all.tfrecord
	cat part-0000[0-3]-of-00005 > train.tfrecord
	cp part.schema.json train.tfrecord.schema.json
	# batch size 0 is refused by tf-train: run 2 fails, and so does the sweep
	run -64 --separate-stderr env HIDDEN="8" LR="0.01" BATCH="16 0" EPOCHS=1 "$EX/sweep" train.tfrecord part-00004-of-00005 out
	[ -z "$output" ]
	[[ "$stderr" == *'sweep: run 2 (--hidden "8" --learning-rate 0.01 --batch-size 0) failed with status 64: tf-train: --batch-size: '* ]]
	[[ "$stderr" != *"run 1 "* ]]
	# r2 is a regression's metric, not a binary classifier's
	run -64 --separate-stderr env HIDDEN="8" LR="0.01" EPOCHS=1 METRIC=r2 "$EX/sweep" train.tfrecord part-00004-of-00005 out2
	[ -z "$output" ]
	[[ "$stderr" == *"sweep: METRIC r2 is not a validation metric of this task (the runs report accuracy, auc, examples, loss)"* ]]
	run -64 --separate-stderr env METRIC=f1 "$EX/sweep" train.tfrecord part-00004-of-00005 out3
	[[ "$stderr" == *"METRIC f1 is none of"* ]]
	[ ! -e out3 ]
}

@test "online-train: a CSV log followed as it grows, each row trained, versions published" {
	head -301 "$DATA/breast_cancer.csv" > history.csv
	tf-csv2record -q -o history.tfrecord history.csv
	(head -1 "$DATA/breast_cancer.csv"; sed -n 302,400p "$DATA/breast_cancer.csv") > events.csv
	EXPORT_EVERY=1 TRAIN_FLAGS="--model lr --batch-size 16" \
		setsid "$EX/online-train" events.csv history.tfrecord.schema.json ck models \
		> out.json 2> err.txt &
	LPID=$!
	sleep 1
	sed -n 401,569p "$DATA/breast_cancer.csv" >> events.csv
	# until a version has trained on every row of the log (268)
	for i in $(seq 150); do
		grep -q '"examples_total":268,.*"exported":true' out.json && break
		sleep 0.2
	done
	# stopped as a service manager stops it: SIGTERM to the group
	kill -TERM -- -"$LPID"
	wait "$LPID" || true
	LPID=
	for i in $(seq 100); do # setsid may have forked: tf-train's last word
		grep -q 'stopped at a checkpoint' err.txt && break
		sleep 0.1
	done
	grep -q 'SIGTERM: stopped at a checkpoint' err.txt
	# every row of the log trained: 268 rows after the header
	[ "$(grep '"final"' out.json | sed 's/.*"examples_total":\([0-9]*\).*/\1/')" = 268 ]
	v=$(ls models | sort -n | tail -1)
	[ "$v" -ge 1 ]
	run -0 tf-eval -d "models/$v" history.tfrecord
	[[ "$output" == *'"examples":300'* ]]
}
