#!/usr/bin/env python3
"""Writes a small ResNet-style CNN as ONNX for fuselens-bench: a 3x3 stride-2
conv-BN-ReLU stem, then residual basic blocks (conv-BN-ReLU, conv-BN, + shortcut,
ReLU), each after the first halving H and W with stride 2 and a 1x1 stride-2
conv-BN shortcut, then global average pooling, Flatten and a Gemm head. Opset 13,
static shapes, seeded random weights (He-scaled so activations stay O(1))."""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(size, widths, classes, seed):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []

    def init(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name))
        return name

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def conv_bn(x, cin, cout, k, stride, name, relu):
        w = init(name + "_w", rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k)))
        y = node("Conv", [x, w], name, kernel_shape=[k, k], strides=[stride, stride],
                 pads=[k // 2] * 4)
        bn = [init(name + "_bn_" + p, v) for p, v in (
            ("scale", rng.uniform(0.5, 1.5, cout)), ("bias", rng.standard_normal(cout) * 0.1),
            ("mean", rng.standard_normal(cout) * 0.1), ("var", rng.uniform(0.5, 1.5, cout)))]
        y = node("BatchNormalization", [y] + bn, name + "_bn", epsilon=1e-5)
        return node("Relu", [y], name + "_relu") if relu else y

    x = conv_bn("x", 3, widths[0], 3, 2, "stem", True)
    cin = widths[0]
    for i, cout in enumerate(widths):
        stride = 1 if i == 0 else 2
        p = f"b{i}_"
        h = conv_bn(x, cin, cout, 3, stride, p + "c1", True)
        h = conv_bn(h, cout, cout, 3, 1, p + "c2", False)
        short = x if stride == 1 and cin == cout else conv_bn(x, cin, cout, 1, stride, p + "down", False)
        x = node("Relu", [node("Add", [h, short], p + "add")], p + "out")
        cin = cout
    x = node("GlobalAveragePool", [x], "gap")
    x = node("Flatten", [x], "flat", axis=1)
    fc_w = init("fc_w", rng.standard_normal((classes, cin)) / np.sqrt(cin))
    fc_b = init("fc_b", rng.standard_normal(classes) * 0.01)
    node("Gemm", [x, fc_w, fc_b], "y", transB=1)
    graph = helper.make_graph(
        nodes, "small_resnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, classes])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="fuselens-bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=112, help="input H = W")
    ap.add_argument("--widths", default="32,64,128,256", help="channels per residual block")
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    widths = [int(w) for w in a.widths.split(",")]
    onnx.save(build(a.size, widths, a.classes, seed=1), a.out)


if __name__ == "__main__":
    main()
