// The op registry table, built once from the op-family files, and the
// graph-level queries over it: pattern kinds, shape inference of a node and
// of a whole graph, and the "node 'x' (Op)" place used by every diagnostic.
#include "core/ops/registry.h"

#include <cassert>

#include "core/ops/accumulation.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_values.h"

namespace fuselens {
namespace {

// "ai.onnx" and "" name the same (default) domain.
std::string_view canonicalDomain(std::string_view d) { return d == "ai.onnx" ? "" : d; }

bool isFused(const Node& n) { return n.op == kFusedOp && n.domain == kFuseLensDomain; }

// How a compiled run executes each op: one row per op with a lowering, its
// compute class, and whether it is a view (its output is its data input's
// bytes under another shape: aliased, no launch outside a group). Dropout is
// no view: its optional mask output is computed, so it runs as a kernel.
struct ExecRow {
  std::string_view domain, op;
  ComputeClass compute;
  Launch launch = Launch::Kernel;
};
using CC = ComputeClass;
constexpr Launch kView = Launch::View;
constexpr ExecRow kExecTable[] = {
    // elementwise: arithmetic, comparisons, logic
    {"", "Add", CC::Elementwise},
    {"", "Sub", CC::Elementwise},
    {"", "Mul", CC::Elementwise},
    {"", "Div", CC::Elementwise},
    {"", "Max", CC::Elementwise},
    {"", "Min", CC::Elementwise},
    {"", "Pow", CC::Elementwise},
    {"", "Sum", CC::Elementwise},
    {"", "Mean", CC::Elementwise},
    {"", "Mod", CC::Elementwise},
    {"", "BitShift", CC::Elementwise},
    {"", "Equal", CC::Elementwise},
    {"", "Less", CC::Elementwise},
    {"", "LessOrEqual", CC::Elementwise},
    {"", "Greater", CC::Elementwise},
    {"", "GreaterOrEqual", CC::Elementwise},
    {"", "Not", CC::Elementwise},
    {"", "And", CC::Elementwise},
    {"", "Or", CC::Elementwise},
    {"", "Xor", CC::Elementwise},
    {"", "Where", CC::Elementwise},
    {"", "IsNaN", CC::Elementwise},
    {"", "IsInf", CC::Elementwise},
    // elementwise: math and activations
    {"", "Relu", CC::Elementwise},
    {"", "Sigmoid", CC::Elementwise},
    {"", "Tanh", CC::Elementwise},
    {"", "Exp", CC::Elementwise},
    {"", "Neg", CC::Elementwise},
    {"", "Abs", CC::Elementwise},
    {"", "Sqrt", CC::Elementwise},
    {"", "Reciprocal", CC::Elementwise},
    {"", "Erf", CC::Elementwise},
    {"", "Gelu", CC::Elementwise},
    {"", "LeakyRelu", CC::Elementwise},
    {"", "Clip", CC::Elementwise},
    {"", "PRelu", CC::Elementwise},
    {"", "Log", CC::Elementwise},
    {"", "Sin", CC::Elementwise},
    {"", "Cos", CC::Elementwise},
    {"", "Tan", CC::Elementwise},
    {"", "Atan", CC::Elementwise},
    {"", "Floor", CC::Elementwise},
    {"", "Ceil", CC::Elementwise},
    {"", "Round", CC::Elementwise},
    {"", "Sign", CC::Elementwise},
    {"", "Softplus", CC::Elementwise},
    {"", "Softsign", CC::Elementwise},
    {"", "Selu", CC::Elementwise},
    {"", "Elu", CC::Elementwise},
    {"", "Celu", CC::Elementwise},
    {"", "ThresholdedRelu", CC::Elementwise},
    {"", "HardSigmoid", CC::Elementwise},
    {"", "HardSwish", CC::Elementwise},
    {"", "Mish", CC::Elementwise},
    // elementwise: casts, inference Dropout, quantization
    {"", "Cast", CC::Elementwise},
    {"", "CastLike", CC::Elementwise},
    {"", "Dropout", CC::Elementwise},
    {"", "QuantizeLinear", CC::Elementwise},
    {"", "DequantizeLinear", CC::Elementwise},
    // index maps; the five views among them alias outside a group
    {"", "Reshape", CC::IndexMap, kView},
    {"", "Identity", CC::IndexMap, kView},
    {"", "Flatten", CC::IndexMap, kView},
    {"", "Squeeze", CC::IndexMap, kView},
    {"", "Unsqueeze", CC::IndexMap, kView},
    {"", "Transpose", CC::IndexMap},
    {"", "Slice", CC::IndexMap},
    // injective: a select over reads (BatchNormalization in inference mode)
    {"", "Concat", CC::Injective},
    {"", "Pad", CC::Injective},
    {"", "BatchNormalization", CC::Injective},
    {"", "Gather", CC::Injective},
    {"", "GatherElements", CC::Injective},
    {"", "GatherND", CC::Injective},
    {"", "Split", CC::Injective},
    {"", "Tile", CC::Injective},
    {"", "Expand", CC::Injective},
    {"", "DepthToSpace", CC::Injective},
    {"", "SpaceToDepth", CC::Injective},
    {"", "Resize", CC::Injective},
    {"", "Size", CC::Injective},
    {"", "Shape", CC::Injective},
    {"", "OneHot", CC::Injective},
    {"", "ConstantOfShape", CC::Injective},
    // reductions: contractions, row ops, reduces
    {"", "MatMul", CC::Reduction},
    {"", "Gemm", CC::Reduction},
    {"", "Einsum", CC::Reduction},
    {"", "Softmax", CC::Reduction},
    {"", "LogSoftmax", CC::Reduction},
    {"", "LayerNormalization", CC::Reduction},
    {"", "InstanceNormalization", CC::Reduction},
    {"", "GroupNormalization", CC::Reduction},
    {"", "ReduceSum", CC::Reduction},
    {"", "ReduceMean", CC::Reduction},
    {"", "ReduceMax", CC::Reduction},
    {"", "ReduceMin", CC::Reduction},
    {"", "ReduceProd", CC::Reduction},
    {"", "ReduceSumSquare", CC::Reduction},
    {"", "ReduceL1", CC::Reduction},
    {"", "ReduceL2", CC::Reduction},
    {"", "ReduceLogSum", CC::Reduction},
    {"", "ReduceLogSumExp", CC::Reduction},
    // reductions: scans, scatters, recurrences
    {"", "ArgMax", CC::Reduction},
    {"", "ArgMin", CC::Reduction},
    {"", "CumSum", CC::Reduction},
    {"", "TopK", CC::Reduction},
    {"", "ScatterND", CC::Reduction},
    {"", "ScatterElements", CC::Reduction},
    {"", "RNN", CC::Reduction},
    {"", "GRU", CC::Reduction},
    {"", "LSTM", CC::Reduction},
    // reductions over a window
    {"", "Conv", CC::Reduction},
    {"", "ConvTranspose", CC::Reduction},
    {"", "MaxPool", CC::Reduction},
    {"", "AveragePool", CC::Reduction},
    {"", "GlobalAveragePool", CC::Reduction},
    {"", "GlobalMaxPool", CC::Reduction},
    // the layout pass's NCHWc ops
    {kFuseLensDomain, "ToNCHWc", CC::Injective},
    {kFuseLensDomain, "FromNCHWc", CC::Injective},
    {kFuseLensDomain, "ConvNCHWc", CC::Reduction},
    {kFuseLensDomain, "MaxPoolNCHWc", CC::Reduction},
    {kFuseLensDomain, "AveragePoolNCHWc", CC::Reduction},
};

bool hasStaticShape(const Graph& g, ValueId v) {
  const TensorType& t = g.value(v).type;
  return t.rankKnown && t.isStatic();
}

// Inference may know less than an earlier source (value_info, a pass): keep a
// known dim where the inferred one is unknown, never the other way round.
TensorType mergeTypes(const TensorType& inferred, const TensorType& existing) {
  if (!inferred.rankKnown) {
    if (!existing.rankKnown) return inferred;
    TensorType t = existing;
    t.dtype = inferred.dtype;
    return t;
  }
  TensorType t = inferred;
  if (existing.rankKnown && existing.rank() == inferred.rank())
    for (size_t i = 0; i < t.rank(); ++i)
      if (!t.shape[i].isStatic() && t.shape[i].symbol.empty()) t.shape[i] = existing.shape[i];
  return t;
}

}  // namespace

namespace {
thread_local Accumulation currentAccumulation = Accumulation::Wide;
}  // namespace

Accumulation eagerAccumulation() { return currentAccumulation; }
ScopedAccumulation::ScopedAccumulation(Accumulation a) : saved_(currentAccumulation) {
  currentAccumulation = a;
}
ScopedAccumulation::~ScopedAccumulation() { currentAccumulation = saved_; }

std::string_view patternKindName(PatternKind k) {
  switch (k) {
    case PatternKind::ElemWise:
      return "ElemWise";
    case PatternKind::Broadcast:
      return "Broadcast";
    case PatternKind::Injective:
      return "Injective";
    case PatternKind::CommReduce:
      return "CommReduce";
    case PatternKind::OutEWiseFusable:
      return "OutEWiseFusable";
    case PatternKind::Opaque:
      return "Opaque";
  }
  return "Opaque";
}

const OpRegistry& OpRegistry::instance() {
  // Built on first use; C++ makes the static initialization thread-safe.
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry;
    ops::registerElementwiseOps(*r);
    ops::registerMatMulOps(*r);
    ops::registerReduceOps(*r);
    ops::registerShapeOps(*r);
    ops::registerSqueezeOps(*r);
    ops::registerConcatSplitOps(*r);
    ops::registerSlicePadOps(*r);
    ops::registerGatherScatterOps(*r);
    ops::registerShapeCastOps(*r);
    ops::registerConvOps(*r);
    ops::registerNormOps(*r);
    ops::registerRnnOps(*r);
    ops::registerControlFlowOps(*r);
    ops::registerQuantOps(*r);
    ops::registerResizeOps(*r);
    ops::registerLayoutOps(*r);
    ops::addAttributeSchemas(*r);
    for (const ExecRow& row : kExecTable)
      for (OpInfo& op : r->ops_)
        if (op.domain == row.domain && op.name == row.op)
          op.launch = row.launch, op.compute = row.compute;
    return r;
  }();
  return *registry;
}

