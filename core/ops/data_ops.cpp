// Shape and data movement ops in their latest-opset forms (axes, split, pads,
// starts/ends as inputs; the importer rewrites older attribute forms): Flatten,
// Squeeze, Unsqueeze, Concat, Split, Slice, Gather, GatherElements, GatherND,
// ScatterND, ScatterElements, Expand, Tile, Pad, DepthToSpace, SpaceToDepth,
// Shape, Size, ConstantOfShape, Range, NonZero, OneHot, Cast, CastLike.
// Kernels move whole elements as bytes, so they work for every dtype. Where an
// output shape depends on input values, inference reads constant inputs and
// otherwise leaves the dim unknown; the kernel resolves it at run time.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

void copyElem(TensorData& dst, int64_t di, const TensorData& src, int64_t si) {
  size_t es = dtypeSize(src.dtype);
  std::memcpy(dst.bytes.data() + di * es, src.bytes.data() + si * es, es);
}

Expected<int64_t> axisOf(const Node& n, int64_t rank, int64_t fallback = 0, bool inclusive = false) {
  int64_t a = n.attrs.getInt("axis", fallback);
  auto na = normalizeAxis(a, rank + (inclusive ? 1 : 0));
  if (!na && !(inclusive && a == rank))
    return nodeError(n, "axis " + std::to_string(a) + " is out of range for rank " +
                            std::to_string(rank));
  return na ? *na : a;
}

TensorData withShape(const TensorData& x, std::vector<int64_t> shape) {
  TensorData o = x;
  o.shape = std::move(shape);
  return o;
}

// Product of dims as one Dim: static when all are, a lone symbol kept, else unknown.
Dim productDim(const std::vector<Dim>& dims, size_t from, size_t to) {
  int64_t p = 1;
  const Dim* sym = nullptr;
  int syms = 0;
  for (size_t i = from; i < to; ++i) {
    if (dims[i].isStatic()) p *= dims[i].value;
    else if (!dims[i].symbol.empty()) sym = &dims[i], ++syms;
    else return Dim::unknown();
  }
  if (syms == 0) return Dim::fixed(p);
  if (syms == 1 && p == 1) return *sym;
  return Dim::unknown();
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
    if (!(*m)[i]) o.shape.push_back(x.shape[i]);
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

// ---- Concat / Split ----

Types inferConcat(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1 << 20));
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
  int64_t sum = 0;
  bool known = true;
  for (const TensorType& t : c.inputTypes) {
    if (!t.rankKnown) {
      known = false;
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
    if (t.shape[*axis].isStatic()) sum += t.shape[*axis].value;
    else known = false;
  }
  o.shape[*axis] = known ? Dim::fixed(sum) : Dim::unknown();
  return std::vector{o};
}

Outputs concatKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1 << 20));
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
  for (size_t i = 0; i < parts; ++i) s.push_back(std::clamp<int64_t>(dim - each * int64_t(i), 0, each));
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
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i] = x;
    outs[i].shape[*axis] = sizes ? Dim::fixed((*sizes)[i]) : Dim::unknown();
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
                  x.bytes.data() + (a * x.shape[*axis] + offset) * inner * es, size_t(sz * inner) * es);
    offset += sz;
    outs.push_back(std::move(o));
  }
  return outs;
}

// ---- Slice ----

struct SliceAxis {
  int64_t start, step, count;
};

// Per input axis: where it starts, its step and how many elements it keeps.
Expected<std::vector<SliceAxis>> sliceAxes(const Node& n, const std::vector<int64_t>& shape,
                                           const Inputs& in) {
  auto starts = intsOf(n, *in[1], "starts");
  if (!starts) return starts.status();
  auto ends = intsOf(n, *in[2], "ends");
  if (!ends) return ends.status();
  std::vector<int64_t> axes, steps(starts->size(), 1);
  for (size_t i = 0; i < starts->size(); ++i) axes.push_back(int64_t(i));
  if (const TensorData* a = inputAt(in, 3)) {
    auto v = intsOf(n, *a, "axes");
    if (!v) return v.status();
    axes = *v;
  }
  if (const TensorData* s = inputAt(in, 4)) {
    auto v = intsOf(n, *s, "steps");
    if (!v) return v.status();
    steps = *v;
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return nodeError(n, "starts, ends, axes and steps must have the same length");
  std::vector<SliceAxis> out;
  for (int64_t d : shape) out.push_back({0, 1, d});
  std::vector<bool> seen(shape.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto ax = normalizeAxis(axes[i], int64_t(shape.size()));
    if (!ax || seen[*ax]) return nodeError(n, "slice axes " + shapeStr(axes) + " are invalid");
    seen[*ax] = true;
    int64_t dim = shape[*ax], step = steps[i];
    if (step == 0) return nodeError(n, "a slice step is 0");
    auto clampIdx = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v = v < -dim ? lo : v + dim;  // guard against overflow with huge negatives
      return std::clamp(v, lo, hi);
    };
    int64_t s, e;
    if (step > 0) {
      s = clampIdx((*starts)[i], 0, dim);
      e = clampIdx((*ends)[i], 0, dim);
    } else {
      s = clampIdx((*starts)[i], -1, dim - 1);
      e = clampIdx((*ends)[i], -1, dim - 1);
      if ((*ends)[i] < -dim) e = -1;
    }
    int64_t count = step > 0 ? (e - s + step - 1) / step : (s - e + (-step) - 1) / (-step);
    out[*ax] = {s, step, std::max<int64_t>(0, count)};
  }
  return out;
}

