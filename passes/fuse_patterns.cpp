// fuse-patterns: the driver over the pattern table (see fuse_patterns.h for
// the contract). Matching is read-only; rewrites go through the Rewriter, so
// they are logged as notes; groups go through outlineGroup.
#include "passes/fuse_patterns.h"

#include <algorithm>
#include <set>

#include "core/ops/registry.h"
#include "passes/outline_group.h"
#include "passes/pattern_match.h"
#include "passes/pattern_table.h"
#include "passes/rewriter.h"

namespace fuselens {
namespace {

std::string idOf(FusionRule r) { return std::string(fusionRuleId(r)); }

bool isAnchorKind(PatternKind k) {
  return k == PatternKind::CommReduce || k == PatternKind::OutEWiseFusable;
}

FusionDecision decision(const Graph& g, NodeId p, NodeId c, ValueId edge, bool accepted,
                        FusionRule rule, const std::string& sentence,
                        const std::string& hint = {}) {
  const Node& pn = g.node(p);
  const Node& cn = g.node(c);
  FusionDecision d{p, c, pn.name, cn.name, pn.op, cn.op, edge};
  d.accepted = accepted;
  d.rule = rule;
  d.reason = (accepted ? "accepted: " : "rejected: ") + sentence;
  d.hint = hint;
  d.passName = "fuse-patterns";
  return d;
}

// The edges inside a match, producer -> consumer, in the members' order.
std::vector<std::tuple<NodeId, NodeId, ValueId>> innerEdges(const Graph& g, const PatternMatch& m) {
  std::set<NodeId> in(m.members.begin(), m.members.end());
  std::vector<std::tuple<NodeId, NodeId, ValueId>> edges;
  for (NodeId c : topoOrderOf(g, m.members)) {
    std::set<NodeId> seen;
    for (ValueId v : g.node(c).inputs) {
      if (!v.valid() || !g.value(v).producer.valid()) continue;
      NodeId p = g.value(v).producer;
      if (in.count(p) && seen.insert(p).second) edges.emplace_back(p, c, v);
    }
  }
  return edges;
}

// A member other than the exit whose result is read outside the match.
std::optional<FusionDecision> escape(const Graph& g, const PatternMatch& m, FusionRule rule) {
  std::set<NodeId> in(m.members.begin(), m.members.end());
  for (NodeId id : m.members) {
    if (id == m.exit) continue;
    for (ValueId o : g.node(id).outputs) {
      const std::string what = "%" + g.value(o).name + " of " + nodeLabel(g.node(id));
      for (NodeId u : g.value(o).users)
        if (!in.count(u))
          return decision(g, id, u, o, false, rule,
                          what + " is inside a " + idOf(rule) + " match (" + m.facts +
                              ") but is also read by " + nodeLabel(g.node(u)) +
                              " outside it, so the pattern does not form: its group "
                              "would have to store " +
                              what + " as well");
      if (g.isGraphOutput(o)) {
        NodeId next = g.value(o).users.empty() ? id : g.value(o).users[0];
        return decision(g, id, next, o, false, rule,
                        what + " is inside a " + idOf(rule) + " match (" + m.facts +
                            ") but is also a graph output, so the pattern does not form");
      }
    }
  }
  return {};
}

void applyRewrite(Rewriter& rw, const PatternMatch& m, FusionRule rule) {
  const Graph& g = rw.graph();
  const Node exit = g.node(m.exit);
  std::vector<ValueId> ins;
  for (const PatternOperand& o : m.rewriteInputs)
    ins.push_back(o.data ? rw.addConstant(freshName(g, o.name), o.data) : o.value);
  NodeId id =
      rw.addNodeFor(exit, m.rewriteOp, ins, m.rewriteAttrs, {g.value(exit.outputs[0]).type});
  for (NodeId member : m.members) rw.addOrigins(id, g.node(member).origins);
  rw.log(idOf(rule), exit, m.facts + " -> " + m.rewriteOp);
  rw.replaceValue(exit.outputs[0], g.node(id).outputs[0]);
  rw.eraseIfDead(exit.id);
}

class PatternFuser {
 public:
  PatternFuser(Graph& g, const FusePatternsOptions& opts) : g_(g), opts_(opts) {}

  // 1. The exact decomposed forms become one op each.
  void rewrite(Rewriter& rw) {
    const std::vector<NodeId> order =
        g_.topoOrder().value();  // a named copy: the optional is a temporary
    for (NodeId id : order) {
      if (!g_.hasNode(id)) continue;  // erased by an earlier rewrite
      for (const PatternRow& row : patternTable()) {
        PatternOutcome o = row.match(g_, g_.node(id));
        if (!o.match || o.match->rewriteOp.empty() || escape(g_, *o.match, row.rule)) continue;
        const PatternMatch& m = *o.match;
        for (auto [p, c, v] : innerEdges(g_, m))
          decisions.push_back(decision(g_, p, c, v, true, row.rule,
                                       nodeLabel(g_.node(p)) + " -> " + nodeLabel(g_.node(c)) +
                                           " are part of " + idOf(row.rule) + ", " + m.facts +
                                           "; the constants are exactly " + m.rewriteOp +
                                           "'s, so the match is rewritten to one " + m.rewriteOp +
                                           " op, which codegen lowers directly"));
        applyRewrite(rw, m, row.rule);
        break;
      }
    }
  }