const OpInfo* OpRegistry::find(std::string_view domain, std::string_view name) const {
  domain = canonicalDomain(domain);
  for (const OpInfo& op : ops_)
    if (op.name == name && op.domain == domain) return &op;
  return nullptr;
}

std::vector<const OpInfo*> OpRegistry::all() const {
  std::vector<const OpInfo*> out;
  for (const OpInfo& op : ops_) out.push_back(&op);
  return out;
}

void OpRegistry::add(OpInfo info) {
  info.domain = std::string(canonicalDomain(info.domain));
  assert(!find(info.domain, info.name) && "op registered twice");
  ops_.push_back(std::move(info));
}

void OpRegistry::setAttributes(std::string_view domain, std::string_view name,
                               std::vector<AttrSpec> attrs) {
  domain = canonicalDomain(domain);
  for (OpInfo& op : ops_)
    if (op.name == name && op.domain == domain) {
      op.attrs = std::move(attrs);
      return;
    }
  assert(false && "attribute schema for an op that is not registered");
}

std::string_view attrKindName(AttrKind k) {
  static constexpr std::string_view names[] = {"INT",    "FLOAT",   "STRING", "INTS",
                                               "FLOATS", "STRINGS", "TENSOR", "GRAPH"};
  return names[size_t(k)];
}

