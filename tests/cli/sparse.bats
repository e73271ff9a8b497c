#!/usr/bin/env bats
# Sparse features end to end: libsvm ids (any uint64) converted, trained
# as a bag of ids a row (never a dense row), by the optimizers' row-sparse
# steps, resumed, served over REST; exports that cannot say so refuse.

bats_require_minimum_version 1.5.0
load helpers

teardown() {
	kill_quietly "${SPID:-}"
}

# heart_scale (libsvm, 13 features) as TFRecords: hs.tfrecord.
heart() {
	tf-csv2record -q -f libsvm -o hs.tfrecord "$DATA/heart_scale"
}

# ROWS rows of click-like data: 8 ids a row out of 1000 "features",
# each written as feature * MUL + ADD (so ids run as far as 2^64), value
# 1, label from the features' hidden signs (feature % 3 == 0 pushes
# towards 1).  Deterministic.
clicks() {
	awk -v rows="$1" -v mul="${2:-1}" -v add="${3:-0}" 'BEGIN {
		s = 7
		for (r = 0; r < rows; r++) {
			line = ""; z = 0; delete seen
			for (k = 0; k < 8; k++) {
				do { s = (s * 1103515245 + 12345) % 2147483648; f = s % 1000 } while (f in seen)
				seen[f] = 1
				z += (f % 3 == 0) ? 1 : -0.5
				id = mul == 1 ? f + add : sprintf("%.0f", f * mul + add)
				line = line " " id ":1"
			}
			s = (s * 1103515245 + 12345) % 2147483648
			print (z + (s % 100) / 50 - 1 > 0 ? 1 : 0) line
		}
	}'
}

# The schema a checkpoint keeps (its header's copy), on stdout.
ckpt_schema() {
	/usr/bin/python3 - "$1" <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
print(json.loads(b[12:12 + n].split(b"\n", 1)[1])["schema"])
PY
}

# How many distinct ids a libsvm file holds.
distinct_ids() {
	awk '{ for (i = 2; i <= NF; i++) { split($i, a, ":"); print a[1] } }' "$1" | sort -u | wc -l
}

# SRC.tfrecord's records as DST.tfrecord, its schema without the id
# vocabulary (as one from before it, or another writer's).
without_vocab() {
	cp "$1.tfrecord" "$2.tfrecord"
	jq -c 'del(.sparse.id_vocab, .sparse.id_count)' "$1.tfrecord.schema.json" > "$2.tfrecord.schema.json"
}

# Peak memory (KiB) of a command, its output discarded.
peak_kib() {
	/usr/bin/python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}

@test "tf-csv2record -f libsvm: ids up to 2^64-1 (kept as int64's bits, as TensorFlow keeps uint64), the most a row in the schema; a bad index names its line" {
	printf '1 3:0.5 18446744073709551615:2\n0 9223372036854775808:1\n1 qid:4 7:1 8:1 9:1\n' > big.svm
	run -0 tf-csv2record -q -f libsvm -o big.tfrecord big.svm
	# (jq would round the largest id: JSON's integers stop at 2^63-1)
	run -0 grep -o '"sparse":{[^}]*}' big.tfrecord.schema.json
	# and the 6 distinct ids, sparse in their space, as its id vocabulary
	[[ "$output" == '"sparse":{"ids":"ids","values":"values","max_index":9223372036854775807,"max_ids":3,"id_count":6,"id_vocab":"'*'"}' ]]
	run -0 tf-records cat --json big.tfrecord
	[[ "${lines[0]}" == *'"ids":[3,-1]'* ]]
	[[ "${lines[1]}" == *'"ids":[-9223372036854775808]'* ]]
	printf '1 3:0.5\n0 -2:1\n' > neg.svm
	run -65 --separate-stderr tf-csv2record -q -f libsvm -o neg.tfrecord neg.svm
	[[ "$stderr" == *"neg.svm:2"*"index '-2:1' is not an integer from 0 to 2^64-1"* ]]
	printf '1 18446744073709551616:1\n' > over.svm
	run -65 --separate-stderr tf-csv2record -q -f libsvm -o over.tfrecord over.svm
	[[ "$stderr" == *"over.svm:1"*"is not an integer from 0 to 2^64-1"* ]]
	[ ! -e neg.tfrecord ] && [ ! -e over.tfrecord ]
}

@test "tf-csv2record: the ids' vocabulary counts every chunk's ids (4 MiB each), whatever the threads; ids dense in their space have none" {
	# 150,000 rows, 8 ids a row spread over 2^40: 20 MB, five chunks
	clicks 150000 1099511627 12345 > many.svm
	n=$(distinct_ids many.svm)
	tf-csv2record -q -j 1 -f libsvm -o one.tfrecord many.svm
	tf-csv2record -q -j 2 -f libsvm -o two.tfrecord many.svm
	jq -e ".sparse.id_count == $n" one.tfrecord.schema.json
	cmp <(jq -c .sparse one.tfrecord.schema.json) <(jq -c .sparse two.tfrecord.schema.json)
	# tf-records schema --write finds the same in the records
	cp one.tfrecord bare.tfrecord
	tf-records schema --write bare.tfrecord > /dev/null
	cmp <(jq -c .sparse one.tfrecord.schema.json) <(jq -c .sparse bare.tfrecord.schema.json)
	# the ids below 1000: fewer than a dense row's 4096, no vocabulary
	clicks 100 > small.svm
	tf-csv2record -q -f libsvm -o small.tfrecord small.svm
	jq -e '.sparse | has("id_vocab") | not' small.tfrecord.schema.json
	# ids 0 to 9999, each: more than a quarter of their space
	awk 'BEGIN { for (i = 0; i < 10000; i++) print i % 2, i ":1" }' > dense.svm
	tf-csv2record -q -f libsvm -o dense.tfrecord dense.svm
	jq -e '.sparse | has("id_vocab") | not' dense.tfrecord.schema.json
}

