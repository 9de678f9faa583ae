#include "passes/memory_plan.h"

#include <algorithm>
#include <limits>
#include <set>

#include "core/ops/registry.h"

namespace fuselens {
namespace {

bool isAliasOp(const Node& n) {
  static const std::set<std::string> ops = {"Reshape", "Identity", "Flatten", "Squeeze", "Unsqueeze"};
  return n.domain.empty() && ops.count(n.op) != 0 && !n.inputs.empty() && n.inputs[0].valid() &&
         n.outputs.size() == 1;
}

bool isFusedNode(const Node& n) { return n.op == kFusedOp && n.domain == kFuseLensDomain; }

// May this node write an output over one of its inputs?
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

std::string ref(const Graph& g, ValueId v) { return "%" + g.value(v).name; }

struct Buffer {
  int64_t size = 0;
  int64_t end = -1;  // position of the last node reading it; kNever for graph outputs
  bool free = false;
  std::vector<std::string> holders;  // "%a", "%c (in place of %a)", ...
};

}  // namespace

PassResult MemoryPlanPass::run(Graph& g, PassContext& ctx) {
  auto order = g.topoOrder();
  if (!order) return PassResult::failed(Status::error("the graph has a cycle", "memory-plan"));
  const int64_t kNever = std::numeric_limits<int64_t>::max();
  const size_t nv = g.valueCapacity();
  std::vector<int64_t> pos(g.nodeCapacity(), -1);
  for (size_t i = 0; i < order->size(); ++i) pos[(*order)[i].index] = int64_t(i);

  PassResult r;
  // Byte size of each planned value (-1: not planned), and the root value
  // whose buffer it uses (itself, or the value an alias reads).
  std::vector<int64_t> bytes(nv, -1);
  std::vector<ValueId> root(nv);
  std::vector<bool> planned(nv, false);
  int64_t skipped = 0, aliases = 0;
  std::vector<ValueId> skippedValues;
  for (NodeId id : *order) {
    const Node& n = g.node(id);
    bool alias = isAliasOp(n) && planned[n.inputs[0].index];
    for (ValueId o : n.outputs) {
      const Value& v = g.value(o);
      auto count = v.type.numElements();
      if (!count) {
        ++skipped;
        skippedValues.push_back(o);
        r.diagnostics.push_back(Diagnostic{Severity::Note, describeNode(n),
                                           "value " + ref(g, o) + " has the dynamic shape " + v.type.str() +
                                               "; not planned (it needs a run-time allocation)"});
        continue;
      }
      planned[o.index] = true;
      bytes[o.index] = *count * int64_t(dtypeSize(v.type.dtype));
      root[o.index] = alias ? root[n.inputs[0].index] : o;
      if (alias) ++aliases;
    }
  }

  // Liveness: the last position reading each root's buffer, through its aliases.
  std::vector<int64_t> end(nv, -1);
  for (ValueId v : g.valueIds()) {
    if (!planned[v.index]) continue;
    const Value& val = g.value(v);
    int64_t last = pos[val.producer.index];  // an unused value dies where it is made
    for (NodeId u : val.users) last = std::max(last, pos[u.index]);
    if (g.isGraphOutput(v)) last = kNever;
    int64_t& e = end[root[v.index].index];
    e = std::max(e, last);
  }

  std::vector<std::vector<ValueId>> dying(order->size());  // roots by the position they die at
  for (ValueId v : g.valueIds())
    if (planned[v.index] && root[v.index] == v && end[v.index] != kNever) dying[end[v.index]].push_back(v);

  auto align = [&](int64_t b) { return (b + opts_.alignment - 1) / opts_.alignment * opts_.alignment; };
  std::vector<Buffer> buffers;
  std::vector<int> bufferOf(nv, -1);
  auto plan = std::make_shared<BufferPlan>();
  using How = BufferPlan::Entry::How;
  int64_t before = 0, liveNow = 0, liveMax = 0, inPlace = 0, values = 0;
  for (size_t i = 0; i < order->size(); ++i) {
    if (ctx.cancel.cancelled()) return PassResult::failed(Status::error("cancelled", "memory-plan"));
    NodeId id = (*order)[i];
    const Node& n = g.node(id);
    std::set<int> takenInPlace;
    for (ValueId o : n.outputs) {
      if (!planned[o.index]) continue;
      ++values;
      if (root[o.index] != o) {  // an alias: shares the buffer of what it reads
        int b = bufferOf[root[o.index].index];
        bufferOf[o.index] = b;
        buffers[b].holders.push_back(ref(g, o) + " (alias of " + ref(g, n.inputs[0]) + ")");
        plan->values.push_back({o, g.value(o).name, b, 0, bytes[o.index], How::Alias});
        continue;
      }
      before += bytes[o.index];
      liveNow += bytes[o.index];
      liveMax = std::max(liveMax, liveNow);
      int chosen = -1;
      std::string how;
      How kind = How::Reused;
      if (opts_.inPlace && elementwise(g, id)) {
        for (ValueId in : n.inputs) {
          if (!in.valid() || !planned[in.index] || bytes[in.index] != bytes[o.index]) continue;
          int b = bufferOf[in.index];
          if (b < 0 || end[root[in.index].index] != int64_t(i) || takenInPlace.count(b)) continue;
          chosen = b;
          how = " (in place of " + ref(g, in) + ")";
          takenInPlace.insert(b);
          kind = How::InPlace;
          ++inPlace;
          break;
        }
      }
      if (chosen < 0) {
        int64_t need = align(bytes[o.index]);
        for (size_t b = 0; b < buffers.size(); ++b)
          if (buffers[b].free && buffers[b].size >= need && (chosen < 0 || buffers[b].size < buffers[chosen].size))
            chosen = int(b);
        if (chosen < 0) {
          buffers.push_back(Buffer{need, -1, false, {}});
          chosen = int(buffers.size()) - 1;
          kind = How::Fresh;
        }
      }
      Buffer& buf = buffers[chosen];
      buf.free = false;
      buf.end = end[o.index];
      buf.holders.push_back(ref(g, o) + how);
      bufferOf[o.index] = chosen;
      plan->values.push_back({o, g.value(o).name, chosen, 0, bytes[o.index], kind});
    }
    // Free what this node read last (and what it made that nobody reads).
    for (Buffer& buf : buffers)
      if (!buf.free && buf.end <= int64_t(i)) buf.free = true;
    for (ValueId v : dying[i]) liveNow -= bytes[v.index];
  }

  int64_t after = 0;
  for (size_t b = 0; b < buffers.size(); ++b) {
    after += buffers[b].size;
    std::string list;
    for (const auto& h : buffers[b].holders) list += (list.empty() ? "" : ", ") + h;
    r.diagnostics.push_back(Diagnostic{Severity::Note, "graph @" + g.name,
                                       "buffer " + std::to_string(b) + " (" + std::to_string(buffers[b].size) +
                                           " bytes): " + list});
  }
  for (size_t b = 0; b < buffers.size(); ++b) {  // one arena, buffers in order
    plan->bufferOffset.push_back(plan->arenaBytes);
    plan->bufferBytes.push_back(buffers[b].size);
    plan->arenaBytes += buffers[b].size;
  }
  for (auto& e : plan->values) e.offset = plan->bufferOffset[size_t(e.buffer)];
  plan->skipped = skippedValues;
  ctx.bufferPlan = plan;
  r.stats["values planned"] = values;
  r.stats["aliases"] = aliases;
  r.stats["buffers"] = int64_t(buffers.size());
  r.stats["in-place"] = inPlace;
  r.stats["values skipped (dynamic shape)"] = skipped;
  r.stats["peak bytes before"] = before;
  r.stats["peak bytes after"] = after;
  r.stats["peak live bytes"] = liveMax;
  return r;
}

}  // namespace fuselens
