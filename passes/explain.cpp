// Matching decisions to boundaries goes by node names, which every pass keeps
// (a Fused group's body holds its members under their own names), so decisions
// made by fuse-patterns on one graph and fuse-ops on a later one both apply.
#include "passes/explain.h"

#include <algorithm>

namespace fuselens {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

std::vector<std::string> memberNames(const Node& n) {
  std::vector<std::string> names = {n.name};
  if (!n.body) return names;
  for (NodeId id : n.body->nodeIds()) {
    auto inner = memberNames(n.body->node(id));
    names.insert(names.end(), inner.begin(), inner.end());
  }
  return names;
}

std::vector<SplitEdge> splitEdges(const Graph& g, const std::vector<FusionDecision>& decisions) {
  std::vector<SplitEdge> edges;
  auto order = g.topoOrder();
  if (!order) return edges;
  for (NodeId c : *order) {
    const Node& cn = g.node(c);
    std::vector<NodeId> seen;
    for (ValueId in : cn.inputs) {
      if (!in.valid() || !g.value(in).producer.valid()) continue;
      NodeId p = g.value(in).producer;
      if (std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
      seen.push_back(p);
      const Node& pn = g.node(p);
      SplitEdge e;
      e.producer = p, e.consumer = c, e.value = in, e.producerName = pn.name,
      e.consumerName = cn.name;
      if (pn.body) e.producerGroup = int(pn.attrs.getInt("group", -1));
      if (cn.body) e.consumerGroup = int(cn.attrs.getInt("group", -1));
      auto pNames = memberNames(pn), cNames = memberNames(cn);
      for (const FusionDecision& d : decisions)
        if (!d.accepted && contains(pNames, d.producerName) && contains(cNames, d.consumerName))
          e.decision = &d;
      if (e.decision)
        e.reason = e.decision->reason;
      else if (decisions.empty())
        e.reason = "no reason recorded: no fusion pass ran in this pipeline";
      else
        e.reason = "no reason recorded: no fusion pass considered this edge";
      edges.push_back(std::move(e));
    }
  }
  return edges;
}

}  // namespace fuselens
