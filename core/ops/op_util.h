// Helpers shared by the op-family files (core/ops/*.cpp) and nothing else:
// the family registration hooks the registry calls, node-located errors,
// ONNX broadcasting of static and symbolic shapes, and index arithmetic for
// the plain reference loops. Nothing here is shared with codegen/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ops/registry.h"

namespace fuselens::ops {

// One hook per op-family file; OpRegistry::instance calls them in order.
void registerElementwiseOps(OpRegistry& r);
void registerMatMulOps(OpRegistry& r);
void registerReduceOps(OpRegistry& r);
void registerShapeOps(OpRegistry& r);
void registerSqueezeOps(OpRegistry& r);        // squeeze_ops.cpp: Flatten, Squeeze, Unsqueeze
void registerConcatSplitOps(OpRegistry& r);    // concat_split.cpp
void registerSlicePadOps(OpRegistry& r);       // slice_pad.cpp: Slice, Expand, Tile, Pad, ...
void registerGatherScatterOps(OpRegistry& r);  // gather_scatter.cpp
void registerShapeCastOps(OpRegistry& r);      // shape_cast.cpp: Shape, Range, Cast, ...
void registerConvOps(OpRegistry& r);
void registerNormOps(OpRegistry& r);
void registerRnnOps(OpRegistry& r);
void registerControlFlowOps(OpRegistry& r);
void registerQuantOps(OpRegistry& r);
void registerResizeOps(OpRegistry& r);
void registerLayoutOps(OpRegistry& r);  // layout.cpp: NCHWc blocked ops (domain fuselens)
// attr_schema.cpp: every ONNX op's attribute kinds; called after the families.
void addAttributeSchemas(OpRegistry& r);

using Outputs = Expected<std::vector<TensorData>>;
using Types = Expected<std::vector<TensorType>>;
using Inputs = std::vector<const TensorData*>;

// An error whose `where` names the node: "node 'fc1' (MatMul): <message>".
inline Status nodeError(const Node& n, std::string message) {
  return Status::error(std::move(message), describeNode(n));
}

// ONNX's variadic ops (Sum, Max, Min, Mean, Concat) take up to 2^31-1 inputs;
// their inference and kernels are linear in the count.
constexpr size_t kMaxVariadicInputs = 2147483647;

// Checks that the node has between min and max present inputs at the front
// (trailing omitted optional inputs are allowed).
Status checkInputCount(const Node& n, size_t count, size_t min, size_t max);

std::string shapeStr(const std::vector<int64_t>& shape);  // "[2,3]"
std::string dimsStr(const std::vector<Dim>& shape);       // "[batch,3]"

// ONNX multidirectional broadcasting of two shapes (numpy rules). Symbolic dims
// broadcast when equal or against 1; otherwise the result dim is unknown.
Expected<std::vector<Dim>> broadcastDims(const Node& n, const std::vector<Dim>& a,
                                         const std::vector<Dim>& b);
// The static form; error when the shapes cannot broadcast.
Expected<std::vector<int64_t>> broadcastShapes(const Node& n, const std::vector<int64_t>& a,
                                               const std::vector<int64_t>& b);

// Row-major strides of `in` read as a tensor of shape `out` (right-aligned,
// stride 0 where `in` has a 1 or no dim): the offset of an output index in `in`.
std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& out);
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& shape);

// Advances a row-major multi-index; returns false after the last index.
bool nextIndex(std::vector<int64_t>& idx, const std::vector<int64_t>& shape);

// Maps axis in [-rank, rank) to [0, rank); nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);
// The node's `axis` attribute (or `fallback`) normalized for `rank`; with
// `inclusive`, axis == rank is allowed too (a new last axis).
Expected<int64_t> axisOf(const Node& n, int64_t rank, int64_t fallback = 0, bool inclusive = false);
// Copies element si of src to element di of dst (same dtype), as bytes.
void copyElem(TensorData& dst, int64_t di, const TensorData& src, int64_t si);

