// Shared pieces of the control-flow drivers (see driver_cf.h).
#include <algorithm>
#include <cstring>

#include "codegen/driver/driver_cf.h"
#include "core/ops/registry.h"

namespace fuselens::cfdriver {
namespace {

std::string plural(size_t kernels) {
  return std::to_string(kernels) + (kernels == 1 ? " kernel" : " kernels");
}

}  // namespace

std::string place(const Node& n) { return describeNode(n); }

size_t formalInputs(const Node& n) {
  size_t k = implicitInputNames(n).size();
  return n.inputs.size() >= k ? n.inputs.size() - k : 0;
}

namespace {

// The body with every implicit input that is a constant of the outer graph
// bound as a constant of its own (implicitAt keeps the others): the body's
// kernels then read weights in place and pack them at compile time (an LSTM's
// W and R, a conv's filters) instead of taking them as run-time inputs, which
// each run copied in.
std::shared_ptr<const Graph> bindOuterConstants(const Graph& outer, const Node& n,
                                                std::shared_ptr<const Graph> g, Body& b) {
  std::vector<std::pair<ValueId, std::shared_ptr<const TensorData>>> fixed;
  std::vector<size_t> keep;
  for (size_t i = 0; i < b.implicitAt.size(); ++i) {
    ValueId v = n.inputs[b.implicitAt[i]];
    if (v.valid() && outer.value(v).constant)
      fixed.emplace_back(g->inputs()[b.formal + i], outer.value(v).constant);
    else
      keep.push_back(b.implicitAt[i]);
  }
  if (fixed.empty()) return g;
  auto bound = std::make_shared<Graph>(*g);
  for (auto& [in, data] : fixed) {
    std::string name = bound->value(in).name;
    bound->mutableValue(in).name = name + ".outer";
    ValueId c = bound->addConstant(name, data);
    bound->replaceAllUses(in, c);
    bound->removeValue(in);
  }
  b.implicitAt = std::move(keep);
  return bound;
}

}  // namespace

Expected<Body> bindBody(const Graph& outer, const Node& n, const char* attr, size_t formal,
                        const CompileOptions& opts) {
  const Attribute* a = n.attrs.find(attr);
  if (!a || !std::holds_alternative<std::shared_ptr<const Graph>>(*a) ||
      !std::get<std::shared_ptr<const Graph>>(*a))
    return Status::error(std::string("has no ") + attr + " graph", place(n));
  auto g = std::get<std::shared_ptr<const Graph>>(*a);
  if (g->inputs().size() < formal)
    return Status::error(std::string("the ") + attr + " takes " +
                             std::to_string(g->inputs().size()) + " inputs, fewer than the " +
                             std::to_string(formal) + " the node gives it",
                         place(n));
  Body b;
  b.attr = attr;
  b.formal = formal;
  auto names = implicitInputNames(n);
  size_t firstImplicit = n.inputs.size() - std::min(names.size(), n.inputs.size());
  for (size_t i = formal; i < g->inputs().size(); ++i) {
    const std::string& name = g->value(g->inputs()[i]).name;
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end() || firstImplicit + size_t(it - names.begin()) >= n.inputs.size())
      return Status::error(std::string("the ") + attr + " reads the outer value '" + name +
                               "', which is not among the node's implicit inputs",
                           place(n));
    b.implicitAt.push_back(firstImplicit + size_t(it - names.begin()));
  }
  // A driver's outputs are codegen's work only when nothing inside falls back.
  CompileOptions inner = opts;
  inner.fallback = false;
  b.graph = std::make_shared<SpecializedGraph>(bindOuterConstants(outer, n, g, b), inner, 16,
                                               /*fold=*/true, bodyPipeline());
  return b;
}

Status precompile(const Graph& g, const Node& n, Body& body,
                  const std::vector<TensorType>& formalTypes) {
  const Graph& bg = body.graph->graph();
  std::vector<TensorType> types = formalTypes;
  for (size_t i = 0; i < body.implicitAt.size(); ++i) {
    ValueId v = n.inputs[body.implicitAt[i]];
    types.push_back(v.valid() ? g.value(v).type : bg.value(bg.inputs()[body.formal + i]).type);
  }
  std::string dynamicOne;
  for (size_t i = 0; i < types.size(); ++i) {
    // The outer type is what the node feeds; the body's declaration is the fallback.
    const TensorType& declared = bg.value(bg.inputs()[i]).type;
    if (!types[i].staticShape() && declared.staticShape() && declared.dtype == types[i].dtype)
      types[i] = declared;
    if (!types[i].staticShape() && dynamicOne.empty())
      dynamicOne = "'" + bg.value(bg.inputs()[i]).name + "' is " + types[i].str();
  }
  if (!dynamicOne.empty()) {
    body.loopIr = "//   " + body.attr + " (graph '" + bg.name +
                  "'): compiled at run time for the input types it meets (" + dynamicOne + ")\n";
    return Status::ok();
  }
  bool typesRejected = false;
  auto mod = body.graph->moduleFor(types, &typesRejected);
  if (!mod && typesRejected) {
    // These types may never reach the body (an If branch not taken for them, or
    // a node inside one): it compiles when the run gets there, and fails then.
    body.loopIr = "//   " + body.attr + " (graph '" + bg.name +
                  "'): compiled at run time; the types known at compile time do not fit it (" +
                  mod.diagnostic().str() + ")\n";
    return Status::ok();
  }
  if (!mod)
    return Status::error("the " + body.attr + " cannot be compiled: " + mod.diagnostic().str(),
                         place(n));
  body.compiled = true;
  body.kernels = (*mod)->kernels().size();
  // The body's listing, indented under the driver (nested bodies indent further).
  body.loopIr = "//   " + body.attr + " (graph '" + bg.name + "'), " + plural(body.kernels) + ":\n";
  bool lineStart = true;
  for (char c : (*mod)->loopIrText()) {
    if (lineStart && c != '\n') body.loopIr += "  ";
    body.loopIr += c;
    lineStart = c == '\n';
  }
  if (body.loopIr.back() != '\n') body.loopIr += "\n";
  return Status::ok();
}