Types inferSlice(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 3, 5));
  const TensorType& x = c.inputTypes[0];
  if (!x.rankKnown) return std::vector{unknownRank(x.dtype)};
  TensorType o = x;
  bool allConst = true;
  for (size_t i = 1; i < c.inputTypes.size(); ++i)
    if (typeAt(c, i) && !constAt(c, i)) allConst = false;
  if (!allConst) {
    // Axes not sliced keep their dims only when we know which axes are sliced.
    auto axes = constInts(c, 3);
    std::vector<bool> sliced(x.rank(), !typeAt(c, 3) ? false : !axes);
    if (!typeAt(c, 3)) {
      auto st = typeAt(c, 1);
      size_t k = st && st->rankKnown && st->rank() == 1 && st->shape[0].isStatic()
                     ? size_t(st->shape[0].value) : x.rank();
      for (size_t i = 0; i < std::min(k, x.rank()); ++i) sliced[i] = true;
    } else if (axes) {
      for (int64_t a : *axes)
        if (auto na = normalizeAxis(a, int64_t(x.rank()))) sliced[*na] = true;
    }
    for (size_t i = 0; i < x.rank(); ++i)
      if (sliced[i]) o.shape[i] = Dim::unknown();
    return std::vector{o};
  }
  // Constant parameters: dims the slice touches must be static to resolve.
  std::vector<int64_t> probe;
  for (const Dim& d : x.shape) probe.push_back(d.isStatic() ? d.value : int64_t(1) << 40);
  Inputs ins{nullptr};
  for (size_t i = 1; i < c.inputTypes.size(); ++i) ins.push_back(constAt(c, i));
  auto axes = sliceAxes(c.node, probe, ins);
  if (!axes) return axes.status();
  for (size_t i = 0; i < x.rank(); ++i) {
    const SliceAxis& s = (*axes)[i];
    bool untouched = s.start == 0 && s.step == 1 && s.count == probe[i];
    if (!untouched) o.shape[i] = x.shape[i].isStatic() ? Dim::fixed(s.count) : Dim::unknown();
  }
  return std::vector{o};
}

Outputs sliceKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 3, 5));
  const TensorData& x = *in[0];
  auto axes = sliceAxes(n, x.shape, in);
  if (!axes) return axes.status();
  std::vector<int64_t> shape;
  for (const SliceAxis& s : *axes) shape.push_back(s.count);
  TensorData o(x.dtype, shape);
  std::vector<int64_t> st = rowMajorStrides(x.shape), idx(shape.size(), 0);
  for (int64_t i = 0; i < o.numel(); ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      src += ((*axes)[d].start + idx[d] * (*axes)[d].step) * st[d];
    copyElem(o, i, x, src);
    nextIndex(idx, shape);
  }
  return std::vector{std::move(o)};
}

// ---- Gather family ----

Expected<int64_t> wrapIndex(const Node& n, int64_t v, int64_t dim) {
  if (v < -dim || v >= dim)
    return nodeError(n, "index " + std::to_string(v) + " is out of range for a dim of " +
                            std::to_string(dim));
  return v < 0 ? v + dim : v;
}

Types inferGather(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 2));
  const TensorType &x = c.inputTypes[0], &idx = c.inputTypes[1];
  if (!x.rankKnown || !idx.rankKnown) return std::vector{unknownRank(x.dtype)};
  auto axis = axisOf(c.node, int64_t(x.rank()));
  if (!axis) return axis.status();
  TensorType o;
  o.dtype = x.dtype;
  o.shape.assign(x.shape.begin(), x.shape.begin() + *axis);
  o.shape.insert(o.shape.end(), idx.shape.begin(), idx.shape.end());
  o.shape.insert(o.shape.end(), x.shape.begin() + *axis + 1, x.shape.end());
  return std::vector{o};
}

Outputs gatherKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 2));
  const TensorData &x = *in[0], &ind = *in[1];
  if (!isIntegral(ind.dtype)) return nodeError(n, "indices must be integers");
  auto axis = axisOf(n, int64_t(x.rank()));
  if (!axis) return axis.status();
  int64_t outer = 1, inner = 1, dim = x.shape[*axis];
  for (int64_t i = 0; i < int64_t(x.rank()); ++i) {
    if (i < *axis) outer *= x.shape[i];
    if (i > *axis) inner *= x.shape[i];
  }
  std::vector<int64_t> shape(x.shape.begin(), x.shape.begin() + *axis);
  shape.insert(shape.end(), ind.shape.begin(), ind.shape.end());
  shape.insert(shape.end(), x.shape.begin() + *axis + 1, x.shape.end());
  TensorData o(x.dtype, shape);
  size_t es = dtypeSize(x.dtype);
  int64_t k = ind.numel();
  for (int64_t j = 0; j < k; ++j) {
    auto w = wrapIndex(n, loadI(ind, j), dim);
    if (!w) return w.status();
    for (int64_t a = 0; a < outer && inner > 0; ++a)  // empty slices: pointers may be null
      std::memcpy(o.bytes.data() + (a * k + j) * inner * es,
                  x.bytes.data() + (a * dim + *w) * inner * es, size_t(inner) * es);
  }
  return std::vector{std::move(o)};
}

