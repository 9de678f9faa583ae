// Convolution and pooling over 1 to 3 spatial dims: Conv, ConvTranspose
// (groups, dilations, strides, pads, auto_pad, output_padding/output_shape),
// MaxPool (with Indices), AveragePool (count_include_pad, ceil_mode),
// GlobalAveragePool, GlobalMaxPool. Spatial dims are padded to three (D, H, W)
// so one plain loop nest serves every rank. Sums are kept in double per output
// plane (in f32 under Accumulation::Storage, accumulation.h); f16/bf16 run in f32
// as ONNX Runtime's CPU kernels do.
#include <algorithm>
#include <cmath>
#include <functional>

#include "core/ir/dim_expr.h"
#include "core/ops/accumulation.h"
#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

// Per spatial axis: input size, kernel, stride, dilation, pads and output size.
struct Axis {
  int64_t in = 1, k = 1, s = 1, d = 1, pb = 0, pe = 0, out = 1;
};

std::vector<int64_t> intsOr(const Node& n, const char* name, size_t count, int64_t fill) {
  auto v = n.attrs.getInts(name);
  return v ? *v : std::vector<int64_t>(count, fill);
}

// Output sizes for Conv and pools (ceil_mode for pools), auto_pad resolved.
// Pools size SAME padding with the undilated kernel, as ONNX Runtime's
// pool_attributes.h does (a dilated SAME pool is one element shorter there).
Expected<std::vector<Axis>> geometry(const Node& n, const std::vector<int64_t>& in,
                                     const std::vector<int64_t>& kernel, bool ceilMode,
                                     bool pool = false) {
  size_t r = in.size();
  auto s = intsOr(n, "strides", r, 1), d = intsOr(n, "dilations", r, 1),
       p = intsOr(n, "pads", 2 * r, 0);
  if (s.size() != r || d.size() != r || p.size() != 2 * r || kernel.size() != r)
    return nodeError(n, "strides, dilations, pads or kernel_shape do not match " +
                            std::to_string(r) + " spatial dims");
  std::string autoPad = n.attrs.getString("auto_pad", "NOTSET");
  std::vector<Axis> axes(r);
  for (size_t i = 0; i < r; ++i) {
    Axis& a = axes[i];
    a.in = in[i], a.k = kernel[i], a.s = s[i], a.d = d[i], a.pb = p[i], a.pe = p[i + r];
    if (a.s <= 0 || a.d <= 0 || a.k <= 0 || a.pb < 0 || a.pe < 0)
      return nodeError(n, "strides, dilations and kernel must be positive and pads non-negative");
    int64_t dk = (a.k - 1) * a.d + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      a.out = (a.in + a.s - 1) / a.s;
      int64_t total = std::max<int64_t>(0, (a.out - 1) * a.s + (pool ? a.k : dk) - a.in);
      if (pool) a.out = (a.in + total - dk) / a.s + 1;
      a.pb = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      a.pe = total - a.pb;
      continue;
    }
    if (autoPad == "VALID")
      a.pb = a.pe = 0;
    else if (autoPad != "NOTSET")
      return nodeError(
          n, "auto_pad '" + autoPad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
    int64_t span = a.in + a.pb + a.pe - dk;
    if (span < 0) return nodeError(n, "the kernel is larger than the padded input");
    a.out = (ceilMode ? (span + a.s - 1) / a.s : span / a.s) + 1;
    // A ceil-mode window must start inside the input or its leading pad.
    if (ceilMode && (a.out - 1) * a.s >= a.in + a.pb) --a.out;
  }
  return axes;
}

// Pads the spatial axes to three: [D, H, W] with size-1 axes in front.
std::vector<Axis> to3(std::vector<Axis> a) {
  while (a.size() < 3) a.insert(a.begin(), Axis{});
  return a;
}

