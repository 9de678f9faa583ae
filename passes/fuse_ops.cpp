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
//                (fusion_rules.cpp; two reduction groups: reduce-chain in
//                fusion_checks.cpp), dynamic dims, fusion window, group
//                inputs, live values. A rejected edge then gets the hints the
//                rule itself has none for (attention, "run layout first").
//   2b. reconverge  (post-dominator) a producer with several users joins a
//                group when all of its users ended up in that group: every
//                path from it reconverges inside the group, so the group is
//                still convex. Repeated until nothing more joins:
//
//                  %e = Exp(%x)          users Relu, Tanh: rejected in step 2,
//                  %r = Relu(%e)   \     then Relu, Tanh and Add form one group
//                  %t = Tanh(%e)    > group {Relu, Tanh, Add}
//                  %a = Add(%r, %t) /     -> Exp joins it: accepted, reconverge
//
//   3. rewrite   outline every group of two or more nodes into a Fused node.
//
// A producer joins a consumer's group only when every user of the producer is
// in that group, so every member but the exit has all its users inside, and
// merging can never create a cycle (a path out of the group and back would
// leave through a member's user outside the group).
#include "passes/fuse_ops.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "passes/fuse_patterns.h"
#include "passes/fusion_checks.h"
#include "passes/fusion_rules.h"
#include "passes/inline_group.h"
#include "passes/outline_group.h"
#include "passes/pattern_match.h"

namespace fuselens {
namespace {

std::string label(const Node& n) {
  if (isPatternGroup(n)) return n.attrs.getString("kind", "") + " group '" + n.name + "'";
  return n.op + " '" + n.name + "'";
}

// The body member of pattern group `n` at the outer value `v`: the one that
// produces it (producer side) or the first that reads it. Decisions name
// members, so explain finds them after fuse-ops flattens the group.
const Node& memberAt(const Node& n, ValueId v, bool producerSide) {
  if (!isPatternGroup(n)) return n;
  const Graph& b = *n.body;
  const auto& outer = producerSide ? n.outputs : n.inputs;
  const auto& inner = producerSide ? b.outputs() : b.inputs();
  for (size_t i = 0; i < outer.size() && i < inner.size(); ++i) {
    if (outer[i] != v) continue;
    const Value& bv = b.value(inner[i]);
    if (producerSide && bv.producer.valid()) return b.node(bv.producer);
    if (!producerSide && !bv.users.empty()) return b.node(bv.users[0]);
  }
  return n;
}

class GroupSets {
 public:
  explicit GroupSets(size_t n)
      : parent_(n), size_(n, 1), kind_(n, PatternKind::Opaque), members_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
    for (size_t i = 0; i < n; ++i) members_[i] = {NodeId(int32_t(i))};
  }
  int find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(int a, int b) {  // b's group merges into a's
    a = find(a), b = find(b);
    if (a == b) return;
    parent_[b] = a;
    size_[a] += size_[b];
    kind_[a] = mergeKinds(kind_[a], kind_[b]);
    members_[a].insert(members_[a].end(), members_[b].begin(), members_[b].end());
    members_[b].clear();
  }
  int64_t size(int x) { return size_[find(x)]; }
  void setSize(int x, int64_t s) { size_[find(x)] = s; }
  PatternKind& kind(int x) { return kind_[find(x)]; }
  const std::vector<NodeId>& members(int x) { return members_[find(x)]; }

