// Building a CudaProgram (see cuda_program.h): the graph is specialized to its
// input types, walked in topological order, cut into segments at If and Loop
// nodes, and every body built as a program of its own, recursively.
#include "codegen/cuda/cuda_program.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "codegen/driver/driver_cf.h"
#include "core/ops/registry.h"

namespace fuselens {
namespace {

constexpr int64_t kAlign = 256;

int64_t aligned(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

bool isControlFlow(const Node& n) {
  return (n.domain.empty() || n.domain == "ai.onnx") && (n.op == "If" || n.op == "Loop");
}

// A one-element integer or bool tensor read at export time (a folded trip
// count or condition).
int64_t scalarOf(const TensorData& t) { return t.numel() > 0 ? cfdriver::intAt(t, 0) : 0; }

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

class Builder {
 public:
  Builder(CudaProgramPlan& plan, const CancelToken& cancel) : plan_(plan), cancel_(cancel) {}

  // `rejected`: set when g's shape inference refuses these types (a branch
  // that may never run with them), as opposed to a failure to compile.
  Expected<std::shared_ptr<CudaProgram>> build(const Graph& g, const std::vector<TensorType>& types,
                                               bool fold, bool* rejected);

 private:
  struct Scope {
    Graph s;  // the specialized copy
    std::shared_ptr<CudaProgram> p;
    std::map<int32_t, int> slotOf;  // value index -> slot
  };

  int internalSlot(CudaProgram& p, const std::string& name, const TensorType& t);
  Expected<int> slotFor(Scope& sc, ValueId v);
  Status flush(Scope& sc, const std::vector<NodeId>& nodes, const std::set<int32_t>& later);
  Status addIf(Scope& sc, const Node& n, const std::set<int32_t>& later);
  Status addLoop(Scope& sc, const Node& n);
  Expected<int> loopControl(Scope& sc, const Node& n, size_t i, int64_t* known);
  Status runShapeRead(Scope& sc, ValueId v, const std::string& where);
  Expected<CudaBranch> branch(Scope& sc, const Node& n, const char* attr, size_t formal,
                              std::vector<TensorType> formalTypes, std::vector<int> formalSlots,
                              bool allowRefusal);

  CudaProgramPlan& plan_;
  const CancelToken& cancel_;
  int nextProgram_ = 0, nextSegment_ = 0;
  // Set when a value's type stays dynamic for the bound shapes: in a branch
  // whose condition is decided at run time, that branch is refused, not the
  // export (shape inference gave up on types the branch may never meet).
  bool typesUnfit_ = false;
  // An If whose branches differ in an output's shape, read by later kernels,
  // asks the walk to sink those kernels into its branches (at most kMaxSinks
  // times per export: each doubles what follows).
  static constexpr int kMaxSinks = 6;
  bool sinkRequested_ = false;
  int sinks_ = 0;
};

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
    Status st = n.op == "If" ? addIf(sc, n, later) : addLoop(sc, n);
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
    std::vector<OutputSpec> outs;
    for (ValueId v : n.outputs) outs.push_back({sc.s.value(v).name, sc.s.value(v).type});
    NodeId m = seg.addNode(n.op, inputs, outs, n.attrs, n.name);
    Node& copy = seg.mutableNode(m);
    copy.domain = n.domain;
    copy.body = n.body;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      inSeg[n.outputs[i].index] = copy.outputs[i];
      seg.mutableValue(copy.outputs[i]).layout = sc.s.value(n.outputs[i]).layout;
    }
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

// The body `attr` of n as a program: formal inputs of the given types in
// `formalSlots`, then the outer values it reads.
Expected<CudaBranch> Builder::branch(Scope& sc, const Node& n, const char* attr, size_t formal,
                                     std::vector<TensorType> formalTypes,
                                     std::vector<int> formalSlots, bool allowRefusal) {
  auto body = cfdriver::bindBody(n, attr, formal, CompileOptions{});
  if (!body) return body.status();
  CudaBranch b;
  b.inputs = std::move(formalSlots);
  // An outer constant is a constant inside too, so the body's shape arithmetic
  // on it (Slice bounds, Reshape targets) folds.
  Graph g = body->graph->graph();
  for (size_t i = 0; i < body->implicitAt.size(); ++i) {
    const Value& outer = sc.s.value(n.inputs[body->implicitAt[i]]);
    auto slot = slotFor(sc, outer.id);
    if (!slot) return slot.status();
    if (sc.p->slots[size_t(*slot)].runShape) return runShapeRead(sc, outer.id, describeNode(n));
    b.inputs.push_back(*slot);
    formalTypes.push_back(outer.type);
    if (outer.constant)
      g.replaceAllUses(g.inputs()[formal + i],
                       g.addConstant(outer.name + "_outer", outer.constant));
  }
  bool rejected = false;
  const bool outerUnfit = typesUnfit_;
  typesUnfit_ = false;
  auto p = build(g, formalTypes, /*fold=*/true, &rejected);
  rejected |= typesUnfit_;
  // A refusal ends here; an error carries the flag up to the enclosing branch.
  typesUnfit_ = outerUnfit || (!p && !allowRefusal && rejected);
  if (!p && rejected && allowRefusal) {
    b.refusal = "the " + std::string(attr) + " of " + describeNode(n) +
                " does not fit the bound input types (" + p.message() +
                "); export with the shapes this branch takes";
    return b;
  }
  if (!p) return Status::error("in the " + std::string(attr) + ": " + p.message(), describeNode(n));
  b.program = std::move(*p);
  return b;
}

Status Builder::addIf(Scope& sc, const Node& n, const std::set<int32_t>& later) {
  if (n.inputs.empty() || !n.inputs[0].valid())
    return Status::error("needs its condition input", describeNode(n));
  auto cond = slotFor(sc, n.inputs[0]);
  if (!cond) return cond.status();
  CudaStep step;
  step.kind = CudaStep::Kind::If;
  step.node = describeNode(n);
  step.cond = *cond;
  const CudaSlot& c = sc.p->slots[size_t(*cond)];
  if (c.runShape) return runShapeRead(sc, n.inputs[0], describeNode(n));
  if (c.bytes != int64_t(dtypeSize(c.dtype)))
    return Status::error("the condition must hold one element", describeNode(n));
  // A condition the export already knows decides which branch is built.
  int known = -1;
  if (c.kind == CudaSlot::Kind::Constant)
    known = scalarOf(*sc.s.value(n.inputs[0]).constant) != 0 ? 0 : 1;
  const char* attrs[2] = {"then_branch", "else_branch"};
  for (int i = 0; i < 2; ++i) {
    if (known >= 0 && known != i) {
      step.branches.push_back(
          {nullptr,
           "internal: the " + std::string(attrs[i]) + " of " + describeNode(n) + " is never taken",
           {}});
      continue;
    }
    auto b = branch(sc, n, attrs[i], 0, {}, {}, known < 0);
    if (!b) return b.status();
    step.branches.push_back(std::move(*b));
  }
  // The node's outputs have the types of the branches that can run; where
  // they differ, the run decides (a graph output may be such a value).
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const CudaSlot* type = nullptr;
    bool differ = false;
    for (const CudaBranch& b : step.branches) {
      if (!b.program) continue;
      if (b.program->outputs.size() != n.outputs.size())
        return Status::error("a branch has " + std::to_string(b.program->outputs.size()) +
                                 " outputs, the node " + std::to_string(n.outputs.size()),
                             describeNode(n));
      const CudaSlot& o = b.program->slots[size_t(b.program->outputs[k])];
      if (type && type->dtype != o.dtype)
        return Status::error("output " + std::to_string(k) + " is " +
                                 std::string(dtypeName(type->dtype)) + " in one branch and " +
                                 std::string(dtypeName(o.dtype)) + " in the other",
                             describeNode(n));
      differ |= type && type->shape != o.shape;
      if (!type || o.bytes > type->bytes) type = &o;
    }
    if (!type)
      return Status::error(
          "neither branch can run with the bound input shapes (" + step.branches[0].refusal + ")",
          describeNode(n));
    if (differ && later.count(n.outputs[k].index) && sinks_ < kMaxSinks) {
      sinkRequested_ = true;  // the walk moves what follows into the branches
      return Status::error("kernels after the If need the shape of the branch taken",
                           describeNode(n));
    }
    TensorType t = TensorType::of(type->dtype, type->shape);
    if (!differ) sc.s.mutableValue(n.outputs[k]).type = t;
    step.out.push_back(internalSlot(*sc.p, sc.s.value(n.outputs[k]).name, t));
    sc.p->slots.back().runShape = differ;
    sc.slotOf[n.outputs[k].index] = step.out.back();
  }
  sc.p->steps.push_back(std::move(step));
  return Status::ok();
}

// The iteration number and condition as the body declares them: a scalar or
// a one-element vector.
TensorType loopScalarType(const Graph& body, size_t input, DType dt) {
  const TensorType& t = body.value(body.inputs()[input]).type;
  return TensorType::of(
      dt, t.rankKnown && t.rank() == 1 ? std::vector<int64_t>{1} : std::vector<int64_t>{});
}

Expected<int> Builder::loopControl(Scope& sc, const Node& n, size_t i, int64_t* known) {
  if (!n.inputs[i].valid()) return -1;
  auto slot = slotFor(sc, n.inputs[i]);
  if (!slot) return slot.status();
  const CudaSlot& s = sc.p->slots[size_t(*slot)];
  const bool integer = s.dtype == DType::I64 || s.dtype == DType::I32 || s.dtype == DType::Bool;
  if (!integer || s.bytes != int64_t(dtypeSize(s.dtype)))
    return Status::error(std::string(i == 0 ? "the trip count" : "the condition") +
                             " must be one integer or bool element, not " +
                             TensorType::of(s.dtype, s.shape).str(),
                         describeNode(n));
  if (s.runShape) return runShapeRead(sc, n.inputs[i], describeNode(n));
  if (s.kind == CudaSlot::Kind::Constant) *known = scalarOf(*sc.s.value(n.inputs[i]).constant);
  return *slot;
}

Status Builder::addLoop(Scope& sc, const Node& n) {
  const size_t formal = cfdriver::formalInputs(n);
  if (formal < 2)
    return Status::error("expects the trip count and condition inputs (possibly empty)",
                         describeNode(n));
  const size_t carried = formal - 2;
  auto bound = cfdriver::bindBody(n, "body", formal, CompileOptions{});
  if (!bound) return bound.status();
  const Graph& bg = bound->graph->graph();
  CudaStep step;
  step.kind = CudaStep::Kind::Loop;
  step.node = describeNode(n);
  CudaStep::LoopSlots& L = step.loop;
  int64_t maxTrip = -1, condIn = 1;
  for (size_t i = 0; i < 2; ++i) {
    auto slot = loopControl(sc, n, i, i == 0 ? &maxTrip : &condIn);
    if (!slot) return slot.status();
    step.in.push_back(*slot);
  }
  const TensorType iterT = loopScalarType(bg, 0, DType::I64);
  const TensorType condT = loopScalarType(bg, 1, DType::Bool);
  L.iteration = internalSlot(*sc.p, n.name + "/iteration", iterT);
  L.condition = internalSlot(*sc.p, n.name + "/condition", condT);
  std::vector<TensorType> types{iterT, condT};
  std::vector<int> formalSlots{L.iteration, L.condition};
  for (size_t i = 0; i < carried; ++i) {
    if (!n.inputs[2 + i].valid())
      return Status::error("loop-carried input " + std::to_string(i) + " is missing",
                           describeNode(n));
    auto slot = slotFor(sc, n.inputs[2 + i]);
    if (!slot) return slot.status();
    if (sc.p->slots[size_t(*slot)].runShape)
      return runShapeRead(sc, n.inputs[2 + i], describeNode(n));
    const TensorType t = sc.s.value(n.inputs[2 + i]).type;
    step.in.push_back(*slot);
    L.a.push_back(internalSlot(*sc.p, sc.s.value(n.inputs[2 + i]).name + "/carried", t));
    L.b.push_back(internalSlot(*sc.p, sc.s.value(n.inputs[2 + i]).name + "/carried_next", t));
    types.push_back(t);
    formalSlots.push_back(L.a.back());
  }
  auto body = branch(sc, n, "body", formal, types, formalSlots, /*allowRefusal=*/false);
  if (!body) return body.status();
  const CudaProgram& bp = *body->program;
  if (bp.outputs.size() < 1 + carried || n.outputs.size() != bp.outputs.size() - 1)
    return Status::error("the body returns " + std::to_string(bp.outputs.size()) +
                             " values; the node has " + std::to_string(carried) +
                             " carried values and " + std::to_string(n.outputs.size()) + " outputs",
                         describeNode(n));
  const CudaSlot& condOut = bp.slots[size_t(bp.outputs[0])];
  L.condOut = internalSlot(*sc.p, n.name + "/condition_out", condT);
  if (condOut.bytes != int64_t(dtypeSize(condOut.dtype)))
    return Status::error("the body's condition must hold one element", describeNode(n));
  for (size_t i = 0; i < carried; ++i) {
    const CudaSlot& o = bp.slots[size_t(bp.outputs[1 + i])];
    const CudaSlot& in = sc.p->slots[size_t(L.a[i])];
    if (o.shape != in.shape || o.dtype != in.dtype)
      return Status::error("loop-carried value '" + in.name + "' changes from " +
                               TensorType::of(in.dtype, in.shape).str() + " to " +
                               TensorType::of(o.dtype, o.shape).str() +
                               " in an iteration; the CUDA bundle plans every shape ahead of time",
                           describeNode(n));
    const TensorType t = TensorType::of(in.dtype, in.shape);
    sc.s.mutableValue(n.outputs[i]).type = t;
    step.out.push_back(internalSlot(*sc.p, sc.s.value(n.outputs[i]).name, t));
    sc.slotOf[n.outputs[i].index] = step.out.back();
  }
  // Scan outputs hold at most the trip count's slices; exactly that many when
  // nothing can stop the loop earlier.
  const bool alwaysGoes = condIn != 0 && condOut.kind == CudaSlot::Kind::Constant &&
                          std::any_of(plan_.weights.begin() + condOut.index,
                                      plan_.weights.begin() + condOut.index + condOut.bytes,
                                      [](unsigned char c) { return c != 0; });
  for (size_t k = 0; k + carried < n.outputs.size(); ++k) {
    const CudaSlot& slice = bp.slots[size_t(bp.outputs[1 + carried + k])];
    const std::string name = sc.s.value(n.outputs[carried + k]).name;
    if (maxTrip < 0)
      return Status::error("scan output '" + name +
                               "' has no planned size: the trip count is known only at run time",
                           describeNode(n));
    L.maxIterations = std::max<int64_t>(maxTrip, 0);
    L.slices.push_back(
        internalSlot(*sc.p, name + "/slice", TensorType::of(slice.dtype, slice.shape)));
    std::vector<int64_t> shape{L.maxIterations};
    shape.insert(shape.end(), slice.shape.begin(), slice.shape.end());
    const TensorType t = TensorType::of(slice.dtype, shape);
    step.out.push_back(internalSlot(*sc.p, name, t));
    sc.p->slots.back().runShape = !alwaysGoes;
    if (alwaysGoes) sc.s.mutableValue(n.outputs[carried + k]).type = t;
    sc.slotOf[n.outputs[carried + k].index] = step.out.back();
  }
  step.branches.push_back(std::move(*body));
  sc.p->steps.push_back(std::move(step));
  return Status::ok();
}

Status Builder::runShapeRead(Scope& sc, ValueId v, const std::string& where) {
  return Status::error("value '" + sc.s.value(v).name +
                           "' has a shape the run decides (which branch runs, how many "
                           "iterations); the CUDA bundle plans the shapes of the kernels that "
                           "read it ahead of time, so only a graph output may have one",
                       where);
}

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