Status checkNCHW(const Node& n, const TensorData& x) {
  if (x.rank() < 3 || x.rank() > 5)
    return nodeError(
        n, "expects an input of rank 3 to 5 ([N,C,spatial...]), got " + shapeStr(x.shape));
  return Status::ok();
}

std::vector<int64_t> spatialOf(const std::vector<int64_t>& s) { return {s.begin() + 2, s.end()}; }

// ---- Conv ----

template <class T, class Acc>
TensorData convLoop(const TensorData& x, const TensorData& w, const TensorData* b,
                    const std::vector<Axis>& ax3, int64_t group, std::vector<int64_t> outShape) {
  int64_t N = x.shape[0], C = x.shape[1], M = w.shape[0], Cg = C / group, Mg = M / group;
  const Axis &D = ax3[0], &H = ax3[1], &W = ax3[2];
  TensorData o(x.dtype, outShape);
  const T* px = x.data<T>();
  const T* pw = w.data<T>();
  T* po = o.data<T>();
  int64_t inPlane = D.in * H.in * W.in, outPlane = D.out * H.out * W.out, kVol = D.k * H.k * W.k;
  std::vector<Acc> acc(static_cast<size_t>(outPlane), Acc(0));
  for (int64_t nn = 0; nn < N; ++nn)
    for (int64_t m = 0; m < M; ++m) {
      std::fill(acc.begin(), acc.end(), b ? Acc(b->data<T>()[m]) : Acc(0));
      int64_t g = m / Mg;
      for (int64_t c = 0; c < Cg; ++c) {
        const T* xin = px + (nn * C + g * Cg + c) * inPlane;
        const T* wk = pw + (m * Cg + c) * kVol;
        for (int64_t kd = 0; kd < D.k; ++kd)
          for (int64_t kh = 0; kh < H.k; ++kh)
            for (int64_t kw = 0; kw < W.k; ++kw) {
              Acc wv = Acc(wk[(kd * H.k + kh) * W.k + kw]);
              for (int64_t od = 0; od < D.out; ++od) {
                int64_t id = od * D.s - D.pb + kd * D.d;
                if (id < 0 || id >= D.in) continue;
                for (int64_t oh = 0; oh < H.out; ++oh) {
                  int64_t ih = oh * H.s - H.pb + kh * H.d;
                  if (ih < 0 || ih >= H.in) continue;
                  const T* row = xin + (id * H.in + ih) * W.in;
                  Acc* arow = acc.data() + (od * H.out + oh) * W.out;
                  for (int64_t ow = 0; ow < W.out; ++ow) {
                    int64_t iw = ow * W.s - W.pb + kw * W.d;
                    if (iw >= 0 && iw < W.in) arow[ow] += wv * Acc(row[iw]);
                  }
                }
              }
            }
      }
      T* dst = po + (nn * M + m) * outPlane;
      for (int64_t i = 0; i < outPlane; ++i) dst[i] = T(acc[i]);
    }
  return o;
}

Expected<std::vector<int64_t>> kernelShape(const Node& n, const std::vector<int64_t>& wShape) {
  std::vector<int64_t> k(wShape.begin() + 2, wShape.end());
  if (auto ks = n.attrs.getInts("kernel_shape"); ks && *ks != k)
    return nodeError(
        n, "kernel_shape " + shapeStr(*ks) + " does not match the weights " + shapeStr(wShape));
  return k;
}

