// The Loop driver. Inputs: an optional trip count M, an optional condition,
// N loop-carried values, then the outer values the body reads. The body maps
// (iteration, condition, carried...) -> (condition, carried..., K scan outputs).
//
//   it = 0; cond = cond_in or true
//   while it < M and cond:          (host; cancellation checked here)
//     outs = body(it, cond, carried)  (compiled, specialized by the carried types)
//     cond = outs[0]; carried = outs[1..N]; append outs[N+1..] to the scans
//   outputs: carried, each scan stacked along a new axis 0
//
// Carried values may change shape between iterations: each new set of types
// gets its own specialization (specialize.h). The first iteration's types are
// the node's input types, so the body compiles ahead of time when those are
// static. With zero iterations a scan output is empty, shaped [0, ...] from
// the body's inferred per-iteration type where it is known.
#include "codegen/driver/driver_cf.h"
#include "codegen/runtime/cpu_executor.h"

namespace fuselens::cfdriver {
namespace {

// ONNX Loop runs until the condition says stop; a body that never says so is
// refused past this many iterations instead of hanging.
constexpr int64_t kMaxIterations = int64_t(1) << 24;

struct LoopState {
  std::shared_ptr<const Node> node;
  Body body;
  size_t carried = 0, scans = 0;
  std::vector<TensorType> formalTypes;  // first-iteration types, for empty scan outputs
};

// The iteration number and condition as the body declares them: a scalar, or
// a one-element vector.
TensorData scalarFor(const Graph& body, size_t input, DType dt, int64_t v) {
  const TensorType& t = body.value(body.inputs()[input]).type;
  TensorData d(dt, t.rankKnown && t.rank() == 1 ? std::vector<int64_t>{1} : std::vector<int64_t>{});
  if (dt == DType::I64)
    d.data<int64_t>()[0] = v;
  else
    d.data<bool>()[0] = v != 0;
  return d;
}

TensorType typeOf(const TensorData& t) { return t.type(); }

// A zero-iteration scan output: [0] then the per-iteration dims inferred for
// the types the first iteration would have had (0 where unknown).
TensorData emptyScan(const LoopState& s, const std::vector<TensorType>& formalTypes, size_t k) {
  const Graph& bg = s.body.graph->graph();
  ValueId out = bg.outputs()[1 + s.carried + k];
  TensorType t = bg.value(out).type;
  std::vector<TensorType> types = formalTypes;
  for (size_t i = types.size(); i < bg.inputs().size(); ++i)
    types.push_back(bg.value(bg.inputs()[i]).type);
  if (auto spec = specializeGraph(bg, types)) t = spec->value(out).type;
  std::vector<int64_t> shape{0};
  if (t.rankKnown)
    for (const Dim& d : t.shape) shape.push_back(d.isStatic() ? d.value : 0);
  return TensorData(t.dtype, shape);
}

}  // namespace

Expected<DriverKernel> lowerLoop(const Graph& g, const Node& n, const CompileOptions& opts) {
  size_t formal = formalInputs(n);
  if (formal < 2)
    return Status::error("expects the trip count and condition inputs (possibly empty)", place(n));
  auto s = std::make_shared<LoopState>();
  s->node = std::make_shared<const Node>(n);
  s->carried = formal - 2;
  auto b = bindBody(g, n, "body", formal, opts);
  if (!b) return b.status();
  s->body = std::move(*b);
  const Graph& bg = s->body.graph->graph();
  if (bg.outputs().size() < 1 + s->carried || n.outputs.size() != bg.outputs().size() - 1)
    return Status::error(
        "the body returns " + std::to_string(bg.outputs().size()) +
            " values; the node needs the condition, its " + std::to_string(s->carried) +
            " carried values and " +
            std::to_string(n.outputs.size() - std::min(n.outputs.size(), s->carried)) +
            " scan outputs",
        place(n));
  s->scans = bg.outputs().size() - 1 - s->carried;

  std::vector<TensorType> first{scalarFor(bg, 0, DType::I64, 0).type(),
                                scalarFor(bg, 1, DType::Bool, 1).type()};
  for (size_t i = 0; i < s->carried; ++i) {
    ValueId v = n.inputs[2 + i];
    if (!v.valid())
      return Status::error("loop-carried input " + std::to_string(i) + " is missing", place(n));
    first.push_back(g.value(v).type);
  }
  FL_RETURN_IF_ERROR(precompile(g, n, s->body, first));

  DriverKernel k;
  k.loopIr = bodiesLoopIr({&s->body});
  k.summary = std::string("Loop: body ") +
              (s->body.compiled ? "compiled (" + kernelCounts({&s->body}) + ")"
                                : "compiled for the carried types met at run time") +
              ", " + std::to_string(s->carried) + " carried, " + counted(s->scans, "scan output");
  k.run = [s](const std::vector<const TensorData*>& present) -> Expected<std::vector<TensorData>> {
    const Node& n = *s->node;
    const Graph& bg = s->body.graph->graph();
    auto all = spreadInputs(n, present);
    if (!all) return all.status();
    int64_t maxTrip = INT64_MAX;
    if (const TensorData* m = (*all)[0]) {
      if (m->numel() != 1) return Status::error("the trip count must hold one element", place(n));
      maxTrip = intAt(*m, 0);
    }
    bool cond = true;
    if (const TensorData* c = (*all)[1]) cond = truthy(*c);
    std::vector<TensorData> carried;
    for (size_t i = 0; i < s->carried; ++i) {
      const TensorData* t = (*all)[2 + i];
      if (!t)
        return Status::error("loop-carried input " + std::to_string(i) + " is missing", place(n));
      carried.push_back(*t);
    }
    std::vector<TensorType> firstTypes{scalarFor(bg, 0, DType::I64, 0).type(),
                                       scalarFor(bg, 1, DType::Bool, 1).type()};
    for (const TensorData& t : carried) firstTypes.push_back(typeOf(t));
    std::vector<std::vector<TensorData>> scans(s->scans);
    CancelToken cancel = currentRunCancelToken();
    for (int64_t it = 0; it < maxTrip && cond; ++it) {
      if (cancel.cancelled())
        return Status::error("cancelled in iteration " + std::to_string(it), place(n));
      if (it >= kMaxIterations)
        return Status::error("ran more than 2^24 iterations without stopping; refusing to go on",
                             place(n));
      TensorData iter = scalarFor(bg, 0, DType::I64, it), go = scalarFor(bg, 1, DType::Bool, 1);
      std::vector<const TensorData*> formal{&iter, &go};
      for (const TensorData& t : carried) formal.push_back(&t);
      auto outs = runBody(n, s->body, formal, *all, cancel);
      if (!outs) return outs.status();
      cond = truthy((*outs)[0]);
      for (size_t i = 0; i < s->carried; ++i) carried[i] = std::move((*outs)[1 + i]);
      for (size_t k = 0; k < s->scans; ++k)
        scans[k].push_back(std::move((*outs)[1 + s->carried + k]));
    }
    std::vector<TensorData> result = std::move(carried);
    for (size_t k = 0; k < s->scans; ++k) {
      if (scans[k].empty()) {
        result.push_back(emptyScan(*s, firstTypes, k));
        continue;
      }
      auto st = stack(n, scans[k], 0, false);
      if (!st) return st.status();
      result.push_back(std::move(*st));
    }
    return result;
  };
  return k;
}

}  // namespace fuselens::cfdriver
