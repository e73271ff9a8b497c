#!/usr/bin/env bats
# tf-export: versioned exports, the manifest, archives, --if-better,
# TensorFlow.js and ONNX models checked with the real libraries, bad input.

bats_require_minimum_version 1.5.0
load helpers

# A breast-cancer dnn (batch norm and dropout) with validation metrics.
setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	tf-csv2record "$TOP/share/data/breast_cancer.csv" -o bc.tfrecord
	tf-records split -n 5 -o bc bc.tfrecord
	cat bc-0000[0-3]-of-00005 > train.tfrecord
	cp bc.tfrecord.schema.json train.tfrecord.schema.json
	tf-train -q --epochs 10 --batch-size 32 --enable-bn --dropout-keep-prob 0.8 \
		--validate bc-00004-of-00005 --checkpoint-dir ck train.tfrecord > /dev/null
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	F=$BATS_FILE_TMPDIR
}

# The checkpoint DIR of a model of iris.tfrecord, exported to ONNX and
# TensorFlow.js: onnxruntime and tf.loadLayersModel predict every row as
# tf-eval does.
iris_exports_agree() {
	tf-export -d "$1" --format onnx -o "$1.onnx" > /dev/null
	tf-export -d "$1" --format tfjs -o "$1-js" > /dev/null
	/usr/bin/python3 -c '
import csv, json, sys
r = list(csv.reader(open(sys.argv[1])))[1:]
print(json.dumps([[float(v) for v in row[:-1]] for row in r]))' "$DATA/iris.csv" > rows.json
	node "$TOP/tests/cli/exportcheck.js" onnx "$1.onnx" rows.json > a.out
	node "$TOP/tests/cli/exportcheck.js" tfjs "$1-js" rows.json | grep '^\[' > b.out
	tf-eval -d "$1" --predict iris.tfrecord > c.out
	/usr/bin/python3 -c '
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
c = [json.loads(l)["probabilities"] for l in open(sys.argv[3])]
assert len(a) == len(b) == len(c) == 150
for x, y, z in zip(a, b, c):
    assert max(abs(p - q) for p, q in zip(x, z)) < 2e-6, (x, z)
    assert max(abs(p - q) for p, q in zip(y, z)) < 2e-6, (y, z)' a.out b.out c.out
}

# The first n rows of breast_cancer.csv as JSON lists of features.
rows_json() {
	/usr/bin/python3 -c '
import csv, json, sys
r = list(csv.reader(open(sys.argv[1])))[1:1 + int(sys.argv[2])]
print(json.dumps([[float(v) for v in row[:-1]] for row in r]))' "$DATA/breast_cancer.csv" "$1"
}

# Compare probabilities of class 1 (one per line, JSON lists from
# exportcheck.js) with tf-eval --predict lines.
same_probabilities() {
	/usr/bin/python3 -c '
import json, sys
a = [json.loads(l)[0] for l in open(sys.argv[1]) if l.startswith("[")]
b = [json.loads(l)["probabilities"][1] for l in open(sys.argv[2])]
assert len(a) == len(b) == int(sys.argv[3]), (len(a), len(b))
d = max(abs(x - y) for x, y in zip(a, b))
assert d < 2e-6, d
print("max difference", d)' "$1" "$2" "$3"
}

# The 40 rows' class probabilities an export's runtime gave (OUT: JSON
# lists, one a line) are tf-eval's (WANT: its --predict lines) within TOL.
classes_agree() {
	/usr/bin/python3 -c '
import json, sys
a = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("[")]
c = [json.loads(l)["probabilities"] for l in open(sys.argv[2])]
assert len(a) == len(c) == 40 and len(a[0]) == 10, sys.argv[1]
for x, z in zip(a, c):
    assert max(abs(p - q) for p, q in zip(x, z)) < float(sys.argv[3]), (sys.argv[1], x, z)' "$1" "$2" "$3"
}

@test "-h and --help print the same usage on stdout" {
	run -0 --separate-stderr tf-export --help
	[[ "$output" == Usage:* ]]
	[ -z "$stderr" ]
	help=$output
	run -0 tf-export -h
	[ "$output" = "$help" ]
}

