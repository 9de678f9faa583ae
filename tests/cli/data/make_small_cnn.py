#!/usr/bin/env python3
"""Writes tests/cli/data/small_cnn/model.onnx, the small CNN the profile test
runs: input [1,3,32,32], conv 3x3 (8) + BatchNormalization + Relu, MaxPool 2,
conv 3x3 (16) + Relu, a depthwise conv 3x3 + Relu, GlobalAveragePool, Flatten,
Gemm to 10 classes. Seed-fixed, opset 17, a few kilobytes.

Run from anywhere: python3 tests/cli/data/make_small_cnn.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(13)

    def w(name, shape, scale=0.2):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [
        w("c1_w", [8, 3, 3, 3]), w("c1_b", [8]),
        w("bn_scale", [8], 1.0), w("bn_bias", [8]), w("bn_mean", [8]),
        numpy_helper.from_array(np.abs(rng.standard_normal([8])).astype(np.float32) + 0.5, "bn_var"),
        w("c2_w", [16, 8, 3, 3]), w("c2_b", [16]),
        w("dw_w", [16, 1, 3, 3]), w("dw_b", [16]),
        w("fc_w", [10, 16]), w("fc_b", [10]),
    ]
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "c1_w", "c1_b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["bn1"], name="bn1"),
        n("Relu", ["bn1"], ["r1"], name="relu1"),
        n("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["p1", "c2_w", "c2_b"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        n("Relu", ["c2"], ["r2"], name="relu2"),
        n("Conv", ["r2", "dw_w", "dw_b"], ["dw"], name="dwconv", pads=[1, 1, 1, 1], group=16),
        n("Relu", ["dw"], ["r3"], name="relu3"),
        n("GlobalAveragePool", ["r3"], ["gap"], name="gap"),
        n("Flatten", ["gap"], ["flat"], name="flatten"),
        n("Gemm", ["flat", "fc_w", "fc_b"], ["y"], name="fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "small_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="fuselens-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(HERE, "small_cnn"), exist_ok=True)
    onnx.save(model, os.path.join(HERE, "small_cnn", "model.onnx"))


if __name__ == "__main__":
    main()
