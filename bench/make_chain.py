#!/usr/bin/env python3
"""Writes a long chain of small ops for the compile-time rows: --nodes N nodes
on a [1, 64, 64] tensor, cycling Mul by a per-node [64] vector, Add of another,
Tanh, Sigmoid, Relu and Abs, so every arithmetic node has weights of its own
(as a real model's layers do). A graph this long is what shows whether compile
time grows with the node count or with the number of distinct kernels.
Opset 17, static shapes, seeded values.

    python3 bench/make_chain.py --nodes 20000 --out /tmp/chain20k.onnx
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(n_nodes, width, seed):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    cycle = ["Mul", "Add", "Tanh", "Mul", "Add", "Sigmoid", "Relu", "Abs"]
    x = "x"
    for i in range(n_nodes):
        op = cycle[i % len(cycle)]
        out = f"n{i}"
        ins = [x]
        if op in ("Mul", "Add"):
            base = 1.0 if op == "Mul" else 0.0
            c = (base + 0.01 * rng.standard_normal(width)).astype(np.float32)
            inits.append(numpy_helper.from_array(c, f"c{i}"))
            ins.append(f"c{i}")
        nodes.append(helper.make_node(op, ins, [out], name=out))
        x = out
    nodes.append(helper.make_node("Identity", [x], ["y"], name="y"))
    shape = [1, width, width]
    graph = helper.make_graph(nodes, f"chain{n_nodes}",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="fuselens-bench")
    model.ir_version = 8
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    m = build(a.nodes, a.width, seed=3)
    onnx.save(m, a.out)
    print(f"{a.out}: {len(m.graph.node)} nodes")


if __name__ == "__main__":
    main()