Expected<std::vector<const TensorData*>> spreadInputs(
    const Node& n, const std::vector<const TensorData*>& present) {
  std::vector<const TensorData*> all(n.inputs.size(), nullptr);
  size_t next = 0;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!n.inputs[i].valid()) continue;
    if (next >= present.size())
      return Status::error("internal: the driver got " + std::to_string(present.size()) +
                               " inputs, fewer than the node's present ones",
                           place(n));
    all[i] = present[next++];
  }
  return all;
}

Expected<std::vector<TensorData>> runBody(const Node& n, Body& body,
                                          const std::vector<const TensorData*>& formal,
                                          const std::vector<const TensorData*>& all,
                                          const CancelToken& cancel) {
  std::vector<const TensorData*> in = formal;
  in.resize(body.formal, nullptr);
  for (size_t at : body.implicitAt) in.push_back(all[at]);
  auto outs = body.graph->run(in, cancel);
  if (!outs) return Status::error("in the " + body.attr + ": " + outs.diagnostic().str(), place(n));
  return outs;
}

std::string bodiesLoopIr(const std::vector<const Body*>& bodies) {
  std::string s;
  for (const Body* b : bodies) s += b->loopIr;
  return s;
}

std::string kernelCounts(const std::vector<const Body*>& bodies) {
  std::string s;
  for (const Body* b : bodies)
    s += (s.empty() ? "" : " + ") + (b->compiled ? std::to_string(b->kernels) : std::string("?"));
  return s + (bodies.size() == 1 && bodies[0]->kernels == 1 ? " kernel" : " kernels");
}

std::string counted(size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

int64_t intAt(const TensorData& t, int64_t i) {
  switch (t.dtype) {
    case DType::I64:
      return t.data<int64_t>()[i];
    case DType::I32:
      return t.data<int32_t>()[i];
    default:
      return int64_t(t.at(i));
  }
}

bool truthy(const TensorData& t) { return t.numel() > 0 && t.at(0) != 0; }

TensorData sliceAt(const TensorData& x, int64_t axis, int64_t index) {
  std::vector<int64_t> shape = x.shape;
  int64_t len = shape[size_t(axis)];
  shape.erase(shape.begin() + axis);
  TensorData o(x.dtype, shape);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < int64_t(x.rank()); ++i) {
    if (i < axis) outer *= x.shape[size_t(i)];
    if (i > axis) inner *= x.shape[size_t(i)];
  }
  size_t es = dtypeSize(x.dtype);
  for (int64_t o2 = 0; o2 < outer && inner > 0; ++o2)  // empty: pointers may be null
    std::memcpy(o.bytes.data() + o2 * inner * es,
                x.bytes.data() + ((o2 * len + index) * inner) * es, size_t(inner) * es);
  return o;
}

Expected<TensorData> stack(const Node& n, const std::vector<TensorData>& parts, int64_t axis,
                           bool reverse) {
  const TensorData& p0 = parts.at(0);
  int64_t r = int64_t(p0.rank()) + 1;
  if (axis < -r || axis >= r)
    return Status::error("scan output axis " + std::to_string(axis) + " is out of range", place(n));
  if (axis < 0) axis += r;
  std::vector<int64_t> shape = p0.shape;
  int64_t T = int64_t(parts.size());
  shape.insert(shape.begin() + axis, T);
  TensorData o(p0.dtype, shape);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < int64_t(p0.rank()); ++i)
    (i < axis ? outer : inner) *= p0.shape[size_t(i)];
  size_t es = dtypeSize(p0.dtype);
  for (int64_t t = 0; t < T; ++t) {
    const TensorData& p = parts[size_t(reverse ? T - 1 - t : t)];
    if (p.shape != p0.shape || p.dtype != p0.dtype)
      return Status::error("per-iteration outputs change shape (" + formatShape(p0.shape) +
                               " then " + formatShape(p.shape) + "), so they cannot be stacked",
                           place(n));
    for (int64_t o2 = 0; o2 < outer && inner > 0; ++o2)
      std::memcpy(o.bytes.data() + ((o2 * T + t) * inner) * es, p.bytes.data() + o2 * inner * es,
                  size_t(inner) * es);
  }
  return o;
}

TensorType sliceType(const TensorType& t, int64_t axis) {
  if (!t.rankKnown || axis < 0 || axis >= int64_t(t.rank())) {
    TensorType u;
    u.dtype = t.dtype;
    u.rankKnown = false;
    return u;
  }
  TensorType s = t;
  s.shape.erase(s.shape.begin() + axis);
  return s;
}

}  // namespace fuselens::cfdriver
