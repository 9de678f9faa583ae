#!/usr/bin/env python3
"""Writes tests/fixtures/transformer_12l/model.onnx, the 12-layer encoder that
tests/passes/transformer_fusion_test.cpp runs the fusion pipelines on.

The graph is bench/make_transformer.py's BERT-style post-LN encoder at toy
sizes (seq 8, hidden 16, 2 heads, FFN 64, ~150 KB), with the two forms an
exporter writes for the same layer:
  attention  MatMul(Q, K^T) -> Div(scale) -> Add(mask) -> Softmax -> MatMul(V),
             Q/K/V/O projections MatMul + Add(bias), heads split with
             Reshape + Transpose and merged back with Transpose + Reshape;
             the additive mask is the graph input `mask` [1,1,1,seq].
  LayerNorm  ln1 decomposed the way torch.onnx writes it below opset 17:
             ReduceMean, Sub, Pow(2), ReduceMean, Add(eps), Sqrt, Div,
             Mul(gamma), Add(beta); ln2 the opset-17 LayerNormalization op.
  MLP        MatMul + Add(bias), exact GELU in its Erf form
             (x * 0.5 * (1 + erf(x / sqrt 2))), MatMul + Add(bias).
Residual Adds before each LayerNorm. Weights are seeded (numpy default_rng(12)),
so rerunning writes the same file.

Run: python3 tests/passes/make_transformer_12l.py   (needs onnx, numpy)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "transformer_12l", "model.onnx")

LAYERS, SEQ, HIDDEN, HEADS, FFN = 12, 8, 16, 2, 64


def build(layers=LAYERS, seq=SEQ, hidden=HIDDEN, heads=HEADS, ffn=FFN, seed=12):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    dh = hidden // heads

    def w(name, shape, scale, offset=0.0):
        a = rng.standard_normal(shape) * scale + offset
        inits.append(numpy_helper.from_array(a.astype(np.float32), name))
        return name

    def c(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    c("shape_heads", np.array([1, seq, heads, dh], dtype=np.int64))
    c("shape_back", np.array([1, seq, hidden], dtype=np.int64))
    c("sqrt_dh", np.array(np.sqrt(dh), dtype=np.float32))
    c("two", np.array(2.0, dtype=np.float32))
    c("eps", np.array(1e-5, dtype=np.float32))
    c("half", np.array(0.5, dtype=np.float32))
    c("one", np.array(1.0, dtype=np.float32))
    c("sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))
    x = "x"
    s = 0.3
    for l in range(layers):
        p = f"l{l}_"

        def proj(inp, name, n_in, n_out):
            mm = node("MatMul", [inp, w(p + name + "_w", (n_in, n_out), s)], p + name + "_mm")
            return node("Add", [mm, w(p + name + "_b", (n_out,), 0.1)], p + name)

        def split(t, name, perm):
            r = node("Reshape", [t, "shape_heads"], p + name + "_r")
            return node("Transpose", [r], p + name + "_t", perm=perm)

        # self-attention
        q = split(proj(x, "q", hidden, hidden), "qh", [0, 2, 1, 3])
        k = split(proj(x, "k", hidden, hidden), "kh", [0, 2, 3, 1])
        v = split(proj(x, "v", hidden, hidden), "vh", [0, 2, 1, 3])
        sc = node("Div", [node("MatMul", [q, k], p + "qk"), "sqrt_dh"], p + "qk_scaled")
        sc = node("Add", [sc, "mask"], p + "qk_masked")
        pr = node("Softmax", [sc], p + "probs", axis=-1)
        ctx = node("MatMul", [pr, v], p + "ctx")
        ctx = node("Transpose", [ctx], p + "ctx_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, "shape_back"], p + "ctx_r")
        att = proj(ctx, "o", hidden, hidden)
        h = node("Add", [att, x], p + "res1")
        # ln1, decomposed
        mean = node("ReduceMean", [h], p + "ln1_mean", axes=[-1], keepdims=1)
        d = node("Sub", [h, mean], p + "ln1_sub")
        var = node("ReduceMean", [node("Pow", [d, "two"], p + "ln1_pow")], p + "ln1_var", axes=[-1], keepdims=1)
        std = node("Sqrt", [node("Add", [var, "eps"], p + "ln1_addeps")], p + "ln1_std")
        n = node("Div", [d, std], p + "ln1_norm")
        n = node("Mul", [n, w(p + "ln1_g", (hidden,), 0.1, 1.0)], p + "ln1_scale")
        h = node("Add", [n, w(p + "ln1_b", (hidden,), 0.1)], p + "ln1")
        # MLP with exact GELU
        f = proj(h, "ff1", hidden, ffn)
        g = node("Erf", [node("Div", [f, "sqrt2"], p + "gelu_div")], p + "gelu_erf")
        g = node("Mul", [f, node("Add", [g, "one"], p + "gelu_add")], p + "gelu_mul")
        g = node("Mul", [g, "half"], p + "gelu")
        f2 = proj(g, "ff2", ffn, hidden)
        h2 = node("Add", [f2, h], p + "res2")
        # ln2, the opset-17 op
        x = node("LayerNormalization", [h2, w(p + "ln2_g", (hidden,), 0.1, 1.0), w(p + "ln2_b", (hidden,), 0.1)],
                 p + "ln2", axis=-1, epsilon=1e-5)
    nodes.append(helper.make_node("Identity", [x], ["y"], name="y"))
    graph = helper.make_graph(
        nodes, f"encoder{layers}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, hidden]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 1, seq])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, hidden])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="fuselens-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    onnx.save(build(), OUT)
    print(OUT, os.path.getsize(OUT), "bytes")
