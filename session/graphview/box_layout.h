// Lays out one small graph of boxes: the children of one expanded scope (ops,
// fused groups as clusters, collapsed and expanded child scopes as boxes of a
// given size). Graphviz `dot` does it in a child process, so a scope it takes
// too long on can be abandoned and a crash in it cannot take the app down;
// where dot fails, runs past its budget or is not wanted, a simple layered
// layout of our own takes over and says so. Qt-free; callable from any thread.
#pragma once

#include <string>
#include <vector>

#include "core/support/cancel.h"
#include "core/support/status.h"
#include "session/graphview/graph_layout.h"

namespace fuselens::graphview {

struct BoxGraph {
  struct Node {
    double width = 0, height = 0;
    bool ellipse = false;
    int cluster = -1;  // index into clusters, or -1
  };
  struct Cluster {
    double labelWidth = 0, labelHeight = 0;  // room for the label at its top left
  };
  struct Edge {
    int from = -1, to = -1;
    double labelWidth = 0, labelHeight = 0;  // a label dot makes room for, when > 0
  };
  std::vector<Node> nodes;  // in topological order where there is one: the fallback ranks by it
  std::vector<Cluster> clusters;
  std::vector<Edge> edges;
};

struct EdgePath {
  // A cubic B-spline: points[0], then triples (control, control, end).
  std::vector<LayoutPoint> points;
  bool hasArrow = false;
  LayoutPoint arrowTip;
  bool hasLabel = false;
  LayoutPoint labelCenter;
};

struct BoxGeometry {
  std::vector<LayoutBox> nodes;  // top-left corners, y down, origin at the top left
  std::vector<LayoutBox> clusters;
  std::vector<EdgePath> edges;  // one per BoxGraph edge
  double width = 0, height = 0;
  std::string note;  // why the fallback drew it ("dot ran past 2 s"); empty when dot did
};

struct BoxLayoutOptions {
  double dotSeconds = 3.0;  // budget for one dot run before the fallback takes over
  bool useDot = true;
  CancelToken cancel;
};

// dot in a child process, else the layered fallback. An error only when cancelled.
Expected<BoxGeometry> layoutBoxes(const BoxGraph& g, const BoxLayoutOptions& opts = {});

// The two engines on their own (tests, benchmarks). runDot's error says why
// dot gave no geometry: cancelled, past its budget, or failed.
Expected<BoxGeometry> runDot(const BoxGraph& g, double seconds, const CancelToken& cancel);
BoxGeometry layeredLayout(const BoxGraph& g);

// A straight edge from the bottom middle of `from` to the top middle of `to`,
// as a cubic with an arrowhead; the fallback and the composed layout's
// edges between scopes both use it.
EdgePath straightEdge(const LayoutBox& from, const LayoutBox& to);

}  // namespace fuselens::graphview
