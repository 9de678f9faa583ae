// The reference runs behind rounding verdicts (reference_runs.h): whole-model
// runs for end-to-end checks, and a kernel's own imported nodes run alone for
// isolated checks.
#include "session/reference_runs.h"

#include <algorithm>
#include <set>

namespace fuselens {

const TensorData* ReferenceRuns::exactOf(ValueId v) const {
  return exact ? exact->find(v) : eager.find(v);
}

const TensorData* ReferenceRuns::sampleOf(ValueId v) const {
  return sample ? sample->find(v) : eager.find(v);
}

Expected<ReferenceRuns> runReferences(const Graph& original,
                                      const std::map<std::string, TensorData>& inputs,
                                      bool rounding, const CancelToken& cancel) {
  auto eager = runEager(original, inputs, {}, {}, cancel);
  if (!eager) return eager.status();
  ReferenceRuns runs;
  runs.eager = std::move(*eager);
  if (!rounding) return runs;
  EagerOptions wide;
  wide.widenToF64 = true;
  if (auto exact = runEager(original, inputs, wide, {}, cancel))
    runs.exact = std::move(*exact);
  else if (cancel.cancelled())
    return exact.status();
  else
    runs.note = "the f64 reference run failed (" + exact.message() +
                "), so the f32 reference stands in for the exact one";
  EagerOptions narrow;
  narrow.accumulation = Accumulation::Storage;
  if (auto sample = runEager(original, inputs, narrow, {}, cancel))
    runs.sample = std::move(*sample);
  else if (cancel.cancelled())
    return sample.status();
  else
    runs.note += std::string(runs.note.empty() ? "" : "; ") + "the f32-summing run failed (" +
                 sample.message() + "), so the f32 reference stands in for it";
  return runs;
}

namespace {

// The set of nodes as a graph fed from `eager` at its boundary.
Expected<Graph> localGraph(const Graph& original, const std::vector<NodeId>& ordered,
                           const std::vector<ValueId>& outputs, const EagerResult& eager,
                           std::map<std::string, TensorData>& feeds) {
  Graph local;
  std::map<int32_t, ValueId> mapped;  // imported value index -> local value
  auto source = [&](ValueId v) -> Expected<ValueId> {
    if (auto it = mapped.find(v.index); it != mapped.end()) return it->second;
    const Value& val = original.value(v);
    ValueId m;
    if (val.constant) {
      m = local.addConstant(val.name, val.constant);
    } else {
      const TensorData* t = eager.find(v);
      if (!t) return Status::error("'" + val.name + "' has no eager tensor to feed");
      m = local.addInput(val.name, t->type());
      feeds[val.name] = *t;
    }
    mapped[v.index] = m;
    return m;
  };
  for (NodeId id : ordered) {
    const Node& n = original.node(id);
    std::vector<ValueId> ins;
    for (ValueId v : n.inputs) {
      if (!v.valid()) {
        ins.push_back(v);
        continue;
      }
      auto m = source(v);
      if (!m) return m.status();
      ins.push_back(*m);
    }
    std::vector<OutputSpec> outs;
    for (ValueId v : n.outputs) outs.push_back({original.value(v).name, original.value(v).type});
    NodeId copy = local.addNode(n.op, ins, outs, n.attrs, n.name);
    Node& c = local.mutableNode(copy);
    c.domain = n.domain;
    c.body = n.body;
    for (size_t i = 0; i < n.outputs.size(); ++i)
      mapped[n.outputs[i].index] = local.node(copy).outputs[i];
  }
  std::vector<ValueId> outs;
  for (ValueId v : outputs) {
    auto m = source(v);  // an output no node of the set makes is its own input (a layout copy)
    if (!m) return m.status();
    outs.push_back(*m);
  }
  local.setOutputs(outs);
  local.markAsOriginal();
  return local;
}

}  // namespace

Expected<LocalReference> runLocalReference(const Graph& original, std::vector<NodeId> nodes,
                                           const std::vector<ValueId>& outputs,
                                           const EagerResult& eager, const CancelToken& cancel) {
  std::set<int32_t> members;
  for (NodeId n : nodes)
    if (original.hasNode(n)) members.insert(n.index);
  for (ValueId v : outputs)
    if (NodeId p = original.value(v).producer; p.valid() && !original.value(v).constant)
      members.insert(p.index);
  std::vector<NodeId> ordered;
  const std::vector<NodeId> all = original.topoOrder().value();  // the imported graph is acyclic
  for (NodeId n : all)
    if (members.count(n.index)) ordered.push_back(n);
  std::map<std::string, TensorData> feeds;
  auto local = localGraph(original, ordered, outputs, eager, feeds);
  if (!local) return local.status();
  EagerOptions wide, narrow;
  wide.widenToF64 = true;
  narrow.accumulation = Accumulation::Storage;
  auto exact = runEager(*local, feeds, wide, {}, cancel);
  if (!exact) return exact.status();
  auto sample = runEager(*local, feeds, narrow, {}, cancel);
  if (!sample) return sample.status();
  LocalReference r;
  for (ValueId v : local->outputs()) {
    r.exact.push_back(*exact->find(v));
    r.sample.push_back(*sample->find(v));
  }
  return r;
}

}  // namespace fuselens
