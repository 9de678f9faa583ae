// Compute definitions of the index-map family: Transpose, Reshape, Identity.
// None of them computes anything; each maps an output position to the input
// position it reads, so inside a group they cost no memory traffic at all.
// Reshape keeps the flat row-major index, so it maps without any division.
#include <algorithm>
#include <numeric>

#include "codegen/compute.h"

namespace fuselens {
namespace {

// The Transpose permutation: the `perm` attribute, or the dims reversed (ONNX default).
std::optional<std::vector<int64_t>> transposePerm(const Node& n, size_t rank) {
  std::vector<int64_t> perm(rank);
  if (auto p = n.attrs.getInts("perm")) {
    perm = *p;
  } else {
    std::iota(perm.begin(), perm.end(), 0);
    std::reverse(perm.begin(), perm.end());
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < sorted.size(); ++k)
    if (sorted[k] != int64_t(k)) return std::nullopt;
  if (perm.size() != rank) return std::nullopt;
  return perm;
}

}  // namespace

Index indexMapSource(KernelBuilder& kb, const Node& n, const Index& out) {
  std::vector<int64_t> inShape = kb.shapeOf(n.inputs[0]);
  if (n.op == "Identity") return out;
  if (n.op == "Reshape") return Index::ofFlat(inShape, out.flatExpr());
  // Transpose: output dim k is input dim perm[k].
  auto perm = transposePerm(n, inShape.size());
  if (!perm) {
    kb.fail(Status::error(
        "perm must be a permutation of 0.." + std::to_string(inShape.size()) + "-1", nodePlace(n)));
    return Index::ofFlat(inShape, intConst(0));
  }
  std::vector<ExprRef> outDims = out.dimExprs();
  std::vector<ExprRef> inDims(inShape.size());
  for (size_t k = 0; k < perm->size(); ++k) inDims[(*perm)[k]] = outDims[k];
  return Index::ofDims(inShape, std::move(inDims));
}

}  // namespace fuselens
