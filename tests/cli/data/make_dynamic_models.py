#!/usr/bin/env python3
"""Models with a symbolic dim, for `run --sweep` (per shape and buckets).

transformer: a BERT-shaped encoder block over x[1, seq, hidden]: Q/K/V
projections, heads split with Reshape (0 copies a dim, so the graph stays
symbolic) + Transpose, scaled dot-product attention with Softmax over the keys,
output projection + residual, LayerNormalization over the hidden axis, a GELU
feed-forward and a second LayerNorm; outputs the tokens `y` [1, seq, hidden]
and their mean over the sequence `pooled` [1, hidden] (a reduction over the
padded axis).

ocr: an OCR-style CNN over an image of symbolic width, x[1, 1, 16, width]:
3x3 convs (stride 1, same padding) with ReLU, max pooling over the height
only, the mean over the height, then a per-column classifier with Softmax:
y [1, width, classes], as a CTC recognizer emits.

concat_slice and layernorm_seq: symbolic shape arithmetic (seq*2, seq*2-1)
and LayerNorm / AveragePool across the padded dim (see their docstrings).

Small by default (the CLI tests); bench/dynamic_shapes.py writes larger ones.
Deterministic: rerunning writes identical files.

    python3 tests/cli/data/make_dynamic_models.py            # the test models
    python3 tests/cli/data/make_dynamic_models.py --kind transformer --hidden 256 --out m.onnx
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []

    def init(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def weight(self, name, shape, scale):
        return self.init(name, (self.rng.standard_normal(shape) * scale).astype(np.float32))

    def node(self, op, ins, out, **attrs):
        self.nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def model(self, name, inputs, outputs):
        g = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="fuselens-tests")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def transformer(hidden=16, heads=2, ffn=32, seed=3):
    b = Builder(seed)
    dh = hidden // heads
    b.init("split_shape", np.array([0, 0, heads, dh], dtype=np.int64))
    b.init("merge_shape", np.array([0, 0, hidden], dtype=np.int64))
    b.init("scale", np.array(1.0 / np.sqrt(dh), dtype=np.float32))
    b.init("half", np.array(0.5, dtype=np.float32))
    b.init("one", np.array(1.0, dtype=np.float32))
    b.init("sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))

    def proj(x, name, n_in, n_out):
        mm = b.node("MatMul", [x, b.weight(name + "_w", (n_in, n_out), 1 / np.sqrt(n_in))], name + "_mm")
        return b.node("Add", [mm, b.weight(name + "_b", (n_out,), 0.1)], name)

    def heads_of(t, name, perm):
        r = b.node("Reshape", [t, "split_shape"], name + "_r")
        return b.node("Transpose", [r], name + "_t", perm=perm)

    def layer_norm(x, name):
        g = b.init(name + "_g", (1 + 0.1 * b.rng.standard_normal(hidden)).astype(np.float32))
        beta = b.weight(name + "_beta", (hidden,), 0.1)
        return b.node("LayerNormalization", [x, g, beta], name, axis=-1, epsilon=1e-5)

    q = heads_of(proj("x", "q", hidden, hidden), "q", [0, 2, 1, 3])
    k = heads_of(proj("x", "k", hidden, hidden), "k", [0, 2, 3, 1])
    v = heads_of(proj("x", "v", hidden, hidden), "v", [0, 2, 1, 3])
    s = b.node("Mul", [b.node("MatMul", [q, k], "qk"), "scale"], "scores")
    p = b.node("Softmax", [s], "probs", axis=-1)
    ctx = b.node("Transpose", [b.node("MatMul", [p, v], "ctx")], "ctx_t", perm=[0, 2, 1, 3])
    ctx = b.node("Reshape", [ctx, "merge_shape"], "ctx_r")
    h = layer_norm(b.node("Add", [proj(ctx, "o", hidden, hidden), "x"], "res1"), "ln1")
    f = proj(h, "ff1", hidden, ffn)
    e = b.node("Erf", [b.node("Div", [f, "sqrt2"], "gelu_s")], "gelu_erf")
    f = b.node("Mul", [b.node("Mul", [f, b.node("Add", [e, "one"], "gelu_a")], "gelu_m"), "half"], "gelu")
    y = layer_norm(b.node("Add", [proj(f, "ff2", ffn, hidden), h], "res2"), "y")
    b.node("ReduceMean", [y], "pooled", axes=[1], keepdims=0)
    return b.model("dyn_transformer",
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", hidden])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "seq", hidden]),
                    helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [1, hidden])])


def ocr(height=16, channels=(8, 16), classes=10, seed=5):
    b = Builder(seed)
    x, cin = "x", 1
    for i, cout in enumerate(channels):
        w = b.weight(f"c{i}_w", (cout, cin, 3, 3), np.sqrt(2.0 / (cin * 9)))
        x = b.node("Conv", [x, w, b.weight(f"c{i}_b", (cout,), 0.1)], f"c{i}",
                   kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        x = b.node("Relu", [x], f"c{i}_relu")
        x = b.node("MaxPool", [x], f"c{i}_pool", kernel_shape=[2, 1], strides=[2, 1])
        cin = cout
    x = b.node("ReduceMean", [x], "cols", axes=[2], keepdims=0)
    x = b.node("Transpose", [x], "cols_t", perm=[0, 2, 1])
    x = b.node("MatMul", [x, b.weight("cls_w", (cin, classes), 1 / np.sqrt(cin))], "logits_mm")
    x = b.node("Add", [x, b.weight("cls_b", (classes,), 0.1)], "logits")
    b.node("Softmax", [x], "y", axis=-1)
    return b.model("dyn_ocr",
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, height, "width"])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "width", classes])])


def concat_slice(hidden=8, seed=7):
    """Shape arithmetic on seq: Concat of x with Relu(x) along seq ([1, seq*2, h]),
    Slice [1:] of that ([1, seq*2-1, h]) into a projection, a stride-2 conv
    over the concatenation, whose output is seq long again, and heads split
    with a Reshape whose target is computed from Shape, as exporters write
    x.view(*x.shape[:2], 2, h/2)."""
    b = Builder(seed)
    b.init("one", np.array([1], dtype=np.int64))
    b.init("end", np.array([np.iinfo(np.int64).max], dtype=np.int64))
    c = b.node("Concat", ["x", b.node("Relu", ["x"], "relu")], "cat", axis=1)
    s = b.node("Slice", [c, "one", "end", "one"], "tail")
    b.node("MatMul", [s, b.weight("w", (hidden, 4), 1 / np.sqrt(hidden))], "y")
    t = b.node("Transpose", [c], "cat_t", perm=[0, 2, 1])
    b.node("Conv", [t, b.weight("k", (4, hidden, 3), 1 / np.sqrt(3 * hidden))], "z",
           kernel_shape=[3], pads=[1, 1], strides=[2])
    b.init("zero", np.array([0], dtype=np.int64))
    b.init("two", np.array([2], dtype=np.int64))
    b.init("heads", np.array([2, hidden // 2], dtype=np.int64))
    lead = b.node("Slice", [b.node("Shape", [c], "cat_shape"), "zero", "two"], "cat_lead")
    r = b.node("Reshape", [c, b.node("Concat", [lead, "heads"], "split_to", axis=0)], "split")
    b.node("Transpose", [r], "h", perm=[0, 2, 1, 3])
    return b.model("dyn_concat_slice",
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", hidden])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "2*seq - 1", 4]),
                    helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4, "seq"]),
                    helper.make_tensor_value_info("h", TensorProto.FLOAT,
                                                  [1, 2, "2*seq", hidden // 2])])


def layernorm_seq(hidden=8, seed=11):
    """Normalization and pooling across the padded dim: LayerNormalization with
    axis=1 over x[1, seq, h] (statistics over seq and h), then an AveragePool
    along seq that does not count its pads (count_include_pad=0), 1-D and 3x3
    over [1, 2, h/2, seq]; and the same
    normalization written out over seq alone (ReduceMean, Sub, Pow, ReduceMean,
    Add, Sqrt, Div), as exporters often emit it."""
    b = Builder(seed)
    g = b.init("ln_g", (1 + 0.1 * b.rng.standard_normal(hidden)).astype(np.float32))
    ln = b.node("LayerNormalization", ["x", g, b.weight("ln_b", (hidden,), 0.1)], "ln",
                axis=1, epsilon=1e-5)
    t = b.node("Transpose", [ln], "ln_t", perm=[0, 2, 1])
    b.node("AveragePool", [t], "y", kernel_shape=[3], pads=[1, 1], count_include_pad=0)
    b.init("grid", np.array([1, 2, hidden // 2, -1], dtype=np.int64))
    b.node("AveragePool", [b.node("Reshape", [t, "grid"], "ln_grid")], "y2",
           kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=0)
    b.init("two", np.array(2.0, dtype=np.float32))
    b.init("eps", np.array(1e-5, dtype=np.float32))
    mean = b.node("ReduceMean", ["x"], "dn_mean", axes=[1], keepdims=1)
    d = b.node("Sub", ["x", mean], "dn_d")
    var = b.node("ReduceMean", [b.node("Pow", [d, "two"], "dn_sq")], "dn_var", axes=[1], keepdims=1)
    root = b.node("Sqrt", [b.node("Add", [var, "eps"], "dn_var_eps")], "dn_std")
    b.node("Div", [d, root], "dn")
    m = b.model("dyn_layernorm_seq",
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", hidden])],
                   [helper.make_tensor_value_info("ln", TensorProto.FLOAT, [1, "seq", hidden]),
                    helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, hidden, "seq"]),
                    helper.make_tensor_value_info("y2", TensorProto.FLOAT,
                                                  [1, 2, hidden // 2, "seq"]),
                    helper.make_tensor_value_info("dn", TensorProto.FLOAT, [1, "seq", hidden])])
    # The author's hint for the dims dialog and the CLI's suggestion.
    helper.set_model_props(m, {"dim.seq": "24"})
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", choices=["transformer", "ocr"])
    ap.add_argument("--hidden", type=int, default=256, help="transformer width")
    ap.add_argument("--height", type=int, default=32, help="ocr image height")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.kind is None:  # the CLI tests' models
        onnx.save(transformer(), os.path.join(HERE, "dyn_transformer", "model.onnx"))
        onnx.save(ocr(), os.path.join(HERE, "dyn_ocr", "model.onnx"))
        for name, make in (("dyn_concat_slice", concat_slice), ("dyn_layernorm_seq", layernorm_seq)):
            os.makedirs(os.path.join(HERE, name), exist_ok=True)
            onnx.save(make(), os.path.join(HERE, name, "model.onnx"))
        return
    m = (transformer(a.hidden, max(1, a.hidden // 64), 4 * a.hidden) if a.kind == "transformer"
         else ocr(a.height, (32, 64, 128), 40))
    onnx.save(m, a.out)
    print(f"{a.out}: {len(m.graph.node)} nodes")


if __name__ == "__main__":
    main()
