// The Scan driver. Opset 9+: N states, then M scan inputs, then the outer
// values the body reads; the body maps (states, one slice of each scan input)
// -> (states, K per-step outputs).
//
//   for t in 0..T-1:                 (host; cancellation checked here)
//     slice j = scan input j at index t (T-1-t when its direction is 1) along its axis
//     outs = body(states, slices)    (compiled; the types never change, so one module)
//     states = outs[0..N); keep outs[N..)
//   outputs: states, each kept output stacked along its scan_output_axes entry
//            (reversed when its scan_output_directions entry is 1)
//
// Scan-8 (the importer sets scan8_batch_axis): a sequence_lens input first and
// batch axis 0 on every state, scan input and output; it runs as one opset-9
// scan per batch entry (scan axis 0 of the batch slice), stacked along axis 0.
#include "codegen/driver/driver_cf.h"
#include "codegen/runtime/cpu_executor.h"

namespace fuselens::cfdriver {
namespace {

struct ScanState {
  std::shared_ptr<const Node> node;
  Body body;
  bool batched = false;  // Scan-8
  size_t first = 0;      // 1 with Scan-8's sequence_lens
  size_t states = 0, scanIns = 0, scanOuts = 0;
  std::vector<int64_t> inAxes, inDirs, outAxes, outDirs;
};

std::vector<int64_t> intsAttr(const Node& n, const char* name, size_t count) {
  auto v = n.attrs.getInts(name);
  return v && v->size() == count ? *v : std::vector<int64_t>(count, 0);
}

// One opset-9 scan over `scanIn` (each scanned along inAxes).
Expected<std::vector<TensorData>> scanOnce(ScanState& s, std::vector<TensorData> state,
                                           const std::vector<const TensorData*>& scanIn,
                                           const std::vector<const TensorData*>& all,
                                           const CancelToken& cancel) {
  const Node& n = *s.node;
  int64_t T = -1;
  std::vector<int64_t> axes;
  for (size_t j = 0; j < s.scanIns; ++j) {
    const TensorData* x = scanIn[j];
    if (!x) return Status::error("scan input " + std::to_string(j) + " is missing", place(n));
    int64_t r = int64_t(x->rank()), a = s.inAxes[j] < 0 ? s.inAxes[j] + r : s.inAxes[j];
    if (a < 0 || a >= r)
      return Status::error("scan input axis " + std::to_string(s.inAxes[j]) +
                               " is out of range for " + x->type().str(),
                           place(n));
    if (T >= 0 && x->shape[size_t(a)] != T)
      return Status::error("the scan inputs have different lengths (" + std::to_string(T) +
                               " and " + std::to_string(x->shape[size_t(a)]) + ")",
                           place(n));
    T = x->shape[size_t(a)];
    axes.push_back(a);
  }
  std::vector<std::vector<TensorData>> kept(s.scanOuts);
  for (int64_t t = 0; t < T; ++t) {
    if (cancel.cancelled())
      return Status::error("cancelled in scan step " + std::to_string(t), place(n));
    std::vector<TensorData> slices;
    for (size_t j = 0; j < s.scanIns; ++j)
      slices.push_back(sliceAt(*scanIn[j], axes[j], s.inDirs[j] ? T - 1 - t : t));
    std::vector<const TensorData*> formal;
    for (const TensorData& x : state) formal.push_back(&x);
    for (const TensorData& x : slices) formal.push_back(&x);
    auto outs = runBody(n, s.body, formal, all, cancel);
    if (!outs) return outs.status();
    for (size_t i = 0; i < s.states; ++i) state[i] = std::move((*outs)[i]);
    for (size_t k = 0; k < s.scanOuts; ++k) kept[k].push_back(std::move((*outs)[s.states + k]));
  }
  std::vector<TensorData> result = std::move(state);
  for (size_t k = 0; k < s.scanOuts; ++k) {
    if (kept[k].empty()) {  // T == 0: shaped from the body's declared per-step type
      const Graph& bg = s.body.graph->graph();
      const TensorType& per = bg.value(bg.outputs()[s.states + k]).type;
      auto shape = per.staticShape();
      int64_t a = s.outAxes[k] < 0 ? s.outAxes[k] + int64_t(per.rank()) + 1 : s.outAxes[k];
      if (!shape || a < 0 || a > int64_t(shape->size()))
        return Status::error(
            "the scan inputs are empty along the scan axis and the body's "
            "per-step output type " +
                per.str() + " gives no shape to stack",
            place(n));
      shape->insert(shape->begin() + a, 0);
      result.emplace_back(per.dtype, *shape);
      continue;
    }
    auto st = stack(n, kept[k], s.outAxes[k], s.outDirs[k] != 0);
    if (!st) return st.status();
    result.push_back(std::move(*st));
  }
  return result;
}

Expected<std::vector<TensorData>> runScan(ScanState& s, const std::vector<const TensorData*>& all) {
  const Node& n = *s.node;
  CancelToken cancel = currentRunCancelToken();
  const size_t N = s.states, M = s.scanIns, f = s.first;
  if (!s.batched) {
    std::vector<TensorData> state;
    for (size_t i = 0; i < N; ++i) {
      if (!all[i])
        return Status::error("state input " + std::to_string(i) + " is missing", place(n));
      state.push_back(*all[i]);
    }
    std::vector<const TensorData*> scanIn(all.begin() + long(N), all.begin() + long(N + M));
    return scanOnce(s, std::move(state), scanIn, all, cancel);
  }
  const TensorData* lens = all[0];
  if (!all[f]) return Status::error("the first state or scan input is missing", place(n));
  int64_t B = all[f]->rank() ? all[f]->shape[0] : 0;
  std::vector<std::vector<TensorData>> perBatch;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<TensorData> state, slices;
    for (size_t i = 0; i < N + M; ++i) {
      const TensorData* x = all[f + i];
      if (!x || x->rank() < (i < N ? 1u : 2u) || x->shape[0] != B)
        return Status::error(
            "every state and scan input needs batch axis 0 of size " + std::to_string(B), place(n));
      (i < N ? state : slices).push_back(sliceAt(*x, 0, b));
    }
    int64_t T = slices.empty() ? 0 : slices[0].shape[0];
    if (lens && lens->numel() > 0 && (lens->numel() != B || intAt(*lens, b) != T))
      return Status::error("sequence_lens shorter than the scan inputs' length " +
                               std::to_string(T) + " is not supported",
                           place(n));
    std::vector<const TensorData*> ptrs;
    for (const TensorData& t : slices) ptrs.push_back(&t);
    auto r = scanOnce(s, std::move(state), ptrs, all, cancel);
    if (!r) return r.status();
    perBatch.push_back(std::move(*r));
  }
  if (perBatch.empty()) return Status::error("the batch is empty", place(n));
  std::vector<TensorData> result;
  for (size_t k = 0; k < N + s.scanOuts; ++k) {
    std::vector<TensorData> parts;
    for (auto& outs : perBatch) parts.push_back(std::move(outs[k]));
    auto st = stack(n, parts, 0, false);
    if (!st) return st.status();
    result.push_back(std::move(*st));
  }
  return result;
}

}  // namespace

