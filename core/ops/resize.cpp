// Resize (opset-13+ form: X, roi, scales, sizes; the importer rewrites Resize-10
// and Upsample into it) with nearest, linear and cubic modes over any number of
// axes, every coordinate_transformation_mode and nearest_mode; opset 18's
// `axes` (scales/sizes/roi for those axes only), keep_aspect_ratio_policy and
// antialias (a linear or cubic filter widened by 1/scale when downsampling,
// edge taps clamped, as ONNX Runtime does). Interpolation is separable: each
// output element is a sum over per-axis taps and weights.
#include <cmath>

#include "core/ir/dim_expr.h"
#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

struct Params {
  std::vector<int64_t> outShape;
  std::vector<double> scales;  // output / input per axis
  std::vector<double> roi;     // [starts..., ends...] for tf_crop_and_resize
};

// Empty tensors stand for omitted inputs (opset 11 needed a placeholder roi).
const TensorData* present(const Inputs& in, size_t i) {
  const TensorData* t = inputAt(in, i);
  return t && t->numel() > 0 ? t : nullptr;
}

// The axes scales/sizes/roi speak of: the `axes` attribute (opset 18), or all.
Expected<std::vector<int64_t>> resizeAxes(const Node& n, size_t r) {
  auto attr = n.attrs.getInts("axes");
  if (!attr) {
    std::vector<int64_t> all(r);
    for (size_t i = 0; i < r; ++i) all[i] = int64_t(i);
    return all;
  }
  std::vector<int64_t> axes;
  for (int64_t a : *attr) {
    auto na = normalizeAxis(a, int64_t(r));
    if (!na)
      return nodeError(
          n, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(r));
    if (std::find(axes.begin(), axes.end(), *na) != axes.end())
      return nodeError(n, "axis " + std::to_string(a) + " is listed twice in axes");
    axes.push_back(*na);
  }
  return axes;
}

// keep_aspect_ratio_policy not_larger / not_smaller: one scale for every axis
// named (the smallest / largest sizes[i] / input[i]); sizes round to nearest.
Status keepAspectRatio(const Node& n, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& axes, Params& p) {
  std::string policy = n.attrs.getString("keep_aspect_ratio_policy", "stretch");
  if (policy == "stretch") return Status::ok();
  if (policy != "not_larger" && policy != "not_smaller")
    return nodeError(
        n, "keep_aspect_ratio_policy '" + policy + "' is not stretch, not_larger or not_smaller");
  bool smallest = policy == "not_larger";
  float scale = smallest ? INFINITY : 0.0f;
  for (int64_t a : axes) {
    float s = float(p.outShape[a]) / float(shape[a]);
    scale = smallest ? std::min(scale, s) : std::max(scale, s);
  }
  for (int64_t a : axes) {
    p.scales[a] = scale;
    p.outShape[a] = int64_t(std::round(scale * float(shape[a])));
  }
  return Status::ok();
}

Expected<Params> params(const Node& n, const std::vector<int64_t>& shape, const Inputs& in) {
  size_t r = shape.size();
  const TensorData *roi = present(in, 1), *scales = present(in, 2), *sizes = present(in, 3);
  if (!scales == !sizes) return nodeError(n, "needs exactly one of scales and sizes");
  auto axes = resizeAxes(n, r);
  if (!axes) return axes.status();
  const int64_t k = int64_t(axes->size());
  Params p;
  p.outShape = shape;
  p.scales.assign(r, 1.0);
  if (scales) {
    if (scales->numel() != k) return nodeError(n, "scales must hold one value per resized axis");
    for (int64_t i = 0; i < k; ++i) {
      double s = scales->at(i);
      int64_t a = (*axes)[i];
      if (!(s > 0) || s > 1e6) return nodeError(n, "scales must be positive");
      p.scales[a] = s;
      // ORT: output size = floor(input * scale), in float.
      p.outShape[a] = int64_t(std::floor(double(float(shape[a]) * float(s))));
    }
  } else {
    auto v = intsOf(n, *sizes, "sizes");
    if (!v) return v.status();
    if (int64_t(v->size()) != k) return nodeError(n, "sizes must hold one value per resized axis");
    for (int64_t i = 0; i < k; ++i) {
      int64_t a = (*axes)[i];
      if ((*v)[i] < 0 || (*v)[i] > (int64_t(1) << 30))
        return nodeError(n, "sizes are out of range");
      p.outShape[a] = (*v)[i];
      p.scales[a] = shape[a] ? double(float((*v)[i]) / float(shape[a])) : 1.0;
    }
    FL_RETURN_IF_ERROR(keepAspectRatio(n, shape, *axes, p));
  }
  FL_RETURN_IF_ERROR(checkAllocatable(n, p.outShape, DType::F64));
  if (roi) {
    if (roi->numel() != 2 * k) return nodeError(n, "roi must hold 2 values per resized axis");
    p.roi.assign(2 * r, 0.0);
    for (size_t d = 0; d < r; ++d) p.roi[r + d] = 1.0;
    for (int64_t i = 0; i < k; ++i) {
      p.roi[(*axes)[i]] = roi->at(i);
      p.roi[r + (*axes)[i]] = roi->at(k + i);
    }
  }
  return p;
}

