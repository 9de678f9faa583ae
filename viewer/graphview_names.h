// The viewer's names for the Qt-free graph view model in session/graphview/:
// layout geometry, decision matching and the heat scale are shared with the
// CLI's `render`, and the widgets use them as if they were their own.
#pragma once

#include "session/graphview/divergence_heat.h"
#include "session/graphview/edge_decisions.h"
#include "session/graphview/graph_layout.h"

namespace fuselens::viewer {

using graphview::GraphLayout;
using graphview::heatByValue;
using graphview::heatFraction;
using graphview::kHeatHigh;
using graphview::kHeatLow;
using graphview::LayoutBox;
using graphview::LayoutCluster;
using graphview::LayoutEdge;
using graphview::LayoutNode;
using graphview::LayoutNodeKind;
using graphview::LayoutOptions;
using graphview::LayoutPoint;
using graphview::matchEdgeDecisions;
using graphview::ValueHeat;

}  // namespace fuselens::viewer
