// Ops that cut, grow or rearrange a tensor by index arithmetic: Slice,
// Expand, Tile, Pad, DepthToSpace and SpaceToDepth (starts/ends, pads and
// repeats as inputs, the latest-opset forms). Where an output shape depends on
// input values, inference reads constant inputs and otherwise leaves the dim
// unknown; the kernel resolves it at run time. Kernels move whole elements as
// bytes, so they work for every dtype.
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

#include "core/ir/dim_expr.h"
#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

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
    // A step longer than the axis takes at most one element either way; clamped,
    // no arithmetic on it can overflow (INT64_MIN came from a fuzzed model).
    const int64_t reach = std::max<int64_t>(dim, 1);
    step = std::clamp(step, -reach, reach);
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

// The extent a constant slice leaves of a symbolic axis, when it is one
// expression for every length at least as long as the constant bounds: starts
// count from 0 or (negative) from the end, the end is the axis' end or counts
// back from it. [1:] of seq is seq-1, [::2] is ceil(seq/2); [0:4] is min(seq,4),
// which the algebra does not say, so unknown.
Dim symbolicSliceDim(const Dim& d, int64_t start, int64_t end, int64_t step) {
  const int64_t toEnd = std::numeric_limits<int32_t>::max();  // exporters write INT_MAX or more
  if (step <= 0 || start >= toEnd || (end >= 0 && end < toEnd)) return Dim::unknown();
  auto at = [&](int64_t v) { return v >= toEnd ? d : v < 0 ? dimAdd(d, v) : Dim::fixed(v); };
  return dimCeilDiv(dimSub(at(end), at(start)), step);
}

