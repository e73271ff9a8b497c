#!/usr/bin/env bats
# Online learning over HTTP: POST :train (tf-serve --train-queue) checks
# examples against the model, queues them on disk before the 200, says
# 503 when the queue is full; tf-train --stream trains the queue; kill -9
# of either while a client posts loses no acknowledged example and
# trains none twice.

bats_require_minimum_version 1.5.0
load helpers

teardown() {
	kill_quietly "${SPID:-}" "${TPID:-}" "${CPID:-}"
}

# A model of breast_cancer.csv (lr, one epoch: 569 examples), exported
# as models/1; ex.json: every record as a :train example object.
model() {
	tf-csv2record -q -o all.tfrecord "$DATA/breast_cancer.csv"
	tf-train -q --model lr -b 16 --checkpoint-dir ck all.tfrecord > /dev/null
	tf-export -d ck --export-base models > /dev/null
	tf-records cat all.tfrecord | /usr/bin/python3 -c '
import json, sys
rows = [{k: (v[0] if isinstance(v, list) and len(v) == 1 else v)
         for k, v in json.loads(l).items()} for l in sys.stdin]
json.dump(rows, open("ex.json", "w"))'
}

# POST a body (file or text) to :train: the status, then the body.
post() {
	curl -s -o resp.json -w '%{http_code}' -X POST --data-binary "$1" "$URL/v1/models/model:train"
}

@test ":train: examples, instances with labels and columnar inputs are queued; bad ones are 400 naming why" {
	model
	start_server --model-base models --train-queue q
	/usr/bin/python3 -c '
import json
ex = json.load(open("ex.json"))
json.dump({"examples": ex[:10]}, open("b1.json", "w"))
inst = [{k: v for k, v in e.items() if k != "label"} for e in ex[10:15]]
json.dump({"instances": inst, "labels": [e["label"] for e in ex[10:15]]}, open("b2.json", "w"))
cols = {k: [e[k] for e in inst] for k in inst[0]}
json.dump({"inputs": cols, "labels": [e["label"] for e in ex[10:15]]}, open("b3.json", "w"))
json.dump({"instances": inst[:1], "labels": [7]}, open("bad-label.json", "w"))
bad = dict(inst[0]); bad["mean_radius"] = "big"
json.dump({"instances": [bad], "labels": [1]}, open("bad-value.json", "w"))
json.dump({"instances": inst[:2], "labels": [1]}, open("bad-count.json", "w"))
json.dump({"examples": inst[:1]}, open("no-label.json", "w"))'
	[ "$(post @b1.json)" = 200 ] && grep -q '"accepted": 10' resp.json
	[ "$(post @b2.json)" = 200 ] && grep -q '"accepted": 5' resp.json
	[ "$(post @b3.json)" = 200 ] && grep -q '"accepted": 5' resp.json
	[ "$(post @bad-label.json)" = 400 ] && grep -q "the label 7 is not one of the model's 2 classes" resp.json
	[ "$(post @bad-value.json)" = 400 ] && grep -q "mean_radius" resp.json
	[ "$(post @bad-count.json)" = 400 ] && grep -q "1 labels for 2 rows" resp.json
	[ "$(post @no-label.json)" = 400 ] && grep -q "has no label 'label'" resp.json
	[ "$(post '{"instances": [')" = 400 ] && grep -q "malformed JSON" resp.json
	# the queue holds the 20 accepted, as records the model's schema reads
	[ "$(tf-records count q/*.tfrecord | tail -1)" = 20 ] || [ "$(tf-records count q/*.tfrecord)" = 20 ]
	[ -s q/schema.json ]
	tf-records cat q/00000000000000000000.tfrecord | head -1 | grep -q '"label":\[1\]\|"label":\[0\]'
	curl -s "$URL/monitoring/prometheus/metrics" > m.txt
	grep -q 'tfkit_train_examples_total{result="accepted"} 20' m.txt
	grep -q 'tfkit_requests_total{model="model",method="train",code="400"} 5' m.txt
	grep -q '^tfkit_train_queue_bytes [1-9]' m.txt
	grep -q '^tfkit_model_examples_trained{model="model"} 569' m.txt
	stop_server
}