Types inferLikeInput(const InferContext& c, size_t shapeFrom) {
  TensorType o = c.inputTypes.at(shapeFrom);
  o.dtype = c.inputTypes[0].dtype;
  return std::vector{o};
}

// GatherElements/ScatterElements: the flat offset into the data of index
// element i, whose coordinates are `idx` except on `axis`, where the index
// tensor's value (negative counts from the end) stands.
Expected<int64_t> elementsOffset(const Node& n, const TensorData& x, const TensorData& ind, int64_t axis,
                                 const std::vector<int64_t>& idx, const std::vector<int64_t>& st, int64_t i) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) {
    int64_t v = idx[d];
    if (int64_t(d) == axis) {
      auto w = wrapIndex(n, loadI(ind, i), x.shape[d]);
      if (!w) return w.status();
      v = *w;
    } else if (v >= x.shape[d]) {
      return nodeError(n, "indices are larger than data outside the axis");
    }
    off += v * st[d];
  }
  return off;
}

Outputs gatherElementsKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 2));
  const TensorData &x = *in[0], &ind = *in[1];
  auto axis = axisOf(n, int64_t(x.rank()));
  if (!axis) return axis.status();
  if (ind.rank() != x.rank()) return nodeError(n, "data and indices must have the same rank");
  TensorData o(x.dtype, ind.shape);
  std::vector<int64_t> st = rowMajorStrides(x.shape), idx(ind.rank(), 0);
  for (int64_t i = 0; i < ind.numel(); ++i) {
    auto src = elementsOffset(n, x, ind, *axis, idx, st, i);
    if (!src) return src.status();
    copyElem(o, i, x, *src);
    nextIndex(idx, ind.shape);
  }
  return std::vector{std::move(o)};
}

Types inferGatherND(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 2));
  const TensorType &x = c.inputTypes[0], &idx = c.inputTypes[1];
  if (!x.rankKnown || !idx.rankKnown || idx.rank() == 0 || !idx.shape.back().isStatic())
    return std::vector{unknownRank(x.dtype)};
  int64_t b = c.node.attrs.getInt("batch_dims", 0), last = idx.shape.back().value;
  if (b + last > int64_t(x.rank()))
    return nodeError(c.node, "indices reach past the rank of the data");
  TensorType o;
  o.dtype = x.dtype;
  o.shape.assign(idx.shape.begin(), idx.shape.end() - 1);
  o.shape.insert(o.shape.end(), x.shape.begin() + b + last, x.shape.end());
  return std::vector{o};
}

// Data viewed as [batch..., indexed..., slice...]; indices as [batch..., rest..., last].
struct NDView {
  int64_t batch = 1, perBatch = 1, last = 0, slice = 1, dataBatch = 1;
  std::vector<int64_t> indexedDims, indexedStrides;
};

Expected<NDView> ndView(const Node& n, const TensorData& x, const TensorData& ind) {
  int64_t b = n.attrs.getInt("batch_dims", 0);
  if (ind.rank() < 1 || b < 0 || b >= int64_t(ind.rank()) || b > int64_t(x.rank()))
    return nodeError(n, "indices of rank " + std::to_string(ind.rank()) + " and batch_dims " +
                            std::to_string(b) + " do not fit data " + shapeStr(x.shape));
  NDView v;
  v.last = ind.shape.back();
  if (b + v.last > int64_t(x.rank())) return nodeError(n, "indices reach past the rank of the data");
  for (int64_t i = 0; i < b; ++i) {
    if (x.shape[i] != ind.shape[i]) return nodeError(n, "batch dims of data and indices differ");
    v.batch *= x.shape[i];
  }
  for (size_t i = size_t(b); i + 1 < ind.rank(); ++i) v.perBatch *= ind.shape[i];
  for (int64_t i = b + v.last; i < int64_t(x.rank()); ++i) v.slice *= x.shape[i];
  v.indexedDims.assign(x.shape.begin() + b, x.shape.begin() + b + v.last);
  int64_t s = v.slice;
  v.indexedStrides.assign(v.indexedDims.size(), 0);
  for (size_t i = v.indexedDims.size(); i-- > 0;) {
    v.indexedStrides[i] = s;
    s *= v.indexedDims[i];
  }
  v.dataBatch = s;
  return v;
}

// Offset (in elements) of the slice index tuple number `t` points at.
Expected<int64_t> ndOffset(const Node& n, const NDView& v, const TensorData& ind, int64_t t) {
  int64_t off = 0;
  for (int64_t k = 0; k < v.last; ++k) {
    auto w = wrapIndex(n, loadI(ind, t * v.last + k), v.indexedDims[k]);
    if (!w) return w.status();
    off += *w * v.indexedStrides[k];
  }
  return off;
}

