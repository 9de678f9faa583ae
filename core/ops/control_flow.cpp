// Control flow: If, Loop and Scan, with their bodies as GRAPH attributes.
//
// Outer-scope references are explicit in the IR: the importer appends every
// outer value a body reads to the node's inputs (after the ONNX inputs) and
// lists the names the bodies use for them in the `implicit_inputs` attribute,
// in the same order; each body declares those it reads as graph inputs of that
// name, after its formal inputs. So passes see every dependency, and the
// kernels here bind body inputs: formal ones by position, implicit ones by name.
// Bodies run through the context's body runner, which the eager interpreter
// supplies; core/ops does not include core/eager. All three are Opaque.
#include <cstring>

#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

std::shared_ptr<const Graph> graphAttr(const Node& n, const char* name) {
  const Attribute* a = n.attrs.find(name);
  if (a && std::holds_alternative<std::shared_ptr<const Graph>>(*a))
    return std::get<std::shared_ptr<const Graph>>(*a);
  return nullptr;
}

// Runs `body` on formal inputs (by position) plus the node's implicit inputs (by name).
Expected<std::vector<TensorData>> runBody(const Node& n, const Graph& body,
                                          const std::vector<TensorData>& formal, const Inputs& in,
                                          const KernelContext& ctx, const char* what) {
  if (!ctx.runBody)
    return nodeError(n, std::string("cannot run its ") + what + " here (no body runner)");
  auto names = implicitInputNames(n);
  size_t firstImplicit = in.size() - names.size();
  std::map<std::string, TensorData> inputs;
  if (formal.size() > body.inputs().size())
    return nodeError(n, std::string("the ") + what + " takes " +
                            std::to_string(body.inputs().size()) + " inputs, fewer than the " +
                            std::to_string(formal.size()) + " it is given");
  for (size_t i = 0; i < formal.size(); ++i) inputs[body.value(body.inputs()[i]).name] = formal[i];
  for (size_t j = 0; j < names.size(); ++j) {
    const TensorData* t = in[firstImplicit + j];
    if (t) inputs.emplace(names[j], *t);
  }
  auto r = ctx.runBody(body, inputs);
  if (!r) return nodeError(n, std::string("in the ") + what + ": " + r.diagnostic().str());
  return r;
}

// Formal (ONNX) inputs of the node, without the implicit ones.
size_t formalCount(const Node& n, size_t total) {
  size_t k = implicitInputNames(n).size();
  return total >= k ? total - k : 0;
}

// ---- If ----

Outputs ifKernel(const Node& n, const Inputs& in, const KernelContext& ctx) {
  if (in.empty() || !in[0]) return nodeError(n, "the condition input is missing");
  if (in[0]->numel() != 1)
    return nodeError(n, "the condition must hold one element, got " + in[0]->type().str());
  bool cond = in[0]->at(0) != 0;
  auto body = graphAttr(n, cond ? "then_branch" : "else_branch");
  if (!body) return nodeError(n, cond ? "has no then_branch graph" : "has no else_branch graph");
  auto outs = runBody(n, *body, {}, in, ctx, cond ? "then branch" : "else branch");
  if (!outs) return outs;
  if (outs->size() != n.outputs.size())
    return nodeError(n, "the branch has " + std::to_string(outs->size()) + " outputs, the node " +
                            std::to_string(n.outputs.size()));
  return outs;
}

// Where the two branches agree on a dim it is kept; otherwise it is unknown.
TensorType joinTypes(const TensorType& a, const TensorType& b) {
  if (!a.rankKnown || !b.rankKnown || a.rank() != b.rank()) return unknownRank(a.dtype);
  TensorType o = a;
  for (size_t i = 0; i < a.rank(); ++i)
    if (a.shape[i] != b.shape[i]) o.shape[i] = Dim::unknown();
  return o;
}

