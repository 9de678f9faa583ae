#!/usr/bin/env python3
"""Writes a BERT-style encoder (seq 128, hidden 768, 12 heads, FFN 3072) as
ONNX for fuselens-bench: --layers N blocks of self-attention + residual +
LayerNormalization + FFN with exact GELU (Erf form) + residual +
LayerNormalization, opset 17, static shapes, seeded random weights. Used for
the eager / compiled / ONNX Runtime rows and the compile-time row."""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(layers, seq, hidden, heads, ffn, seed):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    dh = hidden // heads

    def w(name, shape, scale):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def c(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    c("shape_heads", np.array([1, seq, heads, dh], dtype=np.int64))
    c("shape_back", np.array([1, seq, hidden], dtype=np.int64))
    c("scale", np.array(1.0 / np.sqrt(dh), dtype=np.float32))
    c("half", np.array(0.5, dtype=np.float32))
    c("one", np.array(1.0, dtype=np.float32))
    c("rsqrt2", np.array(1.0 / np.sqrt(2.0), dtype=np.float32))
    x = "x"
    s = 0.02
    for l in range(layers):
        p = f"l{l}_"
        def proj(inp, name, n_in, n_out):
            mm = node("MatMul", [inp, w(p + name + "_w", (n_in, n_out), s)], p + name + "_mm")
            return node("Add", [mm, w(p + name + "_b", (n_out,), s)], p + name)
        def split(t, name, perm):
            r = node("Reshape", [t, "shape_heads"], p + name + "_r")
            return node("Transpose", [r], p + name + "_t", perm=perm)
        q = split(proj(x, "q", hidden, hidden), "qh", [0, 2, 1, 3])
        k = split(proj(x, "k", hidden, hidden), "kh", [0, 2, 3, 1])
        v = split(proj(x, "v", hidden, hidden), "vh", [0, 2, 1, 3])
        sc = node("Mul", [node("MatMul", [q, k], p + "qk"), "scale"], p + "qk_scaled")
        pr = node("Softmax", [sc], p + "probs", axis=-1)
        ctx = node("MatMul", [pr, v], p + "ctx")
        ctx = node("Transpose", [ctx], p + "ctx_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, "shape_back"], p + "ctx_r")
        att = proj(ctx, "o", hidden, hidden)
        h = node("Add", [att, x], p + "res1")
        h = node("LayerNormalization", [h, w(p + "ln1_g", (hidden,), 1.0), w(p + "ln1_b", (hidden,), s)],
                 p + "ln1", axis=-1, epsilon=1e-5)
        f = proj(h, "ff1", hidden, ffn)
        g = node("Erf", [node("Mul", [f, "rsqrt2"], p + "gelu_s")], p + "gelu_erf")
        g = node("Mul", [f, node("Add", [g, "one"], p + "gelu_a")], p + "gelu_m")
        g = node("Mul", [g, "half"], p + "gelu")
        f2 = proj(g, "ff2", ffn, hidden)
        h2 = node("Add", [f2, h], p + "res2")
        x = node("LayerNormalization", [h2, w(p + "ln2_g", (hidden,), 1.0), w(p + "ln2_b", (hidden,), s)],
                 p + "ln2", axis=-1, epsilon=1e-5)
    nodes.append(helper.make_node("Identity", [x], ["y"], name="y"))
    graph = helper.make_graph(
        nodes, f"encoder{layers}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, hidden])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, hidden])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="fuselens-bench")
    model.ir_version = 8
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    m = build(a.layers, a.seq, 768, 12, 3072, seed=1)
    onnx.save(m, a.out)


if __name__ == "__main__":
    main()
