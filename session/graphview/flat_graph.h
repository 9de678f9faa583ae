// The drawable form of one Graph (a snapshot), before any geometry: every op
// as a labelled node (a fused group's body ops each on their own, tagged with
// the group), graph inputs and outputs as nodes, constants folded into their
// users' labels, and the edges between drawn nodes. The scope tree and the
// scoped layout work on this, so they never walk fused bodies themselves.
#pragma once

#include <vector>

#include "core/ir/graph.h"
#include "session/graphview/graph_layout.h"

namespace fuselens::graphview {

struct FlatEdge {
  int from = -1, to = -1;  // indices into FlatGraph::nodes
  ValueId value;           // the value flowing, in the graph that holds `from`'s op
};

// A fused group: the drawn nodes of its body.
struct FlatGroup {
  LayoutCluster cluster;  // box unset
  std::vector<int> members;
};

struct FlatGraph {
  std::vector<LayoutNode> nodes;  // boxes unset; in topological order of the graph
  std::vector<FlatEdge> edges;    // one per (from, to) pair
  std::vector<FlatGroup> groups;
};

// `maxConstantLines`: constants named in a node's label; more become "+N constants".
FlatGraph flattenGraph(const Graph& g, int maxConstantLines = 3);

// The size a node's label needs, as the view draws it (op bold, then the lines).
LayoutBox nodeSize(const LayoutNode& n, const LayoutOptions& opts);

}  // namespace fuselens::graphview
