#!/usr/bin/env bats
# tf-eval: metrics, tables, predictions, bad input.

bats_require_minimum_version 1.5.0
load helpers

# An iris model trained once for the whole file.
setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	tf-csv2record "$TFKIT_TOP/share/data/iris.csv" -o iris.tfrecord
	tf-train -q --epochs 40 --batch-size 16 --learning-rate 0.01 \
		--checkpoint-dir ck iris.tfrecord > /dev/null
}

setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
}

@test "-h and --help print the same usage on stdout" {
	run -0 --separate-stderr tf-eval --help
	[[ "$output" == Usage:* ]]
	[ -z "$stderr" ]
	help=$output
	run -0 tf-eval -h
	[ "$output" = "$help" ]
}

@test "--version names the command and the library" {
	run -0 tf-eval --version
	[[ "$output" =~ ^tf-eval\ [0-9]+\.[0-9]+\.[0-9]+\ \(libtfcore ]]
}

@test "the man page documents exactly the options --help lists" {
	diff <(help_options tf-eval) <(man_options tf-eval)
}

@test "one JSON object of metrics, the confusion matrix on request" {
	run -0 --separate-stderr tf-eval --checkpoint-dir ck --confusion iris.tfrecord
	[ -z "$stderr" ]
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["examples"] == 150 and j["task"] == "multiclass", j
assert j["accuracy"] > 0.9 and j["loss"] < 0.5, j
c = j["confusion"]
assert len(c) == 3 and sum(map(sum, c)) == 150 and [sum(r) for r in c] == [50, 50, 50], c
assert abs(sum(c[i][i] for i in range(3)) / 150 - j["accuracy"]) < 1e-9' "$output"
	# the checkpoint file names the same model
	f=$(sed -n 's/^model_checkpoint_path: "\(.*\)"$/\1/p' ck/checkpoint)
	run -0 tf-eval --checkpoint "ck/$f" iris.tfrecord
	[[ "$output" == *'"examples":150,'* ]]
}

@test "--human prints a table" {
	run -0 tf-eval -d ck --human iris.tfrecord
	[ "${lines[0]}" = "checkpoint ck/$(sed -n 's/^model_checkpoint_path: "\(.*\)"$/\1/p' ck/checkpoint)" ]
	[[ "${lines[1]}" == "examples   150" ]]
	[[ "$output" == *"confusion (rows: true class, columns: predicted)"* ]]
	[[ "$output" == *$'\n        |       0       1       2\n      0 |      '* ]]
	# classes named as the data spells them, the columns as wide as
	# the widest name
	printf 'a,b,label\n1,2,setosa\n2,3,versicolor\n3,1,virginica\n4,1,virginica\n' > named.csv
	tf-csv2record -q named.csv -o named.tfrecord
	tf-train -q -e 1 -d named named.tfrecord > /dev/null 2>&1
	run -0 tf-eval -d named --human named.tfrecord
	[[ "$output" == *$'\n           |     setosa versicolor  virginica\n    setosa |'* ]]
	[[ "$output" == *$'\n virginica |'* ]]
}

@test "--predict: one line per record, JSON or CSV, labels not needed" {
	run -0 tf-eval -d ck --predict iris.tfrecord
	[ "${#lines[@]}" -eq 150 ]
	[[ "${lines[0]}" == '{"probabilities":['*'],"class_ids":0,"classes":"0"}' ]]
	run -0 tf-eval -d ck --predict --csv iris.tfrecord
	[ "${lines[0]}" = "class,p_0,p_1,p_2" ]
	[ "${#lines[@]}" -eq 151 ]
	cut -d, -f1-4 "$TFKIT_TOP/share/data/iris.csv" | tf-csv2record --no-label > nolabel.tfrecord
	run -0 tf-eval -d ck --predict nolabel.tfrecord
	[ "${#lines[@]}" -eq 150 ]
	# the same classes whatever the batch size
	diff <(tf-eval -d ck -p -b 7 --csv iris.tfrecord | cut -d, -f1) \
		<(tf-eval -d ck -p --csv iris.tfrecord | cut -d, -f1)
	# evaluating needs the label
	run -65 --separate-stderr tf-eval -d ck nolabel.tfrecord
	[[ "$stderr" == *"nolabel.tfrecord: record 0: no label 'label'"* ]]
}

@test "--key passes a feature through with each prediction" {
	printf 'id,sepal_length,sepal_width,petal_length,petal_width\nrow-1,5.1,3.5,1.4,0.2\n"a, b",6.7,3.0,5.2,2.3\n' |
		tf-csv2record --no-label --types id:bytes > keyed.tfrecord
	run -0 tf-eval -d ck --predict --key id keyed.tfrecord
	[[ "${lines[0]}" == '{"id":"row-1","probabilities":['*'],"class_ids":0,"classes":"0"}' ]]
	[[ "${lines[1]}" == '{"id":"a, b","probabilities":['*'],"class_ids":2,"classes":"2"}' ]]
	run -0 tf-eval -d ck --predict --csv --key id keyed.tfrecord
	[ "${lines[0]}" = "id,class,p_0,p_1,p_2" ]
	[[ "${lines[2]}" == '"a, b",2,'* ]]
	# a key the records do not hold is an error, not empty strings
	run -65 --separate-stderr tf-eval -d ck --predict --key nothing keyed.tfrecord
	[[ "$stderr" == *"keyed.tfrecord: record 0: no feature 'nothing' to pass through (--key)"* ]]
	run -64 tf-eval -d ck --key id keyed.tfrecord
	# a key is passed whole or refused, never cut: one of 127 bytes
	# passes, one of 128 and a list of values name their record
	long=$(printf 'k%.0s' $(seq 127))
	printf 'id,sepal_length,sepal_width,petal_length,petal_width\n%s,5.1,3.5,1.4,0.2\n' $long |
		tf-csv2record --no-label --types id:bytes > long.tfrecord
	run -0 tf-eval -d ck --predict --key id long.tfrecord
	[[ "$output" == "{\"id\":\"$long\","* ]]
	printf 'id,sepal_length,sepal_width,petal_length,petal_width\n%s,5.1,3.5,1.4,0.2\n%sz,6.7,3.0,5.2,2.3\n' $long $long |
		tf-csv2record --no-label --types id:bytes > long.tfrecord
	run -65 --separate-stderr tf-eval -d ck --predict --key id long.tfrecord
	[ "$stderr" = "tf-eval: long.tfrecord: record 1: feature 'id' is 128 bytes long: --key passes one value of up to 127 bytes through" ]
	tf-csv2record -q -f libsvm "$TFKIT_TOP/share/data/heart_scale" -o hs.tfrecord
	tf-train -q --sparse --model lr -e 1 -d hs-ck hs.tfrecord > /dev/null 2>&1
	run -65 --separate-stderr tf-eval -d hs-ck --predict --key ids hs.tfrecord
	[ "$stderr" = "tf-eval: hs.tfrecord: record 0: feature 'ids' has 12 values: --key passes one value of up to 127 bytes through" ]
}

@test "binary metrics include an exact AUC" {
	tf-csv2record "$DATA/breast_cancer.csv" -o bc.tfrecord
	tf-train -q --model lr --epochs 50 --learning-rate 0.01 --checkpoint-dir cb bc.tfrecord > /dev/null
	run -0 tf-eval -d cb bc.tfrecord
	/usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["task"] == "binary" and j["auc"] > 0.98 and j["accuracy"] > 0.95, j' "$output"
}

@test "missing or damaged checkpoints, usage errors" {
	run -64 --separate-stderr tf-eval iris.tfrecord
	[[ "$stderr" == *"say which model: --checkpoint-dir DIR or --checkpoint FILE"* ]]
	run -64 tf-eval -d ck --csv iris.tfrecord
	run -64 tf-eval -d ck --batch-size 0 iris.tfrecord
	mkdir empty
	run -66 --separate-stderr tf-eval -d empty iris.tfrecord
	[[ "$stderr" == *"empty: no checkpoint"* ]]
	run -66 --separate-stderr tf-eval --checkpoint nothing iris.tfrecord
	[[ "$stderr" == *"cannot open 'nothing'"* ]]
	cp -r ck bad
	f=$(ls bad/model.ckpt-* | head -n 1)
	flip_byte "$f" 200
	run -65 --separate-stderr tf-eval --checkpoint "$f" iris.tfrecord
	[[ "$stderr" == *"corrupted record at"* ]]
	run -66 --separate-stderr tf-eval -d ck missing.tfrecord
	[[ "$stderr" == *"cannot open 'missing.tfrecord'"* ]]
}

@test "records of other data are refused naming the feature; --allow-missing fills in" {
	tf-csv2record "$DATA/breast_cancer.csv" -o bc-other.tfrecord
	tf-train -q --epochs 2 --checkpoint-dir ck-other bc-other.tfrecord > /dev/null 2>&1
	tf-csv2record "$DATA/wine.csv" -o wine-other.tfrecord
	run -65 --separate-stderr tf-eval -d ck-other --predict wine-other.tfrecord
	[[ "$stderr" == "tf-eval: wine-other.tfrecord: record 0: no feature 'area_error', one of the model's 30 (records of other data?"* ]]
	[ -z "$output" ]
	# --key of a feature the records lack
	run -65 --separate-stderr tf-eval -d ck-other --predict --key nope bc-other.tfrecord
	[[ "$stderr" == *"record 0: no feature 'nope' to pass through (--key)"* ]]
	run -0 tf-eval -d ck-other --predict --allow-missing wine-other.tfrecord
	[ "${#lines[@]}" -eq 178 ]
	# metrics need classes the model has: a label error names the record
	run -65 --separate-stderr tf-eval -d ck-other --allow-missing wine-other.tfrecord
	[ "$stderr" = "tf-eval: wine-other.tfrecord: record 130: label 'label' is 2, not a class from 0 to 1" ]
	# standard input's records are numbered as given, from 0
	run -65 --separate-stderr sh -c 'tf-eval -d ck-other --predict < wine-other.tfrecord'
	[[ "$stderr" == "tf-eval: -: record 0: no feature 'area_error'"* ]]
	run -65 --separate-stderr sh -c 'tf-eval -d ck-other --allow-missing - < wine-other.tfrecord'
	[ "$stderr" = "tf-eval: -: record 130: label 'label' is 2, not a class from 0 to 1" ]
}

@test "binary predictions: the class and both probabilities, as tf-serve's rows" {
	tf-csv2record "$DATA/breast_cancer.csv" -o bc-shape.tfrecord
	tf-train -q --epochs 3 --checkpoint-dir ck-shape bc-shape.tfrecord > /dev/null 2>&1
	tf-eval -d ck-shape --predict bc-shape.tfrecord > p.json
	/usr/bin/python3 -c '
import json
n = 0
for line in open("p.json"):
    r = json.loads(line)
    p = r["probabilities"]
    assert set(r) == {"probabilities", "class_ids", "classes"} and len(p) == 2, r
    assert r["class_ids"] == (1 if p[1] > p[0] else 0) and abs(sum(p) - 1) < 1e-6, r
    assert r["classes"] == str(r["class_ids"]), r
    n += 1
assert n == 569, n'
	run -0 tf-eval -d ck-shape --predict --csv bc-shape.tfrecord
	[ "${lines[0]}" = "class,p_0,p_1" ]
}

@test "--device: cpu evaluates as the default; a GPU that is not there is exit 69; a bad name 64" {
	tf-eval -d ck iris.tfrecord > default.json
	tf-eval -d ck --device cpu iris.tfrecord > cpu.json
	cmp default.json cpu.json
	run --separate-stderr tf-eval -d ck --device cuda:0 iris.tfrecord
	if [ "$status" -eq 0 ]; then
		skip "a GPU is here: tests/gpu compares it with the CPU"
	fi
	[ "$status" -eq 69 ]
	[[ "$stderr" == "tf-eval: --device cuda:0: "* ]]
	run -64 --separate-stderr tf-eval -d ck --device gpu iris.tfrecord
	[[ "$stderr" == *"'gpu' is not a device"* ]]
	run -64 tf-eval -d ck --gpu-math tf64 iris.tfrecord
}
