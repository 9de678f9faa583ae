// Opening and closing fused groups around the layout rewrite (layout_groups.h).
#include "passes/layout_groups.h"

#include <algorithm>
#include <set>

#include "passes/fuse_patterns.h"
#include "passes/fusion_checks.h"
#include "passes/inline_group.h"
#include "passes/outline_group.h"
#include "passes/pattern_match.h"

namespace fuselens {
namespace {

bool isPlain4dF32(const Graph& g, ValueId v) {
  if (!v.valid()) return false;
  const Value& val = g.value(v);
  return val.type.rankKnown && val.type.rank() == 4 && val.type.dtype == DType::F32 &&
         !val.layout.blocked();
}

bool holdsSpatialOp(const Graph& body) {
  static const char* const ops[] = {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool",
                                    "GlobalMaxPool"};
  for (NodeId id : body.nodeIds()) {
    const Node& n = body.node(id);
    if (!n.domain.empty() || n.inputs.empty()) continue;
    if (std::none_of(std::begin(ops), std::end(ops), [&](const char* op) { return n.op == op; }))
      continue;
    if (isPlain4dF32(body, n.inputs[0])) return true;
  }
  return false;
}

bool isTransform(const Node& n) {
  return n.domain == kFuseLensDomain && (n.op == "ToNCHWc" || n.op == "FromNCHWc");
}

}  // namespace

std::vector<OpenedGroup> openLayoutGroups(Graph& g) {
  std::vector<OpenedGroup> opened;
  const std::vector<NodeId> order = g.topoOrder().value();
  for (NodeId id : order) {
    const Node& n = g.node(id);
    if (n.op != kFusedOp || n.domain != kFuseLensDomain || !n.body || !holdsSpatialOp(*n.body))
      continue;
    OpenedGroup o;
    o.id = int(n.attrs.getInt("group", 0));
    o.kind = n.attrs.getString("kind", "fuse-ops");
    o.members = inlineGroup(g, id);
    opened.push_back(std::move(o));
  }
  return opened;
}

std::vector<NodeId> closeLayoutGroups(Graph& g, const std::vector<OpenedGroup>& groups,
                                      const std::map<int32_t, NodeId>& replaced) {
  std::vector<NodeId> formed;
  for (const OpenedGroup& o : groups) {
    std::set<NodeId> members;
    for (NodeId m : o.members) {
      auto it = replaced.find(m.index);
      NodeId now = it != replaced.end() ? it->second : m;
      if (g.hasNode(now)) members.insert(now);
    }
    // A transform computed from a member and read by a member sits between
    // two of them (one stays NCHW): the group keeps it, or it would not be convex.
    for (bool grew = true; grew;) {
      grew = false;
      for (NodeId id : g.nodeIds()) {
        const Node& n = g.node(id);
        if (members.count(id) || !isTransform(n) || !n.inputs[0].valid()) continue;
        NodeId p = g.value(n.inputs[0]).producer;
        const auto& users = g.value(n.outputs[0]).users;
        bool feedsMember = std::any_of(users.begin(), users.end(),
                                       [&](NodeId u) { return members.count(u) != 0; });
        if (p.valid() && members.count(p) && feedsMember) members.insert(id), grew = true;
      }
    }
    if (members.empty()) continue;
    const std::vector<NodeId> order = g.topoOrder().value();
    std::vector<NodeId> ordered;
    for (NodeId id : order)
      if (members.count(id)) ordered.push_back(id);
    formed.push_back(outlineGroup(g, ordered, o.id, o.kind));
  }
  return formed;
}

namespace {

bool isBlockedAnchor(const Node& n) {
  if (n.domain == kFuseLensDomain)
    return n.op == "ConvNCHWc" || n.op == "MaxPoolNCHWc" || n.op == "AveragePoolNCHWc";
  return n.domain.empty() && (n.op == "ReduceMean" || n.op == "ReduceMax");  // blocked global pools
}

// A fold target: a Fused node holding a blocked anchor, or such an anchor alone.
bool isTarget(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (n.op == kFusedOp && n.domain == kFuseLensDomain && n.body) {
    for (NodeId b : n.body->nodeIds())
      if (isBlockedAnchor(n.body->node(b))) return true;
    return false;
  }
  return isBlockedAnchor(n) && !n.outputs.empty() && g.value(n.outputs[0]).layout.blocked();
}

PatternKind targetKind(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  return n.body ? groupNodeKind(n) : patternKindOf(g, id);
}

struct Fold {
  NodeId transform, target;
  FusionRule rule;
  std::string reason;
  std::string memberName, memberOp;  // the op on the group's side of the edge
};

// The verdict for transform `t` joining target `target`; nullopt when it does not.
std::optional<Fold> foldOf(const Graph& g, NodeId t, NodeId target, bool prologue) {
  const Node& tn = g.node(t);
  const Node& gn = g.node(target);
  const Graph* inner = gn.body ? gn.body.get() : &g;
  // The member on the other side of the edge, and the edge as that member sees it.
  NodeId member = target;
  ValueId edge = prologue ? tn.outputs[0] : tn.inputs[0];
  if (gn.body) {
    const auto& outer = prologue ? gn.inputs : gn.outputs;
    const auto& in = prologue ? inner->inputs() : inner->outputs();
    member = NodeId();
    for (size_t i = 0; i < outer.size() && i < in.size(); ++i) {
      if (outer[i] != edge) continue;
      const Value& bv = inner->value(in[i]);
      if (prologue && bv.users.size() == 1) member = bv.users[0];
      if (!prologue) member = bv.producer;
      edge = in[i];
    }
    if (!member.valid()) return std::nullopt;
  }
  const Node& mn = inner->node(member);
  const PatternKind kind = targetKind(g, target);
  auto v = prologue ? layoutTransformFold(tn, mn, edge, true, PatternKind::Injective, kind,
                                          nodeLabel(tn), nodeLabel(mn))
                    : layoutTransformFold(mn, tn, edge, true, kind, PatternKind::Injective,
                                          nodeLabel(mn), nodeLabel(tn));
  if (!v || !v->accepted) return std::nullopt;
  return Fold{
      t,       target,
      v->rule, "accepted: " + v->sentence + " (folded by layout, run after the fusion passes)",
      mn.name, mn.op};
}

}  // namespace

std::vector<FusionDecision> foldBoundaryTransforms(Graph& g) {
  std::map<NodeId, std::vector<Fold>> byTarget;
  for (NodeId id : g.nodeIds()) {
    const Node& n = g.node(id);
    if (!isTransform(n) || !n.inputs[0].valid()) continue;
    const bool prologue = n.op == "ToNCHWc";
    NodeId target;
    if (prologue) {
      const auto& users = g.value(n.outputs[0]).users;
      if (users.size() != 1 || g.isGraphOutput(n.outputs[0])) continue;
      target = users[0];
    } else {
      target = g.value(n.inputs[0]).producer;
    }
    if (!target.valid() || !isTarget(g, target)) continue;
    if (auto f = foldOf(g, id, target, prologue)) byTarget[target].push_back(*f);
  }
  std::vector<FusionDecision> decisions;
  int next = firstFreeGroupId(g);
  for (auto& [target, folds] : byTarget) {
    const Node tn = g.node(target);  // a copy: inlining removes it
    const int id = tn.body ? int(tn.attrs.getInt("group", 0)) : next++;
    const std::string kind = tn.body ? tn.attrs.getString("kind", "OutEWiseFusable")
                                     : std::string(patternKindName(targetKind(g, target)));
    for (const Fold& f : folds) {
      const Node& t = g.node(f.transform);
      const bool prologue = t.op == "ToNCHWc";
      FusionDecision d{prologue ? f.transform : target,      prologue ? target : f.transform,
                       prologue ? t.name : f.memberName,     prologue ? f.memberName : t.name,
                       prologue ? t.op : f.memberOp,         prologue ? f.memberOp : t.op,
                       prologue ? t.outputs[0] : t.inputs[0]};
      d.accepted = true, d.rule = f.rule, d.reason = f.reason, d.group = id, d.passName = "layout";
      decisions.push_back(d);
    }
    std::set<NodeId> members;
    if (tn.body) {
      for (NodeId m : inlineGroup(g, target)) members.insert(m);
    } else {
      members.insert(target);
    }
    for (const Fold& f : folds) members.insert(f.transform);
    const std::vector<NodeId> order = g.topoOrder().value();
    std::vector<NodeId> ordered;
    for (NodeId n : order)
      if (members.count(n)) ordered.push_back(n);
    outlineGroup(g, ordered, id, kind);
  }
  return decisions;
}

}  // namespace fuselens
