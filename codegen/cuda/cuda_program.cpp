// Building a CudaProgram (see cuda_program.h): the graph is specialized to its
// input types, walked in topological order, cut into segments at If and Loop
// nodes, and every body built as a program of its own, recursively.
#include "codegen/cuda/cuda_program.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "codegen/cuda/cuda_program_builder.h"
#include "codegen/driver/specialize.h"
#include "core/ops/registry.h"

namespace fuselens {
namespace cudaprog {
namespace {

// A fused group past a control-flow node was typed by the optimizer with the
// If's unrefined (symbolic) types: its body is re-specialized to the types its
// inputs have now (a folded Shape is a constant of static type), and its
// outputs take the body's.
Status refineFusedGroup(Graph& s, NodeId id) {
  const Node& n = s.node(id);
  if (!n.body || n.body->inputs().size() != n.inputs.size() ||
      n.body->outputs().size() != n.outputs.size())
    return Status::ok();
  bool stale = false;
  for (ValueId v : n.outputs) stale |= !s.value(v).type.staticShape();
  for (size_t i = 0; i < n.inputs.size(); ++i)
    stale |=
        n.inputs[i].valid() && s.value(n.inputs[i]).type != n.body->value(n.body->inputs()[i]).type;
  if (!stale) return Status::ok();
  std::vector<TensorType> types;
  for (ValueId v : n.inputs) {
    if (!v.valid()) return Status::ok();
    types.push_back(s.value(v).type);
  }
  auto body = specializeGraph(*n.body, types);
  if (!body) return Status::error(body.message(), describeNode(n));
  for (size_t i = 0; i < n.outputs.size(); ++i)
    s.mutableValue(n.outputs[i]).type = body->value(body->outputs()[i]).type;
  s.mutableNode(id).body = std::make_shared<const Graph>(std::move(*body));
  return Status::ok();
}

// A fused group all of whose inputs are constants now (a Shape folded past
// an If) is folded like any node (specialize.h): its body, fed the constants,
// must fold to constant outputs. Decides an If's condition at export time.
Expected<bool> foldFusedGroup(Graph& s, NodeId id) {
  const Node& n = s.node(id);
  if (!n.body || n.body->inputs().size() != n.inputs.size() ||
      n.body->outputs().size() != n.outputs.size())
    return false;
  Graph body = *n.body;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!n.inputs[i].valid() || !s.value(n.inputs[i]).constant) return false;
    const Value& v = s.value(n.inputs[i]);
    body.replaceAllUses(body.inputs()[i], body.addConstant(v.name + "_folded", v.constant));
  }
  if (!foldKnownValues(body, CompileOptions{})) return false;
  for (ValueId o : body.outputs())
    if (!body.value(o).constant) return false;
  std::vector<ValueId> outs = n.outputs;
  for (size_t i = 0; i < outs.size(); ++i)
    s.replaceAllUses(outs[i],
                     s.addConstant(s.value(outs[i]).name, body.value(body.outputs()[i]).constant));
  s.removeNode(id);
  return true;
}

}  // namespace

int Builder::internalSlot(CudaProgram& p, const std::string& name, const TensorType& t) {
  CudaSlot slot;
  slot.name = name;
  slot.dtype = t.dtype;
  slot.shape = *t.staticShape();
  slot.bytes = *t.numElements() * int64_t(dtypeSize(t.dtype));
  slot.kind = CudaSlot::Kind::Internal;
  slot.index = plan_.slotBytes;
  plan_.slotBytes += aligned(std::max<int64_t>(slot.bytes, 1));
  p.slots.push_back(slot);
  return int(p.slots.size()) - 1;
}

Expected<int> Builder::slotFor(Scope& sc, ValueId v) {
  if (auto it = sc.slotOf.find(v.index); it != sc.slotOf.end()) return it->second;
  const Value& val = sc.s.value(v);
  if (!val.constant)
    return Status::error("internal: value '" + val.name + "' is read before it is computed",
                         "CUDA program");
  const TensorData& t = *val.constant;
  CudaSlot slot{val.name,
                t.dtype,
                t.shape,
                int64_t(t.bytes.size()),
                CudaSlot::Kind::Constant,
                aligned(int64_t(plan_.weights.size()))};
  plan_.weights.resize(size_t(slot.index) + t.bytes.size());
  if (!t.bytes.empty()) std::memcpy(plan_.weights.data() + slot.index, t.bytes.data(), slot.bytes);
  sc.p->slots.push_back(slot);
  sc.slotOf[v.index] = int(sc.p->slots.size()) - 1;
  return sc.slotOf[v.index];
}