@test ":train: a full queue is 503 with Retry-After, the examples not queued; so is a model with no version loaded yet; a server without a queue says how to get one" {
	model
	start_server --model-base models --train-queue q --train-queue-max 6000
	/usr/bin/python3 -c '
import json
ex = json.load(open("ex.json"))
json.dump({"examples": ex[:5]}, open("b5.json", "w"))'
	[ "$(post @b5.json)" = 200 ]
	run curl -s -D hdr.txt -o resp.json -w '%{http_code}' -X POST --data-binary @b5.json "$URL/v1/models/model:train"
	[ "$output" = 503 ]
	grep -qi '^retry-after: 1' hdr.txt
	grep -q 'the training queue is full' resp.json
	[ "$(tf-records count q/00000000000000000000.tfrecord)" = 5 ]
	curl -s "$URL/monitoring/prometheus/metrics" | grep -q 'tfkit_train_examples_total{result="refused"} 5'
	stop_server
	# no version yet (a base still empty, as a server just started
	# before it loads one): wait and retry, nothing queued
	mkdir empty
	start_server --model-base empty --model-name model --train-queue q2 --poll-interval 0.1
	run curl -s -D hdr.txt -o resp.json -w '%{http_code}' -X POST --data-binary @b5.json "$URL/v1/models/model:train"
	[ "$output" = 503 ]
	grep -qi '^retry-after: 1' hdr.txt
	grep -q "model 'model' has no version loaded yet: retry later" resp.json
	[ "$(cat q2/*.tfrecord 2> /dev/null | wc -c)" = 0 ]
	cp -r models/1 empty/.incoming && mv empty/.incoming empty/1
	for _ in $(seq 50); do [ "$(post @b5.json)" = 200 ] && break; sleep 0.1; done
	grep -q '"accepted": 5' resp.json
	stop_server
	start_server --model-base models
	[ "$(post @b5.json)" = 404 ]
	grep -q 'tf-serve --train-queue DIR' resp.json
	stop_server
}

@test "tf-train --stream on the queue: trained segments are released after each checkpoint, the model published and served" {
	model
	start_server --model-base models --train-queue q --train-segment-bytes 4000 --poll-interval 0.2
	/usr/bin/python3 -c '
import json
ex = json.load(open("ex.json"))
for i in range(0, 100, 10):
    json.dump({"examples": ex[i:i + 10]}, open("b%d.json" % i, "w"))'
	for i in 0 10 20 30 40 50 60 70 80 90; do [ "$(post @b$i.json)" = 200 ]; done
	[ "$(ls q/*.tfrecord | wc -l)" -gt 3 ]
	tf-train -q --stream q -b 16 --save-every 2 --checkpoint-dir ck --export-base models \
		--export-every 0.5 > tr.json 2> tr.err &
	TPID=$!
	for i in $(seq 100); do
		grep -q '"examples_total":669,.*"exported":true' tr.json && break
		sleep 0.1
	done
	grep -q '"examples_total":669,.*"exported":true' tr.json
	# the segments before the checkpoint's are gone; the last stays
	[ "$(ls q/*.tfrecord | wc -l)" -le 2 ]
	# the server loads the new version and answers with it
	for i in $(seq 50); do
		curl -s "$URL/monitoring/prometheus/metrics" | grep -q 'tfkit_model_examples_trained{model="model"} 669' && break
		sleep 0.2
	done
	curl -s "$URL/monitoring/prometheus/metrics" | grep -q 'tfkit_model_examples_trained{model="model"} 669'
	kill -TERM "$TPID"
	wait "$TPID" || true
	TPID=
	stop_server
}

