// Folding what concrete input types decide (see specialize.h). Bodies are
// compiled unoptimized (codegen does not use passes/), and exporters fill them
// with shape arithmetic: Shape -> Gather -> Concat -> ConstantOfShape / Reshape.
// Once the input types are concrete those values are known, and lowering needs
// them as constants (a Reshape target, a ConstantOfShape shape). So, in
// topological order, after inferring each node:
//   Shape / Size of a static value       -> its dims / element count (metadata)
//   ConstantOfShape of a constant shape  -> the filled tensor (data movement)
//   a small node whose inputs are all constants -> runs once as compiled code
//                                            (a one-node compileGraph)
// A node whose one-node compile fails is left for the real compile to report.
#include <algorithm>
#include <cstring>

#include "codegen/driver/specialize.h"
#include "core/ops/registry.h"

namespace fuselens {
namespace {

// Larger constant-only results stay kernels: folding is for shape arithmetic.
constexpr int64_t kMaxFoldElements = int64_t(1) << 16;

bool hasBody(const Node& n) {
  if (n.body) return true;
  for (const auto& [name, a] : n.attrs.all())
    if (std::holds_alternative<std::shared_ptr<const Graph>>(a)) return true;
  return false;
}

std::optional<TensorData> foldShape(const Graph& g, const Node& n) {
  if (n.inputs.empty() || !n.inputs[0].valid()) return std::nullopt;
  auto shape = g.value(n.inputs[0]).type.staticShape();
  if (!shape) return std::nullopt;
  if (n.op == "Size") {
    int64_t numel = 1;
    for (int64_t d : *shape) numel *= d;
    return TensorData::fromVector(DType::I64, {}, std::vector<int64_t>{numel});
  }
  int64_t r = int64_t(shape->size());
  int64_t start = n.attrs.getInt("start", 0), end = n.attrs.getInt("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  std::vector<int64_t> dims(shape->begin() + start, shape->begin() + end);
  return TensorData::fromVector(DType::I64, {int64_t(dims.size())}, dims);
}

std::optional<TensorData> foldConstantOfShape(const Graph& g, const Node& n) {
  const TensorData& shapeT = *g.value(n.inputs[0]).constant;
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < shapeT.numel(); ++i) {
    if (shapeT.dtype != DType::I64) return std::nullopt;
    shape.push_back(shapeT.data<int64_t>()[i]);
    if (shape.back() < 0) return std::nullopt;
  }
  auto value = n.attrs.getTensor("value");
  TensorData out(value ? value->dtype : DType::F32, shape);
  if (out.numel() > kMaxFoldElements) return std::nullopt;
  if (!value) return out;  // zeros
  size_t es = dtypeSize(out.dtype);
  if (value->bytes.size() < es) return std::nullopt;
  for (int64_t i = 0; i < out.numel(); ++i)
    std::memcpy(out.bytes.data() + size_t(i) * es, value->bytes.data(), es);
  return out;
}

// Runs n once on its constant inputs as a one-node compiled graph.
std::optional<std::vector<TensorData>> foldByCompiling(const Graph& g, const Node& n,
                                                       const CompileOptions& opts) {
  Graph one = graphOfNode(g, n, [&](Graph& alone, size_t i) {
    const Value& v = g.value(n.inputs[i]);
    return alone.addConstant(v.name, v.constant);
  });
  one.name = "fold";
  CompileOptions strict = opts;
  strict.fallback = false;
  auto mod = compileGraph(one, strict);
  if (!mod) return std::nullopt;
  auto run = (*mod)->run({});
  if (!run) return std::nullopt;
  std::vector<TensorData> result;
  for (ValueId v : one.outputs()) {
    if (size_t(v.index) >= run->size() || !(*run)[v.index]) return std::nullopt;
    result.push_back(std::move(*(*run)[v.index]));
  }
  return result;
}

std::optional<std::vector<TensorData>> foldNode(const Graph& g, const Node& n,
                                                const CompileOptions& opts) {
  if (hasBody(n) || n.outputs.empty()) return std::nullopt;
  if (n.domain.empty() && (n.op == "Shape" || n.op == "Size")) {
    auto t = foldShape(g, n);
    if (!t) return std::nullopt;
    return std::vector<TensorData>{std::move(*t)};
  }
  bool anyInput = false;
  for (ValueId v : n.inputs) {
    if (!v.valid()) continue;
    if (!g.value(v).constant) return std::nullopt;
    anyInput = true;
  }
  if (!anyInput) return std::nullopt;
  int64_t elements = 0;
  for (ValueId v : n.outputs) {
    auto count = g.value(v).type.numElements();
    if (!count) return std::nullopt;
    elements += *count;
  }
  if (elements > kMaxFoldElements) return std::nullopt;
  if (n.domain.empty() && n.op == "ConstantOfShape" && n.inputs[0].valid()) {
    auto t = foldConstantOfShape(g, n);
    if (!t) return std::nullopt;
    return std::vector<TensorData>{std::move(*t)};
  }
  return foldByCompiling(g, n, opts);
}

}  // namespace

Status foldKnownValues(Graph& g, const CompileOptions& opts) {
  auto order = g.topoOrder();
  if (!order) return Status::error("graph '" + g.name + "' has a cycle");
  for (NodeId id : *order) {
    auto folded = foldNodeInPlace(g, id, opts);
    if (!folded) return folded.status();
  }
  return Status::ok();
}

Expected<bool> foldNodeInPlace(Graph& g, NodeId id, const CompileOptions& opts) {
  FL_RETURN_IF_ERROR(inferNodeTypes(g, id));
  auto folded = foldNode(g, g.node(id), opts);
  if (!folded || folded->size() != g.node(id).outputs.size()) return false;
  std::vector<ValueId> outs = g.node(id).outputs;
  for (size_t i = 0; i < outs.size(); ++i) {
    ValueId c = g.addConstant(g.value(outs[i]).name,
                              std::make_shared<const TensorData>(std::move((*folded)[i])));
    g.replaceAllUses(outs[i], c);
  }
  g.removeNode(id);
  return true;
}

}  // namespace fuselens