Expected<std::shared_ptr<CudaProgram>> Builder::build(const Graph& g,
                                                      const std::vector<TensorType>& types,
                                                      bool fold, bool* rejected) {
  if (rejected) *rejected = false;
  auto spec = specializeGraph(g, types);
  if (spec && fold)
    if (Status st = foldKnownValues(*spec, CompileOptions{}); !st)
      spec = Status::error("graph '" + g.name +
                           "' cannot take these input types: " + st.diagnostic().str());
  if (!spec) {
    if (rejected) *rejected = true;
    return spec.status();
  }
  Scope sc{std::move(*spec), std::make_shared<CudaProgram>(), {}};
  sc.p->id = nextProgram_++;
  sc.p->graph = g.name;
  for (size_t i = 0; i < sc.s.inputs().size(); ++i) {
    const Value& v = sc.s.value(sc.s.inputs()[i]);
    auto shape = v.type.staticShape();
    if (!shape)
      return Status::error("input '" + v.name + "' of graph '" + g.name + "' has the type " +
                               v.type.str() + ": bind its dims (--dim/--shape) to run on CUDA",
                           "CUDA program");
    sc.p->slots.push_back({v.name, v.type.dtype, *shape,
                           *v.type.numElements() * int64_t(dtypeSize(v.type.dtype)),
                           CudaSlot::Kind::Input, int64_t(i)});
    sc.p->inputs.push_back(int(sc.p->slots.size()) - 1);
    sc.slotOf[v.id.index] = sc.p->inputs.back();
  }
  auto order = sc.s.topoOrder();
  if (!order) return Status::error("graph '" + g.name + "' has a cycle", "CUDA program");
  // Values read after position i: what a segment ending there must hand on.
  std::vector<NodeId> segment;
  // Types refine as the walk goes (an If's outputs take its branches' types):
  // every node is re-inferred, and what its inputs decide folds.
  for (size_t i = 0; i < order->size(); ++i) {
    if (cancel_.cancelled()) return Status::error("export cancelled");
    if (!sc.s.hasNode((*order)[i])) continue;
    const Node& n = sc.s.node((*order)[i]);
    if (!isControlFlow(n)) {
      auto folded = foldNodeInPlace(sc.s, n.id, CompileOptions{});
      if (!folded) return folded.status();
      if (*folded) continue;
      auto fused = foldFusedGroup(sc.s, n.id);
      if (!fused) return fused.status();
      if (*fused) continue;
      FL_RETURN_IF_ERROR(refineFusedGroup(sc.s, n.id));
      segment.push_back(n.id);
      continue;
    }
    std::set<int32_t> later;
    for (size_t j = i; j < order->size(); ++j)
      if (sc.s.hasNode((*order)[j]))
        for (ValueId v : sc.s.node((*order)[j]).inputs)
          if (v.valid()) later.insert(v.index);
    FL_RETURN_IF_ERROR(flush(sc, segment, later));
    segment.clear();
    Status st = n.op == "If"     ? addIf(sc, n, later)
                : n.op == "Loop" ? addLoop(sc, n)
                                 : addScan(sc, n);
    if (!st && sinkRequested_) {
      // Start this graph again with the nodes after the If in both branches.
      sinkRequested_ = false;
      ++sinks_;
      FL_RETURN_IF_ERROR(sinkIntoBranches(sc.s, n.id));
      std::vector<TensorType> now;
      for (ValueId v : sc.s.inputs()) now.push_back(sc.s.value(v).type);
      return build(sc.s, now, fold, rejected);
    }
    FL_RETURN_IF_ERROR(st);
  }
  FL_RETURN_IF_ERROR(flush(sc, segment, {}));
  for (ValueId v : sc.s.outputs()) {
    auto slot = slotFor(sc, v);
    if (!slot) return slot.status();
    if (fold && sc.p->slots[size_t(*slot)].runShape)  // a body's output feeds more kernels
      return runShapeRead(sc, v, "graph '" + g.name + "'");
    sc.p->outputs.push_back(*slot);
  }
  return sc.p;
}

