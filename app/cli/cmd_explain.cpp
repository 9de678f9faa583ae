// `fuselens-cli explain`: every fusion decision the pipeline made, accepted and
// rejected, with its rule, reason and hint; then every kernel boundary of the
// optimized graph (a tensor one launch writes and another reads) with the
// decision that explains it. Filtered by --node (by name, as in the model) or
// --group (a fused group's id). A node a pass removed is reported as such.
// Exit 1 when a fusion pass ran but some boundary has no recorded reason.
#include <algorithm>
#include <iostream>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"

namespace fuselens::cli {
namespace {

struct ExplainArgs {
  std::string model;
  std::string passes = defaultPipelineText();
  std::string node;
  int group = -1;
  bool json = false;
};

int runExplain(const ExplainArgs& a) {
  Session session;
  if (Status s = openAndOptimize(session, a.model, a.passes); !s) return fail(s);
  auto rep = session.explain(ExplainQuery{a.node, a.group});
  if (!rep) return fail(rep.status());
  if (a.json) {
    std::cout << explainJson(*rep, session) << "\n";
  } else {
    for (const FusionDecision& d : rep->decisions) std::cout << decisionText(d);
    if (!rep->boundaries.empty()) std::cout << "kernel boundaries:\n";
    for (const ExplainBoundary& b : rep->boundaries)
      std::cout << "  " << b.producer << " -> " << b.consumer << " (%" << b.value
                << "): " << (b.explained ? b.rule + ": " : "") << b.reason << "\n";
    if (!rep->removed.empty()) std::cout << rep->removed << "\n";
    std::cout << rep->summary() << "\n";
  }
  return rep->complete() ? kExitOk : kExitCheckFailed;
}

}  // namespace

void addExplainCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "Why ops fused or did not: every fusion decision with its reason");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--passes", args->passes, "Pipeline string")->capture_default_str();
  cmd->add_option("--node", args->node, "Only decisions touching this node (by name)");
  cmd->add_option("--group", args->group, "Only decisions and boundaries of this fused group");
  cmd->add_flag("--json", args->json, "Print a JSON report");
  cmd->callback([args, &exitCode] { exitCode = runExplain(*args); });
}

}  // namespace fuselens::cli