 private:
  std::vector<int> parent_;
  std::vector<int64_t> size_;
  std::vector<PatternKind> kind_;
  std::vector<std::vector<NodeId>> members_;
};

// The values a set of nodes reads from outside it, scalar constants excepted
// (outlining copies those into the body).
std::set<ValueId> externalInputs(const Graph& g, const std::vector<NodeId>& a,
                                 const std::vector<NodeId>& b) {
  std::set<NodeId> in(a.begin(), a.end());
  in.insert(b.begin(), b.end());
  std::set<ValueId> out;
  for (NodeId n : in)
    for (ValueId v : g.node(n).inputs) {
      if (!v.valid()) continue;
      const Value& val = g.value(v);
      if (val.producer.valid() && in.count(val.producer)) continue;
      if (val.constant && val.constant->numel() == 1) continue;
      out.insert(v);
    }
  return out;
}

// Estimated values live at once in one thread computing one output element of
// the fused kernel: walk the members in topological order; a member's result is
// live from its definition to its last use inside the group, and every input
// the group reads is one more value the thread holds when it is loaded.
int64_t liveValues(const Graph& g, const std::vector<NodeId>& members,
                   const std::vector<int>& topoIndex) {
  std::vector<NodeId> order = members;
  std::sort(order.begin(), order.end(),
            [&](NodeId a, NodeId b) { return topoIndex[a.index] < topoIndex[b.index]; });
  std::map<ValueId, int> lastUse;  // value -> position of its last reader in the group
  for (int i = 0; i < int(order.size()); ++i)
    for (ValueId v : g.node(order[i]).inputs)
      if (v.valid()) lastUse[v] = i;
  int64_t peak = 0;
  std::set<ValueId> live;
  for (int i = 0; i < int(order.size()); ++i) {
    for (ValueId v : g.node(order[i]).inputs)
      if (v.valid()) live.insert(v);
    for (ValueId o : g.node(order[i]).outputs) live.insert(o);
    peak = std::max<int64_t>(peak, int64_t(live.size()));
    std::erase_if(live, [&](ValueId v) {
      auto it = lastUse.find(v);
      return it == lastUse.end() || it->second <= i;  // stored or consumed: no longer held
    });
  }
  return peak;
}

class FusionPlanner {
 public:
  FusionPlanner(const Graph& g, const FuseOpsOptions& opts, bool layoutBefore)
      : g_(g),
        opts_(opts),
        layoutBefore_(layoutBefore),
        sets_(g.nodeCapacity()),
        kinds_(g.nodeCapacity()),
        topoIndex_(g.nodeCapacity(), 0) {}

