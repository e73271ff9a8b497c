#!/bin/sh
# make demo: the pipeline on the bundled data.  Converts
# share/data/breast_cancer.csv to TFRecords with its schema, checks and
# inspects them, packs features for iris, shuffles and splits, then trains
# a dnn on the training rows, evaluates it on the test rows, exports it,
# and serves it (as a filter, then over the TF Serving REST API).
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
step tf-export --checkpoint-dir ck --export-base models/cancer
step tf-export --checkpoint-dir ck --export-base models/cancer --if-better auc
step ls models/cancer/1
echo
echo "\$ tf-records head -n 3 --raw cancer-00004-of-00005 | tf-serve --model-base models/cancer --stdin --stdin-format tfrecord"
tf-records head -n 3 --raw cancer-00004-of-00005 |
	tf-serve --model-base models/cancer --stdin --stdin-format tfrecord 2> /dev/null

# The REST server on a free loopback port, asked as a TF Serving client.
tf-serve --model-base models/cancer --model-name cancer --rest-api-port 0 \
	--listen-address 127.0.0.1 2> serve.log &
pid=$!
trap 'kill $pid 2> /dev/null || true' EXIT
port=
for _ in $(seq 100); do
	port=$(sed -n 's|.*REST API on http://[0-9.]*:\([0-9]*\)/.*|\1|p' serve.log)
	[ -n "$port" ] && break
	sleep 0.1
done
row=$(sed -n 2p "$data/breast_cancer.csv" | cut -d, -f1-30)
echo
echo "\$ tf-serve --model-base models/cancer --model-name cancer &"
cat serve.log
echo
echo "\$ curl -d '{\"instances\": [[$(echo "$row" | cut -c 1-40)...]]}' localhost:$port/v1/models/cancer:predict"
curl -s -d "{\"instances\": [[$row]]}" "http://127.0.0.1:$port/v1/models/cancer:predict"
echo
echo "\$ curl localhost:$port/v1/models/cancer"
curl -s "http://127.0.0.1:$port/v1/models/cancer"
kill -TERM $pid
wait $pid
trap - EXIT
echo
echo "demo output is in $out"