Types inferIf(const InferContext& c) {
  auto t = graphAttr(c.node, "then_branch"), e = graphAttr(c.node, "else_branch");
  if (!t || !e) return nodeError(c.node, "needs then_branch and else_branch graphs");
  if (t->outputs().size() != c.node.outputs.size() || e->outputs().size() != c.node.outputs.size())
    return nodeError(c.node, "the branches' outputs do not match the node's " +
                                 std::to_string(c.node.outputs.size()) + " outputs");
  std::vector<TensorType> outs;
  for (size_t i = 0; i < t->outputs().size(); ++i) {
    const TensorType &a = t->value(t->outputs()[i]).type, &b = e->value(e->outputs()[i]).type;
    if (a.dtype != b.dtype)
      return nodeError(c.node, "output " + std::to_string(i) + " is " + dtypeStr(a.dtype) +
                                   " in one branch and " + dtypeStr(b.dtype) + " in the other");
    outs.push_back(joinTypes(a, b));
  }
  return outs;
}

// ---- stacking per-iteration outputs (Loop, Scan) ----

// Stacks equal-shaped tensors along a new axis `axis`.
Expected<TensorData> stack(const Node& n, const std::vector<TensorData>& parts, int64_t axis,
                           bool reverse, const TensorData* like) {
  if (parts.empty()) {
    // No iterations: an empty tensor of the declared element type.
    TensorData t(like ? like->dtype : DType::F32, {0});
    return t;
  }
  const TensorData& p0 = parts[0];
  auto a = normalizeAxis(axis, int64_t(p0.rank()) + 1);
  if (!a) return nodeError(n, "scan output axis " + std::to_string(axis) + " is out of range");
  std::vector<int64_t> shape = p0.shape;
  shape.insert(shape.begin() + *a, int64_t(parts.size()));
  TensorData o(p0.dtype, shape);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < int64_t(p0.rank()); ++i) (i < *a ? outer : inner) *= p0.shape[i];
  size_t es = dtypeSize(p0.dtype);
  int64_t T = int64_t(parts.size());
  for (int64_t t = 0; t < T; ++t) {
    const TensorData& p = parts[reverse ? T - 1 - t : t];
    if (p.shape != p0.shape || p.dtype != p0.dtype)
      return nodeError(n, "per-iteration outputs change shape (" + shapeStr(p0.shape) + " then " +
                              shapeStr(p.shape) + ")");
    for (int64_t o2 = 0; o2 < outer && inner > 0; ++o2)  // empty parts: pointers may be null
      std::memcpy(o.bytes.data() + ((o2 * T + t) * inner) * es, p.bytes.data() + o2 * inner * es,
                  size_t(inner) * es);
  }
  return o;
}

// ---- Loop ----

TensorData scalarLike(const Graph& body, size_t input, DType dt, int64_t v) {
  const TensorType& t = body.value(body.inputs()[input]).type;
  std::vector<int64_t> shape =
      t.rankKnown && t.rank() == 1 ? std::vector<int64_t>{1} : std::vector<int64_t>{};
  TensorData d(dt, shape);
  storeI(d, 0, v);
  return d;
}

