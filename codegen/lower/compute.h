// Internal to lowering: the context that per-family compute definitions use to
// build one kernel's loop nests (elementwise_rows.cpp, compute_shape.cpp,
// compute_matmul.cpp, compute_softmax.cpp, ...; lower.cpp drives them through
// the dispatch table, compute_table.h).
//
// A compute definition never sees buffers of its operands directly: it asks the
// builder for `valueAt(v, index)`, which either loads a materialized buffer or
// inlines the producer's expression (elementwise, broadcast and index-map ops),
// so fusion falls out of the definitions instead of being special-cased. A
// definition hands each result element to a Sink, which stores it, possibly
// after applying the consumer's elementwise epilogue.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/loop/loop_ir.h"
#include "codegen/schedule/schedule.h"
#include "core/ir/graph.h"
#include "core/ops/registry.h"
#include "core/support/status.h"

namespace fuselens {

// An element position in a tensor of `shape`: per-dim indices, a flat
// row-major index, or both; the missing form is derived on demand. Keeping the
// flat form is what makes Reshape a free index map.
struct Index {
  std::vector<int64_t> shape;
  std::optional<std::vector<ExprRef>> dims;
  ExprRef flat;

  static Index ofDims(std::vector<int64_t> shape, std::vector<ExprRef> dims);
  static Index ofFlat(std::vector<int64_t> shape, ExprRef flat);
  std::vector<ExprRef> dimExprs() const;  // delinearizes when only flat is known
  ExprRef flatExpr() const;               // linearizes when only dims are known
};

// What lowering can do with a node: its op's row in the op registry
// (OpInfo::compute), but Reduction for training-mode BatchNormalization.
ComputeClass computeClassOf(const Node& n);

class KernelBuilder;
// The normalized `axis` of a row op whose output has its input's shape
// (Softmax, LogSoftmax, LayerNormalization); nullopt after kb.fail when the
// axis is out of range or the shapes differ.
std::optional<int64_t> rowOpAxis(KernelBuilder& kb, const Node& n);

// "node 'fc1' (MatMul)", the place of a diagnostic about a node.
std::string nodePlace(const Node& n);

class KernelBuilder {
 public:
  using Sink = std::function<std::vector<StmtRef>(const Index& at, ExprRef value)>;

  KernelBuilder(const Graph& body, LoopFunc& fn, const Schedule& sched)
      : body_(body), fn_(fn), sched_(sched) {}

  const Graph& graph() const { return body_; }
  LoopFunc& func() { return fn_; }
  const Schedule& schedule() const { return sched_; }
  // The data of v when it is known at compile time (a constant of the body, or a
  // kernel input bound to a constant of the outer graph); null otherwise.
  std::shared_ptr<const TensorData> constantOf(ValueId v) const;
  void setOuterConstant(ValueId v, std::shared_ptr<const TensorData> d) {
    outerConstants_[v.index] = std::move(d);
  }
  // A new input param holding `data`, which the compiler passes at run time.
  BufferId addPrepacked(const std::string& name, std::shared_ptr<const TensorData> data);
  std::vector<int64_t> shapeOf(ValueId v) const;  // static shapes were checked before

  // The element of v at idx, as an expression: a load or the inlined producer.
  ExprRef valueAt(ValueId v, const Index& idx);
  // Makes v readable from buffer b (graph inputs, constants, materialized results).
  void bindBuffer(ValueId v, BufferId b) { bound_[v.index] = b; }
  bool isBound(ValueId v) const { return bound_.count(v.index) != 0; }
  // Stores for a further output of a multi-output reduction (LayerNorm's Mean
  // and InvStdDev, MaxPool's Indices, TopK's indices); none when it is unused.
  using OutputSink = std::function<std::vector<StmtRef>(ValueId, const Index&, ExprRef)>;
  void setOutputSink(OutputSink s) { outputSink_ = std::move(s); }
  std::vector<StmtRef> storeOutput(ValueId v, const Index& at, ExprRef value) {
    return outputSink_ ? outputSink_(v, at, std::move(value)) : std::vector<StmtRef>{};
  }
  // Compile-time tables of a kernel (Resize taps, ...) by a key of the op's
  // choosing, so an op inlined at several positions makes its tables once.
  std::map<std::string, BufferId>& tables() { return tables_; }
  // While set, valueAt(v, ...) yields `e`: a fused reduction's result seen by its epilogue.
  void substitute(ValueId v, ExprRef e) {
    subst_ = {v, std::move(e)};
    memo_.clear();
  }
  void clearSubstitution() {
    subst_.reset();
    memo_.clear();
  }

  Var newLoopVar() { return fn_.addVar("i" + std::to_string(loops_++), DType::I64); }
  Var newLocal(const std::string& prefix, DType t = DType::F32);
  // Loops over every dim of `shape` larger than 1 (size-1 dims index 0), with
  // `inner` building the innermost statements.
  // `order` (optional) lists the dims outermost first.
  std::vector<StmtRef> loopNest(const std::vector<int64_t>& shape,
                                const std::function<std::vector<StmtRef>(const Index&)>& inner,
                                const std::vector<size_t>& order = {});

  // Lowering errors are sticky: the first one wins and lowering returns it.
  void fail(Status s) {
    if (error_.isOk()) error_ = std::move(s);
  }
  const Status& error() const { return error_; }

 private:
  ExprRef inlineProducer(const Node& producer, ValueId v, const Index& idx);

