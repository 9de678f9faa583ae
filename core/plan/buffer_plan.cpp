// The buffer planner (see buffer_plan.h): liveness over the steps of a run,
// then best-fit buffer assignment with in-place updates.
#include "core/plan/buffer_plan.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "core/ops/registry.h"

namespace fuselens {
namespace {

bool isFusedNode(const Node& n) { return n.op == kFusedOp && n.domain == kFuseLensDomain; }

// May this node write its output over one of its inputs? Elementwise only:
// each output element reads the same element of a same-shaped input.
bool elementwise(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (isFusedNode(n)) {
    std::string kind = n.attrs.getString("kind", "");
    if (kind.rfind("pattern-", 0) == 0 && n.body) {  // fuse-patterns' groups: look at the body
      for (NodeId b : n.body->nodeIds())
        if (patternKindOf(*n.body, b) > PatternKind::Broadcast) return false;
      return true;
    }
    return kind == "ElemWise" || kind == "Broadcast";
  }
  PatternKind k = patternKindOf(g, id);
  return k == PatternKind::ElemWise || k == PatternKind::Broadcast;
}

// Storage and placement facts shared by planBuffers and planCovers.
class Storage {
 public:
  Storage(const Graph& g, const RunSteps& run) : g_(g), producedBy_(g.valueCapacity(), -1) {
    for (auto& [v, src] : run.aliases) aliasOf_[v.index] = src;
    for (size_t k = 0; k < run.steps.size(); ++k)
      for (ValueId o : run.steps[k].outputs) producedBy_[o.index] = int64_t(k);
    for (ValueId v : g.inputs()) pinned_.insert(root(v).index);
    for (ValueId v : g.outputs()) pinned_.insert(root(v).index);
  }
  ValueId root(ValueId v) const {
    for (auto it = aliasOf_.find(v.index); it != aliasOf_.end(); it = aliasOf_.find(v.index))
      v = it->second;
    return v;
  }
  int64_t producer(ValueId v) const { return producedBy_[v.index]; }
  // Kernel-written storage the arena may hold (dynamic shapes aside).
  bool inArena(ValueId r) const {
    return producedBy_[r.index] >= 0 && !pinned_.count(r.index) && !g_.value(r).constant;
  }
  std::optional<int64_t> bytes(ValueId v) const {
    const TensorType& t = g_.value(v).type;
    auto n = t.rankKnown ? t.numElements() : std::nullopt;
    if (!n) return std::nullopt;
    return *n * int64_t(dtypeSize(t.dtype));
  }

 private:
  const Graph& g_;
  std::map<int32_t, ValueId> aliasOf_;
  std::vector<int64_t> producedBy_;
  std::set<int32_t> pinned_;
};

struct Buffer {
  int64_t size = 0;
  int64_t end = -1;  // the last step reading what it holds
  bool free = false;
};

}  // namespace

const BufferPlan::Entry* BufferPlan::find(ValueId v) const {
  for (const Entry& e : values)
    if (e.value == v) return &e;
  return nullptr;
}

std::string BufferPlan::summary() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "arena %.2f MiB (tensors without reuse: %.2f MiB)",
                double(arenaBytes) / (1 << 20), double(unsharedBytes) / (1 << 20));
  return buf;
}

Expected<RunSteps> runStepsOf(const Graph& g) {
  auto order = g.topoOrder();
  if (!order) return Status::error("the graph has a cycle", "graph '" + g.name + "'");
  RunSteps run;
  for (NodeId id : *order) {
    const Node& n = g.node(id);
    if (!needsKernel(g, n)) {
      run.aliases.emplace_back(n.outputs[0], n.inputs[0]);
      run.aliasBefore.push_back(run.steps.size());
      continue;
    }
    PlanStep s{id, {}, n.outputs, n.outputs.size() == 1 && elementwise(g, id)};
    for (ValueId v : n.inputs)
      if (v.valid()) s.inputs.push_back(v);
    run.steps.push_back(std::move(s));
  }
  return run;
}