AttrKind attrKindOf(const Attribute& a) {
  static_assert(std::variant_size_v<Attribute> == 8, "AttrKind follows Attribute's alternatives");
  return AttrKind(a.index());
}

Status checkAttributeKinds(const Node& n) {
  const OpInfo* info = OpRegistry::instance().find(n.domain, n.op);
  if (!info || !info->attrs) return Status::ok();
  for (const AttrSpec& spec : *info->attrs) {
    const Attribute* a = n.attrs.find(spec.name);
    if (!a || attrKindOf(*a) == spec.kind) continue;
    auto article = [](AttrKind k) {
      return k == AttrKind::Int || k == AttrKind::Ints ? "an " : "a ";
    };
    return ops::nodeError(n, "attribute '" + spec.name + "' must be " + article(spec.kind) +
                                 std::string(attrKindName(spec.kind)) + ", but the model gives " +
                                 article(attrKindOf(*a)) +
                                 std::string(attrKindName(attrKindOf(*a))));
  }
  return Status::ok();
}

std::vector<std::string> unregisteredExecOps() {
  std::vector<std::string> out;
  for (const ExecRow& row : kExecTable)
    if (!OpRegistry::instance().find(row.domain, row.op))
      out.push_back((row.domain.empty() ? "" : std::string(row.domain) + ".") +
                    std::string(row.op));
  return out;
}

