#!/usr/bin/env bats
# tf-train: training, checkpoints and exact resume, bad input.

bats_require_minimum_version 1.5.0
load helpers

# A test that started tf-serve (start_server) and failed before it
# stopped it leaves nothing running.
teardown() {
	kill_quietly "${SPID:-}"
}

# breast_cancer split as the reference figures split it: test rows are
# those with index % 5 == 4 (shard 4 of a round-robin split into 5).
split_bc() {
	tf-csv2record "$DATA/breast_cancer.csv" -o bc.tfrecord
	tf-records split -n 5 -o bc bc.tfrecord
	TRAIN="bc-00000-of-00005 bc-00001-of-00005 bc-00002-of-00005 bc-00003-of-00005"
	TEST=bc-00004-of-00005
}

@test "-h and --help print the same usage on stdout" {
	run -0 --separate-stderr tf-train --help
	[[ "$output" == Usage:* ]]
	[ -z "$stderr" ]
	help=$output
	run -0 tf-train -h
	[ "$output" = "$help" ]
}

@test "--version names the command and the library" {
	run -0 tf-train --version
	[[ "$output" =~ ^tf-train\ [0-9]+\.[0-9]+\.[0-9]+\ \(libtfcore ]]
}

@test "the man page documents exactly the options --help lists" {
	diff <(help_options tf-train) <(man_options tf-train)
}

@test "--list-plugins shows the built-in ops and optimizers and where from" {
	run -0 tf-train --list-plugins
	[[ "$output" == *"optimizer  adam "*"/adam.so"* ]]
	[[ "$output" == *"op         dense "* ]]
	[[ "$output" == *"searched:"* ]]
}

@test "trains a dnn on breast_cancer; tf-eval on the test rows agrees" {
	split_bc
	run -0 --separate-stderr tf-train -q --schema bc.tfrecord.schema.json \
		--epochs 40 --batch-size 32 --learning-rate 0.003 --checkpoint-dir ck $TRAIN
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 1 ]
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["final"] is True and j["step"] == 40 * 15, j
for k in ("examples", "loss", "accuracy", "auc", "learning_rate", "examples_per_sec", "checkpoint"):
    assert k in j, k
assert j["checkpoint"] == "ck/model.ckpt-600", j' "$output"
	[ -e ck/model.ckpt-600 ]
	grep -q '^model_checkpoint_path: "model.ckpt-600"$' ck/checkpoint
	run -0 tf-eval --checkpoint-dir ck $TEST
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["examples"] == 113 and j["accuracy"] >= 0.95 and j["auc"] >= 0.98, j' "$output"
}

@test "resume: 30 steps, then 30 more, equals 60 in one run" {
	split_bc
	args="-q --schema bc.tfrecord.schema.json --model lr --batch-size 16 --shuffle-buffer 100 --seed 7 --epochs 0"
	tf-train $args --max-steps 60 --checkpoint-dir one $TRAIN > one.json
	tf-train $args --max-steps 30 --checkpoint-dir two $TRAIN > /dev/null
	tf-train $args --max-steps 60 --checkpoint-dir two $TRAIN > two.json
	same_state one/model.ckpt-60 two/model.ckpt-60
	grep -q '"step":60' two.json
	# a run at its --max-steps already trains nothing, and says so
	run -64 --separate-stderr tf-train $args --max-steps 60 --checkpoint-dir two $TRAIN
	[ "$stderr" = "tf-train: the model is at step 60 already: --max-steps 60 leaves nothing to train (raise it)" ]
	[ -z "$output" ]
	# resuming with another input order is allowed, and said
	run -0 --separate-stderr tf-train $args --batch-size 8 --seed 3 --max-steps 70 --checkpoint-dir two $TRAIN
	[[ "$stderr" == *"tf-train: note: two/model.ckpt-60 was trained with --seed 7 (now 3), --batch-size 16 (now 8): this run reads the data in another order than one uninterrupted run would"* ]]
	[[ "$output" == *'"step":70'* ]]
	# with batch norm (running averages) and dropout (random masks) too
	args="$args --model dnn --hidden 16,8 --enable-bn --dropout-keep-prob 0.8"
	tf-train $args --max-steps 40 --checkpoint-dir three $TRAIN > /dev/null
	tf-train $args --max-steps 25 --checkpoint-dir four $TRAIN > /dev/null
	tf-train $args --max-steps 40 --checkpoint-dir four $TRAIN > /dev/null
	same_state three/model.ckpt-40 four/model.ckpt-40
	args="-q --schema bc.tfrecord.schema.json --model lr --batch-size 16 --shuffle-buffer 100 --seed 7 --epochs 0"
	# the optimizer cannot change under a checkpoint
	run -64 --separate-stderr tf-train $args --optimizer sgd --max-steps 70 --checkpoint-dir two $TRAIN
	[[ "$stderr" == *"was trained with --optimizer adam, not sgd"* ]]
}

@test "the final line's metrics are the last epoch's rows, however its batches end" {
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	# 150 rows: a batch of 128 and one of 22 an epoch; the short one
	# ends its epoch (it was counted in the next one's line).  With a
	# learning rate too small to move the model, the line's loss and
	# accuracy are tf-eval's on the same rows.
	for b in 128 50 7; do
		rm -rf ck
		run -0 --separate-stderr tf-train -q -e 3 -b $b --optimizer sgd \
			--learning-rate 1e-30 -d ck iris.tfrecord
		[[ "$output" == *'"epoch":3,"examples_total":450,"examples":150,'* ]]
		train=$(grep -o '"loss":[^,]*,"accuracy":[^,]*' <<< "$output")
		run -0 tf-eval -d ck iris.tfrecord
		[[ "$output" == *"$train"* ]]
	done
}

@test "the dnn's layer settings given to lr are said to be unused; a run's own settings fed back as --config are not" {
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	run -0 --separate-stderr tf-train -q -e 4 --model lr --hidden 16 --dropout-keep-prob 0.5 -d a iris.tfrecord
	[[ "$stderr" == *"tf-train: note: --model lr is a linear model, with no hidden layers or embeddings: --hidden, --dropout-keep-prob are not used"* ]]
	run -0 --separate-stderr tf-train -q -e 4 --model lr --embedding-dim 4 -d b iris.tfrecord
	[[ "$stderr" == *"--embedding-dim is not used"* ]]
	# the same model as without them
	run -0 --separate-stderr tf-train -q -e 4 --model lr -d c iris.tfrecord
	[[ "$stderr" != *"not used"* ]]
	same_state a/model.ckpt-8 c/model.ckpt-8
	tf-train --model lr --print-config > lr.json
	grep -q '"hidden"' lr.json
	run -0 --separate-stderr tf-train -q -e 4 --config lr.json -d d iris.tfrecord
	[[ "$stderr" != *"not used"* ]]
	# a dnn uses them: nothing said
	run -0 --separate-stderr tf-train -q -e 4 --model dnn --hidden 16 -d e iris.tfrecord
	[[ "$stderr" != *"not used"* ]]
}

@test "-d DIR is --checkpoint-dir DIR, as in tf-eval, tf-export and tf-ps" {
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	tf-train -q -e 2 -b 30 -d ck iris.tfrecord > first.json
	[ -f ck/model.ckpt-10 ]
	grep -q '"step":10' first.json
	# a second run resumes there (two epochs more)
	tf-train -q -e 2 -b 30 -d ck iris.tfrecord > second.json
	grep -q '"step":20,"epoch":4' second.json
	run -0 tf-eval -d ck iris.tfrecord
	[[ "$output" == *'"examples":150'* ]]
	run -0 tf-export -d ck --export-base models
	[[ "$output" == *'"checkpoint":"ck/model.ckpt-20"'* ]]
	[ -f models/1/model.json ]
	run -0 tf-ps --help
	[[ "$output" == *"-d, --checkpoint-dir=DIR"* ]]
	run -64 --separate-stderr tf-train -q -d
	[[ "$stderr" == *"requires an argument -- 'd'"* ]]
}

@test "checkpoints: --save-every, --keep, --from-scratch" {
	split_bc
	tf-train -q --schema bc.tfrecord.schema.json --model lr --epochs 2 --batch-size 10 \
		--save-every 10 --keep 2 --checkpoint-dir ck $TRAIN > /dev/null
	# 46 steps an epoch: saves at 10, 20, ..., 90 and the end (92)
	[ "$(ls ck | grep -c '^model.ckpt-')" -eq 2 ]
	[ -e ck/model.ckpt-92 ] && [ -e ck/model.ckpt-90 ]
	[ "$(grep -c all_model_checkpoint_paths ck/checkpoint)" -eq 2 ]
	run -0 tf-train -q --schema bc.tfrecord.schema.json --model lr --epochs 1 \
		--batch-size 10 --from-scratch --checkpoint-dir ck $TRAIN
	[[ "$output" == *'"step":46'* ]]
}

@test "--steps-to-validate and --validate print JSON lines with validation metrics" {
	split_bc
	run -0 --separate-stderr tf-train -q --schema bc.tfrecord.schema.json --model lr --epochs 1 \
		--batch-size 10 --steps-to-validate 20 --validate $TEST $TRAIN
	[ "$stderr" = "tf-train: note: no --checkpoint-dir: the model this run trains is not kept" ]
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == '{"step":20,'*'"validation":{"examples":113,'* ]]
	[[ "${lines[2]}" == '{"final":true,"step":46,'* ]]
}

@test "--validate with a model whose tables are updated row by row (sparse ids; a categorical column's embedding under adagrad or ftrl): the validation metrics are tf-eval's on that file" {
	# (both stopped with a segmentation fault, a ps's pull asked for
	# without a ps)
	tf-csv2record -q -f libsvm -o hs.tfrecord "$DATA/heart_scale"
	awk 'BEGIN { print "color,size,label"; s = 3; for (i = 0; i < 400; i++) { s = (s * 69069 + 1) % 4294967296
		c = int(s / 65536) % 5; z = (s % 1000) / 100; print "c" c "," z "," ((c % 2 == 0 && z > 3) ? 1 : 0) } }' > cat.csv
	tf-csv2record -q cat.csv -o cat.tfrecord
	for m in "hs lr ftrl" "hs dnn adagrad" "cat wide_and_deep adagrad"; do
		set -- $m
		run -0 --separate-stderr tf-train -q --model $2 --optimizer $3 -e 3 --validate $1.tfrecord --checkpoint-dir ck-$2 $1.tfrecord
		got=$(jq -c '.validation | {examples, auc}' <<< "$output")
		want=$(tf-eval -d ck-$2 $1.tfrecord | jq -c '{examples, auc}')
		[ "$got" = "$want" ]
	done
}

@test "multiclass (iris) and regression (diabetes) tasks" {
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	run -0 tf-train -q --epochs 60 --batch-size 16 --learning-rate 0.01 \
		--checkpoint-dir ci iris.tfrecord
	run -0 tf-eval -d ci --confusion iris.tfrecord
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["task"] == "multiclass" and j["accuracy"] > 0.9 and len(j["confusion"]) == 3, j' "$output"
	# an integer target is a regression target only when told so
	tf-csv2record --label-type float "$DATA/diabetes_regression.csv" -o d.tfrecord
	run -0 tf-train -q --model lr --epochs 200 --batch-size 32 --optimizer sgd \
		--learning-rate 0.01 --checkpoint-dir cd d.tfrecord
	run -0 tf-eval -d cd d.tfrecord
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["task"] == "regression" and j["r2"] > 0.45, j
assert set(j) >= {"mse", "rmse", "mae", "r2", "loss", "examples"}, j' "$output"
}

@test "standard input is read once and kept for more epochs, with --schema or an inferred one" {
	split_bc
	# 569 records, 5 batches of 128 an epoch
	run -0 --separate-stderr sh -c "tf-train -q --model lr --schema bc.tfrecord.schema.json --epochs 5 --checkpoint-dir s < bc.tfrecord"
	[[ "$output" == *'"step":25,'* ]]
	[ -z "$stderr" ]
	run -0 --separate-stderr sh -c "tf-train -q --model lr --epochs 5 --checkpoint-dir a < bc.tfrecord"
	[[ "$output" == *'"step":25,'* ]]
	# the same model as from the file with the same schema
	tf-records schema --write bc.tfrecord
	run -0 tf-train -q --model lr --epochs 5 --checkpoint-dir b bc.tfrecord
	same_state a/model.ckpt-25 b/model.ckpt-25
	[[ "$stderr" == *"standard input has no schema: inferred from its first 569 records"* ]]
	: > empty.tfrecord
	run -65 --separate-stderr sh -c "tf-train -q < empty.tfrecord"
	[[ "$stderr" == *"no records to infer a schema from"* ]]
}

