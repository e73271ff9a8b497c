# Writes Examples of sparse ids beside numeric features with Google's
# protobuf (the module protoc makes of libtfcore/proto/example.proto, in
# the directory of argv[1]), framed as TFRecords: "ids" (int64, 4 of 0 to
# 49) and "values" (floats, 1 each) as TensorFlow's VarLenFeature pair,
# a float "age" (0 to 50) and an int64 "visits" (0 to 9), label 1 when
# the ids divisible by 3 and the age together pass a threshold.  A
# test's independent writer of the format.
#   /usr/bin/python3 mkmixex.py PBDIR OUT SEED N
import os
import random
import struct
import sys

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import example_pb2 as pb  # noqa: E402
from pydecode import masked  # noqa: E402  (the framing's CRC)

rng = random.Random(int(sys.argv[3]))
with open(sys.argv[2], "wb") as f:
    for i in range(int(sys.argv[4])):
        ids = sorted(rng.sample(range(50), 4))
        age = rng.random() * 50
        e = pb.Example()
        e.features.feature["ids"].int64_list.value.extend(ids)
        e.features.feature["values"].float_list.value.extend([1.0] * 4)
        e.features.feature["age"].float_list.value.append(age)
        e.features.feature["visits"].int64_list.value.append(rng.randrange(10))
        y = sum(1 for k in ids if k % 3 == 0) + age / 25 > 1.5
        e.features.feature["label"].int64_list.value.append(int(y))
        data = e.SerializeToString()
        h = struct.pack("<Q", len(data))
        f.write(h + struct.pack("<I", masked(h)) + data +
                struct.pack("<I", masked(data)))
