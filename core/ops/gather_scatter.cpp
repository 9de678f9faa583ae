// Indexed reads and writes: Gather, GatherElements, GatherND, ScatterND and
// ScatterElements. Indices may be negative (counted from the end) and are
// checked against the data's dims; an index out of range is a sentence naming
// the node. Gathers are Injective; scatters write where their indices say, so
// nothing fuses across them (Opaque).
#include <algorithm>
#include <cstring>

#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

// ---- Gather family ----

Expected<int64_t> wrapIndex(const Node& n, int64_t v, int64_t dim) {
  if (v < -dim || v >= dim)
    return nodeError(
        n, "index " + std::to_string(v) + " is out of range for a dim of " + std::to_string(dim));
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
Expected<int64_t> elementsOffset(const Node& n, const TensorData& x, const TensorData& ind,
                                 int64_t axis, const std::vector<int64_t>& idx,
                                 const std::vector<int64_t>& st, int64_t i) {
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
  if (b + v.last > int64_t(x.rank()))
    return nodeError(n, "indices reach past the rank of the data");
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
  if (red == "add")
    a += b;
  else if (red == "mul")
    a *= b;
  else if (red == "max")
    a = std::max(a, b);
  else if (red == "min")
    a = std::min(a, b);
  else
    return nodeError(n, "reduction '" + red + "' is not one of none, add, mul, max, min");
  if (isFloat(o.dtype))
    storeF(o, at, a);
  else
    storeI(o, at, int64_t(a));
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

}  // namespace

void registerGatherScatterOps(OpRegistry& r) {
  const auto I = PatternKind::Injective;
  r.add(OpInfo{"Gather", "", I, inferGather, gatherKernel});
  r.add(OpInfo{"GatherElements", "", I, [](const InferContext& c) { return inferLikeInput(c, 1); },
               gatherElementsKernel});
  r.add(OpInfo{"GatherND", "", I, inferGatherND, gatherNDKernel});
  // Scatters write where their indices say: nothing can fuse across them.
  r.add(OpInfo{"ScatterND", "", PatternKind::Opaque, inferFirst, scatterNDKernel});
  r.add(OpInfo{"ScatterElements", "", PatternKind::Opaque, inferFirst, scatterElementsKernel});
}

}  // namespace fuselens::ops