@test "a pipe named as an input (a shell's <(...), a FIFO) is read once and kept like standard input: every epoch, every validation" {
	split_bc
	tf-records schema --write bc.tfrecord
	run -0 tf-train -q --model lr --epochs 5 --checkpoint-dir f bc.tfrecord
	# inferred from the pipe's first records, which are kept: 5 epochs
	# of 569, the model the file gives (before: "no examples in the
	# input", and with --schema one epoch only)
	run -0 --separate-stderr tf-train -q --model lr --epochs 5 --checkpoint-dir p <(cat bc.tfrecord)
	[[ "$output" == *'"step":25,'* ]]
	[[ "$stderr" == *"/dev/fd/"*" has no schema: inferred from its first 569 records"* ]]
	same_state f/model.ckpt-25 p/model.ckpt-25
	mkfifo in.fifo
	cat bc.tfrecord > in.fifo &
	run -0 --separate-stderr tf-train -q --model lr --epochs 5 --schema bc.tfrecord.schema.json --checkpoint-dir q in.fifo
	[[ "$output" == *'"step":25,'* ]]
	same_state f/model.ckpt-25 q/model.ckpt-25
	# validation on a pipe: all its 113 records at each line (before:
	# 0 from the first check on)
	run -0 tf-train -q --model lr --epochs 5 --steps-to-validate 10 --validate <(cat bc-00004-of-00005) bc.tfrecord
	[ "$(grep -c '"validation":{"examples":113,' <<< "$output")" -eq 3 ]
	# one of more than 256 MiB is not kept whole: its second validation
	# stops the run rather than validate on a part
	for _ in $(seq 540); do cat bc.tfrecord; done > big.tfrecord
	run -64 --separate-stderr tf-train -q --model lr --epochs 5 --steps-to-validate 10 --validate <(cat big.tfrecord) bc.tfrecord
	[ "$(grep -c '"validation":{"examples":307260,' <<< "$output")" -eq 1 ]
	[[ "$stderr" == *"--validate: /dev/fd/"*" held more than 256 MiB of records and can be read once only: give a file" ]]
	rm big.tfrecord
	# --validate reading what training reads once: refused before either
	# is opened (before: validation on 0 records, or half records)
	run -64 --separate-stderr sh -c "tf-train -q --schema bc.tfrecord.schema.json --validate - < bc.tfrecord"
	[ "$stderr" = "tf-train: --validate -: standard input is also the training input, and it can be read once only: give a file for one of them" ]
	mkfifo v.fifo
	run -64 --separate-stderr timeout 20 tf-train -q --schema bc.tfrecord.schema.json --validate v.fifo ./v.fifo
	[ "$stderr" = "tf-train: --validate v.fifo: this pipe is also the training input, and it can be read once only: give a file for one of them" ]
	# two inputs read once cannot both be kept: refused, not half read
	run -64 --separate-stderr tf-train -q --schema bc.tfrecord.schema.json <(cat bc.tfrecord) <(cat bc.tfrecord)
	[[ "$stderr" == *"only one input can be standard input or a pipe (its records are kept to be read again); give files" ]]
}

@test "a second run on the same checkpoint directory exits 75" {
	split_bc
	mkdir ck
	flock ck/LOCK sleep 3 &
	sleep 0.5
	run -75 --separate-stderr tf-train -q --schema bc.tfrecord.schema.json --checkpoint-dir ck $TRAIN
	[ "$stderr" = "tf-train: ck: another tf-train is using it" ]
	wait
}

@test "a diverging loss stops the run with 70 and keeps the last checkpoint" {
	split_bc
	tf-train -q --schema bc.tfrecord.schema.json --model lr --max-steps 5 --epochs 0 \
		--optimizer sgd --checkpoint-dir ck $TRAIN > /dev/null
	run -70 --separate-stderr tf-train -q --schema bc.tfrecord.schema.json --model lr \
		--no-normalize --optimizer sgd --learning-rate 1e38 --epochs 1 --checkpoint-dir ck $TRAIN
	[[ "$stderr" == *"the loss is "*"stopping (the last checkpoint is kept"* ]]
	grep -q 'model_checkpoint_path: "model.ckpt-5"' ck/checkpoint
	[ "$(ls ck | grep -c '^model.ckpt-')" -eq 1 ]
}

@test "a standard output that cannot be written is exit 74, for every command" {
	split_bc
	mknod full c 1 7
	run -74 --separate-stderr sh -c "tf-train -q --epochs 1 --checkpoint-dir ck2 $TRAIN > full"
	[[ "$stderr" == *"tf-train: cannot write standard output: No space left on device" ]]
	# the checkpoint was written before the line was lost
	[ -e ck2/checkpoint ]
	for t in tf-csv2record tf-records tf-train tf-ps tf-eval tf-export tf-serve; do
		run -74 sh -c "$t --version > full"
		run -74 sh -c "$t --help > full"
	done
	run -74 sh -c "tf-csv2record $DATA/iris.csv > full"
	run -74 sh -c "tf-records count bc.tfrecord > full"
	run -74 sh -c "tf-eval -d ck2 bc.tfrecord > full"
}

@test "inputs are checked before the first step; a failure after it checkpoints first" {
	split_bc
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	# a missing or mismatched --validate: found before training, nothing written
	run -66 --separate-stderr tf-train -q --epochs 50 --validate nothere --checkpoint-dir ck $TRAIN
	[ "$stderr" = "tf-train: --validate: cannot open 'nothere': No such file or directory" ]
	[ ! -e ck/checkpoint ]
	run -65 --separate-stderr tf-train -q --epochs 50 --validate iris.tfrecord --checkpoint-dir ck $TRAIN
	[[ "$stderr" == "tf-train: --validate: iris.tfrecord: record 0: no feature 'area_error', one of the model's 30"* ]]
	[ ! -e ck/checkpoint ]
	# a --plugin-dir or --model-file that is not there
	run -66 --separate-stderr tf-train -q --plugin-dir nodir --checkpoint-dir ck $TRAIN
	[ "$stderr" = "tf-train: plugin directory 'nodir': No such file or directory" ]
	run -66 --separate-stderr tf-train -q --model-file no.spec --checkpoint-dir ck $TRAIN
	[ ! -e ck/checkpoint ]
	# a damaged record in the second file, met after steps have trained:
	# the checkpoint of the steps before it, then the error
	cp bc-00001-of-00005 dam.tfrecord
	flip_byte dam.tfrecord 30000
	run -65 --separate-stderr tf-train -q --epochs 1 --batch-size 16 --shuffle-buffer 16 \
		--checkpoint-dir ck bc-00000-of-00005 dam.tfrecord
	[[ "$stderr" =~ dam\.tfrecord:\ record\ [0-9]+:\ .*\ \(step\ ([0-9]+)\ is\ checkpointed\ in\ ck\)$ ]]
	step=${BASH_REMATCH[1]}
	[ "$step" -ge 7 ]
	grep -q "model_checkpoint_path: \"model.ckpt-$step\"" ck/checkpoint
	# the validation file gone by the end of training (the data comes
	# through a FIFO held open until it is removed): checkpointed first
	cp bc-00004-of-00005 val.tfrecord
	mkfifo in.fifo
	tf-train -q --epochs 1 --batch-size 16 --shuffle-buffer 16 --schema bc.tfrecord.schema.json \
		--validate val.tfrecord --checkpoint-dir ck2 in.fifo > out.json 2> err &
	pid=$!
	exec 4> in.fifo
	cat bc-00000-of-00005 >&4
	sleep 0.5
	rm val.tfrecord
	exec 4>&-
	st=0
	wait "$pid" || st=$?
	[ "$st" -eq 66 ]
	[[ "$(cat err)" == *"cannot open 'val.tfrecord'"*"(step "*" is checkpointed in ck2)" ]]
	grep -q 'model_checkpoint_path: "model.ckpt-' ck2/checkpoint
}

@test "a shuffle buffer that cannot fit is refused up front, naming its size and the flag; a million ids a row are sparse, and fit" {
	# 200 rows of libsvm data with ids below 4096: dense rows of as many
	/usr/bin/python3 -c '
import random
random.seed(1)
for i in range(200):
    print(i % 2, " ".join("%d:1" % j for j in sorted(random.sample(range(1, 4096), 20))))' > wide.svm
	tf-csv2record -f libsvm wide.svm -o wide.tfrecord
	run -64 --separate-stderr tf-train -q --model lr --epochs 1 --shuffle-buffer 1000000000 --checkpoint-dir ck wide.tfrecord
	[[ "$stderr" =~ ^tf-train:\ a\ shuffle\ buffer\ of\ 1000000000\ rows\ of\ 409[0-9]\ features\ needs\ 16[0-9]*\.0\ GB,\ more\ than\ half\ of\ the\ [0-9.]+\ GB\ this\ process\ may\ use:\ lower\ --shuffle-buffer\ \(at\ most\ [0-9]+\ rows\ fit\)$ ]]
	[ ! -e ck/checkpoint ]
	# ids up to 999,999, which once asked for 40 GB: a bag of 20 a row
	/usr/bin/python3 -c '
import random
random.seed(1)
for i in range(200):
    print(i % 2, " ".join("%d:1" % j for j in sorted(random.sample(range(1, 1000000), 20))))' > wider.svm
	tf-csv2record -f libsvm wider.svm -o wider.tfrecord
	run -0 tf-train -q --model lr --epochs 1 --checkpoint-dir ck wider.tfrecord
	[[ "$output" == *'"examples":200,'* ]]
}

@test "bad settings and bad input: a clear message and a sysexits code" {
	split_bc
	run -64 --separate-stderr tf-train --optimizer nope --schema bc.tfrecord.schema.json $TRAIN
	[ "$stderr" = "tf-train: unknown optimizer 'nope' (see --list-plugins)" ]
	run -64 --separate-stderr tf-train --model forest --schema bc.tfrecord.schema.json $TRAIN
	[ "$stderr" = "tf-train: unknown model 'forest' (lr, dnn, cnn, lstm, bidirectional_lstm, gru or wide_and_deep; a model of your own: --model-file SPEC)" ]
	run -64 --separate-stderr tf-train --hidden "10 x" --schema bc.tfrecord.schema.json $TRAIN
	[[ "$stderr" == *"--hidden: '10 x' is not a list of layer sizes"* ]]
	run -64 --separate-stderr tf-train --opt beta1=2 --schema bc.tfrecord.schema.json $TRAIN
	[[ "$stderr" == *"optimizer 'adam': needs 0 <= beta1, beta2 < 1"* ]]
	run -64 tf-train --learning-rate 0 $TRAIN
	run -64 tf-train --batch-size x $TRAIN
	run -64 tf-train --epochs 0 $TRAIN
	run -64 tf-train --task clustering $TRAIN
	run -66 --separate-stderr tf-train nothing.tfrecord
	[[ "$stderr" == *"cannot open 'nothing.tfrecord'"* ]]
	run -66 --separate-stderr tf-train --schema bc.tfrecord.schema.json nothing.tfrecord
	[[ "$stderr" == *"cannot open 'nothing.tfrecord'"* ]]
}

@test "a checkpoint of another model or a damaged one is refused and kept" {
	split_bc
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	tf-train -q --epochs 1 --checkpoint-dir ck iris.tfrecord > /dev/null
	run -65 --separate-stderr tf-train -q --checkpoint-dir ck --schema bc.tfrecord.schema.json $TRAIN
	[[ "$stderr" == *"is a checkpoint of another model: it takes 4 features and label 'label', the data (bc.tfrecord.schema.json) has 30"* ]]
	f=$(ls ck/model.ckpt-*)
	cp "$f" saved
	flip_byte "$f" 100
	run -65 --separate-stderr tf-train -q --checkpoint-dir ck iris.tfrecord
	[[ "$stderr" == *"corrupted record at"*"(remove it or use --from-scratch)"* ]]
	! cmp -s "$f" saved   # kept as it was, not overwritten
}

@test "the temporaries a killed run left in the checkpoint directory are removed by the next, which says so" {
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	tf-train -q --epochs 1 --batch-size 16 --checkpoint-dir ck iris.tfrecord > /dev/null
	echo half > ck/model.ckpt-9.tmp.AbC123
	echo half > ck/checkpoint.tmp.x1Y2z3
	echo mine > ck/notes.tmp.AbC123 # not a checkpoint's: kept
	run -0 --separate-stderr tf-train -q --epochs 1 --batch-size 16 --checkpoint-dir ck iris.tfrecord
	[[ "$stderr" == *"tf-train: ck: removed 2 temporaries a killed run left"* ]]
	[ ! -e ck/model.ckpt-9.tmp.AbC123 ] && [ ! -e ck/checkpoint.tmp.x1Y2z3 ]
	[ -e ck/notes.tmp.AbC123 ]
}

