// Read-only graph queries the fusion passes share: who produces and who reads
// a value, scalar constants, and which rows a reduction reduces. Nothing here
// mutates the graph (matching never mutates; see rewriter.h for the one place
// that does).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace fuselens {

// "MatMul 'qk'": how decisions name a node.
std::string nodeLabel(const Node& n);

// The node producing `v` when its op is `op` (ONNX domain), else nullptr.
const Node* producerIs(const Graph& g, ValueId v, const char* op);
// The one node reading `v` when it has exactly one user and is no graph output.
const Node* soleUser(const Graph& g, ValueId v);
// The one node reading `v` when it is `op`, whatever else reads it; nullptr when
// none or several of its users are `op`.
const Node* userIs(const Graph& g, ValueId v, const char* op);
bool isOnnxOp(const Node& n, const char* op);

// The value of a constant with exactly one element, else nullopt.
std::optional<double> scalarConstant(const Graph& g, ValueId v);
// True when `v` is a one-element constant equal to `x` rounded to its own dtype
// (a f32 constant must be float(x) bit for bit): the "exactly" of a rewrite.
bool isExactly(const Graph& g, ValueId v, double x);
// For a two-input node with `v` as one operand: the other one (invalid if
// neither or both are `v`).
ValueId otherOperand(const Node& n, ValueId v);

// The rows a reduction reduces: the shape of the tensor it reads and the
// normalized, sorted axes. Two reductions with equal rows can run as
// consecutive stages over the same rows of one kernel (softmax's max and sum,
// LayerNorm's mean and variance). nullopt for other ops or unknown axes.
struct ReducedRows {
  std::string shape;          // the input's type text, "f32[1,8,16]"
  std::vector<int64_t> axes;  // normalized against the input's rank
  bool operator==(const ReducedRows& o) const { return shape == o.shape && axes == o.axes; }
  std::string str() const;  // "f32[1,8,16] over axis 2"
};
std::optional<ReducedRows> reducedRows(const Graph& g, const Node& n);
// For ReduceX ops: the axes (attribute or constant input), normalized; all axes
// when absent. nullopt when the axes are not constant.
std::optional<std::vector<int64_t>> reduceAxes(const Graph& g, const Node& n);

// Pattern groups: Fused nodes whose `kind` names a pattern ("pattern-attention").
bool isPatternGroup(const Node& n);

}  // namespace fuselens