Outputs loopKernel(const Node& n, const Inputs& in, const KernelContext& ctx) {
  auto body = graphAttr(n, "body");
  if (!body) return nodeError(n, "has no body graph");
  size_t formal = formalCount(n, in.size());
  if (formal < 2)
    return nodeError(n, "expects the trip count and condition inputs (possibly empty)");
  size_t N = formal - 2;
  if (body->inputs().size() < 2 + N || body->outputs().size() < 1 + N)
    return nodeError(
        n, "the body does not take and return the " + std::to_string(N) + " loop-carried values");
  size_t K = body->outputs().size() - 1 - N;
  if (n.outputs.size() != N + K)
    return nodeError(n, "has " + std::to_string(n.outputs.size()) + " outputs, the body gives " +
                            std::to_string(N + K));
  int64_t maxTrip = INT64_MAX;
  if (in[0]) maxTrip = loadI(*in[0], 0);
  bool cond = in[1] ? in[1]->at(0) != 0 : true;
  std::vector<TensorData> carried;
  for (size_t i = 0; i < N; ++i) {
    if (!in[2 + i]) return nodeError(n, "loop-carried input " + std::to_string(i) + " is missing");
    carried.push_back(*in[2 + i]);
  }
  std::vector<std::vector<TensorData>> scans(K);
  constexpr int64_t kMaxIterations = int64_t(1) << 24;
  for (int64_t it = 0; it < maxTrip && cond; ++it) {
    if (it >= kMaxIterations)
      return nodeError(n, "ran more than 2^24 iterations without stopping; refusing to go on");
    std::vector<TensorData> formalIn{scalarLike(*body, 0, DType::I64, it),
                                     scalarLike(*body, 1, DType::Bool, 1)};
    formalIn.insert(formalIn.end(), carried.begin(), carried.end());
    auto outs = runBody(n, *body, formalIn, in, ctx, "loop body");
    if (!outs) return outs.status();
    cond = (*outs)[0].numel() > 0 && (*outs)[0].at(0) != 0;
    for (size_t i = 0; i < N; ++i) carried[i] = std::move((*outs)[1 + i]);
    for (size_t k = 0; k < K; ++k) scans[k].push_back(std::move((*outs)[1 + N + k]));
  }
  std::vector<TensorData> result = carried;
  for (size_t k = 0; k < K; ++k) {
    auto s = stack(n, scans[k], 0, false, nullptr);
    if (!s) return s.status();
    if (scans[k].empty()) {
      // No iterations: [0, per-iteration shape] when the body declares it, as
      // ONNX Runtime gives (the node's declared type says so too).
      const TensorType& per = body->value(body->outputs()[1 + N + k]).type;
      std::vector<int64_t> shape{0};
      if (auto ps = per.staticShape()) shape.insert(shape.end(), ps->begin(), ps->end());
      *s = TensorData(per.dtype, shape);
    }
    result.push_back(std::move(*s));
  }
  return result;
}

Types inferLoop(const InferContext& c) {
  auto body = graphAttr(c.node, "body");
  if (!body) return nodeError(c.node, "has no body graph");
  size_t formal = formalCount(c.node, c.inputTypes.size());
  if (formal < 2) return nodeError(c.node, "expects the trip count and condition inputs");
  size_t N = formal - 2;
  if (body->outputs().size() < 1 + N || c.node.outputs.size() != body->outputs().size() - 1)
    return nodeError(c.node, "the body's outputs do not match the node's");
  std::vector<TensorType> outs;
  for (size_t i = 0; i < N; ++i)
    outs.push_back(joinTypes(c.inputTypes[2 + i], body->value(body->outputs()[1 + i]).type));
  for (size_t k = 1 + N; k < body->outputs().size(); ++k) {
    TensorType t = body->value(body->outputs()[k]).type;
    if (t.rankKnown) t.shape.insert(t.shape.begin(), Dim::unknown());
    outs.push_back(t);
  }
  return outs;
}

// ---- Scan (opset 9+; Scan-8 runs as one Scan-9 per batch entry) ----

// Slice t of x along axis (the axis removed).
TensorData sliceAt(const TensorData& x, int64_t axis, int64_t t) {
  std::vector<int64_t> shape = x.shape;
  int64_t len = shape[axis];
  shape.erase(shape.begin() + axis);
  TensorData o(x.dtype, shape);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < int64_t(x.rank()); ++i) {
    if (i < axis) outer *= x.shape[i];
    if (i > axis) inner *= x.shape[i];
  }
  size_t es = dtypeSize(x.dtype);
  for (int64_t o2 = 0; o2 < outer && inner > 0; ++o2)  // empty slices: pointers may be null
    std::memcpy(o.bytes.data() + o2 * inner * es, x.bytes.data() + ((o2 * len + t) * inner) * es,
                size_t(inner) * es);
  return o;
}

std::vector<int64_t> intsAttr(const Node& n, const char* name, size_t count) {
  auto v = n.attrs.getInts(name);
  return v && v->size() == count ? *v : std::vector<int64_t>(count, 0);
}

// Scan-8 (set by the importer): a sequence_lens input first, and batch axis 0
// on every state, scan input and output; the scan axis of inputs is 1.
bool batchedScan(const Node& n) { return n.attrs.getInt("scan8_batch_axis", 0) != 0; }

