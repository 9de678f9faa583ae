#!/usr/bin/env python3
"""Writes a BERT-shaped encoder as an exporter writes it (~100 nodes a layer,
~1,200 for 12 layers) for the compile-time rows: LayerNormalization and GELU
decomposed into elementwise ops and reductions, an additive attention mask,
Q/K/V/O projections as MatMul + Add, heads split with Reshape + Transpose,
Softmax. Smaller than BERT-base (hidden 256, 4 heads, FFN 1024, seq 64) so the
file stays small; compile time depends on the node count and shapes' kinds,
not on the widths. Opset 17, static shapes (or a symbolic `seq` with --symbolic-seq), seeded weights.

    python3 bench/make_bert.py --layers 12 --out /tmp/bert12.onnx
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(layers, seq, hidden, heads, ffn, seed, symbolic=False):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    dh = hidden // heads

    def w(name, shape, scale=0.02):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def c(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    c("tail_heads", np.array([heads, dh], dtype=np.int64))
    c("tail_back", np.array([hidden], dtype=np.int64))
    c("axes0", np.array([0], dtype=np.int64))
    c("scale", np.array(1.0 / np.sqrt(dh), dtype=np.float32))
    c("half", np.array(0.5, dtype=np.float32))
    c("one", np.array(1.0, dtype=np.float32))
    c("two", np.array(2.0, dtype=np.float32))
    c("eps", np.array(1e-12, dtype=np.float32))
    c("neg_big", np.array(-10000.0, dtype=np.float32))

    # The mask: 1 keeps a position, 0 masks it; added to the scores as (1 - m) * -1e4.
    m = node("Unsqueeze", ["mask", c("axes12", np.array([1, 2], dtype=np.int64))], "mask_u")
    m = node("Sub", ["one", m], "mask_inv")
    mask = node("Mul", [m, "neg_big"], "mask_add")

    def layer_norm(x, p):
        mean = node("ReduceMean", [x], p + "_mean", axes=[-1], keepdims=1)
        d = node("Sub", [x, mean], p + "_d")
        var = node("ReduceMean", [node("Pow", [d, "two"], p + "_sq")], p + "_var", axes=[-1], keepdims=1)
        std = node("Sqrt", [node("Add", [var, "eps"], p + "_ve")], p + "_std")
        n = node("Div", [d, std], p + "_n")
        n = node("Mul", [n, w(p + "_g", (hidden,), 1.0)], p + "_gn")
        return node("Add", [n, w(p + "_b", (hidden,))], p)

    x = "x"
    for l in range(layers):
        p = f"l{l}_"

        def proj(inp, name, n_in, n_out):
            mm = node("MatMul", [inp, w(p + name + "_w", (n_in, n_out))], p + name + "_mm")
            return node("Add", [mm, w(p + name + "_b", (n_out,))], p + name)

        # The target shape computed from the tensor at run time, as exporters
        # write it (Shape -> Gather -> Unsqueeze -> Concat); constant folding
        # removes it, which is part of what a compile costs.
        def shape_of(t, name, tail):
            dims = []
            for i in (0, 1):
                idx = node("Constant", [], f"{p}{name}_i{i}",
                           value=numpy_helper.from_array(np.array(i, dtype=np.int64)))
                g = node("Gather", [node("Shape", [t], f"{p}{name}_shape{i}"), idx], f"{p}{name}_g{i}", axis=0)
                dims.append(node("Unsqueeze", [g, "axes0"], f"{p}{name}_u{i}"))
            return node("Concat", dims + [tail], p + name + "_shape", axis=0)

        def split(t, name, perm):
            r = node("Reshape", [t, shape_of(t, name, "tail_heads")], p + name + "_r")
            return node("Transpose", [r], p + name + "_t", perm=perm)

        q = split(proj(x, "q", hidden, hidden), "qh", [0, 2, 1, 3])
        k = split(proj(x, "k", hidden, hidden), "kh", [0, 2, 3, 1])
        v = split(proj(x, "v", hidden, hidden), "vh", [0, 2, 1, 3])
        sc = node("Mul", [node("MatMul", [q, k], p + "qk"), "scale"], p + "qk_scaled")
        sc = node("Add", [sc, mask], p + "qk_masked")
        pr = node("Softmax", [sc], p + "probs", axis=-1)
        ctx = node("MatMul", [pr, v], p + "ctx")
        ctx = node("Transpose", [ctx], p + "ctx_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, shape_of(ctx, "ctx", "tail_back")], p + "ctx_r")
        h = layer_norm(node("Add", [proj(ctx, "o", hidden, hidden), x], p + "res1"), p + "ln1")
        f = proj(h, "ff1", hidden, ffn)
        g = node("Erf", [node("Div", [f, c(p + "sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))], p + "gelu_s")], p + "gelu_erf")
        g = node("Mul", [f, node("Add", [g, "one"], p + "gelu_a")], p + "gelu_m")
        g = node("Mul", [g, "half"], p + "gelu")
        x = layer_norm(node("Add", [proj(g, "ff2", ffn, hidden), h], p + "res2"), p + "ln2")
    nodes.append(helper.make_node("Identity", [x], ["y"], name="y"))
    seq = "seq" if symbolic else seq
    graph = helper.make_graph(
        nodes, f"bert{layers}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, hidden]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, seq])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, hidden])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="fuselens-bench")
    model.ir_version = 8
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--symbolic-seq", action="store_true",
                    help="declare the sequence length as the symbolic dim 'seq' (run --sweep)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    m = build(a.layers, a.seq, a.hidden, max(1, a.hidden // 64), 4 * a.hidden, seed=1,
              symbolic=a.symbolic_seq)
    onnx.save(m, a.out)
    print(f"{a.out}: {len(m.graph.node)} nodes")


if __name__ == "__main__":
    main()