Outputs gatherNDKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 2));
  const TensorData &x = *in[0], &ind = *in[1];
  auto v = ndView(n, x, ind);
  if (!v) return v.status();
  std::vector<int64_t> shape(ind.shape.begin(), ind.shape.end() - 1);
  shape.insert(shape.end(), x.shape.begin() + n.attrs.getInt("batch_dims", 0) + v->last,
               x.shape.end());
  TensorData o(x.dtype, shape);
  size_t es = dtypeSize(x.dtype);
  for (int64_t bi = 0; bi < v->batch; ++bi)
    for (int64_t j = 0; j < v->perBatch; ++j) {
      int64_t t = bi * v->perBatch + j;
      auto off = ndOffset(n, *v, ind, t);
      if (!off) return off.status();
      if (v->slice > 0)  // an empty slice's pointers may be null
        std::memcpy(o.bytes.data() + t * v->slice * es,
                    x.bytes.data() + (bi * v->dataBatch + *off) * es, size_t(v->slice) * es);
    }
  return std::vector{std::move(o)};
}

// ---- Scatter ----

// Combines an update into an element per the `reduction` attribute.
Status combine(const Node& n, TensorData& o, int64_t at, const TensorData& u, int64_t ui) {
  std::string red = n.attrs.getString("reduction", "none");
  if (red == "none") {
    copyElem(o, at, u, ui);
    return Status::ok();
  }
  double a = o.at(at), b = u.at(ui);
  if (red == "add") a += b;
  else if (red == "mul") a *= b;
  else if (red == "max") a = std::max(a, b);
  else if (red == "min") a = std::min(a, b);
  else return nodeError(n, "reduction '" + red + "' is not one of none, add, mul, max, min");
  if (isFloat(o.dtype)) storeF(o, at, a);
  else storeI(o, at, int64_t(a));
  return Status::ok();
}

Types inferFirst(const InferContext& c) { return std::vector{c.inputTypes.at(0)}; }

Outputs scatterNDKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 3, 3));
  const TensorData &x = *in[0], &ind = *in[1], &u = *in[2];
  if (u.dtype != x.dtype) return nodeError(n, "updates and data have different element types");
  Node plain = n;
  plain.attrs.erase("batch_dims");
  auto v = ndView(plain, x, ind);
  if (!v) return v.status();
  if (u.numel() != v->perBatch * v->slice)
    return nodeError(n, "updates " + shapeStr(u.shape) + " do not match the indices and data");
  TensorData o = x;
  for (int64_t t = 0; t < v->perBatch; ++t) {
    auto off = ndOffset(n, *v, ind, t);
    if (!off) return off.status();
    for (int64_t s = 0; s < v->slice; ++s)
      FL_RETURN_IF_ERROR(combine(n, o, *off + s, u, t * v->slice + s));
  }
  return std::vector{std::move(o)};
}

Outputs scatterElementsKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 3, 3));
  const TensorData &x = *in[0], &ind = *in[1], &u = *in[2];
  auto axis = axisOf(n, int64_t(x.rank()));
  if (!axis) return axis.status();
  if (ind.shape != u.shape || ind.rank() != x.rank())
    return nodeError(n, "indices and updates must have one shape, of the data's rank");
  TensorData o = x;
  std::vector<int64_t> st = rowMajorStrides(x.shape), idx(ind.rank(), 0);
  for (int64_t i = 0; i < ind.numel(); ++i) {
    auto dst = elementsOffset(n, x, ind, *axis, idx, st, i);
    if (!dst) return dst.status();
    FL_RETURN_IF_ERROR(combine(n, o, *dst, u, i));
    nextIndex(idx, ind.shape);
  }
  return std::vector{std::move(o)};
}

// ---- Expand / Tile ----

Types inferExpand(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 2));
  const TensorType& x = c.inputTypes[0];
  auto shape = constInts(c, 1);
  if (!shape || !x.rankKnown) {
    const TensorType& st = c.inputTypes[1];
    if (x.rankKnown && st.rankKnown && st.rank() == 1 && st.shape[0].isStatic()) {
      TensorType o;
      o.dtype = x.dtype;
      o.shape.assign(size_t(std::max<int64_t>(st.shape[0].value, int64_t(x.rank()))), Dim::unknown());
      return std::vector{o};
    }
    return std::vector{unknownRank(x.dtype)};
  }
  auto d = broadcastDims(c.node, x.shape, staticDims(*shape));
  if (!d) return d.status();
  // A target 1 against a symbolic input dim keeps the symbol.
  TensorType o;
  o.dtype = x.dtype;
  o.shape = *d;
  return std::vector{o};
}

Outputs expandKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 2));
  const TensorData& x = *in[0];
  auto target = intsOf(n, *in[1], "shape");
  if (!target) return target.status();
  FL_RETURN_IF_ERROR(checkAllocatable(n, *target, x.dtype));
  auto shape = broadcastShapes(n, x.shape, *target);
  if (!shape) return shape.status();
  FL_RETURN_IF_ERROR(checkAllocatable(n, *shape, x.dtype));
  TensorData o(x.dtype, *shape);
  forEachBroadcast({&x}, *shape, [&](int64_t i, const std::vector<int64_t>& off) {
    copyElem(o, i, x, off[0]);
  });
  return std::vector{std::move(o)};
}

