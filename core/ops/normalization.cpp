// Normalization ops: BatchNormalization (running mean and variance; with
// training_mode=1 the batch's own statistics, and the updated running mean
// and variance as outputs 1 and 2, as opset 14+ defines), InstanceNormalization,
// LayerNormalization (Y, and the optional Mean and InvStdDev outputs) and
// GroupNormalization (opset-21 form: per-channel scale and bias; the importer
// expands the opset-18 per-group form). Statistics are computed in double (in
// f32 under Accumulation::Storage, accumulation.h).
#include <cmath>

#include "core/ops/accumulation.h"
#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

Types inferFirst(const InferContext& c) {
  if (c.inputTypes.empty()) return nodeError(c.node, "expects an input");
  return std::vector{c.inputTypes[0]};
}

// Training mode: per-channel mean and (biased) variance of the batch, over N
// and the spatial axes; the running statistics move by 1 - momentum towards them.
Outputs batchNormTraining(const Node& n, const Inputs& in, int64_t C, int64_t inner) {
  const TensorData& x = *in[0];
  double eps = n.attrs.getFloat("epsilon", 1e-5), momentum = n.attrs.getFloat("momentum", 0.9);
  int64_t count = C ? x.numel() / C : 0;
  std::vector<double> mean(C, 0.0), var(C, 0.0);
  for (int64_t i = 0; i < x.numel(); ++i) mean[(i / inner) % C] += x.at(i);
  for (int64_t c = 0; c < C; ++c) mean[c] /= double(std::max<int64_t>(count, 1));
  for (int64_t i = 0; i < x.numel(); ++i) {
    double d = x.at(i) - mean[(i / inner) % C];
    var[(i / inner) % C] += d * d;
  }
  for (int64_t c = 0; c < C; ++c) var[c] /= double(std::max<int64_t>(count, 1));
  TensorData o(x.dtype, x.shape);
  TensorData runMean(in[3]->dtype, in[3]->shape), runVar(in[4]->dtype, in[4]->shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t c = (i / inner) % C;
    storeF(o, i, (x.at(i) - mean[c]) / std::sqrt(var[c] + eps) * in[1]->at(c) + in[2]->at(c));
  }
  for (int64_t c = 0; c < C; ++c) {
    storeF(runMean, c, in[3]->at(c) * momentum + mean[c] * (1 - momentum));
    storeF(runVar, c, in[4]->at(c) * momentum + var[c] * (1 - momentum));
  }
  std::vector<TensorData> outs{std::move(o), std::move(runMean), std::move(runVar)};
  outs.resize(std::min(outs.size(), n.outputs.size()));
  return outs;
}

// y = (x - mean) / sqrt(var + eps) * scale + bias, per channel (axis 1).
Outputs batchNormKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 5, 5));
  const TensorData& x = *in[0];
  FL_RETURN_IF_ERROR(needFloat(n, x.dtype));
  int64_t C = x.rank() > 1 ? x.shape[1] : 1;
  for (size_t i = 1; i < 5; ++i)
    if (in[i]->numel() != C)
      return nodeError(n, "scale, bias, mean and var must hold " + std::to_string(C) + " values");
  double eps = n.attrs.getFloat("epsilon", 1e-5);
  int64_t inner = 1;
  for (size_t i = 2; i < x.rank(); ++i) inner *= x.shape[i];
  if (n.attrs.getInt("training_mode", 0) != 0) return batchNormTraining(n, in, C, inner);
  TensorData o(x.dtype, x.shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t c = (i / inner) % C;
    double v = (x.at(i) - in[3]->at(c)) / std::sqrt(in[4]->at(c) + eps);
    storeF(o, i, v * in[1]->at(c) + in[2]->at(c));
  }
  std::vector<TensorData> outs{std::move(o)};
  return outs;
}