@test "sparse and dense give the same model: --sparse lr (a weight per id) and a dense linear layer over the same rows agree" {
	heart
	printf 'input x 14\ninput label 1\nnode logits dense x units=1 init=zeros\n' > dense.spec
	tf-train -q --model-file dense.spec --no-normalize --optimizer sgd --learning-rate 0.1 \
		-b 16 -e 5 --shuffle-buffer 1 --checkpoint-dir dense hs.tfrecord > dense.json
	tf-train -q --sparse --model lr --optimizer sgd --learning-rate 0.1 \
		-b 16 -e 5 --shuffle-buffer 1 --checkpoint-dir sparse hs.tfrecord > sparse.json
	# the sparse model is a table of ids, not a dense layer
	ckpt_schema sparse/model.ckpt-85 | jq -e '.sparse.bag == true and .sparse.max_ids == 13'
	tf-eval -d dense -p hs.tfrecord | jq '.probabilities[1]' > d.txt
	tf-eval -d sparse -p hs.tfrecord | jq '.probabilities[1]' > s.txt
	[ "$(wc -l < s.txt)" -eq 270 ]
	paste d.txt s.txt | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-5) bad++ } END { exit bad > 0 }'
	run -0 jq -r .loss dense.json sparse.json
	awk -v a="${lines[0]}" -v b="${lines[1]}" 'BEGIN { d = a - b; exit (d > 1e-6 || d < -1e-6) }'
	# an id twice in a row counts twice, its values summed, in both (as
	# a bag sums it, and scikit-learn's reader)
	# (rows of fewer ids than the most, 13, which the sparse model takes)
	awk '{ printf "%s", $0; if (NF <= 13) { split($2, a, ":"); printf " %s:%s", a[1], a[2] } print "" }' "$DATA/heart_scale" > twice.svm
	awk '{ printf "%s", $1; for (i = 2; i <= NF; i++) { split($i, a, ":"); printf " %s:%.9g", a[1], a[2] * (i == 2 && NF <= 13 ? 2 : 1) } print "" }' "$DATA/heart_scale" > doubled.svm
	grep -q '^+1 1:0.708333 2:1 .* 1:0.708333$' twice.svm
	for f in twice doubled; do
		tf-csv2record -q -f libsvm -o $f.tfrecord $f.svm
		tf-eval -d dense -p $f.tfrecord | jq '.probabilities[1]' > $f-d.txt
		tf-eval -d sparse -p $f.tfrecord | jq '.probabilities[1]' > $f-s.txt
	done
	paste twice-d.txt doubled-d.txt twice-s.txt doubled-s.txt | awk '{ for (i = 2; i <= 4; i++) { d = $1 - $i; if (d < 0) d = -d; if (d > 1e-5) bad++ } } END { exit bad > 0 }'
	! cmp -s twice-d.txt d.txt
}

@test "a batch is never densified: ids spread over 2^40 train in little memory (a row for each id seen: the schema's id vocabulary; without one, hashed into 2^20 buckets), as well as the same ids made small" {
	# ids f * 1099511627 + 12345 for features f < 1000, spread over 2^40
	clicks 3000 1099511627 12345 > far.svm
	clicks 3000 > near.svm
	tf-csv2record -q -f libsvm -o far.tfrecord far.svm
	tf-csv2record -q -f libsvm -o near.tfrecord near.svm
	n=$(distinct_ids far.svm)
	jq -e ".sparse.max_index > 1000000000000 and .sparse.id_count == $n" far.tfrecord.schema.json
	without_vocab far hashed
	args="-q --model lr --optimizer adagrad --learning-rate 0.5 -e 3"
	for d in far hashed; do
		kib=$(peak_kib tf-train $args --checkpoint-dir $d $d.tfrecord)
		echo "$d: peak $kib KiB"
		[ "$kib" -lt 500000 ]
	done
	tf-train $args --checkpoint-dir near near.tfrecord > /dev/null
	run -0 ckpt_schema far/model.ckpt-72
	[[ "$output" == *'"bag":true}'* && "$output" == *"\"id_count\":$n,\"id_vocab\":\""* ]]
	run -0 ckpt_schema hashed/model.ckpt-72
	[[ "$output" == *'"bag":true,"hash_buckets":1048576'* && "$output" != *id_vocab* ]]
	fa=$(tf-eval -d far far.tfrecord | jq .auc)
	ha=$(tf-eval -d hashed far.tfrecord | jq .auc)
	na=$(tf-eval -d near near.tfrecord | jq .auc)
	echo "auc far $fa hashed $ha near $na"
	awk -v a="$fa" -v b="$na" -v c="$ha" 'BEGIN { d = a - b; e = c - b
		exit !(a > 0.8 && d < 0.01 && d > -0.01 && e < 0.01 && e > -0.01) }'
}

@test "checkpoints and exports keep only the rows that exist: a few hundred ids seen in a table of a million rows take kilobytes, and a table of a row for each (the id vocabulary) is the same model; resumed and served, the model is the same" {
	# ids f * 997 + 3 for the features f < 1000: a space of 990,025 ids
	clicks 2000 997 3 > wide.svm
	tf-csv2record -q -f libsvm -o wide.tfrecord wide.svm
	n=$(distinct_ids wide.svm)
	jq -e ".sparse.max_index == 990024 and .sparse.id_count == $n" wide.tfrecord.schema.json
	# without the vocabulary, a table of a row for each id of the space
	without_vocab wide flat
	args="-q --model lr --optimizer ftrl --learning-rate 0.5"
	for d in whole flat; do
		tf-train $args -e 2 --checkpoint-dir $d ${d/whole/wide}.tfrecord > /dev/null
		# as values, the flat table's weights and FTRL's two slots are 12 MB
		size=$(stat -c %s $d/model.ckpt-32)
		echo "$d checkpoint: $size bytes"
		[ "$size" -lt 100000 ]
		tf-export --checkpoint-dir $d --export-base exp-$d > /dev/null
		size=$(stat -c %s exp-$d/1/variables.bin)
		echo "$d variables.bin: $size bytes"
		[ "$size" -lt 50000 ]
	done
	jq -e '[.variables[] | select(.runs)] | length == 1' exp-flat/1/model.json
	jq -e "[.variables[] | select(.shape[0] == $n)] | length >= 1" exp-whole/1/model.json
	# a row for each id or for each of the space: the same model
	tf-eval -d whole -p wide.tfrecord > whole.json
	tf-eval -d flat -p wide.tfrecord > flat.json
	cmp whole.json flat.json
	tf-train $args -e 1 --checkpoint-dir part wide.tfrecord > /dev/null
	tf-train $args -e 1 --checkpoint-dir part wide.tfrecord > /dev/null
	same_state whole/model.ckpt-32 part/model.ckpt-32
	start_server --model-base exp-whole --model-name w
	ids=$(head -1 wide.svm | awk '{ for (i = 2; i <= NF; i++) { split($i, a, ":"); printf "%s%s", (i > 2 ? "," : ""), a[1] } }')
	run -0 curl -s -d "{\"instances\": [{\"ids\": [$ids]}]}" "$URL/v1/models/w:predict"
	got=$(jq '.predictions[0].probabilities[1]' <<< "$output")
	want=$(head -1 whole.json | jq '.probabilities[1]')
	echo "served $got, evaluated $want"
	[ "$got" = "$want" ]
}

