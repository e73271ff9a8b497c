#!/usr/bin/env bats
# tf-train --stream: records trained as they come (a followed file, a
# pipe, a FIFO), each exactly once across a kill -9 and a resume, and the
# model published as versions (--export-base, --export-every, --if-better).

bats_require_minimum_version 1.5.0
load helpers

teardown() {
	kill_quietly "${TPID:-}"
}

# breast_cancer.csv as records (569), their schema beside them.
cancer() {
	tf-csv2record -q -o all.tfrecord "$DATA/breast_cancer.csv"
}

# Records FROM to TO (0-based, TO excluded) of all.tfrecord on stdout;
# with a third argument, each written in two pieces and a pause every
# 50 records, as a slow writer would.
records() {
	/usr/bin/python3 - "$@" <<'PY'
import struct, sys, time
d, i, recs = open("all.tfrecord", "rb").read(), 0, []
while i < len(d):
    n = struct.unpack("<Q", d[i:i + 8])[0]
    recs.append(d[i:i + 16 + n])
    i += 16 + n
a, b = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout.buffer
for k, r in enumerate(recs[a:b]):
    if len(sys.argv) > 3:
        out.write(r[:7]); out.flush()
        time.sleep(0.002)
        out.write(r[7:]); out.flush()
        if k % 50 == 49:
            time.sleep(0.3)
    else:
        out.write(r)
out.flush()
PY
}

# A key's value on the last line of FILE that has it.
last() {
	grep "\"$1\"" "$2" | tail -1 | sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"
}

@test "a followed file trains each record once as it grows, half-written ones included, and publishes versions" {
	cancer
	: > grow.tfrecord
	cp all.tfrecord.schema.json grow.tfrecord.schema.json
	tf-train -q --stream --model lr -b 32 --checkpoint-dir ck \
		--export-base models --export-every 1 grow.tfrecord > out.json 2> err.txt &
	TPID=$!
	records 0 300 slow >> grow.tfrecord
	sleep 2
	records 300 569 slow >> grow.tfrecord
	sleep 2
	kill -TERM "$TPID"
	st=0
	wait "$TPID" || st=$?
	TPID=
	[ "$st" -eq 143 ]
	grep -q 'SIGTERM: stopped at a checkpoint' err.txt
	[ "$(last examples_total out.json)" = 569 ]
	# versions 1, 2, ... each whole, each a line
	n=$(grep -c '"exported":true' out.json)
	[ "$n" -ge 3 ]
	[ "$(ls models | sort -n | tail -1)" = "$n" ]
	for v in models/*; do [ -s "$v/model.json" ] && [ -s "$v/manifest.json" ]; done
	# the newest version is the last checkpoint, and it predicts
	[ "$(grep '"exported"' out.json | tail -1 | sed 's/.*"step":\([0-9]*\).*/\1/')" = "$(last step out.json)" ]
	run tf-eval -d "models/$n" all.tfrecord
	[ "$status" -eq 0 ]
	[[ "$output" == *'"examples":569'* ]]
}

@test "a pipe: a trickle trains in partial batches, the run ends when the writer closes it" {
	cancer
	records 0 569 slow | tf-train -q --stream --model lr -b 64 \
		--schema all.tfrecord.schema.json --checkpoint-dir ck > out.json 2> err.txt
	[ "$(last examples_total out.json)" = 569 ]
	grep -q '"final":true' out.json
	# pauses between records made batches of fewer than 64 rows: more
	# steps than 569 / 64 rounded up
	[ "$(last step out.json)" -gt 9 ]
	! grep -q 'standard input held' err.txt
}

@test "a FIFO is read until its writer closes it" {
	cancer
	mkfifo fifo
	(records 0 200 slow > fifo) &
	run tf-train -q --stream --model lr -b 32 --schema all.tfrecord.schema.json \
		--checkpoint-dir ck fifo
	[ "$status" -eq 0 ]
	[[ "$output" == *'"examples_total":200'* ]]
}

@test "kill -9 and a restart on a followed file: every record trained exactly once by the model" {
	cancer
	records 0 200 > grow.tfrecord
	cp all.tfrecord.schema.json grow.tfrecord.schema.json
	tf-train -q --stream --model lr -b 32 --save-every 2 --checkpoint-dir ck \
		grow.tfrecord > out1.json 2> err1.txt &
	TPID=$!
	sleep 1.5
	records 200 400 >> grow.tfrecord
	sleep 1.5
	kill -9 "$TPID"
	wait "$TPID" || true
	TPID=
	grep -q model.ckpt- ck/checkpoint
	records 400 569 >> grow.tfrecord
	tf-train -q --stream --model lr -b 32 --save-every 2 --checkpoint-dir ck \
		grow.tfrecord > out2.json 2> err2.txt &
	TPID=$!
	sleep 2
	kill -TERM "$TPID"
	wait "$TPID" || true
	TPID=
	[ "$(last examples_total out2.json)" = 569 ]
}