// Per sliced axis of a rank-`rank` input, its symbolic extent (see above).
std::map<size_t, Dim> symbolicSlice(const InferContext& c, const std::vector<Dim>& shape) {
  auto starts = constInts(c, 1), ends = constInts(c, 2);
  auto axes = typeAt(c, 3) ? constInts(c, 3) : std::nullopt;
  auto steps = typeAt(c, 4) ? constInts(c, 4) : std::nullopt;
  std::map<size_t, Dim> out;
  if (!starts || !ends || ends->size() != starts->size() || (typeAt(c, 3) && !axes) ||
      (typeAt(c, 4) && !steps))
    return out;
  for (size_t i = 0; i < starts->size(); ++i) {
    int64_t a = axes && i < axes->size() ? (*axes)[i] : int64_t(i);
    auto ax = normalizeAxis(a, int64_t(shape.size()));
    if (!ax || shape[*ax].isStatic()) continue;
    int64_t step = steps && i < steps->size() ? (*steps)[i] : 1;
    out[size_t(*ax)] = symbolicSliceDim(shape[*ax], (*starts)[i], (*ends)[i], step);
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
                     ? size_t(st->shape[0].value)
                     : x.rank();
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
  std::map<size_t, Dim> symbolic = symbolicSlice(c, x.shape);
  for (size_t i = 0; i < x.rank(); ++i) {
    const SliceAxis& s = (*axes)[i];
    bool untouched = s.start == 0 && s.step == 1 && s.count == probe[i];
    if (untouched) continue;
    auto sym = symbolic.find(i);
    o.shape[i] = x.shape[i].isStatic()   ? Dim::fixed(s.count)
                 : sym != symbolic.end() ? sym->second
                                         : Dim::unknown();
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
      o.shape.assign(size_t(std::max<int64_t>(st.shape[0].value, int64_t(x.rank()))),
                     Dim::unknown());
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
  forEachBroadcast({&x}, *shape,
                   [&](int64_t i, const std::vector<int64_t>& off) { copyElem(o, i, x, off[0]); });
  return std::vector{std::move(o)};
}

Types inferTile(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 2));
  TensorType o = c.inputTypes[0];
  if (!o.rankKnown) return std::vector{o};
  auto reps = constInts(c, 1);
  for (size_t i = 0; i < o.rank(); ++i) {
    if (!reps || reps->size() != o.rank())
      o.shape[i] = Dim::unknown();
    else if (o.shape[i].isStatic()) {
      // Repeats come from the model file: a negative or overflowing extent is
      // a bad model, not a shape.
      int64_t extent = 0;
      if ((*reps)[i] < 0 || __builtin_mul_overflow(o.shape[i].value, (*reps)[i], &extent))
        return nodeError(
            c.node, "repeats[" + std::to_string(i) + "] = " + std::to_string((*reps)[i]) +
                        " gives no valid extent for a dim of " + std::to_string(o.shape[i].value));
      o.shape[i] = Dim::fixed(extent);
    } else if ((*reps)[i] != 1)
      o.shape[i] = (*reps)[i] >= 0 ? dimMul(o.shape[i], Dim::fixed((*reps)[i])) : Dim::unknown();
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
  for (size_t i = 1; i < c.inputTypes.size(); ++i)
    ins.push_back(typeAt(c, i) ? constAt(c, i) : nullptr);
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
    if (o.shape[i].isStatic())
      o.shape[i] = Dim::fixed(size);
    else if (add != 0)
      o.shape[i] = dimAdd(o.shape[i], add);  // seq padded by 1+2 is seq+3; negative pads too
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
        if (mode == "constant")
          outside = true;
        else if (mode == "edge")
          v = std::clamp<int64_t>(v, 0, len - 1);
        else if (mode == "wrap")
          v = ((v % len) + len) % len;
        else {  // reflect without repeating the edge
          int64_t period = 2 * (len - 1);
          v = ((v % period) + period) % period;
          if (v >= len) v = period - v;
        }
      }
      src += v * st[d];
    }
    if (outside)
      copyElem(o, i, fill, 0);
    else
      copyElem(o, i, x, src);
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
  // A symbolic extent the kernel requires to divide exactly: floor is exact there.
  auto scale = [](Dim d, int64_t num, int64_t den) {
    return d.isStatic() ? Dim::fixed(d.value * num / den)
                        : dimFloorDiv(dimMul(d, Dim::fixed(num)), den);
  };
  o.shape[1] = toSpace ? scale(o.shape[1], 1, b * b) : scale(o.shape[1], b * b, 1);
  for (int i = 2; i < 4; ++i)
    o.shape[i] = toSpace ? scale(o.shape[i], b, 1) : scale(o.shape[i], 1, b);
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
    return nodeError(
        n, "shape " + shapeStr(x.shape) + " does not divide by blocksize " + std::to_string(b));
  // Always described from the space side: out[n, c, h*b+i, w*b+j] <-> depth channel.
  int64_t Cs = toSpace ? C / (b * b) : C, Hs = toSpace ? H * b : H, Ws = toSpace ? W * b : W;
  int64_t Cd = Cs * b * b;
  std::vector<int64_t> shape =
      toSpace ? std::vector<int64_t>{N, Cs, Hs, Ws} : std::vector<int64_t>{N, Cd, H / b, W / b};
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
          if (toSpace)
            copyElem(o, space, x, depth);
          else
            copyElem(o, depth, x, space);
        }
  return std::vector{std::move(o)};
}

}  // namespace

void registerSlicePadOps(OpRegistry& r) {
  const auto I = PatternKind::Injective;
  r.add(OpInfo{"Slice", "", I, inferSlice, sliceKernel});
  r.add(OpInfo{"Expand", "", PatternKind::Broadcast, inferExpand, expandKernel});
  r.add(OpInfo{"Tile", "", I, inferTile, tileKernel});
  r.add(OpInfo{"Pad", "", I, inferPad, padKernel});
  r.add(OpInfo{"DepthToSpace", "", I,
               [](const InferContext& c) { return inferDepthSpace(c, true); },
               [](const Node& n, const Inputs& in) { return depthSpaceKernel(n, in, true); }});
  r.add(OpInfo{"SpaceToDepth", "", I,
               [](const InferContext& c) { return inferDepthSpace(c, false); },
               [](const Node& n, const Inputs& in) { return depthSpaceKernel(n, in, false); }});
}

}  // namespace fuselens::ops