Outputs convKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 3));
  const TensorData &x = *in[0], &w = *in[1];
  const TensorData* b = inputAt(in, 2);
  FL_RETURN_IF_ERROR(checkNCHW(n, x));
  int64_t group = n.attrs.getInt("group", 1);
  if (w.rank() != x.rank() || group <= 0 || x.shape[1] % group != 0 || w.shape[0] % group != 0 ||
      w.shape[1] * group != x.shape[1] || (b && (b->rank() != 1 || b->shape[0] != w.shape[0])))
    return nodeError(n, "weights " + shapeStr(w.shape) + " (group " + std::to_string(group) +
                            ") do not fit input " + shapeStr(x.shape));
  if (w.dtype != x.dtype || (b && b->dtype != x.dtype))
    return nodeError(n, "inputs have different element types");
  auto k = kernelShape(n, w.shape);
  if (!k) return k.status();
  auto geo = geometry(n, spatialOf(x.shape), *k, false);
  if (!geo) return geo.status();
  std::vector<int64_t> shape{x.shape[0], w.shape[0]};
  for (const Axis& a : *geo) shape.push_back(a.out);
  switch (x.dtype) {
    case DType::F32:
      if (eagerAccumulation() == Accumulation::Storage)
        return std::vector{convLoop<float, float>(x, w, b, to3(*geo), group, shape)};
      return std::vector{convLoop<float, double>(x, w, b, to3(*geo), group, shape)};
    case DType::F64:
      return std::vector{convLoop<double, double>(x, w, b, to3(*geo), group, shape)};
    default:
      return nodeError(n, "no eager kernel for element type " + dtypeStr(x.dtype));
  }
}

using Geometry = std::function<Expected<std::vector<Axis>>(const std::vector<int64_t>&)>;
// One spatial axis' output extent as an expression of its input extent, from
// the axis as the geometry resolved it at a large length.
using Extent = std::function<Dim(const Dim& in, const Axis& at)>;

// The symbolic output extent of spatial axis `i`, trusted only where the
// formula agrees with the geometry over a run of large lengths: a ceil-mode
// window dropped at some lengths or a dilated SAME pool falls back to unknown.
Dim symbolicExtent(const Dim& in, size_t i, std::vector<int64_t> probe, const Geometry& geo,
                   const Extent& extent) {
  auto at = geo(probe);
  if (!at) return Dim::unknown();
  const Axis a = (*at)[i];
  auto formula = DimExpr::of(extent(Dim::named("n"), a));
  if (!formula) return Dim::unknown();
  const int64_t base = probe[i], tries = std::min<int64_t>(2 * a.s + 2, 130);
  for (int64_t j = 0; j < tries; ++j) {
    probe[i] = base + j;
    auto g = geo(probe);
    if (!g || formula->evaluate({{"n", base + j}}) != (*g)[i].out) return Dim::unknown();
  }
  return extent(in, a);
}

// Output dims: computed where input dims are static, an expression of a
// symbolic input dim where the op has one (see symbolicExtent).
Types spatialInfer(const InferContext& c, Dim channels, const std::vector<int64_t>& kernel,
                   const Geometry& geo, const Extent& extent) {
  const TensorType& x = c.inputTypes[0];
  TensorType o;
  o.dtype = x.dtype;
  if (!x.rankKnown) return std::vector{unknownRank(x.dtype)};
  if (x.rank() < 3 || x.rank() > 5)
    return nodeError(c.node, "expects an input of rank 3 to 5 ([N,C,spatial...]), got " + x.str());
  if (kernel.size() != x.rank() - 2)
    return nodeError(c.node, "the kernel has " + std::to_string(kernel.size()) +
                                 " spatial dims, the input " + x.str());
  o.shape = {x.shape[0], channels};
  std::vector<int64_t> probe;
  for (size_t i = 2; i < x.rank(); ++i)
    probe.push_back(x.shape[i].isStatic() ? x.shape[i].value : 1 << 20);
  auto g = geo(probe);
  if (!g) return g.status();
  for (size_t i = 2; i < x.rank(); ++i) {
    const Dim& d = x.shape[i];
    o.shape.push_back(d.isStatic()       ? Dim::fixed((*g)[i - 2].out)
                      : d.symbol.empty() ? Dim::unknown()
                                         : symbolicExtent(d, i - 2, probe, geo, extent));
  }
  return std::vector{o};
}

