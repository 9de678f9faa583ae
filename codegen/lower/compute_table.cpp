// The Injective and Reduction rows of codegen's dispatch table (see
// compute_table.h), one line per op with what it does.
#include "codegen/lower/compute_table.h"

#include "codegen/lower/compute_conv_transpose.h"
#include "codegen/lower/compute_data.h"
#include "codegen/lower/compute_einsum.h"
#include "codegen/lower/compute_norm.h"
#include "codegen/lower/compute_rnn.h"
#include "codegen/lower/compute_scan.h"
#include "codegen/lower/compute_scatter.h"

namespace fuselens {
namespace {

using D = DTypeSet;

// Integer MatMul multiplies in an i64 accumulator through the Einsum nest.
std::vector<StmtRef> lowerAnyMatMul(KernelBuilder& kb, const Node& n,
                                    const KernelBuilder::Sink& sink) {
  return isIntegerMatMul(kb.graph(), n) ? lowerMatMulAsEinsum(kb, n, sink)
                                        : lowerMatMul(kb, n, sink);
}

ExprRef concat(KernelBuilder& kb, const Node& n, size_t, const Index& at) {
  return concatValue(kb, n, at);
}
ExprRef pad(KernelBuilder& kb, const Node& n, size_t, const Index& at) {
  return padValue(kb, n, at);
}
ExprRef batchNorm(KernelBuilder& kb, const Node& n, size_t, const Index& at) {
  return batchNormValue(kb, n, at);
}
ExprRef layoutTransform(KernelBuilder& kb, const Node& n, size_t, const Index& at) {
  return layoutTransformValue(kb, n, at);
}

// Index maps take any dtype: they move data and never compute on it.
const IndexMapRow kIndexMapRows[] = {
    {"", "Identity", identitySource},  // the same position
    {"", "Reshape", flatSource},       // row-major order kept: the flat index
    {"", "Flatten", flatSource},        {"", "Squeeze", flatSource}, {"", "Unsqueeze", flatSource},
    {"", "Transpose", transposeSource},  // output dim k reads input dim perm[k]
    {"", "Slice", sliceSource},          // start + step * position, per sliced axis
};

const InjectiveRow kInjectiveRows[] = {
    {"", "Concat", concat, D::Any},                      // the input whose slab holds the index
    {"", "Pad", pad, D::Float},                          // the input, or the pad value outside it
    {"", "BatchNormalization", batchNorm, D::Float},     // inference: a per-channel affine map
    {"", "Gather", dataMovementValue, D::Any},           // data at the looked-up index
    {"", "GatherElements", dataMovementValue, D::Any},   // data at a per-element index
    {"", "GatherND", dataMovementValue, D::Any},         // data at an index tuple
    {"", "Split", dataMovementValue, D::Any},            // each output a slab of the input
    {"", "Tile", dataMovementValue, D::Any},             // the input, index modulo its shape
    {"", "Expand", dataMovementValue, D::Any},           // broadcast to the target shape
    {"", "DepthToSpace", dataMovementValue, D::Any},     // channels moved into blocks
    {"", "SpaceToDepth", dataMovementValue, D::Any},     // blocks moved into channels
    {"", "Resize", dataMovementValue, D::Any},           // nearest any dtype, else f32 taps
    {"", "Size", dataMovementValue, D::Any},             // a compile-time element count
    {"", "Shape", dataMovementValue, D::Any},            // compile-time dims
    {"", "OneHot", dataMovementValue, D::Any},           // on where the index matches
    {"", "ConstantOfShape", dataMovementValue, D::Any},  // the fill value
    {kFuseLensDomain, "ToNCHWc", layoutTransform, D::Any},    // channel blocks out of NCHW
    {kFuseLensDomain, "FromNCHWc", layoutTransform, D::Any},  // and back
};

const ReductionRow kReductionRows[] = {
    {"", "MatMul", lowerAnyMatMul, D::FloatOrInt},         // tiled by the schedule's template
    {"", "Gemm", lowerGemm, D::Float},                     // MatMul with transposes, alpha, beta, C
    {"", "Einsum", lowerEinsum, D::Float},                 // generic contraction
    {"", "Softmax", lowerSoftmax, D::Float},               // max, exp-sum, divide over one axis
    {"", "LogSoftmax", lowerSoftmax, D::Float},            // the same rows, log of the quotient
    {"", "LayerNormalization", lowerLayerNorm, D::Float},  // mean, variance over last axes
    {"", "InstanceNormalization", lowerGroupNorm, D::Float},  // per (n, c) statistics
    {"", "GroupNormalization", lowerGroupNorm, D::Float},     // per (n, group) statistics
    {"", "BatchNormalization", lowerGroupNorm, D::Float},     // training: batch statistics
    // Integer Max/Min in i64, Sum/Prod in f64 saturated (compute_reduce.cpp); the
    // others take logs, roots or means, which eager computes in double.
    {"", "ReduceMax", lowerReduce, D::FloatOrInt},
    {"", "ReduceMin", lowerReduce, D::FloatOrInt},
    {"", "ReduceSum", lowerReduce, D::FloatOrInt},
    {"", "ReduceProd", lowerReduce, D::FloatOrInt},
    {"", "ReduceMean", lowerReduce, D::Float},
    {"", "ReduceSumSquare", lowerReduce, D::Float},
    {"", "ReduceL1", lowerReduce, D::Float},
    {"", "ReduceL2", lowerReduce, D::Float},
    {"", "ReduceLogSum", lowerReduce, D::Float},
    {"", "ReduceLogSumExp", lowerReduce, D::Float},
    {"", "ArgMax", lowerScan, D::Float},              // index of the greatest along an axis
    {"", "ArgMin", lowerScan, D::Float},              // index of the least along an axis
    {"", "CumSum", lowerScan, D::Float},              // running sum along an axis
    {"", "TopK", lowerScan, D::Float},                // k greatest or least, and indices
    {"", "ScatterND", lowerScatter, D::Float},        // data with updates at index tuples
    {"", "ScatterElements", lowerScatter, D::Float},  // updates at per-element indices
    {"", "RNN", lowerRecurrent, D::Float},            // the time loop in the kernel
    {"", "GRU", lowerRecurrent, D::Float},
    {"", "LSTM", lowerRecurrent, D::Float},
    {"", "Conv", lowerConv, D::Float},                        // direct NCHW convolution
    {"", "ConvTranspose", lowerConvTranspose, D::Float},      // transposed convolution
    {"", "MaxPool", lowerPool, D::Float},                     // window max
    {"", "AveragePool", lowerPool, D::Float},                 // window mean
    {"", "GlobalAveragePool", lowerGlobalPool, D::Float},     // mean over H x W
    {"", "GlobalMaxPool", lowerGlobalPool, D::Float},         // max over H x W
    {kFuseLensDomain, "ConvNCHWc", lowerLayoutOp, D::Float},  // vectorized over the block
    {kFuseLensDomain, "MaxPoolNCHWc", lowerLayoutOp, D::Float},
    {kFuseLensDomain, "AveragePoolNCHWc", lowerLayoutOp, D::Float},
};

template <typename Row, size_t N>
const Row* find(const Row (&rows)[N], const Node& n) {
  for (const Row& r : rows)
    if (r.op == n.op && r.domain == (n.domain == "ai.onnx" ? "" : n.domain)) return &r;
  return nullptr;
}

}  // namespace

bool dtypeIn(DTypeSet set, DType t) {
  bool fl = t == DType::F32 || t == DType::F16 || t == DType::BF16;
  switch (set) {
    case DTypeSet::Float:
      return fl;
    case DTypeSet::FloatOrInt:
      return fl || (t != DType::Bool && computeType(t) == DType::I64);
    case DTypeSet::Any:
      return true;
  }
  return false;
}

const ReductionRow* reductionRow(const Node& n) { return find(kReductionRows, n); }
const InjectiveRow* injectiveRow(const Node& n) { return find(kInjectiveRows, n); }
const IndexMapRow* indexMapRow(const Node& n) { return find(kIndexMapRows, n); }

Index indexMapSource(KernelBuilder& kb, const Node& n, const Index& out) {
  if (const IndexMapRow* r = indexMapRow(n)) return r->source(kb, n, out);
  kb.fail(Status::error("internal: no index map in the dispatch table", nodePlace(n)));
  return Index::ofFlat(kb.shapeOf(n.inputs[0]), intConst(0));
}

bool computeHandlesDType(const Node& n, DType t) {
  switch (computeClassOf(n)) {
    // Each expression widens its operands and checks the kinds its row names.
    case ComputeClass::Elementwise:
    case ComputeClass::IndexMap:
      return true;
    case ComputeClass::Injective:
      if (const InjectiveRow* r = injectiveRow(n)) return dtypeIn(r->dtypes, t);
      return false;
    case ComputeClass::Reduction:
      if (const ReductionRow* r = reductionRow(n)) return dtypeIn(r->dtypes, t);
      return false;
    default:
      return false;
  }
}

}  // namespace fuselens
