// Reductions. Softmax has opset-13 semantics here (normalize along `axis`,
// default -1); the importer rewrites older forms into this one. The kernel
// subtracts the row maximum before exp so large logits do not overflow, the
// same numerically stable form every framework uses.
#include <cmath>

#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

using Outputs = Expected<std::vector<TensorData>>;
using Types = Expected<std::vector<TensorType>>;

Types inferSoftmax(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  const TensorType& t = c.inputTypes[0];
  if (!isFloat(t.dtype))
    return nodeError(c.node,
                     "needs a floating-point input, got " + std::string(dtypeName(t.dtype)));
  int64_t axis = c.node.attrs.getInt("axis", -1);
  if (t.rankKnown && !normalizeAxis(axis, int64_t(t.rank())))
    return nodeError(c.node, "axis " + std::to_string(axis) + " is out of range for " + t.str());
  return std::vector{t};
}

// Views the tensor as [outer, len, inner] around the axis and normalizes each
// of the outer*inner rows of length len.
template <class T>
TensorData softmaxLoop(const TensorData& x, int64_t axis) {
  TensorData out(x.dtype, x.shape);
  int64_t outer = 1, len = x.shape[axis], inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (size_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape[d];
  const T* in = x.data<T>();
  T* o = out.data<T>();
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t b = 0; b < inner; ++b) {
      const int64_t base = a * len * inner + b;
      double mx = -INFINITY;
      for (int64_t i = 0; i < len; ++i) mx = std::fmax(mx, double(in[base + i * inner]));
      double sum = 0;
      for (int64_t i = 0; i < len; ++i) sum += std::exp(double(in[base + i * inner]) - mx);
      for (int64_t i = 0; i < len; ++i)
        o[base + i * inner] = static_cast<T>(std::exp(double(in[base + i * inner]) - mx) / sum);
    }
  return out;
}

Outputs softmaxKernel(const Node& n, const std::vector<const TensorData*>& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  const TensorData& x = *in[0];
  int64_t axisAttr = n.attrs.getInt("axis", -1);
  auto axis = normalizeAxis(axisAttr, int64_t(x.rank()));
  if (!axis)
    return nodeError(
        n, "axis " + std::to_string(axisAttr) + " is out of range for shape " + shapeStr(x.shape));
  switch (x.dtype) {
    case DType::F32: return std::vector{softmaxLoop<float>(x, *axis)};
    case DType::F64: return std::vector{softmaxLoop<double>(x, *axis)};
    default:
      return nodeError(n, "no eager kernel for element type " + std::string(dtypeName(x.dtype)));
  }
}

}  // namespace

void registerReduceOps(OpRegistry& r) {
  r.add(OpInfo{"Softmax", "", PatternKind::CommReduce, inferSoftmax, softmaxKernel});
}

}  // namespace fuselens::ops