// One Scan-9 run: states, then scan inputs (`scanIn`), through the body.
Outputs scanOnce(const Node& n, const Graph& body, std::vector<TensorData> state,
                 const std::vector<const TensorData*>& scanIn, const Inputs& in,
                 const KernelContext& ctx) {
  size_t N = state.size(), M = scanIn.size(), K = body.outputs().size() - N;
  auto inAxes = intsAttr(n, "scan_input_axes", M);
  auto inDirs = intsAttr(n, "scan_input_directions", M);
  auto outAxes = intsAttr(n, "scan_output_axes", K);
  auto outDirs = intsAttr(n, "scan_output_directions", K);
  int64_t T = -1;
  std::vector<int64_t> axes;
  for (size_t j = 0; j < M; ++j) {
    const TensorData* x = scanIn[j];
    if (!x) return nodeError(n, "scan input " + std::to_string(j) + " is missing");
    auto a = normalizeAxis(inAxes[j], int64_t(x->rank()));
    if (!a)
      return nodeError(n, "scan input axis " + std::to_string(inAxes[j]) + " is out of range");
    if (T >= 0 && x->shape[*a] != T) return nodeError(n, "scan inputs have different lengths");
    T = x->shape[*a];
    axes.push_back(*a);
  }
  std::vector<std::vector<TensorData>> scans(K);
  for (int64_t t = 0; t < T; ++t) {
    std::vector<TensorData> formalIn = state;
    for (size_t j = 0; j < M; ++j)
      formalIn.push_back(sliceAt(*scanIn[j], axes[j], inDirs[j] ? T - 1 - t : t));
    auto outs = runBody(n, body, formalIn, in, ctx, "scan body");
    if (!outs) return outs.status();
    for (size_t i = 0; i < N; ++i) state[i] = std::move((*outs)[i]);
    for (size_t k = 0; k < K; ++k) scans[k].push_back(std::move((*outs)[N + k]));
  }
  std::vector<TensorData> result = state;
  for (size_t k = 0; k < K; ++k) {
    auto s = stack(n, scans[k], outAxes[k], outDirs[k] != 0, nullptr);
    if (!s) return s.status();
    result.push_back(std::move(*s));
  }
  return result;
}

// Scan-8: one Scan-9 run per batch entry, results stacked along axis 0.
Outputs batchedScanKernel(const Node& n, const Graph& body, const Inputs& in, size_t N, size_t M,
                          const KernelContext& ctx) {
  const TensorData* lens = in[0];
  if (N + M == 0 || !in[1]) return nodeError(n, "needs at least one state or scan input");
  int64_t B = in[1]->rank() ? in[1]->shape[0] : 0;
  std::vector<std::vector<TensorData>> perBatch;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<TensorData> state, slices;
    for (size_t i = 0; i < N + M; ++i) {
      const TensorData* x = in[1 + i];
      if (!x || x->rank() < (i < N ? 1u : 2u) || x->shape[0] != B)
        return nodeError(
            n, "every state and scan input needs batch axis 0 of size " + std::to_string(B));
      (i < N ? state : slices).push_back(sliceAt(*x, 0, b));
    }
    int64_t T = slices.empty() ? 0 : slices[0].shape[0];
    if (lens && lens->numel() > 0 && (lens->numel() != B || loadI(*lens, b) != T))
      return nodeError(n, "sequence_lens shorter than the scan inputs' length " +
                              std::to_string(T) + " is not supported");
    std::vector<const TensorData*> ptrs;
    for (const TensorData& t : slices) ptrs.push_back(&t);
    auto r = scanOnce(n, body, state, ptrs, in, ctx);
    if (!r) return r;
    perBatch.push_back(std::move(*r));
  }
  std::vector<TensorData> result;
  for (size_t k = 0; k < body.outputs().size(); ++k) {
    std::vector<TensorData> parts;
    for (auto& outs : perBatch) parts.push_back(std::move(outs[k]));
    auto s = stack(n, parts, 0, false, nullptr);
    if (!s) return s.status();
    result.push_back(std::move(*s));
  }
  return result;
}

