// Name-keyed matching of fusion decisions to layout edges.
#include "session/graphview/edge_decisions.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace fuselens::graphview {
namespace {

using NamePair = std::pair<std::string, std::string>;

}  // namespace

std::vector<int> matchEdgeDecisions(const GraphLayout& layout,
                                    const std::vector<FusionDecision>& decisions) {
  std::map<NamePair, int> byNames;
  for (size_t i = 0; i < decisions.size(); ++i) {
    const FusionDecision& d = decisions[i];
    if (!d.producerName.empty() && !d.consumerName.empty())
      byNames[{d.producerName, d.consumerName}] = static_cast<int>(i);
  }
  std::vector<int> out(layout.edges.size(), -1);
  for (size_t i = 0; i < layout.edges.size(); ++i) {
    const LayoutEdge& e = layout.edges[i];
    const LayoutNode& from = layout.nodes[static_cast<size_t>(e.from)];
    const LayoutNode& to = layout.nodes[static_cast<size_t>(e.to)];
    if (from.kind != LayoutNodeKind::Op || to.kind != LayoutNodeKind::Op) continue;
    auto it = byNames.find({from.name, to.name});
    if (it != byNames.end()) out[i] = it->second;
  }
  return out;
}

}  // namespace fuselens::graphview