// Conv and pools: floor((n + pads - dilated kernel)/stride) + 1, ceil in
// ceil_mode; SAME keeps ceil(n/stride).
Extent windowExtent(const Node& n, bool ceilMode) {
  std::string autoPad = n.attrs.getString("auto_pad", "NOTSET");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  return [same, ceilMode](const Dim& in, const Axis& a) {
    if (same) return dimCeilDiv(in, a.s);
    Dim span = dimAdd(in, a.pb + a.pe - ((a.k - 1) * a.d + 1));
    return dimAdd(ceilMode ? dimCeilDiv(span, a.s) : dimFloorDiv(span, a.s), 1);
  };
}

Types inferConv(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 3));
  const TensorType& w = c.inputTypes[1];
  auto ks = c.node.attrs.getInts("kernel_shape");
  std::vector<int64_t> k;
  auto ws = w.rankKnown ? w.staticShape() : std::nullopt;
  if (ws && ws->size() >= 3)
    k.assign(ws->begin() + 2, ws->end());
  else if (ks)
    k = *ks;
  else
    return std::vector{unknownRank(c.inputTypes[0].dtype)};
  Dim m = w.rankKnown && !w.shape.empty() ? w.shape[0] : Dim::unknown();
  return spatialInfer(
      c, m, k, [&](const std::vector<int64_t>& in) { return geometry(c.node, in, k, false); },
      windowExtent(c.node, false));
}

// ---- ConvTranspose ----

Expected<std::vector<Axis>> transposeGeometry(const Node& n, const std::vector<int64_t>& in,
                                              const std::vector<int64_t>& kernel) {
  size_t r = in.size();
  auto s = intsOr(n, "strides", r, 1), d = intsOr(n, "dilations", r, 1),
       p = intsOr(n, "pads", 2 * r, 0);
  auto op = intsOr(n, "output_padding", r, 0);
  auto outShape = n.attrs.getInts("output_shape");
  std::string autoPad = n.attrs.getString("auto_pad", "NOTSET");
  if (s.size() != r || d.size() != r || p.size() != 2 * r || op.size() != r || kernel.size() != r ||
      (outShape && outShape->size() != r && outShape->size() != r + 2))
    return nodeError(n, "strides, dilations, pads, output_padding or output_shape do not match " +
                            std::to_string(r) + " spatial dims");
  std::vector<Axis> axes(r);
  for (size_t i = 0; i < r; ++i) {
    Axis& a = axes[i];
    a.in = in[i], a.k = kernel[i], a.s = s[i], a.d = d[i], a.pb = p[i], a.pe = p[i + r];
    if (a.s <= 0 || a.d <= 0 || a.k <= 0)
      return nodeError(n, "strides, dilations and kernel must be positive");
    int64_t full = a.s * (a.in - 1) + op[i] + (a.k - 1) * a.d + 1;
    if (outShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t want = outShape ? (*outShape)[outShape->size() - r + i] : a.in * a.s;
      int64_t total = full - want;
      // ONNX Runtime's split of the total padding (conv_transpose_attributes.h).
      if (autoPad == "SAME_UPPER")
        a.pb = total / 2, a.pe = total - total / 2;
      else
        a.pb = total - total / 2, a.pe = total / 2;
      a.out = want;
    } else {
      a.out = full - a.pb - a.pe;
    }
    if (a.out < 0) return nodeError(n, "the output would have a negative size");
  }
  return axes;
}

