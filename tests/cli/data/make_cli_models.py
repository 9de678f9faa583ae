"""Models the CLI tests run that are not ORT-referenced fixtures.

resize_linear_u8: Resize in linear mode on uint8 data, which code generation
does not lower (it covers linear and cubic Resize for f32 data), so the CLI
tests see the labelled reference fallback on a real op gap. Deterministic:
rerunning writes identical files.
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


if __name__ == "__main__":
    resize_linear_u8()