  const Graph& body_;
  LoopFunc& fn_;
  const Schedule& sched_;
  std::map<int32_t, std::shared_ptr<const TensorData>> outerConstants_;
  // Constants widened from f16/bf16 at a kernel's entry (constantOf), kept so
  // that pointers into them stay valid while the kernel is lowered.
  mutable std::map<int32_t, std::shared_ptr<const TensorData>> widened_;
  std::map<int32_t, BufferId> bound_;
  std::optional<std::pair<ValueId, ExprRef>> subst_;
  // valueAt results by (value, index expressions), so a value used twice at one
  // position is one shared subtree, not two: inlining a diamond stays linear.
  // The keys hold the index expressions so their addresses are never reused.
  std::map<std::pair<int32_t, std::vector<ExprRef>>, ExprRef> memo_;
  std::map<std::string, int> localCounts_;
  std::map<std::string, BufferId> tables_;
  OutputSink outputSink_;
  int loops_ = 0;
  Status error_;
};

// A loop whose kind the template chose: the default schedule steps leave it as it is.
inline StmtRef pinnedLoop(const Var& v, int64_t extent, ForKind kind, std::vector<StmtRef> body) {
  StmtRef s = forLoop(v, extent, std::move(body));
  s->forKind = kind;
  s->pinned = true;
  return s;
}

// ---- elementwise family (compute_elementwise.cpp) ----
// The index into an operand of `inShape` that broadcasts to `out` (ONNX multidirectional).
Index broadcastIndex(const Index& out, const std::vector<int64_t>& inShape);
bool broadcastsTo(const std::vector<int64_t>& in, const std::vector<int64_t>& out);
// What operands an elementwise row takes (the dtypes column of its row in
// elementwise_rows.cpp), in compute types: Float (f32, f64), Numeric (floats
// and integers, one type), NumericBase (Pow: the exponent may differ),
// Integer, Bool (logic), Same (comparisons: any one type), Any (the row checks).
enum class OperandKinds : uint8_t { Float, Numeric, NumericBase, Integer, Bool, Same, Any };
bool hasElementwiseRow(std::string_view op);
OperandKinds elementwiseKinds(std::string_view op);
// Ops of two operands (Add, Sub, ..., comparisons, And, Or, Xor).
bool isBinaryElementwise(const std::string& op);
// The op applied to already-indexed operands (in their compute types), for
// output `output` of n (Dropout's mask is output 1).
ExprRef elementwiseExpr(KernelBuilder& kb, const Node& n, const std::vector<ExprRef>& args,
                        size_t output = 0);
// Whether lowering handles values of dtype t in or out of n: the dtypes column
// of n's row in codegen's dispatch table (compute_table.cpp).
bool computeHandlesDType(const Node& n, DType t);
// The index into input `input` of elementwise op n at output position `out`:
// numpy broadcasting, or the per-axis scale / zero point of (De)QuantizeLinear.
Index elementwiseOperandIndex(KernelBuilder& kb, const Node& n, size_t input, const Index& out);
// Operand shapes of elementwise ops that do not broadcast numpy-style.
Status checkElementwiseOperands(const Graph& g, const Node& n);

// ---- index-map family (compute_shape.cpp) ----
// The position in the data input that output position `out` reads: the row
// of n in the dispatch table (compute_table.cpp), one of these.
Index indexMapSource(KernelBuilder& kb, const Node& n, const Index& out);
Index identitySource(KernelBuilder& kb, const Node& n, const Index& out);
Index flatSource(KernelBuilder& kb, const Node& n, const Index& out);  // Reshape, Squeeze, ...
Index transposeSource(KernelBuilder& kb, const Node& n, const Index& out);
Index sliceSource(KernelBuilder& kb, const Node& n, const Index& out);
// Concat and constant Pad: the value at `out`, a select over in-bounds reads.
ExprRef concatValue(KernelBuilder& kb, const Node& n, const Index& out);
ExprRef padValue(KernelBuilder& kb, const Node& n, const Index& out);

// ---- reductions (compute_matmul.cpp, compute_softmax.cpp) ----
std::vector<StmtRef> lowerMatMul(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink);
std::vector<StmtRef> lowerGemm(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink);
std::vector<StmtRef> lowerSoftmax(KernelBuilder& kb, const Node& n,
                                  const KernelBuilder::Sink& sink);
// ReduceSum / ReduceMean / ReduceMax / ReduceMin over any axes, and
// LayerNormalization (compute_reduce.cpp).
std::vector<StmtRef> lowerReduce(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink);
std::vector<StmtRef> lowerLayerNorm(KernelBuilder& kb, const Node& n,
                                    const KernelBuilder::Sink& sink);
// GlobalAveragePool / GlobalMaxPool: a row reduction over the spatial dims (compute_reduce.cpp).
std::vector<StmtRef> lowerGlobalPool(KernelBuilder& kb, const Node& n,
                                     const KernelBuilder::Sink& sink);

// ---- windows (compute_conv.cpp) ----
// Conv (NC + any spatial dims, groups, strides, pads, dilations, auto_pad, bias).
std::vector<StmtRef> lowerConv(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink);
// MaxPool (Y only) and AveragePool (count_include_pad, ceil_mode, auto_pad).
std::vector<StmtRef> lowerPool(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink);

// ---- NCHW<b>c layout ops, domain fuselens (compute_layout.cpp) ----
// ToNCHWc / FromNCHWc: Injective (inlined); ConvNCHWc, MaxPoolNCHWc,
// AveragePoolNCHWc: Reduction; anything else of the domain: Unsupported.
// ToNCHWc / FromNCHWc at output position `out`.
ExprRef layoutTransformValue(KernelBuilder& kb, const Node& n, const Index& out);
// ConvNCHWc and the blocked pools: a window nest vectorized over the channel block.
std::vector<StmtRef> lowerLayoutOp(KernelBuilder& kb, const Node& n,
                                   const KernelBuilder::Sink& sink);

}  // namespace fuselens