@test "an id the model has no row for (outside its id vocabulary): served and evaluated it adds nothing, as TensorFlow's vocabulary columns; training on it is refused, naming it" {
	clicks 2000 997 3 > wide.svm
	tf-csv2record -q -f libsvm -o wide.tfrecord wide.svm
	tf-train -q --model dnn --embedding-dim 4 --hidden 8 -e 2 --checkpoint-dir ck wide.tfrecord > /dev/null
	tf-export --checkpoint-dir ck --export-base exp > /dev/null
	# 5 is no id of the data (ids are f * 997 + 3)
	ids=$(head -1 wide.svm | awk '{ for (i = 2; i <= NF; i++) { split($i, a, ":"); printf "%s%s", (i > 2 ? "," : ""), a[1] } }')
	head -1 wide.svm | sed 's/ [0-9]*:1$/ 5:1/' > odd.svm
	head -1 wide.svm | sed 's/ [0-9]*:1$//' > one.svm
	for f in odd one; do
		tf-csv2record -q -f libsvm -o $f.tfrecord $f.svm
		tf-eval -d ck -p $f.tfrecord | jq '.probabilities[1]' > $f.p
	done
	cmp odd.p one.p
	start_server --model-base exp --model-name w --train-queue q
	run -0 curl -s -d "{\"instances\": [{\"ids\": [$ids]}, {\"ids\": [$ids,5,7]}]}" "$URL/v1/models/w:predict"
	run -0 jq -e '.predictions[0].probabilities[1] == .predictions[1].probabilities[1]' <<< "$output"
	# learning it online: refused, before it is queued
	label=$(head -1 wide.svm | cut -d' ' -f1)
	run -0 curl -s -w ' %{http_code}' -d "{\"instances\": [{\"ids\": [5,${ids#*,}]}], \"labels\": [$label]}" "$URL/v1/models/w:train"
	[[ "$output" == *"id 5 is not one of the model's $(distinct_ids wide.svm) ids"*" 400" ]]
	run -0 curl -s -w ' %{http_code}' -d "{\"instances\": [{\"ids\": [$ids]}], \"labels\": [$label]}" "$URL/v1/models/w:train"
	[[ "$output" == *" 200" ]]
	# an id past 2^63-1 as a bare JSON number: the parser's refusal says
	# how to send it, on both endpoints
	for e in predict train; do
		run -0 curl -s -w ' %{http_code}' -d '{"instances": [{"ids": [18446744073709551615]}], "labels": [1]}' "$URL/v1/models/w:$e"
		[[ "$output" == *"too big integer"*'an id past 2^63-1 is sent as a string of its digits (\"18446744073709551615\") or as the int64 of the same bits (-1)'*" 400" ]]
	done
	# training a checkpoint on data with ids it has no row for
	run -65 --separate-stderr tf-train -q --model dnn --embedding-dim 4 --hidden 8 -e 1 --checkpoint-dir ck odd.tfrecord
	[[ "$stderr" == *"ck"*"has no row for 1 of the ids of the data"*"id 5 the first: its table has a row for each id of the data it was first trained on"* ]]
	# ... and a table of a row for each id below its data's largest
	without_vocab wide flat
	tf-train -q --model lr -e 1 --checkpoint-dir flat flat.tfrecord > /dev/null
	clicks 200 997 1000003 > past.svm
	tf-csv2record -q -f libsvm -o past.tfrecord past.svm
	run -65 --separate-stderr tf-train -q --model lr -e 1 --checkpoint-dir flat past.tfrecord
	[[ "$stderr" == *"has no row for $(distinct_ids past.svm) of the ids of the data"*"a row for each id below its max_index + 1"* ]]
	# ... or records that the schema does not describe (a stream's)
	cp wide.tfrecord.schema.json odd2.tfrecord.schema.json
	cp odd.tfrecord odd2.tfrecord
	run -65 --separate-stderr tf-train -q --model lr -e 1 --checkpoint-dir fresh odd2.tfrecord
	[[ "$stderr" == *"odd2.tfrecord: record 0: id 5 is not one of the model's $(distinct_ids wide.svm) ids"* ]]
}

@test "--oov-buckets N: the ids a table has no row for hash into N rows more (TensorFlow's num_oov_buckets): new data's, a stream's past its inferred vocabulary, served, evaluated and learned online; the schema says so; not with hashed ids" {
	clicks 2000 997 3 > wide.svm
	clicks 400 997 5 > new.svm # ids f * 997 + 5: none of wide's
	tf-csv2record -q -f libsvm -o wide.tfrecord wide.svm
	tf-csv2record -q -f libsvm -o new.tfrecord new.svm
	tf-train -q --model lr --oov-buckets 1 -e 2 --checkpoint-dir ck wide.tfrecord > /dev/null
	# the model's table: a row for each of wide's ids, and the bucket
	n=$(distinct_ids wide.svm)
	ckpt_schema "$(ls ck/model.ckpt-* | head -1)" | jq -e ".sparse.id_count == $n and .sparse.oov_buckets == 1"
	# resumed on data of none of its ids (refused without: above)
	run -0 tf-train -q --model lr -e 1 --checkpoint-dir ck new.tfrecord
	[[ "$output" == *'"examples":400,'* && "$output" == *'"oov-buckets":1'* ]]
	# ... and with another count of buckets, refused
	run -64 --separate-stderr tf-train -q --model lr --oov-buckets 2 -e 1 --checkpoint-dir ck new.tfrecord
	[[ "$stderr" == *"was trained with --oov-buckets 1, not 2"* ]]
	# served: ids 5 and 7 (no id of wide's) are the one bucket's weight,
	# each time it is named: logits 0, w, w and 2w past the bias's
	tf-export --checkpoint-dir ck --export-base exp > /dev/null
	start_server --model-base exp --model-name w --train-queue q
	curl -sf -d '{"instances": [{"ids": []}, {"ids": [5]}, {"ids": [7]}, {"ids": [5, 7]}]}' "$URL/v1/models/w:predict" > served.json
	jq -e '[.predictions[].probabilities[1] | (. / (1 - .) | log)] as $l
		| ($l[1] - $l[0]) as $w
		| ($w | fabs) > 1e-3 and ($l[2] - $l[0] - $w | fabs) < 1e-4 and ($l[3] - $l[0] - 2 * $w | fabs) < 1e-4' served.json
	p5=$(jq '.predictions[1].probabilities[1]' served.json)
	# evaluated the same
	echo "1 5:1" > five.svm
	tf-csv2record -q -f libsvm -o five.tfrecord five.svm
	run -0 tf-eval -d ck -p five.tfrecord
	jq -e --argjson p "$p5" '(.probabilities[1] - $p | fabs) < 1e-6' <<< "$output"
	# learned online: an id the model has no row of its own for trains
	run -0 curl -s -w ' %{http_code}' -d '{"instances": [{"ids": [5, 11]}], "labels": [1]}' "$URL/v1/models/w:train"
	[[ "$output" == *" 200" ]]
	# a stream: its schema inferred from its first 10,000 records (their
	# ids its vocabulary), the rows after with ids of their own
	clicks 10000 997 3 > first.svm
	cat first.svm new.svm | tf-csv2record -q -f libsvm > stream.tfrecord
	run -65 --separate-stderr tf-train -q --model lr -e 1 --checkpoint-dir s0 - < stream.tfrecord
	[[ "$stderr" == *"-: record 100"*": id "*" is not one of the model's $(distinct_ids first.svm) ids"*"--oov-buckets N hashes such ids into N rows more"* ]]
	run -0 --separate-stderr tf-train --model lr --oov-buckets 64 -e 1 --checkpoint-dir s1 - < stream.tfrecord
	[[ "$output" == *'"examples":10400,'* ]]
	[[ "$stderr" == *"inferred from its first 10000 records (sparse ids, up to 8 a row, the $(distinct_ids first.svm) ids seen in them, 64 out-of-vocabulary buckets,"* ]]
	# a table of a row for each id below max_index + 1: ids past it too
	jq -c 'del(.sparse.id_vocab, .sparse.id_count)' wide.tfrecord.schema.json > flat.schema.json
	tf-train -q --model lr --oov-buckets 3 -e 1 --schema flat.schema.json --checkpoint-dir flat wide.tfrecord > /dev/null
	clicks 200 997 1000003 > past.svm
	tf-csv2record -q -f libsvm -o past.tfrecord past.svm
	run -0 tf-train -q --model lr -e 1 --checkpoint-dir flat past.tfrecord
	[[ "$output" == *'"examples":200,'* ]]
	# hashed ids all have a row: not with buckets for the others
	run -64 --separate-stderr tf-train -q --model lr --oov-buckets 4 --hash-buckets 1024 -e 1 --checkpoint-dir h wide.tfrecord
	[[ "$stderr" == *"out-of-vocabulary buckets and hash buckets"* ]]
	run -64 --separate-stderr tf-train -q --model lr --oov-buckets 0 -e 1 --checkpoint-dir h0 wide.tfrecord
	[[ "$stderr" == *"--oov-buckets: '0' is not a whole number from 1 to"* ]]
}