template <class T, class Acc>
TensorData convTransposeLoop(const TensorData& x, const TensorData& w, const TensorData* b,
                             const std::vector<Axis>& ax3, int64_t group,
                             std::vector<int64_t> outShape) {
  int64_t N = x.shape[0], C = x.shape[1], Cg = C / group, Mg = w.shape[1], M = Mg * group;
  const Axis &D = ax3[0], &H = ax3[1], &W = ax3[2];
  TensorData o(x.dtype, outShape);
  int64_t inPlane = D.in * H.in * W.in, outPlane = D.out * H.out * W.out, kVol = D.k * H.k * W.k;
  std::vector<Acc> acc(static_cast<size_t>(outPlane), Acc(0));
  for (int64_t nn = 0; nn < N; ++nn)
    for (int64_t m = 0; m < M; ++m) {
      std::fill(acc.begin(), acc.end(), b ? Acc(b->data<T>()[m]) : Acc(0));
      int64_t g = m / Mg, mg = m % Mg;
      for (int64_t c = 0; c < Cg; ++c) {
        const T* xin = x.data<T>() + (nn * C + g * Cg + c) * inPlane;
        const T* wk = w.data<T>() + ((g * Cg + c) * Mg + mg) * kVol;
        for (int64_t id = 0; id < D.in; ++id)
          for (int64_t ih = 0; ih < H.in; ++ih)
            for (int64_t iw = 0; iw < W.in; ++iw) {
              Acc xv = Acc(xin[(id * H.in + ih) * W.in + iw]);
              for (int64_t kd = 0; kd < D.k; ++kd) {
                int64_t od = id * D.s - D.pb + kd * D.d;
                if (od < 0 || od >= D.out) continue;
                for (int64_t kh = 0; kh < H.k; ++kh) {
                  int64_t oh = ih * H.s - H.pb + kh * H.d;
                  if (oh < 0 || oh >= H.out) continue;
                  for (int64_t kw = 0; kw < W.k; ++kw) {
                    int64_t ow = iw * W.s - W.pb + kw * W.d;
                    if (ow < 0 || ow >= W.out) continue;
                    acc[(od * H.out + oh) * W.out + ow] += xv * Acc(wk[(kd * H.k + kh) * W.k + kw]);
                  }
                }
              }
            }
      }
      T* dst = o.data<T>() + (nn * M + m) * outPlane;
      for (int64_t i = 0; i < outPlane; ++i) dst[i] = T(acc[i]);
    }
  return o;
}

Outputs convTransposeKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 3));
  const TensorData &x = *in[0], &w = *in[1];
  const TensorData* b = inputAt(in, 2);
  FL_RETURN_IF_ERROR(checkNCHW(n, x));
  int64_t group = n.attrs.getInt("group", 1);
  if (w.rank() != x.rank() || group <= 0 || x.shape[1] % group != 0 || w.shape[0] != x.shape[1] ||
      (b && (b->rank() != 1 || b->shape[0] != w.shape[1] * group)))
    return nodeError(n, "weights " + shapeStr(w.shape) + " (group " + std::to_string(group) +
                            ") do not fit input " + shapeStr(x.shape));
  if (w.dtype != x.dtype || (b && b->dtype != x.dtype))
    return nodeError(n, "inputs have different element types");
  auto k = kernelShape(n, w.shape);
  if (!k) return k.status();
  auto geo = transposeGeometry(n, spatialOf(x.shape), *k);
  if (!geo) return geo.status();
  std::vector<int64_t> shape{x.shape[0], w.shape[1] * group};
  for (const Axis& a : *geo) shape.push_back(a.out);
  FL_RETURN_IF_ERROR(checkAllocatable(n, shape, x.dtype));
  switch (x.dtype) {
    case DType::F32:
      if (eagerAccumulation() == Accumulation::Storage)
        return std::vector{convTransposeLoop<float, float>(x, w, b, to3(*geo), group, shape)};
      return std::vector{convTransposeLoop<float, double>(x, w, b, to3(*geo), group, shape)};
    case DType::F64:
      return std::vector{convTransposeLoop<double, double>(x, w, b, to3(*geo), group, shape)};
    default:
      return nodeError(n, "no eager kernel for element type " + dtypeStr(x.dtype));
  }
}