Types inferTile(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 2));
  TensorType o = c.inputTypes[0];
  if (!o.rankKnown) return std::vector{o};
  auto reps = constInts(c, 1);
  for (size_t i = 0; i < o.rank(); ++i) {
    if (!reps || reps->size() != o.rank()) o.shape[i] = Dim::unknown();
    else if (o.shape[i].isStatic()) o.shape[i] = Dim::fixed(o.shape[i].value * (*reps)[i]);
    else if ((*reps)[i] != 1) o.shape[i] = Dim::unknown();
  }
  return std::vector{o};
}

Outputs tileKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 2));
  const TensorData& x = *in[0];
  auto reps = intsOf(n, *in[1], "repeats");
  if (!reps) return reps.status();
  if (reps->size() != x.rank()) return nodeError(n, "repeats must have one entry per input axis");
  std::vector<int64_t> shape;
  for (size_t i = 0; i < x.rank(); ++i) {
    int64_t len = 0;
    if ((*reps)[i] < 0 || __builtin_mul_overflow(x.shape[i], (*reps)[i], &len))
      return nodeError(n, "repeats " + shapeStr(*reps) + " are negative or too large");
    shape.push_back(len);
  }
  FL_RETURN_IF_ERROR(checkAllocatable(n, shape, x.dtype));
  TensorData o(x.dtype, shape);
  std::vector<int64_t> st = rowMajorStrides(x.shape), idx(shape.size(), 0);
  for (int64_t i = 0; i < o.numel(); ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) src += (idx[d] % x.shape[d]) * st[d];
    copyElem(o, i, x, src);
    nextIndex(idx, shape);
  }
  return std::vector{std::move(o)};
}

// ---- Pad ----

Expected<std::vector<int64_t>> padsFor(const Node& n, size_t rank, const Inputs& in) {
  auto pads = intsOf(n, *in[1], "pads");
  if (!pads) return pads.status();
  std::vector<int64_t> axes;
  if (const TensorData* a = inputAt(in, 3)) {
    auto v = intsOf(n, *a, "axes");
    if (!v) return v.status();
    axes = *v;
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(int64_t(i));
  }
  if (pads->size() != 2 * axes.size())
    return nodeError(n, "pads " + shapeStr(*pads) + " must hold two entries per padded axis");
  std::vector<int64_t> full(2 * rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto a = normalizeAxis(axes[i], int64_t(rank));
    if (!a) return nodeError(n, "pad axis " + std::to_string(axes[i]) + " is out of range");
    full[*a] = (*pads)[i];
    full[*a + rank] = (*pads)[i + axes.size()];
  }
  return full;
}

Types inferPad(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 4));
  TensorType o = c.inputTypes[0];
  if (!o.rankKnown) return std::vector{o};
  Inputs ins{nullptr};
  for (size_t i = 1; i < c.inputTypes.size(); ++i) ins.push_back(typeAt(c, i) ? constAt(c, i) : nullptr);
  bool known = ins[1] && (!typeAt(c, 3) || (ins.size() > 3 && ins[3]));
  if (!known) {
    for (Dim& d : o.shape) d = Dim::unknown();
    return std::vector{o};
  }
  auto pads = padsFor(c.node, o.rank(), ins);
  if (!pads) return pads.status();
  for (size_t i = 0; i < o.rank(); ++i) {
    // Pads come from the model: overflow and negative sizes are its error, not UB here.
    int64_t add = 0, size = 0;
    if (__builtin_add_overflow((*pads)[i], (*pads)[i + o.rank()], &add) ||
        (o.shape[i].isStatic() &&
         (__builtin_add_overflow(o.shape[i].value, add, &size) || size < 0)))
      return nodeError(c.node, "pads " + shapeStr(*pads) + " give axis " + std::to_string(i) +
                                   " a negative or overflowing size");
    if (o.shape[i].isStatic()) o.shape[i] = Dim::fixed(size);
    else if (add != 0) o.shape[i] = Dim::unknown();
  }
  return std::vector{o};
}