@test "sparse ids beside numeric features in one model (TensorFlow's VarLenFeature pair and dense columns): schema --write keeps them, lr, dnn and wide_and_deep read both (the numbers standardised), tf-eval and tf-serve over REST agree (gRPC: tf-serve-grpc.bats; ONNX: the next test); a missing one is named" {
	protoc -I"$TOP/libtfcore/proto" --python_out=. example.proto
	/usr/bin/python3 "$TOP/tests/cli/mkmixex.py" . mix.tfrecord 1 800
	run -0 --separate-stderr tf-records schema --write mix.tfrecord
	[[ "$output" == *"800 records, 2 features, label 'label'"* ]]
	jq -e '[.features[].name] == ["age", "visits"] and .sparse.max_ids == 4' mix.tfrecord.schema.json
	# the same records with the ids alone: the age carries the label too
	jq -c '.features = []' mix.tfrecord.schema.json > ids.tfrecord.schema.json
	cp mix.tfrecord ids.tfrecord
	for m in lr dnn wide_and_deep; do
		tf-train -q --sparse --model $m --optimizer adagrad --learning-rate 0.1 -e 15 --checkpoint-dir $m mix.tfrecord > /dev/null
		tf-train -q --sparse --model $m --optimizer adagrad --learning-rate 0.1 -e 15 --checkpoint-dir $m-ids ids.tfrecord > /dev/null
		both=$(tf-eval -d $m mix.tfrecord | jq .auc)
		alone=$(tf-eval -d $m-ids ids.tfrecord | jq .auc)
		/usr/bin/python3 -c 'import sys; a, b = map(float, sys.argv[1:]); assert a > b + 0.02 and a > 0.9, (a, b)' "$both" "$alone"
	done
	# served: the first two records as instances, columnar inputs,
	# examples and gRPC tensors, each as tf-eval predicts them
	tf-records head -n 2 mix.tfrecord > two.jsonl
	inst=$(jq -sc '[.[] | {ids, values, age: .age[0], visits: .visits[0]}]' two.jsonl)
	want=$(tf-eval -d dnn -p mix.tfrecord | head -2 | jq -sc '[.[].probabilities[1]]')
	tf-export -d dnn --export-base exp > /dev/null
	start_server --model-base exp --model-name mix
	run -0 curl -s -d "{\"instances\": $inst}" "$URL/v1/models/mix:predict"
	[ "$(jq -c '[.predictions[].probabilities[1]]' <<< "$output")" = "$want" ]
	cols=$(jq -c '{ids: map(.ids), values: map(.values), age: map(.age), visits: map(.visits)}' <<< "$inst")
	run -0 curl -s -d "{\"inputs\": $cols}" "$URL/v1/models/mix:predict"
	[ "$(jq -c '.outputs.probabilities | map(.[1])' <<< "$output")" = "$want" ]
	run -0 curl -s -d "{\"examples\": $inst}" "$URL/v1/models/mix:classify"
	[ "$(jq -c '[.results[][1][1]]' <<< "$output")" = "$want" ]
	# a missing feature, an unknown one, a column that is not a feature
	run -0 curl -s -w ' %{http_code}' -d '{"instances": [{"ids": [1, 2], "age": 3}]}' "$URL/v1/models/mix:predict"
	[[ "$output" == *'expected {\"ids\": [...], \"values\": [...], NAME: number, ...} (a model of sparse ids and numeric features, each named'*" 400" ]]
	run -0 curl -s -w ' %{http_code}' -d '{"instances": [{"ids": [1, 2], "age": 3, "ids.1": 4}]}' "$URL/v1/models/mix:predict"
	[[ "$output" == *"'ids.1' is not one of the model's numeric features, a number"*" 400" ]]
	stop_server
	# resumed on the ids alone: refused, naming both
	run -65 --separate-stderr tf-train -q --sparse --model dnn -e 1 --checkpoint-dir dnn ids.tfrecord
	[[ "$stderr" == *"reads 2 numeric features beside its sparse ids; the data (ids.tfrecord.schema.json) has 0"* ]]
	# and a record without one of them names it
	jq -c '.features = [.features[0], (.features[0] | .name = "height")]' mix.tfrecord.schema.json > h.schema.json
	run -65 --separate-stderr tf-train -q --sparse --model lr -e 1 --schema h.schema.json --checkpoint-dir h mix.tfrecord
	[[ "$stderr" == *"mix.tfrecord: record 0: no feature 'height', one of the model's 2"* ]]
}

