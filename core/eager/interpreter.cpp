// The eager reference interpreter: checks the caller's inputs against the
// graph's input types, then runs nodes in topological order with the
// registry's kernels (fused groups by recursing into their body), checking
// cancellation and reporting progress per node. With keepIntermediates off, a
// tensor is dropped as soon as its last user has run, so peak memory follows
// the live set rather than the whole graph.
#include "core/eager/interpreter.h"

#include <algorithm>
#include <new>
#include <stdexcept>

#include "core/ops/registry.h"

namespace fuselens {
namespace {

std::string shapeText(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// The dtype a tensor declared `declared` has in this run: f32 is f64 when widened.
DType runDType(DType declared, const EagerOptions& opts) {
  return opts.widenToF64 && declared == DType::F32 ? DType::F64 : declared;
}

// An f32 tensor as f64 (exact); any other tensor unchanged.
TensorData widened(TensorData t) {
  if (t.dtype != DType::F32) return t;
  TensorData w(DType::F64, t.shape);
  const float* from = t.data<float>();
  double* to = w.data<double>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i) to[i] = double(from[i]);
  return w;
}

// The options a body (fused group, If/Loop branch) runs with: the caller's precision.
EagerOptions bodyOptions(const EagerOptions& run) {
  EagerOptions opts;
  opts.keepIntermediates = false;
  opts.widenToF64 = run.widenToF64;
  opts.accumulation = run.accumulation;
  return opts;
}

// Checks one input against its declared type; symbols must bind consistently.
// A widened run also takes the f64 form of an f32 input (a body fed by a widened caller).
Status checkInput(const Value& v, const TensorData& t, std::map<std::string, int64_t>& symbols,
                  const EagerOptions& opts) {
  const std::string where = "input '" + v.name + "'";
  if (t.dtype != v.type.dtype && t.dtype != runDType(v.type.dtype, opts))
    return Status::error("has element type " + std::string(dtypeName(t.dtype)) +
                             " but the model expects " + v.type.str(),
                         where);
  if (t.bytes.size() != size_t(t.numel()) * dtypeSize(t.dtype))
    return Status::error("holds " + std::to_string(t.bytes.size()) + " bytes, not the " +
                             std::to_string(t.numel() * dtypeSize(t.dtype)) + " its shape needs",
                         where);
  if (!v.type.rankKnown) return Status::ok();
  bool ok = t.rank() == v.type.rank();
  for (size_t i = 0; ok && i < t.rank(); ++i) {
    const Dim& d = v.type.shape[i];
    if (d.isStatic())
      ok = d.value == t.shape[i];
    else if (!d.symbol.empty() && d.symbol.find_first_of("+-*/()") == std::string::npos)
      // A plain name binds; an expression (seq*2) follows from its names.
      ok = symbols.emplace(d.symbol, t.shape[i]).first->second == t.shape[i];
  }
  if (!ok)
    return Status::error("has shape " + shapeText(t.shape) + " but the model expects " +
                             v.type.str() + " (symbols bind to one size across all inputs)",
                         where);
  return Status::ok();
}

// The kernel's output must agree with the type the graph declares for it; a
// disagreement means inference or a pass got the type wrong.
Status checkOutput(const Node& n, const Value& v, const TensorData& t, const EagerOptions& opts) {
  const TensorType& ty = v.type;
  bool ok = t.dtype == runDType(ty.dtype, opts);
  if (ty.rankKnown) {
    ok = ok && t.rank() == ty.rank();
    for (size_t i = 0; ok && i < t.rank(); ++i)
      ok = !ty.shape[i].isStatic() || ty.shape[i].value == t.shape[i];
  }
  if (ok) return Status::ok();
  return Status::error("output '" + v.name + "' came out as " + t.type().str() +
                           " but its declared type is " + ty.str(),
                       describeNode(n));
}

Expected<std::vector<TensorData>> runFused(const Node& n, const std::vector<const TensorData*>& in,
                                           const EagerOptions& run, const CancelToken& cancel) {
  const Graph& body = *n.body;
  if (body.inputs().size() != in.size() || body.outputs().size() != n.outputs.size())
    return Status::error("the body's inputs and outputs do not match the node's", describeNode(n));
  std::map<std::string, TensorData> bodyInputs;
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i]) bodyInputs[body.value(body.inputs()[i]).name] = *in[i];
  auto r = runEager(body, bodyInputs, bodyOptions(run), {}, cancel);
  if (!r) return Status::error("inside the group: " + r.diagnostic().str(), describeNode(n));
  std::vector<TensorData> outs;
  const auto& bodyOuts = body.outputs();
  for (size_t i = 0; i < bodyOuts.size(); ++i) {
    // Move each tensor out, unless a later output slot names the same value.
    auto& t = *r->tensors[bodyOuts[i].index];
    bool again = std::find(bodyOuts.begin() + i + 1, bodyOuts.end(), bodyOuts[i]) != bodyOuts.end();
    outs.push_back(again ? t : std::move(t));
  }
  return outs;
}

