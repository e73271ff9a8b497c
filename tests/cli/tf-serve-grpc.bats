#!/usr/bin/env bats
# tf-serve's gRPC API, called as TF Serving's Python clients call it
# (grpcio, stubs generated from the project's protos): Predict, Classify,
# Regress, GetModelMetadata and GetModelStatus answer as tf-eval and the
# REST API do; every error has TF Serving's code and message; hot reload
# under gRPC load fails no call; the port options.

bats_require_minimum_version 1.5.0
load helpers

# Stubs, and five models: breast cancer by column and packed, iris
# (multiclass), diabetes (regression), shapes (categorical strings).
setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	P=$TOP/libtfcore/proto
	mkdir pb
	(cd "$P" && /usr/bin/python3 -m grpc_tools.protoc -I. -I/usr/include \
		--python_out="$BATS_FILE_TMPDIR/pb" --grpc_python_out="$BATS_FILE_TMPDIR/pb" \
		example.proto tensorflow/*/*/*.proto tensorflow_serving/*/*.proto)
	tf-csv2record "$DATA/breast_cancer.csv" -o bc.tfrecord
	tf-train -q --epochs 5 --batch-size 32 --checkpoint-dir ck bc.tfrecord > /dev/null
	tf-export -d ck --export-base bc > /dev/null
	tf-csv2record --pack-features features "$DATA/breast_cancer.csv" -o bcp.tfrecord
	tf-train -q --epochs 5 --batch-size 32 --checkpoint-dir pck bcp.tfrecord > /dev/null
	tf-export -d pck --export-base bcp > /dev/null
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	tf-train -q --epochs 10 --batch-size 16 --checkpoint-dir ick iris.tfrecord > /dev/null
	tf-export -d ick --export-base iris > /dev/null
	tf-csv2record "$DATA/diabetes_regression.csv" -o diab.tfrecord
	tf-train -q --task regression --epochs 5 --batch-size 32 --checkpoint-dir dck diab.tfrecord > /dev/null
	tf-export -d dck --export-base diab > /dev/null
	shapes_csv 600 > shapes.csv
	tf-csv2record shapes.csv -o shapes.tfrecord
	tf-train -q --model wide_and_deep --crosses 'color*shape' --hidden "8" \
		--epochs 3 --checkpoint-dir sck shapes.tfrecord > /dev/null
	tf-export -d sck --export-base shapes > /dev/null
	printf '{"models": [%s]}' "$(for m in bc bcp iris diab shapes; do
		printf '{"name": "%s", "base_path": "%s"},' $m "$BATS_FILE_TMPDIR/$m"; done | sed 's/,$//')" > all.conf
	tf-records head -n 3 --raw bc.tfrecord | tf-eval -d ck --predict > bc.expected
	tf-records head -n 3 --raw bcp.tfrecord | tf-eval -d pck --predict > bcp.expected
	tf-records head -n 3 --raw iris.tfrecord | tf-eval -d ick --predict > iris.expected
	tf-records head -n 3 --raw diab.tfrecord | tf-eval -d dck --predict > diab.expected
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	F=$BATS_FILE_TMPDIR
	export PB=$F/pb PYTHONPATH=$TOP/tests/cli DATA F
}

teardown() {
	kill_quietly "${SPID:-}"
}

# start_server (helpers.bash), then wait until every model is loaded.
start_ready() {
	start_server "$@" || return 1
	for _ in $(seq 200); do
		curl -sf -o /dev/null "$URL/readyz" && return 0
		sleep 0.05
	done
	cat serve.log
	return 1
}

@test "--help lists the gRPC port; the man page documents the services" {
	run -0 --separate-stderr tf-serve --help
	[[ "$output" == *"--grpc-port=PORT"* ]]
	[[ "$output" == *"also spelled --port"* ]]
	run -0 man -l "$TOP/man/man1/tf-serve.1"
	[[ "$output" == *"tensorflow.serving.PredictionService"* ]]
	[[ "$output" == *"GetModelStatus"* ]]
}

@test "Predict: named tensors and a packed matrix answer as tf-eval --predict and REST" {
	start_ready --model-config-file "$F/all.conf"
	/usr/bin/python3 - <<'PY'
import csv, json, os
import tfgrpc
from tfgrpc import types_pb2
F = os.environ["F"]
rows = list(csv.reader(open(os.environ["DATA"] + "/breast_cancer.csv")))
head, rows = rows[0][:-1], [[float(v) for v in r[:-1]] for r in rows[1:4]]
pred, _ = tfgrpc.stubs(os.environ["GPORT"])

def check(resp, expected):
    want = [json.loads(l) for l in open(F + "/" + expected)]
    p = resp.outputs["probabilities"]
    assert [d.size for d in p.tensor_shape.dim] == [3, 2], p.tensor_shape
    got = tfgrpc.values(p)
    for r, w in enumerate(want):
        assert tfgrpc.close(got[2 * r:2 * r + 2], w["probabilities"]), (got, w)
    assert tfgrpc.values(resp.outputs["class_ids"]) == [w["class_ids"] for w in want]
    assert tfgrpc.values(resp.outputs["classes"]) == [w["classes"] for w in want]
    return got

# per-column: one [3] tensor per feature, as TF Serving's estimators take
cols = {h: [r[i] for r in rows] for i, h in enumerate(head)}
r = pred.Predict(tfgrpc.predict("bc", cols), 5.0)
assert r.model_spec.name == "bc" and r.model_spec.version.value == 1, r.model_spec
assert r.model_spec.signature_name == "serving_default", r.model_spec
by_col = check(r, "bc.expected")
# [3, 1] shapes, doubles in tensor_content, int64 for integral columns
cols2 = {h: tfgrpc.tensor(v, [3, 1], types_pb2.DT_DOUBLE, content=True)
         for h, v in cols.items()}
assert tfgrpc.values(pred.Predict(tfgrpc.predict("bc", cols2), 5.0)
                     .outputs["probabilities"]) == by_col
# the packed model: one [3, 30] float matrix named as the list
r = pred.Predict(tfgrpc.predict("bcp", {"features": rows}), 5.0)
packed = check(r, "bcp.expected")
t = tfgrpc.tensor([v for row in rows for v in row], [3, 30], content=True)
assert tfgrpc.values(pred.Predict(tfgrpc.predict("bcp", {"features": t}), 5.0)
                     .outputs["probabilities"]) == packed
# and its features by name too, as REST takes them
assert tfgrpc.values(pred.Predict(tfgrpc.predict("bcp", cols), 5.0)
                     .outputs["probabilities"]) == packed
# REST :predict of the same rows: the same numbers as TF Serving prints them
import urllib.request
for model, got in (("bc", by_col), ("bcp", packed)):
    body = json.dumps({"instances": rows}).encode()
    rest = json.loads(urllib.request.urlopen(
        os.environ["URL"] + "/v1/models/%s:predict" % model, body).read())
    flat = [p for x in rest["predictions"] for p in x["probabilities"]]
    assert tfgrpc.close(got, flat), (model, got, flat)
# REST takes the packed list by name as well
body = json.dumps({"instances": [{"features": row} for row in rows]}).encode()
rest = json.loads(urllib.request.urlopen(
    os.environ["URL"] + "/v1/models/bcp:predict", body).read())
assert tfgrpc.close(packed, [p for x in rest["predictions"] for p in x["probabilities"]])
# output_filter, a named version, regression and multiclass outputs
r = pred.Predict(tfgrpc.predict("bcp", {"features": rows}, version=1,
                                outputs=["class_ids"]), 5.0)
assert list(r.outputs) == ["class_ids"], list(r.outputs)
d = list(csv.reader(open(os.environ["DATA"] + "/diabetes_regression.csv")))
dh, drows = d[0][:-1], [[float(v) for v in x[:-1]] for x in d[1:4]]
r = pred.Predict(tfgrpc.predict("diab", {h: [x[i] for x in drows] for i, h in enumerate(dh)}), 5.0)
want = [json.loads(l) for l in open(F + "/diab.expected")]
assert list(r.outputs) == ["predictions"], list(r.outputs)
assert tfgrpc.close(tfgrpc.values(r.outputs["predictions"]), want, 1e-5), (r, want)
i = list(csv.reader(open(os.environ["DATA"] + "/iris.csv")))
ih, irows = i[0][:-1], [[float(v) for v in x[:-1]] for x in i[1:4]]
r = pred.Predict(tfgrpc.predict("iris", {h: [x[k] for x in irows] for k, h in enumerate(ih)}), 5.0)
want = [json.loads(l) for l in open(F + "/iris.expected")]
assert [d.size for d in r.outputs["probabilities"].tensor_shape.dim] == [3, 3]
assert tfgrpc.values(r.outputs["classes"]) == [w["classes"] for w in want], r
print("ok")
PY
	stop_server
}

@test "Classify and Regress take Examples (with a context) as REST's :classify and :regress" {
	start_ready --model-config-file "$F/all.conf"
	/usr/bin/python3 - <<'PY'
import csv, json, os, urllib.request
import tfgrpc
pred, _ = tfgrpc.stubs(os.environ["GPORT"])
U = os.environ["URL"]

def rest(path, body):
    return json.loads(urllib.request.urlopen(U + path, json.dumps(body).encode()).read())

rows = list(csv.reader(open(os.environ["DATA"] + "/breast_cancer.csv")))
named = [dict(zip(rows[0][:-1], map(float, r[:-1]))) for r in rows[1:4]]
for model in ("bc", "bcp"):
    r = pred.Classify(tfgrpc.classify(model, named), 5.0)
    w = rest("/v1/models/%s:classify" % model, {"examples": named})["results"]
    assert len(r.result.classifications) == 3
    for got, want in zip(r.result.classifications, w):
        assert [c.label for c in got.classes] == [x[0] for x in want], (got, want)
        assert tfgrpc.close([c.score for c in got.classes], [x[1] for x in want]), (got, want)
    r = pred.Regress(tfgrpc.regress(model, named), 5.0)
    w = rest("/v1/models/%s:regress" % model, {"examples": named})["results"]
    assert tfgrpc.close([x.value for x in r.result.regressions], w), (r, w)
    assert r.model_spec.name == model and r.model_spec.version.value == 1
# the packed model's Example as training saw it: one float list
r = pred.Classify(tfgrpc.classify("bcp", [{"features": list(x.values())} for x in named]), 5.0)
w = rest("/v1/models/bcp:classify", {"examples": named})["results"]
assert tfgrpc.close([c.score for c in r.result.classifications[0].classes], [x[1] for x in w[0]])
# a context holds what every example shares
ctx = {k: v for k, v in named[0].items() if k.startswith("worst")}
part = [{k: v for k, v in x.items() if not k.startswith("worst")} for x in named]
r2 = pred.Classify(tfgrpc.classify("bc", part, context=ctx), 5.0)
w2 = rest("/v1/models/bc:classify", {"examples": part, "context": ctx})["results"]
assert tfgrpc.close([c.score for c in r2.result.classifications[2].classes], [x[1] for x in w2[2]])
# multiclass labels, a regression's values
i = list(csv.reader(open(os.environ["DATA"] + "/iris.csv")))
inamed = [dict(zip(i[0][:-1], map(float, x[:-1]))) for x in i[1:3]]
r = pred.Classify(tfgrpc.classify("iris", inamed), 5.0)
w = rest("/v1/models/iris:classify", {"examples": inamed})["results"]
assert [c.label for c in r.result.classifications[0].classes] == [x[0] for x in w[0]]
d = list(csv.reader(open(os.environ["DATA"] + "/diabetes_regression.csv")))
dnamed = [dict(zip(d[0][:-1], map(float, x[:-1]))) for x in d[1:4]]
r = pred.Regress(tfgrpc.regress("diab", dnamed), 5.0)
w = rest("/v1/models/diab:regress", {"examples": dnamed})["results"]
assert tfgrpc.close([x.value for x in r.result.regressions], w, 1e-5), (r, w)
# categorical features as strings, by tensor and by Example
s = {"size": [0.1, 0.1], "weight": [5.0, 5.0], "color": ["red", "green"], "shape": ["circle", "circle"]}
from tfgrpc import types_pb2
inputs = {k: tfgrpc.tensor(v, None, types_pb2.DT_STRING if isinstance(v[0], str) else types_pb2.DT_FLOAT)
          for k, v in s.items()}
r = pred.Predict(tfgrpc.predict("shapes", inputs), 5.0)
w = rest("/v1/models/shapes:predict", {"instances": [{k: v[j] for k, v in s.items()} for j in range(2)]})
assert tfgrpc.close(tfgrpc.values(r.outputs["probabilities"]),
                    [p for x in w["predictions"] for p in x["probabilities"]])
ex = [{k: v[j] for k, v in s.items()} for j in range(2)]
r = pred.Classify(tfgrpc.classify("shapes", ex), 5.0)
assert tfgrpc.close([c.score for c in r.result.classifications[1].classes],
                    w["predictions"][1]["probabilities"])
print("ok")
PY
	stop_server
}

@test "GetModelMetadata and GetModelStatus: the signatures REST shows, each version's state" {
	start_ready --model-config-file "$F/all.conf"
	/usr/bin/python3 - <<'PY'
import json, os, urllib.request
import tfgrpc
from tfgrpc import types_pb2
pred, ms = tfgrpc.stubs(os.environ["GPORT"])
for model in ("bc", "bcp", "iris", "diab", "shapes"):
    r = pred.GetModelMetadata(tfgrpc.metadata(model), 5.0)
    assert r.model_spec.name == model and r.model_spec.version.value == 1
    sig = tfgrpc.signatures(r)
    rest = json.loads(urllib.request.urlopen(os.environ["URL"] + "/v1/models/%s/metadata" % model).read())
    rs = rest["metadata"]["signature_def"]["signature_def"]
    assert sorted(sig) == sorted(rs), (sorted(sig), sorted(rs))
    for name, d in sig.items():
        assert d.method_name == rs[name]["method_name"]
        for part in ("inputs", "outputs"):
            got = {k: (types_pb2.DataType.Name(v.dtype), [x.size for x in v.tensor_shape.dim], v.name)
                   for k, v in getattr(d, part).items()}
            want = {k: (v["dtype"], [int(x["size"]) for x in v["tensor_shape"]["dim"]], v["name"])
                    for k, v in rs[name][part].items()}
            assert got == want, (model, name, part, got, want)
bcp = tfgrpc.signatures(pred.GetModelMetadata(tfgrpc.metadata("bcp"), 5.0))["serving_default"]
f = bcp.inputs["features"]
assert list(bcp.inputs) == ["features"] and [d.size for d in f.tensor_shape.dim] == [-1, 30], bcp
assert sorted(bcp.outputs) == ["class_ids", "classes", "probabilities"], bcp.outputs
r = ms.GetModelStatus(tfgrpc.status("bc"), 5.0)
assert len(r.model_version_status) == 1
v = r.model_version_status[0]
assert v.version == 1 and v.state == 30 and v.status.error_code == 0, v  # AVAILABLE, OK
assert ms.GetModelStatus(tfgrpc.status("bc", 1), 5.0).model_version_status[0].version == 1
print("ok")
PY
	stop_server
}

@test "errors: TF Serving's codes and messages, the server unharmed" {
	start_ready --model-config-file "$F/all.conf" --max-request-rows 4 --max-body-bytes 65536
	/usr/bin/python3 - <<'PY'
import os
import grpc
import tfgrpc
from tfgrpc import types_pb2
pred, ms = tfgrpc.stubs(os.environ["GPORT"])
P = pred.Predict
row = [[1.0] * 30]
cases = [
    (P, tfgrpc.predict("nope", {"features": row}), "NOT_FOUND", "Servable not found for request: Latest(nope)"),
    (P, tfgrpc.predict("bcp", {"features": row}, version=9), "NOT_FOUND", "Servable not found for request: Specific(bcp, 9)"),
    (P, tfgrpc.predict("bcp", {"pixels": row}), "INVALID_ARGUMENT", "input tensor alias not found in signature: pixels. Inputs expected to be in the set {features}."),
    (P, tfgrpc.predict("bcp", {}), "INVALID_ARGUMENT", "the request has no inputs"),
    (P, tfgrpc.predict("bc", {"mean_radius": [1.0]}), "INVALID_ARGUMENT", "missing input 'mean_texture' (the signature has 30)"),
    (P, tfgrpc.predict("bcp", {"features": [1.0] * 30}), "INVALID_ARGUMENT", "input 'features' has shape [-1, 30]; got [30]"),
    (P, tfgrpc.predict("bcp", {"features": [[1.0] * 29]}), "INVALID_ARGUMENT", "input 'features' has shape [-1, 30]; got [1, 29]"),
    (P, tfgrpc.predict("bcp", {"features": tfgrpc.tensor([1.0] * 7, [1, 30])}), "INVALID_ARGUMENT", "input 'features': 7 values for its shape of 30"),
    (P, tfgrpc.predict("bcp", {"features": tfgrpc.tensor(["a"] * 30, [1, 30], types_pb2.DT_STRING)}), "INVALID_ARGUMENT", "input 'features' takes numbers (DT_FLOAT, DT_DOUBLE or an integer type); got DT_STRING"),
    (P, tfgrpc.predict("shapes", {"size": [1.0], "weight": [1.0], "color": [2.0], "shape": tfgrpc.tensor(["star"], None, types_pb2.DT_STRING)}), "INVALID_ARGUMENT", "input 'color' takes DT_STRING (a categorical feature); got DT_FLOAT"),
    (P, tfgrpc.predict("bcp", {"features": row * 5}), "INVALID_ARGUMENT", "5 rows, more than the limit of 4"),
    (P, tfgrpc.predict("bcp", {"features": tfgrpc.tensor([], [0, 30])}), "INVALID_ARGUMENT", "input 'features' holds no rows"),
    (P, tfgrpc.predict("bcp", {"features": row}, signature="nope"), "FAILED_PRECONDITION", 'Serving signature key "nope" not found.'),
    (P, tfgrpc.predict("", {"features": row}), "INVALID_ARGUMENT", "ModelSpec has no name specified."),
    (P, tfgrpc.predict("bcp", {"features": row}, outputs=["logits"]), "INVALID_ARGUMENT", "output tensor alias not found in signature: logits Outputs expected to be in the set {probabilities,class_ids,classes}."),
    (pred.Classify, tfgrpc.classify("diab", [{"age": 1.0}]), "INVALID_ARGUMENT", "example 0: no feature 'sex' (tf-serve --allow-missing counts a missing feature as its training mean)"),
    (pred.Classify, tfgrpc.classify("bcp", []), "INVALID_ARGUMENT", "Input is empty."),
    (pred.Classify, tfgrpc.classify("bcp", [{"features": [1.0] * 3}]), "INVALID_ARGUMENT", "example 0: feature 'features' has 3 values, the model takes 30"),
    (pred.Classify, tfgrpc.classify("shapes", [{"size": 1.0, "weight": 1.0, "color": 1.0, "shape": "star"}]), "INVALID_ARGUMENT", "example 0: feature 'color' is categorical: expected a bytes_list"),
    (pred.Regress, tfgrpc.regress("iris", [{"sepal_length": 1.0}]), "INVALID_ARGUMENT", "example 0: no feature 'sepal_width' (tf-serve --allow-missing counts a missing feature as its training mean)"),
    (pred.GetModelMetadata, tfgrpc.metadata("bcp", fields=()), "INVALID_ARGUMENT", "GetModelMetadataRequest must specify at least one metadata_field"),
    (pred.GetModelMetadata, tfgrpc.metadata("bcp", fields=("graph",)), "INVALID_ARGUMENT", "Metadata field graph is not supported"),
    (ms.GetModelStatus, tfgrpc.status("bcp", 7), "NOT_FOUND", "Could not find version 7 of model bcp"),
    (ms.GetModelStatus, tfgrpc.status("nope"), "NOT_FOUND", "Could not find any versions of model nope"),
]
for call, req, code, msg in cases:
    got = tfgrpc.error(call, req, 5.0)
    assert got == (code, msg), (req, got, (code, msg))
# inputs of two batch sizes (map order is the client's)
code, msg = tfgrpc.error(P, tfgrpc.predict("bc", {"mean_radius": [1.0, 2.0], "mean_texture": [1.0]}), 5.0)
assert code == "INVALID_ARGUMENT" and msg.endswith("(all inputs must share the batch size)"), msg
# a regression has no classification signature, a multiclass model no regression one
d = {"age": 1.0, "sex": 1.0, "bmi": 1.0, "bp": 1.0, "s1": 1.0, "s2": 1.0, "s3": 1.0, "s4": 1.0, "s5": 1.0, "s6": 1.0}
code, msg = tfgrpc.error(pred.Classify, tfgrpc.classify("diab", [d]), 5.0)
assert code == "INVALID_ARGUMENT" and "no classification signature" in msg, msg
i = {"sepal_length": 1.0, "sepal_width": 1.0, "petal_length": 1.0, "petal_width": 1.0}
code, msg = tfgrpc.error(pred.Regress, tfgrpc.regress("iris", [i]), 5.0)
assert code == "INVALID_ARGUMENT" and "no regression signature" in msg, msg
# a version label: tf-serve serves by number
r = tfgrpc.predict("bcp", {"features": row}); r.model_spec.version_label = "stable"
assert tfgrpc.error(P, r, 5.0)[0] == "INVALID_ARGUMENT"
# bytes that are not a PredictRequest; a method TF Serving has and tf-serve does not
ch = grpc.insecure_channel("127.0.0.1:" + os.environ["GPORT"])
raw = ch.unary_unary("/tensorflow.serving.PredictionService/Predict")
assert tfgrpc.error(raw, b"\xff\xff\xff", 5.0) == ("INVALID_ARGUMENT", "the request is not a valid tensorflow.serving.PredictRequest")
mi = ch.unary_unary("/tensorflow.serving.PredictionService/MultiInference")
assert tfgrpc.error(mi, b"", 5.0) == ("UNIMPLEMENTED", "Method not found: /tensorflow.serving.PredictionService/MultiInference")
# a message over --max-body-bytes
big = tfgrpc.predict("bcp", {"features": tfgrpc.tensor([1.0] * 30 * 600, [600, 30])})
assert tfgrpc.error(P, big, 5.0)[0] == "RESOURCE_EXHAUSTED"
# a compressed call (gzip, and deflate) answers as a plain one
plain = P(tfgrpc.predict("bcp", {"features": row}), 5.0)
for c in (grpc.Compression.Gzip, grpc.Compression.Deflate):
    assert P(tfgrpc.predict("bcp", {"features": row}), 5.0, compression=c) == plain
# still answering
assert len(P(tfgrpc.predict("bcp", {"features": row}), 5.0).outputs) == 3
# a framed request body for curl below
import struct
m = tfgrpc.predict("bcp", {"features": row}).SerializeToString()
open("body.grpc", "wb").write(struct.pack(">BI", 0, len(m)) + m)
open("cut.grpc", "wb").write(struct.pack(">BI", 0, len(m) + 9) + m)
print("ok")
PY
	# HTTP/2 without a gRPC client: grpc-status in the headers
	G=http://127.0.0.1:$GPORT/tensorflow.serving.PredictionService/Predict
	h2() { curl -s --http2-prior-knowledge -o /dev/null -D - "$@"; }
	run -0 h2 -H 'content-type: application/grpc' --data-binary @body.grpc "$G"
	[[ "$output" == *"grpc-status: 0"* ]]
	# an OK call's trailers carry no grpc-message (none to say)
	[[ "$output" != *"grpc-message"* ]]
	run -0 h2 -H 'content-type: application/grpc' -H 'grpc-encoding: snappy' --data-binary @body.grpc "$G"
	[[ "$output" == *"grpc-status: 12"* ]]
	[[ "$output" == *"grpc-message: grpc-encoding snappy is not supported"* ]]
	run -0 h2 -H 'content-type: application/grpc' --data-binary @cut.grpc "$G"
	[[ "$output" == *"grpc-status: 3"* && "$output" == *"cut short"* ]]
	run -0 h2 -H 'content-type: application/json' --data-binary @body.grpc "$G"
	[[ "$output" == *"HTTP/2 415"* ]]
	run -0 h2 "$G"
	[[ "$output" == *"HTTP/2 405"* ]]
	# HTTP/1.1 on the gRPC port: the connection is closed, nothing else
	run curl -s -m 5 "$G"
	[ "$status" -ne 0 ]
	run -0 h2 -H 'content-type: application/grpc' --data-binary @body.grpc "$G"
	[[ "$output" == *"grpc-status: 0"* ]]
	# an OK call's trailers carry no grpc-message (none to say)
	[[ "$output" != *"grpc-message"* ]]
	# the errors are counted with REST's, by model, method and status
	run -0 curl -s "$URL/monitoring/prometheus/metrics"
	[[ "$output" == *'tfkit_requests_total{model="bcp",method="predict",code="400"}'* ]]
	[[ "$output" == *'tfkit_requests_total{model="bcp",method="predict",code="404"}'* ]]
	[[ "$output" == *'tfkit_requests_total{model="bcp",method="predict",code="200"} '* ]]
	stop_server
}

@test "hot reload under gRPC load: versions swapped while Predict runs, no call fails" {
	mkdir base
	cp -r "$F/bcp/1" base/1
	start_ready --model-base base --model-name m --poll-interval 0.05 --threads 2
	/usr/bin/python3 - <<'PY' &
import os, threading, time
import tfgrpc
pred, _ = tfgrpc.stubs(os.environ["GPORT"])
req = tfgrpc.predict("m", {"features": [[1.0] * 30]})
counts, versions, failed = [0, 0], set(), []

def client(i):
    while not os.path.exists("stop"):
        try:
            r = pred.Predict(req, 5.0)
            versions.add(r.model_spec.version.value)
            counts[i] += 1
        except Exception as e:  # noqa: BLE001 (every failure counts)
            failed.append(repr(e))

ts = [threading.Thread(target=client, args=(i,)) for i in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
open("result", "w").write("%d %d %s\n" % (sum(counts), len(failed), sorted(versions)))
PY
	cpid=$!
	sleep 0.3
	for _ in 2 3 4; do
		tf-export -d "$F/pck" --export-base base > /dev/null
		sleep 0.3
	done
	cp -r base/4 base/.x && flip_byte base/.x/variables.bin 64 && mv base/.x base/5
	sleep 0.5
	touch stop
	wait "$cpid"
	cat result
	read -r n failed versions < result
	[ "$n" -gt 50 ]
	[ "$failed" = 0 ]
	# the calls saw the new versions, and never the damaged one
	[[ "$versions" == *"4]" ]]
	grep -q "version 5" serve.log
	stop_server
}

@test "share/examples/predict_client.py: CSV rows over gRPC, as tf-eval --predict answers" {
	start_ready --model-config-file "$F/all.conf"
	head -n 4 "$DATA/iris.csv" > rows.csv
	run -0 --separate-stderr /usr/bin/python3 "$TOP/share/examples/predict_client.py" \
		--stubs "$PB" --server "127.0.0.1:$GPORT" --model iris rows.csv
	[ "${#lines[@]}" = 3 ]
	/usr/bin/python3 - "$output" "$F/iris.expected" <<'PY'
import json, sys
got = [json.loads(l) for l in sys.argv[1].splitlines()]
want = [json.loads(l) for l in open(sys.argv[2])]
assert [g["classes"] for g in got] == [w["classes"] for w in want], (got, want)
for g, w in zip(got, want):
    assert all(abs(a - b) < 1e-6 for a, b in zip(g["probabilities"], w["probabilities"])), (g, w)
PY
	# a packed model: the first 30 columns as one matrix
	head -n 4 "$DATA/breast_cancer.csv" > bc.csv
	run -0 --separate-stderr /usr/bin/python3 "$TOP/share/examples/predict_client.py" \
		--stubs "$PB" --server "127.0.0.1:$GPORT" --model bcp bc.csv
	/usr/bin/python3 - "$output" "$F/bcp.expected" <<'PY'
import json, sys
got = [json.loads(l) for l in sys.argv[1].splitlines()]
want = [json.loads(l) for l in open(sys.argv[2])]
assert [g["classes"] for g in got] == [w["classes"] for w in want], (got, want)
PY
	stop_server
}

# The lines of a documented block, from the line that starts with $2 to
# the command that starts with $3 and the lines it continues on (README:
# indented; a man page: \e joins).
doc_block() {
	sed -e 's/^    //' -e 's/\\e$/\\/' "$1" |
		awk -v a="^$2" -v b="^$3" '$0 ~ a { on = 1 } on { print } on && $0 ~ b { last = 1 }
			last && !/\\$/ { exit }'
}

@test "the README's and tf-serve(1)'s gRPC client steps run as written" {
	start_ready --model-config-file "$F/all.conf"
	dest=$BATS_TEST_TMPDIR/root
	make -s -C "$TOP" install DESTDIR="$dest" PREFIX=/usr/local SANITIZE=0 > /dev/null
	# python3 as Debian's (grpc_tools), the installed tree under $dest
	mkdir bin
	ln -s /usr/bin/python3 bin/python3
	head -n 4 "$DATA/breast_cancer.csv" > rows.csv
	head -n 4 "$DATA/iris.csv" > iris.csv
	for doc in "$TOP/README" "$TOP/man/man1/tf-serve.1"; do
		rm -rf stubs
		doc_block "$doc" 'P=\/usr\/local\/share\/tfkit$' 'python3 \$P\/examples' |
			sed -e "s|^P=/usr/local|P=$dest/usr/local|" \
			    -e "s|python3 \$P/examples/predict_client.py|& --server 127.0.0.1:$GPORT|" \
			    -e 's|--server localhost:8500 ||' -e 's|--model cancer|--model bc|' > steps.sh
		cat steps.sh
		[ "$(grep -c . steps.sh)" -ge 4 ]
		run -0 --separate-stderr env PATH="$PWD/bin:$PATH" bash -e steps.sh
		[ "${#lines[@]}" -eq 3 ]
		[[ "${lines[0]}" == '{"classes": '*'"probabilities": ['* ]]
	done
	stop_server
}

@test "ports: --port is TF Serving's spelling, a taken port exits 69, off serves REST alone" {
	start_ready --model-base "$F/bcp" --port 0
	/usr/bin/python3 -c '
import os, tfgrpc
pred, _ = tfgrpc.stubs(os.environ["GPORT"])
assert pred.Predict(tfgrpc.predict("model", {"features": [[1.0] * 30]}), 5.0).model_spec.version.value == 1'
	run -69 --separate-stderr tf-serve --model-base "$F/bcp" --listen-address 127.0.0.1 --rest-api-port 0 --grpc-port "$GPORT"
	[ "${stderr_lines[-1]}" = "tf-serve: cannot listen for gRPC on 127.0.0.1:$GPORT: Address already in use" ]
	stop_server
	tf-serve --model-base "$F/bcp" --listen-address 127.0.0.1 --rest-api-port 0 --grpc-port off 2> off.log &
	SPID=$!
	for _ in $(seq 100); do grep -q "REST API" off.log && break; sleep 0.05; done
	grep -q "REST API" off.log
	! grep -q "gRPC" off.log
	stop_server
	run -64 --separate-stderr tf-serve --model-base "$F/bcp" --grpc-port 70000
	[[ "$stderr" == *"--grpc-port"* ]]
}

@test "a model of sparse ids: Classify takes Examples of an int64_list 'ids' and a float_list 'values' (or none), Predict padded 'ids' with 'values' and 'lengths', as REST takes them; bad ones named" {
	tf-csv2record -q -f libsvm -o hs.tfrecord "$DATA/heart_scale"
	tf-train -q --sparse --model lr --optimizer adagrad --learning-rate 0.5 -e 3 --checkpoint-dir m hs.tfrecord > /dev/null
	tf-export -d m --export-base hs > /dev/null
	start_ready --model-base hs --model-name hs
	curl -s -d '{"examples": [{"ids": [1, 3, 12], "values": [0.5, 1, -1]}, {"ids": [7]}]}' \
		"$URL/v1/models/hs:classify" > rest.json
	/usr/bin/python3 - <<'PY'
import json, os
import tfgrpc
from tfgrpc import classification_pb2, example_pb2, types_pb2
pred, _ = tfgrpc.stubs(os.environ["GPORT"])
want = json.load(open("rest.json"))["results"]
r = classification_pb2.ClassificationRequest()
r.model_spec.name = "hs"
for ids, vals in (([1, 3, 12], [0.5, 1, -1]), ([7], None)):
    ex = r.input.example_list.examples.add()
    ex.features.feature["ids"].int64_list.value.extend(ids)
    if vals is not None:
        ex.features.feature["values"].float_list.value.extend(vals)
got = pred.Classify(r, 5.0).result.classifications
assert len(got) == 2
for g, w in zip(got, want):
    assert [c.label for c in g.classes] == [x[0] for x in w], (g, w)
    assert tfgrpc.close([c.score for c in g.classes], [x[1] for x in w]), (g, w)
bad = classification_pb2.ClassificationRequest()
bad.model_spec.name = "hs"
bad.input.example_list.examples.add().features.feature["ids"].int64_list.value.extend([1, 99])
code, msg = tfgrpc.error(pred.Classify, bad, 5.0)
assert code == "INVALID_ARGUMENT" and "example 0: id 99 is beyond the model's (0 to 13)" in msg, msg
PY
	# Predict: ids padded to [rows, k] (their end a -1, or 'lengths'),
	# 'values' of the same shape or none, as REST's instances predict
	curl -s -d '{"instances": [{"ids": [1, 3, 12], "values": [0.5, 1, -1]}, {"ids": [7], "values": [1]}]}' \
		"$URL/v1/models/hs:predict" > rest.json
	curl -s -d '{"instances": [{"ids": [7]}, {"ids": [2, 5]}]}' "$URL/v1/models/hs:predict" > rest1.json
	/usr/bin/python3 - <<'PY'
import json, os
import tfgrpc
from tfgrpc import types_pb2
pred, _ = tfgrpc.stubs(os.environ["GPORT"])
I64, I32 = types_pb2.DT_INT64, types_pb2.DT_INT32
def probs(inputs):
    r = pred.Predict(tfgrpc.predict("hs", inputs), 5.0)
    return tfgrpc.values(r.outputs["probabilities"])
want = [p for row in json.load(open("rest.json"))["predictions"] for p in row["probabilities"]]
vals = tfgrpc.tensor([[0.5, 1, -1], [1, 0, 0]])
# the end of a row's ids: a -1
got = probs({"ids": tfgrpc.tensor([[1, 3, 12], [7, -1, -1]], dtype=I64), "values": vals})
assert tfgrpc.close(got, want), (got, want)
# or its length (the padding anything), int32 in tensor_content
got = probs({"ids": tfgrpc.tensor([[1, 3, 12], [7, 0, 0]], dtype=I32, content=True), "values": vals,
             "lengths": tfgrpc.tensor([3, 1], dtype=I64)})
assert tfgrpc.close(got, want), (got, want)
# no values: each 1
want1 = [p for row in json.load(open("rest1.json"))["predictions"] for p in row["probabilities"]]
got = probs({"ids": tfgrpc.tensor([[7, -1], [2, 5]], dtype=I64)})
assert tfgrpc.close(got, want1), (got, want1)
bad = [
    ({"ids": tfgrpc.tensor([[1, 99]], dtype=I64)}, "row 0: id 99 is beyond the model's (0 to 13)"),
    ({"values": vals}, "missing input 'ids' (a model of sparse ids: [rows, ids a row])"),
    ({"ids": tfgrpc.tensor([1, 2], dtype=I64)}, "input 'ids' takes integers (DT_INT64, DT_UINT64 or DT_INT32) of shape [rows, ids a row]; got DT_INT64 of shape [2]"),
    ({"ids": tfgrpc.tensor([[1, 2]], dtype=I64), "values": tfgrpc.tensor([[1.0]])}, "input 'values' takes 2 numbers (the shape of 'ids'); got 1 of DT_FLOAT"),
    ({"ids": tfgrpc.tensor([[1, 2]], dtype=I64), "lengths": tfgrpc.tensor([3], dtype=I64)}, "row 0: a length of 3 (of 2 ids)"),
    ({"ids": tfgrpc.tensor([[1, 2]], dtype=I64), "x": vals}, "input tensor alias not found in signature: x. Inputs expected to be in the set {ids, values, lengths}"),
    ({"ids": tfgrpc.tensor([list(range(14))], dtype=I64)}, "row 0: 14 ids; the model reads at most 13 a row"),
]
for inputs, text in bad:
    code, msg = tfgrpc.error(pred.Predict, tfgrpc.predict("hs", inputs), 5.0)
    assert code == "INVALID_ARGUMENT" and text in msg, (code, msg, text)
PY
	stop_server
}

@test "a model of sparse ids beside numeric features over gRPC Predict: tensors 'ids' and 'values' and one a feature (a value a row), as REST's instances; a missing one named" {
	/usr/bin/python3 "$TOP/tests/cli/mkmixex.py" "$BATS_FILE_TMPDIR/pb" mix.tfrecord 1 300
	tf-records schema --write mix.tfrecord > /dev/null 2>&1
	tf-train -q --sparse --model dnn --optimizer adagrad --learning-rate 0.1 -e 3 --checkpoint-dir m mix.tfrecord > /dev/null
	tf-export -d m --export-base mix > /dev/null
	start_ready --model-base mix --model-name mix
	curl -s -d '{"instances": [{"ids": [1, 3, 12, 40], "age": 30, "visits": 2}, {"ids": [7, 8, 9, 10], "values": [1, 0.5, 1, 1], "age": 4.5, "visits": 9}]}' \
		"$URL/v1/models/mix:predict" > rest.json
	/usr/bin/python3 - <<'PY'
import json, os
import tfgrpc
from tfgrpc import types_pb2
pred, _ = tfgrpc.stubs(os.environ["GPORT"])
I64 = types_pb2.DT_INT64
def probs(inputs):
    r = pred.Predict(tfgrpc.predict("mix", inputs), 5.0)
    return tfgrpc.values(r.outputs["probabilities"])
want = [p for row in json.load(open("rest.json"))["predictions"] for p in row["probabilities"]]
ids = tfgrpc.tensor([[1, 3, 12, 40], [7, 8, 9, 10]], dtype=I64)
vals = tfgrpc.tensor([[1, 1, 1, 1], [1, 0.5, 1, 1]])
got = probs({"ids": ids, "values": vals, "age": tfgrpc.tensor([30, 4.5]),
             "visits": tfgrpc.tensor([2, 9], dtype=I64)})
assert tfgrpc.close(got, want), (got, want)
bad = [
    ({"ids": ids, "age": tfgrpc.tensor([30, 4.5])}, "1 of the model's 2 numeric features given"),
    ({"ids": ids, "age": tfgrpc.tensor([30.0]), "visits": tfgrpc.tensor([2, 9], dtype=I64)}, "a numeric feature takes a number a row (2); got 1 of DT_FLOAT"),
    ({"ids": ids, "x": vals}, "input tensor alias not found in signature: x. Inputs expected to be in the set {ids, values, lengths, its numeric features}"),
]
for inputs, text in bad:
    code, msg = tfgrpc.error(pred.Predict, tfgrpc.predict("mix", inputs), 5.0)
    assert code == "INVALID_ARGUMENT" and text in msg, (code, msg, text)
PY
	stop_server
}

@test "a model of a sequence over gRPC Predict: a padded tensor of its steps (tokens or numbers) with or without 'lengths', as REST's ragged lists; bad ones named" {
	sessions_csv sessions.csv 1 300 12 user
	tf-csv2record -q --sequence pages sessions.csv -o s.tfrecord
	tf-train -q --model gru --rnn-units 8 --hidden 8 --epochs 1 --batch-size 32 --checkpoint-dir g s.tfrecord > /dev/null
	tf-export -d g --export-base sm > /dev/null
	printf 'xs,label\n1 2 3 4 5,1\n5 4,0\n0.5 1.5 2.5,1\n3 1 2 7 1 0,0\n' > nums.csv
	tf-csv2record -q --sequence xs nums.csv -o n.tfrecord
	tf-train -q --model lstm --rnn-units 4 --hidden 4 --epochs 2 --batch-size 2 --checkpoint-dir n n.tfrecord > /dev/null
	tf-export -d n --export-base nm > /dev/null
	printf '{"models": [{"name": "s", "base_path": "%s"}, {"name": "n", "base_path": "%s"}]}' \
		"$PWD/sm" "$PWD/nm" > models.config
	start_ready --model-config-file models.config
	curl -s -d '{"instances": [{"user": 1, "pages": ["home", "login", "buy"]}, {"user": 3, "pages": ["buy", "cart", "login", "help", "view"]}]}' \
		"$URL/v1/models/s:predict" > rest.json
	curl -s -d '{"instances": [{"xs": [1, 2, 3]}, {"xs": [5, 4, 0.5, 7, 1, 0]}]}' "$URL/v1/models/n:predict" > rest-n.json
	/usr/bin/python3 - <<'PY'
import json, os
import tfgrpc
from tfgrpc import types_pb2
pred, _ = tfgrpc.stubs(os.environ["GPORT"])
S, I64 = types_pb2.DT_STRING, types_pb2.DT_INT64
def probs(model, inputs):
    r = pred.Predict(tfgrpc.predict(model, inputs), 5.0)
    return tfgrpc.values(r.outputs["probabilities"])
flat = lambda f: [p for row in json.load(open(f))["predictions"] for p in row["probabilities"]]
want, want_n = flat("rest.json"), flat("rest-n.json")
user = tfgrpc.tensor([1, 3], dtype=I64)
# tokens padded with empty strings, or with anything and 'lengths'
got = probs("s", {"user": user, "pages": tfgrpc.tensor([["home", "login", "buy", "", ""], ["buy", "cart", "login", "help", "view"]], dtype=S)})
assert tfgrpc.close(got, want), (got, want)
got = probs("s", {"user": user, "lengths": tfgrpc.tensor([3, 5], dtype=I64),
                  "pages": tfgrpc.tensor([["home", "login", "buy", "x", "x"], ["buy", "cart", "login", "help", "view"]], dtype=S)})
assert tfgrpc.close(got, want), (got, want)
# numbers: every step given unless 'lengths' says fewer
got = probs("n", {"xs": tfgrpc.tensor([[1, 2, 3, 0, 0, 0], [5, 4, 0.5, 7, 1, 0]]), "lengths": tfgrpc.tensor([3, 6], dtype=I64)})
assert tfgrpc.close(got, want_n), (got, want_n)
pages = tfgrpc.tensor([["home", "buy"]], dtype=S)
bad = [
    ("s", {"user": tfgrpc.tensor([1], dtype=I64), "pages": tfgrpc.tensor([[1.0, 2.0]])},
     "input 'pages' is a sequence: DT_STRING tokens of shape [rows, steps] (padded; 'lengths' gives each row's steps); got DT_FLOAT of shape [1, 2]"),
    ("s", {"user": tfgrpc.tensor([1], dtype=I64), "pages": tfgrpc.tensor(["home"], dtype=S)},
     "got DT_STRING of shape [1]"),
    ("s", {"user": tfgrpc.tensor([1], dtype=I64), "pages": pages, "lengths": tfgrpc.tensor([3], dtype=I64)},
     "input 'lengths': row 0: 3 steps of the 2 the tensor has"),
    ("s", {"user": tfgrpc.tensor([1], dtype=I64), "pages": pages, "lengths": tfgrpc.tensor([1, 2], dtype=I64)},
     "input 'lengths' takes 1 integers (a row's steps); got 2 of DT_INT64"),
    ("s", {"user": tfgrpc.tensor([1, 2], dtype=I64), "pages": pages},
     "(all inputs must share the batch size)"),
    ("s", {"user": tfgrpc.tensor([1], dtype=I64)}, "missing input 'pages'"),
]
for model, inputs, text in bad:
    code, msg = tfgrpc.error(pred.Predict, tfgrpc.predict(model, inputs), 5.0)
    assert code == "INVALID_ARGUMENT" and text in msg, (code, msg, text)
# the metadata: the sequence [-1, -1], and Predict's optional lengths
d = tfgrpc.signatures(pred.GetModelMetadata(tfgrpc.metadata("s"), 5.0))["serving_default"]
got = {k: (types_pb2.DataType.Name(v.dtype), [x.size for x in v.tensor_shape.dim]) for k, v in d.inputs.items()}
assert got == {"user": ("DT_INT64", [-1]), "pages": ("DT_STRING", [-1, -1]), "lengths": ("DT_INT64", [-1])}, got
PY
	stop_server
}