@test "kill -9 of the trainer and of the server while a client posts: every acknowledged example trained exactly once" {
	model
	port=$(free_ports 1)
	URL=http://127.0.0.1:$port
	serve() {
		tf-serve --rest-api-port "$port" --grpc-port off --listen-address 127.0.0.1 \
			--model-base models --train-queue q --poll-interval 0.2 2>> serve.log 3>&- &
		SPID=$!
	}
	train() {
		tf-train -q --stream q -b 8 --save-every 3 --checkpoint-dir ck --export-base models \
			--export-every 0.5 >> tr.json 2>> tr.err 3>&- &
		TPID=$!
	}
	serve
	for i in $(seq 100); do [ -d q ] && break; sleep 0.05; done
	train
	# the client: 120 requests of 5 examples, each retried until a 200
	# (a request the server died under may have been queued: counted)
	/usr/bin/python3 - "$URL" > client.txt 2>&1 3>&- <<'PY' &
import json, sys, time, urllib.request, urllib.error
url = sys.argv[1] + "/v1/models/model:train"
ex = json.load(open("ex.json"))
acked = unsure = 0
for i in range(120):
    body = json.dumps({"examples": [ex[(5 * i + k) % len(ex)] for k in range(5)]}).encode()
    while True:
        try:
            r = urllib.request.urlopen(urllib.request.Request(url, data=body, method="POST"), timeout=10)
            assert r.status == 200
            acked += 5
            break
        except urllib.error.HTTPError as e:
            assert e.code == 503, e.code
            time.sleep(0.1)
        except (urllib.error.URLError, ConnectionError, OSError):
            unsure += 5
            time.sleep(0.1)
    time.sleep(0.02)
print(acked, unsure)
PY
	CPID=$!
	# kills at random moments (said, to repeat a failure)
	a=$((RANDOM % 15 + 5)) b=$((RANDOM % 15 + 5)) c=$((RANDOM % 15 + 5))
	echo "# kill -9: the trainer after 1.$a s, the server 0.$b s on, the trainer 0.$c s after" >&3
	sleep "1.$a"
	kill -9 "$TPID"; wait "$TPID" || true
	train
	sleep "0.$b"
	kill -9 "$SPID"; wait "$SPID" || true
	sleep 0.3
	serve
	sleep "0.$c"
	kill -9 "$TPID"; wait "$TPID" || true
	train
	wait "$CPID"
	CPID=
	read -r acked unsure < client.txt
	[ "$acked" -eq 600 ]
	queued=$(tf-records count q/00000000000000000000.tfrecord)
	[ "$queued" -ge "$acked" ] && [ "$queued" -le $((acked + unsure)) ]
	# the trainer catches up: the model has trained 569 + every queued one
	want=$((569 + queued))
	for i in $(seq 150); do
		grep -q "\"examples_total\":$want,.*\"exported\":true" tr.json && break
		sleep 0.1
	done
	kill -TERM "$TPID"
	wait "$TPID" || true
	TPID=
	[ "$(grep '"final"' tr.json | tail -1 | sed 's/.*"examples_total":\([0-9]*\).*/\1/')" = "$want" ]
	# the server kept answering predictions through it all
	/usr/bin/python3 -c '
import json
e = json.load(open("ex.json"))[0]; e.pop("label")
json.dump({"instances": [e]}, open("p.json", "w"))'
	curl -sf -X POST --data-binary @p.json "$URL/v1/models/model:predict" | grep -q predictions
	# and never met a version half-written
	curl -s "$URL/monitoring/prometheus/metrics" | grep -q 'tfkit_model_load_failures_total{model="model"} 0'
	! grep -q 'refus\|damaged\|half' serve.log
	kill -TERM "$SPID"
	wait "$SPID"
	SPID=
}

@test "share/examples/train_client.py posts a CSV as :train examples; SIGUSR1 has the trainer checkpoint and publish at once" {
	model
	start_server --model-base models --train-queue q --poll-interval 0.2
	tf-train -q --stream q -b 16 --checkpoint-dir ck --export-base models \
		--export-every 3600 > tr.json 2> tr.err &
	TPID=$!
	run -0 /usr/bin/python3 "$TOP/share/examples/train_client.py" --server "$URL" \
		--schema all.tfrecord.schema.json --batch 50 "$DATA/breast_cancer.csv"
	[[ "$output" == '{"posted": 569, "accepted": 569, "retries": 0, "unsure": 0}' ]]
	[ "$(tf-records count q/00000000000000000000.tfrecord)" = 569 ]
	# an hour's --export-every: SIGUSR1 publishes now, the run goes on
	for i in $(seq 50); do
		[ "$(ls ck/model.ckpt-* 2> /dev/null | wc -l)" -ge 1 ] && break
		sleep 0.1
	done
	sleep 1
	kill -USR1 "$TPID"
	for i in $(seq 100); do
		grep -q '"examples_total":1138,.*"version":2,.*"exported":true' tr.json && break
		sleep 0.1
	done
	grep -q '"examples_total":1138,.*"version":2,.*"exported":true' tr.json
	kill -0 "$TPID"
	kill -TERM "$TPID"
	wait "$TPID" || true
	TPID=
	# a row the model refuses stops the client with the server's message
	printf 'mean_radius,label\n1,1\n' > few.csv
	run /usr/bin/python3 "$TOP/share/examples/train_client.py" --server "$URL" \
		--schema all.tfrecord.schema.json few.csv
	[ "$status" -ne 0 ]
	[[ "$output" == *"train_client: 400:"* ]]
	stop_server
}