@test "--if-better: a stream's model worse on validation than the newest version is not published" {
	cancer
	# version 1: a model trained well, its validation loss recorded
	tf-train -q --model lr -e 30 -b 16 --learning-rate 0.05 --validate all.tfrecord \
		--checkpoint-dir good all.tfrecord > /dev/null
	tf-export -d good --export-base models > /dev/null
	[ -d models/1 ]
	# a stream of 40 records trains a far worse one
	records 0 40 | tf-train -q --stream --model lr -b 32 --learning-rate 0.0001 \
		--schema all.tfrecord.schema.json --validate all.tfrecord \
		--checkpoint-dir ck --export-base models --if-better loss > out.json
	grep -q '"exported":false' out.json
	grep -q '"reason":"loss .* is worse than version 1' out.json
	[ "$(ls models)" = 1 ]
	# with no --if-better it is published
	records 40 80 | tf-train -q --stream --model lr -b 32 \
		--schema all.tfrecord.schema.json --checkpoint-dir ck --export-base models > out2.json
	grep -q '"version":2' out2.json
	[ -s models/2/model.json ]
}

@test "--stream and --export-base refuse what they cannot do, status 64" {
	cancer
	run tf-train --stream --model lr all.tfrecord all.tfrecord
	[ "$status" -eq 64 ]
	[[ "$output" == *'--stream reads one input'* ]]
	run tf-train --model lr --checkpoint-dir ck --export-base m --if-better loss all.tfrecord
	[ "$status" -eq 64 ]
	[[ "$output" == *'give --validate FILE'* ]]
	run tf-train --model lr --checkpoint-dir ck --export-base m --validate all.tfrecord \
		--if-better speed all.tfrecord
	[ "$status" -eq 64 ]
	[[ "$output" == *"unknown metric 'speed'"* ]]
	run tf-train --model lr --export-base m all.tfrecord
	[ "$status" -eq 64 ]
	[[ "$output" == *'give --checkpoint-dir'* ]]
	run tf-train --model lr --if-better loss all.tfrecord
	[ "$status" -eq 64 ]
	[[ "$output" == *'newest version of --export-base'* ]]
	# standard input as a stream needs its schema
	run bash -c 'tf-train --stream --model lr < all.tfrecord'
	[ "$status" -eq 64 ]
	[[ "$output" == *'name their schema with --schema'* ]]
	[ ! -e m ]
}

@test "a run that is not a stream publishes as it trains and at its end" {
	cancer
	run tf-train -q --model lr -e 3 --checkpoint-dir ck --export-base models all.tfrecord
	[ "$status" -eq 0 ]
	[[ "$output" == *'"exported":true'* ]]
	[ -s models/1/model.json ]
	[ "$(ls models)" = 1 ]
}

@test "tf-csv2record --stream: each row out as it comes, the same records a whole conversion writes" {
	cancer
	# a row is out while the writer still holds the pipe open
	(head -3 "$DATA/breast_cancer.csv"; sleep 4) |
		tf-csv2record -q --stream --types-from all.tfrecord.schema.json |
		{ head -c 100 > /dev/null; date +%s.%N > t1; cat > /dev/null; } &
	s=$(date +%s.%N)
	wait
	/usr/bin/python3 -c "import sys; d = float(sys.argv[2]) - float(sys.argv[1]); assert d < 2, d" "$s" "$(cat t1)"
	# byte for byte the records of the whole file's conversion
	tf-csv2record -q --stream --types-from all.tfrecord.schema.json \
		< "$DATA/breast_cancer.csv" > streamed.tfrecord
	cmp streamed.tfrecord all.tfrecord
}

@test "two commands from a CSV stream to a trained, published model" {
	cancer
	(head -1 "$DATA/breast_cancer.csv"
	 tail -n +2 "$DATA/breast_cancer.csv" | while IFS= read -r l; do echo "$l"; sleep 0.001; done) |
		tf-csv2record -q --stream --types-from all.tfrecord.schema.json |
		tf-train -q --stream --model lr -b 32 --schema all.tfrecord.schema.json \
			--checkpoint-dir ck --export-base models --export-every 0.5 > out.json
	[ "$(last examples_total out.json)" = 569 ]
	grep -q '"exported":true' out.json
	[ -s models/1/model.json ]
}

@test "tf-csv2record --stream refuses files, shards and untyped columns" {
	cancer
	run tf-csv2record --stream --types-from all.tfrecord.schema.json -o x.tfrecord "$DATA/breast_cancer.csv"
	[ "$status" -eq 64 ]
	[[ "$output" == *'standard output or a FIFO'* ]]
	[ ! -e x.tfrecord ]
	run --separate-stderr tf-csv2record --stream "$DATA/breast_cancer.csv"
	[ "$status" -eq 64 ]
	[[ "$stderr" == *"column 'mean_radius' needs its type"* ]]
	run tf-csv2record --stream --types-from nosuch.json "$DATA/breast_cancer.csv"
	[ "$status" -eq 66 ]
	echo '{"a":1}' > bad.json
	run tf-csv2record --stream --types-from bad.json "$DATA/breast_cancer.csv"
	[ "$status" -eq 65 ]
	run tf-csv2record --types x:int64 --types-from all.tfrecord.schema.json "$DATA/breast_cancer.csv"
	[ "$status" -eq 64 ]
}