@test "a damaged latest checkpoint: named with the one before; --if-damaged previous resumes from that" {
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	tf-train -q --epochs 1 --batch-size 16 --checkpoint-dir ck iris.tfrecord > /dev/null
	first=$(ls ck/model.ckpt-*)
	cp -r ck ck-first   # the directory as it was before the second run
	tf-train -q --epochs 1 --batch-size 16 --checkpoint-dir ck iris.tfrecord > /dev/null
	latest=ck/$(sed -n 's/^model_checkpoint_path: "\(.*\)"$/\1/p' ck/checkpoint)
	[ "$latest" != "$first" ]
	# a damaged parameter block (the header still reads), then a damaged header
	for at in 2000 100; do
		cp "$latest" saved
		cp ck/checkpoint pointer
		flip_byte "$latest" $at
		run -65 --separate-stderr tf-train -q --epochs 1 --batch-size 16 --checkpoint-dir ck iris.tfrecord
		[[ "$stderr" == *"corrupted record at"*"($first, the one before, is whole: --if-damaged previous sets the damaged one aside and resumes from it; or --from-scratch)" ]]
		cmp -s ck/checkpoint pointer && ! cmp -s "$latest" saved  # nothing moved
		cp saved "$latest"
	done
	flip_byte "$latest" 100
	run -0 --separate-stderr tf-train -q --epochs 1 --batch-size 16 --checkpoint-dir ck \
		--if-damaged previous iris.tfrecord
	[[ "$stderr" == *"set aside as $latest.damaged, resuming from $first (--if-damaged previous)"* ]]
	[ -e "$latest.damaged" ] && ! grep -q "$(basename "$latest")\"" ck/checkpoint
	# the same model as a run resumed from the first checkpoint alone
	tf-train -q --epochs 1 --batch-size 16 --checkpoint-dir ck-first iris.tfrecord > /dev/null
	same_state "ck/$(sed -n 's/^model_checkpoint_path: "\(.*\)"$/\1/p' ck/checkpoint)" \
		"ck-first/$(sed -n 's/^model_checkpoint_path: "\(.*\)"$/\1/p' ck-first/checkpoint)"
	# no checkpoint before the damaged one: stop, whatever the flag
	rm -rf ck2 && mkdir ck2
	tf-train -q --epochs 1 --batch-size 16 --checkpoint-dir ck2 iris.tfrecord > /dev/null
	flip_byte ck2/model.ckpt-* 100
	run -65 --separate-stderr tf-train -q --checkpoint-dir ck2 --if-damaged previous iris.tfrecord
	[[ "$stderr" == *"(remove it or use --from-scratch)" ]]
	run -64 --separate-stderr tf-train -q --checkpoint-dir ck2 --if-damaged maybe iris.tfrecord
	[[ "$stderr" == *"--if-damaged: 'maybe' is neither stop nor previous"* ]]
}

@test "--enable-bn and --dropout-keep-prob build them into the dnn" {
	tf-csv2record "$DATA/breast_cancer.csv" -o bc.tfrecord
	run -0 tf-train -q --enable-bn --bn-epsilon 0.01 --dropout-keep-prob 0.9 --epochs 20 \
		--batch-size 32 --learning-rate 0.003 --checkpoint-dir ck bc.tfrecord
	grep -q 'batchnorm h1 epsilon=0.01' ck/model.ckpt-*
	grep -q 'dropout a1 keep=0.9' ck/model.ckpt-*
	run -0 tf-eval -d ck bc.tfrecord
	/usr/bin/python3 -c '
import json, sys
assert json.loads(sys.argv[1])["accuracy"] > 0.95' "$output"
	run -64 tf-train --dropout-keep-prob 0 bc.tfrecord
	run -64 tf-train --bn-epsilon -1 bc.tfrecord
}

@test "--logdir writes a TensorBoard event file that protobuf reads" {
	split_bc
	tf-train -q --schema bc.tfrecord.schema.json --model lr --epochs 1 --batch-size 10 \
		--steps-to-validate 20 --validate $TEST --logdir logs $TRAIN > /dev/null
	f=$(ls logs/events.out.tfevents.*)
	run -0 tf-records count "$f"
	[ "$output" = 7 ]
	mkdir pb
	protoc -I"$TOP/tests/proto" --python_out=pb "$TOP/tests/proto/event.proto"
	run -0 /usr/bin/python3 -c '
import sys
sys.path.insert(0, "pb")
sys.path.insert(0, sys.argv[2])
from pydecode import records
import event_pb2
evs = []
for data in records(sys.argv[1]):
    e = event_pb2.Event()
    e.ParseFromString(data)
    evs.append(e)
assert evs[0].file_version == "brain.Event:2"
steps = [e.step for e in evs[1:]]
assert steps == [20, 20, 40, 40, 46, 46], steps
tags = {v.tag for e in evs for v in e.summary.value}
assert {"train/loss", "train/auc", "validation/accuracy", "learning_rate"} <= tags, tags
print("ok")' "$f" "$TOP/tests/cli"
	[ "$output" = ok ]
}

@test "--config supplies settings, the command line wins, --print-config reads back" {
	split_bc
	cat > conf.json <<'JSON'
{"model": "dnn", "hidden": "12 6", "enable-bn": true, "opt": ["beta1=0.8"],
 "epochs": 3, "batch-size": 16, "schema": "bc.tfrecord.schema.json"}
JSON
	run -0 tf-train --config conf.json --epochs 2 --print-config
	/usr/bin/python3 -c '
import json, sys
c = json.loads(sys.argv[1])
assert c["model"] == "dnn" and c["hidden"] == "12 6" and c["enable-bn"] is True, c
assert c["epochs"] == 2 and c["batch-size"] == 16 and c["opt"] == ["beta1=0.8"], c' "$output"
	echo "$output" > resolved.json
	run -0 tf-train --config resolved.json --print-config
	[ "$output" = "$(cat resolved.json)" ]
	run -0 tf-train -q --config resolved.json --checkpoint-dir ck $TRAIN
	[[ "$output" == *'"step":58,'* ]]   # 2 epochs of 29 batches
	grep -q 'node n2 batchnorm h2' ck/model.ckpt-58
	echo '{"colour": "blue"}' > bad.json
	run -65 --separate-stderr tf-train --config bad.json
	[ "$stderr" = "tf-train: bad.json: unknown setting 'colour'" ]
	echo '{"epochs": ' > broken.json
	run -65 tf-train --config broken.json
	run -66 tf-train --config missing.json
}

@test "libsvm data (ids/values, labels -1/+1) trains as dense rows" {
	awk -F, 'NR > 1 { printf "%s", ($14 == 1 ? "+1" : "-1")
		for (i = 1; i <= 13; i++) if ($i != 0) printf " %d:%s", i, $i
		printf "\n" }' "$DATA/heart_scale.csv" > heart.svm
	tf-csv2record --format libsvm heart.svm -o heart.tfrecord
	run -0 tf-train -q --model lr --epochs 100 --batch-size 16 --learning-rate 0.01 \
		--checkpoint-dir ck heart.tfrecord
	run -0 tf-eval -d ck heart.tfrecord
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["task"] == "binary" and j["accuracy"] > 0.8 and j["auc"] > 0.88, j' "$output"
	# an index beyond the schema's max_index is a data error
	printf '+1 1:0.5 99:1\n' > wide.svm
	tf-csv2record --format libsvm --no-schema wide.svm -o wide.tfrecord
	run -65 --separate-stderr tf-eval -d ck wide.tfrecord
	[[ "$stderr" == *"wide.tfrecord: record 0: index 99 is beyond the schema's max_index 13"* ]]
}

@test "wide_and_deep learns an interaction of categorical features that lr cannot" {
	shapes_csv 3000 > shapes.csv
	tf-csv2record shapes.csv -o s.tfrecord
	tf-records split -n 5 -o s s.tfrecord
	cat s-0000[0-3]-of-00005 > train.tfrecord
	cp s.tfrecord.schema.json train.tfrecord.schema.json
	args="-q --epochs 30 --batch-size 32 --learning-rate 0.01 --validate s-00004-of-00005"
	run -0 tf-train $args --model wide_and_deep --crosses 'color*shape' \
		--hidden "16 8" --embedding-dim 4 --checkpoint-dir wd train.tfrecord
	wd=$output
	run -0 tf-train $args --model lr --checkpoint-dir lr train.tfrecord
	/usr/bin/python3 -c '
import json, sys
wd, lr = (json.loads(a.splitlines()[-1])["validation"] for a in sys.argv[1:3])
assert wd["accuracy"] > 0.95 and wd["auc"] > 0.98, wd
assert lr["accuracy"] < 0.7, lr' "$wd" "$output"
	# the spec: int64 ids (color, shape, their cross) beside the
	# floats; embeddings for the deep part, a linear part over ids and
	# crosses, summed
	f=wd/$(sed -n 's/^model_checkpoint_path: "\(.*\)"$/\1/p' wd/checkpoint)
	head -c 2000 "$f" | grep -a -q 'input ids 3 int64'
	head -c 2000 "$f" | grep -a -q 'node emb embedding ids begin=0 size=2 vocab=9 dim=4 combiner=concat'
	head -c 2000 "$f" | grep -a -q 'node wide_cross embedding ids begin=2 size=1 vocab=1000 dim=1 init=zeros'
	head -c 2000 "$f" | grep -a -q 'node logits add deep,wide_num,wide_cat,wide_cross'
	# evaluation, exports and resume know the categorical columns (and
	# a plain model on the same data ignores them)
	run -0 tf-eval -d wd s-00004-of-00005
	[[ "$output" == *'"examples":600,'* ]]
	for m in wd lr; do
		tf-export -d $m --export-base exp-$m > /dev/null
		[ "$(tf-eval -d exp-$m/1 s-00004-of-00005 | sed 's/"loss":[^,]*,//')" = \
			"$(tf-eval -d $m s-00004-of-00005 | sed 's/"loss":[^,]*,//')" ]
	done
	# a finished run resumed: one more pass, the 31st
	run -0 tf-train $args --model wide_and_deep --crosses 'color*shape' --epochs 1 \
		--checkpoint-dir wd train.tfrecord
	[[ "$output" == *'"epoch":31,'* ]]
}

@test "wide_and_deep hashes a categorical feature with too many values for a vocabulary" {
	shapes_csv 1500 | awk -F, 'NR == 1 { print "serial," $0; next } { print "s" NR "," $0 }' > serial.csv
	tf-csv2record serial.csv -o s.tfrecord
	# more than 1000 values: the schema keeps no vocabulary for it
	/usr/bin/python3 -c '
import json, sys
v = json.load(open("s.tfrecord.schema.json"))["vocabularies"]
assert v["serial"] is None and v["color"] == ["black", "blue", "green", "red"], v'
	run -0 tf-train -q --epochs 2 --model wide_and_deep --hash-buckets 500 --checkpoint-dir ck s.tfrecord
	f=ck/$(sed -n 's/^model_checkpoint_path: "\(.*\)"$/\1/p' ck/checkpoint)
	# colour 5 ids, shape 4, serial 500 buckets
	head -c 3000 "$f" | grep -a -q 'input ids 3 int64'
	head -c 3000 "$f" | grep -a -q 'node emb embedding ids begin=0 size=3 vocab=509 dim=8 combiner=concat'
	tf-export -d ck --export-base exp > /dev/null
	[ "$(tf-eval -d exp/1 s.tfrecord | sed 's/"loss":[^,]*,//')" = \
		"$(tf-eval -d ck s.tfrecord | sed 's/"loss":[^,]*,//')" ]
}

@test "wide_and_deep: bad crosses, crosses no model reads, and data without categorical features" {
	shapes_csv 50 > shapes.csv
	tf-csv2record shapes.csv -o s.tfrecord
	run -64 --separate-stderr tf-train -q --model wide_and_deep --crosses 'colour*shape' s.tfrecord
	[[ "$stderr" == *"cross 'colour*shape': expected A*B of two categorical (bytes) features"* ]]
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	run -64 --separate-stderr tf-train -q --model wide_and_deep iris.tfrecord
	[[ "$stderr" == *"wide_and_deep needs categorical features"* ]]
	run -64 --separate-stderr tf-train -q --model wide iris.tfrecord
	[[ "$stderr" == *"unknown model 'wide' (lr, dnn, cnn, lstm, bidirectional_lstm, gru or wide_and_deep; a model of your own: --model-file SPEC)"* ]]
	# crosses a model would not read are refused, not dropped
	run -64 --separate-stderr tf-train -q --model dnn --crosses 'color*shape' -d dnn s.tfrecord
	[ "$stderr" = "tf-train: --crosses 'color*shape': crosses go with --model wide_and_deep" ]
	[ ! -e dnn/checkpoint ]
	tf-csv2record -q -f libsvm "$DATA/heart_scale" -o hs.tfrecord
	run -64 --separate-stderr tf-train -q --sparse --model wide_and_deep --crosses 'a*b' hs.tfrecord
	[ "$stderr" = "tf-train: --crosses 'a*b': the data is sparse ids, with no categorical features to cross (wide_and_deep's wide part is a linear model of the ids)" ]
}