@test "ONNX export of sparse ids beside numeric features: inputs ids, values and features (the numbers in schema order, standardised in the graph); lr's and wide_and_deep's add a Sum; onnxruntime predicts as tf-eval" {
	node_libs onnxruntime-node
	protoc -I"$TOP/libtfcore/proto" --python_out=. example.proto
	/usr/bin/python3 "$TOP/tests/cli/mkmixex.py" . mix.tfrecord 2 600
	tf-records schema --write mix.tfrecord > /dev/null
	tf-records head -n 600 mix.tfrecord | jq -sc '[.[] | {ids, values, features: [.age[0], .visits[0]]}]' > mix.json
	for m in lr dnn wide_and_deep; do
		tf-train -q --sparse --model $m --optimizer adagrad --learning-rate 0.1 -e 5 --checkpoint-dir $m mix.tfrecord > /dev/null
		run -0 tf-export -d $m --format onnx -o $m.onnx
		/usr/bin/python3 -c 'import sys; b = open(sys.argv[1], "rb").read(); assert b"features" in b and b"standardize" in b' $m.onnx
		node "$TOP/tests/cli/exportcheck.js" onnx $m.onnx mix.json > $m.out
		tf-eval -d $m --predict mix.tfrecord > $m.eval
		[ "$(wc -l < $m.out)" = 600 ]
		same_positive $m.out $m.eval
	done
	# the numbers matter: another age gives other predictions
	jq -c 'map(.features[0] += 10)' mix.json > older.json
	node "$TOP/tests/cli/exportcheck.js" onnx dnn.onnx older.json > older.out
	! cmp -s dnn.out older.out
}

@test "the row-sparse steps (sgd, adagrad, ftrl, lazy_adam: only the rows a batch touched) are the dense steps' model bit for bit (the device path steps densely), with -j 2 too" {
	heart
	export TFKIT_CUDA_MODULE="$TFKIT_BUILD/tests/fake-gpu.so"
	args="-q --sparse --model lr --batch-size 16 --epochs 3 --seed 4"
	for opt in sgd adagrad ftrl lazy_adam; do
		tf-train $args --optimizer $opt --checkpoint-dir c-$opt hs.tfrecord > /dev/null
		tf-train $args --optimizer $opt --device cuda --checkpoint-dir g-$opt hs.tfrecord > /dev/null
		same_state c-$opt/model.ckpt-51 g-$opt/model.ckpt-51
	done
	tf-train $args -j 2 --optimizer adagrad --checkpoint-dir j2 hs.tfrecord > /dev/null
	tf-eval -d c-adagrad -p hs.tfrecord > one.json
	tf-eval -d j2 -p hs.tfrecord > two.json
	paste -d' ' <(jq '.probabilities[1]' one.json) <(jq '.probabilities[1]' two.json) |
		awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-6) bad++ } END { exit bad > 0 }'
	# a large table: each step whole on one thread, said once
	clicks 2000 1 5000 > c.svm
	tf-csv2record -q -f libsvm -o c.tfrecord c.svm
	tf-train -q --hash-buckets 200000 --model lr --optimizer adagrad -e 1 --checkpoint-dir l1 c.tfrecord > /dev/null
	run -0 --separate-stderr tf-train -q -j 2 --hash-buckets 200000 --model lr --optimizer adagrad -e 1 \
		--checkpoint-dir l2 c.tfrecord
	[[ "$stderr" == *"--threads: a model of large embedding tables updated row by row runs each step whole, on one thread"* ]]
	same_state l1/model.ckpt-16 l2/model.ckpt-16
}

@test "a sparse model resumes exactly: one epoch and another is two epochs, the same checkpoint; new data with more ids a row is refused, naming both" {
	heart
	args="-q --model lr --optimizer ftrl --learning-rate 0.5 -b 16"
	tf-train $args --sparse -e 2 --checkpoint-dir whole hs.tfrecord > /dev/null
	tf-train $args --sparse -e 1 --checkpoint-dir part hs.tfrecord > /dev/null
	# the checkpoint says it is sparse: no --sparse needed
	tf-train $args -e 1 --checkpoint-dir part hs.tfrecord > /dev/null
	same_state whole/model.ckpt-34 part/model.ckpt-34
	clicks 50 > more.svm
	tf-csv2record -q -f libsvm -o more.tfrecord more.svm
	run -65 --separate-stderr tf-train $args -e 1 --checkpoint-dir part more.tfrecord
	[[ "$stderr" == *"reads up to 13 sparse ids a row, ids below 14; the data (more.tfrecord.schema.json) has up to 8 a row, ids below "*"--hash-buckets N bounds the ids"* ]]
}

@test "dnn and wide_and_deep read sparse ids through an embedding bag (the ids' vectors weighted by their values); other models are refused" {
	clicks 4000 > c.svm
	tf-csv2record -q -f libsvm -o c.tfrecord c.svm
	# 1000 ids: dense rows unless --sparse (wide_and_deep reads them so)
	for m in dnn wide_and_deep; do
		tf-train -q --sparse --model $m --embedding-dim 8 --hidden 16 --optimizer adagrad --learning-rate 0.2 -e 4 \
			--checkpoint-dir $m c.tfrecord > $m.json
		auc=$(tf-eval -d $m c.tfrecord | jq .auc)
		echo "$m auc $auc"
		awk -v a="$auc" 'BEGIN { exit !(a > 0.8) }'
	done
	run -64 --separate-stderr tf-train -q --sparse --model cnn -e 1 c.tfrecord
	[[ "$stderr" == *"--model cnn does not read sparse ids: lr, dnn or wide_and_deep do"* ]]
	# --hash-buckets bounds the table (and the checkpoint)
	tf-train -q --model lr --hash-buckets 64 --optimizer sgd -e 1 --checkpoint-dir small c.tfrecord > /dev/null
	ckpt_schema small/model.ckpt-32 | jq -e '.sparse.hash_buckets == 64'
	[ "$(stat -c %s small/model.ckpt-32)" -lt 8000 ]
}

