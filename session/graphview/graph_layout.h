// Graph layout for the graph view: runs Graphviz "dot" (top to bottom) over a
// Graph and returns plain geometry — node boxes, edge splines, cluster boxes —
// in scene units (points, y down). No Qt here, so the layout can run on any
// thread and be tested without a display.
//
// What is drawn:
//   - every op node as a box; a fused group (op "Fused", domain "fuselens") is
//     expanded: its body ops sit inside a cluster labelled "group N (kind)",
//     and edges into/out of the group attach to the body ops that use/produce
//     the values;
//   - graph inputs and outputs as small ellipses;
//   - constants (weights) not as nodes but as short lines inside the box of
//     the op that uses them, so hundreds of weights do not swamp the view.
//
// Graphviz is not thread-safe across contexts: layoutGraph serializes calls.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/graph.h"
#include "core/support/status.h"

namespace fuselens::graphview {

struct LayoutOptions {
  // Text metrics of the font the view draws with, so boxes fit their labels.
  double charWidth = 7.0;  // average advance of one character
  double lineHeight = 15.0;
  int maxConstantLines = 3;  // per node; more become "+N constants"
  size_t maxNodes = 1500;    // dot is too slow past this: the layout fails instead
  // Labels for op-to-op edges, keyed by (producer name, consumer name): dot
  // makes room for each and says where it goes (the rule id of a rejected
  // fusion decision).
  std::map<std::pair<std::string, std::string>, std::string> edgeLabels;
  double labelCharWidth = 6.0;  // average advance in the labels' (smaller) font
};

struct LayoutPoint {
  double x = 0, y = 0;
};

struct LayoutBox {
  double x = 0, y = 0, width = 0, height = 0;  // top-left corner and size
};

enum class LayoutNodeKind { Op, Input, Output };

struct LayoutNode {
  LayoutNodeKind kind = LayoutNodeKind::Op;
  NodeId node;       // the node of the laid-out graph (for body ops: their Fused node)
  NodeId bodyNode;   // the op inside the fused body; invalid outside a group
  ValueId value;     // inputs/outputs: the graph input or output
  int group = -1;    // the fused group the op belongs to, else -1
  std::string op;    // "MatMul"; inputs/outputs: the value's name
  std::string name;  // the op's node name ("fc1/MatMul"); inputs/outputs: the value's name
  // The names of the values it produces (inputs/outputs: its own value), by
  // which decisions, compare rows and searches find it in any snapshot.
  std::vector<std::string> outputs;
  std::vector<std::string> lines;  // further label lines: output type, constants
  LayoutBox box;
  int diff = 0;  // diff mode: 0 unchanged (or no diff), 1 added, 2 changed by the pass
  // The op's plain attributes as "key=value" entries ("axis=-1", "perm=0,2,1,3"),
  // for search; set by flattenGraph.
  std::vector<std::string> attrs;
  // The imported graph's nodes this op stands for (Node::origins, as
  // indices): how an op renamed or merged by a pass is found again in
  // another snapshot. Set by flattenGraph.
  std::vector<int32_t> origins;
};

struct LayoutEdge {
  int from = -1, to = -1;  // indices into GraphLayout::nodes
  ValueId value;           // the value flowing, in the graph that holds `from`'s op
  // A cubic B-spline as Graphviz gives it: points[0], then triples of
  // (control, control, end). Empty when dot routed no spline.
  std::vector<LayoutPoint> points;
  bool hasArrow = false;
  LayoutPoint arrowTip;   // where the arrowhead points, when hasArrow
  bool hasLabel = false;  // an edgeLabels entry applied
  LayoutPoint labelCenter;
};

struct LayoutCluster {
  int group = -1;
  std::string kind;   // the fused group's pattern kind ("ElemWise", ...)
  std::string label;  // "group 0 (OutEWiseFusable)"
  NodeId node;        // the Fused node
  LayoutBox box;
};

struct GraphLayout {
  std::vector<LayoutNode> nodes;
  std::vector<LayoutEdge> edges;
  std::vector<LayoutCluster> clusters;
  double width = 0, height = 0;
};

Expected<GraphLayout> layoutGraph(const Graph& g, const LayoutOptions& opts = {});

}  // namespace fuselens::graphview
