// `fuselens-cli explain`: every fusion decision the pipeline made, accepted and
// rejected, with its rule and reason; filtered by node or group.
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"

namespace fuselens::cli {
namespace {

struct ExplainArgs {
  std::string model;
  std::string passes = defaultPipeline();
  std::string node;
  int group = -1;
  bool json = false;
};

bool selected(const FusionDecision& d, const ExplainArgs& a) {
  if (!a.node.empty() && d.producerName != a.node && d.consumerName != a.node) return false;
  if (a.group >= 0 && d.group != a.group) return false;
  return true;
}

int runExplain(const ExplainArgs& a) {
  Session session;
  if (Status s = openAndOptimize(session, a.model, a.passes); !s) return fail(s);
  if (!a.node.empty() && !session.original().findNode(a.node))
    return fail(Status::error("the model has no node named '" + a.node + "'", "--node"));
  nlohmann::json rows = nlohmann::json::array();
  size_t accepted = 0, rejected = 0;
  for (const FusionDecision& d : session.decisions()) {
    if (!selected(d, a)) continue;
    (d.accepted ? accepted : rejected)++;
    if (a.json) {
      rows.push_back({{"pass", d.passName}, {"producer", d.producerName}, {"producer_op", d.producerOp},
                      {"consumer", d.consumerName}, {"consumer_op", d.consumerOp}, {"accepted", d.accepted},
                      {"rule", d.rule}, {"reason", d.reason}, {"hint", d.hint},
                      {"group", d.group >= 0 ? nlohmann::json(d.group) : nlohmann::json()}});
      continue;
    }
    std::cout << (d.accepted ? "FUSED   " : "SPLIT   ") << d.producerOp << " '" << d.producerName << "' -> "
              << d.consumerOp << " '" << d.consumerName << "'";
    if (d.group >= 0) std::cout << "  [group " << d.group << "]";
    std::cout << "\n        " << d.rule << ": " << d.reason << "\n";
    if (!d.hint.empty()) std::cout << "        hint: " << d.hint << "\n";
  }
  if (a.json) {
    std::cout << nlohmann::json{{"model", a.model}, {"pipeline", a.passes}, {"decisions", rows}}.dump(2) << "\n";
  } else {
    std::cout << accepted << " accepted, " << rejected << " rejected\n";
  }
  return kExitOk;
}

}  // namespace

void addExplainCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* cmd = app.add_subcommand("explain", "Why ops fused or did not: every fusion decision with its reason");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--passes", args->passes, "Pipeline string")->capture_default_str();
  cmd->add_option("--node", args->node, "Only decisions touching this node (by name)");
  cmd->add_option("--group", args->group, "Only decisions that formed this fused group");
  cmd->add_flag("--json", args->json, "Print a JSON report");
  cmd->callback([args, &exitCode] { exitCode = runExplain(*args); });
}

}  // namespace fuselens::cli