Outputs padKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 4));
  const TensorData& x = *in[0];
  auto pads = padsFor(n, x.rank(), in);
  if (!pads) return pads.status();
  std::string mode = n.attrs.getString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return nodeError(n, "mode '" + mode + "' is not one of constant, reflect, edge, wrap");
  size_t r = x.rank();
  std::vector<int64_t> shape;
  for (size_t i = 0; i < r; ++i) {
    int64_t len = 0;
    if (__builtin_add_overflow(x.shape[i], (*pads)[i], &len) ||
        __builtin_add_overflow(len, (*pads)[i + r], &len))
      return nodeError(n, "pads " + shapeStr(*pads) + " are too large");
    shape.push_back(len);
    if (shape.back() < 0) return nodeError(n, "negative pads remove more than the axis holds");
    if (mode != "constant" && x.shape[i] == 0 && shape.back() > 0)
      return nodeError(n, "cannot pad an empty axis in " + mode + " mode");
    if (mode == "reflect" && x.shape[i] == 1 && shape.back() > 1)
      return nodeError(n, "reflect padding needs an axis longer than 1");
  }
  FL_RETURN_IF_ERROR(checkAllocatable(n, shape, x.dtype));
  TensorData o(x.dtype, shape);
  TensorData fill(x.dtype, {});
  if (const TensorData* cv = inputAt(in, 2); cv && cv->numel() == 1) {
    if (cv->dtype != x.dtype) return nodeError(n, "constant_value must have the data's type");
    fill = *cv;
  }
  std::vector<int64_t> st = rowMajorStrides(x.shape), idx(r, 0);
  for (int64_t i = 0; i < o.numel(); ++i) {
    int64_t src = 0;
    bool outside = false;
    for (size_t d = 0; d < r; ++d) {
      int64_t v = idx[d] - (*pads)[d], len = x.shape[d];
      if (v < 0 || v >= len) {
        if (mode == "constant") outside = true;
        else if (mode == "edge") v = std::clamp<int64_t>(v, 0, len - 1);
        else if (mode == "wrap") v = ((v % len) + len) % len;
        else {  // reflect without repeating the edge
          int64_t period = 2 * (len - 1);
          v = ((v % period) + period) % period;
          if (v >= len) v = period - v;
        }
      }
      src += v * st[d];
    }
    if (outside) copyElem(o, i, fill, 0);
    else copyElem(o, i, x, src);
    nextIndex(idx, shape);
  }
  return std::vector{std::move(o)};
}

// ---- DepthToSpace / SpaceToDepth ----

Types inferDepthSpace(const InferContext& c, bool toSpace) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  TensorType o = c.inputTypes[0];
  int64_t b = c.node.attrs.getInt("blocksize", 0);
  if (b <= 0) return nodeError(c.node, "blocksize must be positive");
  if (!o.rankKnown) return std::vector{o};
  if (o.rank() != 4) return nodeError(c.node, "expects a 4-D input, got " + o.str());
  auto scale = [](Dim d, int64_t num, int64_t den) {
    return d.isStatic() ? Dim::fixed(d.value * num / den) : Dim::unknown();
  };
  o.shape[1] = toSpace ? scale(o.shape[1], 1, b * b) : scale(o.shape[1], b * b, 1);
  for (int i = 2; i < 4; ++i) o.shape[i] = toSpace ? scale(o.shape[i], b, 1) : scale(o.shape[i], 1, b);
  return std::vector{o};
}

Outputs depthSpaceKernel(const Node& n, const Inputs& in, bool toSpace) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  const TensorData& x = *in[0];
  int64_t b = n.attrs.getInt("blocksize", 0);
  if (x.rank() != 4 || b <= 0) return nodeError(n, "expects a 4-D input and a positive blocksize");
  int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  bool crd = n.attrs.getString("mode", "DCR") == "CRD";
  if (toSpace ? C % (b * b) != 0 : (H % b != 0 || W % b != 0))
    return nodeError(n, "shape " + shapeStr(x.shape) + " does not divide by blocksize " + std::to_string(b));
  // Always described from the space side: out[n, c, h*b+i, w*b+j] <-> depth channel.
  int64_t Cs = toSpace ? C / (b * b) : C, Hs = toSpace ? H * b : H, Ws = toSpace ? W * b : W;
  int64_t Cd = Cs * b * b;
  std::vector<int64_t> shape = toSpace ? std::vector<int64_t>{N, Cs, Hs, Ws}
                                       : std::vector<int64_t>{N, Cd, H / b, W / b};
  TensorData o(x.dtype, shape);
  for (int64_t nn = 0; nn < N; ++nn)
    for (int64_t c = 0; c < Cs; ++c)
      for (int64_t h = 0; h < Hs; ++h)
        for (int64_t w = 0; w < Ws; ++w) {
          int64_t i = h % b, j = w % b;
          // SpaceToDepth uses the DCR order only.
          int64_t cd = (crd && toSpace) ? c * b * b + i * b + j : (i * b + j) * Cs + c;
          int64_t space = ((nn * Cs + c) * Hs + h) * Ws + w;
          int64_t depth = ((nn * Cd + cd) * (Hs / b) + h / b) * (Ws / b) + w / b;
          if (toSpace) copyElem(o, space, x, depth);
          else copyElem(o, depth, x, space);
        }
  return std::vector{std::move(o)};
}

// ---- Shape / Size / ConstantOfShape / Range / NonZero / OneHot ----

std::pair<int64_t, int64_t> shapeRange(const Node& n, int64_t rank) {
  auto clampTo = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  return {clampTo(n.attrs.getInt("start", 0)), clampTo(n.attrs.getInt("end", rank))};
}

Types inferShape(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  const TensorType& x = c.inputTypes[0];
  TensorType o;
  o.dtype = DType::I64;
  if (!x.rankKnown) o.shape = {Dim::unknown()};
  else {
    auto [s, e] = shapeRange(c.node, int64_t(x.rank()));
    o.shape = {Dim::fixed(std::max<int64_t>(0, e - s))};
  }
  return std::vector{o};
}

Outputs shapeKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  auto [s, e] = shapeRange(n, int64_t(in[0]->rank()));
  std::vector<int64_t> v;
  for (int64_t i = s; i < e; ++i) v.push_back(in[0]->shape[i]);
  return std::vector{TensorData::fromVector(DType::I64, {int64_t(v.size())}, v)};
}

