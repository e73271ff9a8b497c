#!/bin/sh
# tests/gpu/models.sh - whole models on a real GPU against the CPU, each
# through the commands as users run them: every model kind this tree
# trains (dnn with batch norm and dropout, cnn, the Inception example,
# lstm, gru, bidirectional_lstm, sparse lr and dnn over libsvm ids), the
# same seed and batches on --device cpu and --device cuda (fp32).
#   - 20 steps on each device: the two checkpoints' predictions on the
#     held-out rows (both read by tf-eval on the CPU) within 2e-3;
#   - a GPU-trained checkpoint evaluated on the GPU as on the CPU
#     (tf-eval --device cuda), within 1e-4;
#   - the digits' cnn and lstm trained on the GPU to the issues' marks
#     (0.97 and 0.95 on the held-out rows).
# TAP.  Skips when no GPU is present (tf-train --device cuda exits 69).
#	sh tests/gpu/models.sh          (make check-gpu; the device kit)
# B: the build (default build); DATA: the datasets (default share/data).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 70
B=${B:-build}
DATA=${DATA:-share/data}
PATH=$top/$B/bin:$PATH
w=$(mktemp -d "${TMPDIR:-/tmp}/tfkit-gpu-models.XXXXXX") || exit 73
trap 'rm -rf "$w"' EXIT
n=0 failed=0
ok() { # RESULT NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2${3:+ # $3}"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2${3:+ # $3}"
	fi
}
# maxdiff A B: the largest difference between two tf-eval --predict
# outputs' numbers, line by line (every probability or value).
maxdiff() {
	paste -d'\n' "$1" "$2" | awk '
		{ gsub(/[^-0-9.e+]+/, " "); nf = split($0, v, " ")
		  if (NR % 2) { for (i = 1; i <= nf; i++) a[i] = v[i]; na = nf; next }
		  if (nf != na) { bad = 1 }
		  for (i = 1; i <= nf; i++) { d = a[i] - v[i]; if (d < 0) d = -d; if (d > m) m = d } }
		END { if (bad || NR == 0) print "mismatch"; else printf "%.3g\n", m }'
}
within() { # VALUE LIMIT
	[ "$1" != mismatch ] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'
}
cd "$w" || exit 70
if ! tf-csv2record -q "$top/$DATA/digits.csv" -o digits.tfrecord ||
	! tf-records split -n 5 -o dg digits.tfrecord ||
	! tf-csv2record -q "$top/$DATA/breast_cancer.csv" -o bc.tfrecord ||
	! tf-records split -n 5 -o bc bc.tfrecord ||
	! tf-csv2record -q -f libsvm "$top/$DATA/heart_scale" -o hs.tfrecord; then
	echo "Bail out! cannot convert the bundled data"
	exit 1
fi
DTRAIN="dg-00000-of-00005 dg-00001-of-00005 dg-00002-of-00005 dg-00003-of-00005"
DTEST=dg-00004-of-00005
BTRAIN="bc-00000-of-00005 bc-00001-of-00005 bc-00002-of-00005 bc-00003-of-00005"
BTEST=bc-00004-of-00005
tf-train -q --device cuda --epochs 0 --max-steps 1 --checkpoint-dir probe $BTRAIN > /dev/null 2> probe.err
rc=$?
if [ "$rc" = 69 ]; then
	echo "1..0 # SKIP $(head -n 1 probe.err)"
	exit 0
fi
d="--schema digits.tfrecord.schema.json"
# name|train files|test file|flags
cat > models.txt <<EOF
dnn, batch norm, dropout|$BTRAIN|$BTEST|--model dnn --hidden 32,16 --enable-bn --dropout-keep-prob 0.8
cnn 8x8x1|$DTRAIN|$DTEST|$d --model cnn --input-shape 8x8x1 --conv 32,64 --hidden 64
inception.spec|$DTRAIN|$DTEST|$d --model-file $top/share/examples/inception.spec
lstm 8x8|$DTRAIN|$DTEST|$d --model lstm --input-shape 8x8 --rnn-units 32 --hidden 32
gru 8x8|$DTRAIN|$DTEST|$d --model gru --input-shape 8x8 --rnn-units 32 --hidden 32
bidirectional_lstm 8x8|$DTRAIN|$DTEST|$d --model bidirectional_lstm --input-shape 8x8 --rnn-units 16
sparse lr, adagrad|hs.tfrecord|hs.tfrecord|--sparse --model lr --optimizer adagrad
sparse dnn, adam|hs.tfrecord|hs.tfrecord|--sparse --model dnn --hidden 16 --embedding-dim 8
EOF
i=0
while IFS='|' read -r name train test flags; do
	i=$((i + 1))
	a="-q --batch-size 32 --epochs 0 --max-steps 20 --seed 3 $flags"
	# shellcheck disable=SC2086
	if ! tf-train $a --checkpoint-dir c$i $train > /dev/null 2> c$i.err ||
		! tf-train $a --device cuda --checkpoint-dir g$i $train > /dev/null 2> g$i.err; then
		ok 1 "$name: 20 steps on the CPU and on the GPU" "$(tail -n 1 c$i.err g$i.err | tr '\n' ' ')"
		ok 1 "$name: tf-eval on the GPU as on the CPU"
		continue
	fi
	tf-eval -d c$i --predict "$test" > c$i.p 2> /dev/null
	tf-eval -d g$i --predict "$test" > g$i.p 2> /dev/null
	tf-eval -d g$i --device cuda --predict "$test" > e$i.p 2> e$i.err
	m=$(maxdiff c$i.p g$i.p)
	within "$m" 2e-3
	ok $? "$name: 20 steps on the CPU and on the GPU predict alike" "largest difference $m"
	m=$(maxdiff g$i.p e$i.p)
	within "$m" 1e-4
	ok $? "$name: tf-eval on the GPU as on the CPU" "largest difference $m"
done < models.txt
# trained through on the GPU: the issues' marks on the held-out rows
accuracy() { sed -n 's/.*"accuracy":\([0-9.]*\).*/\1/p'; }
tf-train -q --device cuda $d --model cnn --input-shape 8x8x1 --conv 32,64 --hidden 64 \
	--batch-size 32 --epochs 20 --checkpoint-dir cnn $DTRAIN > /dev/null 2> cnn.err
acc=$(tf-eval -d cnn "$DTEST" 2> /dev/null | accuracy)
within "0.97" "${acc:-0}"
ok $? "cnn 8x8x1 trained on the GPU: at least 0.97 on the held-out digits" "accuracy ${acc:-none} $(tail -n 1 cnn.err)"
tf-train -q --device cuda $d --model lstm --input-shape 8x8 --rnn-units 64 --hidden 64 \
	--batch-size 32 --epochs 30 --checkpoint-dir lstm $DTRAIN > /dev/null 2> lstm.err
acc=$(tf-eval -d lstm "$DTEST" 2> /dev/null | accuracy)
within "0.95" "${acc:-0}"
ok $? "lstm 8x8 trained on the GPU: at least 0.95 on the held-out digits" "accuracy ${acc:-none} $(tail -n 1 lstm.err)"
echo "1..$n"
[ "$failed" = 0 ]
