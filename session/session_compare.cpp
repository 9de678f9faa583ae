// Session::compare and the compare report's sentences: every kernel-boundary
// tensor of the compiled run against its origin in the eager run.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <set>

#include "core/compare/storage_floor.h"
#include "session/compared_runs.h"
#include "session/reference_runs.h"
#include "session/session.h"

namespace fuselens {

std::string formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

bool CompareReport::allWithin() const {
  return std::all_of(rows.begin(), rows.end(), [](const CompareRow& r) { return r.judgedOk(); });
}

size_t CompareReport::fallbackCount() const {
  return size_t(
      std::count_if(rows.begin(), rows.end(), [](const CompareRow& r) { return r.fallback; }));
}

const CompareRow* CompareReport::firstDivergent() const {
  for (const auto& r : rows)
    if (!r.judgedOk()) return &r;
  return nullptr;
}

std::string CompareReport::verdict() const {
  const std::string how = options.describe();
  if (const CompareRow* first = firstDivergent()) {
    const std::string where =
        "FAIL: " + first->name + " (from " + first->producer + ") is the first ";
    if (!first->rounding) return where + "tensor out of tolerance " + how;
    if (first->verdict == NumericVerdict::Wrong)
      return where + "wrong tensor (" + first->rounding->why + ")";
    return where + "tensor beyond rounding (" + formatNumber(first->rounding->ratio) +
           "× the expected error)";
  }
  const size_t judged = rows.size() - fallbackCount();
  return "PASS: " + std::to_string(judged) + " tensor" + (judged == 1 ? "" : "s") +
         (options.rounding() ? " within rounding " : " within tolerance ") + how;
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
  if (row.rounding) return verdictText(*row.rounding);
  if (!m.shapeMatch) return "SHAPE MISMATCH";
  if (m.withinTolerance()) return "ok";
  return "OUT (" + std::to_string(m.outOfTolerance + m.nanMismatch) + " elems)";
}

double errorRatio(const CompareRow& row) {
  if (row.rounding) {
    const RoundingCheck& c = *row.rounding;
    return !c.shapeMatch || c.nonFiniteMismatch > 0 || c.integerMismatch > 0 ? INFINITY : c.ratio;
  }
  const TensorMetrics& m = row.metrics;
  return !m.shapeMatch || m.nanMismatch > 0 ? INFINITY : m.toleranceStat;
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
  const bool rounding = rep.options.rounding();
  const std::string within = rounding ? "within rounding" : "within tolerance";
  if (const IsolatedRow* first = rep.firstKernelDiffering()) {
    std::string how =
        first->own ? verdictText(*first->own) : "max abs " + formatNumber(first->isolated.maxAbs);
    return "FAIL: kernel " + first->kernel +
           (rounding ? " is the first whose own error is beyond rounding"
                     : " is the first that differs") +
           " when fed eager inputs (" + first->name + ", " + how + ")";
  }
  if (!rep.allWithin())
    return "FAIL: every kernel is " + within + " alone; the end-to-end error accumulated upstream";
  return "PASS: every kernel " + within + " when fed eager inputs " + rep.options.describe();
}

namespace {

// Graph inputs, then the outputs of nodes in topological order.
std::vector<ValueId> boundaryOrder(const Graph& g) {
  std::vector<ValueId> order(g.inputs().begin(), g.inputs().end());
  const std::vector<NodeId> nodes = g.topoOrder().value();  // verified acyclic after every pass
  for (NodeId n : nodes)
    for (ValueId v : g.node(n).outputs) order.push_back(v);
  return order;
}

// Tensors of reference-fallback kernels, and views (nodes without a kernel) of them.
std::set<int32_t> fallbackValues(const Graph& g, const std::vector<KernelInfo>& kernels) {
  std::set<int32_t> fallback, kernelNodes;
  for (const KernelInfo& k : kernels) {
    kernelNodes.insert(k.node.index);
    if (k.fallback)
      for (ValueId v : k.outputs) fallback.insert(v.index);
  }
  const std::vector<NodeId> nodes = g.topoOrder().value();
  for (NodeId n : nodes) {
    if (kernelNodes.count(n.index)) continue;
    const Node& node = g.node(n);
    if (std::any_of(node.inputs.begin(), node.inputs.end(),
                    [&](ValueId in) { return in.valid() && fallback.count(in.index); }))
      for (ValueId v : node.outputs) fallback.insert(v.index);
  }
  return fallback;
}

}  // namespace

Expected<Session::ComparedRuns> Session::compareRuns(
    const std::map<std::string, TensorData>& inputs, const CompareOptions& opts, double referenceAt,
    double compiledAt, const Progress& progress, const CancelToken& cancel) {
  if (!model_) return Status::error("no model is open");
  if (!compiled_) FL_RETURN_IF_ERROR(compile({}, progress, cancel));
  report(progress, referenceAt,
         opts.rounding() ? "eager reference runs (f32, f64, f32 sums)" : "eager reference run");
  auto refs = runReferences(model_->graph, inputs, opts.rounding(), cancel);
  if (!refs) return refs.status();
  report(progress, compiledAt, "compiled run");
  auto compiled = runPerturbed(*compiled_, inputs, perturbations, cancel);
  if (!compiled) return compiled.status();
  return ComparedRuns{std::move(*refs), std::move(*compiled)};
}

void judgeRow(CompareRow& row, const Graph& original, const ReferenceRuns& refs, ValueId origin,
              const TensorData& got, const Layout& layout, const CompareOptions& opts,
              DType storage) {
  const TensorData* ref = refs.eager.find(origin);
  assert(ref && "callers judge only values the eager run has");
  // A value the layout pass blocked is compared with its plain origin unblocked.
  const Layout& refLayout = original.value(origin).layout;
  row.metrics = compareTensors(*ref, refLayout, got, layout, opts.tolerance, opts.stat);
  row.verdict = verdictOf(row.metrics);
  const TensorData *exact = refs.exactOf(origin), *sample = refs.sampleOf(origin);
  if (opts.rounding() && exact && sample) {
    row.rounding = checkRoundingStored(storage, *exact, *sample, refLayout, got, layout, opts, ref);
    row.verdict = row.rounding->verdict;
  }
}

CompareReport compareBoundaries(const Graph& original, const Graph& g, const ReferenceRuns& refs,
                                const std::vector<std::optional<TensorData>>& compiled,
                                const std::vector<KernelInfo>& kernels,
                                const CompareOptions& opts) {
  CompareReport rep;
  rep.options = opts;
  rep.referenceNote = refs.note;
  const std::set<int32_t> fallback = fallbackValues(g, kernels);
  // A reduced-precision run (--precision) is judged against one ulp of its storage.
  const DType storage = storagePrecision(original, g);
  for (ValueId v : boundaryOrder(g)) {
    if (size_t(v.index) >= compiled.size() || !compiled[v.index]) continue;
    const Value& val = g.value(v);
    const TensorData* ref = refs.eager.find(val.origin);
    if (!ref) continue;
    CompareRow row;
    row.value = v;
    row.name = val.name;
    row.producer = val.producer.valid() ? g.node(val.producer).name : "graph input";
    row.isGraphOutput = g.isGraphOutput(v);
    row.fallback = fallback.count(v.index) != 0;
    judgeRow(row, original, refs, val.origin, *compiled[v.index], val.layout, opts, storage);
    rep.rows.push_back(std::move(row));
  }
  rep.fallbackKernels = fallbackKernelList(kernels);
  return rep;
}

Expected<std::vector<std::optional<TensorData>>> runPerturbed(
    const CompiledModule& module, const std::map<std::string, TensorData>& inputs,
    const Perturbations& perturbations, const CancelToken& cancel) {
  FL_RETURN_IF_ERROR(checkPerturbations(perturbations, module.kernels()));
  std::optional<ScopedAfterKernelHook> faults;
  if (!perturbations.empty()) faults.emplace(perturbationHook(perturbations));
  return module.run(inputs, cancel);
}

Expected<CompareReport> Session::compare(const std::map<std::string, TensorData>& inputs,
                                         const CompareOptions& opts, const Progress& progress,
                                         const CancelToken& cancel) {
  auto runs = compareRuns(inputs, opts, 0.1, 0.5, progress, cancel);
  if (!runs) return runs.status();
  CompareReport rep = compareBoundaries(model_->graph, finalGraph(), runs->refs, runs->compiled,
                                        compiled_->kernels(), opts);
  report(progress, 1.0, "compared");
  report_ = rep;
  keepRuns(std::move(*runs));
  return rep;
}

}  // namespace fuselens
