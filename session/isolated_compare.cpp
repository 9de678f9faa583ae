#include "session/isolated_compare.h"

#include <algorithm>
#include <map>

#include "codegen/driver/specialize.h"
#include "codegen/lower/lower.h"
#include "core/compare/storage_floor.h"
#include "core/ir/layout_store.h"
#include "core/ops/op_util.h"

namespace fuselens {

const char* verdictName(IsolatedVerdict v) {
  switch (v) {
    case IsolatedVerdict::Ok:
      return "ok";
    case IsolatedVerdict::KernelDiffers:
      return "kernel differs";
    case IsolatedVerdict::AccumulatedUpstream:
      return "accumulated upstream";
    case IsolatedVerdict::Skipped:
      return "skipped";
  }
  return "?";
}

const IsolatedRow* IsolatedReport::firstKernelDiffering() const {
  for (const IsolatedRow& r : rows)
    if (r.verdict == IsolatedVerdict::KernelDiffers) return &r;
  return nullptr;
}

bool IsolatedReport::allWithin() const {
  return std::none_of(rows.begin(), rows.end(), [](const IsolatedRow& r) {
    return r.verdict == IsolatedVerdict::KernelDiffers ||
           r.verdict == IsolatedVerdict::AccumulatedUpstream;
  });
}

IsolatedVerdict IsolatedReport::kernelVerdict(const IsolatedKernel& k) const {
  // Worst first: a kernel that differs, then error carried in, then ok; skipped when all are.
  static const IsolatedVerdict order[] = {
      IsolatedVerdict::KernelDiffers, IsolatedVerdict::AccumulatedUpstream, IsolatedVerdict::Ok};
  for (IsolatedVerdict v : order)
    for (size_t i : k.rows)
      if (rows[i].verdict == v) return v;
  return IsolatedVerdict::Skipped;
}

KernelGraph extractKernelGraph(const Graph& g, const Node& n, const std::vector<ValueId>& taps) {
  KernelGraph k;
  std::map<int32_t, ValueId> mapped;
  std::vector<ValueId> ins;
  for (ValueId v : n.inputs) {
    if (!v.valid()) {
      ins.push_back(v);
      continue;
    }
    auto it = mapped.find(v.index);
    if (it == mapped.end()) {
      const Value& val = g.value(v);
      ValueId m;
      if (val.constant) {
        m = k.graph.addConstant(val.name, val.constant);
      } else {
        std::string name = "in" + std::to_string(k.feeds.size());
        m = k.graph.addInput(name, val.type);
        k.feeds[name] = v;
      }
      it = mapped.emplace(v.index, m).first;
    }
    ins.push_back(it->second);
  }
  std::vector<OutputSpec> outs;
  for (ValueId v : n.outputs) outs.push_back({g.value(v).name, g.value(v).type});
  Attributes attrs = n.attrs;
  std::shared_ptr<const Graph> body = n.body;
  if (!taps.empty() && n.body) {
    auto tapped = std::make_shared<Graph>(*n.body);
    std::vector<ValueId> bodyOuts = tapped->outputs();
    for (ValueId t : taps) {
      bodyOuts.push_back(t);
      outs.push_back({tapped->value(t).name, tapped->value(t).type});
    }
    tapped->setOutputs(bodyOuts);
    attrs.set(kTapOutputsAttr, int64_t(taps.size()));
    body = std::move(tapped);
  }
  NodeId copy = k.graph.addNode(n.op, ins, outs, attrs, n.name);
  Node& c = k.graph.mutableNode(copy);
  c.domain = n.domain;
  c.body = body;
  std::vector<ValueId> results = k.graph.node(copy).outputs;
  k.graph.setOutputs(results);
  k.graph.markAsOriginal();
  k.outputs = n.outputs;
  return k;
}

namespace {

IsolatedRow skippedRow(const KernelInfo& ki, const Graph& g, ValueId v, std::string why) {
  IsolatedRow r;
  r.kernel = ki.name;
  r.node = g.node(ki.node).name;
  r.value = v;
  r.name = g.value(v).name;
  r.verdict = IsolatedVerdict::Skipped;
  r.skipped = std::move(why);
  return r;
}

// The imported nodes a kernel stands for, by name (its node's own name, or its
// body's, when the imported graph is not at hand).
std::vector<std::string> memberNames(const Node& n, const RoundingReferences* refs) {
  std::vector<std::string> out;
  if (refs)
    for (NodeId o : n.origins)
      if (refs->original.hasNode(o)) out.push_back(refs->original.node(o).name);
  if (!out.empty()) return out;
  if (n.body) {
    const std::vector<NodeId> body = n.body->topoOrder().value();  // verified acyclic
    for (NodeId b : body) out.push_back(n.body->node(b).name);
  } else {
    out.push_back(n.name);
  }
  return out;
}

// The eager tensors the kernel's graph inputs are fed, each stored in the
// layout the kernel reads it in; an error sentence when one cannot be.
Expected<std::map<std::string, TensorData>> kernelFeeds(const Graph& g, const KernelGraph& k,
                                                        const EagerResult& eager) {
  std::map<std::string, TensorData> feeds;
  for (const auto& [name, v] : k.feeds) {
    const Value& val = g.value(v);
    const TensorData* t = eager.find(val.origin);
    if (!t) return Status::error("its input '" + val.name + "' has no eager tensor to feed");
    // Imported values are plain, so the eager tensor is the logical one.
    auto stored = toStored(*t, val.layout);
    if (!stored)
      return Status::error("its input '" + val.name +
                           "' cannot be stored as the kernel reads it: " + stored.message());
    // A reduced-precision kernel reads f16 or bf16: it is fed the eager tensor
    // rounded as the compiled run would have stored it.
    if (stored->dtype != val.type.dtype) *stored = ops::castTensor(*stored, val.type.dtype);
    feeds[name] = std::move(*stored);
  }
  return feeds;
}

// A kernel whose inputs are typed with dynamic dims (an If's outputs, known
// only when the branch has run) is compiled for the shapes of the eager
// tensors it is fed, as the end-to-end run compiles it when first met.
Status specializeToFeeds(KernelGraph& k, const std::map<std::string, TensorData>& feeds) {
  std::vector<TensorType> types;
  bool dynamic = false;
  for (ValueId in : k.graph.inputs()) {
    const Value& v = k.graph.value(in);
    TensorType t = v.type;
    if (auto f = feeds.find(v.name); f != feeds.end() && !t.staticShape()) {
      dynamic = true;
      t = TensorType::of(t.dtype, f->second.shape);  // also when even the rank was unknown
    }
    types.push_back(std::move(t));
  }
  if (!dynamic) return Status::ok();
  auto spec = specializeGraph(k.graph, types);
  if (!spec) return spec.status();
  k.graph = std::move(*spec);
  return Status::ok();
}

// The verdict from the own and carried checks (rounding) or metrics (fixed).
IsolatedVerdict judge(const IsolatedRow& r) {
  const bool ownBad =
      r.own ? r.own->verdict != NumericVerdict::WithinRounding : !r.isolated.withinTolerance();
  const bool carriedBad = r.own ? r.carried && r.carried->verdict != NumericVerdict::WithinRounding
                                : r.endToEnd && !r.endToEnd->withinTolerance();
  return ownBad       ? IsolatedVerdict::KernelDiffers
         : carriedBad ? IsolatedVerdict::AccumulatedUpstream
                      : IsolatedVerdict::Ok;
}

}  // namespace

Expected<IsolatedReport> compareIsolated(
    const Graph& g, const std::vector<KernelInfo>& kernels, const EagerResult& eager,
    const std::vector<std::optional<TensorData>>* endToEnd, const CompareOptions& opts,
    const CompileOptions& compileOpts, const Progress& progress, const CancelToken& cancel,
    const RoundingReferences* refs, const Perturbations* perturb) {
  if (opts.rounding() && !refs)
    return Status::error("rounding verdicts need the f64 and f32-summing reference runs");
  IsolatedReport rep;
  rep.options = opts;
  // A reduced-precision run (--precision) is judged against one ulp of its storage.
  const DType storage = refs ? storagePrecision(refs->original, g) : DType::F32;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (cancel.cancelled()) return Status::error("cancelled");
    const KernelInfo& ki = kernels[i];
    report(progress, double(i) / double(kernels.size()), "isolated: " + ki.name);
    if (!g.hasNode(ki.node)) continue;
    const Node& node = g.node(ki.node);
    IsolatedKernel kern{ki.name, memberNames(node, refs), {}};
    auto add = [&](IsolatedRow r) {
      kern.rows.push_back(rep.rows.size());
      rep.rows.push_back(std::move(r));
    };
    if (ki.fallback) {  // the eager kernel itself: nothing compiled to check
      for (ValueId v : ki.outputs)
        add(skippedRow(ki, g, v, std::string(kFallbackLabel) + ": " + ki.fallbackReason));
      rep.kernels.push_back(std::move(kern));
      continue;
    }
    KernelGraph k = extractKernelGraph(g, node);
    std::string why;
    std::vector<std::optional<TensorData>> got;
    auto feeds = kernelFeeds(g, k, eager);
    if (!feeds) {
      why = feeds.message();
    } else if (Status st = specializeToFeeds(k, *feeds); !st) {
      why = st.message();
    } else if (auto mod = compileGraph(k.graph, compileOpts, {}, cancel); !mod) {
      why = mod.message();
    } else if (auto run = (*mod)->run(*feeds, cancel); !run) {
      why = run.message();
    } else {
      got = std::move(*run);
      // The alone run gets the injected fault too: it is this kernel's own error.
      if (double eps = perturb ? perturbationFor(*perturb, ki.name) : 0; eps != 0)
        for (ValueId mv : k.graph.outputs())
          if (size_t(mv.index) < got.size() && got[mv.index]) perturbTensor(*got[mv.index], eps);
    }
    // The kernel's own reference: its imported nodes alone, on the same inputs.
    std::optional<LocalReference> local;
    if (refs && why.empty()) {
      std::vector<ValueId> origins;
      for (ValueId v : k.outputs) origins.push_back(g.value(v).origin);
      if (auto l = runLocalReference(refs->original, node.origins, origins, eager, cancel))
        local = std::move(*l);
      else if (cancel.cancelled())
        return l.status();
    }
    const std::vector<ValueId>& miniOuts = k.graph.outputs();
    for (size_t o = 0; o < k.outputs.size(); ++o) {
      ValueId v = k.outputs[o];
      const Value& val = g.value(v);
      const TensorData* ref = eager.find(val.origin);
      if (!why.empty() || !ref) {
        add(skippedRow(ki, g, v, why.empty() ? "no eager tensor to compare with" : why));
        continue;
      }
      ValueId mv = miniOuts[o];
      if (size_t(mv.index) >= got.size() || !got[mv.index]) {
        add(skippedRow(ki, g, v, "the kernel did not return this output"));
        continue;
      }
      IsolatedRow r = skippedRow(ki, g, v, {});
      const TensorData& alone = *got[mv.index];
      r.isolated = compareTensors(*ref, {}, alone, val.layout, opts.tolerance, opts.stat);
      const TensorData* e2e = endToEnd && size_t(v.index) < endToEnd->size() && (*endToEnd)[v.index]
                                  ? &*(*endToEnd)[v.index]
                                  : nullptr;
      if (e2e) r.endToEnd = compareTensors(*ref, {}, *e2e, val.layout, opts.tolerance, opts.stat);
      if (opts.rounding()) {
        const TensorData *exact = refs->runs.exactOf(val.origin),
                         *sample = refs->runs.sampleOf(val.origin);
        // Without a local reference (its nodes would not run alone), the whole
        // model's f64 run stands in: the expected error then includes upstream noise.
        r.own = local ? checkRoundingStored(storage, local->exact[o], local->sample[o], {}, alone,
                                            val.layout, opts)
                      : checkRoundingStored(storage, exact ? *exact : *ref, sample ? *sample : *ref,
                                            {}, alone, val.layout, opts);
        if (e2e && exact && sample)
          r.carried =
              checkRoundingStored(storage, *exact, *sample, {}, *e2e, val.layout, opts, ref);
      }
      r.verdict = judge(r);
      add(std::move(r));
    }
    rep.kernels.push_back(std::move(kern));
  }
  report(progress, 1.0, "isolated comparison done");
  return rep;
}

}  // namespace fuselens