Types inferSize(const InferContext&) { return std::vector{TensorType::of(DType::I64, {})}; }

Outputs sizeKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  return std::vector{TensorData::fromVector(DType::I64, {}, std::vector<int64_t>{in[0]->numel()})};
}

TensorData constantFill(const Node& n) {
  auto v = n.attrs.getTensor("value");
  return v && v->numel() == 1 ? *v : TensorData::fromVector(DType::F32, {}, std::vector<float>{0});
}

Types inferConstantOfShape(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  DType dt = constantFill(c.node).dtype;
  if (auto s = constInts(c, 0)) return std::vector{TensorType::of(dt, *s)};
  const TensorType& st = c.inputTypes[0];
  if (st.rankKnown && st.rank() == 1 && st.shape[0].isStatic()) {
    TensorType o;
    o.dtype = dt;
    o.shape.assign(size_t(st.shape[0].value), Dim::unknown());
    return std::vector{o};
  }
  return std::vector{unknownRank(dt)};
}

Outputs constantOfShapeKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  auto shape = intsOf(n, *in[0], "shape");
  if (!shape) return shape.status();
  uint64_t count = 1;
  for (int64_t d : *shape)
    if (d < 0 || __builtin_mul_overflow(count, uint64_t(d), &count) || count > (uint64_t(1) << 34))
      return nodeError(n, "shape " + shapeStr(*shape) + " is negative or too large");
  TensorData fill = constantFill(n);
  TensorData o(fill.dtype, *shape);
  for (int64_t i = 0; i < o.numel(); ++i) copyElem(o, i, fill, 0);
  return std::vector{std::move(o)};
}

Types inferRange(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 3, 3));
  TensorType o;
  o.dtype = c.inputTypes[0].dtype;
  o.shape = {Dim::unknown()};
  const TensorData *s = constAt(c, 0), *l = constAt(c, 1), *d = constAt(c, 2);
  if (s && l && d && s->numel() == 1 && l->numel() == 1 && d->numel() == 1 && d->at(0) != 0)
    o.shape[0] = Dim::fixed(std::max<int64_t>(0, int64_t(std::ceil((l->at(0) - s->at(0)) / d->at(0)))));
  return std::vector{o};
}

Outputs rangeKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 3, 3));
  for (const TensorData* t : in)
    if (t->numel() != 1 || t->dtype != in[0]->dtype)
      return nodeError(n, "start, limit and delta must be scalars of one type");
  DType dt = in[0]->dtype;
  TensorData o;
  if (isFloat(dt)) {
    double s = in[0]->at(0), l = in[1]->at(0), d = in[2]->at(0);
    double cnt = d == 0 ? -1 : std::ceil((l - s) / d);
    if (d == 0 || !(cnt < 1e8)) return nodeError(n, "delta is 0 or the range is too long");
    int64_t count = std::max<int64_t>(0, int64_t(cnt));
    o = TensorData(dt, {count});
    for (int64_t i = 0; i < count; ++i) storeF(o, i, s + double(i) * d);
  } else {
    int64_t s = loadI(*in[0], 0), l = loadI(*in[1], 0), d = loadI(*in[2], 0);
    if (d == 0) return nodeError(n, "delta is 0");
    double cnt = std::ceil((double(l) - double(s)) / double(d));
    if (!(cnt < 1e8)) return nodeError(n, "the range is too long");
    int64_t count = std::max<int64_t>(0, int64_t(cnt));
    o = TensorData(dt, {count});
    for (int64_t i = 0; i < count; ++i) storeI(o, i, s + i * d);
  }
  return std::vector{std::move(o)};
}

Types inferNonZero(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  const TensorType& x = c.inputTypes[0];
  TensorType o;
  o.dtype = DType::I64;
  o.shape = {x.rankKnown ? Dim::fixed(int64_t(x.rank())) : Dim::unknown(), Dim::unknown()};
  return std::vector{o};
}

Outputs nonZeroKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  const TensorData& x = *in[0];
  std::vector<std::vector<int64_t>> hits;
  std::vector<int64_t> idx(x.rank(), 0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (x.at(i) != 0) hits.push_back(idx);
    nextIndex(idx, x.shape);
  }
  int64_t r = int64_t(x.rank()), k = int64_t(hits.size());
  TensorData o(DType::I64, {r, k});
  for (int64_t j = 0; j < k; ++j)
    for (int64_t d = 0; d < r; ++d) o.data<int64_t>()[d * k + j] = hits[j][d];
  return std::vector{std::move(o)};
}

Types inferOneHot(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 3, 3));
  const TensorType& ind = c.inputTypes[0];
  if (!ind.rankKnown) return std::vector{unknownRank(c.inputTypes[2].dtype)};
  int64_t axis = c.node.attrs.getInt("axis", -1);
  auto a = normalizeAxis(axis, int64_t(ind.rank()) + 1);
  if (!a) return nodeError(c.node, "axis " + std::to_string(axis) + " is out of range");
  Dim depth = Dim::unknown();
  if (const TensorData* d = constAt(c, 1); d && d->numel() == 1) depth = Dim::fixed(int64_t(d->at(0)));
  TensorType o;
  o.dtype = c.inputTypes[2].dtype;
  o.shape = ind.shape;
  o.shape.insert(o.shape.begin() + *a, depth);
  return std::vector{o};
}

