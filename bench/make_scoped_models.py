#!/usr/bin/env python3
"""Writes ONNX models whose op names carry name scopes the way exporters write
them, for the graph view's benchmarks and tests (small tensors: the view cares
about the graph, not the arithmetic).

  --kind bert         BERT-shaped encoder, torch exporter names
                      (/encoder/layer.3/attention/self/query/MatMul), with the
                      Shape/Gather/Unsqueeze/Concat chains torch emits for reshapes
  --kind transformer  decoder stack with LLM-style names
                      (/model/layers.7/self_attn/q_proj/MatMul); --nodes sets the
                      size, --layers is derived from it
  --kind chain        one long chain of elementwise ops with unscoped names (Relu_17)

Prints the node count. Opset 17, static shapes, seeded weights."""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []
        self.count = {}

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def weight(self, name, shape):
        return self.const(name, (self.rng.standard_normal(shape) * 0.05).astype(np.float32))

    def op(self, scope, op, ins, **attrs):
        # Exporters number repeated ops of one scope: MatMul, MatMul_1, ...
        key = (scope, op)
        k = self.count.get(key, 0)
        self.count[key] = k + 1
        name = f"{scope}/{op}" + (f"_{k}" if k else "")
        out = name + "_output_0"
        self.nodes.append(helper.make_node(op, ins, [out], name=name, **attrs))
        return out

    def model(self, inputs, outputs):
        graph = helper.make_graph(self.nodes, "scoped", inputs, outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8  # opset 17 is IR 8; newer onnx writers stamp their own
        m.producer_name = "fuselens-bench"
        return m


def linear(b, scope, x, n_in, n_out):
    w = b.weight(scope.strip("/").replace("/", ".") + ".weight", (n_in, n_out))
    bias = b.weight(scope.strip("/").replace("/", ".") + ".bias", (n_out,))
    return b.op(scope, "Add", [b.op(scope, "MatMul", [x, w]), bias])


def layer_norm(b, scope, x, hidden):
    # torch exports LayerNorm below opset 17 as its arithmetic
    mean = b.op(scope, "ReduceMean", [x], axes=[-1], keepdims=1)
    d = b.op(scope, "Sub", [x, mean])
    var = b.op(scope, "ReduceMean", [b.op(scope, "Pow", [d, "two"])], axes=[-1], keepdims=1)
    std = b.op(scope, "Sqrt", [b.op(scope, "Add", [var, "eps"])])
    y = b.op(scope, "Div", [d, std])
    g = b.weight(scope.strip("/").replace("/", ".") + ".gamma", (hidden,))
    beta = b.weight(scope.strip("/").replace("/", ".") + ".beta", (hidden,))
    return b.op(scope, "Add", [b.op(scope, "Mul", [y, g]), beta])


def reshape_like_torch(b, scope, x, dims):
    # Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as torch.onnx writes a view()
    shape = b.op(scope, "Shape", [x])
    parts = []
    for i in range(2):
        g = b.op(scope, "Gather", [shape, b.const(f"{scope}.idx{i}.{len(b.nodes)}", np.array(i, np.int64))], axis=0)
        parts.append(b.op(scope, "Unsqueeze", [g, "axes0"]))
    tail = b.const(f"{scope}.tail.{len(b.nodes)}", np.array(dims, np.int64))
    cat = b.op(scope, "Concat", parts + [tail], axis=0)
    return b.op(scope, "Reshape", [x, cat])


def bert(layers, seq=16, hidden=32, heads=4, ffn=64, seed=0):
    b = Builder(seed)
    dh = hidden // heads
    b.const("two", np.array(2.0, np.float32))
    b.const("eps", np.array(1e-12, np.float32))
    b.const("axes0", np.array([0], np.int64))
    b.const("sqrt_dh", np.array(np.sqrt(dh), np.float32))
    b.const("half", np.array(0.5, np.float32))
    b.const("one", np.array(1.0, np.float32))
    b.const("rsqrt2", np.array(np.sqrt(2.0), np.float32))
    b.const("axes1", np.array([1], np.int64))
    b.const("neg_big", np.array(-1e4, np.float32))
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, seq])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, seq])
    table = b.weight("embeddings.word_embeddings.weight", (100, hidden))
    pos = b.weight("embeddings.position_embeddings.weight", (1, seq, hidden))
    x = b.op("/embeddings/word_embeddings", "Gather", [table, "input_ids"], axis=0)
    x = b.op("/embeddings", "Add", [x, pos])
    x = layer_norm(b, "/embeddings/LayerNorm", x, hidden)
    for l in range(layers):
        p = f"/encoder/layer.{l}"
        sp = p + "/attention/self"

        def heads_of(t, name, perm):
            r = reshape_like_torch(b, sp, t, [heads, dh])
            return b.op(sp, "Transpose", [r], perm=perm)

        q = heads_of(linear(b, sp + "/query", x, hidden, hidden), "q", [0, 2, 1, 3])
        k = heads_of(linear(b, sp + "/key", x, hidden, hidden), "k", [0, 2, 3, 1])
        v = heads_of(linear(b, sp + "/value", x, hidden, hidden), "v", [0, 2, 1, 3])
        s = b.op(sp, "Div", [b.op(sp, "MatMul", [q, k]), "sqrt_dh"])
        # the extended attention mask, which older exports recompute per layer
        m = b.op(p + "/attention", "Unsqueeze", [b.op(p + "/attention", "Unsqueeze", ["attention_mask", "axes1"]), "axes1"])
        m = b.op(p + "/attention", "Cast", [m], to=TensorProto.FLOAT)
        m = b.op(p + "/attention", "Mul", [b.op(p + "/attention", "Sub", ["one", m]), "neg_big"])
        s = b.op(sp, "Add", [s, m])
        ctx = b.op(sp, "MatMul", [b.op(sp, "Softmax", [s], axis=-1), v])
        ctx = b.op(sp, "Transpose", [ctx], perm=[0, 2, 1, 3])
        ctx = reshape_like_torch(b, sp, ctx, [hidden])
        ao = p + "/attention/output"
        h = b.op(ao, "Add", [linear(b, ao + "/dense", ctx, hidden, hidden), x])
        h = layer_norm(b, ao + "/LayerNorm", h, hidden)
        f = linear(b, p + "/intermediate/dense", h, hidden, ffn)
        act = p + "/intermediate/intermediate_act_fn"
        erf = b.op(act, "Erf", [b.op(act, "Div", [f, "rsqrt2"])])
        f = b.op(act, "Mul", [b.op(act, "Mul", [f, b.op(act, "Add", [erf, "one"])]), "half"])
        o = b.op(p + "/output", "Add", [linear(b, p + "/output/dense", f, ffn, hidden), h])
        x = layer_norm(b, p + "/output/LayerNorm", o, hidden)
    pooled = b.op("/pooler/activation", "Tanh", [linear(b, "/pooler/dense", x, hidden, hidden)])
    out = helper.make_tensor_value_info(pooled, TensorProto.FLOAT, [1, seq, hidden])
    return b.model([ids, mask], [out])


