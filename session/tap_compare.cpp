// Finding a tap and running a group's tapped variant (session/tap_compare.h).
#include "session/tap_compare.h"

#include <algorithm>
#include <cstring>

#include "core/compare/storage_floor.h"
#include "session/compared_runs.h"
#include "session/isolated_compare.h"
#include "session/perturb.h"

namespace fuselens {

bool TapReport::allWithin() const {
  return std::all_of(rows.begin(), rows.end(), [](const TapRow& r) { return r.ok(); });
}

std::string TapReport::verdict() const {
  for (const TapRow& r : rows) {
    if (r.ok()) continue;
    const std::string where = "FAIL: tap " + r.row.name + " (inside " + r.kernel + ", group " +
                              std::to_string(r.group) + ")";
    if (!r.outputsIdentical) return where + " changed the group's outputs: " + r.outputsNote;
    return where + " is " + rowStatus(r.row);
  }
  const size_t n = rows.size();
  return "PASS: " + std::to_string(n) + " tap" + (n == 1 ? "" : "s") +
         (options.rounding() ? " within rounding " : " within tolerance ") + options.describe() +
         ", group outputs unchanged by tapping";
}

namespace {

bool isGroup(const Node& n) { return n.op == kFusedOp && n.domain == kFuseLensDomain && n.body; }

// A value of the group's body that stands for `origin` and that the body computes.
std::optional<ValueId> computedInside(const Graph& body, ValueId origin) {
  for (ValueId v : body.valueIds()) {
    const Value& val = body.value(v);
    if (val.origin == origin && val.producer.valid() && !body.isGraphOutput(v)) return v;
  }
  return std::nullopt;
}

// The compiled run's tensors for the variant's graph inputs: bit-identical
// outputs need the very inputs the group got in that run.
Expected<std::map<std::string, TensorData>> compiledFeeds(
    const Graph& g, const KernelGraph& k, const std::vector<std::optional<TensorData>>& compiled) {
  std::map<std::string, TensorData> feeds;
  for (const auto& [name, v] : k.feeds) {
    if (size_t(v.index) >= compiled.size() || !compiled[v.index])
      return Status::error("the compiled run kept no tensor for the group's input '" +
                           g.value(v).name + "'");
    feeds[name] = *compiled[v.index];
  }
  return feeds;
}

bool sameBits(const TensorData& a, const TensorData& b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.bytes == b.bytes;
}

}  // namespace

Expected<TapTarget> findTap(const Graph& original, const Graph& g,
                            const std::vector<KernelInfo>& kernels, const std::string& name) {
  std::optional<ValueId> origin = original.findValue(name);
  if (!origin) return Status::error("no tensor named '" + name + "' in the model");
  const Value& ov = original.value(*origin);
  if (ov.constant)
    return Status::error("'" + name + "' is a constant of the model, not computed by any kernel");
  for (ValueId v : g.valueIds())
    if (g.value(v).origin == *origin && !g.value(v).constant)
      return Status::error("'" + name +
                           "' is a kernel-boundary tensor: compare already reports it as a row");
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelInfo& ki = kernels[i];
    if (!g.hasNode(ki.node) || !isGroup(g.node(ki.node))) continue;
    std::optional<ValueId> inside = computedInside(*g.node(ki.node).body, *origin);
    if (!inside) continue;
    if (ki.fallback)
      return Status::error("'" + name + "' is computed inside " + ki.name +
                           ", which runs as the reference fallback, not compiled code");
    return TapTarget{i, *inside};
  }
  return Status::error("'" + name +
                       "' is not computed by compiled code: the passes folded it away or "
                       "rewrote its ops into one");
}

Expected<TapRow> runTap(const Graph& original, const Graph& g,
                        const std::vector<KernelInfo>& kernels, const TapTarget& target,
                        const ReferenceRuns& refs,
                        const std::vector<std::optional<TensorData>>& compiled,
                        const CompareOptions& opts, CompileOptions compileOpts, double perturbEps,
                        const CancelToken& cancel) {
  const KernelInfo& ki = kernels.at(target.kernel);
  const Node& node = g.node(ki.node);
  const Value& tap = node.body->value(target.bodyValue);
  KernelGraph k = extractKernelGraph(g, node, {target.bodyValue});
  auto feeds = compiledFeeds(g, k, compiled);
  if (!feeds) return feeds.status();
  // A lowering that cannot place the tap must say so, not hide behind the eager kernel.
  compileOpts.fallback = false;
  compileOpts.bufferPlan.reset();
  auto mod = compileGraph(k.graph, compileOpts, {}, cancel);
  if (!mod) return Status::error("tapping '" + tap.name + "' in " + ki.name + ": " + mod.message());
  auto run = (*mod)->run(*feeds, cancel);
  if (!run) return run.status();
  if (perturbEps != 0)
    for (size_t o = 0; o < node.outputs.size(); ++o)
      if (size_t i = size_t(k.graph.outputs()[o].index); i < run->size() && (*run)[i])
        perturbTensor(*(*run)[i], perturbEps);
  const std::vector<ValueId>& outs = k.graph.outputs();
  auto got = [&](size_t i) -> const TensorData* {
    ValueId mv = outs.at(i);
    return size_t(mv.index) < run->size() && (*run)[mv.index] ? &*(*run)[mv.index] : nullptr;
  };

  TapRow r;
  r.kernel = ki.name;
  r.group = node.attrs.getInt("group", -1);
  r.node = node.name;
  r.outputsIdentical = true;
  for (size_t o = 0; o < node.outputs.size() && r.outputsIdentical; ++o) {
    ValueId v = node.outputs[o];
    const TensorData* mine = got(o);
    const TensorData* theirs =
        size_t(v.index) < compiled.size() && compiled[v.index] ? &*compiled[v.index] : nullptr;
    if (!mine || !theirs || !sameBits(*mine, *theirs)) {
      r.outputsIdentical = false;
      r.outputsNote = "output '" + g.value(v).name + "' differs from the compiled run's";
    }
  }
  const TensorData* value = got(node.outputs.size());
  if (!value) return Status::error("the tapped " + ki.name + " returned no tensor for the tap");
  if (!refs.eager.find(tap.origin))
    return Status::error("'" + tap.name + "' has no eager tensor to compare with");
  r.row.name = original.value(tap.origin).name;
  r.row.producer = ki.name;
  // Under --precision the group's inputs were stored reduced: the same floor
  // as its boundary tensors.
  judgeRow(r.row, original, refs, tap.origin, *value, tap.layout, opts,
           storagePrecision(original, g));
  return r;
}

}  // namespace fuselens
