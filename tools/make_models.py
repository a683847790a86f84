#!/usr/bin/env python3
"""Writes the stand-in ONNX image models of models/ and their reference outputs.

Reproducible: fixed seeds, `onnx` opset 17, checked with `onnx.checker`. Run from the repository
root:  pip install onnx==1.23.2 onnxruntime==1.31.1 numpy && python3 tools/make_models.py

Each model is a plain CNN on a 3×64×64 float32 image (NCHW, dynamic batch N): 3×3 convolutions with
ReLU, then global average pooling and a dense layer to 16 scores. They have random (seeded)
weights: they stand in for real detectors by their compute, not by what they predict; their
accuracies in the profile are those of the detectors they stand in for (see models/models.yaml).

Also writes models/null.onnx: the same input and output, with next to no compute (Flatten, then a
Slice of the first 16 values of each image). It is no detector; benches/gateway.rs uses it to
measure what the gateway adds to a query, with the worker's compute out of the way. It is not
listed in models/models.yaml (so `continuum profile` and the worker tests leave it out): the bench
writes its own manifest for it.

Also writes models/reference.json: the outputs of Python onnxruntime for a fixed deterministic
input (the same formula as `continuum_worker::inference::reference_input` in Rust), so that tests can
check the Rust backends against ONNX Runtime without loading it.
"""
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
CLASSES = 16  # assumption: a small score vector keeps responses small; the count is arbitrary
# The producer name the committed models carry (this file's path when they were written, before
# it moved to tools/): kept, so that a run writes the same files.
PRODUCER = "continuum/scripts/make_models.py"

# (name, [(out_channels, stride), ...]) — widths and depths chosen so that compute per image grows
# roughly 10× from one model to the next (assumption: enough to separate delays clearly on a CPU).
MODELS = [
    ("cnn-s", [(8, 2), (16, 2), (32, 2)]),
    ("cnn-m", [(16, 1), (32, 2), (64, 2), (64, 1)]),
    ("cnn-l", [(32, 1), (32, 1), (64, 2), (64, 1), (96, 2), (96, 1)]),
]


def make(name, layers, seed):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    prev, c_in = "input", 3
    for i, (c_out, stride) in enumerate(layers):
        fan_in = c_in * 9
        w = (rng.standard_normal((c_out, c_in, 3, 3)) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        b = (rng.standard_normal(c_out) * 0.01).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes.append(helper.make_node("Conv", [prev, f"w{i}", f"b{i}"], [f"c{i}"],
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                      strides=[stride, stride]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        prev, c_in = f"r{i}", c_out
    nodes.append(helper.make_node("GlobalAveragePool", [prev], ["pool"]))
    nodes.append(helper.make_node("Flatten", ["pool"], ["flat"], axis=1))
    wd = (rng.standard_normal((CLASSES, c_in)) * np.sqrt(1.0 / c_in)).astype(np.float32)
    bd = np.zeros(CLASSES, dtype=np.float32)
    inits += [numpy_helper.from_array(wd, "wd"), numpy_helper.from_array(bd, "bd")]
    nodes.append(helper.make_node("Gemm", ["flat", "wd", "bd"], ["output"], transB=1))
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, 64, 64])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", CLASSES])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name=PRODUCER)
    model.ir_version = 8  # assumption: IR 8 is read by every ONNX Runtime ≥ 1.14 and by tract
    onnx.checker.check_model(model)
    return model


def make_null():
    """input [N, 3, 64, 64] -> output [N, 16]: the first CLASSES values of each flattened image."""
    inits = [numpy_helper.from_array(np.array([0], dtype=np.int64), "starts"),
             numpy_helper.from_array(np.array([CLASSES], dtype=np.int64), "ends"),
             numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")]
    nodes = [helper.make_node("Flatten", ["input"], ["flat"], axis=1),
             helper.make_node("Slice", ["flat", "starts", "ends", "axes"], ["output"])]
    graph = helper.make_graph(
        nodes, "null",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, 64, 64])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", CLASSES])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name=PRODUCER)
    model.ir_version = 8  # as make()
    onnx.checker.check_model(model)
    return model


def reference_input(n):
    """x[k] = ((k * 7919) % 251) / 251 - 0.5 over the flattened [n, 3, 64, 64] tensor."""
    k = np.arange(n * 3 * 64 * 64, dtype=np.int64)
    return (((k * 7919) % 251).astype(np.float32) / np.float32(251) - np.float32(0.5)).reshape(
        n, 3, 64, 64)


def main():
    refs = {}
    built = [(name, f"{name}.onnx", make(name, layers, seed))
             for seed, (name, layers) in enumerate(MODELS, start=1)]
    built.append(("null-model", "null.onnx", make_null()))
    for name, file, model in built:
        path = os.path.join(OUT, file)
        onnx.save(model, path)
        try:
            import onnxruntime as ort
        except ImportError:
            continue
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        y = sess.run(["output"], {"input": reference_input(2)})[0]
        refs[name] = {"input_batch": 2, "output_shape": list(y.shape),
                      "output": [float(v) for v in y.reshape(-1)],
                      "onnxruntime": ort.__version__}
        print(f"{path}: {os.path.getsize(path)} bytes")
    if refs:
        with open(os.path.join(OUT, "reference.json"), "w") as f:
            json.dump(refs, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
