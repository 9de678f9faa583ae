// QuantizeLinear and DequantizeLinear, per tensor, per axis (a 1-D scale
// along `axis`) or blocked (opset 21 `block_size`: a scale of x's rank whose
// `axis` dim counts blocks of block_size elements). Quantize rounds half to
// even and saturates to the zero point's type (u8 when absent); Dequantize
// returns the scale's float type.
#include <cmath>

#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

// Blocked: element i's coordinates, with the one along `axis` divided by the block size.
Expected<std::function<int64_t(int64_t)>> blockOf(const Node& n, const TensorData& x,
                                                  const TensorData& scale, int64_t block) {
  int64_t axisAttr = n.attrs.getInt("axis", 1);
  auto axis = normalizeAxis(axisAttr, int64_t(x.rank()));
  bool fits = axis && scale.rank() == x.rank();
  for (size_t d = 0; fits && d < x.rank(); ++d)
    fits = int64_t(d) == *axis ? scale.shape[d] == (x.shape[d] + block - 1) / block
                               : scale.shape[d] == x.shape[d];
  if (!fits)
    return nodeError(n, "a blocked scale " + shapeStr(scale.shape) + " does not fit " +
                            shapeStr(x.shape) + " with axis " + std::to_string(axisAttr) +
                            " and block_size " + std::to_string(block));
  int64_t inner = 1, a = *axis;
  for (size_t d = size_t(a) + 1; d < x.rank(); ++d) inner *= x.shape[d];
  int64_t len = x.shape[a], blocks = scale.shape[a];
  return std::function<int64_t(int64_t)>([=](int64_t i) {
    int64_t outer = i / (inner * len), along = (i / inner) % len, rest = i % inner;
    return (outer * blocks + along / block) * inner + rest;
  });
}

// Which scale/zero-point entry element i uses: per tensor, along `axis`, or per block.
Expected<std::function<int64_t(int64_t)>> channelOf(const Node& n, const TensorData& x,
                                                    const TensorData& scale) {
  if (int64_t block = n.attrs.getInt("block_size", 0); block > 0)
    return blockOf(n, x, scale, block);
  if (scale.numel() == 1)
    return std::function<int64_t(int64_t)>([](int64_t) { return int64_t(0); });
  if (scale.rank() != 1)
    return nodeError(n, "a scale of rank " + std::to_string(scale.rank()) +
                            " needs block_size > 0 (blocked quantization)");
  int64_t axisAttr = n.attrs.getInt("axis", 1);
  auto axis = normalizeAxis(axisAttr, int64_t(x.rank()));
  if (!axis || x.shape[*axis] != scale.numel())
    return nodeError(n, "a per-axis scale of " + std::to_string(scale.numel()) +
                            " values does not fit axis " + std::to_string(axisAttr) + " of " +
                            shapeStr(x.shape));
  int64_t inner = 1, len = x.shape[*axis];
  for (size_t i = size_t(*axis) + 1; i < x.rank(); ++i) inner *= x.shape[i];
  return std::function<int64_t(int64_t)>([inner, len](int64_t i) { return (i / inner) % len; });
}

Status checkZeroPoint(const Node& n, const TensorData& scale, const TensorData* zp) {
  if (zp && zp->numel() != scale.numel())
    return nodeError(n, "the zero point must have as many values as the scale");
  return Status::ok();
}

Outputs quantizeKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 3));
  const TensorData &x = *in[0], &scale = *in[1];
  const TensorData* zp = inputAt(in, 2);
  FL_RETURN_IF_ERROR(checkZeroPoint(n, scale, zp));
  DType out = zp ? zp->dtype : DType::U8;
  if (out != DType::U8 && out != DType::I8 && out != DType::I16)
    return nodeError(n, "quantizing to " + dtypeStr(out) + " is not supported");
  auto ch = channelOf(n, x, scale);
  if (!ch) return ch.status();
  TensorData o(out, x.shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t c = (*ch)(i);
    double s = scale.at(c);
    // x / scale in f32, as ONNX Runtime; then round half to even and add the zero point.
    double q = std::nearbyint(double(float(x.at(i)) / float(s))) + (zp ? zp->at(c) : 0.0);
    storeF(o, i, q);  // saturates to the output type
  }
  return std::vector{std::move(o)};
}

Types inferQuantize(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 3));
  TensorType o = c.inputTypes[0];
  o.dtype = typeAt(c, 2) ? c.inputTypes[2].dtype : DType::U8;
  return std::vector{o};
}

Outputs dequantizeKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 3));
  const TensorData &x = *in[0], &scale = *in[1];
  const TensorData* zp = inputAt(in, 2);
  FL_RETURN_IF_ERROR(checkZeroPoint(n, scale, zp));
  FL_RETURN_IF_ERROR(needFloat(n, scale.dtype));
  if (zp && zp->dtype != x.dtype) return nodeError(n, "the zero point must have the input's type");
  auto ch = channelOf(n, x, scale);
  if (!ch) return ch.status();
  TensorData o(scale.dtype, x.shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t c = (*ch)(i);
    double q = double(loadI(x, i) - (zp ? loadI(*zp, c) : 0));
    storeF(o, i, double(float(q) * float(scale.at(c))));
  }
  return std::vector{std::move(o)};
}

Types inferDequantize(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 3));
  TensorType o = c.inputTypes[0];
  o.dtype = c.inputTypes[1].dtype;
  return std::vector{o};
}

}  // namespace

void registerQuantOps(OpRegistry& r) {
  r.add(OpInfo{"QuantizeLinear", "", PatternKind::ElemWise, inferQuantize, quantizeKernel});
  r.add(OpInfo{"DequantizeLinear", "", PatternKind::ElemWise, inferDequantize, dequantizeKernel});
}

}  // namespace fuselens::ops