bool isViewOp(const Node& n) {
  const OpInfo* info = OpRegistry::instance().find(n.domain, n.op);
  return info && info->launch == Launch::View;
}

bool needsKernel(const Graph& g, const Node& n) {
  if (!isViewOp(n) || n.outputs.size() != 1 || n.inputs.empty() || !n.inputs[0].valid())
    return true;
  for (ValueId v : n.inputs)
    if (v.valid() && !hasStaticShape(g, v)) return true;
  return !hasStaticShape(g, n.outputs[0]);
}

PatternKind patternKindOf(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (isFused(n)) return PatternKind::Opaque;
  const OpInfo* info = OpRegistry::instance().find(n.domain, n.op);
  if (!info || !info->eager) return PatternKind::Opaque;
  if (info->kind != PatternKind::ElemWise || n.outputs.empty()) return info->kind;
  // An elementwise op reading an input of another shape is a broadcast; when a
  // rank is unknown we cannot prove it is not, so we say Broadcast.
  const TensorType& out = g.value(n.outputs[0]).type;
  for (ValueId in : n.inputs) {
    if (!in.valid()) continue;
    const TensorType& t = g.value(in).type;
    if (!t.rankKnown || !out.rankKnown || t.shape != out.shape) return PatternKind::Broadcast;
  }
  return PatternKind::ElemWise;
}

Status inferNodeTypes(Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (isFused(n)) return Status::ok();  // a group's types come from its body, set by the pass
  const OpInfo* info = OpRegistry::instance().find(n.domain, n.op);
  if (!info || !info->infer) return Status::ok();
  InferContext ctx{n, {}, {}};
  for (ValueId in : n.inputs) {
    if (!in.valid()) {
      TensorType none;
      none.rankKnown = false;
      ctx.inputTypes.push_back(none);
      ctx.constInputs.push_back(nullptr);
      continue;
    }
    const Value& v = g.value(in);
    ctx.inputTypes.push_back(v.type);
    ctx.constInputs.push_back(v.constant.get());
  }
  auto types = info->infer(ctx);
  if (!types) return types.status();
  if (types->size() > n.outputs.size())
    return ops::nodeError(n, "shape inference gave " + std::to_string(types->size()) +
                                 " outputs but the node has " + std::to_string(n.outputs.size()));
  std::vector<ValueId> outs = n.outputs;
  for (size_t i = 0; i < types->size(); ++i) {
    Value& v = g.mutableValue(outs[i]);
    v.type = mergeTypes((*types)[i], v.type);
  }
  return Status::ok();
}

Status inferGraphTypes(Graph& g) {
  auto order = g.topoOrder();
  if (!order) return Status::error("the graph has a cycle, so its types cannot be inferred");
  ops::ShapeValues shapes;  // Reshape targets computed from symbolic shapes
  for (NodeId id : *order) {
    FL_RETURN_IF_ERROR(inferNodeTypes(g, id));
    shapes.visit(g, id);
  }
  return Status::ok();
}

std::vector<std::string> implicitInputNames(const Node& n) {
  const Attribute* a = n.attrs.find("implicit_inputs");
  if (a && std::holds_alternative<std::vector<std::string>>(*a))
    return std::get<std::vector<std::string>>(*a);
  return {};
}

std::string describeNode(const Node& n) {
  std::string who = n.name.empty() ? "#" + std::to_string(n.id.index) : "'" + n.name + "'";
  return "node " + who + " (" + n.op + ")";
}

}  // namespace fuselens