Status Builder::flush(Scope& sc, const std::vector<NodeId>& nodes, const std::set<int32_t>& later) {
  if (nodes.empty()) return Status::ok();
  Graph seg;
  seg.name = sc.s.name + "_segment" + std::to_string(nextSegment_);
  std::map<int32_t, ValueId> inSeg;
  std::vector<int> ins;
  for (NodeId id : nodes) {
    const Node& n = sc.s.node(id);
    std::vector<ValueId> inputs;
    for (ValueId v : n.inputs) {
      if (!v.valid()) {
        inputs.push_back(ValueId{});
        continue;
      }
      if (auto it = inSeg.find(v.index); it == inSeg.end()) {
        const Value& val = sc.s.value(v);
        if (val.constant) {
          inSeg[v.index] = seg.addConstant(val.name, val.constant);
        } else {
          auto slot = slotFor(sc, v);
          if (!slot) return slot.status();
          if (sc.p->slots[size_t(*slot)].runShape) return runShapeRead(sc, v, describeNode(n));
          inSeg[v.index] = seg.addInput(val.name, val.type);
          ins.push_back(*slot);
        }
        seg.mutableValue(inSeg[v.index]).layout = val.layout;
      }
      inputs.push_back(inSeg[v.index]);
    }
    const Node& copy = seg.node(copyNodeInto(seg, sc.s, n, inputs));
    for (size_t i = 0; i < n.outputs.size(); ++i) inSeg[n.outputs[i].index] = copy.outputs[i];
  }
  std::vector<ValueId> outputs;
  std::vector<int> outs;
  std::set<int32_t> produced;
  for (NodeId id : nodes)
    for (ValueId v : sc.s.node(id).outputs) produced.insert(v.index);
  for (NodeId id : nodes)
    for (ValueId v : sc.s.node(id).outputs) {
      if (!later.count(v.index) && !sc.s.isGraphOutput(v)) continue;
      const Value& val = sc.s.value(v);
      if (!val.type.staticShape()) {
        typesUnfit_ = true;
        return Status::error("value '" + val.name + "' has the type " + val.type.str() +
                                 ", known only at run time (it depends on data, not on the "
                                 "bound input shapes); the CUDA bundle plans every shape ahead "
                                 "of time",
                             describeNode(sc.s.node(val.producer)));
      }
      outputs.push_back(inSeg[v.index]);
      outs.push_back(internalSlot(*sc.p, val.name, val.type));
      sc.slotOf[v.index] = outs.back();
    }
  if (outputs.empty()) return Status::ok();  // nothing it computes is read
  seg.setOutputs(outputs);
  const std::string prefix = "p" + std::to_string(sc.p->id) + "s" + std::to_string(nextSegment_++);
  auto launches = planCudaLaunches(seg, nullptr, {}, cancel_, prefix + "_");
  if (!launches) return launches.status();
  CudaStep step;
  step.kind = CudaStep::Kind::Kernels;
  step.segment = std::make_shared<const Graph>(std::move(seg));
  step.node = "segment " + prefix;
  step.in = std::move(ins);
  step.out = std::move(outs);
  step.weightsBase = aligned(int64_t(plan_.weights.size()));
  plan_.weights.resize(size_t(step.weightsBase));
  plan_.weights.insert(plan_.weights.end(), launches->weights.begin(), launches->weights.end());
  plan_.arenaBytes = std::max(plan_.arenaBytes, launches->memory.blockBytes());
  const std::string prelude = cudaPrelude();
  const std::string& src = launches->module.source;
  const size_t at = src.find(prelude);
  plan_.source += at == std::string::npos ? src : src.substr(at + prelude.size());
  step.plan = std::make_shared<const CudaLaunchPlan>(std::move(*launches));
  sc.p->steps.push_back(std::move(step));
  return Status::ok();
}
}  // namespace cudaprog

namespace {

using cudaprog::Builder;
using cudaprog::isControlFlow;

// The programs reachable from p, children first.
void collect(const CudaProgram& p, std::vector<const CudaProgram*>& out) {
  for (const CudaStep& st : p.steps)
    for (const CudaBranch& b : st.branches)
      if (b.program) collect(*b.program, out);
  out.push_back(&p);
}

}  // namespace

bool cudaNeedsProgram(const Graph& g) {
  for (NodeId id : g.nodeIds())
    if (isControlFlow(g.node(id))) return true;
  return false;
}

Expected<CudaProgramPlan> planCudaProgram(const Graph& g, const Progress& progress,
                                          const CancelToken& cancel) {
  CudaProgramPlan plan;
  report(progress, 0.1, "CUDA: control flow as host steps, bodies specialized");
  plan.source = "// CUDA C generated by FuseLens for graph @" + g.name +
                " (control flow: host steps between kernel segments)\n" + cudaPrelude();
  Builder b(plan, cancel);
  std::vector<TensorType> types;
  for (ValueId v : g.inputs()) types.push_back(g.value(v).type);
  auto top = b.build(g, types, /*fold=*/false, nullptr);
  if (!top) return top.status();
  plan.top = *top;
  collect(*plan.top, plan.programs);
  for (const CudaProgram* p : plan.programs)
    for (const CudaStep& st : p->steps)
      if (st.plan) plan.kernels += int64_t(st.plan->module.kernels.size());
  for (int s : plan.top->inputs) {
    const CudaSlot& slot = plan.top->slots[size_t(s)];
    plan.inputs.push_back({slot.name, slot.dtype, slot.shape, slot.bytes});
  }
  for (size_t i = 0; i < plan.top->outputs.size(); ++i) {
    const CudaSlot& slot = plan.top->slots[size_t(plan.top->outputs[i])];
    // The graph's own output names (a slot may be named after an inner value).
    plan.outputs.push_back({g.value(g.outputs()[i]).name, slot.dtype, slot.shape, slot.bytes});
  }
  return plan;
}

}  // namespace fuselens