def transformer_layer(b, l, x, hidden, ffn):
    p = f"/model/layers.{l}"

    def rms(scope, t):
        var = b.op(scope, "ReduceMean", [b.op(scope, "Pow", [t, "two"])], axes=[-1], keepdims=1)
        inv = b.op(scope, "Div", ["one", b.op(scope, "Sqrt", [b.op(scope, "Add", [var, "eps"])])])
        g = b.weight(scope.strip("/").replace("/", ".") + ".weight", (hidden,))
        return b.op(scope, "Mul", [b.op(scope, "Mul", [t, inv]), g])

    def proj(scope, t, n_in, n_out):
        return b.op(scope, "MatMul", [t, b.weight(scope.strip("/").replace("/", ".") + ".weight", (n_in, n_out))])

    def rotary(scope, t):
        half = hidden // 2
        a = b.op(scope, "Slice", [t, "zero1", b.const(f"{scope}.h.{len(b.nodes)}", np.array([half], np.int64)), "last1"])
        c = b.op(scope, "Slice", [t, b.const(f"{scope}.h2.{len(b.nodes)}", np.array([half], np.int64)),
                                  b.const(f"{scope}.e.{len(b.nodes)}", np.array([hidden], np.int64)), "last1"])
        rot = b.op(scope, "Concat", [b.op(scope, "Neg", [c]), a], axis=-1)
        return b.op(scope, "Add", [b.op(scope, "Mul", [t, "cos"]), b.op(scope, "Mul", [rot, "sin"])])

    h = rms(p + "/input_layernorm", x)
    sa = p + "/self_attn"
    q = rotary(sa + "/rotary_emb", proj(sa + "/q_proj", h, hidden, hidden))
    k = rotary(sa + "/rotary_emb", proj(sa + "/k_proj", h, hidden, hidden))
    v = proj(sa + "/v_proj", h, hidden, hidden)
    s = b.op(sa, "Div", [b.op(sa, "MatMul", [q, b.op(sa, "Transpose", [k], perm=[0, 2, 1])]), "sqrt_dh"])
    s = b.op(sa, "Add", [s, "causal_mask"])
    ctx = b.op(sa, "MatMul", [b.op(sa, "Softmax", [s], axis=-1), v])
    x = b.op(p, "Add", [x, proj(sa + "/o_proj", ctx, hidden, hidden)])
    h = rms(p + "/post_attention_layernorm", x)
    mlp = p + "/mlp"
    gate = proj(mlp + "/gate_proj", h, hidden, ffn)
    act = b.op(mlp + "/act_fn", "Mul", [gate, b.op(mlp + "/act_fn", "Sigmoid", [gate])])
    up = proj(mlp + "/up_proj", h, hidden, ffn)
    down = proj(mlp + "/down_proj", b.op(mlp, "Mul", [act, up]), ffn, hidden)
    return b.op(p, "Add", [x, down])


