// Compute definition of Resize (the opset-13+ form the importer produces: X,
// roi, scales, sizes, all constant): nearest, linear and cubic over any axes,
// every coordinate_transformation_mode and nearest_mode of ONNX, Resize-10's
// own rounding ("simple", set by the importer), and opset 18's axes,
// keep_aspect_ratio_policy and antialias (a filter widened by 1/scale when
// downsampling: more taps per output coordinate).
//
// Shapes and scales are known at compile time, so the per-axis sampling is
// computed here once: for every output coordinate of a resized axis, T taps
// (1 nearest, 2 linear, 4 cubic, more with antialias) of input index and
// weight, stored as tables the kernel reads by the output coordinate. An output element is then
//   sum over tap combinations of (product of the axes' weights) * x[taps]
// which inlines like any other injective op. tf_crop_and_resize marks taps
// outside the roi, where the element is extrapolation_value.
#include <cmath>

#include "codegen/lower/compute_data.h"

namespace fuselens {
namespace {

struct AxisTaps {
  int64_t taps = 1;            // per output coordinate (zero-weight padded)
  std::vector<int64_t> index;  // outLen * taps
  std::vector<float> weight;   // outLen * taps
  std::vector<float> outside;  // outLen (crop mode only): 1 where extrapolated
};

// The input coordinate sampled by output coordinate o (ONNX's transformation modes).
double sourceCoord(const std::string& mode, double o, int64_t in, int64_t out, double scale,
                   double roiLo, double roiHi) {
  if (mode == "asymmetric") return o / scale;
  if (mode == "align_corners") return out > 1 ? o * double(in - 1) / double(out - 1) : 0.0;
  if (mode == "pytorch_half_pixel") return out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
  if (mode == "tf_crop_and_resize") {
    if (out == 1) return (roiLo + roiHi) * 0.5 * double(in - 1);
    return roiLo * double(in - 1) + o * (roiHi - roiLo) * double(in - 1) / double(out - 1);
  }
  if (mode == "half_pixel_symmetric") {
    double shift = double(in) / 2 * (1 - double(out) / (scale * double(in)));
    return shift + (o + 0.5) / scale - 0.5;
  }
  return (o + 0.5) / scale - 0.5;  // half_pixel
}

int64_t roundNearest(const std::string& mode, double x, double scale) {
  if (mode == "simple") return scale < 1 ? int64_t(std::ceil(x)) : int64_t(x);
  if (mode == "floor") return int64_t(std::floor(x));
  if (mode == "ceil") return int64_t(std::ceil(x));
  double lo = std::floor(x);
  if (x - lo == 0.5) return int64_t(mode == "round_prefer_ceil" ? lo + 1 : lo);
  return int64_t(std::round(x));
}

// Keys' cubic convolution kernel with coefficient a.
double keys(double t, double a) {
  t = std::fabs(t);
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

// Antialias (linear or cubic): every input within the filter's support, widened
// by 1/scale when downsampling, weighted by the filter at (i - x) * scale and
// normalized; an index past an edge repeats the edge (or is dropped with
// exclude_outside).
std::vector<std::pair<int64_t, double>> antialiasTaps(bool cubic, double a, double x, double scale,
                                                      int64_t in, bool exclude) {
  double s = std::min(scale, 1.0), support = (cubic ? 2.0 : 1.0) / s, total = 0;
  std::vector<std::pair<int64_t, double>> t;
  for (int64_t i = int64_t(std::floor(x - support)) + 1; i < int64_t(std::ceil(x + support)); ++i) {
    if (exclude && (i < 0 || i >= in)) continue;
    double u = (double(i) - x) * s;
    double w = cubic ? keys(u, a) : std::max(0.0, 1 - std::fabs(u));
    t.emplace_back(std::clamp<int64_t>(i, 0, in - 1), w);
    total += w;
  }
  if (total != 0)
    for (auto& tap : t) tap.second /= total;
  return t;
}

AxisTaps axisTaps(const Node& n, int64_t in, int64_t out, double scale, double roiLo,
                  double roiHi) {
  std::string mode = n.attrs.getString("mode", "nearest");
  std::string coord = n.attrs.getString("coordinate_transformation_mode", "half_pixel");
  std::string nearest = n.attrs.getString("nearest_mode", "round_prefer_floor");
  double a = n.attrs.getFloat("cubic_coeff_a", -0.75);
  bool exclude = n.attrs.getInt("exclude_outside", 0) != 0;
  bool crop = coord == "tf_crop_and_resize";
  bool antialias = n.attrs.getInt("antialias", 0) != 0 && mode != "nearest";
  auto clampIn = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  AxisTaps t;
  std::vector<std::vector<std::pair<int64_t, double>>> per(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    double x = sourceCoord(coord, double(o), in, out, scale, roiLo, roiHi);
    auto& taps = per[size_t(o)];
    if (crop) t.outside.push_back(x < 0 || x > double(in - 1) ? 1.0f : 0.0f);
    if (antialias) {
      taps = antialiasTaps(mode == "cubic", a, x, scale, in, exclude);
    } else if (mode == "nearest") {
      taps = {{clampIn(roundNearest(nearest, x, scale)), 1.0}};
    } else if (mode == "linear") {
      double xc = std::clamp(x, 0.0, double(in - 1));
      int64_t i0 = int64_t(std::floor(xc));
      double w = xc - double(i0);
      taps = {{i0, 1 - w}, {std::min(i0 + 1, in - 1), w}};
    } else {
      int64_t base = int64_t(std::floor(x));
      double frac = x - double(base), total = 0;
      for (int k = 0; k < 4; ++k) {
        int64_t i = base + k - 1;
        double w = exclude && (i < 0 || i >= in) ? 0 : keys(double(k - 1) - frac, a);
        total += w;
        taps.emplace_back(clampIn(i), w);
      }
      if (exclude && total != 0)
        for (auto& tap : taps) tap.second /= total;
    }
    t.taps = std::max<int64_t>(t.taps, int64_t(taps.size()));
  }
  // A fixed number of taps per output (zero-weight padding), so the table is a matrix.
  for (auto& taps : per) {
    for (size_t k = 0; k < size_t(t.taps); ++k) {
      t.index.push_back(k < taps.size() ? taps[k].first : 0);
      t.weight.push_back(k < taps.size() ? float(taps[k].second) : 0.0f);
    }
  }
  return t;
}

const TensorData* present(KernelBuilder& kb, const Node& n, size_t i) {
  if (i >= n.inputs.size() || !n.inputs[i].valid()) return nullptr;
  auto c = kb.constantOf(n.inputs[i]);
  return c && c->numel() > 0 ? c.get() : nullptr;
}

// Per dim: the scale and the roi, from the inputs that name only `axes` (opset
// 18) or every dim; keep_aspect_ratio_policy gives the named axes one scale.
struct Sampling {
  std::vector<double> scale, roiLo, roiHi;
};

std::optional<Sampling> sampling(KernelBuilder& kb, const Node& n, const std::vector<int64_t>& in) {
  size_t rank = in.size();
  const TensorData *roi = present(kb, n, 1), *scales = present(kb, n, 2);
  const TensorData* sizes = present(kb, n, 3);
  std::vector<int64_t> axes;
  if (auto a = n.attrs.getInts("axes")) {
    for (int64_t x : *a) axes.push_back(x < 0 ? x + int64_t(rank) : x);
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(int64_t(d));
  }
  int64_t k = int64_t(axes.size());
  for (int64_t a : axes)
    if (a < 0 || a >= int64_t(rank)) return std::nullopt;
  if ((scales && scales->numel() != k) || (sizes && sizes->numel() != k) ||
      (roi && roi->numel() != 2 * k) || (!scales && !sizes))
    return std::nullopt;
  Sampling s{std::vector<double>(rank, 1.0), std::vector<double>(rank, 0.0),
             std::vector<double>(rank, 1.0)};
  std::string policy = n.attrs.getString("keep_aspect_ratio_policy", "stretch");
  float common = policy == "not_larger" ? INFINITY : 0.0f;
  for (int64_t i = 0; i < k; ++i) {
    size_t a = size_t(axes[size_t(i)]);
    if (scales) {
      s.scale[a] = scales->at(i);
    } else {
      float r = float(int64_t(sizes->at(i))) / float(in[a]);
      s.scale[a] = in[a] ? double(r) : 1.0;
      common = policy == "not_larger" ? std::min(common, r) : std::max(common, r);
    }
    if (roi) s.roiLo[a] = roi->at(i), s.roiHi[a] = roi->at(k + i);
  }
  if (sizes && policy != "stretch")
    for (int64_t a : axes) s.scale[size_t(a)] = double(common);
  return s;
}

}  // namespace

ExprRef resizeValue(KernelBuilder& kb, const Node& n, const Index& out) {
  std::vector<int64_t> in = kb.shapeOf(n.inputs[0]);
  size_t rank = in.size();
  std::string mode = n.attrs.getString("mode", "nearest");
  bool crop = n.attrs.getString("coordinate_transformation_mode", "") == "tf_crop_and_resize";
  auto smp = sampling(kb, n, in);
  if (!smp || (mode != "nearest" && mode != "linear" && mode != "cubic") ||
      (crop && !present(kb, n, 1))) {
    kb.fail(
        Status::error("Resize has code generation for constant scales or sizes (and a "
                      "constant roi for tf_crop_and_resize), modes nearest, linear and "
                      "cubic",
                      nodePlace(n)));
    return floatConst(0);
  }
  std::vector<ExprRef> od = out.dimExprs();
  LoopFunc& fn = kb.func();
  struct Axis {
    size_t dim;
    int64_t taps;
    BufferId index, weight, outside;
  };
  std::vector<Axis> axes;
  for (size_t d = 0; d < rank; ++d) {
    int64_t o = out.shape[d];
    double s = smp->scale[d];
    if (o == in[d] && s == 1.0 && !crop) continue;  // not resized
    std::string key = "resize." + std::to_string(n.id.index) + "." + std::to_string(d);
    auto& cache = kb.tables();
    if (!cache.count(key + ".i")) {
      AxisTaps t = axisTaps(n, in[d], o, s, smp->roiLo[d], smp->roiHi[d]);
      int64_t len = int64_t(t.index.size());
      cache[key + ".i"] = kb.addPrepacked(
          "taps" + std::to_string(fn.buffers.size()),
          std::make_shared<const TensorData>(TensorData::fromVector(DType::I64, {len}, t.index)));
      auto constant = [&](const std::vector<float>& v, const char* name) {
        BufferId b = fn.addBuffer(name + std::to_string(fn.buffers.size()), BufferKind::Constant,
                                  DType::F32, {int64_t(v.size())});
        fn.buffers[b.index].data = std::make_shared<const TensorData>(
            TensorData::fromVector(DType::F32, {int64_t(v.size())}, v));
        return b;
      };
      cache[key + ".w"] = constant(t.weight, "weights");
      if (crop) cache[key + ".o"] = constant(t.outside, "outside");
    }
    int64_t taps =
        o > 0 ? fn.buffer(cache[key + ".i"]).numel() / o : 1;  // taps per output coordinate
    axes.push_back(
        {d, taps, cache[key + ".i"], cache[key + ".w"], crop ? cache[key + ".o"] : BufferId()});
  }
  int64_t combos = 1;
  for (const Axis& a : axes) combos *= a.taps;
  if (combos > 256) {
    kb.fail(Status::error("Resize reads " + std::to_string(combos) +
                              " taps per element; code generation stops at 256",
                          nodePlace(n)));
    return floatConst(0);
  }
  // Sum over the taps of axes[k..], with the dims of axes before k already chosen.
  std::function<ExprRef(size_t, std::vector<ExprRef>&)> taps = [&](size_t k,
                                                                   std::vector<ExprRef>& dims) {
    if (k == axes.size()) return kb.valueAt(n.inputs[0], Index::ofDims(in, dims));
    const Axis& a = axes[k];
    ExprRef sum;
    for (int64_t t = 0; t < a.taps; ++t) {
      ExprRef at = add(mul(od[a.dim], intConst(a.taps)), intConst(t));
      dims[a.dim] = load(fn.buffer(a.index), at);
      ExprRef v = taps(k + 1, dims);
      if (mode != "nearest") v = mul(load(fn.buffer(a.weight), at), v);
      sum = sum ? add(sum, v) : v;
    }
    return sum;
  };
  std::vector<ExprRef> dims = od;
  ExprRef v = taps(0, dims);
  if (crop) {
    ExprRef flags = floatConst(0);
    for (const Axis& a : axes) flags = add(flags, load(fn.buffer(a.outside), od[a.dim]));
    v = select(compare(CmpOp::GT, flags, floatConst(0)),
               floatConst(n.attrs.getFloat("extrapolation_value", 0.0)), v);
  }
  return v;
}

}  // namespace fuselens