BufferPlan planBuffers(const Graph& g, const RunSteps& run, const PlanOptions& opts) {
  using How = BufferPlan::Entry::How;
  const Storage st(g, run);
  const size_t nv = g.valueCapacity();
  // The last step reading each arena root, through its aliases.
  std::vector<int64_t> end(nv, -1);
  for (size_t k = 0; k < run.steps.size(); ++k) {
    for (ValueId o : run.steps[k].outputs) end[o.index] = std::max(end[o.index], int64_t(k));
    for (ValueId v : run.steps[k].inputs) {
      ValueId r = st.root(v);
      end[r.index] = std::max(end[r.index], int64_t(k));
    }
  }
  std::vector<std::vector<ValueId>> dying(run.steps.size());
  BufferPlan plan;
  plan.alignment = std::max<int64_t>(1, opts.alignment);
  auto align = [&](int64_t b) {
    return (b + plan.alignment - 1) / plan.alignment * plan.alignment;
  };
  std::vector<Buffer> buffers;
  std::vector<int> bufferOf(nv, -1);
  std::vector<int64_t> bytesOf(nv, 0);
  int64_t liveNow = 0;
  size_t nextAlias = 0;
  auto placeAliases = [&](size_t before) {
    for (; nextAlias < run.aliases.size() && run.aliasBefore[nextAlias] <= before; ++nextAlias) {
      auto [v, src] = run.aliases[nextAlias];
      int b = bufferOf[st.root(v).index];
      if (b < 0) continue;
      bufferOf[v.index] = b;
      plan.values.push_back({v, g.value(v).name, b, 0, st.bytes(v).value_or(0), How::Alias, src});
    }
  };
  for (size_t i = 0; i < run.steps.size(); ++i) {
    placeAliases(i);
    const PlanStep& step = run.steps[i];
    std::set<int> takenInPlace;
    for (ValueId o : step.outputs) {
      if (!st.inArena(o)) continue;
      auto bytes = st.bytes(o);
      if (!bytes) {
        plan.skipped.push_back(o);
        continue;
      }
      bytesOf[o.index] = *bytes;
      plan.unsharedBytes += *bytes;
      liveNow += *bytes;
      plan.peakLiveBytes = std::max(plan.peakLiveBytes, liveNow);
      if (end[o.index] >= 0) dying[size_t(end[o.index])].push_back(o);
      int chosen = -1;
      How how = How::Reused;
      ValueId over;
      if (opts.inPlace && step.inPlace) {
        const TensorType& ot = g.value(o).type;
        for (ValueId in : step.inputs) {
          int b = bufferOf[st.root(in).index];
          const TensorType& it = g.value(in).type;
          if (b < 0 || end[st.root(in).index] != int64_t(i) || takenInPlace.count(b) ||
              dtypeSize(it.dtype) != dtypeSize(ot.dtype) || it.shape != ot.shape)
            continue;
          chosen = b;
          how = How::InPlace;
          over = in;
          takenInPlace.insert(b);
          break;
        }
      }
      if (chosen < 0) {
        int64_t need = align(*bytes);
        for (size_t b = 0; b < buffers.size(); ++b)
          if (buffers[b].free && buffers[b].size >= need &&
              (chosen < 0 || buffers[b].size < buffers[size_t(chosen)].size))
            chosen = int(b);
        if (chosen < 0) {
          buffers.push_back(Buffer{need, -1, false});
          chosen = int(buffers.size()) - 1;
          how = How::Fresh;
        }
      }
      Buffer& buf = buffers[size_t(chosen)];
      buf.free = false;
      buf.end = end[o.index];
      bufferOf[o.index] = chosen;
      plan.values.push_back({o, g.value(o).name, chosen, 0, *bytes, how, over});
    }
    for (Buffer& buf : buffers)  // free what this step read last
      if (!buf.free && buf.end <= int64_t(i)) buf.free = true;
    for (ValueId v : dying[i]) liveNow -= bytesOf[v.index];
  }
  placeAliases(run.steps.size());
  for (const Buffer& b : buffers) {  // one arena, buffers in order
    plan.bufferOffset.push_back(plan.arenaBytes);
    plan.bufferBytes.push_back(b.size);
    plan.arenaBytes += b.size;
  }
  for (auto& e : plan.values) e.offset = plan.bufferOffset[size_t(e.buffer)];
  return plan;
}

bool planCovers(const BufferPlan& plan, const Graph& g, const RunSteps& run) {
  const Storage st(g, run);
  std::map<int32_t, const BufferPlan::Entry*> at;
  for (const auto& e : plan.values) at[e.value.index] = &e;
  for (const PlanStep& step : run.steps)
    for (ValueId o : step.outputs) {
      if (!st.inArena(o) || !st.bytes(o)) continue;
      auto it = at.find(o.index);
      if (it == at.end() || it->second->bytes != *st.bytes(o) ||
          it->second->offset + it->second->bytes > plan.arenaBytes)
        return false;
    }
  return true;
}

}  // namespace fuselens
