// Helpers shared by the op-family files (core/ops/*.cpp) and nothing else:
// the family registration hooks the registry calls, node-located errors,
// ONNX broadcasting of static and symbolic shapes, and index arithmetic for
// the plain reference loops. Nothing here is shared with codegen/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ops/registry.h"

namespace fuselens::ops {

// One hook per op-family file; OpRegistry::instance calls them in order.
void registerElementwiseOps(OpRegistry& r);
void registerMatMulOps(OpRegistry& r);
void registerReduceOps(OpRegistry& r);
void registerShapeOps(OpRegistry& r);

// An error whose `where` names the node: "node 'fc1' (MatMul): <message>".
inline Status nodeError(const Node& n, std::string message) {
  return Status::error(std::move(message), describeNode(n));
}

// Checks that the node has between min and max present inputs at the front
// (trailing omitted optional inputs are allowed).
Status checkInputCount(const Node& n, size_t count, size_t min, size_t max);

std::string shapeStr(const std::vector<int64_t>& shape);  // "[2,3]"
std::string dimsStr(const std::vector<Dim>& shape);       // "[batch,3]"

// ONNX multidirectional broadcasting of two shapes (numpy rules). Symbolic dims
// broadcast when equal or against 1; otherwise the result dim is unknown.
Expected<std::vector<Dim>> broadcastDims(const Node& n, const std::vector<Dim>& a,
                                         const std::vector<Dim>& b);
// The static form; error when the shapes cannot broadcast.
Expected<std::vector<int64_t>> broadcastShapes(const Node& n, const std::vector<int64_t>& a,
                                               const std::vector<int64_t>& b);

// Row-major strides of `in` read as a tensor of shape `out` (right-aligned,
// stride 0 where `in` has a 1 or no dim): the offset of an output index in `in`.
std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& out);
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& shape);

// Advances a row-major multi-index; returns false after the last index.
bool nextIndex(std::vector<int64_t>& idx, const std::vector<int64_t>& shape);

// Maps axis in [-rank, rank) to [0, rank); nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

}  // namespace fuselens::ops
