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


# ---------------------------------------------------------------------------
# Teaching samples (samples/README.md says what each shows and at which pass).
# Node names carry exporter-style scopes ("/layer/attn/MatMul") so the graph
# view groups them as a torch export would.

class Builder:
    """Collects nodes and weights; each op gets a scoped name."""

    def __init__(self, seed, scope=""):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], {}
        self.scope = scope

    def w(self, name, shape, scale=0.1, offset=0.0):
        full = f"{self.scope}/{name}".lstrip("/").replace("/", ".")
        arr = (self.rng.standard_normal(shape) * scale + offset).astype(np.float32)
        self.inits.append(numpy_helper.from_array(arr, full))
        return full

    def const(self, name, value, dtype=np.float32):
        full = f"{self.scope}/{name}".lstrip("/").replace("/", ".")
        self.inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), full))
        return full

    def op(self, op, inputs, scope="", outputs=1, **attrs):
        path = "/".join(p for p in (self.scope, scope) if p)
        k = self.count.get((path, op), 0)
        self.count[(path, op)] = k + 1
        name = f"/{path}/{op}" + (f"_{k}" if k else "")
        outs = [f"{name}_output_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0] if outputs == 1 else outs

    def graph(self, name, inputs, outputs):
        return helper.make_graph(self.nodes, name, inputs, outputs, self.inits)


def out(b, value, name, elem, shape):
    """Renames a value (where it is made and where it is read) so the graph output has a plain name."""
    for n in b.nodes:
        for names in (n.output, n.input):
            for i, o in enumerate(names):
                if o == value:
                    names[i] = name
    return helper.make_tensor_value_info(name, elem, shape)


def rms_norm(b, x, scope, dim):
    sq = b.op("Pow", [x, b.const(f"{scope}/two", 2.0)], scope)
    ms = b.op("ReduceMean", [sq], scope, axes=[-1], keepdims=1)
    r = b.op("Sqrt", [b.op("Add", [ms, b.const(f"{scope}/eps", 1e-6)], scope)], scope)
    return b.op("Mul", [b.op("Div", [x, r], scope), b.w(f"{scope}/weight", [dim], 0.1, 1.0)], scope)


def rotate(b, t, cos, sin, scope, half):
    """t * cos + rotate_half(t) * sin, rotate_half = concat(-t[..., half:], t[..., :half])."""
    lo = b.op("Slice", [t, b.const(f"{scope}/s0", [0], np.int64), b.const(f"{scope}/s1", [half], np.int64),
                        b.const(f"{scope}/ax", [-1], np.int64)], scope)
    hi = b.op("Slice", [t, b.const(f"{scope}/s1b", [half], np.int64),
                        b.const(f"{scope}/s2", [2 * half], np.int64), b.const(f"{scope}/axb", [-1], np.int64)], scope)
    rot = b.op("Concat", [b.op("Neg", [hi], scope), lo], scope, axis=-1)
    return b.op("Add", [b.op("Mul", [t, cos], scope), b.op("Mul", [rot, sin], scope)], scope)


def llama_block():
    """One decoder block with a symbolic sequence length `seq`."""
    dim, heads, hd, ffn = 64, 4, 16, 128
    b = Builder(11, "model/layers.0")
    x = "x"
    h = rms_norm(b, x, "input_layernorm", dim)
    shape = b.op("Shape", [x], "rotary")
    seq = b.op("Gather", [shape, b.const("rotary/one", 1, np.int64)], "rotary", axis=0)
    pos = b.op("Cast", [b.op("Range", [b.const("rotary/zero", 0, np.int64), seq,
                                       b.const("rotary/step", 1, np.int64)], "rotary")], "rotary", to=TensorProto.FLOAT)
    inv = (1.0 / (10000 ** (np.arange(0, hd, 2) / hd))).astype(np.float32)
    freqs = b.op("Mul", [b.op("Unsqueeze", [pos, b.const("rotary/ax1", [1], np.int64)], "rotary"),
                         b.const("rotary/inv_freq", inv)], "rotary")
    emb = b.op("Concat", [freqs, freqs], "rotary", axis=-1)          # [seq, hd]
    cos, sin = b.op("Cos", [emb], "rotary"), b.op("Sin", [emb], "rotary")
    split = b.const("self_attn/heads_shape", [1, -1, heads, hd], np.int64)

    def proj(name):
        p = b.op("MatMul", [h, b.w(f"self_attn/{name}_proj/weight", [dim, dim])], f"self_attn/{name}_proj")
        return b.op("Transpose", [b.op("Reshape", [p, split], "self_attn")], "self_attn", perm=[0, 2, 1, 3])
    q = rotate(b, proj("q"), cos, sin, "self_attn/rotary_q", hd // 2)
    k = rotate(b, proj("k"), cos, sin, "self_attn/rotary_k", hd // 2)
    v = proj("v")
    kt = b.op("Transpose", [k], "self_attn", perm=[0, 1, 3, 2])
    scores = b.op("Mul", [b.op("MatMul", [q, kt], "self_attn"), b.const("self_attn/scale", 1.0 / np.sqrt(hd))],
                  "self_attn")
    # causal: key position > query position is masked
    later = b.op("Greater", [b.op("Unsqueeze", [pos, b.const("self_attn/ax0", [0], np.int64)], "self_attn/mask"),
                             b.op("Unsqueeze", [pos, b.const("self_attn/ax1m", [1], np.int64)], "self_attn/mask")],
                 "self_attn/mask")
    masked = b.op("Where", [later, b.const("self_attn/neg", -1e9), scores], "self_attn/mask")
    probs = b.op("Softmax", [masked], "self_attn", axis=-1)
    ctx = b.op("Transpose", [b.op("MatMul", [probs, v], "self_attn")], "self_attn", perm=[0, 2, 1, 3])
    ctx = b.op("Reshape", [ctx, b.const("self_attn/merge_shape", [1, -1, dim], np.int64)], "self_attn")
    attn = b.op("MatMul", [ctx, b.w("self_attn/o_proj/weight", [dim, dim])], "self_attn/o_proj")
    h1 = b.op("Add", [x, attn], "")
    n2 = rms_norm(b, h1, "post_attention_layernorm", dim)
    gate = b.op("MatMul", [n2, b.w("mlp/gate_proj/weight", [dim, ffn])], "mlp/gate_proj")
    up = b.op("MatMul", [n2, b.w("mlp/up_proj/weight", [dim, ffn])], "mlp/up_proj")
    silu = b.op("Mul", [gate, b.op("Sigmoid", [gate], "mlp/act_fn")], "mlp/act_fn")
    down = b.op("MatMul", [b.op("Mul", [silu, up], "mlp"), b.w("mlp/down_proj/weight", [ffn, dim])],
                "mlp/down_proj")
    y = b.op("Add", [h1, down], "")
    g = b.graph("llama_block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", dim])],
                [out(b, y, "y", TensorProto.FLOAT, [1, "seq", dim])])
    save(g, "llama_block.onnx")


