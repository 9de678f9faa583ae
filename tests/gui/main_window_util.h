// What the main-window tests share: how long a job may take, when the window
// has settled, and which graph nodes are selected.
#pragma once

#include <QList>

#include "viewer/graph_items.h"
#include "viewer/graph_view.h"
#include "viewer/main_window.h"

namespace fuselens::test {

constexpr int kWindowTimeoutMs = 120000;

// No job running and no layout pending: what a test waits for after each step.
inline bool settled(const viewer::MainWindow& w) {
  return !w.isBusy() && !w.graphView()->isLayoutPending();
}

inline QList<viewer::NodeItem*> selectedNodes(const viewer::GraphView& v) {
  QList<viewer::NodeItem*> selected;
  for (viewer::NodeItem* n : v.nodeItems())
    if (n->isSelected()) selected.push_back(n);
  return selected;
}

}  // namespace fuselens::test
