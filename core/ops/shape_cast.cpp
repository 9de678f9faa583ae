// Ops that compute shapes and generate or convert data: Shape, Size,
// ConstantOfShape, Range, NonZero, OneHot, Cast and CastLike. The shape
// computations and data-dependent sizes are Opaque (they are normally
// const-folded); OneHot is Injective and the casts ElemWise.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

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
  if (!x.rankKnown)
    o.shape = {Dim::unknown()};
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
    o.shape[0] =
        Dim::fixed(std::max<int64_t>(0, int64_t(std::ceil((l->at(0) - s->at(0)) / d->at(0)))));
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
  if (const TensorData* d = constAt(c, 1); d && d->numel() == 1)
    depth = Dim::fixed(int64_t(d->at(0)));
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
    return nodeError(n,
                     "cast to string is not supported: FuseLens tensors hold numbers and bools "
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

void registerShapeCastOps(OpRegistry& r) {
  const auto O = PatternKind::Opaque;
  // Shape computations and data-dependent sizes: Opaque, normally const-folded.
  r.add(OpInfo{"Shape", "", O, inferShape, shapeKernel});
  r.add(OpInfo{"Size", "", O, inferSize, sizeKernel});
  r.add(OpInfo{"ConstantOfShape", "", O, inferConstantOfShape, constantOfShapeKernel});
  r.add(OpInfo{"Range", "", O, inferRange, rangeKernel});
  r.add(OpInfo{"NonZero", "", O, inferNonZero, nonZeroKernel});
  r.add(OpInfo{"OneHot", "", PatternKind::Injective, inferOneHot, oneHotKernel});
  r.add(OpInfo{"Cast", "", PatternKind::ElemWise, inferCast, castKernel});
  r.add(OpInfo{"CastLike", "", PatternKind::ElemWise, inferCastLike, castLikeKernel});
}

}  // namespace fuselens::ops