Outputs scanKernel(const Node& n, const Inputs& in, const KernelContext& ctx) {
  auto body = graphAttr(n, "body");
  if (!body) return nodeError(n, "has no body graph");
  size_t first = batchedScan(n) ? 1 : 0;
  size_t formal = formalCount(n, in.size());
  int64_t M = n.attrs.getInt("num_scan_inputs", -1);
  if (M <= 0 || first + size_t(M) > formal)
    return nodeError(n, "num_scan_inputs is missing or too large");
  size_t N = formal - first - size_t(M);
  if (body->outputs().size() < N)
    return nodeError(n, "the body returns fewer values than the states");
  if (first) return batchedScanKernel(n, *body, in, N, size_t(M), ctx);
  std::vector<TensorData> state;
  for (size_t i = 0; i < N; ++i) {
    if (!in[i]) return nodeError(n, "state input " + std::to_string(i) + " is missing");
    state.push_back(*in[i]);
  }
  std::vector<const TensorData*> scanIn(in.begin() + N, in.begin() + N + M);
  return scanOnce(n, *body, std::move(state), scanIn, in, ctx);
}

Types inferScan(const InferContext& c) {
  auto body = graphAttr(c.node, "body");
  if (!body) return nodeError(c.node, "has no body graph");
  size_t formal = formalCount(c.node, c.inputTypes.size());
  size_t first = batchedScan(c.node) ? 1 : 0;
  int64_t M = c.node.attrs.getInt("num_scan_inputs", -1);
  if (M <= 0 || first + size_t(M) > formal)
    return nodeError(c.node, "num_scan_inputs is missing or too large");
  size_t N = formal - first - size_t(M);
  if (body->outputs().size() != c.node.outputs.size() || body->outputs().size() < N)
    return nodeError(c.node, "the body's outputs do not match the node's");
  size_t K = body->outputs().size() - N;
  if (first) {  // Scan-8: [B, ...] states, [B, T, ...] scan outputs
    const TensorType& x0 = c.inputTypes[1];
    const TensorType& s0 = c.inputTypes[1 + N];
    Dim B = x0.rankKnown && x0.rank() ? x0.shape[0] : Dim::unknown();
    Dim T = s0.rankKnown && s0.rank() > 1 ? s0.shape[1] : Dim::unknown();
    std::vector<TensorType> outs;
    for (size_t k = 0; k < N + K; ++k) {
      TensorType t = body->value(body->outputs()[k]).type;
      if (t.rankKnown) {
        if (k >= N) t.shape.insert(t.shape.begin(), T);
        t.shape.insert(t.shape.begin(), B);
      }
      outs.push_back(t);
    }
    return outs;
  }
  auto outAxes = intsAttr(c.node, "scan_output_axes", K);
  // The sequence length, from the first scan input.
  Dim T = Dim::unknown();
  const TensorType& x0 = c.inputTypes[N];
  auto inAxes = intsAttr(c.node, "scan_input_axes", size_t(M));
  if (x0.rankKnown)
    if (auto a = normalizeAxis(inAxes[0], int64_t(x0.rank()))) T = x0.shape[*a];
  std::vector<TensorType> outs;
  for (size_t i = 0; i < N; ++i) outs.push_back(body->value(body->outputs()[i]).type);
  for (size_t k = 0; k < K; ++k) {
    TensorType t = body->value(body->outputs()[N + k]).type;
    if (t.rankKnown) {
      auto a = normalizeAxis(outAxes[k], int64_t(t.rank()) + 1);
      if (!a) return nodeError(c.node, "scan output axis is out of range");
      t.shape.insert(t.shape.begin() + *a, T);
    }
    outs.push_back(t);
  }
  return outs;
}

}  // namespace

void registerControlFlowOps(OpRegistry& r) {
  r.add(OpInfo{"If", "", PatternKind::Opaque, inferIf, ifKernel});
  r.add(OpInfo{"Loop", "", PatternKind::Opaque, inferLoop, loopKernel});
  r.add(OpInfo{"Scan", "", PatternKind::Opaque, inferScan, scanKernel});
}

}  // namespace fuselens::ops
