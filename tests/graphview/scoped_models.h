// Graphs named the way exporters name ops, for the graph view's tests: an
// encoder stack ("/encoder/layer.N/attention/self/MatMul") and an unscoped chain.
#pragma once

#include <string>

#include "core/ir/graph.h"

namespace fuselens::test {

inline TensorType f32Row() { return TensorType::of(DType::F32, {1, 8}); }

// layers x (attention: 6 ops, output: 3 ops, ffn: 4 ops), plus embeddings and a head.
inline Graph encoderStack(int layers) {
  Graph g;
  ValueId x = g.addInput("x", f32Row());
  int k = 0;
  auto op = [&](const std::string& type, const std::string& scope, ValueId a, ValueId b = {}) {
    std::vector<ValueId> ins = {a};
    if (b.valid()) ins.push_back(b);
    const std::string name = scope + "/" + type + "_" + std::to_string(k++);
    NodeId n = g.addNode(type, ins, {{"t" + std::to_string(k), f32Row()}}, {}, name);
    return g.node(n).outputs[0];
  };
  x = op("Add", "/embeddings", x);
  x = op("Relu", "/embeddings", x);
  for (int l = 0; l < layers; ++l) {
    const std::string p = "/encoder/layer." + std::to_string(l);
    ValueId q = op("MatMul", p + "/attention/self", x);
    ValueId kk = op("MatMul", p + "/attention/self", x);
    ValueId s = op("Mul", p + "/attention/self", q, kk);
    s = op("Softmax", p + "/attention/self", s);
    ValueId v = op("MatMul", p + "/attention/self", x);
    ValueId c = op("Mul", p + "/attention/self", s, v);
    ValueId o = op("MatMul", p + "/attention/output", c);
    o = op("Add", p + "/attention/output", o, x);
    o = op("Relu", p + "/attention/output", o);
    ValueId f = op("MatMul", p + "/intermediate", o);
    f = op("Erf", p + "/intermediate", f);
    f = op("MatMul", p + "/output", f);
    x = op("Add", p + "/output", f, o);
  }
  x = op("Tanh", "/pooler", x);
  g.addOutput(x);
  return g;
}

// n Relu ops in a row, with names that carry no scope.
inline Graph unscopedChain(int n) {
  Graph g;
  ValueId x = g.addInput("x", f32Row());
  for (int i = 0; i < n; ++i) {
    NodeId id = g.addNode("Relu", {x}, {{"v" + std::to_string(i), f32Row()}}, {},
                          "Relu_" + std::to_string(i));
    x = g.node(id).outputs[0];
  }
  g.addOutput(x);
  return g;
}

}  // namespace fuselens::test