@test "bad sparse records: more ids than the schema's max_ids, ids and values that do not pair, no ids at all (other data), name the record" {
	heart
	tf-train -q --sparse --model lr --optimizer sgd -e 1 --checkpoint-dir m hs.tfrecord > /dev/null
	printf '1 1:1 2:1\n-1 3:1\n' > few.svm
	tf-csv2record -q -f libsvm -o few.tfrecord few.svm
	# a record of more ids than the model's schema allows
	printf '1 1:1 2:1 3:1 4:1 5:1 6:1 7:1 8:1 9:1 10:1 11:1 12:1 13:1 1:1\n' > many.svm
	tf-csv2record -q -f libsvm -o many.tfrecord many.svm
	run -65 --separate-stderr tf-eval -d m many.tfrecord
	[[ "$stderr" == *"many.tfrecord: record 0: 14 ids, more than the 13 a row the schema says (max_ids)"* ]]
	run -0 tf-eval -d m few.tfrecord
	# records of no 'ids' feature at all (other data, labelled alike)
	# are refused naming the record, not read as rows of no ids; a
	# record of an empty list is one of no ids
	printf 'x,label\n0.5,1\n0.2,-1\n' > other.csv
	tf-csv2record -q -o other.tfrecord other.csv
	cat few.tfrecord other.tfrecord > mixed.tfrecord
	msg="no int64 feature 'ids', the model's sparse ids (records of other data?  a record of no ids holds an empty list; --allow-missing reads one without as none)"
	run -65 --separate-stderr tf-eval -d m mixed.tfrecord
	[ "$stderr" = "tf-eval: mixed.tfrecord: record 2: $msg" ]
	run -0 tf-eval -d m --allow-missing mixed.tfrecord
	[[ "$output" == *'"examples":4,'* ]]
	run -65 --separate-stderr tf-train -q --schema hs.tfrecord.schema.json -e 1 --checkpoint-dir m other.tfrecord
	[ "$stderr" = "tf-train: other.tfrecord: record 0: $msg" ]
	# a label alone (what the fast reader sees first)
	printf 'label\n1\n' > lab.csv
	tf-csv2record -q -o lab.tfrecord lab.csv
	run -65 --separate-stderr tf-eval -d m lab.tfrecord
	[ "$stderr" = "tf-eval: lab.tfrecord: record 0: $msg" ]
	printf '1\n' > none.svm
	tf-csv2record -q -f libsvm -o none.tfrecord none.svm
	run -0 tf-eval -d m none.tfrecord
	[[ "$output" == *'"examples":1,'* ]]
}

@test "tf-serve: a sparse model over REST takes {ids, values} instances (values optional), columnar inputs and classify's examples, as tf-eval predicts; metadata says [-1, -1]; bad ids are a 400 naming them" {
	heart
	tf-train -q --sparse --model lr --optimizer adagrad --learning-rate 0.5 -e 3 --checkpoint-dir m hs.tfrecord > /dev/null
	tf-export --checkpoint-dir m --export-base exp > /dev/null
	start_server --model-base exp --model-name hs
	# the first record of heart_scale, as a client sends it
	body='{"instances": [{"ids": [1,2,3,4,5,6,7,8,9,10,12,13], "values": [0.708333,1,1,-0.320755,-0.105023,-1,1,-0.419847,-1,-0.225806,1,-1]}, {"ids": [3]}]}'
	run -0 curl -s -d "$body" "$URL/v1/models/hs:predict"
	got=$(jq '.predictions[0].probabilities[1]' <<< "$output")
	want=$(tf-eval -d m -p hs.tfrecord | head -1 | jq '.probabilities[1]')
	[ "$got" = "$want" ]
	one=$(jq '.predictions[1].probabilities[1]' <<< "$output")
	run -0 curl -s -d '{"inputs": {"ids": [[3]], "values": [[1]]}}' "$URL/v1/models/hs:predict"
	[ "$(jq '.outputs.probabilities[0][1]' <<< "$output")" = "$one" ]
	run -0 curl -s -d '{"examples": [{"ids": [3]}]}' "$URL/v1/models/hs:classify"
	[ "$(jq '.results[0][1][1]' <<< "$output")" = "$one" ]
	run -0 curl -s "$URL/v1/models/hs/metadata"
	jq -e '.metadata.signature_def.signature_def.serving_default.inputs.ids.tensor_shape.dim | map(.size) == ["-1", "-1"]' <<< "$output"
	run -0 curl -s -w '%{http_code}' -d '{"instances": [{"ids": [1, 99]}]}' "$URL/v1/models/hs:predict"
	[[ "$output" == *"instance 0: id 99 is beyond the model's (0 to 13)"*400 ]]
	run -0 curl -s -w '%{http_code}' -d '{"instances": [{"ids": [1, 2], "values": [1]}]}' "$URL/v1/models/hs:predict"
	[[ "$output" == *"instance 0: 2 ids but 1 values"*400 ]]
	run -0 curl -s -w '%{http_code}' -d '{"instances": [[1, 2]]}' "$URL/v1/models/hs:predict"
	[[ "$output" == *'expected {\"ids\": [...], \"values\": [...]}'*400 ]]
	stop_server
}

# ROWS.json for exportcheck.js from a libsvm FILE: each row's ids (one of
# 2^63 or more as the int64 of the same bits) and values, padded to WIDTH
# with id 0 and value 0; DROP=1 leaves each row's last id out, DROP=2 puts
# id 5 (value 1) in its place.
bag_rows() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
path, width, drop = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = []
for line in open(path):
    p = [t.split(":") for t in line.split()[1:]]
    ids, vals = [int(i) for i, _ in p], [float(v) for _, v in p]
    ids = [i - (1 << 64) if i >= 1 << 63 else i for i in ids]
    if drop:
        ids, vals = ids[:-1] + ([5] if drop == 2 else []), vals[:-1] + ([1.0] if drop == 2 else [])
    rows.append({"ids": ids + [0] * (width - len(ids)), "values": vals + [0.0] * (width - len(vals))})
print(json.dumps(rows))
PY
}

# Whether exportcheck.js's probabilities (A, one a line: the positive
# class's) are tf-eval --predict's (B) within 2e-6.
same_positive() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
a = [json.loads(l)[-1] for l in open(sys.argv[1])]
b = [json.loads(l)["probabilities"][1] for l in open(sys.argv[2])]
assert len(a) == len(b) and len(a) > 0, (len(a), len(b))
d = max(abs(x - y) for x, y in zip(a, b))
assert d < 2e-6, d
PY
}

