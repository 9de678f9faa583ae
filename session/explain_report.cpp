// Session::explain and the explain report's text; see explain_report.h.
#include "session/explain_report.h"

#include <algorithm>
#include <map>
#include <utility>

#include "session/session.h"

namespace fuselens {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Names of the members of fused group `id` in the final graph; empty when there is no such group.
std::vector<std::string> groupMembers(const Graph& g, int id) {
  for (NodeId n : g.nodeIds())
    if (g.node(n).body && g.node(n).attrs.getInt("group", -1) == id) return memberNames(g.node(n));
  return {};
}

struct Selection {
  ExplainQuery query;
  std::vector<std::string> members;  // of the group
  bool decision(const FusionDecision& d) const {
    if (!query.node.empty()) return d.producerName == query.node || d.consumerName == query.node;
    if (query.group >= 0)
      return d.group == query.group || has(members, d.producerName) || has(members, d.consumerName);
    return true;
  }
  bool edge(const SplitEdge& e, const Graph& g) const {
    if (!query.node.empty())
      return has(memberNames(g.node(e.producer)), query.node) ||
             has(memberNames(g.node(e.consumer)), query.node);
    if (query.group >= 0) return e.producerGroup == query.group || e.consumerGroup == query.group;
    return true;
  }
};

// The pass that removed node `name`, with its notes about it; empty when it survived.
std::string removedBy(const std::vector<Snapshot>& snaps, const std::string& name) {
  for (size_t i = 1; i < snaps.size(); ++i) {
    bool present = false;
    for (NodeId n : snaps[i].graph().nodeIds())
      present = present || has(memberNames(snaps[i].graph().node(n)), name);
    if (present) continue;
    std::string out = "node '" + name + "' was removed by pass " + snaps[i].label;
    for (const Diagnostic& d : snaps[i].record.diagnostics)
      if (d.where.find("'" + name + "'") != std::string::npos ||
          d.message.find("'" + name + "'") != std::string::npos)
        out += "\n        " + d.message;
    return out;
  }
  return {};
}

}  // namespace

std::string ExplainReport::summary() const {
  return std::to_string(accepted) + " accepted, " + std::to_string(rejected) + " rejected, " +
         std::to_string(boundaries.size()) + " kernel boundaries" +
         (unexplained ? ", " + std::to_string(unexplained) + " without a reason" : "");
}

std::string decisionText(const FusionDecision& d) {
  std::string out = std::string(d.accepted ? "FUSED   " : "SPLIT   ") + d.producerOp + " '" +
                    d.producerName + "' -> " + d.consumerOp + " '" + d.consumerName + "'";
  if (d.group >= 0) out += "  [group " + std::to_string(d.group) + "]";
  out += "\n        " + d.ruleId() + ": " + d.reason + "\n";
  if (!d.hint.empty()) out += "        hint: " + d.hint + "\n";
  return out;
}

std::vector<FusionDecision> decisionsUpTo(const std::vector<Snapshot>& snapshots, int row) {
  using NamePair = std::pair<std::string, std::string>;
  std::vector<FusionDecision> out;
  std::map<NamePair, size_t> index;  // where each edge's decision sits in `out`
  const int last = std::min(row, static_cast<int>(snapshots.size()) - 1);
  for (int i = 1; i <= last; ++i) {
    for (const FusionDecision& d : snapshots[static_cast<size_t>(i)].record.decisions) {
      auto [it, fresh] = index.emplace(NamePair{d.producerName, d.consumerName}, out.size());
      if (fresh)
        out.push_back(d);
      else
        out[it->second] = d;
    }
  }
  return out;
}

Expected<ExplainReport> Session::explain(const ExplainQuery& query) const {
  if (!model_) return Status::error("no model is open");
  if (!query.node.empty() && !original().findNode(query.node))
    return Status::error("the model has no node named '" + query.node + "'", "--node");
  const Graph& g = finalGraph();
  Selection sel{query,
                query.group >= 0 ? groupMembers(g, query.group) : std::vector<std::string>{}};
  if (query.group >= 0 && sel.members.empty())
    return Status::error("the optimized graph has no fused group " + std::to_string(query.group),
                         "--group");
  ExplainReport rep;
  rep.fusionRan = !decisions_.empty();
  for (const FusionDecision& d : decisions_) {
    if (!sel.decision(d)) continue;
    (d.accepted ? rep.accepted : rep.rejected)++;
    rep.decisions.push_back(d);
  }
  for (const SplitEdge& e : splitEdges(g, decisions_)) {
    if (!sel.edge(e, g)) continue;
    ExplainBoundary b{e.producerName, e.consumerName, g.value(e.value).name, e.decision != nullptr};
    if (e.decision) {
      b.rule = e.decision->ruleId();
      b.hint = e.decision->hint;
    }
    b.reason = e.reason;
    rep.unexplained += b.explained ? 0 : 1;
    rep.boundaries.push_back(std::move(b));
  }
  if (!query.node.empty()) rep.removed = removedBy(snapshots_, query.node);
  return rep;
}

}  // namespace fuselens