Outputs oneHotKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 3, 3));
  const TensorData &ind = *in[0], &vals = *in[2];
  auto depthV = scalarOf(n, *in[1], "depth");
  if (!depthV) return depthV.status();
  int64_t depth = int64_t(*depthV);
  if (depth < 0 || depth > (1 << 24) || vals.numel() != 2)
    return nodeError(n, "depth must be in [0, 2^24] and values must hold [off, on]");
  int64_t axis = n.attrs.getInt("axis", -1);
  auto a = normalizeAxis(axis, int64_t(ind.rank()) + 1);
  if (!a) return nodeError(n, "axis " + std::to_string(axis) + " is out of range");
  std::vector<int64_t> shape = ind.shape;
  shape.insert(shape.begin() + *a, depth);
  FL_RETURN_IF_ERROR(checkAllocatable(n, shape, vals.dtype));
  TensorData o(vals.dtype, shape);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < int64_t(ind.rank()); ++i) (i < *a ? outer : inner) *= ind.shape[i];
  for (int64_t p = 0; p < outer; ++p)
    for (int64_t d = 0; d < depth; ++d)
      for (int64_t q = 0; q < inner; ++q) {
        int64_t v = int64_t(ind.at(p * inner + q));
        if (v < 0) v += depth;
        copyElem(o, (p * depth + d) * inner + q, vals, v == d ? 1 : 0);
      }
  return std::vector{std::move(o)};
}

// ---- Cast / CastLike ----

Expected<DType> castTarget(const Node& n) {
  int64_t to = n.attrs.getInt("to", -1);
  auto dt = dtypeOfOnnxEnum(to);
  // Strings (8) would need a string tensor type throughout the IR, not just in Cast.
  if (to == 8)
    return nodeError(n, "cast to string is not supported: FuseLens tensors hold numbers and bools "
                        "only");
  if (!dt) return nodeError(n, "cast to ONNX type " + std::to_string(to) + " is not supported");
  return *dt;
}

Types inferCast(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  auto to = castTarget(c.node);
  if (!to) return to.status();
  TensorType o = c.inputTypes[0];
  o.dtype = *to;
  return std::vector{o};
}

Outputs castKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  auto to = castTarget(n);
  if (!to) return to.status();
  return std::vector{castTensor(*in[0], *to)};
}

Types inferCastLike(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 2));
  TensorType o = c.inputTypes[0];
  o.dtype = c.inputTypes[1].dtype;
  return std::vector{o};
}

Outputs castLikeKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 2));
  return std::vector{castTensor(*in[0], in[1]->dtype)};
}

}  // namespace

void registerDataOps(OpRegistry& r) {
  const auto I = PatternKind::Injective;
  const auto O = PatternKind::Opaque;
  auto add = [&](const char* name, PatternKind k, InferFn f, EagerFn e) {
    r.add(OpInfo{name, "", k, std::move(f), std::move(e)});
  };
  add("Flatten", I, inferFlatten, flattenKernel);
  add("Squeeze", I, inferSqueeze, squeezeKernel);
  add("Unsqueeze", I, inferUnsqueeze, unsqueezeKernel);
  add("Concat", I, inferConcat, concatKernel);
  add("Split", I, inferSplit, splitKernel);
  add("Slice", I, inferSlice, sliceKernel);
  add("Gather", I, inferGather, gatherKernel);
  add("GatherElements", I, [](const InferContext& c) { return inferLikeInput(c, 1); },
      gatherElementsKernel);
  add("GatherND", I, inferGatherND, gatherNDKernel);
  // Scatters write where their indices say: nothing can fuse across them.
  add("ScatterND", O, inferFirst, scatterNDKernel);
  add("ScatterElements", O, inferFirst, scatterElementsKernel);
  add("Expand", PatternKind::Broadcast, inferExpand, expandKernel);
  add("Tile", I, inferTile, tileKernel);
  add("Pad", I, inferPad, padKernel);
  add("DepthToSpace", I, [](const InferContext& c) { return inferDepthSpace(c, true); },
      [](const Node& n, const Inputs& in) { return depthSpaceKernel(n, in, true); });
  add("SpaceToDepth", I, [](const InferContext& c) { return inferDepthSpace(c, false); },
      [](const Node& n, const Inputs& in) { return depthSpaceKernel(n, in, false); });
  // Shape computations and data-dependent sizes: Opaque, normally const-folded.
  add("Shape", O, inferShape, shapeKernel);
  add("Size", O, inferSize, sizeKernel);
  add("ConstantOfShape", O, inferConstantOfShape, constantOfShapeKernel);
  add("Range", O, inferRange, rangeKernel);
  add("NonZero", O, inferNonZero, nonZeroKernel);
  add("OneHot", I, inferOneHot, oneHotKernel);
  add("Cast", PatternKind::ElemWise, inferCast, castKernel);
  add("CastLike", PatternKind::ElemWise, inferCastLike, castLikeKernel);
}

}  // namespace fuselens::ops
