#include "session/isolated_compare.h"

#include <algorithm>
#include <map>

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

KernelGraph extractKernelGraph(const Graph& g, const Node& n) {
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
  NodeId copy = k.graph.addNode(n.op, ins, outs, n.attrs, n.name);
  Node& c = k.graph.mutableNode(copy);
  c.domain = n.domain;
  c.body = n.body;
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

}  // namespace

Expected<IsolatedReport> compareIsolated(const Graph& g, const std::vector<KernelInfo>& kernels,
                                         const EagerResult& eager,
                                         const std::vector<std::optional<TensorData>>* endToEnd,
                                         const Tolerance& tol, const CompileOptions& opts,
                                         const Progress& progress, const CancelToken& cancel) {
  IsolatedReport rep;
  rep.tolerance = tol;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (cancel.cancelled()) return Status::error("cancelled");
    const KernelInfo& ki = kernels[i];
    report(progress, double(i) / double(kernels.size()), "isolated: " + ki.name);
    if (!g.hasNode(ki.node)) continue;
    if (ki.fallback) {  // the eager kernel itself: nothing compiled to check
      for (ValueId v : ki.outputs)
        rep.rows.push_back(
            skippedRow(ki, g, v, std::string(kFallbackLabel) + ": " + ki.fallbackReason));
      continue;
    }
    KernelGraph k = extractKernelGraph(g, g.node(ki.node));

    std::map<std::string, TensorData> feeds;
    std::string missing;
    for (const auto& [name, v] : k.feeds) {
      const TensorData* t = eager.find(g.value(v).origin);
      if (!t) {
        missing = g.value(v).name;
        break;
      }
      feeds[name] = *t;
    }
    std::string why;
    std::vector<std::optional<TensorData>> got;
    if (!missing.empty()) {
      why = "its input '" + missing + "' has no eager tensor to feed";
    } else if (auto mod = compileGraph(k.graph, opts, {}, cancel); !mod) {
      why = mod.message();
    } else if (auto run = (*mod)->run(feeds, cancel); !run) {
      why = run.message();
    } else {
      got = std::move(*run);
    }
    const std::vector<ValueId>& miniOuts = k.graph.outputs();
    for (size_t o = 0; o < k.outputs.size(); ++o) {
      ValueId v = k.outputs[o];
      const TensorData* ref = eager.find(g.value(v).origin);
      if (!why.empty() || !ref) {
        rep.rows.push_back(
            skippedRow(ki, g, v, why.empty() ? "no eager tensor to compare with" : why));
        continue;
      }
      ValueId mv = miniOuts[o];
      if (size_t(mv.index) >= got.size() || !got[mv.index]) {
        rep.rows.push_back(skippedRow(ki, g, v, "the kernel did not return this output"));
        continue;
      }
      IsolatedRow r = skippedRow(ki, g, v, {});
      r.isolated = compareTensors(*ref, *got[mv.index], tol);
      if (endToEnd && size_t(v.index) < endToEnd->size() && (*endToEnd)[v.index])
        r.endToEnd = compareTensors(*ref, *(*endToEnd)[v.index], tol);
      r.verdict = !r.isolated.withinTolerance() ? IsolatedVerdict::KernelDiffers
                  : (r.endToEnd && !r.endToEnd->withinTolerance())
                      ? IsolatedVerdict::AccumulatedUpstream
                      : IsolatedVerdict::Ok;
      rep.rows.push_back(std::move(r));
    }
  }
  report(progress, 1.0, "isolated comparison done");
  return rep;
}

}  // namespace fuselens