Types inferBatchNorm(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 5, 5));
  if (c.node.outputs.size() > 1 && c.node.attrs.getInt("training_mode", 0) == 0)
    return nodeError(c.node,
                     "has running mean/var outputs but training_mode is 0; ONNX defines "
                     "them only in training mode");
  if (c.node.outputs.size() > 3)
    return nodeError(c.node, "has " + std::to_string(c.node.outputs.size()) +
                                 " outputs; the opset-14+ training form has 3");
  std::vector<TensorType> outs{c.inputTypes[0], c.inputTypes[3], c.inputTypes[4]};
  outs.resize(c.node.outputs.size());
  return outs;
}

// Normalizes each of `groups` contiguous blocks of x, then applies a per-channel affine.
TensorData normalizeBlocks(const TensorData& x, int64_t blocks, double eps, const TensorData* scale,
                           const TensorData* bias, int64_t C, int64_t inner,
                           std::vector<double>* means = nullptr,
                           std::vector<double>* invStd = nullptr) {
  TensorData o(x.dtype, x.shape);
  int64_t len = blocks ? x.numel() / blocks : 0;
  const bool narrow = sumsInF32(x.dtype);
  for (int64_t b = 0; b < blocks; ++b) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < len; ++i) mean = addTo(mean, x.at(b * len + i), narrow);
    mean /= double(len);
    for (int64_t i = 0; i < len; ++i) {
      double d = x.at(b * len + i) - mean;
      var = addTo(var, d * d, narrow);
    }
    var /= double(len);
    double inv = 1.0 / std::sqrt(var + eps);
    if (means) means->push_back(mean), invStd->push_back(inv);
    for (int64_t i = 0; i < len; ++i) {
      int64_t at = b * len + i;
      int64_t c = C ? (at / inner) % C : 0;
      double v = (x.at(at) - mean) * inv;
      if (scale) v *= scale->at(c);
      if (bias) v += bias->at(c);
      storeF(o, at, v);
    }
  }
  return o;
}

Outputs instanceNormKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 3, 3));
  const TensorData& x = *in[0];
  FL_RETURN_IF_ERROR(needFloat(n, x.dtype));
  if (x.rank() < 3 || in[1]->numel() != x.shape[1] || in[2]->numel() != x.shape[1])
    return nodeError(n, "expects [N,C,spatial...] with C scales and biases");
  int64_t inner = x.numel() / std::max<int64_t>(1, x.shape[0] * x.shape[1]);
  return std::vector{normalizeBlocks(x, x.shape[0] * x.shape[1], n.attrs.getFloat("epsilon", 1e-5),
                                     in[1], in[2], x.shape[1], inner)};
}

Outputs groupNormKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 3, 3));
  const TensorData& x = *in[0];
  FL_RETURN_IF_ERROR(needFloat(n, x.dtype));
  int64_t g = n.attrs.getInt("num_groups", 0);
  if (x.rank() < 3 || g <= 0 || x.shape[1] % g != 0)
    return nodeError(n, "num_groups " + std::to_string(g) + " does not divide the channels of " +
                            shapeStr(x.shape));
  if (in[1]->numel() != x.shape[1] || in[2]->numel() != x.shape[1])
    return nodeError(n, "scale and bias must hold one value per channel (opset-21 form)");
  int64_t inner = x.numel() / std::max<int64_t>(1, x.shape[0] * x.shape[1]);
  return std::vector{normalizeBlocks(x, x.shape[0] * g, n.attrs.getFloat("epsilon", 1e-5), in[1],
                                     in[2], x.shape[1], inner)};
}

