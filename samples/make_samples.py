#!/usr/bin/env python3
"""Writes the bundled sample models (samples/*.onnx) that README commands and
tests run: small, seed-fixed, opset 17 / IR version 8 so any ONNX tool opens
them. Weights are scaled by 0.1 so activations stay well-conditioned and
eager-vs-compiled comparisons measure kernels, not overflow.

Run from anywhere: python3 samples/make_samples.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET, IR_VERSION = 17, 8


def save(graph, name):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="fuselens-samples")
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def weight(rng, name, shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)


def matmul_bias_relu():
    rng = np.random.default_rng(1)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["mm"], name="fc"),
        helper.make_node("Add", ["mm", "bias"], ["pre"], name="bias_add"),
        helper.make_node("Relu", ["pre"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "matmul_bias_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 128])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
        [weight(rng, "W", [128, 64]), weight(rng, "bias", [64])])
    save(graph, "matmul_bias_relu.onnx")


def mlp():
    rng = np.random.default_rng(2)
    nodes = [
        helper.make_node("Gemm", ["x", "W1", "b1"], ["h1"], name="fc1", transB=1),
        helper.make_node("Relu", ["h1"], ["a1"], name="relu1"),
        helper.make_node("MatMul", ["a1", "W2"], ["h2"], name="fc2"),
        helper.make_node("Add", ["h2", "b2"], ["z2"], name="fc2_bias"),
        helper.make_node("Tanh", ["z2"], ["a2"], name="tanh2"),
        helper.make_node("Softmax", ["a2"], ["y"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 32])],
        [weight(rng, "W1", [128, 64]), weight(rng, "b1", [128]),
         weight(rng, "W2", [128, 32]), weight(rng, "b2", [32])])
    save(graph, "mlp.onnx")


if __name__ == "__main__":
    matmul_bias_relu()
    mlp()
