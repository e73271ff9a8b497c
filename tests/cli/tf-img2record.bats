#!/usr/bin/env bats
# tf-img2record: images to records in the Inception layout; tf-train,
# tf-eval, tf-records and tf-serve on image records; bad images.

bats_require_minimum_version 1.5.0
load helpers

MKIMAGES=${TFKIT_BUILD:-$TOP/build}/tests/mkimages

# share/data/digits.csv as 28x28 images: img/train/CLASS/*.EXT and
# img/test/CLASS/*.EXT (data row i is a test row iff i % 5 == 4).
make_digits() {
	mkdir -p img
	"$MKIMAGES" "$DATA/digits.csv" "img/$1" "$1"
}

# A LeNet-style network of the user's for 28x28 grey images.
lenet_spec() {
	cat > lenet.spec <<'EOF'
input x 28x28x1
node c1 conv2d x filters=8 kernel=5
node c1_a relu c1
node p1 max_pool c1_a size=2
node c2 conv2d p1 filters=16 kernel=5
node c2_a relu c2
node p2 max_pool c2_a size=2
node f flatten p2
node h dense f units=64
node h_a relu h
node logits dense h_a units=outputs
EOF
}

teardown() {
	kill_quietly "${SPID:-}"
}

@test "-h and --help print the same usage on stdout; --version names the library" {
	run -0 --separate-stderr tf-img2record --help
	[[ "$output" == Usage:* ]]
	[ -z "$stderr" ]
	help=$output
	run -0 tf-img2record -h
	[ "$output" = "$help" ]
	run -0 tf-img2record --version
	[[ "$output" =~ ^tf-img2record\ [0-9]+\.[0-9]+\.[0-9]+\ \(libtfcore ]]
}

@test "the man page documents exactly the options --help lists" {
	diff <(help_options tf-img2record) <(man_options tf-img2record)
}

@test "digits as PNG files in class folders: the Inception layout, a schema naming the classes, a conv spec to 0.95 on the held-out rows" {
	make_digits png
	run -0 --separate-stderr tf-img2record img/png/train -o train.tfrecord
	[ -z "$stderr" ]
	tf-img2record -q img/png/test -o test.tfrecord
	[ "$(tf-records count train.tfrecord)" = 1438 ]
	[ "$(tf-records count test.tfrecord)" = 359 ]
	# every feature of build_image_data.py's layout; the bytes are the
	# file's own; the classes are numbered from 1 in name order
	tf-records head -n 1 --bytes train.tfrecord > first.json
	/usr/bin/python3 - img/png/train <<'PY'
import base64, json, os, sys
j = json.load(open("first.json"))
assert sorted(j) == ["image/channels", "image/class/label", "image/class/text",
                     "image/colorspace", "image/encoded", "image/filename",
                     "image/format", "image/height", "image/width"], sorted(j)
first = sorted(os.listdir(sys.argv[1] + "/0"))[0]
raw = open(sys.argv[1] + "/0/" + first, "rb").read()
assert base64.b64decode(j["image/encoded"][0]["b64"]) == raw
assert j["image/filename"] == [first] and j["image/format"] == ["PNG"]
assert j["image/class/label"] == [1] and j["image/class/text"] == ["0"]
assert j["image/height"] == [28] and j["image/width"] == [28]
assert j["image/channels"] == [1] and j["image/colorspace"] == ["Grayscale"]
s = json.load(open("train.tfrecord.schema.json"))
assert s["layout"] == "image" and s["rows"] == 1438, s
assert s["image"] == {"feature": "image/encoded", "height": 28, "width": 28,
                      "channels": 1, "scale": "unit"}, s["image"]
assert s["label"]["name"] == "image/class/label"
assert s["label"]["classes"] == list(range(1, 11))
assert s["label"]["names"] == [str(d) for d in range(10)]
PY
	# tf-records shows what an image is, not its bytes
	run -0 tf-records head -n 1 train.tfrecord
	[[ "$output" == *'"image/encoded":["PNG image 28x28x1, '*' bytes"]'* ]]
	[ "${#output}" -lt 400 ]
	lenet_spec
	tf-train -q --model-file lenet.spec --epochs 12 --batch-size 32 --learning-rate 0.003 \
		--steps-to-validate 225 --validate test.tfrecord --logdir logs \
		--checkpoint-dir ck train.tfrecord > train.json
	tf-eval -d ck test.tfrecord > eval.json
	# TensorBoard's scalars, as protobuf reads them
	mkdir pb
	protoc -I"$TOP/tests/proto" --python_out=pb "$TOP/tests/proto/event.proto"
	/usr/bin/python3 -c '
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
acc = [v.simple_value for e in evs for v in e.summary.value if v.tag == "validation/accuracy"]
assert len(acc) == 3 and acc[-1] >= 0.95, acc
print("ok")' logs/events.out.tfevents.* "$TOP/tests/cli"
	/usr/bin/python3 -c '
import json
a = json.load(open("eval.json"))
assert a["examples"] == 359 and a["accuracy"] >= 0.95, a'
	# predictions name the class folders
	tf-eval -d ck --predict test.tfrecord | head -n 3 > pred.jsonl
	grep -q '"classes":"[0-9]"' pred.jsonl
}

@test "JPEG (colour) from a folder, a .tar.gz, a .zip and a list: the same records; read as grey they train to 0.95" {
	make_digits jpg
	tf-img2record -q img/jpg/train -o folder.tfrecord
	tar --sort=name -czf digits.tar.gz -C img/jpg train
	tf-img2record -q digits.tar.gz -o tar.tfrecord
	/usr/bin/python3 - <<'PY'
import os, zipfile
with zipfile.ZipFile("digits.zip", "w") as z:
    for d, subs, files in sorted(os.walk("img/jpg/train")):
        subs.sort()
        for f in sorted(files):
            z.write(os.path.join(d, f), os.path.relpath(os.path.join(d, f), "img/jpg"))
PY
	tf-img2record -q digits.zip -o zip.tfrecord
	find img/jpg/train -type f | sort | awk -F/ '{ print $0, $(NF-1) }' > list.txt
	tf-img2record -q --list list.txt -o list.tfrecord
	tf-records cat folder.tfrecord > folder.json
	for f in tar zip list; do
		tf-records cat $f.tfrecord | cmp - folder.json
		cmp $f.tfrecord.schema.json folder.tfrecord.schema.json
	done
	grep -q '"channels":3' folder.tfrecord.schema.json
	head -n 1 folder.json | grep -q '"image/encoded":\["JPEG image 28x28x3, '
	tf-img2record -q img/jpg/test -o test.tfrecord
	lenet_spec
	# RGB records against a grey spec: the widths, named
	run -65 tf-train -q --model-file lenet.spec --checkpoint-dir x folder.tfrecord
	[[ "$output" == *"input 'x' is 28x28x1 in the spec (784 values a row), 2352 in the data"* ]]
	tf-train -q --model-file lenet.spec --image-channels 1 --random-crop 2 --epochs 12 \
		--batch-size 32 --learning-rate 0.003 --checkpoint-dir ck folder.tfrecord > /dev/null
	tf-eval -d ck test.tfrecord > eval.json
	/usr/bin/python3 -c '
import json
a = json.load(open("eval.json"))
assert a["examples"] == 359 and a["accuracy"] >= 0.95, a'
}

@test "an augmented run (--random-flip, --random-crop) is repeatable and resumes exactly; the flags are for image records only" {
	make_digits png
	tf-img2record -q img/png/train -o train.tfrecord
	args="-q --model cnn --conv 4 --hidden 16 --batch-size 32 --seed 3 --epochs 0 --random-flip --random-crop 3"
	tf-train $args --max-steps 50 --checkpoint-dir a train.tfrecord > /dev/null
	tf-train $args --max-steps 50 --checkpoint-dir b train.tfrecord > /dev/null
	same_state a/model.ckpt-50 b/model.ckpt-50
	tf-train $args --max-steps 20 --checkpoint-dir c train.tfrecord > /dev/null
	tf-train $args --max-steps 50 --checkpoint-dir c train.tfrecord > /dev/null
	same_state a/model.ckpt-50 c/model.ckpt-50
	# without augmentation the run differs: the draws reach the images
	tf-train ${args/--random-flip --random-crop 3/} --max-steps 50 --checkpoint-dir d train.tfrecord > /dev/null
	run ! same_state a/model.ckpt-50 d/model.ckpt-50
	# the image size is the model's: another one at resume is refused
	run -64 tf-train $args --image-size 14x14 --max-steps 60 --checkpoint-dir c train.tfrecord
	[[ "$output" == *"c/model.ckpt-50 reads images as 28x28x1, scaled unit; --image-size, --image-channels or --image-scale differs"* ]]
	# ... the same one goes on
	tf-train $args --image-size 28x28 --image-channels 1 --max-steps 60 --checkpoint-dir c train.tfrecord > /dev/null
	[ -e c/model.ckpt-60 ]
	tf-csv2record "$DATA/iris.csv" -o iris.tfrecord
	run -64 tf-train -q --random-flip --checkpoint-dir x iris.tfrecord
	[[ "$output" == *"--random-flip and --random-crop are for image records; these rows are not images"* ]]
	run -64 tf-train -q --image-size 20 --checkpoint-dir x train.tfrecord
	[[ "$output" == *"--image-size: '20' is not HxW"* ]]
	run -64 tf-train -q --image-scale loud --checkpoint-dir x train.tfrecord
	[[ "$output" == *"--image-scale: 'loud' is not unit, symmetric or standardize"* ]]
	[ ! -e x/checkpoint ]
}

@test "records without a sidecar (TensorFlow's own, or another tool's) are recognised as images; sizes that differ need --image-size" {
	make_digits png
	tf-img2record -q --no-schema img/png/train -o train.tfrecord
	[ ! -e train.tfrecord.schema.json ]
	run -0 --separate-stderr tf-train --model cnn --conv 8 --hidden 16 --epochs 1 --checkpoint-dir ck train.tfrecord
	[[ "$stderr" == *"inferred from its first 1438 records (images read as 28x28x1, label 'image/class/label', multiclass)"* ]]
	# records another tool wrote, as build_image_data.py lays them out
	# (protobuf's own encoder; JPEG files of colour digits)
	make_digits jpg
	mkdir -p pb
	protoc -I"$TOP/tests/proto" --python_out=pb "$TOP/tests/proto/example.proto"
	/usr/bin/python3 - "$TOP/tests/cli" <<'PY'
import os, struct, sys
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, "pb")
from pydecode import masked
import example_pb2
for split in ("train", "test"):
    with open("tf-%s.tfrecord" % split, "wb") as out:
        for cls in sorted(os.listdir("img/jpg/" + split)):
            for name in sorted(os.listdir("img/jpg/%s/%s" % (split, cls))):
                ex = example_pb2.Example()
                f = ex.features.feature
                f["image/encoded"].bytes_list.value.append(
                    open("img/jpg/%s/%s/%s" % (split, cls, name), "rb").read())
                for k, v in (("image/format", b"JPEG"), ("image/colorspace", b"RGB"),
                             ("image/class/text", cls.encode()), ("image/filename", name.encode())):
                    f[k].bytes_list.value.append(v)
                for k, v in (("image/height", 28), ("image/width", 28), ("image/channels", 3),
                             ("image/class/label", int(cls) + 1)):
                    f[k].int64_list.value.append(v)
                d = ex.SerializeToString()
                h = struct.pack("<Q", len(d))
                out.write(h + struct.pack("<I", masked(h)) + d + struct.pack("<I", masked(d)))
PY
	run -0 --separate-stderr tf-train -q --model cnn --conv "16 32" --hidden 64 --image-channels 1 \
		--epochs 10 --batch-size 32 --learning-rate 0.003 --checkpoint-dir tfck tf-train.tfrecord
	tf-eval -d tfck tf-test.tfrecord > tf.json
	/usr/bin/python3 -c '
import json
a = json.load(open("tf.json"))
assert a["examples"] == 359 and a["accuracy"] >= 0.95, a'
	# one image of another size: no size every image has
	mkdir -p mixed/a mixed/b
	cp img/png/train/0/row0000.png mixed/a/
	/usr/bin/python3 - <<'PY'
import struct, zlib
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
rows = b"".join(b"\0" + bytes([(x * 7 + y * 3) % 256 for x in range(20)]) for y in range(12))
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 20, 12, 8, 0, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
open("mixed/b/small.png", "wb").write(png)
PY
	tf-img2record -q mixed -o mixed.tfrecord
	grep -q '"height":0,"width":0' mixed.tfrecord.schema.json
	run -64 tf-train -q --checkpoint-dir m mixed.tfrecord
	[[ "$output" == *"the images are not all one size; give the size the model reads them at (--image-size HxW)"* ]]
	tf-train -q --model cnn --conv 4 --hidden 8 --image-size 16x16 --checkpoint-dir m mixed.tfrecord > m.json
	grep -q '"image-size":"16x16"' m.json
	tf-eval -d m mixed.tfrecord | grep -q '"examples":2'
}

