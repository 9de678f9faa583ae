// Session::compare and the compare report's sentences: every kernel-boundary
// tensor of the compiled run against its origin in the eager run.
#include <algorithm>
#include <cstdio>
#include <set>

#include "core/eager/interpreter.h"
#include "session/session.h"

namespace fuselens {

std::string formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

bool CompareReport::allWithin() const {
  return std::all_of(rows.begin(), rows.end(),
                     [](const CompareRow& r) { return r.fallback || r.metrics.withinTolerance(); });
}

size_t CompareReport::fallbackCount() const {
  return size_t(
      std::count_if(rows.begin(), rows.end(), [](const CompareRow& r) { return r.fallback; }));
}

const CompareRow* CompareReport::firstDivergent() const {
  for (const auto& r : rows)
    if (!r.fallback && !r.metrics.withinTolerance()) return &r;
  return nullptr;
}

std::string CompareReport::verdict() const {
  char tol[96];
  std::snprintf(tol, sizeof tol, "(atol %g, rtol %g)", tolerance.atol, tolerance.rtol);
  if (const CompareRow* first = firstDivergent())
    return "FAIL: " + first->name + " (from " + first->producer +
           ") is the first tensor out of tolerance " + tol;
  const size_t judged = rows.size() - fallbackCount();
  return "PASS: " + std::to_string(judged) + " tensor" + (judged == 1 ? "" : "s") +
         " within tolerance " + tol;
}

std::string CompareReport::fallbackNote() const {
  const size_t n = fallbackCount();
  if (n == 0) return {};
  return "NOTE: " + std::to_string(n) + " tensor" + (n == 1 ? " " : "s ") + kFallbackLabel +
         ", not compared: kernels " + fallbackKernels;
}

std::string rowStatus(const CompareRow& row) {
  const TensorMetrics& m = row.metrics;
  if (row.fallback) return "fallback";  // the eager kernel's own tensor: never "ok"
  if (!m.shapeMatch) return "SHAPE MISMATCH";
  if (m.withinTolerance()) return "ok";
  return "OUT (" + std::to_string(m.outOfTolerance + m.nanMismatch) + " elems)";
}

std::string producerLabel(const CompareRow& row, const Graph& g) {
  if (g.hasValue(row.value)) {
    const NodeId p = g.value(row.value).producer;
    if (p.valid() && g.hasNode(p)) {
      const Node& n = g.node(p);
      if (n.op == kFusedOp && n.domain == kFuseLensDomain)
        return "group " + std::to_string(n.attrs.getInt("group", -1));
    }
  }
  return row.producer;
}

std::string isolatedVerdict(const IsolatedReport& rep) {
  if (const IsolatedRow* first = rep.firstKernelDiffering())
    return "FAIL: kernel " + first->kernel + " is the first that differs when fed eager inputs (" +
           first->name + ", max abs " + formatNumber(first->isolated.maxAbs) + ")";
  if (!rep.allWithin())
    return "FAIL: every kernel is within tolerance alone; the end-to-end error accumulated "
           "upstream";
  char tol[96];
  std::snprintf(tol, sizeof tol, "(atol %g, rtol %g)", rep.tolerance.atol, rep.tolerance.rtol);
  return std::string("PASS: every kernel within tolerance when fed eager inputs ") + tol;
}

Expected<CompareReport> Session::compare(const std::map<std::string, TensorData>& inputs,
                                         const Tolerance& tol, const Progress& progress,
                                         const CancelToken& cancel) {
  if (!model_) return Expected<CompareReport>::error("no model is open");
  if (!compiled_) FL_RETURN_IF_ERROR(compile({}, progress, cancel));
  report(progress, 0.1, "eager reference run");
  auto eager = runEager(model_->graph, inputs, {}, {}, cancel);
  if (!eager) return eager.status();
  report(progress, 0.5, "compiled run");
  auto compiled = compiled_->run(inputs, cancel);
  if (!compiled) return compiled.status();

  const Graph& g = finalGraph();
  CompareReport rep;
  rep.tolerance = tol;
  std::vector<ValueId> order;  // graph inputs, then outputs of nodes in topological order
  for (ValueId v : g.inputs()) order.push_back(v);
  const std::vector<NodeId> nodes = g.topoOrder().value();  // verified acyclic after every pass
  for (NodeId n : nodes)
    for (ValueId v : g.node(n).outputs) order.push_back(v);
  // Tensors of reference-fallback kernels, and views (nodes without a kernel) of them.
  std::set<int32_t> fallback, kernelNodes;
  for (const KernelInfo& k : compiled_->kernels()) {
    kernelNodes.insert(k.node.index);
    if (k.fallback)
      for (ValueId v : k.outputs) fallback.insert(v.index);
  }
  for (NodeId n : nodes) {
    if (kernelNodes.count(n.index)) continue;
    const Node& node = g.node(n);
    if (std::any_of(node.inputs.begin(), node.inputs.end(),
                    [&](ValueId in) { return in.valid() && fallback.count(in.index); }))
      for (ValueId v : node.outputs) fallback.insert(v.index);
  }
  for (ValueId v : order) {
    if (size_t(v.index) >= compiled->size() || !(*compiled)[v.index]) continue;
    const Value& val = g.value(v);
    const TensorData* ref = eager->find(val.origin);
    if (!ref) continue;
    CompareRow row;
    row.value = v;
    row.name = val.name;
    row.producer = val.producer.valid() ? g.node(val.producer).name : "graph input";
    row.isGraphOutput = g.isGraphOutput(v);
    row.fallback = fallback.count(v.index) != 0;
    // A value the layout pass blocked is compared with its plain origin unblocked.
    row.metrics = compareTensors(*ref, model_->graph.value(val.origin).layout,
                                 *(*compiled)[v.index], val.layout, tol);
    rep.rows.push_back(std::move(row));
  }
  rep.fallbackKernels = fallbackKernelList(compiled_->kernels());
  report(progress, 1.0, "compared");
  report_ = rep;
  return rep;
}

}  // namespace fuselens
