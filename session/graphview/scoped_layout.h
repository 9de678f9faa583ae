// The graph view's layout at any size: each open scope is laid out on its own
// (box_layout.h: its ops, fused groups, and child scopes as boxes — collapsed
// ones sized by their label, open ones by their own layout plus a frame) and
// the results are composed, so no dot run ever sees more than one scope's
// children. Local layouts are cached by scope and by the sizes of the open
// children they hold, so opening a scope lays out that scope and re-runs its
// ancestors only, and the rest keeps its place.
//
// Edges: an edge whose two ends are drawn directly in one open scope keeps the
// spline dot routed there; an edge that leaves a scope is drawn from the box
// that shows its producer (the op, or the collapsed scope holding it) to the
// box that shows its consumer. Qt-free.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "session/graphview/box_layout.h"
#include "session/graphview/scope_tree.h"

namespace fuselens::graphview {

// A scope drawn as a box: collapsed (label and badges) or open (a frame with a title).
struct SceneScope {
  ScopeId scope;
  bool collapsed = true;
  LayoutBox box;
  std::string name, path;
  bool chunk = false;
  ScopeStats stats;
  std::string note;  // the fallback layout's note for an open scope's own layout
};

// Where an edge ends: a drawn op (or input/output) node, or a scope box.
struct SceneEnd {
  int node = -1;   // index into SceneLayout::nodes
  int scope = -1;  // index into SceneLayout::scopes
  bool operator<(const SceneEnd& o) const {
    return node != o.node ? node < o.node : scope < o.scope;
  }
  bool operator==(const SceneEnd& o) const { return node == o.node && scope == o.scope; }
};

struct SceneEdge {
  SceneEnd from, to;
  EdgePath path;
  ValueId value;
  std::string fromName, toName;  // op names when both ends are op nodes (decisions key on them)
  bool routed = false;           // dot routed it (else drawn straight between boxes)
};

struct SceneLayout {
  std::vector<LayoutNode> nodes;  // ops, inputs and outputs drawn, boxes in scene units
  std::vector<int> flatIndex;     // nodes[i] is FlatGraph node flatIndex[i]
  std::vector<LayoutCluster> clusters;
  std::vector<SceneScope> scopes;
  std::vector<SceneEdge> edges;
  double width = 0, height = 0;
  size_t collapsed = 0;  // scopes drawn collapsed
  size_t dotRuns = 0, cacheHits = 0;
  std::vector<std::string>
      notes;  // "/encoder/layer.3: simple layered layout (dot ran past 3000 ms)"
  // The drawn node of a FlatGraph node, or -1 when it sits in a collapsed scope.
  std::vector<int> nodeOfFlat;
  // The box that shows a FlatGraph node: its node, or the collapsed scope holding it.
  std::vector<SceneEnd> endOfFlat;
};

struct ScopedLayoutOptions {
  LayoutOptions text;  // label metrics and rejected-edge labels
  double frameHeader = 22, framePad = 10;
  BoxLayoutOptions engine;
  // Lay out this scope's subtree alone ("focus on this scope"); invalid: all.
  ScopeId focus;
};

// dot's answers by the graph it was asked about (node sizes, clusters, edges,
// labels), so a scope whose content did not change is not laid out again: not
// when another scope opens, not when it is the same in the next snapshot.
// Safe to share between threads.
class LayoutCache {
 public:
  std::shared_ptr<const BoxGeometry> get(const std::string& key) const;
  void put(const std::string& key, std::shared_ptr<const BoxGeometry> geometry);
  size_t size() const;
  void clear();

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const BoxGeometry>> entries_;
};

// Lays out what `e` shows of `tree`. `stats` (scopeStats) label the collapsed
// boxes. An error only when cancelled.
Expected<SceneLayout> layoutScoped(const ScopeTree& tree, const Expansion& e,
                                   const std::vector<ScopeStats>& stats,
                                   const ScopedLayoutOptions& opts, LayoutCache& cache);

// The text of a collapsed box: title, counts, badges (the view and SVG both draw these).
std::vector<std::string> collapsedLines(const SceneScope& s);
// The title of an open scope's frame: its path (a chunk: its name), counts, the fallback's note.
std::string frameTitle(const SceneScope& s);

}  // namespace fuselens::graphview
