// Concat and Split along one axis (Split's sizes as an input, the
// latest-opset form). Concat takes any number of inputs: its inference and
// kernel are linear in the input count. Injective; the kernels copy whole
// rows of bytes, so they work for every dtype.
#include <algorithm>
#include <cstring>

#include "core/ir/dim_expr.h"
#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

// ---- Concat / Split ----

Types inferConcat(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, kMaxVariadicInputs));
  TensorType o;
  o.dtype = c.inputTypes[0].dtype;
  const TensorType* ranked = nullptr;
  for (const TensorType& t : c.inputTypes) {
    if (t.dtype != o.dtype) return nodeError(c.node, "inputs have different element types");
    if (t.rankKnown) ranked = &t;
  }
  if (!ranked) return std::vector{unknownRank(o.dtype)};
  auto axis = axisOf(c.node, int64_t(ranked->rank()));
  if (!axis) return axis.status();
  o.shape = ranked->shape;
  Dim sum = Dim::fixed(0);  // seq + seq is seq*2: the extents add symbolically
  for (const TensorType& t : c.inputTypes) {
    if (!t.rankKnown) {
      sum = Dim::unknown();
      continue;
    }
    if (t.rank() != ranked->rank())
      return nodeError(c.node, "inputs have different ranks: " + t.str() + " and " + ranked->str());
    for (size_t i = 0; i < t.rank(); ++i) {
      if (int64_t(i) == *axis) continue;
      if (!o.shape[i].isStatic() && t.shape[i].isStatic()) o.shape[i] = t.shape[i];
      if (t.shape[i].isStatic() && o.shape[i].isStatic() && t.shape[i] != o.shape[i])
        return nodeError(c.node, "inputs " + t.str() + " and " + ranked->str() +
                                     " differ outside the concat axis");
    }
    sum = dimAdd(sum, t.shape[*axis]);
  }
  o.shape[*axis] = sum;
  return std::vector{o};
}

Outputs concatKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, kMaxVariadicInputs));
  const TensorData& first = *in[0];
  auto axis = axisOf(n, int64_t(first.rank()));
  if (!axis) return axis.status();
  std::vector<int64_t> shape = first.shape;
  shape[*axis] = 0;
  for (const TensorData* t : in) {
    if (!t) return nodeError(n, "an input is missing");
    bool ok = t->dtype == first.dtype && t->rank() == first.rank();
    for (size_t i = 0; ok && i < t->rank(); ++i)
      ok = int64_t(i) == *axis || t->shape[i] == first.shape[i];
    if (!ok)
      return nodeError(n, "cannot concatenate " + t->type().str() + " with " + first.type().str() +
                              " along axis " + std::to_string(*axis));
    shape[*axis] += t->shape[*axis];
  }
  TensorData o(first.dtype, shape);
  int64_t outer = 1;
  for (int64_t i = 0; i < *axis; ++i) outer *= shape[i];
  size_t es = dtypeSize(first.dtype);
  std::byte* dst = o.bytes.data();
  for (int64_t a = 0; a < outer; ++a)
    for (const TensorData* t : in) {
      size_t chunk = t->numel() == 0 ? 0 : size_t(t->numel() / outer) * es;
      if (chunk) std::memcpy(dst, t->bytes.data() + a * chunk, chunk);  // empty: may be null
      dst += chunk;
    }
  return std::vector{std::move(o)};
}

// Split sizes: the `split` input, or num_outputs/#outputs parts of ceil(dim/n).
Expected<std::vector<int64_t>> splitSizes(const Node& n, int64_t dim, const TensorData* split) {
  size_t parts = n.outputs.size();
  if (split) {
    auto s = intsOf(n, *split, "split");
    if (!s) return s.status();
    int64_t sum = 0;
    for (int64_t v : *s) sum += v < 0 ? INT64_MIN / 4 : v;
    if (s->size() != parts || sum != dim)
      return nodeError(n, "split " + shapeStr(*s) + " does not cut a dim of " +
                              std::to_string(dim) + " into " + std::to_string(parts) + " parts");
    return *s;
  }
  int64_t each = (dim + int64_t(parts) - 1) / int64_t(parts);
  std::vector<int64_t> s;
  for (size_t i = 0; i < parts; ++i)
    s.push_back(std::clamp<int64_t>(dim - each * int64_t(i), 0, each));
  return s;
}

Types inferSplit(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 2));
  const TensorType& x = c.inputTypes[0];
  std::vector<TensorType> outs(c.node.outputs.size(), unknownRank(x.dtype));
  if (!x.rankKnown) return outs;
  auto axis = axisOf(c.node, int64_t(x.rank()));
  if (!axis) return axis.status();
  std::optional<std::vector<int64_t>> sizes;
  const Dim& d = x.shape[*axis];
  if (typeAt(c, 1)) {
    if (auto s = constInts(c, 1); s && s->size() == outs.size()) sizes = *s;
  } else if (d.isStatic()) {
    auto s = splitSizes(c.node, d.value, nullptr);
    if (!s) return s.status();
    sizes = *s;
  }
  // Equal parts of a symbolic dim: ceil(d/n) each, the rest in the last
  // (seq*2 in two is seq and seq); as for Slice, for every d of at least n parts.
  const int64_t parts = int64_t(outs.size());
  const Dim each = typeAt(c, 1) || d.isStatic() ? Dim::unknown() : dimCeilDiv(d, parts);
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i] = x;
    outs[i].shape[*axis] = sizes ? Dim::fixed((*sizes)[i])
                           : int64_t(i) + 1 < parts
                               ? each
                               : dimSub(d, dimMul(each, Dim::fixed(parts - 1)));
  }
  return outs;
}

Outputs splitKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 2));
  const TensorData& x = *in[0];
  auto axis = axisOf(n, int64_t(x.rank()));
  if (!axis) return axis.status();
  auto sizes = splitSizes(n, x.shape[*axis], inputAt(in, 1));
  if (!sizes) return sizes.status();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < int64_t(x.rank()); ++i) {
    if (i < *axis) outer *= x.shape[i];
    if (i > *axis) inner *= x.shape[i];
  }
  size_t es = dtypeSize(x.dtype);
  std::vector<TensorData> outs;
  int64_t offset = 0;
  for (int64_t sz : *sizes) {
    std::vector<int64_t> shape = x.shape;
    shape[*axis] = sz;
    TensorData o(x.dtype, shape);
    for (int64_t a = 0; a < outer && sz * inner > 0; ++a)  // empty parts: pointers may be null
      std::memcpy(o.bytes.data() + a * sz * inner * es,
                  x.bytes.data() + (a * x.shape[*axis] + offset) * inner * es,
                  size_t(sz * inner) * es);
    offset += sz;
    outs.push_back(std::move(o));
  }
  return outs;
}

}  // namespace

void registerConcatSplitOps(OpRegistry& r) {
  r.add(OpInfo{"Concat", "", PatternKind::Injective, inferConcat, concatKernel});
  r.add(OpInfo{"Split", "", PatternKind::Injective, inferSplit, splitKernel});
}

}  // namespace fuselens::ops