@test "bad input: a damaged or unknown image is 65 naming the file, leaving nothing; --skip-bad counts them; usage errors are 64" {
	make_digits jpg
	mkdir -p bad/three bad/seven
	cp img/jpg/train/3/row0003.jpg img/jpg/train/3/row0013.jpg bad/three/
	cp img/jpg/train/7/row0007.jpg bad/seven/
	head -c 400 img/jpg/train/7/row0017.jpg > bad/seven/cut.jpg
	run -65 tf-img2record bad -o out.tfrecord
	[[ "$output" == *"bad/seven/cut.jpg: damaged JPEG: "*"(--skip-bad skips it)"* ]]
	[ ! -e out.tfrecord ] && [ ! -e out.tfrecord.schema.json ]
	[ -z "$(ls -A | grep -v '^img$' | grep -v '^bad$')" ]
	echo 'not an image' > bad/three/notes.txt
	mv bad/seven/cut.jpg .
	run -65 tf-img2record bad -o out.tfrecord
	[[ "$output" == *"bad/three/notes.txt: not a JPEG or PNG image"* ]]
	mv cut.jpg bad/seven/
	run -0 --separate-stderr tf-img2record --skip-bad bad -o out.tfrecord
	[[ "$stderr" == *"skipped bad/seven/cut.jpg: damaged JPEG"* ]]
	[[ "$stderr" == *"skipped 2 of 5 files: not images, or damaged"* ]]
	[ "$(tf-records count out.tfrecord)" = 3 ]
	# a file beside the class folders
	cp img/jpg/train/3/row0003.jpg bad/
	run -65 tf-img2record bad -o out2.tfrecord
	[[ "$output" == *"bad/row0003.jpg: a file beside the class folders"* ]]
	rm bad/row0003.jpg
	# --labels: the classes' order; a class it lacks is an error
	printf 'seven\nthree\n' > labels.txt
	tf-img2record -q --skip-bad --labels labels.txt bad -o l.tfrecord 2> /dev/null
	tf-records cat l.tfrecord | grep -q '"image/class/label":\[2\],"image/class/text":\["three"\]'
	printf 'seven\n' > labels.txt
	run -65 tf-img2record --skip-bad --labels labels.txt bad -o l2.tfrecord
	[[ "$output" == *"class 'three' is not in --labels"* ]]
	printf 'x.jpg\n' > list.txt
	run -65 tf-img2record --list list.txt -o l3.tfrecord
	[[ "$output" == *"list.txt: line 1: not \"PATH CLASS\""* ]]
	run -66 tf-img2record nowhere -o x.tfrecord
	[[ "$output" == *"nowhere: No such file or directory"* ]]
	run -64 tf-img2record -o x.tfrecord
	[[ "$output" == *"no SOURCE"* ]]
	run -64 tf-img2record --shards 2 bad
	[[ "$output" == *"--shards needs --output"* ]]
	# a damaged image inside records tf-train reads: the record named
	tf-img2record -q img/jpg/test -o t.tfrecord
	/usr/bin/python3 - <<'PY'
b = bytearray(open("t.tfrecord", "rb").read())
i = b.find(b"\xff\xd8\xff")          # the first image's bytes...
j = b.find(b"\xff\xda", i)           # ...its scan
for k in range(j + 20, j + 60):
    b[k] = 0xff if k % 2 else 0xd9   # markers where data should be
import struct
def crc32c(d):
    c = 0xFFFFFFFF
    for x in d:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF
n = struct.unpack("<Q", b[0:8])[0]
c = crc32c(bytes(b[12:12 + n]))
m = (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF
b[12 + n:16 + n] = struct.pack("<I", m)
open("t.tfrecord", "wb").write(b)
PY
	run -65 tf-train -q --model cnn --conv 4 --hidden 8 --image-channels 1 --checkpoint-dir y t.tfrecord
	[[ "$output" == *"t.tfrecord: record 0: feature 'image/encoded': damaged JPEG"* ]]
}

@test "--shards and --shuffle: every image once, the order the seed's" {
	make_digits png
	tf-img2record -q --shuffle --seed 7 --shards 3 img/png/test -o s
	tf-img2record -q --shuffle --seed 7 img/png/test -o a.tfrecord
	tf-img2record -q --shuffle --seed 8 img/png/test -o b.tfrecord
	tf-img2record -q img/png/test -o sorted.tfrecord
	[ -e s-00000-of-00003 ] && [ -e s-00002-of-00003 ] && [ -e s.schema.json ]
	[ "$(tf-records count s-0000*-of-00003 | tail -n 1)" = "359 total" ]
	files() { tf-records cat "$@" | grep -o '"image/filename":\["[^"]*"\]' ; }
	[ "$(files s-0000*-of-00003 | sort)" = "$(files sorted.tfrecord | sort)" ]
	[ "$(files a.tfrecord | head -n 30)" != "$(files b.tfrecord | head -n 30)" ]
	[ "$(files a.tfrecord | head -n 30)" != "$(files sorted.tfrecord | head -n 30)" ]
	tf-img2record -q --shuffle --seed 7 img/png/test -o a2.tfrecord
	cmp a.tfrecord a2.tfrecord
}

@test "ONNX and TensorFlow.js exports of an image model take the decoded image and predict as tf-eval" {
	node_libs onnxruntime-node
	node_libs @tensorflow/tfjs-layers
	make_digits png
	tf-img2record -q img/png/test -o test.tfrecord
	tf-train -q --model cnn --conv "4 8" --hidden 16 --enable-bn --epochs 3 --checkpoint-dir ck test.tfrecord > /dev/null
	tf-export -d ck --format onnx -o m.onnx > /dev/null
	tf-export -d ck --format tfjs -o m-js > /dev/null
	tf-eval -d ck --predict test.tfrecord | head -n 40 > want.jsonl
	# the rows as the exports take them: each image decoded and scaled
	tf-records head -n 40 --bytes test.tfrecord > recs.jsonl
	PYTHONPATH=$TOP/tests/cli /usr/bin/python3 - <<'PY' > rows.json
import base64, json
from pngpix import pixels
rows = []
for line in open("recs.jsonl"):
    png = base64.b64decode(json.loads(line)["image/encoded"][0]["b64"])
    rows.append([v / 255.0 for r in pixels(png) for v in r])
print(json.dumps(rows))
PY
	node "$TOP/tests/cli/exportcheck.js" onnx m.onnx rows.json > onnx.out
	node "$TOP/tests/cli/exportcheck.js" tfjs m-js rows.json | grep '^\[' > tfjs.out
	/usr/bin/python3 -c '
import json, sys
c = [json.loads(l)["probabilities"] for l in open("want.jsonl")]
for f in ("onnx.out", "tfjs.out"):
    a = [json.loads(l) for l in open(f)]
    assert len(a) == len(c) == 40, (f, len(a))
    for x, z in zip(a, c):
        assert max(abs(p - q) for p, q in zip(x, z)) < 1e-4, (f, x, z)'
}

@test "tf-serve answers encoded images (REST b64, gRPC DT_STRING) and float tensors as tf-eval predicts" {
	make_digits png
	tf-img2record -q img/png/train -o train.tfrecord
	tf-img2record -q img/png/test -o test.tfrecord
	tf-train -q --model cnn --conv 8 --hidden 16 --epochs 3 --checkpoint-dir ck train.tfrecord > /dev/null
	tf-export -d ck --export-base models > /dev/null
	tf-eval -d ck --predict test.tfrecord | head -n 2 > want.jsonl
	start_server --model-base models --model-name digits
	first=$(ls img/png/test/0 | head -n 1)
	second=$(ls img/png/test/0 | sed -n 2p)
	PYTHONPATH=$TOP/tests/cli /usr/bin/python3 - "img/png/test/0/$first" "img/png/test/0/$second" <<'PY'
import base64, json, os, sys, urllib.request
url = os.environ["URL"] + "/v1/models/digits:predict"
def post(body):
    r = urllib.request.Request(url, json.dumps(body).encode())
    try:
        with urllib.request.urlopen(r) as f:
            return 200, json.load(f)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)
imgs = [open(p, "rb").read() for p in sys.argv[1:]]
b64 = [{"b64": base64.b64encode(b).decode()} for b in imgs]
want = [json.loads(l) for l in open("want.jsonl")]
code, got = post({"instances": b64})
assert code == 200, got
for g, w in zip(got["predictions"], want):
    assert g["classes"] == w["classes"], (g, w)
    assert all(abs(a - b) < 1e-5 for a, b in zip(g["probabilities"], w["probabilities"])), (g, w)
# the same under the input's name, and columnar
code, named = post({"instances": [{"image/encoded": b} for b in b64]})
assert code == 200 and named["predictions"] == got["predictions"], named
code, col = post({"inputs": b64})
assert code == 200 and col["outputs"]["classes"] == [p["classes"] for p in got["predictions"]], col
# the decoded image as a float tensor [28][28][1], scaled as trained
from pngpix import pixels
code, t = post({"instances": [[[[v / 255.0] for v in r] for r in pixels(imgs[0])]]})
assert code == 200, t
assert all(abs(a - b) < 1e-5 for a, b in zip(t["predictions"][0]["probabilities"], want[0]["probabilities"])), t
for body, words in (({"instances": [{"b64": "AAAA"}]}, "instance 0: not a JPEG or PNG image"),
                    ({"instances": [{"b64": "not base64!"}]}, "instance 0: \"b64\" is not base64 text"),
                    ({"instances": [{"b64": base64.b64encode(imgs[0][:200]).decode()}]}, "instance 0: damaged PNG"),
                    ({"instances": [[1, 2]]}, "instance 0: expected an encoded image ({\"b64\": ...}) or 784 numbers ([28][28][1])"),
                    ({"instances": [{"pixels": b64[0]}]}, "as the input 'image/encoded'")):
    code, e = post(body)
    assert code == 400 and words in e["error"], (code, e, words)
print("ok")
PY
	# gRPC: encoded images as DT_STRING, decoded ones as [n, 28, 28, 1]
	P=$TOP/libtfcore/proto
	mkdir pb
	(cd "$P" && /usr/bin/python3 -m grpc_tools.protoc -I. -I/usr/include \
		--python_out="$BATS_TEST_TMPDIR/pb" --grpc_python_out="$BATS_TEST_TMPDIR/pb" \
		example.proto tensorflow/*/*/*.proto tensorflow_serving/*/*.proto)
	PB=$BATS_TEST_TMPDIR/pb PYTHONPATH=$TOP/tests/cli /usr/bin/python3 - "img/png/test/0/$first" "img/png/test/0/$second" <<'PY'
import json, os, sys
import tfgrpc
from tfgrpc import tensor_pb2, types_pb2
pred, _ = tfgrpc.stubs(os.environ["GPORT"])
want = [json.loads(l) for l in open("want.jsonl")]
t = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING)
t.tensor_shape.dim.add(size=2)
t.string_val.extend(open(p, "rb").read() for p in sys.argv[1:])
r = pred.Predict(tfgrpc.predict("digits", {"image/encoded": t}), 5.0)
got = tfgrpc.values(r.outputs["probabilities"])
for k, w in enumerate(want):
    assert all(abs(a - b) < 1e-5 for a, b in zip(got[k * 10:(k + 1) * 10], w["probabilities"])), (got, w)
bad = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING)
bad.tensor_shape.dim.add(size=1)
bad.string_val.append(b"GIF89a")
try:
    pred.Predict(tfgrpc.predict("digits", {"image/encoded": bad}), 5.0)
    raise SystemExit("a GIF was answered")
except tfgrpc.grpc.RpcError as e:
    assert e.code().name == "INVALID_ARGUMENT", e
    assert "image 0: not a JPEG or PNG image" in e.details(), e.details()
print("ok")
PY
}
