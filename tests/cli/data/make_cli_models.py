"""Models the CLI tests run that are not ORT-referenced fixtures.

resize_linear_u8: Resize in linear mode on uint8 data, which code generation
does not lower (it covers linear and cubic Resize for f32 data), so the CLI
tests see the labelled reference fallback on a real op gap.

two_convs: Conv -> Relu -> Conv on 16 channels, which the default pipeline
blocks to NCHW8c, so the value between the two kernels is stored blocked and
compare --isolated must feed the second kernel a blocked tensor.

if_dynamic: an If whose branches return tensors of different shapes and
ranks ([1,8] or [3], as silero-vad's sample-rate branches differ), so the
value after it has not even a known rank; compare --isolated must compile the
Relu that follows for the shape it is fed, not skip it.

Deterministic: rerunning writes identical files.
"""
import os

import numpy as np
from onnx import TensorProto, helper, save

HERE = os.path.dirname(os.path.abspath(__file__))


def resize_linear_u8():
    out = os.path.join(HERE, "resize_linear_u8")
    os.makedirs(out, exist_ok=True)
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize", mode="linear")
    scales = helper.make_tensor("scales", TensorProto.FLOAT, [4], [1, 1, 2, 2])
    graph = helper.make_graph([node], "resize_linear_u8",
                              [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 1, 2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], [scales])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              producer_name="fuselens-tests")
    model.ir_version = 8
    save(model, os.path.join(out, "model.onnx"))
    np.save(os.path.join(out, "input_x.npy"), np.array([[[[0, 100, 255], [40, 7, 90]]]], np.uint8))


def two_convs():
    out = os.path.join(HERE, "two_convs")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.2
    w2 = rng.standard_normal((16, 16, 3, 3)).astype(np.float32) * 0.2
    b1 = rng.standard_normal(16).astype(np.float32) * 0.1
    inits = [helper.make_tensor(n, TensorProto.FLOAT, a.shape, a.flatten().tolist())
             for n, a in (("w1", w1), ("w2", w2), ("b1", b1))]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2"], ["y"], name="conv2", pads=[1, 1, 1, 1])]
    graph = helper.make_graph(nodes, "two_convs",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 12, 10])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 12, 10])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="fuselens-tests")
    model.ir_version = 8
    save(model, os.path.join(out, "model.onnx"))
    np.save(os.path.join(out, "input_x.npy"), rng.uniform(-1, 1, (1, 8, 12, 10)).astype(np.float32))


def if_dynamic():
    out = os.path.join(HERE, "if_dynamic")
    os.makedirs(out, exist_ok=True)
    then_out = helper.make_tensor_value_info("t", TensorProto.FLOAT, None)
    else_out = helper.make_tensor_value_info("e", TensorProto.FLOAT, None)
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t"], name="double")],
                               "then", [], [then_out],
                               [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])])
    starts = helper.make_tensor("starts", TensorProto.INT64, [1], [0])
    ends = helper.make_tensor("ends", TensorProto.INT64, [1], [3])
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    zero_axis = helper.make_tensor("zero_axis", TensorProto.INT64, [1], [0])
    else_g = helper.make_graph(
        [helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["h"], name="head"),
         helper.make_node("Squeeze", ["h", "zero_axis"], ["e"], name="flat")],
        "else", [], [else_out], [starts, ends, axes, zero_axis])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"], name="positive"),
        helper.make_node("If", ["c"], ["b"], name="branch", then_branch=then_g, else_branch=else_g),
        helper.make_node("Relu", ["b"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "if_dynamic", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              producer_name="fuselens-tests")
    model.ir_version = 8
    save(model, os.path.join(out, "model.onnx"))


if __name__ == "__main__":
    resize_linear_u8()
    two_convs()
    if_dynamic()