@test "file patterns: 'bc-0000[0-3]-*' stands for its shards, in name order" {
	split_bc
	args="-q --model lr --batch-size 16 --shuffle-buffer 100 --seed 7 --epochs 2"
	tf-train $args --checkpoint-dir named $TRAIN > named.json
	tf-train $args --checkpoint-dir pattern 'bc-0000[0-3]-of-00005' > pattern.json
	same_state named/model.ckpt-58 pattern/model.ckpt-58
	run -0 tf-eval -d pattern 'bc-*4-of-00005'
	[[ "$output" == *'"examples":113,'* ]]
	# the shards' schema is BASE.schema.json (split wrote bc.schema.json)
	run -0 --separate-stderr tf-train $args --checkpoint-dir b 'bc-00000-*'
	[ -z "$stderr" ]
	# without it, one inferred from the records, and said
	rm bc.schema.json
	run -0 --separate-stderr tf-train $args --checkpoint-dir c 'bc-00000-*'
	[[ "$stderr" == *"bc-00000-of-00005 has no schema: inferred from its first 114 records"* ]]
	run -66 --separate-stderr tf-train $args --checkpoint-dir d 'nothing-*'
	[ "$stderr" = "tf-train: nothing-*: no files match this pattern" ]
	run -66 --separate-stderr tf-eval -d pattern 'nothing-*'
	[ "$stderr" = "tf-eval: nothing-*: no files match this pattern" ]
	# a file whose name holds a pattern character is that file
	cp $TEST 'odd[1].tfrecord'
	cp bc.tfrecord.schema.json 'odd[1].tfrecord.schema.json'
	run -0 tf-eval -d pattern 'odd[1].tfrecord'
	[[ "$output" == *'"examples":113,'* ]]
}

@test "--print-config reports what a resumed run uses: the checkpoint's settings" {
	split_bc
	s="--schema bc.tfrecord.schema.json"
	tf-train -q $s --model lr --optimizer momentum --learning-rate 0.05 --batch-size 32 \
		--seed 4 --opt momentum=0.5 --max-steps 3 --epochs 0 --checkpoint-dir ck $TRAIN > /dev/null
	run -0 --separate-stderr tf-train --print-config --checkpoint-dir ck
	echo "$output" > c.json
	/usr/bin/python3 -c '
import json, sys
c = json.load(open("c.json"))
assert c["model"] == "lr" and c["optimizer"] == "momentum", c
assert c["learning-rate"] == 0.05 and c["batch-size"] == 32 and c["seed"] == 4, c
assert c["opt"] == ["momentum=0.5"], c'
	# fed back, the same settings, and the run continues from step 3
	run -0 tf-train --config c.json --print-config
	[ "$output" = "$(cat c.json)" ]
	run -0 tf-train -q --config c.json --max-steps 6 --epochs 0 $TRAIN
	[[ "$output" == *'"step":6,'* ]]
	# the checkpoint's provenance is what ran
	/usr/bin/python3 - ck/model.ckpt-6 <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[12:12 + n].split(b"\n", 1)[1])
c = h["config"]
assert c["optimizer"] == "momentum" and c["learning-rate"] == 0.05, c
assert c["max-steps"] == 6 and h["hparams"] == {"momentum": 0.5}, h
PY
	# what the checkpoint fixes cannot change under it
	run -64 --separate-stderr tf-train -q --model dnn --checkpoint-dir ck $TRAIN
	[[ "$stderr" == *"ck/model.ckpt-6 was trained with --model lr, not dnn (use --from-scratch to start over)"* ]]
	run -64 --separate-stderr tf-train -q --optimizer adam --checkpoint-dir ck $TRAIN
	[[ "$stderr" == *"was trained with --optimizer momentum, not adam"* ]]
}

@test "every --opt reaches the optimizer; one it does not take is 64 naming the keys" {
	split_bc
	s="-q --schema bc.tfrecord.schema.json --model lr --max-steps 2 --epochs 0"
	run -64 --separate-stderr tf-train $s --opt bogus=1 $TRAIN
	[ "$stderr" = "tf-train: --opt bogus: optimizer 'adam' takes beta1, beta2, epsilon" ]
	run -64 --separate-stderr tf-train $s --optimizer sgd --opt momentum=0.9 $TRAIN
	[ "$stderr" = "tf-train: --opt momentum: optimizer 'sgd' takes no settings" ]
	run -64 --separate-stderr tf-train $s --opt beta1 $TRAIN
	[[ "$stderr" == *"--opt: expected KEY=VALUE, got 'beta1'"* ]]
	run -0 tf-train $s --optimizer rmsprop --opt centered=1 --opt decay=0.8 --checkpoint-dir ck $TRAIN
	grep -aq '"hparams":{"centered":1.0,"decay":0.80000000000000004}' ck/model.ckpt-2
	grep -aq '"opt":\["centered=1","decay=0.8"\]' ck/model.ckpt-2
}

@test "the pipeline as named: tf-csv2record data.csv | tf-train, no schema file" {
	run -0 --separate-stderr sh -c "tf-csv2record '$DATA/breast_cancer.csv' | tf-train --checkpoint-dir ck"
	[[ "$stderr" == *"note: standard input has no schema: inferred from its first 569 records (30 features, label 'label', binary)"* ]]
	[[ "$output" == *'"final":true,'*'"examples":569,'* ]]
	[ -z "$(ls | grep schema)" ]
	# evaluation sees the same features, from the checkpoint
	tf-csv2record "$DATA/breast_cancer.csv" -o bc.tfrecord
	run -0 tf-eval -d ck bc.tfrecord
	[[ "$output" == *'"examples":569,'* ]]
}

# Records as another program writes them: Google's protobuf runtime,
# the packed layout's "features" list and an int64 "target".
python_records() {
	mkdir -p pb
	protoc -I"$TOP/tests/proto" --python_out=pb "$TOP/tests/proto/example.proto"
	/usr/bin/python3 - "$TOP/tests/cli" "$DATA/iris.csv" "$1" <<'PY'
import csv, struct, sys
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, "pb")
from pydecode import masked
import example_pb2
with open(sys.argv[3], "wb") as out:
    for row in list(csv.reader(open(sys.argv[2])))[1:]:
        ex = example_pb2.Example()
        ex.features.feature["features"].float_list.value.extend(float(v) for v in row[:-1])
        ex.features.feature["target"].int64_list.value.append(int(row[-1]))
        ex.features.feature["id"].bytes_list.value.append(b"r%d" % len(row))
        d = ex.SerializeToString()
        h = struct.pack("<Q", len(d))
        out.write(h + struct.pack("<I", masked(h)) + d + struct.pack("<I", masked(d)))
PY
}

@test "features a model cannot use are named; binary or all-different bytes are no category" {
	# records of images in a layout of their own (photo/encoded: JPEG bytes)
	mkdir -p pb
	protoc -I"$TOP/tests/proto" --python_out=pb "$TOP/tests/proto/example.proto"
	/usr/bin/python3 - "$TOP/tests/cli" <<'PY'
import random, struct, sys
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, "pb")
from pydecode import masked
import example_pb2
random.seed(3)
with open("img.tfrecord", "wb") as out:
    for i in range(60):
        ex = example_pb2.Example()
        f = ex.features.feature
        f["photo/encoded"].bytes_list.value.append(
            b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(random.randrange(256) for _ in range(200)))
        f["photo/format"].bytes_list.value.append(b"JPEG")
        f["photo/filename"].bytes_list.value.append(b"img%04d.jpg" % i)
        f["photo/height"].int64_list.value.append(random.choice([28, 32]))
        f["photo/width"].int64_list.value.append(28)
        f["photo/class/label"].int64_list.value.append(1 + i % 2)
        d = ex.SerializeToString()
        h = struct.pack("<Q", len(d))
        out.write(h + struct.pack("<I", masked(h)) + d + struct.pack("<I", masked(d)))
PY
	# (not the Inception layout, whose image/encoded tf-train decodes:
	# tf-img2record.bats)
	run -0 --separate-stderr tf-train -q --label photo/class/label --epochs 1 --checkpoint-dir ck img.tfrecord
	[[ "$stderr" == *"note: --model dnn does not use 3 bytes features: 'photo/encoded', 'photo/filename', 'photo/format' (categories train with --model wide_and_deep"* ]]
	# hashing JPEG bytes or file names as categories would train on noise
	run -65 --separate-stderr tf-train -q --label photo/class/label --model wide_and_deep --checkpoint-dir ck2 img.tfrecord
	[[ "$stderr" == *"tf-train: feature 'photo/encoded' holds binary data (an encoded image?): it is not a category (--exclude photo/encoded leaves it out)" ]]
	run -65 --separate-stderr tf-train -q --label photo/class/label --model wide_and_deep \
		--exclude photo/encoded --checkpoint-dir ck2 img.tfrecord
	[[ "$stderr" == *"tf-train: feature 'photo/filename' has a different value in every record (an identifier or free text?): it is not a category (--exclude photo/filename leaves it out)" ]]
	run -0 tf-train -q --label photo/class/label --model wide_and_deep --epochs 1 \
		--exclude photo/encoded,photo/filename --checkpoint-dir ck2 img.tfrecord
	# the same for a CSV column of serial numbers
	shapes_csv 100 | awk -F, 'NR == 1 { print "serial," $0; next } { print "s" NR "," $0 }' > serial.csv
	tf-csv2record serial.csv -o s.tfrecord
	run -65 --separate-stderr tf-train -q --model wide_and_deep --checkpoint-dir ck3 s.tfrecord
	[[ "$stderr" == *"feature 'serial' has a different value in every record"* ]]
}

@test "records from anywhere: a schema inferred from them, --label, schema --write" {
	python_records iris.tfrecord
	run -65 --separate-stderr tf-train -q --checkpoint-dir ck iris.tfrecord
	[[ "$stderr" == *"iris.tfrecord has no schema, and none could be inferred: the records have no feature 'label' (name the label with --label)"* ]]
	run -0 --separate-stderr tf-train -q --label target --epochs 60 --batch-size 16 \
		--learning-rate 0.01 --checkpoint-dir ck iris.tfrecord
	[[ "$stderr" == *"iris.tfrecord has no schema: inferred from its first 150 records (4 features, label 'target', multiclass)"* ]]
	run -0 tf-eval -d ck iris.tfrecord
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["examples"] == 150 and j["accuracy"] > 0.9, j' "$output"
	# a sidecar from every record; then no note
	run -0 tf-records schema --write --label target iris.tfrecord
	[ "$output" = "iris.tfrecord.schema.json: 150 records, 5 features, label 'target'" ]
	run -0 --separate-stderr tf-train -q --epochs 1 --checkpoint-dir ck2 iris.tfrecord
	# no note of a schema; one of the bytes feature it leaves out, one of
	# too little training
	[ "${stderr_lines[0]}" = "tf-train: note: --model dnn does not use 1 bytes feature: 'id' (categories train with --model wide_and_deep, or a --model-file spec with an ids input; --exclude leaves a feature out without this note)" ]
	[ "${stderr_lines[1]}" = "tf-train: note: only 2 steps of training (150 examples at --batch-size 128): a usable model wants more --epochs" ]
	[ "${#stderr_lines[@]}" -eq 2 ]
	run -64 --separate-stderr tf-records schema --write
	[[ "$stderr" == *"--write names files"* ]]
}