Expected<DriverKernel> lowerScan(const Graph& g, const Node& n, const CompileOptions& opts) {
  auto s = std::make_shared<ScanState>();
  s->node = std::make_shared<const Node>(n);
  s->batched = n.attrs.getInt("scan8_batch_axis", 0) != 0;
  s->first = s->batched ? 1 : 0;
  size_t formal = formalInputs(n);
  int64_t M = n.attrs.getInt("num_scan_inputs", -1);
  if (M <= 0 || s->first + size_t(M) > formal)
    return Status::error("num_scan_inputs is missing or larger than the inputs", place(n));
  s->scanIns = size_t(M);
  s->states = formal - s->first - s->scanIns;
  auto b = bindBody(g, n, "body", s->states + s->scanIns, opts);
  if (!b) return b.status();
  s->body = std::move(*b);
  const Graph& bg = s->body.graph->graph();
  if (bg.outputs().size() < s->states || bg.outputs().size() != n.outputs.size())
    return Status::error("the body returns " + std::to_string(bg.outputs().size()) +
                             " values; the node has " + std::to_string(n.outputs.size()) +
                             " outputs and " + std::to_string(s->states) + " states",
                         place(n));
  s->scanOuts = bg.outputs().size() - s->states;
  s->inAxes = intsAttr(n, "scan_input_axes", s->scanIns);
  s->inDirs = intsAttr(n, "scan_input_directions", s->scanIns);
  s->outAxes = intsAttr(n, "scan_output_axes", s->scanOuts);
  s->outDirs = intsAttr(n, "scan_output_directions", s->scanOuts);

  // The body's input types: the states and one slice of each scan input.
  std::vector<TensorType> types;
  for (size_t i = 0; i < s->states + s->scanIns; ++i) {
    ValueId v = n.inputs[s->first + i];
    TensorType t = v.valid() ? g.value(v).type : bg.value(bg.inputs()[i]).type;
    if (s->batched) t = sliceType(t, 0);
    if (i >= s->states) {
      int64_t a = s->inAxes[i - s->states];
      if (a < 0 && t.rankKnown) a += int64_t(t.rank());
      t = sliceType(t, a);
    }
    types.push_back(t);
  }
  FL_RETURN_IF_ERROR(precompile(g, n, s->body, types));

  DriverKernel k;
  k.loopIr = bodiesLoopIr({&s->body});
  k.summary = std::string(s->batched ? "Scan-8" : "Scan") + ": body " +
              (s->body.compiled ? "compiled (" + kernelCounts({&s->body}) + ")"
                                : "compiled for the types met at run time") +
              ", " + counted(s->states, "state") + ", " + counted(s->scanIns, "scan input");
  k.run = [s](const std::vector<const TensorData*>& present) -> Expected<std::vector<TensorData>> {
    auto all = spreadInputs(*s->node, present);
    if (!all) return all.status();
    return runScan(*s, *all);
  };
  return k;
}

}  // namespace fuselens::cfdriver
