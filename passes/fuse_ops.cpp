// fuse-ops, in three steps:
//
//   1. analysis  pattern kind of every node (from the op registry)
//   2. plan      visit nodes in topological order; for each input edge p -> n
//                decide with the rules below whether p's group merges into n's
//                group (union-find), and record the decision:
//
//                  %a = MatMul(x, w)        group 0 {MatMul}
//                  %b = Add(%a, bias)       MatMul -> Add   accepted: epilogue
//                  %c = Relu(%b)            Add -> Relu     accepted: epilogue
//                  %d = MatMul(%c, w2)      Relu -> MatMul  rejected: two anchors
//
//                order of checks: opaque op, producer used elsewhere, kinds
//                (fusion_rules.cpp), fusion window.
//   3. rewrite   outline every group of two or more nodes into a Fused node.
//
// A producer joins a consumer's group only when the consumer is its sole user,
// so every group has a single exit and merging can never create a cycle
// (a path out of the group would need a second user).
#include "passes/fuse_ops.h"

#include <map>
#include <numeric>

#include "passes/fusion_rules.h"
#include "passes/outline_group.h"

namespace fuselens {
namespace {

std::string label(const Node& n) { return n.op + " '" + n.name + "'"; }

class GroupSets {
 public:
  explicit GroupSets(size_t n) : parent_(n), size_(n, 1), kind_(n, PatternKind::Opaque) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(int a, int b) {  // b's group merges into a's
    a = find(a), b = find(b);
    parent_[b] = a;
    size_[a] += size_[b];
    kind_[a] = mergeKinds(kind_[a], kind_[b]);
  }
  int64_t size(int x) { return size_[find(x)]; }
  PatternKind& kind(int x) { return kind_[find(x)]; }

 private:
  std::vector<int> parent_;
  std::vector<int64_t> size_;
  std::vector<PatternKind> kind_;
};

class FusionPlanner {
 public:
  FusionPlanner(const Graph& g, int64_t maxOps)
      : g_(g), maxOps_(maxOps), sets_(g.nodeCapacity()), kinds_(g.nodeCapacity()) {}

  std::vector<FusionDecision> plan(const std::vector<NodeId>& order) {
    for (NodeId n : order) {  // 1. analysis
      kinds_[n.index] = patternKindOf(g_, n);
      sets_.kind(n.index) = kinds_[n.index];
    }
    for (NodeId n : order) {  // 2. plan
      std::vector<NodeId> seen;
      for (ValueId in : g_.node(n).inputs) {
        if (!in.valid()) continue;
        NodeId p = g_.value(in).producer;
        if (!p.valid() || std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
        seen.push_back(p);
        decisions_.push_back(decide(p, n, in));
      }
    }
    return decisions_;
  }

  int groupOf(NodeId n) { return sets_.find(n.index); }
  PatternKind groupKind(NodeId n) { return sets_.kind(n.index); }

 private:
  FusionDecision decide(NodeId p, NodeId n, ValueId edge) {
    const Node& pn = g_.node(p);
    const Node& cn = g_.node(n);
    FusionDecision d{p, n, pn.name, cn.name, pn.op, cn.op, edge};
    d.passName = "fuse-ops";
    auto verdict = check(pn, cn);
    d.accepted = verdict.accepted;
    d.rule = verdict.rule;
    d.reason = (verdict.accepted ? "accepted: " : "rejected: ") + verdict.sentence;
    d.hint = verdict.hint;
    if (verdict.accepted) sets_.unite(n.index, p.index);
    return d;
  }

  RuleVerdict check(const Node& pn, const Node& cn) {
    PatternKind pk = kinds_[pn.id.index], ck = kinds_[cn.id.index];
    if (pk == PatternKind::Opaque || ck == PatternKind::Opaque) {
      const Node& o = pk == PatternKind::Opaque ? pn : cn;
      return {false, "opaque-op",
              label(o) + " is Opaque (no fusion rule knows " + o.op + "), so it runs as its own kernel",
              {}};
    }
    if (sets_.find(pn.id.index) == sets_.find(cn.id.index))
      return {true, "same-group", label(pn) + " is already in the group of " + label(cn), {}};
    if (auto others = otherUsers(pn, cn); !others.empty())
      return {false, "producer-has-other-users",
              label(pn) + " has other users (" + others + "); a producer fuses only into its sole consumer", {}};
    EdgeFacts e{label(pn), label(cn), pk, ck, sets_.kind(pn.id.index), sets_.kind(cn.id.index)};
    RuleVerdict v = decideKinds(e);
    if (!v.accepted) return v;
    int64_t total = sets_.size(pn.id.index) + sets_.size(cn.id.index);
    if (total > maxOps_)
      return {false, "fusion-window",
              "the group would hold " + std::to_string(total) + " ops; the fusion window is " +
                  std::to_string(maxOps_),
              "raise the window: fuse-ops{max-ops=" + std::to_string(total) + "}"};
    return v;
  }

  // Users of pn's outputs other than cn, as "Add 'x', Relu 'y'"; empty when none.
  std::string otherUsers(const Node& pn, const Node& cn) {
    std::string out;
    for (ValueId o : pn.outputs) {
      for (NodeId u : g_.value(o).users)
        if (u != cn.id) out += (out.empty() ? "" : ", ") + label(g_.node(u));
      if (g_.isGraphOutput(o) && g_.value(o).users.size() > 1)
        out += (out.empty() ? "" : ", ") + std::string("a graph output");
    }
    return out;
  }

  const Graph& g_;
  int64_t maxOps_;
  GroupSets sets_;
  std::vector<PatternKind> kinds_;
  std::vector<FusionDecision> decisions_;
};

}  // namespace

PassResult FuseOpsPass::run(Graph& g, PassContext& ctx) {
  auto order = g.topoOrder();
  if (!order) return PassResult::failed(Status::error("the graph has a cycle", "fuse-ops"));
  FusionPlanner planner(g, maxOps_);
  std::vector<FusionDecision> decisions = planner.plan(*order);

  std::map<int, std::vector<NodeId>> groups;  // root -> members, keyed in topo order below
  std::vector<int> roots;
  for (NodeId n : *order) {
    int r = planner.groupOf(n);
    if (!groups.count(r)) roots.push_back(r);
    groups[r].push_back(n);
  }
  // 3. rewrite: group ids follow the topological order of each group's first node.
  std::map<int, int> groupIds;
  int next = 0;
  int64_t fusedNodes = 0;
  for (int r : roots) {
    const auto& members = groups[r];
    if (members.size() < 2) continue;
    groupIds[r] = next;
    outlineGroup(g, members, next, std::string(patternKindName(planner.groupKind(members[0]))));
    fusedNodes += int64_t(members.size());
    ++next;
  }
  for (auto& d : decisions) {
    int r = planner.groupOf(d.consumer);
    if (d.accepted && groupIds.count(r)) d.group = groupIds[r];
  }
  int64_t rejected = std::count_if(decisions.begin(), decisions.end(), [](auto& d) { return !d.accepted; });
  ctx.decisions.insert(ctx.decisions.end(), decisions.begin(), decisions.end());
  PassResult result;
  result.changed = next > 0;
  result.stats["groups formed"] = next;
  result.stats["ops fused"] = fusedNodes;
  result.stats["edges accepted"] = int64_t(decisions.size()) - rejected;
  result.stats["edges rejected"] = rejected;
  return result;
}

}  // namespace fuselens
