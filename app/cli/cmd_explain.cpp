// `fuselens-cli explain`: every fusion decision the pipeline made, accepted and
// rejected, with its rule, reason and hint; then every kernel boundary of the
// optimized graph (a tensor one launch writes and another reads) with the
// decision that explains it. Filtered by --node (by name, as in the model) or
// --group (a fused group's id). A node a pass removed is reported as such.
// Exit 1 when a fusion pass ran but some boundary has no recorded reason.
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "passes/explain.h"

namespace fuselens::cli {
namespace {

struct ExplainArgs {
  std::string model;
  std::string passes = defaultPipeline();
  std::string node;
  int group = -1;
  bool json = false;
};

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// Names of the members of fused group `id` in the final graph; empty when there is no such group.
std::vector<std::string> groupMembers(const Graph& g, int id) {
  for (NodeId n : g.nodeIds())
    if (g.node(n).body && g.node(n).attrs.getInt("group", -1) == id) return memberNames(g.node(n));
  return {};
}

struct Selection {
  std::string node;
  int group = -1;
  std::vector<std::string> members;  // of the group
  bool decision(const FusionDecision& d) const {
    if (!node.empty()) return d.producerName == node || d.consumerName == node;
    if (group >= 0) return d.group == group || has(members, d.producerName) || has(members, d.consumerName);
    return true;
  }
  bool edge(const SplitEdge& e, const Graph& g) const {
    if (!node.empty()) return has(memberNames(g.node(e.producer)), node) || has(memberNames(g.node(e.consumer)), node);
    if (group >= 0) return e.producerGroup == group || e.consumerGroup == group;
    return true;
  }
};

// The pass that removed node `name`, with its notes about it; empty when it survived.
std::string removedBy(const Session& s, const std::string& name) {
  const auto& snaps = s.snapshots();
  for (size_t i = 1; i < snaps.size(); ++i) {
    bool present = false;
    for (NodeId n : snaps[i].graph.nodeIds()) present = present || has(memberNames(snaps[i].graph.node(n)), name);
    if (present) continue;
    std::string out = "node '" + name + "' was removed by pass " + snaps[i].label;
    for (const Diagnostic& d : snaps[i].record.diagnostics)
      if (d.where.find("'" + name + "'") != std::string::npos || d.message.find("'" + name + "'") != std::string::npos)
        out += "\n        " + d.message;
    return out;
  }
  return {};
}

nlohmann::json decisionJson(const FusionDecision& d) {
  return {{"pass", d.passName}, {"producer", d.producerName}, {"producer_op", d.producerOp},
          {"consumer", d.consumerName}, {"consumer_op", d.consumerOp}, {"accepted", d.accepted},
          {"rule", d.ruleId()}, {"reason", d.reason}, {"hint", d.hint},
          {"group", d.group >= 0 ? nlohmann::json(d.group) : nlohmann::json()}};
}

void printDecision(const FusionDecision& d) {
  std::cout << (d.accepted ? "FUSED   " : "SPLIT   ") << d.producerOp << " '" << d.producerName << "' -> "
            << d.consumerOp << " '" << d.consumerName << "'";
  if (d.group >= 0) std::cout << "  [group " << d.group << "]";
  std::cout << "\n        " << d.ruleId() << ": " << d.reason << "\n";
  if (!d.hint.empty()) std::cout << "        hint: " << d.hint << "\n";
}

int runExplain(const ExplainArgs& a) {
  Session session;
  if (Status s = openAndOptimize(session, a.model, a.passes); !s) return fail(s);
  if (!a.node.empty() && !session.original().findNode(a.node))
    return fail(Status::error("the model has no node named '" + a.node + "'", "--node"));
  const Graph& g = session.finalGraph();
  Selection sel{a.node, a.group, a.group >= 0 ? groupMembers(g, a.group) : std::vector<std::string>{}};
  if (a.group >= 0 && sel.members.empty())
    return fail(Status::error("the optimized graph has no fused group " + std::to_string(a.group), "--group"));

  nlohmann::json rows = nlohmann::json::array(), bounds = nlohmann::json::array();
  size_t accepted = 0, rejected = 0, unexplained = 0, boundaries = 0;
  for (const FusionDecision& d : session.decisions()) {
    if (!sel.decision(d)) continue;
    (d.accepted ? accepted : rejected)++;
    if (a.json) rows.push_back(decisionJson(d));
    else printDecision(d);
  }
  std::vector<SplitEdge> edges = splitEdges(g, session.decisions());
  if (!a.json && !edges.empty()) std::cout << "kernel boundaries:\n";
  for (const SplitEdge& e : edges) {
    if (!sel.edge(e, g)) continue;
    ++boundaries;
    unexplained += e.decision ? 0 : 1;
    if (a.json) {
      bounds.push_back({{"producer", e.producerName}, {"consumer", e.consumerName},
                        {"value", g.value(e.value).name}, {"explained", e.decision != nullptr},
                        {"rule", e.decision ? e.decision->ruleId() : ""}, {"reason", e.reason},
                        {"hint", e.decision ? e.decision->hint : ""}});
      continue;
    }
    std::cout << "  " << e.producerName << " -> " << e.consumerName << " (%" << g.value(e.value).name << "): "
              << (e.decision ? e.decision->ruleId() + ": " : "") << e.reason << "\n";
  }
  std::string removed = a.node.empty() ? "" : removedBy(session, a.node);
  if (a.json) {
    nlohmann::json out = {{"model", a.model}, {"pipeline", a.passes}, {"decisions", rows},
                          {"boundaries", bounds}, {"unexplained_boundaries", unexplained}};
    if (!removed.empty()) out["removed"] = removed;
    std::cout << out.dump(2) << "\n";
  } else {
    if (!removed.empty()) std::cout << removed << "\n";
    std::cout << accepted << " accepted, " << rejected << " rejected, " << boundaries << " kernel boundaries"
              << (unexplained ? ", " + std::to_string(unexplained) + " without a reason" : "") << "\n";
  }
  return unexplained && !session.decisions().empty() ? kExitCheckFailed : kExitOk;
}

}  // namespace

void addExplainCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* cmd = app.add_subcommand("explain", "Why ops fused or did not: every fusion decision with its reason");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--passes", args->passes, "Pipeline string")->capture_default_str();
  cmd->add_option("--node", args->node, "Only decisions touching this node (by name)");
  cmd->add_option("--group", args->group, "Only decisions and boundaries of this fused group");
  cmd->add_flag("--json", args->json, "Print a JSON report");
  cmd->callback([args, &exitCode] { exitCode = runExplain(*args); });
}

}  // namespace fuselens::cli
