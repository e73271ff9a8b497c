# Writes SequenceExamples of the order task with Google's protobuf (the
# module protoc makes of libtfcore/proto/example.proto, in the directory
# of argv[1]), framed as TFRecords: tokens a feature list of one bytes
# value a step, 4 to 20 steps of "c".."j" in which "a" and "b" each
# occur once, label 1 iff "a" comes first; the context has the label
# and a float "weight".  A test's independent writer of the format.
#   /usr/bin/python3 mkseqex.py PBDIR OUT SEED N [ragged]
import os
import random
import struct
import sys

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import example_pb2 as pb  # noqa: E402
from pydecode import masked  # noqa: E402  (the framing's CRC)


def record(f, data):
    h = struct.pack("<Q", len(data))
    f.write(h + struct.pack("<I", masked(h)) + data +
            struct.pack("<I", masked(data)))


rng = random.Random(int(sys.argv[3]))
ragged = len(sys.argv) > 5
with open(sys.argv[2], "wb") as f:
    for i in range(int(sys.argv[4])):
        n = rng.randint(4, 20)
        toks = [rng.choice("cdefghij") for _ in range(n)]
        a, b = rng.sample(range(n), 2)
        toks[a], toks[b] = "a", "b"
        s = pb.SequenceExample()
        s.context.feature["label"].int64_list.value.append(int(a < b))
        s.context.feature["weight"].float_list.value.append(rng.random())
        steps = s.feature_lists.feature_list["tokens"]
        for t in toks:
            steps.feature.add().bytes_list.value.append(t.encode())
        if ragged and i == 3:
            # a step of two tokens: the steps disagree
            steps.feature[1].bytes_list.value.append(b"c")
        record(f, s.SerializeToString())