// Input coordinate of output coordinate x along one axis.
double original(const std::string& mode, double x, int64_t inLen, int64_t outLen, double scale,
                double roiStart, double roiEnd) {
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return outLen > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners")
    return outLen == 1 ? 0.0 : x * double(inLen - 1) / double(outLen - 1);
  if (mode == "asymmetric") return x / scale;
  if (mode == "tf_crop_and_resize")
    return outLen > 1 ? roiStart * double(inLen - 1) +
                            x * (roiEnd - roiStart) * double(inLen - 1) / double(outLen - 1)
                      : 0.5 * (roiStart + roiEnd) * double(inLen - 1);
  // half_pixel_symmetric
  double adjustment = double(outLen) / (scale * double(inLen));
  double center = double(inLen) / 2;
  return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
}

int64_t nearestIndex(const std::string& mode, double x, double scale) {
  // "simple": Resize-10's nearest (set by the importer), as ONNX Runtime reads it.
  if (mode == "simple") return scale < 1 ? int64_t(std::ceil(x)) : int64_t(x);
  if (mode == "floor") return int64_t(std::floor(x));
  if (mode == "ceil") return int64_t(std::ceil(x));
  double f = std::floor(x);
  if (x - f == 0.5) {
    if (mode == "round_prefer_ceil") return int64_t(f + 1);
    return int64_t(f);  // round_prefer_floor
  }
  return int64_t(std::round(x));
}

double cubicWeight(double t, double a) {
  t = std::fabs(t);
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

struct Tap {
  int64_t index;  // -1: outside (extrapolation)
  double weight;
};

// Antialias taps of one output coordinate at input coordinate xo: every input
// i within the filter's support (1 for linear, 2 for cubic, widened by 1/scale
// when downsampling) weighted by the filter at (i - xo) * scale, normalized;
// taps past an edge repeat the edge value, or are dropped with exclude_outside.
std::vector<Tap> antialiasTaps(bool cubic, double a, double xo, double scale, int64_t len,
                               bool exclude) {
  double s = std::min(scale, 1.0), support = (cubic ? 2.0 : 1.0) / s;
  int64_t lo = int64_t(std::floor(xo - support)) + 1, hi = int64_t(std::ceil(xo + support));
  std::vector<Tap> t;
  double sum = 0;
  for (int64_t i = lo; i < hi; ++i) {
    if (exclude && (i < 0 || i >= len)) continue;
    double u = (double(i) - xo) * s;
    double w = cubic ? cubicWeight(u, a) : std::max(0.0, 1 - std::fabs(u));
    t.push_back({std::clamp<int64_t>(i, 0, len - 1), w});
    sum += w;
  }
  if (sum != 0)
    for (Tap& tp : t) tp.weight /= sum;
  return t;
}

Outputs resizeKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 4));
  const TensorData& x = *in[0];
  auto p = params(n, x.shape, in);
  if (!p) return p.status();
  std::string mode = n.attrs.getString("mode", "nearest");
  std::string coord = n.attrs.getString("coordinate_transformation_mode", "half_pixel");
  std::string nearest = n.attrs.getString("nearest_mode", "round_prefer_floor");
  double a = n.attrs.getFloat("cubic_coeff_a", -0.75);
  bool exclude = n.attrs.getInt("exclude_outside", 0) != 0;
  double extrapolation = n.attrs.getFloat("extrapolation_value", 0.0);
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return nodeError(n, "mode '" + mode + "' is not nearest, linear or cubic");
  static const char* kModes[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                 "asymmetric", "tf_crop_and_resize", "half_pixel_symmetric"};
  if (std::find(std::begin(kModes), std::end(kModes), coord) == std::end(kModes))
    return nodeError(n, "coordinate_transformation_mode '" + coord + "' is not supported");
  bool crop = coord == "tf_crop_and_resize";
  if (crop && p->roi.empty()) return nodeError(n, "tf_crop_and_resize needs a roi");
  bool antialias = n.attrs.getInt("antialias", 0) != 0 && mode != "nearest";
  if (antialias && crop)
    return nodeError(n,
                     "antialias with tf_crop_and_resize is not supported (no reference "
                     "defines the filter past the crop box)");
  size_t r = x.rank();
  // Per axis, per output coordinate: the taps.
  std::vector<std::vector<std::vector<Tap>>> taps(r);
  for (size_t d = 0; d < r; ++d) {
    int64_t len = x.shape[d], outLen = p->outShape[d];
    double rs = crop ? p->roi[d] : 0, re = crop ? p->roi[d + r] : 1;
    for (int64_t o = 0; o < outLen; ++o) {
      std::vector<Tap> t;
      if (len == outLen && p->scales[d] == 1.0 && !crop) {
        t.push_back({o, 1.0});
        taps[d].push_back(t);
        continue;
      }
      double xo = original(coord, double(o), len, outLen, p->scales[d], rs, re);
      if (crop && (xo < 0 || xo > double(len - 1))) {
        t.push_back({-1, 1.0});
      } else if (antialias) {
        t = antialiasTaps(mode == "cubic", a, xo, p->scales[d], len, exclude);
      } else if (mode == "nearest") {
        int64_t i = nearestIndex(nearest, xo, p->scales[d]);
        t.push_back({std::clamp<int64_t>(i, 0, len - 1), 1.0});
      } else if (mode == "linear") {
        double xc = std::clamp(xo, 0.0, double(len - 1));
        int64_t i0 = int64_t(std::floor(xc)), i1 = std::min(i0 + 1, len - 1);
        double w = xc - double(i0);
        t.push_back({i0, 1 - w});
        t.push_back({i1, w});
      } else {
        int64_t f = int64_t(std::floor(xo));
        double frac = xo - double(f), sum = 0;
        for (int64_t k = -1; k <= 2; ++k) {
          int64_t i = f + k;
          double w = cubicWeight(double(k) - frac, a);
          if (exclude && (i < 0 || i >= len)) w = 0;
          t.push_back({std::clamp<int64_t>(i, 0, len - 1), w});
          sum += w;
        }
        if (exclude && sum != 0)
          for (Tap& tp : t) tp.weight /= sum;
      }
      taps[d].push_back(t);
    }
  }
  TensorData o(x.dtype, p->outShape);
  std::vector<int64_t> st = rowMajorStrides(x.shape), idx(r, 0);
  for (int64_t i = 0; i < o.numel(); ++i) {
    // Sum over the cartesian product of the axes' taps.
    std::vector<size_t> k(r, 0);
    double acc = 0;
    bool outside = false;
    while (true) {
      double w = 1;
      int64_t src = 0;
      for (size_t d = 0; d < r; ++d) {
        const Tap& t = taps[d][idx[d]][k[d]];
        if (t.index < 0) outside = true;
        w *= t.weight;
        src += t.index * st[d];
      }
      if (outside) break;
      acc += w * x.at(src);
      size_t d = r;
      while (d-- > 0) {
        if (++k[d] < taps[d][idx[d]].size()) break;
        k[d] = 0;
      }
      if (d == size_t(-1)) break;
    }
    if (isIntegral(x.dtype)) acc = std::nearbyint(acc);
    storeF(o, i, outside ? extrapolation : acc);
    nextIndex(idx, p->outShape);
  }
  return std::vector{std::move(o)};
}

