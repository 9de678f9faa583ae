#include "passes/dce.h"

#include <algorithm>

namespace fuselens {

PassResult DcePass::run(Graph& g, PassContext& ctx) {
  auto order = g.topoOrder();
  if (!order) return PassResult::failed(Status::error("the graph has a cycle", "dce"));
  int64_t nodesRemoved = 0, constantsRemoved = 0;
  // Reverse topological order: a node's users are visited before it, so one
  // sweep removes whole dead chains.
  for (auto it = order->rbegin(); it != order->rend(); ++it) {
    const Node& n = g.node(*it);
    bool live = std::any_of(n.outputs.begin(), n.outputs.end(), [&](ValueId v) {
      return !g.value(v).users.empty() || g.isGraphOutput(v);
    });
    if (live) continue;
    g.removeNode(*it);
    ++nodesRemoved;
  }
  for (ValueId c : g.constants()) {
    if (!g.value(c).users.empty() || g.isGraphOutput(c)) continue;
    g.removeValue(c);
    ++constantsRemoved;
  }
  if (nodesRemoved == 0 && constantsRemoved == 0) return PassResult::unchanged();
  PassResult r;
  r.changed = true;
  r.stats["nodes removed"] = nodesRemoved;
  r.stats["constants removed"] = constantsRemoved;
  return r;
}

}  // namespace fuselens
