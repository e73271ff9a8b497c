#!/usr/bin/env python3
"""predict_client.py - ask tf-serve (or TensorFlow Serving) over gRPC for
predictions of the rows of a CSV file, as TF Serving's Python clients do.

    predict_client.py [--server HOST:PORT] [--model NAME] [--version N]
                      [--stubs DIR] [--batch N] FILE.csv

The stubs come from the protos tfkit installs (share/tfkit/proto):

    P=/usr/local/share/tfkit/proto
    mkdir -p stubs
    python3 -m grpc_tools.protoc -I$P -I/usr/include --python_out=stubs \\
        --grpc_python_out=stubs $(find $P -name '*.proto')

GetModelMetadata says what the model takes: one tensor per feature,
filled from the CSV column of that name, or one [n, N] matrix (a model
trained on tf-csv2record --pack-features records), filled from the
first N columns.  Other columns (the label) are not sent.  Each row's
answer is printed as a JSON line: {"classes": ..., "probabilities": [...]}
for a classifier, {"predictions": v} for a regression.
"""
import argparse
import csv
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", default="localhost:8500")
    ap.add_argument("--model", default="model")
    ap.add_argument("--version", type=int)
    ap.add_argument("--stubs", default="stubs")
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("csv")
    a = ap.parse_args()
    sys.path.insert(0, a.stubs)
    import grpc
    from tensorflow.core.framework import types_pb2
    from tensorflow_serving.apis import (get_model_metadata_pb2,
                                         predict_pb2,
                                         prediction_service_pb2_grpc)

    stub = prediction_service_pb2_grpc.PredictionServiceStub(
        grpc.insecure_channel(a.server))

    def spec(msg):
        msg.model_spec.name = a.model
        if a.version is not None:
            msg.model_spec.version.value = a.version
        return msg

    md = spec(get_model_metadata_pb2.GetModelMetadataRequest())
    md.metadata_field.append("signature_def")
    sigs = get_model_metadata_pb2.SignatureDefMap()
    stub.GetModelMetadata(md, a.timeout).metadata["signature_def"].Unpack(sigs)
    inputs = sigs.signature_def["serving_default"].inputs

    with open(a.csv, newline="") as f:
        rows = list(csv.reader(f))
    head, rows = rows[0], rows[1:]
    for start in range(0, len(rows), a.batch):
        part = rows[start:start + a.batch]
        req = spec(predict_pb2.PredictRequest())
        for name, info in inputs.items():
            t = req.inputs[name]
            t.dtype = info.dtype
            dims = [d.size for d in info.tensor_shape.dim]
            t.tensor_shape.dim.add(size=len(part))
            if len(dims) == 2:  # a packed list: the first N columns
                t.tensor_shape.dim.add(size=dims[1])
                for r in part:
                    t.float_val.extend(float(v) for v in r[:dims[1]])
                continue
            col = head.index(name)
            if info.dtype == types_pb2.DT_STRING:
                t.string_val.extend(r[col].encode() for r in part)
            elif info.dtype == types_pb2.DT_INT64:
                t.dtype = types_pb2.DT_DOUBLE  # any numeric dtype will do
                t.double_val.extend(float(r[col]) for r in part)
            else:
                t.float_val.extend(float(r[col]) for r in part)
        out = stub.Predict(req, a.timeout).outputs
        if "predictions" in out:
            for v in out["predictions"].float_val:
                print(json.dumps({"predictions": v}))
            continue
        k = out["probabilities"].tensor_shape.dim[1].size
        p = list(out["probabilities"].float_val)
        for i, c in enumerate(out["classes"].string_val):
            print(json.dumps({"classes": c.decode(),
                              "probabilities": p[i * k:(i + 1) * k]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