  // 2. Every other match claims its nodes, rows in table order.
  void plan() {
    std::set<NodeId> claimed;
    const std::vector<NodeId> order =
        g_.topoOrder().value();  // a named copy: the optional is a temporary
    for (NodeId id : order) {
      for (const PatternRow& row : patternTable()) {
        if (claimed.count(id)) break;
        PatternOutcome o = row.match(g_, g_.node(id));
        for (const NearMiss& miss : o.misses)
          decisions.push_back(decision(g_, miss.producer, miss.consumer, miss.edge, false, row.rule,
                                       miss.sentence, miss.hint));
        if (!o.match) continue;
        PatternMatch& m = *o.match;
        if (std::any_of(m.members.begin(), m.members.end(),
                        [&](NodeId n) { return claimed.count(n) != 0; }))
          continue;  // part of it is in a pattern of a higher row
        if (auto esc = escape(g_, m, row.rule)) {
          decisions.push_back(*esc);
          continue;
        }
        if (m.multiAnchor && !opts_.multiAnchor) {
          rejectMultiAnchor(row.rule, m);
          continue;
        }
        for (NodeId n : m.members) claimed.insert(n);
        const size_t first = decisions.size();
        std::string extra = m.whyNoRewrite.empty()
                                ? ""
                                : "; it stays a group, not one op, because " + m.whyNoRewrite;
        for (auto [p, c, v] : innerEdges(g_, m))
          decisions.push_back(decision(g_, p, c, v, true, row.rule,
                                       nodeLabel(g_.node(p)) + " -> " + nodeLabel(g_.node(c)) +
                                           " are part of " + idOf(row.rule) + ", " + m.facts +
                                           extra));
        planned.push_back({row.rule, m.members, first, decisions.size()});
      }
    }
  }

  // 3. Outline each planned match into one Fused node.
  int64_t outline() {
    int next = firstFreeGroupId(g_);
    int64_t ops = 0;
    for (const Planned& p : planned) {
      outlineGroup(g_, p.members, next, idOf(p.rule));
      for (size_t i = p.firstDecision; i < p.endDecision; ++i) decisions[i].group = next;
      ops += int64_t(p.members.size());
      ++next;
    }
    return ops;
  }

  struct Planned {
    FusionRule rule;
    std::vector<NodeId> members;
    size_t firstDecision, endDecision;
  };
  std::vector<FusionDecision> decisions;
  std::vector<Planned> planned;

 private:
  // Rejected on each edge into an anchor after the first: where a single-anchor
  // kernel would have to end.
  void rejectMultiAnchor(FusionRule rule, const PatternMatch& m) {
    std::vector<std::string> anchors;
    std::set<NodeId> firstAnchor;
    const std::vector<NodeId> order = g_.topoOrder().value();
    for (NodeId n : order) {
      if (std::find(m.members.begin(), m.members.end(), n) == m.members.end()) continue;
      if (!isAnchorKind(patternKindOf(g_, n))) continue;
      anchors.push_back(g_.node(n).op);
      if (firstAnchor.empty()) firstAnchor.insert(n);
    }
    std::string list;
    for (size_t i = 0; i < anchors.size(); ++i) list += (i ? ", " : "") + anchors[i];
    for (auto [p, c, v] : innerEdges(g_, m)) {
      if (!isAnchorKind(patternKindOf(g_, c)) || firstAnchor.count(c)) continue;
      decisions.push_back(decision(
          g_, p, c, v, false, rule,
          nodeLabel(g_.node(p)) + " -> " + nodeLabel(g_.node(c)) + " are part of " + idOf(rule) +
              ", " + m.facts + ", but the group " + "would hold " + std::to_string(anchors.size()) +
              " anchors (" + list + "); multi-anchor groups are off (multi-anchor=0)" +
              (m.whyNoRewrite.empty() ? "" : " (no one-op rewrite: " + m.whyNoRewrite + ")"),
          "form it with fuse-patterns{multi-anchor=1} (the default): codegen runs the anchors as "
          "stages of one kernel"));
    }
  }

  Graph& g_;
  FusePatternsOptions opts_;
};

}  // namespace

int firstFreeGroupId(const Graph& g) {
  int next = 0;
  for (NodeId id : g.nodeIds()) {
    const Node& n = g.node(id);
    if (n.op == kFusedOp && n.domain == kFuseLensDomain)
      next = std::max(next, int(n.attrs.getInt("group", -1)) + 1);
  }
  return next;
}

PassResult FusePatternsPass::run(Graph& g, PassContext& ctx) {
  if (!g.topoOrder())
    return PassResult::failed(Status::error("the graph has a cycle", "fuse-patterns"));
  PatternFuser fuser(g, opts_);
  Rewriter rw(g);
  fuser.rewrite(rw);  // 1
  const int64_t rewrites = rw.count();
  if (ctx.cancel.cancelled())
    return PassResult::failed(Status::error("cancelled", "fuse-patterns"));
  fuser.plan();                   // 2
  int64_t ops = fuser.outline();  // 3
  PassResult result;
  rw.finish(result);
  int64_t rejected = std::count_if(fuser.decisions.begin(), fuser.decisions.end(),
                                   [](auto& d) { return !d.accepted; });
  result.changed = rewrites > 0 || !fuser.planned.empty();
  result.stats["ops rewritten"] = rewrites;
  result.stats["groups formed"] = int64_t(fuser.planned.size());
  result.stats["ops grouped"] = ops;
  result.stats["edges accepted"] = int64_t(fuser.decisions.size()) - rejected;
  result.stats["edges rejected"] = rejected;
  ctx.decisions.insert(ctx.decisions.end(), fuser.decisions.begin(), fuser.decisions.end());
  return result;
}

}  // namespace fuselens