Types inferConvTranspose(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 3));
  const TensorType& w = c.inputTypes[1];
  if (!w.rankKnown || !w.isStatic()) return std::vector{unknownRank(c.inputTypes[0].dtype)};
  auto ws = *w.staticShape();
  if (ws.size() < 3) return nodeError(c.node, "weights must have rank 3 to 5, got " + w.str());
  std::vector<int64_t> k(ws.begin() + 2, ws.end());
  Dim m = Dim::fixed(ws[1] * c.node.attrs.getInt("group", 1));
  // stride*n plus what pads, output_padding and the kernel add (a constant).
  Extent extent = [fixed = c.node.attrs.getInts("output_shape").has_value()](const Dim& in,
                                                                             const Axis& a) {
    return fixed ? Dim::fixed(a.out) : dimAdd(dimMul(in, Dim::fixed(a.s)), a.out - a.s * a.in);
  };
  return spatialInfer(
      c, m, k, [&](const std::vector<int64_t>& in) { return transposeGeometry(c.node, in, k); },
      extent);
}

// ---- pools ----

Expected<std::vector<int64_t>> poolKernelShape(const Node& n, size_t r) {
  auto k = n.attrs.getInts("kernel_shape");
  if (!k || k->size() != r)
    return nodeError(n, "kernel_shape must name " + std::to_string(r) + " spatial sizes");
  return *k;
}

template <bool isMax>
Outputs poolKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  const TensorData& x = *in[0];
  FL_RETURN_IF_ERROR(checkNCHW(n, x));
  FL_RETURN_IF_ERROR(needFloat(n, x.dtype));
  auto k = poolKernelShape(n, x.rank() - 2);
  if (!k) return k.status();
  auto geo = geometry(n, spatialOf(x.shape), *k, n.attrs.getInt("ceil_mode", 0) != 0, true);
  if (!geo) return geo.status();
  std::vector<int64_t> shape{x.shape[0], x.shape[1]};
  for (const Axis& a : *geo) shape.push_back(a.out);
  TensorData o(x.dtype, shape), idx(DType::I64, shape);
  auto ax = to3(*geo);
  const Axis &D = ax[0], &H = ax[1], &W = ax[2];
  bool includePad = n.attrs.getInt("count_include_pad", 0) != 0;
  bool columnMajor = n.attrs.getInt("storage_order", 0) != 0;
  int64_t inPlane = D.in * H.in * W.in, outPlane = D.out * H.out * W.out;
  // Window positions of one axis: start/end of the padded window, clamped to the input.
  auto window = [](const Axis& a, int64_t o, int64_t& lo, int64_t& hi, int64_t& padded) {
    int64_t start = o * a.s - a.pb, end = std::min(start + (a.k - 1) * a.d + 1, a.in + a.pe);
    padded = (end - start + a.d - 1) / a.d;
    lo = start, hi = std::min(end, a.in);
  };
  for (int64_t plane = 0; plane < x.shape[0] * x.shape[1]; ++plane)
    for (int64_t od = 0; od < D.out; ++od)
      for (int64_t oh = 0; oh < H.out; ++oh)
        for (int64_t ow = 0; ow < W.out; ++ow) {
          int64_t d0, d1, h0, h1, w0, w1, pd, ph, pw;
          window(D, od, d0, d1, pd);
          window(H, oh, h0, h1, ph);
          window(W, ow, w0, w1, pw);
          double acc = isMax ? -INFINITY : 0.0;
          int64_t count = 0, best = -1, bestColumn = 0;
          const bool narrow = sumsInF32(x.dtype);
          for (int64_t id = d0; id < d1; id += D.d)
            for (int64_t ih = h0; ih < h1; ih += H.d)
              for (int64_t iw = w0; iw < w1; iw += W.d) {
                if (id < 0 || ih < 0 || iw < 0) continue;
                int64_t at = (id * H.in + ih) * W.in + iw;
                double v = x.at(plane * inPlane + at);
                if (isMax) {
                  if (v > acc || best < 0)
                    acc = v, best = at, bestColumn = id + (ih + iw * H.in) * D.in;
                } else {
                  acc = addTo(acc, v, narrow);
                }
                ++count;
              }
          int64_t outAt = plane * outPlane + (od * H.out + oh) * W.out + ow;
          if (!isMax) acc /= double(includePad ? pd * ph * pw : std::max<int64_t>(count, 1));
          storeF(o, outAt, acc);
          // Indices count over the whole input tensor: planes in order, the spatial
          // offset row-major (storage_order 0) or column-major (1: the first spatial
          // axis varies fastest, as ONNX Runtime numbers them).
          idx.data<int64_t>()[outAt] =
              plane * inPlane + (columnMajor ? bestColumn : std::max<int64_t>(best, 0));
        }
  std::vector<TensorData> outs{std::move(o)};
  if (isMax && n.outputs.size() > 1) outs.push_back(std::move(idx));
  return outs;
}