@test "ONNX export of a sparse model: ids and values in, Gather, Mul and ReduceSum over its table (an id vocabulary's ids through ai.onnx.ml's LabelEncoder); onnxruntime predicts as tf-eval, sum and mean, wide_and_deep (a Sum), and an id without a row adds nothing; hashed ids and oov buckets hashed in the graph as tfkit hashes them" {
	node_libs onnxruntime-node
	heart
	tf-train -q --sparse --model lr --optimizer ftrl --learning-rate 0.5 -e 5 --checkpoint-dir lr hs.tfrecord > /dev/null
	run -0 tf-export -d lr --format onnx -o lr.onnx
	bag_rows "$DATA/heart_scale" 13 0 > rows.json
	node "$TOP/tests/cli/exportcheck.js" onnx lr.onnx rows.json > onnx.out
	tf-eval -d lr --predict hs.tfrecord > eval.out
	[ "$(wc -l < onnx.out)" = 270 ]
	same_positive onnx.out eval.out
	# a dnn of an id vocabulary (ids f * 997 + 3), the bag summed, and
	# a spec of the same with its mean
	clicks 1500 997 3 > wide.svm
	tf-csv2record -q -f libsvm -o wide.tfrecord wide.svm
	n=$(jq .sparse.id_count wide.tfrecord.schema.json)
	cat > mean.spec <<-EOF
	input x 8
	input ids 8 int64
	input label 1
	node bag embedding ids,x vocab=$n dim=4 combiner=mean
	node h1 dense bag units=8
	node a1 relu h1
	node logits dense a1 units=1
	EOF
	tf-train -q --model dnn --embedding-dim 4 --hidden 8 --optimizer adagrad --learning-rate 0.1 -e 2 --checkpoint-dir dnn wide.tfrecord > /dev/null
	tf-train -q --sparse --model-file mean.spec --optimizer adagrad --learning-rate 0.1 -e 2 --checkpoint-dir mean wide.tfrecord > /dev/null
	# wide_and_deep: two bags over the vocabulary, their Sum
	tf-train -q --model wide_and_deep --embedding-dim 4 --hidden 8 --optimizer adagrad --learning-rate 0.1 -e 2 --checkpoint-dir wd wide.tfrecord > /dev/null
	bag_rows wide.svm 8 0 > all.json
	bag_rows wide.svm 8 1 > fewer.json
	bag_rows wide.svm 8 2 > odd.json
	for m in dnn mean wd; do
		tf-export -d $m --format onnx -o $m.onnx > /dev/null
		# (one lookup, wide_and_deep's two bags too)
		/usr/bin/python3 -c 'import sys; b = open(sys.argv[1], "rb").read(); assert b.count(b"LabelEncoder") == 1 and b"ai.onnx.ml" in b' $m.onnx
		node "$TOP/tests/cli/exportcheck.js" onnx $m.onnx all.json > $m.out
		tf-eval -d $m --predict wide.tfrecord > $m.eval
		same_positive $m.out $m.eval
		# id 5 has no row: as if the row had one id fewer
		node "$TOP/tests/cli/exportcheck.js" onnx $m.onnx fewer.json > $m.fewer
		node "$TOP/tests/cli/exportcheck.js" onnx $m.onnx odd.json > $m.odd
		cmp $m.fewer $m.odd
		! cmp -s $m.out $m.fewer
	done
	# hashed ids (100 buckets, not a power of two; 64, a mask in tfkit),
	# and a vocabulary's with oov buckets: the graph hashes each id as
	# tfkit does, given ids of no row (one more than a vocabulary's,
	# 2^64-1 and 2^63, as the int64 of the same bits) and rows of fewer
	# ids (the unused places id 0, value 0)
	awk 'NR <= 300 { printf "%s", $1; for (i = 2; i <= NF - (NR % 4 == 0); i++) { split($i, a, ":"); id = a[1]
		if (i == 3) id += 1; if (NR % 7 == 0 && i == 2) id = "18446744073709551615"
		if (NR % 11 == 0 && i == 4) id = "9223372036854775808"; printf " %s:%s", id, a[2] } print "" }' wide.svm > new.svm
	grep -q " 18446744073709551615:1" new.svm
	tf-csv2record -q -f libsvm -o new.tfrecord new.svm
	bag_rows new.svm 8 0 > new.json
	for m in "h lr --hash-buckets 100" "h64 dnn --embedding-dim 4 --hidden 8 --hash-buckets 64" "oov lr --oov-buckets 7" "oovd dnn --embedding-dim 4 --hidden 8 --oov-buckets 3"; do
		set -- $m
		tf-train -q --model $2 ${@:3} --optimizer adagrad --learning-rate 0.1 -e 2 --checkpoint-dir $1 wide.tfrecord > /dev/null
		run -0 tf-export -d $1 --format onnx -o $1.onnx
		/usr/bin/python3 -c 'import sys; b = open(sys.argv[1], "rb").read(); assert b"BitwiseXor" in b and b"BitShift" in b and b"Mod" in b' $1.onnx
		node "$TOP/tests/cli/exportcheck.js" onnx $1.onnx new.json > $1.out
		tf-eval -d $1 --predict new.tfrecord > $1.eval
		[ "$(wc -l < $1.out)" = 300 ]
		same_positive $1.out $1.eval
	done
}

@test "TensorFlow.js export of a sparse model whose ids are its table's rows: inputs ids and values (and features), an Embedding, a Dot and a Dense of the identity; TensorFlow.js predicts as tf-eval, lr, dnn and wide_and_deep, numbers beside the ids; an id without a row adds nothing; hashed ids, an id vocabulary, oov buckets and a mean are refused, saying why" {
	node_libs @tensorflow/tfjs-layers
	heart
	bag_rows "$DATA/heart_scale" 13 0 > all.json
	bag_rows "$DATA/heart_scale" 13 1 > fewer.json
	# (after one id dropped, the last place is padding in every row)
	jq -c 'map(.ids[12] = 99 | .values[12] = 1)' fewer.json > past.json
	jq -c 'map(.ids[12] = -3 | .values[12] = 1)' fewer.json > below.json
	for m in lr "dnn --embedding-dim 4 --hidden 8" "wide_and_deep --embedding-dim 4 --hidden 8"; do
		d=${m%% *}
		tf-train -q --sparse --model $m --optimizer adagrad --learning-rate 0.1 -e 5 -d $d hs.tfrecord > /dev/null
		run -0 tf-export -d $d --format tfjs -o $d.tfjs
		jq -e '.modelTopology.config.input_layers == [["ids",0,0],["values",0,0]]' $d.tfjs/model.json
		jq -e '[.modelTopology.config.layers[].class_name] | index("Dot") != null and index("Embedding") != null' $d.tfjs/model.json
		node "$TOP/tests/cli/exportcheck.js" tfjs $d.tfjs all.json > $d.out 2> /dev/null
		tf-eval -d $d --predict hs.tfrecord > $d.eval
		[ "$(wc -l < $d.out)" = 270 ]
		same_positive $d.out $d.eval
		# ids 99 (past the table's 14 rows) and -3: as if not there
		node "$TOP/tests/cli/exportcheck.js" tfjs $d.tfjs fewer.json > $d.fewer 2> /dev/null
		node "$TOP/tests/cli/exportcheck.js" tfjs $d.tfjs past.json > $d.past 2> /dev/null
		node "$TOP/tests/cli/exportcheck.js" tfjs $d.tfjs below.json > $d.below 2> /dev/null
		cmp $d.fewer $d.past
		cmp $d.fewer $d.below
		! cmp -s $d.out $d.fewer
	done
	# numbers beside the ids: a third input, standardised in the model
	protoc -I"$TOP/libtfcore/proto" --python_out=. example.proto
	/usr/bin/python3 "$TOP/tests/cli/mkmixex.py" . mix.tfrecord 2 600
	tf-records schema --write mix.tfrecord > /dev/null
	tf-records head -n 600 mix.tfrecord | jq -sc '[.[] | {ids, values, features: [.age[0], .visits[0]]}]' > mix.json
	for m in lr dnn wide_and_deep; do
		tf-train -q --sparse --model $m --optimizer adagrad --learning-rate 0.1 -e 5 -d mix-$m mix.tfrecord > /dev/null
		run -0 tf-export -d mix-$m --format tfjs -o mix-$m.tfjs
		jq -e '.modelTopology.config.input_layers == [["ids",0,0],["values",0,0],["features",0,0]]' mix-$m.tfjs/model.json
		node "$TOP/tests/cli/exportcheck.js" tfjs mix-$m.tfjs mix.json > mix-$m.out 2> /dev/null
		tf-eval -d mix-$m --predict mix.tfrecord > mix-$m.eval
		[ "$(wc -l < mix-$m.out)" = 600 ]
		same_positive mix-$m.out mix-$m.eval
	done
	jq -c 'map(.features[0] += 10)' mix.json > older.json
	node "$TOP/tests/cli/exportcheck.js" tfjs mix-dnn.tfjs older.json > older.out 2> /dev/null
	! cmp -s mix-dnn.out older.out
	# what TensorFlow.js's layers cannot do: said, and nothing written
	tf-train -q --sparse --model lr --hash-buckets 100 -e 1 -d hashed hs.tfrecord > /dev/null
	clicks 300 997 3 > wide.svm
	tf-csv2record -q -f libsvm -o wide.tfrecord wide.svm
	tf-train -q --model lr -e 1 -d vocab wide.tfrecord > /dev/null
	tf-train -q --model lr --oov-buckets 7 -e 1 -d oov wide.tfrecord > /dev/null
	cat > mean.spec <<-EOF
	input x 13
	input ids 13 int64
	input label 1
	node bag embedding ids,x vocab=14 dim=4 combiner=mean
	node logits dense bag units=1
	EOF
	tf-train -q --sparse --model-file mean.spec -e 1 -d mean hs.tfrecord > /dev/null
	for c in "hashed:hashes its ids into buckets (--hash-buckets)" \
		"vocab:looks its ids up in their vocabulary (the schema's)" \
		"oov:looks its ids up in their vocabulary" \
		"mean:node 'bag' averages its ids (combiner=mean)"; do
		run -65 --separate-stderr tf-export -d ${c%%:*} --format tfjs -o no.tfjs
		[[ "$stderr" == "tf-export: TensorFlow.js export: "*"${c#*:}"*"; ONNX and the tfkit format serve it" ]]
		[ ! -e no.tfjs ]
	done
}