def transformer(nodes, seq=8, hidden=16, ffn=32, seed=0):
    b = Builder(seed)
    for name, v in [("two", 2.0), ("one", 1.0), ("eps", 1e-6), ("sqrt_dh", np.sqrt(hidden))]:
        b.const(name, np.array(v, np.float32))
    b.const("zero1", np.array([0], np.int64))
    b.const("last1", np.array([-1], np.int64))
    b.const("cos", np.ones((seq, hidden), np.float32))
    b.const("sin", np.zeros((seq, hidden), np.float32))
    b.const("causal_mask", np.triu(np.full((seq, seq), -1e4, np.float32), 1))
    inp = helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT, [1, seq, hidden])
    x = "inputs_embeds"
    l = 0
    while len(b.nodes) < nodes - 3:
        x = transformer_layer(b, l, x, hidden, ffn)
        l += 1
    x = b.op("/model/norm", "Mul", [x, b.weight("model.norm.weight", (hidden,))])
    logits = b.op("/lm_head", "MatMul", [x, b.weight("lm_head.weight", (hidden, 32))])
    out = helper.make_tensor_value_info(logits, TensorProto.FLOAT, [1, seq, 32])
    return b.model([inp], [out])


def chain(nodes, width=8, seed=0):
    b = Builder(seed)
    b.const("c", np.full((1, width), 0.5, np.float32))
    inp = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])
    x = "x"
    ops = ["Relu", "Add", "Sigmoid", "Mul"]
    for i in range(nodes):
        op = ops[i % len(ops)]
        ins = [x, "c"] if op in ("Add", "Mul") else [x]
        out = f"v{i}"
        b.nodes.append(helper.make_node(op, ins, [out], name=f"{op}_{i}"))
        x = out
    out = helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, width])
    return b.model([inp], [out])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", choices=["bert", "transformer", "chain"], required=True)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.kind == "bert":
        m = bert(a.layers)
    elif a.kind == "transformer":
        m = transformer(a.nodes)
    else:
        m = chain(a.nodes)
    onnx.save(m, a.out)
    print(f"{a.out}: {len(m.graph.node)} nodes")


if __name__ == "__main__":
    main()
