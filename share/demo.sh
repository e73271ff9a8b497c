#!/bin/sh
# make demo: the pipeline on the bundled data.  Converts
# share/data/breast_cancer.csv to TFRecords with its schema, checks and
# inspects them, packs features for iris, shuffles and splits, then trains
# a dnn on the training rows and evaluates it on the test rows.
set -eu
B=${B:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
PATH="$top/$B/bin:$PATH"
out="$top/$B/demo"
rm -rf "$out"
mkdir -p "$out"
cd "$out"
data="$top/share/data"

step() { printf '\n$ %s\n' "$*"; "$@"; }

step tf-csv2record "$data/breast_cancer.csv" -o cancer.tfrecord
step tf-records verify cancer.tfrecord
step tf-records count cancer.tfrecord
echo
echo "\$ tf-records head -n 2 cancer.tfrecord | cut -c 1-150"
tf-records head -n 2 cancer.tfrecord | cut -c 1-150
echo
echo "\$ head -c 300 cancer.tfrecord.schema.json"
head -c 300 cancer.tfrecord.schema.json
echo " ..."
step tf-records schema cancer.tfrecord
step tf-csv2record --pack-features features -z gzip "$data/iris.csv" -o iris.tfrecord.gz
step tf-records head -n 3 iris.tfrecord.gz
echo
echo "\$ tf-records shuffle --seed 1 cancer.tfrecord | tf-records split -n 2 -o shard"
tf-records shuffle --seed 1 cancer.tfrecord | tf-records split -n 2 -o shard
step tf-records count shard-00000-of-00002 shard-00001-of-00002
echo
echo "\$ tf-records split -n 5 -o cancer cancer.tfrecord   # test rows: index % 5 == 4"
tf-records split -n 5 -o cancer cancer.tfrecord
step tf-train -q --schema cancer.tfrecord.schema.json --epochs 40 --batch-size 32 \
	--learning-rate 0.003 --steps-to-validate 200 --validate cancer-00004-of-00005 \
	--checkpoint-dir ck cancer-00000-of-00005 cancer-00001-of-00005 \
	cancer-00002-of-00005 cancer-00003-of-00005
step tf-eval --checkpoint-dir ck --human cancer-00004-of-00005
echo
echo "\$ tf-eval -d ck --predict cancer-00004-of-00005 | head -n 3"
tf-eval -d ck --predict cancer-00004-of-00005 > predictions.json
head -n 3 predictions.json
echo
echo "demo output is in $out"
