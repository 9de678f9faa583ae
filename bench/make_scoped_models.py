#!/usr/bin/env python3
"""Writes ONNX models whose op names carry name scopes the way exporters write
them, for the graph view's benchmarks and tests (small tensors: the view cares
about the graph, not the arithmetic).

  --kind bert         BERT-shaped encoder as torch.onnx writes Hugging Face's
                      BertModel (/encoder/layer.3/attention/self/query/MatMul):
                      the size() plumbing of every view, the extended mask,
                      GELU and LayerNorm written out, torch's Constant nodes;
                      12 layers: 1,358 nodes, 975 of them ops (TorchBert)
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


class TorchBert:
    """BERT as torch.onnx (TorchScript, dynamic batch and sequence axes) writes
    Hugging Face's BertModel in eval mode, op for op. Per layer (79 ops, 110
    nodes with the Constant nodes torch writes for indices, axes and scalars):
      query/key/value    MatMul + Add each
      transpose_for_scores, per projection: x.size(0), x.size(1) as
                         Shape -> Gather, Shape -> Gather, Unsqueeze x2,
                         Concat with (heads, head size), Reshape, Transpose
      scores             key Transpose(-1, -2), MatMul, Div by sqrt(head size),
                         Add the extended mask, Softmax (Dropout is gone in eval)
      context            MatMul, Transpose, the same size() plumbing, Reshape
      attention/output   dense, residual Add, LayerNorm
      intermediate       dense, GELU written out: Div, Erf, Add, Mul, Mul
      output             dense, residual Add, LayerNorm
    LayerNorm is ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add
    (torch below opset 17) or one LayerNormalization (--layernorm fused).
    The extended mask is made once (get_extended_attention_mask: Unsqueeze x2,
    Cast, Sub, Mul), the embeddings read position ids sliced to the sequence
    length, and the pooler takes the first token."""

    def __init__(self, b, hidden, heads, fused_ln):
        self.b, self.hidden, self.heads, self.dh = b, hidden, heads, hidden // heads
        self.fused_ln = fused_ln

    def constant(self, scope, value):
        # torch writes small constants as Constant nodes in the scope that uses them
        return self.b.op(scope, "Constant", [], value=numpy_helper.from_array(np.asarray(value)))

    def layer_norm(self, scope, x):
        b, c = self.b, self.constant
        g = b.weight(scope.strip("/").replace("/", ".") + ".weight", (self.hidden,))
        beta = b.weight(scope.strip("/").replace("/", ".") + ".bias", (self.hidden,))
        if self.fused_ln:
            return b.op(scope, "LayerNormalization", [x, g, beta], axis=-1, epsilon=1e-12)
        mean = b.op(scope, "ReduceMean", [x], axes=[-1], keepdims=1)
        d = b.op(scope, "Sub", [x, mean])
        var = b.op(scope, "ReduceMean", [b.op(scope, "Pow", [d, c(scope, np.float32(2))])], axes=[-1], keepdims=1)
        std = b.op(scope, "Sqrt", [b.op(scope, "Add", [var, c(scope, np.float32(1e-12))])])
        y = b.op(scope, "Div", [d, std])
        return b.op(scope, "Add", [b.op(scope, "Mul", [y, g]), beta])

    def view(self, scope, x, tail):
        # x.size()[:-k] + tail: one Shape per size() call, as tracing records them
        b, c = self.b, self.constant
        dims = []
        for i in range(2):
            g = b.op(scope, "Gather", [b.op(scope, "Shape", [x]), c(scope, np.int64(i))], axis=0)
            dims.append(b.op(scope, "Unsqueeze", [g, c(scope, np.array([0], np.int64))]))
        tail = [c(scope, np.array([t], np.int64)) for t in tail]
        return b.op(scope, "Reshape", [x, b.op(scope, "Concat", dims + tail, axis=0)])

    def heads_of(self, scope, x):
        r = self.view(scope, x, [self.heads, self.dh])
        return self.b.op(scope, "Transpose", [r], perm=[0, 2, 1, 3])

    def layer(self, l, x, mask, ffn):
        b, c, hidden = self.b, self.constant, self.hidden
        p = f"/encoder/layer.{l}"
        sp = p + "/attention/self"
        q = self.heads_of(sp, linear(b, sp + "/query", x, hidden, hidden))
        k = self.heads_of(sp, linear(b, sp + "/key", x, hidden, hidden))
        v = self.heads_of(sp, linear(b, sp + "/value", x, hidden, hidden))
        kt = b.op(sp, "Transpose", [k], perm=[0, 1, 3, 2])
        s = b.op(sp, "Div", [b.op(sp, "MatMul", [q, kt]), c(sp, np.float32(np.sqrt(self.dh)))])
        s = b.op(sp, "Add", [s, mask])
        ctx = b.op(sp, "MatMul", [b.op(sp, "Softmax", [s], axis=-1), v])
        ctx = b.op(sp, "Transpose", [ctx], perm=[0, 2, 1, 3])
        ctx = self.view(sp, ctx, [hidden])
        ao = p + "/attention/output"
        h = b.op(ao, "Add", [linear(b, ao + "/dense", ctx, hidden, hidden), x])
        h = self.layer_norm(ao + "/LayerNorm", h)
        f = linear(b, p + "/intermediate/dense", h, hidden, ffn)
        act = p + "/intermediate/intermediate_act_fn"
        erf = b.op(act, "Erf", [b.op(act, "Div", [f, c(act, np.float32(np.sqrt(2.0)))])])
        f = b.op(act, "Mul", [b.op(act, "Mul", [f, b.op(act, "Add", [erf, c(act, np.float32(1))])]),
                              c(act, np.float32(0.5))])
        o = b.op(p + "/output", "Add", [linear(b, p + "/output/dense", f, ffn, hidden), h])
        return self.layer_norm(p + "/output/LayerNorm", o)

    def embeddings(self, seq):
        b, c, hidden = self.b, self.constant, self.hidden
        e = "/embeddings"
        n = b.op(e, "Gather", [b.op(e, "Shape", ["input_ids"]), c(e, np.int64(1))], axis=0)
        ids = b.const("embeddings.position_ids", np.arange(seq, dtype=np.int64)[None, :])
        ends = b.op(e, "Unsqueeze", [n, c(e, np.array([0], np.int64))])
        pos_ids = b.op(e, "Slice", [ids, c(e, np.array([0], np.int64)), ends, c(e, np.array([1], np.int64))])
        word = b.weight("embeddings.word_embeddings.weight", (100, hidden))
        types = b.weight("embeddings.token_type_embeddings.weight", (2, hidden))
        pos = b.weight("embeddings.position_embeddings.weight", (seq, hidden))
        type_ids = b.const("embeddings.token_type_ids", np.zeros((1, seq), np.int64))
        x = b.op(e + "/word_embeddings", "Gather", [word, "input_ids"], axis=0)
        t = b.op(e + "/token_type_embeddings", "Gather", [types, type_ids], axis=0)
        x = b.op(e, "Add", [x, t])
        x = b.op(e, "Add", [x, b.op(e + "/position_embeddings", "Gather", [pos, pos_ids], axis=0)])
        return self.layer_norm(e + "/LayerNorm", x)

    def extended_mask(self):
        b, c = self.b, self.constant
        m = b.op("", "Unsqueeze", ["attention_mask", c("", np.array([1], np.int64))])
        m = b.op("", "Cast", [b.op("", "Unsqueeze", [m, c("", np.array([2], np.int64))])],
                 to=TensorProto.FLOAT)
        m = b.op("", "Sub", [c("", np.float32(1)), m])
        return b.op("", "Mul", [m, c("", np.float32(np.finfo(np.float32).min))])


def bert(layers, seq=16, hidden=32, heads=4, ffn=64, seed=0, fused_ln=False):
    b = Builder(seed)
    t = TorchBert(b, hidden, heads, fused_ln)
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, seq])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, seq])
    x = t.embeddings(seq)
    m = t.extended_mask()
    for l in range(layers):
        x = t.layer(l, x, m, ffn)
    first = b.op("/pooler", "Gather", [x, t.constant("/pooler", np.int64(0))], axis=1)
    pooled = b.op("/pooler/activation", "Tanh", [linear(b, "/pooler/dense", first, hidden, hidden)])
    outs = [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, seq, hidden]),
            helper.make_tensor_value_info(pooled, TensorProto.FLOAT, [1, hidden])]
    return b.model([ids, mask], outs)


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
    ap.add_argument("--layernorm", choices=["ops", "fused"], default="ops",
                    help="bert: LayerNorm written out (torch below opset 17) or LayerNormalization")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.kind == "bert":
        m = bert(a.layers, fused_ln=a.layernorm == "fused")
    elif a.kind == "transformer":
        m = transformer(a.nodes)
    else:
        m = chain(a.nodes)
    onnx.save(m, a.out)
    ops = sum(n.op_type != "Constant" for n in m.graph.node)
    print(f"{a.out}: {len(m.graph.node)} nodes ({ops} besides Constant nodes)")


if __name__ == "__main__":
    main()
