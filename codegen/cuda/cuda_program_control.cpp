// The If and Loop steps of a CUDA program (see cuda_program.h): each body
// built as a program of its own for the types the node feeds it, the node's
// outputs typed from what the bodies give.
#include <algorithm>

#include "codegen/cuda/cuda_program_builder.h"
#include "codegen/driver/driver_cf.h"
#include "core/ops/registry.h"

namespace fuselens::cudaprog {
namespace {

// A one-element integer or bool tensor read at export time (a folded trip
// count or condition).
int64_t scalarOf(const TensorData& t) { return t.numel() > 0 ? cfdriver::intAt(t, 0) : 0; }

}  // namespace

// The body `attr` of n as a program: formal inputs of the given types in
// `formalSlots`, then the outer values it reads.
Expected<CudaBranch> Builder::branch(Scope& sc, const Node& n, const char* attr, size_t formal,
                                     std::vector<TensorType> formalTypes,
                                     std::vector<int> formalSlots, bool allowRefusal) {
  auto body = cfdriver::bindBody(sc.s, n, attr, formal, CompileOptions{});
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
static TensorType loopScalarType(const Graph& body, size_t input, DType dt) {
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
  auto bound = cfdriver::bindBody(sc.s, n, "body", formal, CompileOptions{});
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

}  // namespace fuselens::cudaprog
