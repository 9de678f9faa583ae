// Symbolic contents of the small integer tensors that shape computations
// pass around, so a Reshape whose target is computed from the input's own
// shape keeps its symbolic dims. Exporters write `x.view(b, s, heads, d)` as
//
//   Shape(x) -> Gather 0, Gather 1 -> Unsqueeze -> Concat(.., [12, 64]) -> Reshape
//
// and Shape of f32[batch,seq,768] holds [batch, seq, 768] only as values, which
// no TensorType can say; the target's entries are tracked here as dim
// expressions (core/ir/dim_expr.h) while inferGraphTypes walks the graph, and
// the Reshape (Expand, ConstantOfShape) output dims its own inference left
// unknown are filled from them. Only targets holding a symbolic entry are
// used: a fully static graph types as before (constant folding makes those
// targets constants anyway).
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "core/ir/dim_expr.h"
#include "core/ir/graph.h"

namespace fuselens::ops {

class ShapeValues {
 public:
  // After node `id`'s own inference: records what it computes when that is a
  // shape tensor built from known pieces, and sharpens its output type when it
  // consumes one.
  void visit(Graph& g, NodeId id);

 private:
  using Contents = std::vector<std::optional<DimExpr>>;  // nullopt: unknown entry
  std::optional<Contents> contentsOf(const Graph& g, ValueId v) const;
  std::optional<Contents> compute(const Graph& g, const Node& n) const;
  void refine(Graph& g, const Node& n) const;

  std::map<int32_t, Contents> contents_;  // by value index
};

}  // namespace fuselens::ops
