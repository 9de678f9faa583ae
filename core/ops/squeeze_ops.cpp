// Rank-changing ops that keep the data as it is: Flatten, Squeeze and
// Unsqueeze (axes as an input, the latest-opset form; the importer rewrites the
// older attribute form). Injective; the kernels copy the bytes and relabel the
// shape, so they work for every dtype. Inference keeps symbolic dims.
#include <algorithm>

#include "core/ir/dim_expr.h"
#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

TensorData withShape(const TensorData& x, std::vector<int64_t> shape) {
  TensorData o = x;
  o.shape = std::move(shape);
  return o;
}

// Product of dims as one Dim: static when all are, else their symbolic
// product (batch*seq), unknown when a dim is.
Dim productDim(const std::vector<Dim>& dims, size_t from, size_t to) {
  Dim p = Dim::fixed(1);
  for (size_t i = from; i < to; ++i) p = dimMul(p, dims[i]);
  return p;
}

// ---- Flatten ----

Types inferFlatten(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  const TensorType& x = c.inputTypes[0];
  TensorType o;
  o.dtype = x.dtype;
  if (!x.rankKnown) {
    o.shape = {Dim::unknown(), Dim::unknown()};
    return std::vector{o};
  }
  auto axis = axisOf(c.node, int64_t(x.rank()), 1, true);
  if (!axis) return axis.status();
  o.shape = {productDim(x.shape, 0, *axis), productDim(x.shape, *axis, x.rank())};
  return std::vector{o};
}

Outputs flattenKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  const TensorData& x = *in[0];
  auto axis = axisOf(n, int64_t(x.rank()), 1, true);
  if (!axis) return axis.status();
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < int64_t(x.rank()); ++i) (i < *axis ? a : b) *= x.shape[i];
  return std::vector{withShape(x, {a, b})};
}

// ---- Squeeze / Unsqueeze ----

Expected<std::vector<bool>> axisMask(const Node& n, const std::vector<int64_t>& axes, size_t rank) {
  std::vector<bool> m(rank, false);
  for (int64_t a : axes) {
    auto na = normalizeAxis(a, int64_t(rank));
    if (!na || m[*na])
      return nodeError(n, "axes " + shapeStr(axes) + " are out of range or repeated for rank " +
                              std::to_string(rank));
    m[*na] = true;
  }
  return m;
}

Types inferSqueeze(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 2));
  const TensorType& x = c.inputTypes[0];
  if (!x.rankKnown) return std::vector{unknownRank(x.dtype)};
  auto axes = constInts(c, 1);
  if (typeAt(c, 1) && !axes) return std::vector{unknownRank(x.dtype)};
  TensorType o;
  o.dtype = x.dtype;
  if (!axes) {
    for (const Dim& d : x.shape) {
      if (!d.isStatic()) return std::vector{unknownRank(x.dtype)};
      if (d.value != 1) o.shape.push_back(d);
    }
    return std::vector{o};
  }
  auto m = axisMask(c.node, *axes, x.rank());
  if (!m) return m.status();
  for (size_t i = 0; i < x.rank(); ++i) {
    if (!(*m)[i])
      o.shape.push_back(x.shape[i]);
    else if (x.shape[i].isStatic() && x.shape[i].value != 1)
      return nodeError(c.node, "cannot squeeze axis " + std::to_string(i) + " of " + x.str() +
                                   ", whose size is not 1");
  }
  return std::vector{o};
}

Outputs squeezeKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 2));
  const TensorData& x = *in[0];
  std::vector<int64_t> shape;
  if (const TensorData* a = inputAt(in, 1)) {
    auto axes = intsOf(n, *a, "axes");
    if (!axes) return axes.status();
    auto m = axisMask(n, *axes, x.rank());
    if (!m) return m.status();
    for (size_t i = 0; i < x.rank(); ++i) {
      if ((*m)[i] && x.shape[i] != 1)
        return nodeError(n, "cannot squeeze axis " + std::to_string(i) + " of shape " +
                                shapeStr(x.shape) + ", whose size is not 1");
      if (!(*m)[i]) shape.push_back(x.shape[i]);
    }
  } else {
    for (int64_t d : x.shape)
      if (d != 1) shape.push_back(d);
  }
  return std::vector{withShape(x, shape)};
}

template <class D>
Expected<std::vector<D>> unsqueezeShape(const Node& n, const std::vector<D>& in,
                                        const std::vector<int64_t>& axes, D one) {
  size_t rank = in.size() + axes.size();
  auto m = axisMask(n, axes, rank);
  if (!m) return m.status();
  std::vector<D> out;
  size_t k = 0;
  for (size_t i = 0; i < rank; ++i) out.push_back((*m)[i] ? one : in[k++]);
  return out;
}

Types inferUnsqueeze(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 2));
  const TensorType& x = c.inputTypes[0];
  auto axes = constInts(c, 1);
  if (!x.rankKnown || !axes) return std::vector{unknownRank(x.dtype)};
  auto s = unsqueezeShape<Dim>(c.node, x.shape, *axes, Dim::fixed(1));
  if (!s) return s.status();
  TensorType o;
  o.dtype = x.dtype;
  o.shape = *s;
  return std::vector{o};
}

Outputs unsqueezeKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 2));
  auto axes = intsOf(n, *in[1], "axes");
  if (!axes) return axes.status();
  auto s = unsqueezeShape<int64_t>(n, in[0]->shape, *axes, 1);
  if (!s) return s.status();
  return std::vector{withShape(*in[0], *s)};
}

}  // namespace

void registerSqueezeOps(OpRegistry& r) {
  const auto I = PatternKind::Injective;
  r.add(OpInfo{"Flatten", "", I, inferFlatten, flattenKernel});
  r.add(OpInfo{"Squeeze", "", I, inferSqueeze, squeezeKernel});
  r.add(OpInfo{"Unsqueeze", "", I, inferUnsqueeze, unsqueezeKernel});
}

}  // namespace fuselens::ops
