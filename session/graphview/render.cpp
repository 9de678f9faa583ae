// renderGraph: snapshot -> flat graph -> scope tree -> expansion -> scoped
// layout -> SVG, and PNG through rsvg-convert in a child process.
#include "session/graphview/render.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "core/support/atomic_file.h"
#include "session/graphview/divergence_heat.h"
#include "session/graphview/scoped_layout.h"
#include "session/graphview/snapshot_diff.h"
#include "session/graphview/svg_writer.h"
#include "session/session.h"

extern char** environ;

namespace fuselens::graphview {
namespace {

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string passName(const std::string& spec) { return spec.substr(0, spec.find('{')); }

Expected<ScopeId> findScope(const ScopeTree& tree, const std::string& name) {
  const std::string path = name.empty() || name[0] == '/' ? name : "/" + name;
  if (auto s = tree.find(path)) return *s;
  std::string top;
  for (ScopeId c : tree.scope(tree.root()).children)
    top += (top.empty() ? "" : ", ") + tree.scope(c).path;
  return Expected<ScopeId>::error(
      "the graph has no scope '" + name + "'" +
      (top.empty() ? " (its ops carry no scopes)" : "; its top scopes are " + top));
}

}  // namespace

Expected<size_t> findSnapshot(const Session& s, const std::string& after) {
  const std::vector<Snapshot>& snaps = s.snapshots();
  if (snaps.empty()) return Expected<size_t>::error("no pipeline has run");
  if (after.empty()) return snaps.size() - 1;
  if (after.find_first_not_of("0123456789") == std::string::npos && after.size() < 6) {
    const size_t i = size_t(std::stoul(after));
    if (i < snaps.size()) return i;
  }
  for (size_t i = 0; i < snaps.size(); ++i)
    if (snaps[i].label == after || passName(snaps[i].label) == after) return i;
  std::string names;
  for (size_t i = 0; i < snaps.size(); ++i)
    names += (i ? ", " : "") + std::to_string(i) + " " + snaps[i].label;
  return Expected<size_t>::error("no snapshot is named '" + after + "'; the snapshots are " +
                                 names);
}

Expected<RenderResult> renderGraph(const Session& s, const RenderRequest& r,
                                   const CancelToken& cancel) {
  using Result = Expected<RenderResult>;
  const bool png = endsWith(r.out, ".png"), svg = endsWith(r.out, ".svg");
  if (!png && !svg) return Result::error("the output must end in .svg or .png", r.out);
  Expected<size_t> snap = findSnapshot(s, r.after);
  if (!snap.isOk()) return snap.status();
  const Snapshot& shot = s.snapshots()[*snap];
  const auto t0 = std::chrono::steady_clock::now();

  const ScopeTree tree(flattenGraph(shot.graph()));
  ScopedLayoutOptions opts;
  opts.engine.cancel = cancel;
  if (!r.scope.empty()) {
    Expected<ScopeId> focus = findScope(tree, r.scope);
    if (!focus.isOk()) return focus.status();
    opts.focus = *focus;
  }
  const std::vector<FusionDecision> decisions = decisionsUpTo(s.snapshots(), int(*snap));
  for (const FusionDecision& d : decisions)
    if (!d.accepted) opts.text.edgeLabels[{d.producerName, d.consumerName}] = d.ruleId();
  std::map<std::string, double> heat;
  if (r.heat) {
    if (!s.lastReport()) return Result::error("--heat needs a compare report, and none was made");
    for (const auto& [name, h] : heatByValue(*s.lastReport())) heat[name] = heatFraction(h);
  }
  std::map<std::string, double> seconds;
  if (r.time) {
    if (!s.lastProfile()) return Result::error("--time needs a profile, and none was made");
    seconds = s.kernelSecondsByValue();
  }
  Expansion e =
      r.expandDepth >= 0 ? expandToDepth(tree, r.expandDepth) : initialExpansion(tree, r.budget);
  if (opts.focus.valid()) reveal(tree, opts.focus, e, true);
  std::vector<ScopeStats> stats = scopeStats(tree, decisions, heat, seconds);
  SnapshotDiff diff;
  const bool diffed = r.diff && *snap > 0;
  if (diffed) {
    diff = diffSnapshots(flattenGraph(s.snapshots()[*snap - 1].graph()), tree);
    applyDiff(stats, diff);
  }
  LayoutCache cache;
  Expected<SceneLayout> scene = layoutScoped(tree, e, stats, opts, cache);
  if (!scene.isOk()) return scene.status();
  if (diffed)
    for (size_t i = 0; i < scene->nodes.size(); ++i)
      scene->nodes[i].diff = int(diff.nodes[size_t(scene->flatIndex[i])]);

  RenderResult out;
  out.snapshot = shot.label;
  out.boxes = scene->nodes.size() + scene->collapsed;
  out.collapsed = scene->collapsed;
  out.edges = scene->edges.size();
  out.notes = scene->notes;
  out.layoutMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  SvgOptions svgOpts;
  svgOpts.decisions = decisions;
  svgOpts.heat = heat;
  svgOpts.seconds = seconds;
  svgOpts.title = s.modelPath() + " after " + std::to_string(*snap) + " " + shot.label +
                  (r.scope.empty() ? "" : ", scope " + r.scope) +
                  (diffed ? ", changes against " + s.snapshots()[*snap - 1].label : "");
  const std::string text = sceneToSvg(*scene, svgOpts);
  if (svg) {
    if (Status st = writeFileAtomically(r.out, text); !st.isOk()) return st;
    return out;
  }
  const std::string tmp = r.out + ".tmp.svg";
  if (Status st = writeFileAtomically(tmp, text); !st.isOk()) return st;
  Status st = svgToPng(tmp, r.out);
  std::remove(tmp.c_str());
  if (!st.isOk()) return st;
  return out;
}

Status svgToPng(const std::string& svgPath, const std::string& pngPath) {
  std::vector<std::string> args = {"rsvg-convert", "-o", pngPath, svgPath};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, "rsvg-convert", nullptr, nullptr, argv.data(), environ) != 0)
    return Status::error(
        "writing PNG needs rsvg-convert (Debian package librsvg2-bin); write .svg instead",
        pngPath);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Status::error("rsvg-convert could not convert the SVG to PNG", pngPath);
  return Status::ok();
}

}  // namespace fuselens::graphview
