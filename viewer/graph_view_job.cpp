// The graph view's worker: tree (when the snapshot is new), expansion, layout.
#include "viewer/graph_view_job.h"

#include <chrono>

#include "session/graphview/snapshot_diff.h"

namespace fuselens::viewer {
namespace {

// Open scopes from another snapshot or model that name nothing here do not
// count: the new tree gets the initial collapse instead of everything shut.
bool anyPathExists(const graphview::ScopeTree& tree, const graphview::Expansion& e) {
  for (const std::string& path : e.open)
    if (tree.find(path)) return true;
  return false;
}

}  // namespace

ViewResult runViewJob(const ViewJob& job) {
  const auto t0 = std::chrono::steady_clock::now();
  ViewResult out;
  out.graph = job.graph;
  out.tree =
      job.tree ? job.tree
               : std::make_shared<const graphview::ScopeTree>(graphview::flattenGraph(*job.graph));
  const graphview::ScopeTree& tree = *out.tree;
  out.expansion = job.expansion;
  if (job.initialCollapse || (!job.expansion.open.empty() && !anyPathExists(tree, job.expansion)))
    out.expansion = graphview::initialExpansion(tree);
  graphview::ScopedLayoutOptions opts;
  opts.text = job.text;
  opts.engine.cancel = job.cancel;
  if (auto focus = tree.find(job.focus); focus && !job.focus.empty()) {
    opts.focus = *focus;
    out.focus = job.focus;
  }
  static const std::vector<FusionDecision> kNone;
  std::vector<graphview::ScopeStats> stats =
      graphview::scopeStats(tree, job.decisions ? *job.decisions : kNone, job.heat, job.seconds);
  graphview::SnapshotDiff diff;
  if (job.before) {
    diff = graphview::diffSnapshots(graphview::flattenGraph(*job.before), tree);
    graphview::applyDiff(stats, diff);
    out.diff = true;
  }
  out.scene = graphview::layoutScoped(tree, out.expansion, stats, opts, *job.cache);
  if (out.diff && out.scene.isOk())
    for (size_t i = 0; i < out.scene->nodes.size(); ++i)
      out.scene->nodes[i].diff = int(diff.nodes[size_t(out.scene->flatIndex[i])]);
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace fuselens::viewer
