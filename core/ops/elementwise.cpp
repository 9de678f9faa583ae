// Elementwise ops: Add, Sub, Mul, Div with ONNX multidirectional (numpy)
// broadcasting; Relu, Sigmoid, Tanh, Exp; Identity. Their kernels are the
// reference for every fused elementwise group, so they are one obvious loop
// over the output index each, with no tricks to share with codegen/.
#include <cmath>

#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

using Outputs = Expected<std::vector<TensorData>>;
using Types = Expected<std::vector<TensorType>>;

Types inferBinary(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 2));
  const TensorType& a = c.inputTypes[0];
  const TensorType& b = c.inputTypes[1];
  if (a.dtype != b.dtype)
    return nodeError(c.node, "inputs have different element types " +
                                 std::string(dtypeName(a.dtype)) + " and " +
                                 std::string(dtypeName(b.dtype)));
  TensorType out;
  out.dtype = a.dtype;
  if (!a.rankKnown || !b.rankKnown) {
    out.rankKnown = false;
    return std::vector{out};
  }
  auto dims = broadcastDims(c.node, a.shape, b.shape);
  if (!dims) return dims.status();
  out.shape = *dims;
  return std::vector{out};
}

Types inferUnary(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  return std::vector{c.inputTypes[0]};
}

// out[i] = f(a[ia], b[ib]) where ia/ib are the broadcast positions of i.
template <class T, class F>
TensorData binaryLoop(const TensorData& a, const TensorData& b, const std::vector<int64_t>& shape,
                      F f) {
  TensorData out(a.dtype, shape);
  std::vector<int64_t> sa = broadcastStrides(a.shape, shape);
  std::vector<int64_t> sb = broadcastStrides(b.shape, shape);
  std::vector<int64_t> idx(shape.size(), 0);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* po = out.data<T>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      ia += idx[d] * sa[d];
      ib += idx[d] * sb[d];
    }
    po[i] = static_cast<T>(f(pa[ia], pb[ib]));
    nextIndex(idx, shape);
  }
  return out;
}

template <class T>
bool hasZero(const TensorData& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.data<T>()[i] == T(0)) return true;
  return false;
}

// F is a generic lambda; it is instantiated for f32, f64, i32 and i64.
template <class F>
EagerFn binaryKernel(F f, bool isDiv) {
  return [f, isDiv](const Node& n, const std::vector<const TensorData*>& in) -> Outputs {
    FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 2));
    const TensorData& a = *in[0];
    const TensorData& b = *in[1];
    if (a.dtype != b.dtype) return nodeError(n, "inputs have different element types");
    auto shape = broadcastShapes(n, a.shape, b.shape);
    if (!shape) return shape.status();
    switch (a.dtype) {
      case DType::F32: return std::vector{binaryLoop<float>(a, b, *shape, f)};
      case DType::F64: return std::vector{binaryLoop<double>(a, b, *shape, f)};
      case DType::I32:
        // Integer division by zero is undefined behaviour in C++: refuse it.
        if (isDiv && hasZero<int32_t>(b)) return nodeError(n, "integer division by zero");
        return std::vector{binaryLoop<int32_t>(a, b, *shape, f)};
      case DType::I64:
        if (isDiv && hasZero<int64_t>(b)) return nodeError(n, "integer division by zero");
        return std::vector{binaryLoop<int64_t>(a, b, *shape, f)};
      default:
        return nodeError(n, "no eager kernel for element type " + std::string(dtypeName(a.dtype)));
    }
  };
}

template <class T, class F>
TensorData unaryLoop(const TensorData& a, F f) {
  TensorData out(a.dtype, a.shape);
  for (int64_t i = 0; i < a.numel(); ++i) out.data<T>()[i] = static_cast<T>(f(a.data<T>()[i]));
  return out;
}

// Float-only activations; `withInts` adds i32/i64 (Relu).
template <class F>
EagerFn unaryKernel(F f, bool withInts) {
  return [f, withInts](const Node& n, const std::vector<const TensorData*>& in) -> Outputs {
    FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
    const TensorData& a = *in[0];
    switch (a.dtype) {
      case DType::F32: return std::vector{unaryLoop<float>(a, f)};
      case DType::F64: return std::vector{unaryLoop<double>(a, f)};
      case DType::I32:
        if (withInts) return std::vector{unaryLoop<int32_t>(a, f)};
        break;
      case DType::I64:
        if (withInts) return std::vector{unaryLoop<int64_t>(a, f)};
        break;
      default: break;
    }
    return nodeError(n, "no eager kernel for element type " + std::string(dtypeName(a.dtype)));
  };
}

Outputs identityKernel(const Node& n, const std::vector<const TensorData*>& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  return std::vector{*in[0]};  // any dtype: a copy of the bytes
}

void addOp(OpRegistry& r, const char* name, PatternKind kind, InferFn infer, EagerFn eager) {
  r.add(OpInfo{name, "", kind, std::move(infer), std::move(eager)});
}

}  // namespace

void registerElementwiseOps(OpRegistry& r) {
  const auto E = PatternKind::ElemWise;
  addOp(r, "Add", E, inferBinary, binaryKernel([](auto x, auto y) { return x + y; }, false));
  addOp(r, "Sub", E, inferBinary, binaryKernel([](auto x, auto y) { return x - y; }, false));
  addOp(r, "Mul", E, inferBinary, binaryKernel([](auto x, auto y) { return x * y; }, false));
  // Integer Div truncates toward zero, as C++ and ONNX Runtime do.
  addOp(r, "Div", E, inferBinary, binaryKernel([](auto x, auto y) { return x / y; }, true));
  addOp(r, "Relu", E, inferUnary,
        unaryKernel([](auto x) { return x > decltype(x)(0) ? x : decltype(x)(0); }, true));
  addOp(
      r, "Sigmoid", E, inferUnary,
      unaryKernel([](auto x) { return decltype(x)(1) / (decltype(x)(1) + std::exp(-x)); }, false));
  addOp(r, "Tanh", E, inferUnary, unaryKernel([](auto x) { return std::tanh(x); }, false));
  addOp(r, "Exp", E, inferUnary, unaryKernel([](auto x) { return std::exp(x); }, false));
  addOp(r, "Identity", E, inferUnary, identityKernel);
}

}  // namespace fuselens::ops