  std::vector<FusionDecision> plan(const std::vector<NodeId>& order) {
    for (size_t i = 0; i < order.size(); ++i) {  // 1. analysis
      NodeId n = order[i];
      topoIndex_[n.index] = int(i);
      const Node& node = g_.node(n);
      kinds_[n.index] = isPatternGroup(node) ? groupNodeKind(node) : patternKindOf(g_, n);
      sets_.kind(n.index) = kinds_[n.index];
      sets_.setSize(n.index, groupNodeSize(node));
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
    reconverge();
    return decisions_;
  }

  int groupOf(NodeId n) { return sets_.find(n.index); }
  PatternKind groupKind(NodeId n) { return sets_.kind(n.index); }

 private:
  FusionDecision decide(NodeId p, NodeId n, ValueId edge) {
    const Node& pn = g_.node(p);
    const Node& cn = g_.node(n);
    const Node& pm = memberAt(pn, edge, true);
    const Node& cm = memberAt(cn, edge, false);
    FusionDecision d{p, n, pm.name, cm.name, pm.op, cm.op, edge};
    d.passName = "fuse-ops";
    auto verdict = check(pn, cn, edge);
    if (!verdict.accepted) addHints(verdict, pn, cn, edge);
    d.accepted = verdict.accepted;
    d.rule = verdict.rule;
    d.reason = (verdict.accepted ? "accepted: " : "rejected: ") + verdict.sentence;
    d.hint = verdict.hint;
    if (verdict.accepted) sets_.unite(n.index, p.index);
    return d;
  }

  // What would let a rejected edge fuse, where the rule itself had no hint.
  void addHints(RuleVerdict& v, const Node& pn, const Node& cn, ValueId edge) {
    if (v.hint.empty() && v.rule == FusionRule::TwoAnchors)
      v.hint = twoAnchorsHint(g_, memberAt(pn, edge, true), memberAt(cn, edge, false));
    if (!layoutBefore_ && (groupTouchesNchwConv(pn) || groupTouchesNchwConv(cn)))
      if (std::string h = layoutHint(v.rule); !h.empty())
        v.hint = v.hint.empty() ? h : v.hint + "; or " + h;
  }

  bool groupTouchesNchwConv(const Node& n) {
    const auto& members = sets_.members(n.id.index);
    return std::any_of(members.begin(), members.end(),
                       [&](NodeId m) { return touchesNchwConv(g_, g_.node(m)); });
  }

  RuleVerdict check(const Node& pn, const Node& cn, ValueId edge) {
    PatternKind pk = kinds_[pn.id.index], ck = kinds_[cn.id.index];
    if (pk == PatternKind::Opaque || ck == PatternKind::Opaque)
      return opaque(pk == PatternKind::Opaque ? pn : cn);
    if (sets_.find(pn.id.index) == sets_.find(cn.id.index))
      return {
          true, FusionRule::SameGroup, label(pn) + " is already in the group of " + label(cn), {}};
    if (auto others = otherUsers(pn, cn); !others.empty())
      return {
          false, FusionRule::ProducerHasOtherUsers,
          label(pn) + " has other users (" + others +
              ") that do not all end up in one group with " + label(cn) +
              "; fusing it would compute it once per kernel",
          "it fuses when all its users join one group (their paths reconverge, e.g. in an Add)"};
    return checkMerge(pn, cn, sets_.kind(cn.id.index), edge);
  }

  // The kind table, then the limits, for merging pn's group into cn's.
  RuleVerdict checkMerge(const Node& pn, const Node& cn, PatternKind consumerGroupKind,
                         ValueId edge) {
    EdgeFacts e{label(pn),
                label(cn),
                kinds_[pn.id.index],
                kinds_[cn.id.index],
                sets_.kind(pn.id.index),
                consumerGroupKind};
    const bool twoReduces = sets_.kind(pn.id.index) == PatternKind::CommReduce &&
                            consumerGroupKind == PatternKind::CommReduce;
    auto fold = layoutTransformFold(memberAt(pn, edge, true), memberAt(cn, edge, false), edge,
                                    sets_.size(pn.id.index) == 1, sets_.kind(pn.id.index),
                                    consumerGroupKind, label(pn), label(cn));
    RuleVerdict v = fold ? *fold
                    : twoReduces
                        ? reduceChain(g_, sets_.members(pn.id.index), sets_.members(cn.id.index),
                                      label(pn), label(cn), opts_.multiAnchor)
                        : decideKinds(e);
    if (!v.accepted) return v;
    if (const std::string& at = memberAt(cn, edge, false).name; opts_.split.count(at))
      return {false, FusionRule::CudaSpills,
              "ptxas found the kernel that fused " + label(pn) + " into " + label(cn) +
                  " spilling registers on the GPU (or over its launch's register budget), so "
                  "the group is split before " +
                  at,
              "this split comes from `export --target cuda --cuda-register-feedback`; drop " + at +
                  " from fuse-ops{split=...} to fuse it again"};
    if (kinds_[cn.id.index] <= PatternKind::Broadcast)  // shares the consumer's loop nest
      if (auto dyn = dynamicDim(g_, edge, cn, label(pn), label(cn))) return *dyn;
    int64_t total = sets_.size(pn.id.index) + sets_.size(cn.id.index);
    if (total > opts_.maxOps)
      return {false, FusionRule::FusionWindow,
              "the group would hold " + std::to_string(total) + " ops; the fusion window is " +
                  std::to_string(opts_.maxOps),
              "raise the window: fuse-ops{max-ops=" + std::to_string(total) + "}"};
    const auto& a = sets_.members(pn.id.index);
    const auto& b = sets_.members(cn.id.index);
    int64_t inputs = int64_t(externalInputs(g_, a, b).size());
    if (inputs > opts_.maxInputs)
      return {false, FusionRule::GroupInputs,
              "the group would read " + std::to_string(inputs) + " tensors; the cap is " +
                  std::to_string(opts_.maxInputs) + " (kernel arguments)",
              "raise the cap: fuse-ops{max-inputs=" + std::to_string(inputs) + "}"};
    std::vector<NodeId> merged = a;
    merged.insert(merged.end(), b.begin(), b.end());
    int64_t live = liveValues(g_, merged, topoIndex_);
    if (live > opts_.liveBudget)
      return {false, FusionRule::RegisterPressure,
              "estimated " + std::to_string(live) +
                  " live values per thread; the budget for target " + opts_.target + " is " +
                  std::to_string(opts_.liveBudget),
              "raise the budget: fuse-ops{live-budget=" + std::to_string(live) + "}"};
    return v;
  }

  RuleVerdict opaque(const Node& o) {
    if (o.op == kFusedOp && o.domain == kFuseLensDomain)
      return {false, FusionRule::AlreadyFused,
              label(o) + " is a group an earlier pass formed; fuse-ops does not reopen it",
              "run fuse-ops once per pipeline (fuse-patterns' groups it does extend)"};
    bool known = OpRegistry::instance().find(o.domain, o.op) != nullptr;
    return {false, FusionRule::OpaqueOp,
            label(o) + " is Opaque (" +
                (known ? "its op has no fusion rule" : "no op in the registry is " + o.op) +
                "), so it runs as its own kernel",
            known ? ""
                  : "add " + o.op +
                        " to the op registry (core/ops) with a pattern kind and an eager kernel"};
  }

  // 2b. A producer whose users all sit in one group joins that group.
  void reconverge() {
    for (bool changed = true; changed;) {
      changed = false;
      for (auto& d : decisions_) {
        if (d.accepted || d.rule != FusionRule::ProducerHasOtherUsers) continue;
        const Node& pn = g_.node(d.producer);
        if (g_.isGraphOutput(d.edge)) continue;
        int target = -1;
        bool oneGroup = true;
        for (ValueId o : pn.outputs)
          for (NodeId u : g_.value(o).users) {
            int r = sets_.find(u.index);
            oneGroup = oneGroup && (target < 0 || target == r);
            target = r;
          }
        if (!oneGroup || target < 0 || sets_.find(pn.id.index) == target) continue;
        const Node& cn = g_.node(d.consumer);
        RuleVerdict v = checkMerge(pn, cn, sets_.kind(target), d.edge);
        if (!v.accepted) addHints(v, pn, cn, d.edge);
        if (!v.accepted) {
          d.reason = "rejected: every user of " + label(pn) + " is in the group of " + label(cn) +
                     ", but " + v.sentence;
          d.rule = v.rule;
          d.hint = v.hint;
          continue;
        }
        sets_.unite(target, pn.id.index);
        changed = true;
        for (auto& other : decisions_)  // every edge out of pn is now inside the group
          if (other.producer == pn.id && !other.accepted) {
            other.accepted = true;
            other.rule = FusionRule::Reconverge;
            other.reason = "accepted: every user of " + label(pn) + " is in the group of " +
                           label(g_.node(other.consumer)) +
                           ": all its paths reconverge inside the group (post-dominator), so it is "
                           "computed once there";
            other.hint.clear();
          }
      }
    }
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
  FuseOpsOptions opts_;
  bool layoutBefore_;
  GroupSets sets_;
  std::vector<PatternKind> kinds_;
  std::vector<int> topoIndex_;
  std::vector<FusionDecision> decisions_;
};

}  // namespace

int64_t defaultLiveBudget(const std::string& target) { return target == "cuda" ? 64 : 32; }

PassResult FuseOpsPass::run(Graph& g, PassContext& ctx) {
  auto order = g.topoOrder();
  if (!order) return PassResult::failed(Status::error("the graph has a cycle", "fuse-ops"));
  bool layoutBefore = false;  // a layout pass ran earlier in this pipeline
  for (size_t i = 0; i < ctx.position && i < ctx.pipeline.size(); ++i)
    layoutBefore |= ctx.pipeline[i] == "layout";
  FusionPlanner planner(g, opts_, layoutBefore);
  std::vector<FusionDecision> decisions = planner.plan(*order);

  std::map<int, std::vector<NodeId>> groups;  // root -> members, keyed in topo order below
  std::vector<int> roots;
  for (NodeId n : *order) {
    int r = planner.groupOf(n);
    if (!groups.count(r)) roots.push_back(r);
    groups[r].push_back(n);
  }
  // 3. rewrite: group ids follow the topological order of each group's first
  // node, after the ids earlier passes gave. A pattern group that gained ops is
  // inlined and outlined again with them, flat, keeping its pattern as kind.
  std::map<int, int> groupIds;
  const int firstId = firstFreeGroupId(g);
  int next = firstId;
  int64_t fusedNodes = 0;
  for (int r : roots) {
    const auto& members = groups[r];
    if (members.size() < 2) continue;
    groupIds[r] = next;
    std::string kind(patternKindName(planner.groupKind(members[0])));
    PatternKind strongest = PatternKind::ElemWise;
    std::vector<NodeId> flat;
    for (NodeId m : members) {
      const Node& n = g.node(m);
      if (!isPatternGroup(n)) {
        flat.push_back(m);
        continue;
      }
      PatternKind k = groupNodeKind(n);
      if (kind.rfind("pattern-", 0) != 0 || k > strongest)
        kind = n.attrs.getString("kind", kind), strongest = k;
      auto inner = inlineGroup(g, m);
      flat.insert(flat.end(), inner.begin(), inner.end());
    }
    outlineGroup(g, flat, next, kind);
    fusedNodes += int64_t(flat.size());
    ++next;
  }
  next -= firstId;
  for (auto& d : decisions) {
    int r = planner.groupOf(d.consumer);
    if (d.accepted && groupIds.count(r)) d.group = groupIds[r];
  }
  int64_t rejected =
      std::count_if(decisions.begin(), decisions.end(), [](auto& d) { return !d.accepted; });
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