@test "--features and --exclude choose what trains; a checkpoint keeps the choice" {
	split_bc
	run -0 tf-train -q --schema bc.tfrecord.schema.json --model lr --epochs 2 \
		--features mean_radius,worst_area --checkpoint-dir ck $TRAIN
	grep -aq 'input x 2$' ck/model.ckpt-* || grep -aq 'input x 2\\n' ck/model.ckpt-*
	run -0 tf-eval -d ck $TEST
	[[ "$output" == *'"examples":113,'* ]]
	# resumed without the flag: the checkpoint's choice
	run -0 tf-train -q --schema bc.tfrecord.schema.json --epochs 3 --checkpoint-dir ck $TRAIN
	run -64 --separate-stderr tf-train -q --schema bc.tfrecord.schema.json \
		--features mean_radius --checkpoint-dir ck $TRAIN
	[[ "$stderr" == *"was trained with --features mean_radius,worst_area, not mean_radius"* ]]
	run -0 tf-train -q --schema bc.tfrecord.schema.json --model lr --epochs 1 \
		--exclude mean_radius,worst_area --checkpoint-dir ck2 $TRAIN
	grep -aq 'input x 28' ck2/model.ckpt-*
	run -64 --separate-stderr tf-train -q --schema bc.tfrecord.schema.json --exclude nope $TRAIN
	[ "$stderr" = "tf-train: --exclude: no feature 'nope' in the schema" ]
}

@test "cron: each run trains --epochs passes of its data; a stopped run goes on as one" {
	split_bc
	s="-q --schema bc.tfrecord.schema.json --model lr --batch-size 32 --checkpoint-dir ck"
	# 456 training rows: 15 steps an epoch; the test rows are "new data"
	run -0 tf-train $s --epochs 2 $TRAIN
	[[ "$output" == *'"step":30,'* ]]
	cp bc.tfrecord.schema.json new.tfrecord.schema.json
	cp $TEST new.tfrecord
	run -0 tf-train $s --epochs 2 new.tfrecord   # 113 rows: 4 steps an epoch
	# the final line's training metrics: the last epoch's 113 examples
	# and the rest of the batch it began in (not the run's 226)
	[[ "$output" =~ \"step\":38,.*\"epoch\":4,.*\"examples\":([0-9]+), ]]
	[ "${BASH_REMATCH[1]}" -ge 113 ] && [ "${BASH_REMATCH[1]}" -lt 145 ]
	# the same command again: a finished run, so another two passes
	run -0 tf-train $s --epochs 2 new.tfrecord
	[[ "$output" == *'"step":46,'* ]]
	# no steps left under --max-steps: said, and non-zero
	run -64 --separate-stderr tf-train $s --epochs 2 --max-steps 46 new.tfrecord
	[[ "$stderr" == *"the model is at step 46 already"* ]]
}

@test "SIGTERM checkpoints where the run stands; started again it ends as one run" {
	split_bc
	s="-q --schema bc.tfrecord.schema.json --model dnn --hidden 64,32 --batch-size 8 --epochs 600 --seed 5"
	tf-train $s --checkpoint-dir whole $TRAIN > /dev/null
	tf-train $s --save-every 500 --checkpoint-dir part $TRAIN > /dev/null 2> err &
	pid=$!
	# under way: its first periodic checkpoint is there
	for i in $(seq 200); do
		[ -e part/checkpoint ] && break
		sleep 0.05
	done
	kill -TERM $pid
	st=0
	wait $pid || st=$?
	[ "$st" -eq 143 ]
	grep -q "SIGTERM: stopped at a checkpoint" err
	step=$(sed -n 's/^model_checkpoint_path: "model.ckpt-\([0-9]*\)"/\1/p' part/checkpoint)
	[ "$step" -gt 0 ] && [ "$step" -lt 34200 ]
	run -0 tf-train $s --save-every 500 --checkpoint-dir part $TRAIN
	[[ "$output" == *'"step":34200,'* ]]
	same_state whole/model.ckpt-34200 part/model.ckpt-34200
}

@test "progress on a terminal: steps, examples, epoch of epochs, loss; one line per pipeline" {
	tf-csv2record "$DATA/breast_cancer.csv" -o bc.tfrecord
	script -qec "tf-csv2record '$DATA/breast_cancer.csv' | tf-train --model dnn --batch-size 8 --epochs 300 --checkpoint-dir ck" /dev/null > tty.txt
	grep -aq 'tf-train: step [0-9]*, [0-9]* examples, [0-9]* examples/s, epoch [0-9]* of 300, loss ' tty.txt
	# the upstream command of the pipe keeps quiet
	! grep -aq 'tf-csv2record: [0-9]* rows' tty.txt
	# the progress line is cleared before the JSON line
	/usr/bin/python3 -c '
t = open("tty.txt", "rb").read()
i = t.index(b"{\"final\":true")
assert t[:i].endswith(b"\r\x1b[K") or t[:i].endswith(b"\n"), t[i - 40:i]'
	# no terminal: nothing but the notes and the JSON line
	run -0 --separate-stderr tf-train --epochs 2 --checkpoint-dir ck2 bc.tfrecord
	[ -z "$stderr" ]
}

@test "nothing to train on is an error: a header-only CSV's records" {
	printf 'a,b,label\n' > head.csv
	tf-csv2record head.csv -o head.tfrecord
	run -65 --separate-stderr tf-train -q --checkpoint-dir ck head.tfrecord
	[ "$stderr" = "tf-train: no examples in the input: nothing to train" ]
	[ ! -e ck/checkpoint ]
	# a filter of the same file stays a quiet success
	run -0 --separate-stderr tf-records cat head.tfrecord
	[ -z "$output" ] && [ -z "$stderr" ]
}

@test "labels 1..K are K classes (no unused class 0); an unknown one is 65 naming the record" {
	awk -F, 'NR > 1 { $NF = $NF + 1 } { print }' OFS=, "$DATA/wine.csv" > wine1.csv
	tf-csv2record wine1.csv -o wine1.tfrecord
	run -0 jq -c .label.classes wine1.tfrecord.schema.json
	[ "$output" = "[1,2,3]" ]
	tf-train -q --epochs 30 --batch-size 16 --checkpoint-dir ck1 wine1.tfrecord > /dev/null
	run -0 tf-eval -d ck1 wine1.tfrecord
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["task"] == "multiclass" and j["accuracy"] > 0.9, j' "$output"
	run -0 tf-eval -d ck1 --predict wine1.tfrecord
	[ "$(printf '%s\n' "${lines[@]}" | jq -r '.probabilities | length' | sort -u)" = 3 ]
	[ "$(printf '%s\n' "${lines[@]}" | jq -r .classes | sort -u | tr '\n' ' ')" = "1 2 3 " ]
	[ "$(printf '%s\n' "${lines[0]}" | jq -r .classes)" = 1 ]
	# the same data as 0..K-1 gives the same model, bit for bit
	tf-csv2record "$DATA/wine.csv" -o wine0.tfrecord
	tf-train -q --epochs 30 --batch-size 16 --checkpoint-dir ck0 wine0.tfrecord > /dev/null
	diff <(tf-eval -d ck0 --predict wine0.tfrecord | jq -c .probabilities) \
		<(tf-eval -d ck1 --predict wine1.tfrecord | jq -c .probabilities)
	# a label that is no class: 65, naming the file and the record
	{ head -n 3 wine1.csv; head -n 2 wine1.csv | tail -n 1 | awk -F, '{ $NF = 7; print }' OFS=,; } |
		tf-csv2record --no-schema -o seven.tfrecord
	run -65 --separate-stderr tf-train -q --checkpoint-dir ck1 seven.tfrecord
	[[ "$stderr" == *"seven.tfrecord: record 2: label 'label' is 7, not one of the model's classes (1 to 3)"* ]]
}

@test "--model-file: a spec of the user's trains, resumes, and is checked line by line" {
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	cat > tanh.spec <<'S'
# two tanh layers; widths from the schema, outputs from the task
input x
node h1 dense x units=16
node a1 tanh h1
node h2 dense a1 units=8
node a2 tanh h2
node logits dense a2 units=outputs
S
	run -0 tf-train -q --model-file tanh.spec --epochs 60 --batch-size 16 --checkpoint-dir ck iris.tfrecord
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1].splitlines()[-1])
s = j["settings"]
assert s["model"] == "custom" and s["model-file"] == "tanh.spec", s
assert "hidden" not in s and "enable-bn" not in s, s' "$output"
	run -0 tf-eval -d ck iris.tfrecord
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["task"] == "multiclass" and j["accuracy"] > 0.9, j' "$output"
	# the checkpoint holds the spec made whole: widths and outputs filled
	grep -aq 'input x 4' ck/model.ckpt-600
	grep -aq 'node logits dense a2 units=3' ck/model.ckpt-600
	# resumed without the flag, or with the same spec: it goes on
	run -0 tf-train -q --epochs 1 --batch-size 16 --checkpoint-dir ck iris.tfrecord
	[[ "${lines[-1]}" == *'"step":610,'* ]]
	run -0 tf-train -q --model-file tanh.spec --epochs 1 --batch-size 16 --checkpoint-dir ck iris.tfrecord
	[[ "${lines[-1]}" == *'"step":620,'* ]]
	# another spec, or a built-in model, over it: refused
	sed 's/units=16/units=17/' tanh.spec > other.spec
	run -64 --separate-stderr tf-train --model-file other.spec --checkpoint-dir ck iris.tfrecord
	[[ "$stderr" == *"was trained with another model than other.spec (use --from-scratch to start over)" ]]
	run -64 --separate-stderr tf-train --model dnn --checkpoint-dir ck iris.tfrecord
	[[ "$stderr" == *"was trained with --model custom, not dnn (use --from-scratch to start over)" ]]
	# flags of the built-in models do not go with a spec
	run -64 --separate-stderr tf-train --model-file tanh.spec --hidden 8 iris.tfrecord
	[ "$stderr" = "tf-train: --hidden does not go with --model-file (the spec says the layers)" ]
	run -64 --separate-stderr tf-train --model-file tanh.spec --model lr iris.tfrecord
	[ "$stderr" = "tf-train: --model-file is a model of its own: it goes without --model lr" ]
	run -66 --separate-stderr tf-train --model-file nothing.spec iris.tfrecord
	[ "$stderr" = "tf-train: cannot open nothing.spec: No such file or directory" ]
	# bad specs: 65, naming the file and the line
	sed 's/^input x$/input x 7/' tanh.spec > wide.spec
	run -65 --separate-stderr tf-train --model-file wide.spec iris.tfrecord
	[ "$stderr" = "tf-train: wide.spec:2: input 'x' is 7 in the spec (7 values a row), 4 in the data (a width comes from the schema; a shape HxWxC must hold as many)" ]
	sed 's/dense a1 units=8/dense b1 units=8/' tanh.spec > undeclared.spec
	run -65 --separate-stderr tf-train --model-file undeclared.spec iris.tfrecord
	[ "$stderr" = "tf-train: undeclared.spec: model line 5: node 'h2': input 'b1' is not declared above it" ]
	sed 's/ tanh / swish /' tanh.spec > unknown.spec
	run -65 --separate-stderr tf-train --model-file unknown.spec iris.tfrecord
	[ "$stderr" = "tf-train: unknown.spec: node 'a1': unknown op 'swish' (see --list-plugins)" ]
	sed 's/units=outputs/units=2/' tanh.spec > two.spec
	run -65 --separate-stderr tf-train --model-file two.spec iris.tfrecord
	[ "$stderr" = "tf-train: two.spec: node 'logits' has 2 outputs; the multiclass task needs 3 (units=outputs)" ]
	grep -v logits tanh.spec > nologits.spec
	run -65 --separate-stderr tf-train --model-file nologits.spec iris.tfrecord
	[[ "$stderr" == "tf-train: nologits.spec: no node 'logits'"* ]]
	printf 'loss l\n' >> nologits.spec
	run -65 --separate-stderr tf-train --model-file nologits.spec iris.tfrecord
	[[ "$stderr" == "tf-train: nologits.spec:7: the loss is tf-train's"* ]]
	# a dtype word is not a width
	sed 's/^input x$/input x float32/' tanh.spec > typed.spec
	run -0 tf-train -q --model-file typed.spec --epochs 1 iris.tfrecord
	printf 'input y\n' > y.spec
	run -65 --separate-stderr tf-train --model-file y.spec iris.tfrecord
	[[ "$stderr" == "tf-train: y.spec:1: input 'y': tf-train feeds x"* ]]
	# a row's shape: iris's 4 features as 2x2 (kept in the checkpoint's
	# spec); one that does not hold them is refused, naming both
	sed 's/^input x$/input x 2x2/' tanh.spec > shaped.spec
	run -0 tf-train -q --model-file shaped.spec --epochs 1 --checkpoint-dir ck-shaped iris.tfrecord
	head -c 2000 ck-shaped/model.ckpt-* | grep -a -q 'input x 2x2'
	sed 's/^input x$/input x 2x3/' tanh.spec > badshape.spec
	run -65 --separate-stderr tf-train --model-file badshape.spec --checkpoint-dir ck-bad iris.tfrecord
	[[ "$stderr" == "tf-train: badshape.spec:"*": input 'x' is 2x3 in the spec (6 values a row), 4 in the data"* ]]
}

