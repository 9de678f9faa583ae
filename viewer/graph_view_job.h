// What the graph view hands its worker thread, and what comes back: a new
// snapshot's scope tree (built on the worker: flattening 20,000 ops is not GUI
// work), the expansion it applied, and the composed layout.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/support/cancel.h"
#include "session/explain_report.h"
#include "session/graphview/scoped_layout.h"

namespace fuselens::viewer {

struct ViewJob {
  std::shared_ptr<const Graph> graph;                // the graph to show
  std::shared_ptr<const Graph> before;               // diff mode: the snapshot before; else null
  std::shared_ptr<const graphview::ScopeTree> tree;  // graph's tree when built, else null
  graphview::Expansion expansion;
  bool initialCollapse = false;  // replace `expansion` by the initial collapse
  std::string focus;
  std::shared_ptr<const std::vector<FusionDecision>> decisions;
  std::map<std::string, double> heat;     // heat fraction by value name
  std::map<std::string, double> seconds;  // kernel time by the value it writes first
  graphview::LayoutOptions text;
  std::shared_ptr<graphview::LayoutCache> cache;
  CancelToken cancel;
};

struct ViewResult {
  std::shared_ptr<const Graph> graph;
  std::shared_ptr<const graphview::ScopeTree> tree;
  graphview::Expansion expansion;
  std::string focus;
  bool diff = false;  // nodes carry their marks, scopes their counts
  Expected<graphview::SceneLayout> scene = Expected<graphview::SceneLayout>::error("not run");
  double ms = 0;
};

ViewResult runViewJob(const ViewJob& job);

}  // namespace fuselens::viewer
