// fuse-patterns: named patterns matched before fuse-ops (the table is in
// pattern_table.cpp; one row per pattern, each a stable rule id):
//
//   pattern-attention        MatMul(Q, K^T) -> Div|Mul(scalar) -> [Add(mask)]
//                            -> Softmax(last axis) -> MatMul(V), with K's
//                            Transpose inside when only the scores read it
//   pattern-softmax          ReduceMax -> Sub -> Exp -> ReduceSum -> Div
//   pattern-layernorm        the decomposed LayerNorm (ReduceMean, Sub, Pow 2,
//                            ReduceMean, Add eps, Sqrt, Div, [Mul], [Add])
//   pattern-conv-bn-act      Conv -> [BatchNormalization] -> [activation]
//   pattern-matmul-bias-act  MatMul|Gemm -> Add(bias) -> [activation]
//   pattern-gelu             0.5 x (1 + erf(x / sqrt 2)), and the tanh form
//   pattern-silu             x * Sigmoid(x)
//
// Rewrites, in three steps (analysis -> plan -> rewrite, as fuse-ops):
//   1. decomposed LayerNorm, GELU and softmax whose constants are exactly the
//      op's become LayerNormalization / Gelu / Softmax (pattern_decomposed.cpp
//      says why that is codegen's simpler job); the new op keeps the name and
//      origin of the value it replaces, and the origins of every replaced node;
//   2. every other match, in table order, claims its nodes: a node is in one
//      pattern at most, and a match whose interior values are read outside it
//      is rejected (it would have to store them too);
//   3. each claimed match is outlined (outline_group.h) into a Fused node with
//      kind = the rule id, e.g. kind="pattern-matmul-bias-act".
// Every match and every near miss records a FusionDecision with the row's rule
// id: accepted on each edge inside a match, rejected on the edge where a near
// miss stopped, naming both ops and the deciding fact.
//
// Multi-anchor groups (attention: two MatMuls and a Softmax; a softmax or
// LayerNorm that cannot be rewritten: two reductions) need codegen to lower
// several reductions as consecutive stages of one kernel, which it does, so
// they form by default (multi-anchor=1); with multi-anchor=0 the match is
// recorded as rejected, with the option as the hint.
//
// Keeps: names, origins, graph inputs and outputs. Run after simplify (so
// constant BatchNorms are folded, x*1 removed) and before fuse-ops, which
// treats each pattern group as one node: it may add elementwise epilogues
// (and prologues into reductions) but never splits it.
#pragma once

#include "passes/pass.h"

namespace fuselens {

struct FusePatternsOptions {
  bool multiAnchor = true;
};

class FusePatternsPass : public Pass {
 public:
  explicit FusePatternsPass(FusePatternsOptions opts = {}) : opts_(opts) {}
  std::string name() const override { return "fuse-patterns"; }
  PassResult run(Graph& g, PassContext& ctx) override;

 private:
  FusePatternsOptions opts_;
};

// The first group id no Fused node of `g` uses, so the groups of successive
// fusion passes keep distinct ids (and node names).
int firstFreeGroupId(const Graph& g);

}  // namespace fuselens