@test "resume seeks: a checkpoint names the shuffle buffer's records, so the records before them are not read again" {
	split_bc
	args="-q --schema bc.tfrecord.schema.json --model lr --batch-size 16 --shuffle-buffer 10 --seed 7 --epochs 1"
	tf-train $args --checkpoint-dir one $TRAIN > one.json
	tf-train $args --max-steps 20 --checkpoint-dir two $TRAIN > /dev/null
	# the checkpoint holds the reader's place and the buffer's 10 records
	/usr/bin/python3 - two/model.ckpt-20 <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[12:12 + n].split(b"\n", 1)[1])
s = h["input_state"]
assert s["shuffle"] == 10 and len(s["buffer"]) == 3 * 10, s
assert s["reading"] and s["file"] >= 2, s
PY
	# damage the first record of the first file (same size and time):
	# replaying the epoch would stop there; seeking never reads it
	cp -p bc-00000-of-00005 keep
	printf '\377' | dd of=bc-00000-of-00005 bs=1 seek=20 conv=notrunc status=none
	touch -r keep bc-00000-of-00005
	run -65 tf-records verify bc-00000-of-00005
	run -0 --separate-stderr tf-train $args --checkpoint-dir two $TRAIN
	[[ "$stderr" != *corrupt* ]]
	same_state one/model.ckpt-29 two/model.ckpt-29
	# a compressed input cannot seek: its resume replays, as exactly
	cp keep bc-00000-of-00005
	for f in $TRAIN; do gzip -c "$f" > "$f.gz"; done
	tf-train $args --checkpoint-dir three bc-0000[0-3]-of-00005.gz > /dev/null
	tf-train $args --max-steps 20 --checkpoint-dir four bc-0000[0-3]-of-00005.gz > /dev/null
	/usr/bin/python3 - four/model.ckpt-20 <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
assert "input_state" not in json.loads(b[12:12 + n].split(b"\n", 1)[1])
PY
	tf-train $args --checkpoint-dir four bc-0000[0-3]-of-00005.gz > /dev/null
	same_state three/model.ckpt-29 four/model.ckpt-29
}

@test "--threads 2 splits each batch in parts two threads take: repeatable for its seed whichever thread ran which part, resumes exactly, learns as well" {
	split_bc
	args="-q --schema bc.tfrecord.schema.json --batch-size 32 --seed 3 --epochs 0 --model dnn --hidden 16,8 --enable-bn --dropout-keep-prob 0.8"
	tf-train $args -j 2 --max-steps 60 --checkpoint-dir a $TRAIN > /dev/null
	tf-train $args -j 2 --max-steps 60 --checkpoint-dir b $TRAIN > /dev/null
	same_state a/model.ckpt-60 b/model.ckpt-60
	# both threads on one CPU: the parts fall to the threads otherwise
	taskset -c 0 tf-train $args -j 2 --max-steps 60 --checkpoint-dir t1 $TRAIN > /dev/null
	same_state a/model.ckpt-60 t1/model.ckpt-60
	tf-train $args -j 2 --max-steps 25 --checkpoint-dir c $TRAIN > /dev/null
	tf-train $args -j 2 --max-steps 60 --checkpoint-dir c $TRAIN > /dev/null
	same_state a/model.ckpt-60 c/model.ckpt-60
	# two halves are not one batch: another thread count, another model
	tf-train $args -j 1 --max-steps 60 --checkpoint-dir d $TRAIN > /dev/null
	run ! same_state a/model.ckpt-60 d/model.ckpt-60
	# as accurate on the held-out rows (a batch of 3 rows splits 2 + 1)
	args="-q --schema bc.tfrecord.schema.json --epochs 30 --batch-size 35"
	tf-train $args -j 2 --checkpoint-dir e $TRAIN > /dev/null
	tf-train $args -j 1 --checkpoint-dir f $TRAIN > /dev/null
	for ck in e f; do
		tf-eval -d $ck "$TEST" > $ck.json
		/usr/bin/python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["accuracy"] >= 0.95, sys.argv[1]' $ck.json
	done
}

@test "resume seeks exactly from any step: epoch ends, read-ahead across epochs, buffers of 1 to more than the data" {
	split_bc
	for sb in 1 7 50 1000; do
		args="-q --schema bc.tfrecord.schema.json --model lr --batch-size 16 --shuffle-buffer $sb --seed 7 --epochs 3"
		rm -rf whole
		tf-train $args --checkpoint-dir whole $TRAIN > /dev/null
		# 455 rows: 29 steps an epoch; stop before, at and after its ends
		for s in 1 27 28 29 30 57 58 86; do
			rm -rf part
			tf-train $args --max-steps $s --checkpoint-dir part $TRAIN > /dev/null
			tf-train $args --checkpoint-dir part $TRAIN > /dev/null 2>&1
			same_state whole/model.ckpt-87 part/model.ckpt-87 || { echo "buffer $sb, step $s"; return 1; }
		done
	done
}

@test "--device: cpu is the default's model; a GPU that is not there is exit 69 saying why; bad names and maths are usage errors" {
	split_bc
	args="-q --schema bc.tfrecord.schema.json --batch-size 32 --seed 5 --epochs 0 --max-steps 30 --enable-bn --dropout-keep-prob 0.8"
	tf-train $args --checkpoint-dir a $TRAIN > /dev/null
	tf-train $args --device cpu --gpu-math fp32 --checkpoint-dir b $TRAIN > /dev/null
	same_state a/model.ckpt-30 b/model.ckpt-30
	# the device is this run's: a resume elsewhere goes on from the same state
	tf-train $args --print-config $TRAIN | grep -q '"device": "cpu"'
	run --separate-stderr tf-train $args --device cuda --checkpoint-dir g $TRAIN
	if [ "$status" -eq 0 ]; then
		skip "a GPU is here: tests/gpu compares its training with the CPU's"
	fi
	[ "$status" -eq 69 ]
	echo "$stderr"
	[[ "$stderr" == "tf-train: --device cuda: "* ]]
	[[ "$stderr" =~ CUDA|GPU ]]
	[ ! -e g/checkpoint ]
	run -64 --separate-stderr tf-train $args --device tpu $TRAIN
	[[ "$stderr" == *"'tpu' is not a device (cpu, cuda or cuda:N)"* ]]
	run -64 --separate-stderr tf-train $args --device cuda:x $TRAIN
	[[ "$stderr" == *"a GPU is cuda:N"* ]]
	run -64 --separate-stderr tf-train $args --gpu-math tf32 $TRAIN
	[[ "$stderr" == *"the CPU multiplies in fp32"* ]]
	run -64 --separate-stderr tf-train $args --device cuda --gpu-math fp16 $TRAIN
	[[ "$stderr" == *"'fp16' is not a GPU math"* ]]
}

# The device path without a GPU: build/tests/fake-gpu.so stands in for
# the CUDA module, running the CPU kernels on memory that faults when the
# host touches it while a kernel that used it is still queued.
@test "--device cuda through the device module (a CPU stand-in whose memory, as cudaMalloc's, is out of the host's reach): the CPU's model bit for bit, every optimizer, resumed; evaluated and served alike; a missing kernel runs on the CPU, named" {
	export TFKIT_CUDA_MODULE="$TFKIT_BUILD/tests/fake-gpu.so"
	split_bc
	args="-q --schema bc.tfrecord.schema.json --batch-size 32 --seed 9 --epochs 0 --enable-bn --dropout-keep-prob 0.8"
	for opt in adam sgd momentum adagrad rmsprop adadelta ftrl; do
		tf-train $args --max-steps 40 --optimizer $opt --checkpoint-dir c-$opt $TRAIN > /dev/null
		tf-train $args --max-steps 40 --optimizer $opt --device cuda --checkpoint-dir g-$opt $TRAIN > /dev/null
		same_state c-$opt/model.ckpt-40 g-$opt/model.ckpt-40
	done
	# l2 on the host, between the device's passes (a note says so)
	tf-train $args --max-steps 40 --l2 0.01 --checkpoint-dir c-l2 $TRAIN > /dev/null
	run -0 --separate-stderr tf-train $args --max-steps 40 --l2 0.01 --device cuda --checkpoint-dir g-l2 $TRAIN
	[[ "$stderr" == *"--l1 and --l2 are added to the gradients on the host"* ]]
	same_state c-l2/model.ckpt-40 g-l2/model.ckpt-40
	# resumed on the other device: the same run
	tf-train $args --max-steps 20 --device cuda --checkpoint-dir r $TRAIN > /dev/null
	tf-train $args --max-steps 40 --checkpoint-dir r $TRAIN > /dev/null
	same_state c-adam/model.ckpt-40 r/model.ckpt-40
	tf-eval -d c-adam "$TEST" > cpu.json
	tf-eval -d c-adam --device cuda "$TEST" > gpu.json
	cmp cpu.json gpu.json
	tf-export -d g-adam --export-base models > /dev/null
	tf-records head -n 5 --raw "$TEST" > five.tfrecord
	tf-serve --model-base models --stdin --stdin-format tfrecord < five.tfrecord > cpu.lines
	tf-serve --model-base models --device cuda --stdin --stdin-format tfrecord < five.tfrecord > gpu.lines
	cmp cpu.lines gpu.lines
	[ "$(wc -l < gpu.lines)" = 5 ]
	# a device without the update kernel: the CPU's, after a sync, said
	run -0 --separate-stderr env FAKE_GPU_NO=update tf-train $args --max-steps 40 --device cuda --checkpoint-dir f $TRAIN
	# said after the first step, as a warning, not only at the end
	[ "${stderr_lines[0]}" = "tf-train: warning: cuda:0 (fake GPU): from the first step these run on the CPU (no kernel on the device), their tensors crossing the bus each step: update" ]
	[[ "$stderr" != *"these ran on the CPU"* ]]
	same_state c-adam/model.ckpt-40 f/model.ckpt-40
	# without the matrix product: its arguments' memory copied to the
	# host and back; L1/L2 and a ps exchange likewise go through copies
	run -0 --separate-stderr env FAKE_GPU_NO=gemm tf-train $args --max-steps 40 --device cuda --checkpoint-dir fg $TRAIN
	[[ "${stderr_lines[0]}" == *"from the first step these run on the CPU"*": gemm" ]]
	same_state c-adam/model.ckpt-40 fg/model.ckpt-40
	tf-train $args --max-steps 40 --l1 0.001 --l2 0.01 --checkpoint-dir l-cpu $TRAIN > /dev/null 2>&1
	tf-train $args --max-steps 40 --l1 0.001 --l2 0.01 --device cuda --checkpoint-dir l-gpu $TRAIN > /dev/null 2>&1
	same_state l-cpu/model.ckpt-40 l-gpu/model.ckpt-40
	# the test program of make check-gpu, against the stand-in
	if [ -x "$TFKIT_BUILD/tests/gpu/test_train" ]; then
		run -0 "$TFKIT_BUILD/tests/gpu/test_train"
		[[ "$output" == *"ok 1 - every_optimizer_trains_alike"*"ok 2 - gpu_weights_predict_on_the_cpu"* ]]
		[[ "$output" != *"not ok"* ]]
	fi
	run -64 --separate-stderr tf-train $args --max-steps 40 --device cuda -j 2 --checkpoint-dir t $TRAIN
	[[ "$stderr" == *"on --device cuda the GPU takes the whole batch"* ]]
	run -69 --separate-stderr tf-train $args --max-steps 40 --device cuda:1 --checkpoint-dir t $TRAIN
	[[ "$stderr" == *"no CUDA GPU 1"* ]]
}

# digits split as the reference figures split it: test rows i % 5 == 4.
split_digits() {
	tf-csv2record "$DATA/digits.csv" -o digits.tfrecord
	tf-records split -n 5 -o dg digits.tfrecord
	DTRAIN="dg-00000-of-00005 dg-00001-of-00005 dg-00002-of-00005 dg-00003-of-00005"
	DTEST=dg-00004-of-00005
}