Expected<std::vector<TensorData>> runNode(const Node& n, const std::vector<const TensorData*>& in,
                                          const EagerOptions& run, const CancelToken& cancel) {
  if (n.op == kFusedOp && n.domain == kFuseLensDomain && n.body)
    return runFused(n, in, run, cancel);
  const OpInfo* info = OpRegistry::instance().find(n.domain, n.op);
  if (!info || !info->eager) {
    std::string domain = n.domain.empty() ? "ai.onnx" : n.domain;
    return Status::error("no eager kernel for op " + n.op + " (domain " + domain + ")",
                         describeNode(n));
  }
  // A hostile model can ask for a tensor larger than memory (Tile, Expand,
  // Pad, Resize with huge sizes): that is a sentence, not a crash.
  try {
    return info->eager(n, in, eagerKernelContext(cancel, run));
  } catch (const std::bad_alloc&) {
    return Status::error("ran out of memory computing the outputs (they are too large)",
                         describeNode(n));
  } catch (const std::length_error&) {
    return Status::error("an output would be larger than any tensor can be", describeNode(n));
  }
}

}  // namespace

KernelContext eagerKernelContext(const CancelToken& cancel, const EagerOptions& run) {
  KernelContext ctx;
  EagerOptions opts = bodyOptions(run);
  ctx.runBody = [cancel, opts](const Graph& body,
                               const std::map<std::string, TensorData>& inputs) -> KernelOutputs {
    auto r = runEager(body, inputs, opts, {}, cancel);
    if (!r) return r.status();
    std::vector<TensorData> outs;
    for (ValueId v : body.outputs()) {
      const TensorData* t = r->find(v);
      if (!t)
        return Status::error("the body produced no value for output '" + body.value(v).name + "'");
      outs.push_back(*t);
    }
    return outs;
  };
  return ctx;
}

Expected<EagerResult> runEager(const Graph& g, const std::map<std::string, TensorData>& inputs,
                               const EagerOptions& opts, const Progress& progress,
                               const CancelToken& cancel) {
  ScopedAccumulation accumulation(opts.accumulation);
  EagerResult result;
  result.tensors.resize(g.valueCapacity());
  // Where each value's tensor lives: in `result` or, for constants, in the graph.
  std::vector<const TensorData*> live(g.valueCapacity(), nullptr);
  std::map<std::string, int64_t> symbols;
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    auto it = inputs.find(v.name);
    if (it == inputs.end())
      return Status::error("missing input '" + v.name + "' of type " + v.type.str());
    FL_RETURN_IF_ERROR(checkInput(v, it->second, symbols, opts));
    live[id.index] =
        &result.tensors[id.index].emplace(opts.widenToF64 ? widened(it->second) : it->second);
  }
  for (ValueId id : g.constants()) {
    const auto& data = g.value(id).constant;
    const bool copy = opts.keepIntermediates || g.isGraphOutput(id) ||
                      (opts.widenToF64 && data->dtype == DType::F32);
    live[id.index] =
        copy ? &result.tensors[id.index].emplace(opts.widenToF64 ? widened(*data) : *data)
             : data.get();
  }

  auto order = g.topoOrder();
  if (!order) return Status::error("the graph has a cycle, so it cannot be run");
  // Remaining users per value, to free tensors early when intermediates are not kept.
  std::vector<int> pendingUsers(g.valueCapacity(), 0);
  for (ValueId v : g.valueIds()) pendingUsers[v.index] = int(g.value(v).users.size());
  auto release = [&](ValueId v) {
    bool keep = opts.keepIntermediates || g.isGraphOutput(v) || !g.value(v).producer.valid() ||
                std::find(opts.keep.begin(), opts.keep.end(), v) != opts.keep.end();
    if (!keep && --pendingUsers[v.index] <= 0) {
      result.tensors[v.index].reset();
      live[v.index] = nullptr;
    }
  };

  for (size_t step = 0; step < order->size(); ++step) {
    if (cancel.cancelled()) return Status::error("cancelled");
    const Node& n = g.node((*order)[step]);
    report(progress, double(step) / double(order->size()), "eager " + describeNode(n));
    std::vector<const TensorData*> in;
    for (ValueId v : n.inputs) {
      if (v.valid() && !live[v.index])
        return Status::error("input '" + g.value(v).name + "' has no tensor (no producer ran)",
                             describeNode(n));
      in.push_back(v.valid() ? live[v.index] : nullptr);
    }
    auto outs = runNode(n, in, opts, cancel);
    if (!outs) return outs.status();
    if (outs->size() != n.outputs.size())
      return Status::error("the kernel returned " + std::to_string(outs->size()) +
                               " outputs, the node has " + std::to_string(n.outputs.size()),
                           describeNode(n));
    for (size_t i = 0; i < outs->size(); ++i) {
      ValueId o = n.outputs[i];
      // A widened run widens what a kernel still makes in f32 (a Cast to float,
      // a kernel that computes in f32 only) before anything reads it.
      if (opts.widenToF64) (*outs)[i] = widened(std::move((*outs)[i]));
      FL_RETURN_IF_ERROR(checkOutput(n, g.value(o), (*outs)[i], opts));
      live[o.index] = &result.tensors[o.index].emplace(std::move((*outs)[i]));
      if (g.value(o).users.empty()) {
        ++pendingUsers[o.index];  // so release() drops an unused output at once
        release(o);
      }
    }
    // Each distinct input once; sorted, not searched, as a node may read 50,000.
    std::vector<ValueId> distinct;
    for (ValueId v : n.inputs)
      if (v.valid()) distinct.push_back(v);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (ValueId v : distinct) release(v);
  }
  report(progress, 1.0, "eager done");
  return result;
}

}  // namespace fuselens