// LayerNormalization normalizes over axes [axis, rank); scale and bias
// broadcast over those axes.
Outputs layerNormKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 3));
  const TensorData& x = *in[0];
  FL_RETURN_IF_ERROR(needFloat(n, x.dtype));
  int64_t axisAttr = n.attrs.getInt("axis", -1);
  auto axis = normalizeAxis(axisAttr, int64_t(x.rank()));
  if (!axis) return nodeError(n, "axis " + std::to_string(axisAttr) + " is out of range");
  int64_t outer = 1, len = 1;
  for (int64_t i = 0; i < int64_t(x.rank()); ++i) (i < *axis ? outer : len) *= x.shape[i];
  const TensorData* scale = in[1];
  const TensorData* bias = inputAt(in, 2);
  std::vector<int64_t> normShape(x.shape.begin() + *axis, x.shape.end());
  auto fits = [&](const TensorData* t) {
    return !t || (broadcastShapes(n, t->shape, normShape).isOk() && t->numel() <= len);
  };
  if (!fits(scale) || !fits(bias))
    return nodeError(n,
                     "scale/bias do not broadcast to the normalized shape " + shapeStr(normShape));
  auto expand = [&](const TensorData* t) -> std::vector<double> {
    std::vector<double> v(size_t(len), t ? 0.0 : 0.0);
    if (!t) return v;
    forEachBroadcast({t}, normShape,
                     [&](int64_t i, const std::vector<int64_t>& off) { v[i] = t->at(off[0]); });
    return v;
  };
  std::vector<double> sc = expand(scale), bi = expand(bias);
  double eps = n.attrs.getFloat("epsilon", 1e-5);
  TensorData o(x.dtype, x.shape);
  std::vector<int64_t> statShape = x.shape;
  for (size_t i = size_t(*axis); i < statShape.size(); ++i) statShape[i] = 1;
  // Mean and InvStdDev are in stash_type (f32 by default).
  TensorData mean(DType::F32, statShape), inv(DType::F32, statShape);
  const bool narrow = sumsInF32(x.dtype);
  for (int64_t r = 0; r < outer; ++r) {
    double m = 0, var = 0;
    for (int64_t i = 0; i < len; ++i) m = addTo(m, x.at(r * len + i), narrow);
    m /= double(len);
    for (int64_t i = 0; i < len; ++i)
      var = addTo(var, (x.at(r * len + i) - m) * (x.at(r * len + i) - m), narrow);
    double is = 1.0 / std::sqrt(var / double(len) + eps);
    storeF(mean, r, m);
    storeF(inv, r, is);
    for (int64_t i = 0; i < len; ++i)
      storeF(o, r * len + i, (x.at(r * len + i) - m) * is * sc[i] + (bias ? bi[i] : 0.0));
  }
  std::vector<TensorData> outs{std::move(o)};
  if (n.outputs.size() > 1) outs.push_back(std::move(mean));
  if (n.outputs.size() > 2) outs.push_back(std::move(inv));
  return outs;
}

Types inferLayerNorm(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 3));
  const TensorType& x = c.inputTypes[0];
  std::vector<TensorType> outs{x};
  if (c.node.outputs.size() > 1) {
    TensorType s = x;
    s.dtype = DType::F32;
    if (x.rankKnown) {
      auto a = normalizeAxis(c.node.attrs.getInt("axis", -1), int64_t(x.rank()));
      if (!a) return nodeError(c.node, "axis is out of range for " + x.str());
      for (size_t i = size_t(*a); i < s.rank(); ++i) s.shape[i] = Dim::fixed(1);
    }
    outs.push_back(s);
    if (c.node.outputs.size() > 2) outs.push_back(s);
  }
  return outs;
}

}  // namespace

void registerNormOps(OpRegistry& r) {
  // BatchNormalization in inference is a per-channel affine map: elementwise.
  r.add(OpInfo{"BatchNormalization", "", PatternKind::ElemWise, inferBatchNorm, batchNormKernel});
  r.add(
      OpInfo{"InstanceNormalization", "", PatternKind::CommReduce, inferFirst, instanceNormKernel});
  r.add(OpInfo{"LayerNormalization", "", PatternKind::CommReduce, inferLayerNorm, layerNormKernel});
  r.add(OpInfo{"GroupNormalization", "", PatternKind::CommReduce, inferFirst, groupNormKernel});
}

}  // namespace fuselens::ops