@test "--model cnn reads each row as an image: digits 8x8x1 to 0.97 on the held-out rows, served as tf-eval predicts" {
	split_digits
	args="-q --schema digits.tfrecord.schema.json --model cnn --conv 32,64 --hidden 64 --batch-size 32 --epochs 20"
	tf-train $args --input-shape 8x8x1 --checkpoint-dir ck $DTRAIN > train.json
	grep -q '"input-shape":"8x8x1","conv":"32,64"' train.json
	tf-eval -d ck "$DTEST" > eval.json
	/usr/bin/python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["accuracy"]
assert a >= 0.97, a' eval.json
	# without --input-shape: a square of one channel, the same model
	tf-train $args --epochs 1 --checkpoint-dir sq $DTRAIN > /dev/null
	tf-train $args --epochs 1 --input-shape 8x8 --checkpoint-dir sq1 $DTRAIN > /dev/null
	same_state sq/model.ckpt-45 sq1/model.ckpt-45
	# the export keeps the image's shape: its predictions are tf-eval's
	tf-export -d ck --export-base models > /dev/null
	grep -q 'input x 8x8x1' models/1/model.json
	tf-eval -d ck --predict "$DTEST" > want.jsonl
	tf-serve --model-base models --stdin --stdin-format tfrecord < "$DTEST" > got.jsonl
	cmp want.jsonl got.jsonl
}

@test "share/examples/inception.spec: an Inception module (four branches, channels joined by concat) learns the digits and serves as tf-eval predicts" {
	split_digits
	tf-train -q --schema digits.tfrecord.schema.json --model-file "$TOP/share/examples/inception.spec" \
		--batch-size 32 --epochs 20 --checkpoint-dir ck $DTRAIN > train.json
	grep -q '"model":"custom","model-file":"'"$TOP"'/share/examples/inception.spec"' train.json
	tf-eval -d ck "$DTEST" > eval.json
	/usr/bin/python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["accuracy"]
assert a >= 0.95, a' eval.json
	tf-export -d ck --export-base models > /dev/null
	grep -q 'node mixed concat b1_a,b3_a,b5_a,bp_a' models/1/model.json
	tf-eval -d ck --predict "$DTEST" > want.jsonl
	tf-serve --model-base models --stdin --stdin-format tfrecord < "$DTEST" > got.jsonl
	cmp want.jsonl got.jsonl
}

@test "--model cnn: repeatable, resumes exactly (batch norm of channels, dropout), -j 2 learns; shapes that do not fit are usage errors naming them" {
	split_digits
	args="-q --schema digits.tfrecord.schema.json --model cnn --conv 8,16 --hidden 32 --batch-size 32 --seed 4 --epochs 0 --dropout-keep-prob 0.9 --enable-bn"
	tf-train $args --max-steps 40 --checkpoint-dir a $DTRAIN > /dev/null
	tf-train $args --max-steps 40 --checkpoint-dir b $DTRAIN > /dev/null
	same_state a/model.ckpt-40 b/model.ckpt-40
	tf-train $args --max-steps 15 --checkpoint-dir c $DTRAIN > /dev/null
	tf-train $args --max-steps 40 --checkpoint-dir c $DTRAIN > /dev/null
	same_state a/model.ckpt-40 c/model.ckpt-40
	tf-train $args -j 2 --max-steps 40 --checkpoint-dir j $DTRAIN > /dev/null
	tf-train $args -j 2 --max-steps 40 --checkpoint-dir k $DTRAIN > /dev/null
	same_state j/model.ckpt-40 k/model.ckpt-40
	tf-train -q --schema digits.tfrecord.schema.json --model cnn --conv 16 --hidden 32 -j 2 --epochs 15 --checkpoint-dir e $DTRAIN > /dev/null
	tf-eval -d e "$DTEST" > e.json
	/usr/bin/python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["accuracy"]
assert a >= 0.95, a' e.json
	run -64 tf-train -q --model cnn --input-shape 8x8x2 --checkpoint-dir x $DTRAIN
	[[ "$output" == *"--input-shape 8x8x2 holds 128 values; the data's rows have 64"* ]]
	run -64 tf-train -q --model cnn --input-shape 8by8 --checkpoint-dir x $DTRAIN
	[[ "$output" == *"'8by8' is not an image shape"* ]]
	run -64 tf-train -q --model cnn --conv "16 x" --checkpoint-dir x $DTRAIN
	[[ "$output" == *"--conv: '16 x' is not a list of filter counts"* ]]
	run -64 tf-train -q --model dnn --input-shape 8x8x1 --checkpoint-dir x $DTRAIN
	[[ "$output" == *"--input-shape goes with --model cnn, lstm, bidirectional_lstm or gru, not dnn"* ]]
	# a spec of the user's whose window does not fit names node and shapes
	printf 'input x 8x8x1\nnode c conv2d x filters=4 kernel=3 stride=2 padding=valid\nnode d conv2d c filters=4 kernel=5 padding=valid\nnode f flatten d\nnode logits dense f units=outputs\n' > bad.spec
	run -65 tf-train -q --model-file bad.spec --checkpoint-dir x $DTRAIN
	[[ "$output" == *"node 'd'"*"a 5x5 window does not fit its 3x3x4 input (padding=valid)"* ]]
	[ ! -e x/checkpoint ]
}

# The order task: sequences of 20 tokens of 10 in which A (0) and B (1)
# each occur once, label 1 iff A comes before B, one-hot (20 x 10 values
# a row); and the same tokens counted, without their order.
order_task() {
	/usr/bin/python3 - <<'PY'
import random
random.seed(11)
seq = open("order.csv", "w")
bag = open("bag.csv", "w")
seq.write(",".join("t%d_%d" % (t, v) for t in range(20) for v in range(10)) + ",label\n")
bag.write(",".join("n%d" % v for v in range(10)) + ",label\n")
for i in range(3000):
    toks = [random.randrange(2, 10) for _ in range(20)]
    a, b = random.sample(range(20), 2)
    toks[a], toks[b] = 0, 1
    y = int(a < b)
    seq.write(",".join("1" if toks[t] == v else "0" for t in range(20) for v in range(10)) + ",%d\n" % y)
    bag.write(",".join(str(toks.count(v)) for v in range(10)) + ",%d\n" % y)
PY
	tf-csv2record order.csv -o order.tfrecord
	tf-records split -n 5 -o o order.tfrecord
	tf-csv2record bag.csv -o bag.tfrecord
	tf-records split -n 5 -o b bag.tfrecord
}

@test "--model lstm, gru, bidirectional_lstm: the order of tokens learnt (0.95) where their counts are at chance; digits 8x8 to 0.95; resumes exactly" {
	order_task
	for m in lstm gru bidirectional_lstm; do
		tf-train -q --model $m --input-shape 20x10 --rnn-units 32 --hidden 16 --epochs 15 \
			--batch-size 32 --learning-rate 0.005 --checkpoint-dir $m 'o-0000[0-3]-of-00005' > $m.json
		tf-eval -d $m o-00004-of-00005 > $m.eval
		grep -q "\"model\":\"$m\",.*\"input-shape\":\"20x10\",\"rnn-units\":32" $m.json
	done
	tf-train -q --model dnn --hidden "32 16" --epochs 15 --batch-size 32 --learning-rate 0.005 \
		--checkpoint-dir bag 'b-0000[0-3]-of-00005' > /dev/null
	tf-eval -d bag b-00004-of-00005 > bag.eval
	/usr/bin/python3 -c '
import json
for m in ("lstm", "gru", "bidirectional_lstm"):
    a = json.load(open(m + ".eval"))
    assert a["examples"] == 600 and a["accuracy"] >= 0.95, (m, a)
b = json.load(open("bag.eval"))
assert b["accuracy"] < 0.6, b'
	split_digits
	tf-train -q --schema digits.tfrecord.schema.json --model lstm --input-shape 8x8 --hidden 32 \
		--epochs 20 --batch-size 32 --learning-rate 0.005 --checkpoint-dir dl $DTRAIN > /dev/null
	tf-eval -d dl "$DTEST" > dl.json
	/usr/bin/python3 -c '
import json
a = json.load(open("dl.json"))
assert a["accuracy"] >= 0.95, a'
	# exported as a model directory and served as tf-eval predicts
	# (ONNX: tf-export.bats)
	tf-export -d dl --export-base models > /dev/null
	tf-records head -n 5 --raw "$DTEST" > five.tfrecord
	tf-serve --model-base models --stdin --stdin-format tfrecord < five.tfrecord > served.lines
	tf-eval -d dl --predict five.tfrecord > eval.lines
	cmp served.lines eval.lines
	args="-q --schema digits.tfrecord.schema.json --model gru --input-shape 8x8 --rnn-units 16 --batch-size 32 --seed 2 --epochs 0"
	tf-train $args --max-steps 30 --checkpoint-dir a $DTRAIN > /dev/null
	tf-train $args --max-steps 12 --checkpoint-dir c $DTRAIN > /dev/null
	tf-train $args --max-steps 30 --checkpoint-dir c $DTRAIN > /dev/null
	same_state a/model.ckpt-30 c/model.ckpt-30
	# the device path (the fake GPU: the device's memory, its kernels'
	# slots): the CPU's model bit for bit; a cell kernel it lacks runs
	# on the CPU, named
	for m in gru bidirectional_lstm; do
		b="-q --schema digits.tfrecord.schema.json --model $m --input-shape 8x8 --rnn-units 8 --batch-size 32 --epochs 0 --max-steps 20"
		tf-train $b --checkpoint-dir cpu-$m $DTRAIN > /dev/null
		TFKIT_CUDA_MODULE="$TFKIT_BUILD/tests/fake-gpu.so" tf-train $b --device cuda --checkpoint-dir gpu-$m $DTRAIN > /dev/null
		same_state cpu-$m/model.ckpt-20 gpu-$m/model.ckpt-20
	done
	run -0 --separate-stderr env TFKIT_CUDA_MODULE="$TFKIT_BUILD/tests/fake-gpu.so" FAKE_GPU_NO=lstm_cell_grad \
		tf-train $b --device cuda --checkpoint-dir nogpu $DTRAIN
	[[ "${stderr_lines[0]}" == *"from the first step these run on the CPU"*": lstm_cell_grad" ]]
	same_state cpu-bidirectional_lstm/model.ckpt-20 nogpu/model.ckpt-20
	run -64 tf-train -q --model lstm --checkpoint-dir x $DTRAIN
	[[ "$output" == *"--model lstm reads each row as a sequence: say its steps and features with --input-shape TxF (the rows hold 64 values)"* ]]
	run -64 tf-train -q --model gru --input-shape 8x9 --checkpoint-dir x $DTRAIN
	[[ "$output" == *"--input-shape 8x9 holds 72 values; the data's rows have 64"* ]]
	run -64 tf-train -q --model dnn --rnn-units 8 --checkpoint-dir x $DTRAIN
	[[ "$output" == *"--rnn-units goes with --model lstm, bidirectional_lstm or gru, not dnn"* ]]
	# a sequence layer in a spec needs a sequence input
	printf 'input x 64\nnode r lstm x units=4\nnode logits dense r units=outputs\n' > flat.spec
	run -65 tf-train -q --model-file flat.spec --checkpoint-dir x $DTRAIN
	[[ "$output" == *"node 'r'"*"needs a sequence input (T x F: steps of features), not one of 1 dimension"* ]]
}