@test "--version alone names the command and the library" {
	run -0 tf-export --version
	[[ "$output" =~ ^tf-export\ [0-9]+\.[0-9]+\.[0-9]+\ \(libtfcore ]]
	run -0 tf-export -V
	[[ "$output" =~ ^tf-export\  ]]
}

@test "the man page documents exactly the options --help lists" {
	diff <(help_options tf-export) <(man_options tf-export)
}

@test "versions count up; each directory holds three files the manifest covers" {
	run -0 --separate-stderr tf-export -d "$F/ck" --export-base models
	[ -z "$stderr" ]
	[[ "$output" == *'"version":1,"path":"models/1","exported":true'* ]]
	[[ "$output" == *'"validation":{"examples":113,'* ]]
	run -0 tf-export -d "$F/ck" --export-base models
	[[ "$output" == *'"version":2,'* ]]
	[ "$(ls -A models)" = "$(printf '1\n2')" ]      # no temporary left
	[ "$(ls models/2)" = "$(printf 'manifest.json\nmodel.json\nvariables.bin')" ]
	/usr/bin/python3 -c '
import hashlib, json, os, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
names = [f["name"] for f in m["files"]]
assert names == ["model.json", "variables.bin"], names
for f in m["files"]:
    b = open(os.path.join(d, f["name"]), "rb").read()
    assert len(b) == f["size"] and hashlib.sha256(b).hexdigest() == f["sha256"], f
j = json.load(open(d + "/model.json"))
assert j["format"] == "tfkit-model" and j["task"] == "binary", j["task"]
spec = j["spec"]
assert "dropout" not in spec and "loss" not in spec and "label" not in spec, spec
assert "batchnorm" in spec, spec
ins = [i["name"] for i in j["signature"]["inputs"]]
assert len(ins) == 30 and ins[0] == "mean_radius", ins
p = j["provenance"]
assert p["step"] > 0 and p["seed"] == 0 and p["optimizer"] == "adam", p
assert p["config"]["dropout-keep-prob"] == 0.8 and p["validation"]["examples"] == 113, p
assert {"op": "dense", "plugin": "dense", "version": "1.1"} in p["plugins"], p["plugins"]
n = sum(v["shape"][0] * v["shape"][1] for v in j["variables"])
assert n * 4 == os.path.getsize(d + "/variables.bin"), n' models/2
}

@test "tf-eval gives an export the checkpoint's metrics and predictions" {
	tf-export -d "$F/ck" --export-base models > /dev/null
	a=$(tf-eval -d "$F/ck" "$F/bc-00004-of-00005")
	b=$(tf-eval -d models/1 "$F/bc-00004-of-00005")
	/usr/bin/python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert a["accuracy"] == b["accuracy"] and a["auc"] == b["auc"], (a, b)
assert abs(a["loss"] - b["loss"]) < 1e-4, (a, b)' "$a" "$b"
	diff <(tf-eval -d "$F/ck" --predict "$F/bc.tfrecord") \
		<(tf-eval -d models/1 --predict "$F/bc.tfrecord")
}

@test "--version N writes N; an existing version is never replaced (73)" {
	run -0 tf-export -d "$F/ck" --export-base models --version 7
	[[ "$output" == *'"version":7,"path":"models/7"'* ]]
	sum=$(cat models/7/* | md5sum)
	run -73 --separate-stderr tf-export -d "$F/ck" --export-base models --version 7
	[[ "$stderr" == *"models/7"*"exists"* ]]
	[ "$(cat models/7/* | md5sum)" = "$sum" ]
	[ "$(ls -A models)" = 7 ]
	run -0 tf-export -d "$F/ck" --export-base models
	[[ "$output" == *'"version":8,'* ]]
	run -0 tf-export -d "$F/ck" --export-base models --version=3
	[[ "$output" == *'"version":3,'* ]]
}

@test "--if-better exports only a better validation metric" {
	# a weak model first: one step
	tf-train -q --max-steps 1 --epochs 0 --validate "$F/bc-00004-of-00005" \
		--checkpoint-dir weak "$F/train.tfrecord" > /dev/null
	run -0 tf-export -d weak --export-base models --if-better accuracy
	[[ "$output" == *'"metric":"accuracy"'*'"exported":true'* ]]
	run -0 tf-export -d "$F/ck" --export-base models --if-better accuracy
	[[ "$output" == *'"newest_version":1,'*'"version":2,'*'"exported":true'* ]]
	# worse: nothing written, exit 0; lower is better for the loss
	run -0 tf-export -d weak --export-base models --if-better loss
	[[ "$output" == *'"exported":false,"reason":"loss '*"is worse than version 2's"* ]]
	run -0 tf-export -d weak --export-base models --if-better auc
	[[ "$output" == *'"exported":false'* ]]
	[ "$(ls models)" = "$(printf '1\n2')" ]
	# a tie exports (the same metric again, as once it is at its best)
	run -0 tf-export -d "$F/ck" --export-base models --if-better auc
	[[ "$output" == *'"newest_version":2,'*'"version":3,'*'"exported":true'* ]]
	# metrics print as they read back: the shortest digits, no float noise
	echo "$output" | grep -Eq '"loss":[0-9]\.[0-9]{1,9},"accuracy":[01]\.[0-9]{1,9},'
}

@test "--if-better without validation metrics is a data error (65)" {
	tf-train -q --max-steps 2 --epochs 0 --checkpoint-dir noval "$F/train.tfrecord" > /dev/null
	run -65 --separate-stderr tf-export -d noval --export-base models --if-better auc
	[[ "$stderr" == *"no validation auc recorded (train with --validate)"* ]]
	[ ! -e models ]
}

@test "--archive writes one tar.gz holding N/" {
	run -0 tf-export -d "$F/ck" --archive m.tar.gz --version 4
	[[ "$output" == *'"version":4,"path":"m.tar.gz"'* ]]
	[ "$(tar tzf m.tar.gz)" = "$(printf '4/\n4/model.json\n4/variables.bin\n4/manifest.json')" ]
	mkdir x && tar xzf m.tar.gz -C x
	diff <(tf-eval -d "$F/ck" --predict "$F/bc-00004-of-00005") \
		<(tf-eval -d x/4 --predict "$F/bc-00004-of-00005")
	[ -z "$(ls -A | grep tmp)" ]
}

@test "TensorFlow.js: tf.loadLayersModel loads it and predicts as tf-eval" {
	node_libs @tensorflow/tfjs-layers
	run -0 tf-export -d "$F/ck" --format tfjs -o js
	[ "$(ls js)" = "$(printf 'model.json\nweights.bin')" ]
	rows_json 40 > rows.json
	node "$TOP/tests/cli/exportcheck.js" tfjs js rows.json > tfjs.out
	tf-records head -n 40 --raw "$F/bc.tfrecord" | tf-eval -d "$F/ck" --predict > eval.out
	same_probabilities tfjs.out eval.out 40
}

@test "ONNX: onnxruntime loads it and predicts as tf-eval" {
	node_libs onnxruntime-node
	run -0 tf-export -d "$F/ck" --format onnx -o m.onnx
	/usr/bin/python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
assert b[:2] == b"\x08\x07", b[:4]          # ir_version 7
assert b"tf-export" in b[:40] and b"\x42\x04\x0a\x00\x10\x0d" in b   # opset 13' m.onnx
	rows_json 40 > rows.json
	node "$TOP/tests/cli/exportcheck.js" onnx m.onnx rows.json > onnx.out
	tf-records head -n 40 --raw "$F/bc.tfrecord" | tf-eval -d "$F/ck" --predict > eval.out
	same_probabilities onnx.out eval.out 40
}

@test "ONNX and TensorFlow.js: convolutions, batch norm of channels, pools, flatten (and for ONNX Inception's concat) predict as tf-eval" {
	node_libs onnxruntime-node
	node_libs @tensorflow/tfjs-layers
	tf-csv2record "$DATA/digits.csv" -o dg.tfrecord
	tf-records head -n 300 --raw dg.tfrecord > train.tfrecord
	cp dg.tfrecord.schema.json train.tfrecord.schema.json
	tf-records head -n 40 --raw dg.tfrecord > some.tfrecord
	/usr/bin/python3 -c '
import csv, json, sys
r = list(csv.reader(open(sys.argv[1])))[1:41]
print(json.dumps([[float(v) for v in row[:-1]] for row in r]))' "$DATA/digits.csv" > rows.json
	tf-train -q --model cnn --input-shape 8x8x1 --conv "4 6" --hidden 16 --enable-bn --epochs 2 \
		--checkpoint-dir cnn train.tfrecord > /dev/null
	# odd strides, same and valid padding split unevenly, the mean pools
	cat > odd.spec <<-EOF
	input x 8x8x1
	node c1 conv2d x filters=5 kernel=3 stride=2 padding=same
	node a1 relu c1
	node p1 avg_pool a1 size=3 stride=2 padding=same
	node c2 conv2d p1 filters=6 kernel=2 padding=valid bias=0
	node m2 max_pool c2 size=2 stride=1 padding=same
	node f flatten m2
	node d dense f units=8
	node t tanh d
	node logits dense t units=outputs
	EOF
	cat > gap.spec <<-EOF
	input x 8x8x1
	node c1 conv2d x filters=5 kernel=4 padding=same
	node a1 sigmoid c1
	node p1 avg_pool a1 size=3 stride=2 padding=same
	node c2 conv2d p1 filters=6 kernel=2 padding=valid bias=0
	node g global_avg_pool c2
	node logits dense g units=outputs
	EOF
	tf-train -q --model-file odd.spec --epochs 2 --checkpoint-dir odd train.tfrecord > /dev/null
	tf-train -q --model-file gap.spec --epochs 2 --checkpoint-dir gap train.tfrecord > /dev/null
	# branches joined by concat, batch norm of a flat layer
	tf-train -q --model-file "$TOP/share/examples/inception.spec" --epochs 2 --checkpoint-dir inc \
		train.tfrecord > /dev/null
	for ck in cnn odd gap inc; do
		tf-export -d $ck --format onnx -o $ck.onnx > /dev/null
		node "$TOP/tests/cli/exportcheck.js" onnx $ck.onnx rows.json > $ck.out
		tf-eval -d $ck --predict some.tfrecord > $ck.want
		/usr/bin/python3 -c '
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
c = [json.loads(l)["probabilities"] for l in open(sys.argv[2])]
assert len(a) == len(c) == 40 and len(a[0]) == 10
for x, z in zip(a, c):
    assert max(abs(p - q) for p, q in zip(x, z)) < 2e-6, (x, z)' $ck.out $ck.want
	done
	# TensorFlow.js: a chain of them, trained on raw values (its layers
	# have nowhere to standardise an image), a dense layer reading an
	# image flattened first
	printf 'input x 8x8x1\nnode c conv2d x filters=3 kernel=3 stride=2\nnode r relu c\nnode logits dense r units=outputs\n' > direct.spec
	tf-train -q --model cnn --input-shape 8x8x1 --conv "4 6" --hidden 16 --enable-bn --no-normalize \
		--epochs 2 --checkpoint-dir cnn-raw train.tfrecord > /dev/null
	tf-train -q --model-file odd.spec --no-normalize --epochs 2 --checkpoint-dir odd-raw train.tfrecord > /dev/null
	tf-train -q --model-file direct.spec --no-normalize --epochs 2 --checkpoint-dir direct train.tfrecord > /dev/null
	for ck in cnn-raw odd-raw direct; do
		tf-export -d $ck --format tfjs -o $ck-js > /dev/null
		node "$TOP/tests/cli/exportcheck.js" tfjs $ck-js rows.json | grep '^\[' > $ck.js.out
		tf-export -d $ck --format onnx -o $ck.onnx > /dev/null
		node "$TOP/tests/cli/exportcheck.js" onnx $ck.onnx rows.json > $ck.onnx.out
		tf-eval -d $ck --predict some.tfrecord > $ck.want
		/usr/bin/python3 -c '
import json, sys
c = [json.loads(l)["probabilities"] for l in open(sys.argv[3])]
for f in sys.argv[1:3]:
    a = [json.loads(l) for l in open(f)]
    assert len(a) == len(c) == 40 and len(a[0]) == 10
    for x, z in zip(a, c):
        assert max(abs(p - q) for p, q in zip(x, z)) < 2e-6, (f, x, z)' $ck.js.out $ck.onnx.out $ck.want
	done
	# standardised images: the schema's standardisation a layer of its
	# own before the convolutions
	tf-export -d cnn --format tfjs -o cnn-js > /dev/null
	node "$TOP/tests/cli/exportcheck.js" tfjs cnn-js rows.json | grep '^\[' > cnn.js.out
	tf-eval -d cnn --predict some.tfrecord > cnn.want
	classes_agree cnn.js.out cnn.want 1e-5
	run -65 --separate-stderr tf-export -d inc --format tfjs -o js
	[ "$stderr" = "tf-export: TensorFlow.js export: node 'b3_in' is not a layer of a plain chain" ]
	[ ! -e js ]
}

@test "multiclass and regression models export to TensorFlow.js and ONNX" {
	node_libs onnxruntime-node
	node_libs @tensorflow/tfjs-layers
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	tf-train -q --epochs 20 --batch-size 16 --checkpoint-dir ick iris.tfrecord > /dev/null
	iris_exports_agree ick
	tf-csv2record "$DATA/diabetes_regression.csv" -o d.tfrecord
	tf-train -q --task regression --epochs 5 --checkpoint-dir dck d.tfrecord > /dev/null
	tf-export -d dck --format onnx -o d.onnx > /dev/null
	/usr/bin/python3 -c '
import csv, json, sys
r = list(csv.reader(open(sys.argv[1])))[1:21]
print(json.dumps([[float(v) for v in row[:-1]] for row in r]))' "$DATA/diabetes_regression.csv" > rows.json
	node "$TOP/tests/cli/exportcheck.js" onnx d.onnx rows.json > a.out
	tf-records head -n 20 --raw d.tfrecord | tf-eval -d dck --predict > c.out
	/usr/bin/python3 -c '
import json, sys
a = [json.loads(l)[0] for l in open(sys.argv[1])]
c = [json.loads(l) for l in open(sys.argv[2])]
assert len(a) == len(c) == 20
assert max(abs(x - y) / max(1, abs(y)) for x, y in zip(a, c)) < 1e-5, (a, c)' a.out c.out
}

@test "ONNX: lstm and gru (forward, reversed, every step, stacked, bidirectional, the reset after or before) as ONNX's LSTM and GRU, predicting as tf-eval; TensorFlow.js: lstm, gru with the reset before, and bidirectional ones as its Bidirectional LSTM and GRU" {
	node_libs onnxruntime-node
	tf-csv2record "$DATA/digits.csv" -o dg.tfrecord
	tf-records head -n 40 --raw dg.tfrecord > some.tfrecord
	/usr/bin/python3 -c '
import csv, json, sys
r = list(csv.reader(open(sys.argv[1])))[1:41]
print(json.dumps([[float(v) for v in row[:-1]] for row in r]))' "$DATA/digits.csv" > rows.json
	printf 'input x 8x8\nnode a lstm x units=6 sequences=1 reverse=1\nnode b gru a units=5\nnode logits dense b units=outputs\n' > stack.spec
	printf 'input x 8x8\nnode a gru x units=4 sequences=1 bias=0\nnode logits dense a units=outputs\n' > steps.spec
	# the reset before: forward and reversed joined (TensorFlow.js's
	# Bidirectional GRU), and every step of one into another
	printf 'input x 8x8\nnode f gru x units=6 reset_after=0\nnode b gru x units=6 reverse=1 reset_after=0\nnode j concat f,b\nnode logits dense j units=outputs\n' > gbi.spec
	printf 'input x 8x8\nnode a gru x units=5 sequences=1 reset_after=0\nnode b gru a units=4 reverse=1 reset_after=0\nnode logits dense b units=outputs\n' > gst.spec
	tf-train -q --model gru --gru-reset-after false --input-shape 8x8 --rnn-units 8 --hidden 8 --epochs 2 --checkpoint-dir gb dg.tfrecord > /dev/null
	tf-train -q --model-file gbi.spec --epochs 2 --checkpoint-dir gbi dg.tfrecord > /dev/null
	tf-train -q --model-file gst.spec --epochs 2 --checkpoint-dir gst dg.tfrecord > /dev/null
	tf-train -q --model lstm --input-shape 8x8 --rnn-units 8 --hidden 8 --epochs 2 --checkpoint-dir l dg.tfrecord > /dev/null
	tf-train -q --model gru --input-shape 8x8 --rnn-units 8 --hidden 8 --epochs 2 --checkpoint-dir g dg.tfrecord > /dev/null
	tf-train -q --model bidirectional_lstm --input-shape 8x8 --rnn-units 8 --hidden 8 --epochs 2 --checkpoint-dir bi dg.tfrecord > /dev/null
	tf-train -q --model-file stack.spec --epochs 2 --checkpoint-dir st dg.tfrecord > /dev/null
	tf-train -q --model-file steps.spec --epochs 2 --checkpoint-dir sp dg.tfrecord > /dev/null
	for ck in l g bi st sp gb gbi gst; do
		tf-export -d $ck --format onnx -o $ck.onnx > /dev/null
		node "$TOP/tests/cli/exportcheck.js" onnx $ck.onnx rows.json > $ck.out
		tf-eval -d $ck --predict some.tfrecord > $ck.want
		classes_agree $ck.out $ck.want 1e-4
	done
	# TensorFlow.js: its LSTM (the forget bias folded into the bias,
	# the standardisation a layer before the steps) and its GRU (the
	# reset before: it has no reset_after, said)
	node_libs @tensorflow/tfjs-layers
	printf 'input x 8x8\nnode a lstm x units=6 sequences=1\nnode b lstm a units=5 reverse=1 forget_bias=0.5\nnode logits dense b units=outputs\n' > lstack.spec
	tf-train -q --model-file lstack.spec --epochs 2 --checkpoint-dir lst dg.tfrecord > /dev/null
	for ck in l lst bi gb gbi gst; do
		tf-export -d $ck --format tfjs -o $ck-js > /dev/null
		node "$TOP/tests/cli/exportcheck.js" tfjs $ck-js rows.json | grep '^\[' > $ck.js.out
		tf-eval -d $ck --predict some.tfrecord > $ck.want
		classes_agree $ck.js.out $ck.want 1e-4
	done
	/usr/bin/python3 -c '
import json
l = json.load(open("gbi-js/model.json"))["modelTopology"]["config"]["layers"]
b = [x for x in l if x["class_name"] == "Bidirectional"]
assert len(b) == 1 and b[0]["config"]["layer"]["class_name"] == "GRU", l
assert b[0]["config"]["layer"]["config"]["reset_after"] is False, b'
	run -65 --separate-stderr tf-export -d g --format tfjs -o g-js
	[ "$stderr" = "tf-export: TensorFlow.js export: op 'gru' (node 'rnn'): TensorFlow.js's GRU has no reset_after (tfkit's and Keras' default), so it cannot compute this one; a GRU trained with --gru-reset-after false (reset_after=0 in a spec) exports" ]
	[ ! -e g-js ]
	run -65 --separate-stderr tf-export -d st --format tfjs -o st-js
	[ "$stderr" = "tf-export: TensorFlow.js export: node 'a' reads the steps backwards and gives every step's output: not exported yet" ]
}

# ONNX feeds of a sessions CSV (sessions_csv): x the user column (none
# with nouser), ids each page's index in SCHEMA's vocabulary (one past
# its end for a page outside it), zeros to 20 steps, then the length.
session_feeds() {
	/usr/bin/python3 -c '
import csv, json, sys
vocab = json.load(open(sys.argv[2]))["vocabularies"]["pages"]
out = []
for r in csv.DictReader(open(sys.argv[1])):
    p = [vocab.index(t) if t in vocab else len(vocab) for t in r["pages"].split()]
    row = {"ids": p + [0] * (20 - len(p)) + [len(p)]}
    if sys.argv[3:] != ["nouser"]:
        row["x"] = [float(r["user"])]
    out.append(row)
print(json.dumps(out))' "$@"
}

# Every prediction of OUT (exportcheck.js) is tf-eval's (WANT) within
# 1e-5, N of them.
agree_within() {
	/usr/bin/python3 -c '
import json, sys
a = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("[")]
c = [json.loads(l)["probabilities"] for l in open(sys.argv[2])]
assert len(a) == len(c) == int(sys.argv[3]), (len(a), len(c))
for x, z in zip(a, c):
    z = z[1:] if len(x) == 1 else z
    assert max(abs(p - q) for p, q in zip(x, z)) < 1e-5, (sys.argv[1], x, z)' "$@"
}

# s.tfrecord (600 sessions with a user column) and held.tfrecord (100
# more, a page the vocabulary lacks and an empty session), and the
# exports' feeds of held: rows.json (x and ids), tokens.json (ids).
session_records() {
	sessions_csv s.csv 1 600 20 user
	sessions_csv held.csv 2 100 20 user
	printf '3,checkout login help buy,1\n4,,0\n' >> held.csv
	tf-csv2record -q --sequence pages s.csv -o s.tfrecord
	tf-csv2record -q --sequence pages held.csv -o held.tfrecord
	session_feeds held.csv s.tfrecord.schema.json > rows.json
	session_feeds held.csv s.tfrecord.schema.json nouser > tokens.json
}

# nums.csv: 300 rows of a number, a sequence of 1 to 12 numbers (the
# first row's of none) and a number, label 1 iff the sequence's mean is
# over 1/2; nums.tfrecord of it; nums.json the exports' feeds (x the
# row, the sequence padded with zeros to 12 steps; ids its length).
numeric_sequences() {
	/usr/bin/python3 -c '
import csv, json, random
rng = random.Random(3)
w = csv.writer(open("nums.csv", "w"))
w.writerow(["a", "xs", "b", "label"])
feeds = []
for i in range(300):
    k = rng.randint(1, 12) if i else 0
    xs = [round(rng.uniform(-2, 3), 3) for _ in range(k)]
    a, b = round(rng.uniform(0, 9), 2), rng.randint(0, 4)
    w.writerow([a, " ".join(map(str, xs)), b, int(sum(xs) > k / 2)])
    feeds.append({"x": [a] + xs + [0.0] * (12 - k) + [float(b)], "ids": [k]})
json.dump(feeds, open("nums.json", "w"))'
	tf-csv2record -q --sequence xs nums.csv -o nums.tfrecord
}

@test "ONNX: sequences of varying length (tokens through an embedding, numbers; lstm, gru, bidirectional, every step, reversed, stacked) take the lengths as ONNX's sequence_lens and predict as tf-eval" {
	node_libs onnxruntime-node
	session_records
	# tokens alone (no x): the embedding with a bias, every step of a
	# gru into a reversed lstm
	printf 'input ids 21 int64\nnode e embedding ids vocab=8 dim=6 combiner=concat sequence=1 size=20 bias=1\nnode r gru e,ids units=8 length=20 sequences=1\nnode r2 lstm r,ids units=5 length=20 reverse=1\nnode logits dense r2 units=outputs\n' > tok.spec
	tf-train -q --model bidirectional_lstm --rnn-units 8 --hidden 8 --epochs 2 --batch-size 32 --checkpoint-dir bi s.tfrecord > /dev/null
	tf-train -q --model gru --rnn-units 8 --hidden 8 --epochs 2 --batch-size 32 --checkpoint-dir g s.tfrecord > /dev/null
	tf-train -q --model-file tok.spec --exclude user --epochs 2 --batch-size 32 --checkpoint-dir tok s.tfrecord > /dev/null
	for ck in bi g tok; do
		run -0 tf-export -d $ck --format onnx -o $ck.onnx
		feeds=rows.json
		[ $ck = tok ] && feeds=tokens.json
		node "$TOP/tests/cli/exportcheck.js" onnx $ck.onnx $feeds > $ck.out
		tf-eval -d $ck --predict held.tfrecord > $ck.want
		agree_within $ck.out $ck.want 102
	done
	# the embedding's bias goes to every step (not to the first rows'):
	# the same predictions whatever the batch
	tf-eval -d tok -b 7 --predict held.tfrecord | cmp - tok.want
	# numbers of 1 to 12 steps (one of none) between two columns
	numeric_sequences
	printf 'input x 14\ninput ids 1 int64\nnode s columns x begin=1 size=12 steps=12\nnode r lstm s,ids units=6 length=0 sequences=1 reverse=1\nnode r2 gru r,ids units=4 length=0\nnode logits dense r2 units=outputs\n' > num.spec
	tf-train -q --model lstm --rnn-units 6 --hidden 4 --epochs 3 --batch-size 16 --checkpoint-dir nl nums.tfrecord > /dev/null
	tf-train -q --model-file num.spec --epochs 3 --batch-size 16 --checkpoint-dir ns nums.tfrecord > /dev/null
	for ck in nl ns; do
		tf-export -d $ck --format onnx -o $ck.onnx > /dev/null
		node "$TOP/tests/cli/exportcheck.js" onnx $ck.onnx nums.json > $ck.out
		tf-eval -d $ck --predict nums.tfrecord > $ck.want
		agree_within $ck.out $ck.want 300
	done
	# a bag of the ids (their rows summed) beside the steps: said
	printf 'input ids 21 int64\nnode e embedding ids vocab=8 dim=6 combiner=concat sequence=1 size=20\nnode r gru e,ids units=4 length=20\nnode bag embedding ids vocab=8 dim=3 size=20\nnode j concat r,bag\nnode logits dense j units=outputs\n' > bag.spec
	tf-train -q --model-file bag.spec --exclude user --epochs 1 --checkpoint-dir bag s.tfrecord > /dev/null
	run -65 --separate-stderr tf-export -d bag --format onnx -o bag.onnx
	[ "$stderr" = "tf-export: ONNX export: node 'bag' sums or averages its ids (a bag): only a sequence's embedding (combiner=concat) is exported yet" ]
	[ ! -e bag.onnx ]
}

@test "TensorFlow.js: sequences of varying length (tokens through an embedding, numbers; lstm, bidirectional, every step into a reversed lstm, gru with the reset before) as a functional model of x and ids masked by the lengths, predicting as tf-eval; ids outside the table read zeros as in ONNX; gru with the reset after and a dense over every step said" {
	node_libs @tensorflow/tfjs-layers
	session_records
	# tokens alone: the embedding with a bias, every step of an lstm
	# into a reversed one
	printf 'input ids 21 int64\nnode e embedding ids vocab=8 dim=6 combiner=concat sequence=1 size=20 bias=1\nnode r lstm e,ids units=8 length=20 sequences=1\nnode r2 lstm r,ids units=5 length=20 reverse=1\nnode logits dense r2 units=outputs\n' > tok.spec
	tf-train -q --model bidirectional_lstm --rnn-units 8 --hidden 8 --epochs 2 --batch-size 32 --checkpoint-dir bi s.tfrecord > /dev/null
	tf-train -q --model lstm --rnn-units 8 --hidden 8 --epochs 2 --batch-size 32 --checkpoint-dir l s.tfrecord > /dev/null
	tf-train -q --model-file tok.spec --exclude user --epochs 2 --batch-size 32 --checkpoint-dir tok s.tfrecord > /dev/null
	tf-train -q --model gru --gru-reset-after false --rnn-units 8 --hidden 8 --epochs 2 --batch-size 32 --checkpoint-dir gb s.tfrecord > /dev/null
	for ck in bi l tok gb; do
		run -0 tf-export -d $ck --format tfjs -o $ck-js
		feeds=rows.json
		[ $ck = tok ] && feeds=tokens.json
		node "$TOP/tests/cli/exportcheck.js" tfjs $ck-js $feeds > $ck.out
		tf-eval -d $ck --predict held.tfrecord > $ck.want
		agree_within $ck.out $ck.want 102
	done
	# two inputs, x and ids, as ONNX's (tokens alone: ids)
	/usr/bin/python3 -c '
import json, sys
for d, want in (("bi-js", [["x", 0, 0], ["ids", 0, 0]]), ("tok-js", [["ids", 0, 0]])):
    t = json.load(open(d + "/model.json"))["modelTopology"]
    assert t["class_name"] == "Model", t["class_name"]
    assert t["config"]["input_layers"] == want, t["config"]["input_layers"]'
	# numbers, standardised: every step of an lstm into a reversed one
	# joined to a column, and the built-in models
	numeric_sequences
	printf 'input x 14\ninput ids 1 int64\nnode s columns x begin=1 size=12 steps=12\nnode r lstm s,ids units=6 length=0 sequences=1\nnode r2 lstm r,ids units=4 length=0 reverse=1\nnode c columns x begin=0 size=1\nnode j concat r2,c\nnode logits dense j units=outputs\n' > num.spec
	tf-train -q --model lstm --rnn-units 6 --hidden 4 --epochs 3 --batch-size 16 --checkpoint-dir nl nums.tfrecord > /dev/null
	tf-train -q --model bidirectional_lstm --rnn-units 6 --hidden 4 --epochs 3 --batch-size 16 --checkpoint-dir nb nums.tfrecord > /dev/null
	tf-train -q --model-file num.spec --epochs 3 --batch-size 16 --checkpoint-dir ns nums.tfrecord > /dev/null
	for ck in nl nb ns; do
		tf-export -d $ck --format tfjs -o $ck-js > /dev/null
		node "$TOP/tests/cli/exportcheck.js" tfjs $ck-js nums.json > $ck.out
		tf-eval -d $ck --predict nums.tfrecord > $ck.want
		agree_within $ck.out $ck.want 300
	done
	# ids past the table and below it read its rows of zeros, as the
	# ONNX export's (and tfkit's lookup)
	/usr/bin/python3 -c '
import json
r = json.load(open("tokens.json"))[:4]
r[0]["ids"][0], r[1]["ids"][1], r[2]["ids"][2], r[3]["ids"][3] = 50, -3, 8, 7
json.dump(r, open("outside.json", "w"))'
	if [ -d "$NODE_PATH/onnxruntime-node" ]; then
		tf-export -d tok --format onnx -o tok.onnx > /dev/null
		node "$TOP/tests/cli/exportcheck.js" onnx tok.onnx outside.json > onnx.out
		node "$TOP/tests/cli/exportcheck.js" tfjs tok-js outside.json > js.out
		/usr/bin/python3 -c '
import json, sys
a, b = ([json.loads(l) for l in open(f)] for f in sys.argv[1:])
assert len(a) == len(b) == 4 and len(set(map(tuple, a))) == 4, (a, b)
assert max(abs(p[0] - q[0]) for p, q in zip(a, b)) < 1e-5, (a, b)' onnx.out js.out
	fi
	# what TensorFlow.js cannot compute is said
	tf-train -q --model gru --rnn-units 8 --hidden 8 --epochs 1 --checkpoint-dir g s.tfrecord > /dev/null
	run -65 --separate-stderr tf-export -d g --format tfjs -o g-js
	[ "$stderr" = "tf-export: TensorFlow.js export: op 'gru' (node 'rnn'): TensorFlow.js's GRU has no reset_after (tfkit's and Keras' default), so it cannot compute this one; a GRU trained with --gru-reset-after false (reset_after=0 in a spec) exports" ]
	[ ! -e g-js ]
	printf 'input ids 21 int64\nnode e embedding ids vocab=8 dim=6 combiner=concat sequence=1 size=20\nnode r lstm e,ids units=4 length=20 sequences=1\nnode logits dense r units=outputs\n' > every.spec
	tf-train -q --model-file every.spec --exclude user --epochs 1 --checkpoint-dir ev s.tfrecord > /dev/null
	run -65 --separate-stderr tf-export -d ev --format tfjs -o ev-js
	[ "$stderr" = "tf-export: TensorFlow.js export: node 'logits' reads every step of 'r' of varying length: not exported yet" ]
	[ ! -e ev-js ]
}

@test "bad input: usage (64), missing (66) and damaged (65) checkpoints" {
	run -64 --separate-stderr tf-export --export-base models
	[[ "$stderr" == *"--checkpoint-dir"* ]]
	run -64 --separate-stderr tf-export -d "$F/ck"
	[[ "$stderr" == *"--export-base"* ]]
	run -64 --separate-stderr tf-export -d "$F/ck" --format keras -o x
	[[ "$stderr" == *"'keras' is not tfkit, tfjs or onnx"* ]]
	run -64 --separate-stderr tf-export -d "$F/ck" --format onnx
	[[ "$stderr" == *"needs --output"* ]]
	run -64 --separate-stderr tf-export -d "$F/ck" --export-base m --if-better speed
	[[ "$stderr" == *"unknown metric 'speed'"* ]]
	run -66 --separate-stderr tf-export -d nowhere --export-base models
	[[ "$stderr" == *nowhere* ]]
	cp -r "$F/ck" bad
	f=bad/$(sed -n 's/^model_checkpoint_path: "\(.*\)"$/\1/p' bad/checkpoint)
	flip_byte "$f" 200
	run -65 --separate-stderr tf-export -d bad --export-base models
	[[ "$stderr" == *"$f"* ]]
	[ ! -e models ]
}

@test "an export base that cannot be written is 73, and nothing is left" {
	[ "$(id -u)" != 0 ] || skip "root can write anywhere"
	mkdir ro && chmod 555 ro
	run -73 --separate-stderr tf-export -d "$F/ck" --export-base ro
	[[ "$stderr" == *"ro"* ]]
}

@test "a damaged export is refused: tf-eval names the file and the manifest" {
	tf-export -d "$F/ck" --export-base models > /dev/null
	flip_byte models/1/variables.bin 100
	run -65 --separate-stderr tf-eval -d models/1 "$F/bc.tfrecord"
	[[ "$stderr" == *"models/1: variables.bin does not match the manifest"* ]]
	rm models/1/manifest.json
	run -65 --separate-stderr tf-eval -d models/1 "$F/bc.tfrecord"
	[[ "$stderr" == *"models/1: no manifest.json"* ]]
}

@test "an --archive or ONNX output naming a device is written in place" {
	mknod null c 1 3
	mknod full c 1 7
	run -0 tf-export -d "$F/ck" --archive null
	[ -c null ]
	run -0 tf-export -d "$F/ck" --format onnx -o null
	[ -c null ]
	run -74 --separate-stderr tf-export -d "$F/ck" --format onnx -o full
	[[ "$stderr" == *"No space left on device"* ]]
	[ -c full ]
	[ -z "$(ls | grep '\.tmp\.')" ]
}

@test "a --model-file spec of built-in ops exports to TensorFlow.js and ONNX" {
	node_libs onnxruntime-node
	node_libs @tensorflow/tfjs-layers
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	printf 'input x\nnode h dense x units=12\nnode a tanh h\nnode logits dense a units=outputs\n' > tanh.spec
	tf-train -q --model-file tanh.spec --epochs 20 --batch-size 16 --checkpoint-dir sck iris.tfrecord > /dev/null
	iris_exports_agree sck
}

@test "a spec that adds two branches exports to ONNX (a Sum), as tf-eval predicts; TensorFlow.js, a chain of layers, refuses it" {
	node_libs onnxruntime-node
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	printf 'input x\nnode a dense x units=8\nnode b dense x units=8\nnode s add a,b\nnode r relu s\nnode logits dense r units=outputs\n' > add.spec
	tf-train -q --model-file add.spec --epochs 20 --batch-size 16 --checkpoint-dir ack iris.tfrecord > /dev/null
	run -0 tf-export -d ack --format onnx -o ack.onnx
	/usr/bin/python3 -c 'import sys; b = open(sys.argv[1], "rb").read(); assert b"Sum" in b' ack.onnx
	/usr/bin/python3 -c '
import csv, json, sys
r = list(csv.reader(open(sys.argv[1])))[1:]
print(json.dumps([[float(v) for v in row[:-1]] for row in r]))' "$DATA/iris.csv" > rows.json
	node "$TOP/tests/cli/exportcheck.js" onnx ack.onnx rows.json > a.out
	tf-eval -d ack --predict iris.tfrecord > c.out
	/usr/bin/python3 -c '
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
c = [json.loads(l)["probabilities"] for l in open(sys.argv[2])]
assert len(a) == len(c) == 150
for x, z in zip(a, c):
    assert max(abs(p - q) for p, q in zip(x, z)) < 2e-6, (x, z)' a.out c.out
	run -65 --separate-stderr tf-export -d ack --format tfjs -o ack-js
	[[ "$stderr" == *"TensorFlow.js export: node 'b' is not a layer of a plain chain"* ]]
	[ ! -e ack-js ]
}