def gelu_erf(b, x, scope):
    """GELU as exporters write it: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    e = b.op("Erf", [b.op("Div", [x, b.const(f"{scope}/sqrt2", np.sqrt(2.0))], scope)], scope)
    return b.op("Mul", [b.op("Mul", [x, b.const(f"{scope}/half", 0.5)], scope),
                        b.op("Add", [e, b.const(f"{scope}/one", 1.0)], scope)], scope)


def bert_layer():
    """One encoder layer with a padding mask (1 keeps a position, 0 masks it)."""
    dim, heads, hd, seq, ffn = 64, 4, 16, 16, 256
    b = Builder(12, "encoder/layer.0")
    x = "hidden_states"
    # (1 - mask) * -10000, broadcast over heads and query rows
    m = b.op("Unsqueeze", ["attention_mask", b.const("attention/mask_axes", [1, 2], np.int64)], "attention")
    bias = b.op("Mul", [b.op("Sub", [b.const("attention/one", 1.0), m], "attention"),
                        b.const("attention/big", -10000.0)], "attention")
    split = b.const("attention/self/heads_shape", [1, seq, heads, hd], np.int64)

    def proj(name):
        p = b.op("MatMul", [x, b.w(f"attention/self/{name}/weight", [dim, dim])], f"attention/self/{name}")
        p = b.op("Add", [p, b.w(f"attention/self/{name}/bias", [dim])], f"attention/self/{name}")
        return b.op("Transpose", [b.op("Reshape", [p, split], "attention/self")], "attention/self",
                    perm=[0, 2, 1, 3])
    q, k, v = proj("query"), proj("key"), proj("value")
    kt = b.op("Transpose", [k], "attention/self", perm=[0, 1, 3, 2])
    s = b.op("Div", [b.op("MatMul", [q, kt], "attention/self"), b.const("attention/self/sqrt_d", np.sqrt(hd))],
             "attention/self")
    p = b.op("Softmax", [b.op("Add", [s, bias], "attention/self")], "attention/self", axis=-1)
    c = b.op("Transpose", [b.op("MatMul", [p, v], "attention/self")], "attention/self", perm=[0, 2, 1, 3])
    c = b.op("Reshape", [c, b.const("attention/self/merge", [1, seq, dim], np.int64)], "attention/self")
    o = b.op("Add", [b.op("MatMul", [c, b.w("attention/output/dense/weight", [dim, dim])], "attention/output/dense"),
                     b.w("attention/output/dense/bias", [dim])], "attention/output/dense")
    h = b.op("LayerNormalization", [b.op("Add", [o, x], "attention/output"),
                                    b.w("attention/output/LayerNorm/weight", [dim], 0.1, 1.0),
                                    b.w("attention/output/LayerNorm/bias", [dim])], "attention/output/LayerNorm",
             axis=-1, epsilon=1e-12)
    i = b.op("Add", [b.op("MatMul", [h, b.w("intermediate/dense/weight", [dim, ffn])], "intermediate/dense"),
                     b.w("intermediate/dense/bias", [ffn])], "intermediate/dense")
    i = gelu_erf(b, i, "intermediate/intermediate_act_fn")
    o2 = b.op("Add", [b.op("MatMul", [i, b.w("output/dense/weight", [ffn, dim])], "output/dense"),
                      b.w("output/dense/bias", [dim])], "output/dense")
    y = b.op("LayerNormalization", [b.op("Add", [o2, h], "output"), b.w("output/LayerNorm/weight", [dim], 0.1, 1.0),
                                    b.w("output/LayerNorm/bias", [dim])], "output/LayerNorm", axis=-1,
             epsilon=1e-12)
    g = b.graph("bert_layer", [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, seq, dim]),
                               helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, [1, seq])],
                [out(b, y, "y", TensorProto.FLOAT, [1, seq, dim])])
    save(g, "bert_layer.onnx")


def conv_bn(b, x, scope, cin, cout, k, group=1, act="Relu", stride=1):
    c = b.op("Conv", [x, b.w(f"{scope}/conv/weight", [cout, cin // group, k, k], 0.3)], f"{scope}/conv",
             kernel_shape=[k, k], pads=[k // 2] * 4, group=group, strides=[stride, stride])
    bn = b.op("BatchNormalization", [c, b.w(f"{scope}/bn/weight", [cout], 0.1, 1.0), b.w(f"{scope}/bn/bias", [cout]),
                                     b.w(f"{scope}/bn/running_mean", [cout]),
                                     b.const(f"{scope}/bn/running_var",
                                             b.rng.uniform(0.5, 1.5, cout).astype(np.float32))],
              f"{scope}/bn", epsilon=1e-5)
    return b.op(act, [bn], f"{scope}/act") if act else bn


def resnet_bottleneck():
    """Conv + BatchNorm + ReLU three times with a residual: BN folding, NCHWc blocking."""
    b = Builder(13, "layer1/0")
    h = conv_bn(b, "x", "block1", 64, 16, 1)
    h = conv_bn(b, h, "block2", 16, 16, 3)
    h = conv_bn(b, h, "block3", 16, 64, 1, act=None)
    y = b.op("Relu", [b.op("Add", [h, "x"], "")], "")
    g = b.graph("resnet_bottleneck", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 14, 14])],
                [out(b, y, "y", TensorProto.FLOAT, [1, 64, 14, 14])])
    save(g, "resnet_bottleneck.onnx")


def reduce_fusion():
    """Softmax and LayerNorm decomposed into Reduce* and elementwise ops, as older exporters write them."""
    b = Builder(14)
    mx = b.op("ReduceMax", ["x"], "softmax", axes=[-1], keepdims=1)
    e = b.op("Exp", [b.op("Sub", ["x", mx], "softmax")], "softmax")
    sm = b.op("Div", [e, b.op("ReduceSum", [e, b.const("softmax/axes", [-1], np.int64)], "softmax", keepdims=1)],
              "softmax")
    mean = b.op("ReduceMean", [sm], "layer_norm", axes=[-1], keepdims=1)
    d = b.op("Sub", [sm, mean], "layer_norm")
    var = b.op("ReduceMean", [b.op("Pow", [d, b.const("layer_norm/two", 2.0)], "layer_norm")], "layer_norm",
               axes=[-1], keepdims=1)
    nrm = b.op("Div", [d, b.op("Sqrt", [b.op("Add", [var, b.const("layer_norm/eps", 1e-5)], "layer_norm")],
                                "layer_norm")], "layer_norm")
    y = b.op("Add", [b.op("Mul", [nrm, b.w("layer_norm/weight", [128], 0.1, 1.0)], "layer_norm"),
                     b.w("layer_norm/bias", [128])], "layer_norm")
    g = b.graph("reduce_fusion", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 128])],
                [out(b, y, "y", TensorProto.FLOAT, [8, 128])])
    save(g, "reduce_fusion.onnx")


def fusion_limits():
    """Three edges fuse-ops rejects: a chain longer than the fusion window
    (fusion-window), MatMul then Softmax (two-anchors), and a Sum of 37 inputs
    whose live values pass the register budget (register-pressure)."""
    b = Builder(15)
    h = b.op("MatMul", ["x", b.w("proj/weight", [64, 64])], "proj")
    for i in range(12):  # twelve elementwise ops after one anchor: 13 ops, past max-ops=12
        h = b.op(["Add", "Mul", "Tanh", "Sigmoid"][i % 4],
                 [h, b.w(f"chain/c{i}", [64])] if i % 4 < 2 else [h], "chain")
    s = b.op("Softmax", [b.op("MatMul", [h, b.w("scores/weight", [64, 64])], "scores")], "scores", axis=-1)
    # one Sum of s and 36 scalar offsets, then Relu: scalars are not kernel
    # arguments, so the input cap holds, but each is one more live value
    offs = [b.const(f"wide/offset{i}", 0.01 * i) for i in range(36)]
    y = b.op("Relu", [b.op("Sum", [s] + offs, "wide")], "wide")
    g = b.graph("fusion_limits", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 64])],
                [out(b, y, "y", TensorProto.FLOAT, [16, 64])])
    save(g, "fusion_limits.onnx")


def mobilenet_se():
    """Depthwise-separable block with squeeze-excite (MobileNetV3 style)."""
    b = Builder(16, "features/3")
    h = conv_bn(b, "x", "expand", 16, 32, 1, act="HardSwish")
    h = conv_bn(b, h, "depthwise", 32, 32, 3, group=32, act="HardSwish")
    pooled = b.op("GlobalAveragePool", [h], "se/avgpool")
    r = b.op("Relu", [b.op("Conv", [pooled, b.w("se/fc1/weight", [8, 32, 1, 1], 0.3), b.w("se/fc1/bias", [8])],
                           "se/fc1", kernel_shape=[1, 1])], "se/relu")
    sc = b.op("HardSigmoid", [b.op("Conv", [r, b.w("se/fc2/weight", [32, 8, 1, 1], 0.3), b.w("se/fc2/bias", [32])],
                                   "se/fc2", kernel_shape=[1, 1])], "se/scale", alpha=1.0 / 6, beta=0.5)
    h = b.op("Mul", [h, sc], "se")
    y = conv_bn(b, h, "project", 32, 16, 1, act=None)
    y = b.op("Add", [y, "x"], "")
    g = b.graph("mobilenet_se", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 28, 28])],
                [out(b, y, "y", TensorProto.FLOAT, [1, 16, 28, 28])])
    save(g, "mobilenet_se.onnx")


def layer_norm(b, x, scope, dtype):
    """LayerNorm written out (mean, centre, mean of squares, rsqrt) with constants of `dtype`."""
    m = b.op("ReduceMean", [x], scope, axes=[-1], keepdims=1)
    d = b.op("Sub", [x, m], scope)
    var = b.op("ReduceMean", [b.op("Pow", [d, b.const(f"{scope}/two", 2.0, dtype)], scope)], scope,
               axes=[-1], keepdims=1)
    r = b.op("Sqrt", [b.op("Add", [var, b.const(f"{scope}/eps", 1e-5, dtype)], scope)], scope)
    return b.op("Div", [d, r], scope)


def f16_layernorm():
    """One LayerNorm computed twice from the same activations: in float32 (y) and
    after a Cast to float16 (y_f16, cast back). Activations reach a few hundred,
    so the f16 branch's squares pass 65504, the largest f16: its variance is
    inf and y_f16 collapses to 0. divergence = y_f16 - y."""
    b = Builder(17)
    h = b.op("Mul", ["x", b.const("embed/scale", 300.0)], "embed")
    y = layer_norm(b, h, "ln_f32", np.float32)
    h16 = b.op("Cast", [h], "ln_f16", to=TensorProto.FLOAT16)
    y16 = b.op("Cast", [layer_norm(b, h16, "ln_f16", np.float16)], "ln_f16", to=TensorProto.FLOAT)
    div = b.op("Sub", [y16, y], "check")
    shape = [8, 64]
    outs = [out(b, y, "y", TensorProto.FLOAT, shape), out(b, y16, "y_f16", TensorProto.FLOAT, shape),
            out(b, div, "divergence", TensorProto.FLOAT, shape)]
    g = b.graph("f16_layernorm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)], outs)
    save(g, "f16_layernorm.onnx")


def precision_layernorm():
    """An f32 model for `--precision f16`: a MatMul + bias + ReLU that adds 1000
    (activations around 1000 to 1040), a LayerNorm, and a second MatMul + bias +
    ReLU. Stored in f16 between kernels, the activations keep a step of 0.5 or
    1: fine for the first kernel, whose result is that large, but the LayerNorm
    subtracts the mean of ~1000 and divides by a deviation of ~10, so the step
    its input lost becomes 25x to 50x its own output's f16 step. Compare
    --isolated --precision f16 names the LayerNorm kernel and no other."""
    b = Builder(18)
    h = b.op("MatMul", ["x", b.w("fc1/weight", [64, 64], 1.5)], "fc1")
    h = b.op("Relu", [b.op("Add", [h, b.w("fc1/bias", [64], 1.0)], "fc1")], "fc1")
    h = b.op("Add", [h, b.const("offset", 1000.0)], "offset")
    n = layer_norm(b, h, "ln", np.float32)
    y = b.op("MatMul", [n, b.w("fc2/weight", [64, 32], 0.02)], "fc2")
    y = b.op("Relu", [b.op("Add", [y, b.w("fc2/bias", [32], 0.01)], "fc2")], "fc2")
    g = b.graph("precision_layernorm",
                [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])],
                [out(b, y, "y", TensorProto.FLOAT, [8, 32])])
    save(g, "precision_layernorm.onnx")


# name -> (generator, {input: shape}); the fixture script stores ORT references
# for each at these shapes (symbolic dims bound: llama_block at seq=8).
TEACHING = {
    "llama_block": (llama_block, {"x": (1, 8, 64)}),
    "bert_layer": (bert_layer, {"hidden_states": (1, 16, 64), "attention_mask": (1, 16)}),
    "resnet_bottleneck": (resnet_bottleneck, {"x": (1, 64, 14, 14)}),
    "reduce_fusion": (reduce_fusion, {"x": (8, 128)}),
    "fusion_limits": (fusion_limits, {"x": (16, 64)}),
    "mobilenet_se": (mobilenet_se, {"x": (1, 16, 28, 28)}),
    "f16_layernorm": (f16_layernorm, {"x": (8, 64)}),
    "precision_layernorm": (precision_layernorm, {"x": (8, 64)}),
}

# The outputs whose ONNX Runtime reference is stored, where not every output's:
# ORT's CPU provider returns f16_layernorm's y_f16 equal to its y (it computes
# the f16 branch in f32), so only y is a reference for FuseLens's eager run,
# which computes the f16 branch as written.
ORT_OUTPUTS = {"f16_layernorm": {"y"}}


if __name__ == "__main__":
    matmul_bias_relu()
    mlp()
    for make, _ in TEACHING.values():
        make()