Types inferPool(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  const TensorType& x = c.inputTypes[0];
  if (!x.rankKnown) return std::vector{unknownRank(x.dtype), unknownRank(DType::I64)};
  if (x.rank() < 3) return nodeError(c.node, "expects an input of rank 3 to 5, got " + x.str());
  auto k = poolKernelShape(c.node, x.rank() - 2);
  if (!k) return k.status();
  bool ceil = c.node.attrs.getInt("ceil_mode", 0) != 0;
  auto t = spatialInfer(
      c, x.shape[1], *k,
      [&](const std::vector<int64_t>& in) { return geometry(c.node, in, *k, ceil, true); },
      windowExtent(c.node, ceil));
  if (!t) return t;
  std::vector<TensorType> outs{(*t)[0]};
  if (c.node.outputs.size() > 1) {
    outs.push_back((*t)[0]);
    outs.back().dtype = DType::I64;
  }
  return outs;
}

template <bool isMax>
Outputs globalPoolKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  const TensorData& x = *in[0];
  if (x.rank() < 2) return nodeError(n, "expects [N,C,spatial...], got " + shapeStr(x.shape));
  FL_RETURN_IF_ERROR(needFloat(n, x.dtype));
  std::vector<int64_t> shape(x.rank(), 1);
  shape[0] = x.shape[0], shape[1] = x.shape[1];
  TensorData o(x.dtype, shape);
  int64_t planes = x.shape[0] * x.shape[1], plane = planes ? x.numel() / planes : 0;
  const bool narrow = sumsInF32(x.dtype);
  for (int64_t p = 0; p < planes; ++p) {
    double acc = isMax ? -INFINITY : 0.0;
    for (int64_t i = 0; i < plane; ++i) {
      double v = x.at(p * plane + i);
      acc = isMax ? std::max(acc, v) : addTo(acc, v, narrow);
    }
    storeF(o, p, isMax ? acc : acc / double(plane));
  }
  return std::vector{std::move(o)};
}

Types inferGlobalPool(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  TensorType o = c.inputTypes[0];
  if (!o.rankKnown) return std::vector{o};
  if (o.rank() < 2) return nodeError(c.node, "expects [N,C,spatial...], got " + o.str());
  for (size_t i = 2; i < o.rank(); ++i) o.shape[i] = Dim::fixed(1);
  return std::vector{o};
}

}  // namespace

void registerConvOps(OpRegistry& r) {
  const auto F = PatternKind::OutEWiseFusable;
  r.add(OpInfo{"Conv", "", F, inferConv, computeHalfInF32(convKernel)});
  r.add(OpInfo{"ConvTranspose", "", F, inferConvTranspose, computeHalfInF32(convTransposeKernel)});
  r.add(OpInfo{"MaxPool", "", F, inferPool, poolKernel<true>});
  r.add(OpInfo{"AveragePool", "", F, inferPool, poolKernel<false>});
  r.add(OpInfo{"GlobalAveragePool", "", PatternKind::CommReduce, inferGlobalPool,
               globalPoolKernel<false>});
  r.add(OpInfo{"GlobalMaxPool", "", PatternKind::CommReduce, inferGlobalPool,
               globalPoolKernel<true>});
}

}  // namespace fuselens::ops
