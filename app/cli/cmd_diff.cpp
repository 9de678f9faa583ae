// `fuselens-cli diff`: what each pass changed. Without --pass/--from/--to, one
// summary line per pass that changed the graph (--all lists the others as
// "(unchanged)"); with --pass NAME, that pass's nodes added, removed (and the
// node that now holds their ops) and changed, then the IR diff; --from A --to B
// compares any two snapshots. Snapshots are named by position or pass name.
// Moved lines (a node the pass moved, e.g. into a fused group) print as "< "
// where they were and "> " where they went; --side-by-side prints two columns.
#include <iostream>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "session/diff_align.h"
#include "session/pass_diff.h"

namespace fuselens::cli {
namespace {

struct DiffArgs {
  std::string model;
  std::string passes = defaultPipelineText();
  std::string pass, from, to;
  std::vector<std::string> dims, shapes;
  bool all = false, json = false, sideBySide = false;
  size_t context = 3, width = 80;
};

void printNodes(const char* title, const std::vector<NodeChange>& v) {
  if (v.empty()) return;
  std::cout << title << ":\n";
  for (const NodeChange& c : v)
    std::cout << "  " << c.op << " '" << c.node << "'"
              << (c.into.empty() ? "" : "  -> now in '" + c.into + "'") << "\n";
}

int printOne(const PassDiff& d, const DiffArgs& a) {
  if (a.json) {
    std::cout << diffJson(d) << "\n";
    return kExitOk;
  }
  std::cout << d.summary() << "\n";
  printNodes("added", d.added);
  printNodes("removed", d.removed);
  printNodes("changed", d.changed);
  if (a.sideBySide)
    std::cout << "IR diff (A | B):\n" << sideBySideText(sideBySide(d.lines, a.context), a.width);
  else
    std::cout << "IR diff:\n" << d.unifiedText(a.context);
  return kExitOk;
}

int runDiff(const DiffArgs& a) {
  Session session;
  if (Status s = openAndOptimize(session, a.model, a.passes, a.dims, a.shapes); !s) return fail(s);
  const std::vector<Snapshot>& snaps = session.snapshots();
  if (!a.pass.empty()) {
    auto i = findSnapshot(snaps, a.pass);
    if (!i) return fail(i.status());
    if (*i == 0) return fail(Status::error("snapshot 0 is the imported graph; no pass made it"));
    return printOne(diffPass(snaps[*i - 1], snaps[*i]), a);
  }
  if (!a.from.empty() || !a.to.empty()) {
    auto from = findSnapshot(snaps, a.from.empty() ? "0" : a.from);
    if (!from) return fail(from.status());
    auto to = findSnapshot(snaps, a.to.empty() ? std::to_string(snaps.size() - 1) : a.to);
    if (!to) return fail(to.status());
    return printOne(diffPass(snaps[*from], snaps[*to]), a);
  }
  std::string json = "[";
  for (size_t i = 1; i < snaps.size(); ++i) {
    if (!snaps[i].record.changed && !a.all) continue;
    if (!snaps[i].record.changed) {
      if (!a.json) std::cout << snaps[i].label << ": (unchanged)\n";
      continue;
    }
    PassDiff d = diffPass(snaps[i - 1], snaps[i]);
    if (a.json)
      json += (json.size() > 1 ? "," : "") + diffJson(d);
    else
      std::cout << d.summary() << "\n";
  }
  if (a.json) std::cout << json << "]\n";
  return kExitOk;
}

}  // namespace

void addDiffCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd =
      app.add_subcommand("diff", "What each pass changed: nodes added, removed, changed; IR diff");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--passes", args->passes, "Pipeline string")->capture_default_str();
  cmd->add_option("--pass", args->pass, "Show this pass's diff (name or snapshot number)");
  cmd->add_option("--from", args->from, "Compare from this snapshot (default: the imported graph)");
  cmd->add_option("--to", args->to, "Compare to this snapshot (default: the last)");
  cmd->add_option("--context", args->context, "Unchanged IR lines around each change")
      ->capture_default_str();
  cmd->add_flag("--side-by-side", args->sideBySide,
                "Show the IR diff as two columns, a node's old and new line on one row");
  cmd->add_option("--width", args->width, "Characters per column with --side-by-side")
      ->capture_default_str()
      ->check(CLI::Range(size_t(20), size_t(1000)));
  cmd->add_flag("--all", args->all, "Also list the passes that changed nothing");
  cmd->add_flag("--json", args->json, "Print JSON");
  addShapeOptions(cmd, args->dims, args->shapes);
  cmd->callback([args, &exitCode] { exitCode = runDiff(*args); });
}

}  // namespace fuselens::cli