# The id tf-csv2record --hash-features gives a column (and a cell), as
# its man page says: FNV-1a, then splitmix64's finaliser.
feature_id() {
	/usr/bin/python3 - "$@" <<'PY'
import sys
M = (1 << 64) - 1
h = 0xcbf29ce484222325
data = sys.argv[1].encode() + (b"=" + sys.argv[2].encode() if len(sys.argv) > 2 else b"")
for b in data:
    h = ((h ^ b) * 0x100000001b3) & M
h ^= h >> 30; h = (h * 0xbf58476d1ce4e5b9) & M
h ^= h >> 27; h = (h * 0x94d049bb133111eb) & M
h ^= h >> 31
print(h - (1 << 64) if h >= 1 << 63 else h)
PY
}

@test "tf-csv2record --hash-features: a number as its column's id with its value (none for 0), any other cell as name=cell's, value 1; --hash-buckets bounds them; the model trains on them" {
	printf 'a,color,y\n2.5,red,1\n0,blue,0\n' > h.csv
	run -0 tf-csv2record -q --hash-features -o h.tfrecord h.csv
	run -0 tf-records cat --json h.tfrecord
	[ "${lines[0]}" = "{\"ids\":[$(feature_id a),$(feature_id color red)],\"values\":[2.5,1],\"y\":[1]}" ]
	[ "${lines[1]}" = "{\"ids\":[$(feature_id color blue)],\"values\":[1],\"y\":[0]}" ]
	run -0 grep -o '"layout":"libsvm"\|"features":\[\]\|"max_ids":2' h.tfrecord.schema.json
	[ "${#lines[@]}" -eq 3 ]
	run -0 tf-csv2record -q --hash-buckets 1000 -o hb.tfrecord h.csv
	jq -e '.sparse.max_index < 1000' hb.tfrecord.schema.json
	run -64 --separate-stderr tf-csv2record -q --hash-features -f libsvm -o x.tfrecord "$DATA/heart_scale"
	[[ "$stderr" == *"hashed features are CSV columns, not libsvm, packed or sequences"* ]]
	printf 'a,ids\n1,2\n' > l.csv
	run -64 --separate-stderr tf-csv2record -q --hash-features -o l.tfrecord l.csv
	[[ "$stderr" == *"the label 'ids' is taken by the hashed features"* ]]
	# categorical pairs a linear model of name=value ids learns
	shapes_csv 3000 > shapes.csv
	tf-csv2record -q --hash-features --drop size,weight -o s.tfrecord shapes.csv
	tf-train -q --model wide_and_deep --hidden 16 --optimizer adagrad --learning-rate 0.3 -e 10 \
		--checkpoint-dir s s.tfrecord > /dev/null
	acc=$(tf-eval -d s s.tfrecord | jq .accuracy)
	echo "accuracy $acc"
	awk -v a="$acc" 'BEGIN { exit !(a > 0.75) }'
}

@test "records of an int64 'ids' and a float 'values' list (TensorFlow's VarLenFeature pair) without a schema are sparse ids: inferred so, trained, and written so by tf-records schema --write" {
	heart
	mv hs.tfrecord bare.tfrecord
	rm hs.tfrecord.schema.json
	run -0 --separate-stderr tf-train -q --sparse --model lr --optimizer adagrad -e 2 --checkpoint-dir m bare.tfrecord
	[[ "$stderr" == *"bare.tfrecord has no schema: inferred from its first 270 records (sparse ids, up to 13 a row, below 14, label 'label', binary)"* ]]
	printf '1 3:0.5 18446744073709551615:2\n0 9223372036854775808:1\n1 7:1 8:1 9:1\n' > big.svm
	tf-csv2record -q -f libsvm --no-schema -o big.tfrecord big.svm
	[ ! -e big.tfrecord.schema.json ]
	run -0 tf-records schema --write big.tfrecord
	run -0 grep -o '"layout":"libsvm"\|"max_index":9223372036854775807,"max_ids":3' big.tfrecord.schema.json
	[ "${#lines[@]}" -eq 2 ]
	run -0 --separate-stderr tf-train -q --model lr --optimizer sgd -e 1 --checkpoint-dir b big.tfrecord
	run -0 tf-eval -d b big.tfrecord
	[[ "$output" == *'"examples":3,'* ]]
}
