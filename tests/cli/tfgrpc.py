"""A TF Serving gRPC client for the tests, as TF Serving's own Python
clients are written: grpcio with stubs that grpc_tools.protoc generated
from the project's protos (libtfcore/proto) into $PB (tf-serve-grpc.bats
makes them in setup_file).

    import tfgrpc
    pred, status = tfgrpc.stubs(port)
    r = pred.Predict(tfgrpc.predict("bc", {"features": rows}), 5.0)
"""
import os
import struct
import sys

sys.path.insert(0, os.environ["PB"])

import grpc  # noqa: E402
from tensorflow.core.framework import tensor_pb2, types_pb2  # noqa: E402
from tensorflow_serving.apis import (  # noqa: E402
    classification_pb2, get_model_metadata_pb2, get_model_status_pb2,
    model_service_pb2_grpc, predict_pb2, prediction_service_pb2_grpc,
    regression_pb2)

import example_pb2  # noqa: E402


def stubs(port):
    ch = grpc.insecure_channel("127.0.0.1:%s" % port)
    return (prediction_service_pb2_grpc.PredictionServiceStub(ch),
            model_service_pb2_grpc.ModelServiceStub(ch))


def tensor(values, shape=None, dtype=types_pb2.DT_FLOAT, content=False):
    """A TensorProto of a list (of rows) of numbers or strings."""
    flat, dims = values, []
    if shape is None:
        dims = [len(values)]
        if values and isinstance(values[0], (list, tuple)):
            dims.append(len(values[0]))
            flat = [v for row in values for v in row]
    else:
        dims = shape
    t = tensor_pb2.TensorProto(dtype=dtype)
    for d in dims:
        t.tensor_shape.dim.add(size=d)
    if dtype == types_pb2.DT_STRING:
        t.string_val.extend(v.encode() for v in flat)
    elif content:
        fmt = {types_pb2.DT_FLOAT: "f", types_pb2.DT_DOUBLE: "d",
               types_pb2.DT_INT64: "q", types_pb2.DT_INT32: "i"}[dtype]
        t.tensor_content = struct.pack("<%d%s" % (len(flat), fmt), *flat)
    elif dtype == types_pb2.DT_FLOAT:
        t.float_val.extend(flat)
    elif dtype == types_pb2.DT_DOUBLE:
        t.double_val.extend(flat)
    elif dtype == types_pb2.DT_INT64:
        t.int64_val.extend(int(v) for v in flat)
    else:
        t.int_val.extend(int(v) for v in flat)
    return t


def spec(msg, model, version=None, signature=None):
    msg.model_spec.name = model
    if version is not None:
        msg.model_spec.version.value = version
    if signature is not None:
        msg.model_spec.signature_name = signature
    return msg


def predict(model, inputs, version=None, outputs=(), signature=None):
    r = spec(predict_pb2.PredictRequest(), model, version, signature)
    for k, v in inputs.items():
        r.inputs[k].CopyFrom(v if isinstance(v, tensor_pb2.TensorProto)
                             else tensor(v))
    r.output_filter.extend(outputs)
    return r


def example(features):
    """A tf.train.Example of {name: number, string or list}."""
    ex = example_pb2.Example()
    for k, v in features.items():
        f = ex.features.feature[k]
        vs = v if isinstance(v, list) else [v]
        if isinstance(vs[0], str):
            f.bytes_list.value.extend(x.encode() for x in vs)
        else:
            f.float_list.value.extend(vs)
    return ex


def examples(msg, model, rows, context=None, version=None):
    r = spec(msg, model, version)
    if context is None:
        for row in rows:
            r.input.example_list.examples.add().CopyFrom(example(row))
    else:
        el = r.input.example_list_with_context
        for row in rows:
            el.examples.add().CopyFrom(example(row))
        el.context.CopyFrom(example(context))
    return r


def classify(model, rows, **kw):
    return examples(classification_pb2.ClassificationRequest(), model, rows,
                    **kw)


def regress(model, rows, **kw):
    return examples(regression_pb2.RegressionRequest(), model, rows, **kw)


def metadata(model, version=None, fields=("signature_def",)):
    r = spec(get_model_metadata_pb2.GetModelMetadataRequest(), model, version)
    r.metadata_field.extend(fields)
    return r


def signatures(resp):
    m = get_model_metadata_pb2.SignatureDefMap()
    assert resp.metadata["signature_def"].Unpack(m)
    return m.signature_def


def status(model, version=None):
    return spec(get_model_status_pb2.GetModelStatusRequest(), model, version)


def error(call, *args):
    """The (code name, details) a call fails with."""
    try:
        call(*args)
    except grpc.RpcError as e:
        return e.code().name, e.details()
    raise AssertionError("the call succeeded")


def values(t):
    """A TensorProto's values as a flat list."""
    if t.dtype == types_pb2.DT_FLOAT:
        return list(t.float_val)
    if t.dtype == types_pb2.DT_INT64:
        return list(t.int64_val)
    return [s.decode() for s in t.string_val]


def close(a, b, tol=1e-6):
    return len(a) == len(b) and all(
        abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(a, b))