// A symbolic dim scaled by a whole number (Upsample by 2: seq*2); other
// scales floor a product the algebra does not hold, so unknown.
Dim integerScale(const Dim& d, double scale) {
  if (!(scale >= 1 && scale <= 1 << 20) || scale != std::floor(scale)) return Dim::unknown();
  return dimMul(d, Dim::fixed(int64_t(scale)));
}

Types inferResize(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 4));
  TensorType o = c.inputTypes[0];
  if (!o.rankKnown) return std::vector{o};
  Inputs ins{nullptr};
  for (size_t i = 1; i < c.inputTypes.size(); ++i)
    ins.push_back(typeAt(c, i) ? constAt(c, i) : nullptr);
  bool constScales = true;
  for (size_t i = 2; i < c.inputTypes.size(); ++i)
    if (typeAt(c, i) && !constAt(c, i)) constScales = false;
  auto shape = o.staticShape();
  if (constScales && shape) {
    auto p = params(c.node, *shape, ins);
    if (p) return std::vector{TensorType::of(o.dtype, p->outShape)};
  }
  // (With opset 18's axes or an aspect-ratio policy the per-dim rule below does not hold.)
  bool plain = !c.node.attrs.getInts("axes") &&
               c.node.attrs.getString("keep_aspect_ratio_policy", "stretch") == "stretch";
  if (plain && constScales && (present(ins, 3) || present(ins, 2))) {
    // Sizes give each dim; scales keep the dims they leave at 1.
    if (const TensorData* s = present(ins, 3); s && s->numel() == int64_t(o.rank())) {
      for (size_t i = 0; i < o.rank(); ++i) o.shape[i] = Dim::fixed(loadI(*s, int64_t(i)));
      return std::vector{o};
    }
    if (const TensorData* s = present(ins, 2); s && s->numel() == int64_t(o.rank())) {
      for (size_t i = 0; i < o.rank(); ++i)
        if (s->at(int64_t(i)) != 1.0)
          o.shape[i] = o.shape[i].isStatic()
                           ? Dim::fixed(int64_t(std::floor(
                                 double(float(o.shape[i].value) * float(s->at(int64_t(i)))))))
                           : integerScale(o.shape[i], s->at(int64_t(i)));
      return std::vector{o};
    }
  }
  for (Dim& d : o.shape) d = Dim::unknown();
  return std::vector{o};
}

}  // namespace

void registerResizeOps(OpRegistry& r) {
  r.add(OpInfo{"Resize", "", PatternKind::Injective, inferResize, resizeKernel});
  // Only so the importer recognizes it: it rewrites every Upsample into Resize.
  r.add(OpInfo{"Upsample", "", PatternKind::Injective, inferResize,
               [](const Node& n, const Inputs&) -> Outputs {
                 return nodeError(n, "Upsample must be converted to Resize on import");
               }});
}

}  // namespace fuselens::ops