// ---- element access by dtype, for kernels that work on every dtype ----
// Element i of any dtype as double (f16/bf16 widened exactly; i64 beyond 2^53 rounds).
inline double loadF(const TensorData& t, int64_t i) { return t.at(i); }
// Element i of any dtype as int64 (floats truncate toward zero, saturating).
int64_t loadI(const TensorData& t, int64_t i);
// Stores v into element i, rounding to nearest-even for f16/bf16 and
// truncating (saturating, NaN -> 0) for integers; bool is v != 0.
void storeF(TensorData& t, int64_t i, double v);
void storeI(TensorData& t, int64_t i, int64_t v);  // integers wrap to the dtype's width
bool isIntegral(DType t);                          // signed/unsigned ints and bool
uint16_t floatToHalf(float f);
uint16_t floatToBf16(float f);
// The tensor converted element by element (ONNX Cast semantics, see storeF).
TensorData castTensor(const TensorData& t, DType to);

// A 1-D (or scalar) i32/i64 tensor as numbers; `what` names it in the error.
Expected<std::vector<int64_t>> intsOf(const Node& n, const TensorData& t, const std::string& what);
// A scalar (one element) of any numeric dtype as double.
Expected<double> scalarOf(const Node& n, const TensorData& t, const std::string& what);

// The dtype of an ONNX TensorProto.DataType number (Cast's `to`); nullopt for
// types FuseLens does not hold (strings, uint16/32/64, float8, complex).
std::optional<DType> dtypeOfOnnxEnum(int64_t e);

// The constant input i as numbers, or nullopt when it is absent or not a constant.
std::optional<std::vector<int64_t>> constInts(const InferContext& c, size_t i);

// ONNX Runtime computes f16/bf16 on CPU by widening to f32, computing and
// rounding back. The wrapped kernel sees f32 where the node had f16/bf16
// float inputs; its f32 outputs are rounded back to that dtype.
EagerFn computeHalfInF32(EagerFn f);

// The input's type, or an error naming the input; for inference functions.
inline const TensorType* typeAt(const InferContext& c, size_t i) {
  return i < c.inputTypes.size() && i < c.node.inputs.size() && c.node.inputs[i].valid()
             ? &c.inputTypes[i]
             : nullptr;
}
inline const TensorData* constAt(const InferContext& c, size_t i) {
  return i < c.constInputs.size() ? c.constInputs[i] : nullptr;
}
inline const TensorData* inputAt(const Inputs& in, size_t i) {
  return i < in.size() ? in[i] : nullptr;
}
inline TensorType unknownRank(DType t) {
  TensorType out;
  out.dtype = t;
  out.rankKnown = false;
  return out;
}
std::vector<Dim> staticDims(const std::vector<int64_t>& shape);
// An output shape computed from data (pads, repeats, sizes) must be
// non-negative and small enough to allocate (at most 2^34 bytes, no overflow).
Status checkAllocatable(const Node& n, const std::vector<int64_t>& shape, DType t);
std::string dtypeStr(DType t);  // "f32"
Status needFloat(const Node& n, DType t);

// Calls f(i, offsets) for each output index i of `shape`, with offsets[k] the
// element of tensor k (broadcast to `shape`) read at i.
template <class F>
void forEachBroadcast(const std::vector<const TensorData*>& ins, const std::vector<int64_t>& shape,
                      F f) {
  std::vector<std::vector<int64_t>> st;
  for (const TensorData* t : ins) st.push_back(broadcastStrides(t->shape, shape));
  std::vector<int64_t> idx(shape.size(), 0), off(ins.size(), 0);
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  for (int64_t i = 0; i < total; ++i) {
    for (size_t k = 0; k < ins.size(); ++k) {
      int64_t o = 0;
      for (size_t d = 0; d < shape.size(); ++d) o += idx[d] * st[k][d];
      off[k] = o;
    }
    f(i, off);
    nextIndex(idx, shape);
  }
}

}  // namespace fuselens::ops