@test "--model gru --gru-reset-after false: the reset gate before the recurrent product learns the order task (0.95) and the digits (0.95), resumes exactly, the fake GPU bit for bit; the flag checked" {
	order_task
	tf-train -q --model gru --gru-reset-after false --input-shape 20x10 --rnn-units 32 --hidden 16 --epochs 15 \
		--batch-size 32 --learning-rate 0.005 --checkpoint-dir o 'o-0000[0-3]-of-00005' > o.json
	grep -q '"rnn-units":32,"gru-reset-after":false' o.json
	tf-eval -d o o-00004-of-00005 > o.eval
	# the checkpoint's spec: the layer's reset_after=0
	grep -aqr 'node rnn gru x units=32 reset_after=0' o/
	split_digits
	b="-q --schema digits.tfrecord.schema.json --model gru --gru-reset-after false --input-shape 8x8 --batch-size 32"
	tf-train $b --rnn-units 64 --hidden 32 --epochs 20 --learning-rate 0.005 --checkpoint-dir dg $DTRAIN > /dev/null
	tf-eval -d dg "$DTEST" > dg.eval
	/usr/bin/python3 -c '
import json
o, d = json.load(open("o.eval")), json.load(open("dg.eval"))
assert o["examples"] == 600 and o["accuracy"] >= 0.95, o
assert d["accuracy"] >= 0.95, d'
	# resumed: the uninterrupted run's state; the device path (the fake
	# GPU) the CPU's bit for bit, and a half it lacks run on the CPU
	b="$b --rnn-units 8 --seed 2 --epochs 0"
	tf-train $b --max-steps 30 --checkpoint-dir a $DTRAIN > /dev/null
	tf-train $b --max-steps 12 --checkpoint-dir c $DTRAIN > /dev/null
	tf-train $b --max-steps 30 --checkpoint-dir c $DTRAIN > /dev/null
	same_state a/model.ckpt-30 c/model.ckpt-30
	TFKIT_CUDA_MODULE="$TFKIT_BUILD/tests/fake-gpu.so" tf-train $b --max-steps 30 --device cuda --checkpoint-dir g $DTRAIN > /dev/null
	same_state a/model.ckpt-30 g/model.ckpt-30
	run -0 --separate-stderr env TFKIT_CUDA_MODULE="$TFKIT_BUILD/tests/fake-gpu.so" FAKE_GPU_NO=gru_new_grad \
		tf-train $b --max-steps 30 --device cuda --checkpoint-dir nogpu $DTRAIN
	[[ "${stderr_lines[0]}" == *"from the first step these run on the CPU"*": gru_new_grad" ]]
	same_state a/model.ckpt-30 nogpu/model.ckpt-30
	# the model's: another value resuming is a usage error; the flag
	# goes with gru alone and takes true or false
	run -64 --separate-stderr tf-train -q --model gru --gru-reset-after true --input-shape 8x8 --rnn-units 8 --max-steps 40 --checkpoint-dir a $DTRAIN
	[ "$stderr" = "tf-train: a/model.ckpt-30 was trained with --gru-reset-after false, not true (use --from-scratch to start over)" ]
	run -64 --separate-stderr tf-train -q --model lstm --gru-reset-after false --input-shape 8x8 --checkpoint-dir x $DTRAIN
	[ "$stderr" = "tf-train: --gru-reset-after goes with --model gru, not lstm" ]
	run -64 --separate-stderr tf-train -q --model gru --gru-reset-after no --input-shape 8x8 --checkpoint-dir x $DTRAIN
	[ "${stderr_lines[0]}" = "tf-train: --gru-reset-after takes true or false" ]
	[ ! -e x ]
}

# SequenceExamples of the order task, written by Google's protobuf.
sequence_examples() {
	protoc -I"$TOP/libtfcore/proto" --python_out=. example.proto
	/usr/bin/python3 "$TOP/tests/cli/mkseqex.py" . train.tfrecord 1 2000
	/usr/bin/python3 "$TOP/tests/cli/mkseqex.py" . test.tfrecord 2 400
}

@test "sequences of varying length: SequenceExamples another tool wrote train lstm, gru and bidirectional_lstm to 0.95 on the order task; predictions alike whatever the batch; the fake GPU bit for bit" {
	sequence_examples
	for m in lstm gru bidirectional_lstm; do
		run -0 --separate-stderr tf-train --model $m --rnn-units 16 --hidden 8 --epochs 4 --batch-size 32 \
			--learning-rate 0.01 --checkpoint-dir $m train.tfrecord
		# the schema inferred: the feature list a sequence of tokens
		[[ "$stderr" == *"train.tfrecord has no schema: inferred from its first 2000 records (1 feature and a sequence 'tokens' of up to 20 tokens, label 'label', binary)"* ]]
		tf-eval -d $m test.tfrecord > $m.eval
		# every row alone, and in batches of rows of other lengths
		tf-eval -d $m --predict --batch-size 1 test.tfrecord > one.lines
		tf-eval -d $m --predict --batch-size 100 test.tfrecord > many.lines
		cmp one.lines many.lines
	done
	/usr/bin/python3 -c '
import json
for m in ("lstm", "gru", "bidirectional_lstm"):
    a = json.load(open(m + ".eval"))
    assert a["examples"] == 400 and a["accuracy"] >= 0.95, (m, a)'
	# the same steps told in a schema to be up to 30 long: more padding,
	# the same predictions
	tf-records schema --write train.tfrecord > /dev/null
	sed 's/"max_length":20/"max_length":30/' train.tfrecord.schema.json > long.json
	grep -q '"max_length":30' long.json
	args="-q --model gru --rnn-units 8 --hidden 8 --epochs 1 --batch-size 32 --seed 3"
	tf-train $args --checkpoint-dir s20 train.tfrecord > /dev/null
	tf-train $args --schema long.json --checkpoint-dir s30 train.tfrecord > /dev/null
	tf-eval -d s20 --predict test.tfrecord > p20.lines
	tf-eval -d s30 --predict test.tfrecord > p30.lines
	/usr/bin/python3 -c '
import json
a = [json.loads(l)["probabilities"] for l in open("p20.lines")]
b = [json.loads(l)["probabilities"] for l in open("p30.lines")]
assert len(a) == len(b) == 400
assert max(abs(x - y) for p, q in zip(a, b) for x, y in zip(p, q)) < 1e-5'
	# the device path: the lengths read in the device memory
	for m in lstm bidirectional_lstm; do
		b="-q --model $m --rnn-units 8 --hidden 8 --batch-size 32 --epochs 0 --max-steps 20"
		tf-train $b --checkpoint-dir cpu-$m train.tfrecord > /dev/null
		TFKIT_CUDA_MODULE="$TFKIT_BUILD/tests/fake-gpu.so" tf-train $b --device cuda --checkpoint-dir gpu-$m train.tfrecord > /dev/null
		same_state cpu-$m/model.ckpt-20 gpu-$m/model.ckpt-20
	done
}

@test "a CSV of sessions is two commands from a trained model: tf-csv2record --sequence, tf-train gru; --max-length cuts and says so; the model's own" {
	sessions_csv sessions.csv 1 2000 20 user
	sessions_csv held.csv 2 400 20 user
	tf-csv2record -q --sequence pages sessions.csv -o sessions.tfrecord
	tf-csv2record -q --sequence pages held.csv -o held.tfrecord
	tf-train -q --model gru --rnn-units 16 --hidden 8 --epochs 4 --batch-size 32 --learning-rate 0.01 \
		--checkpoint-dir g sessions.tfrecord > g.json
	tf-eval -d g held.tfrecord > g.eval
	/usr/bin/python3 -c '
import json
a = json.load(open("g.eval"))
assert a["examples"] == 400 and a["accuracy"] >= 0.95, a'
	# 8 steps kept: said once, with how many were cut
	run -0 --separate-stderr tf-train --model gru --rnn-units 8 --hidden 8 --epochs 1 --max-length 8 \
		--checkpoint-dir m sessions.tfrecord
	n=$(/usr/bin/python3 -c '
import csv
print(sum(len(r["pages"].split()) > 8 for r in csv.DictReader(open("sessions.csv"))))')
	[ "$(grep -c 'max-length' <<< "$stderr")" = 1 ]
	[[ "$stderr" == *"note: $n sequences of 'pages' read had more than 8 steps: the first 8 of each were kept (--max-length)"* ]]
	grep -q '"max-length":8' <<< "$output"
	run -64 tf-train -q --model gru --max-length 9 --epochs 2 --checkpoint-dir m sessions.tfrecord
	[[ "$output" == *"was trained with --max-length 8, not 9"* ]]
	# a sequence of numbers, cut: it resumes on the same data
	printf 'xs,label\n1 2 3 4 5,1\n5 4,0\n0.5 1.5 2.5,1\n3 1 2 7 1 0,0\n' > nums.csv
	tf-csv2record -q --sequence xs nums.csv -o nums.tfrecord
	grep -q '"name":"xs","type":"float",.*"max_length":6,"step_width":1' nums.tfrecord.schema.json
	tf-train -q --model lstm --max-length 4 --rnn-units 4 --hidden 4 --epochs 2 --batch-size 2 --checkpoint-dir n nums.tfrecord > /dev/null
	tf-train -q --model lstm --max-length 4 --rnn-units 4 --hidden 4 --epochs 3 --batch-size 2 --checkpoint-dir n nums.tfrecord > n.json
	grep -q '"step":10,"epoch":5,' n.json
	run -64 tf-train -q --model dnn --checkpoint-dir x sessions.tfrecord
	[[ "$output" == *"'pages' is a sequence (up to 20 steps): --model lstm, bidirectional_lstm or gru reads it"*"--exclude pages leaves it out"* ]]
	run -64 tf-train -q --model lstm --input-shape 4x5 --checkpoint-dir x sessions.tfrecord
	[[ "$output" == *"--input-shape: the data's sequence 'pages' has its own steps"* ]]
	run -64 tf-train -q --model dnn --max-length 5 --checkpoint-dir x --exclude pages sessions.tfrecord
	[[ "$output" == *"--max-length: the data has no sequence"* ]]
	# a spec of one's own: the tokens' embedding, a gru reading the
	# length (id 20, after the 20 tokens), a dense layer
	printf 'input ids 21 int64\nnode e embedding ids vocab=8 dim=6 combiner=concat sequence=1 size=20\nnode r gru e,ids units=12 length=20\nnode logits dense r units=outputs\n' > my.spec
	tf-train -q --model-file my.spec --exclude user --epochs 4 --batch-size 32 --learning-rate 0.01 \
		--checkpoint-dir u sessions.tfrecord > /dev/null
	tf-eval -d u held.tfrecord > u.eval
	/usr/bin/python3 -c '
import json
a = json.load(open("u.eval"))
assert a["accuracy"] >= 0.95, a'
	# served: ragged lists of tokens as JSON, and the records, answer
	# as tf-eval predicts; the metadata says which input is a sequence
	tf-export -d g --export-base models > /dev/null
	/usr/bin/python3 -c '
import csv, json
for r in csv.DictReader(open("held.csv")):
    print(json.dumps({"user": int(r["user"]), "pages": r["pages"].split()}))' > held.json
	tf-serve --model-base models --stdin < held.json > served.lines
	tf-serve --model-base models --stdin --stdin-format tfrecord < held.tfrecord > served-rec.lines
	tf-eval -d g --predict held.tfrecord > eval.lines
	cmp served.lines eval.lines
	cmp served-rec.lines eval.lines
	/usr/bin/python3 -c '
import glob, json
sig = json.load(open(glob.glob("models/*/model.json")[0]))["signature"]
ins = {i["name"]: i for i in sig["inputs"]}
assert ins["pages"] == {"name": "pages", "dtype": "DT_STRING", "sequence": True, "max_length": 20, "step_width": 1}, ins
assert ins["user"]["dtype"] == "DT_INT64", ins'
	# over HTTP: the metadata's shape of the sequence [-1, -1], and a
	# request of ragged lists answered as tf-eval predicts
	start_server --model-base models --model-name s
	run -0 curl -s "$URL/v1/models/s/metadata"
	/usr/bin/python3 -c '
import json, sys
d = json.loads(sys.argv[1])["metadata"]["signature_def"]["signature_def"]["serving_default"]
p = d["inputs"]["pages"]
assert p["dtype"] == "DT_STRING" and [x["size"] for x in p["tensor_shape"]["dim"]] == ["-1", "-1"], p' "$output"
	head -n 3 held.json | /usr/bin/python3 -c '
import json, sys
print(json.dumps({"instances": [json.loads(l) for l in sys.stdin]}))' > req.json
	run -0 curl -s -d @req.json "$URL/v1/models/s:predict"
	/usr/bin/python3 -c '
import json, sys
got = [p["probabilities"] for p in json.loads(sys.argv[1])["predictions"]]
want = [json.loads(l)["probabilities"] for l in open("eval.lines")][:3]
assert len(got) == 3 and all(abs(a - b) < 1e-6 for g, w in zip(got, want) for a, b in zip(g, w)), (got, want)' "$output"
	stop_server
	run -65 --separate-stderr tf-serve --model-base models --stdin <<< '{"user": 1, "pages": "home buy"}'
	[[ "$stderr" == *"input 'pages' is a sequence: a list of its steps"* ]]
	run -65 --separate-stderr tf-serve --model-base models --stdin <<< '{"user": 1}'
	[[ "$stderr" == *"missing input 'pages' (a sequence)"* ]]
	# TensorFlow.js takes such a model of lstm layers (tf-export.bats
	# checks that export), not a gru: said
	run -65 tf-export -d g --format tfjs --output g-js
	[[ "$output" == *"op 'gru' (node 'rnn'): TensorFlow.js's GRU has no reset_after"* ]]
	[ ! -e g-js ]
}

@test "a SequenceExample whose steps disagree is a data error naming the file and record" {
	protoc -I"$TOP/libtfcore/proto" --python_out=. example.proto
	/usr/bin/python3 "$TOP/tests/cli/mkseqex.py" . bad.tfrecord 1 10 ragged
	run -65 tf-train -q --model lstm --checkpoint-dir x bad.tfrecord
	[[ "$output" == *"bad.tfrecord: record 3: "*"a feature list's steps hold different numbers of values"* ]]
	[ ! -e x/checkpoint ]
}
