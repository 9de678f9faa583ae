#include "passes/outline_group.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>

namespace fuselens {
namespace {

bool isScalarConstant(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  return val.constant && val.constant->numel() == 1;
}

}  // namespace

// Only the group's own nodes and edges are visited: sorting the whole graph
// once per group made fusing a 20,000-node chain quadratic.
std::vector<NodeId> topoOrderOf(const Graph& g, const std::vector<NodeId>& given) {
  const std::set<NodeId> members(given.begin(), given.end());
  std::set<NodeId> placed;
  bool runs = given.size() == members.size();
  for (size_t i = 0; runs && i < given.size(); ++i) {
    for (ValueId in : g.node(given[i]).inputs) {
      if (!in.valid()) continue;
      NodeId p = g.value(in).producer;
      if (p.valid() && members.count(p) && !placed.count(p)) runs = false;
    }
    placed.insert(given[i]);
  }
  if (runs) return given;

  std::map<NodeId, int> pending;
  for (NodeId n : members) {
    std::set<NodeId> producers;
    for (ValueId in : g.node(n).inputs)
      if (in.valid() && g.value(in).producer.valid() && members.count(g.value(in).producer))
        producers.insert(g.value(in).producer);
    pending[n] = int(producers.size());
  }
  auto later = [](NodeId a, NodeId b) { return b < a; };
  std::priority_queue<NodeId, std::vector<NodeId>, decltype(later)> ready(later);
  for (auto [n, count] : pending)
    if (count == 0) ready.push(n);
  std::vector<NodeId> order;
  while (!ready.empty()) {
    NodeId n = ready.top();
    ready.pop();
    order.push_back(n);
    for (ValueId o : g.node(n).outputs)
      for (NodeId u : g.value(o).users)
        if (members.count(u) && --pending[u] == 0) ready.push(u);
  }
  return order;
}

NodeId outlineGroup(Graph& g, const std::vector<NodeId>& membersIn, int groupId,
                    const std::string& kind) {
  std::set<NodeId> members(membersIn.begin(), membersIn.end());
  const std::vector<NodeId> order = topoOrderOf(g, membersIn);

  auto body = std::make_shared<Graph>();
  body->name = "group" + std::to_string(groupId);
  std::map<ValueId, ValueId> inner;  // outer value -> body value
  std::vector<ValueId> groupInputs;
  auto bodyValue = [&](ValueId outer) -> ValueId {
    if (!outer.valid()) return outer;
    if (auto it = inner.find(outer); it != inner.end()) return it->second;
    const Value& v = g.value(outer);
    ValueId b = isScalarConstant(g, outer) ? body->addConstant(v.name, v.constant)
                                           : body->addInput(v.name, v.type);
    if (!isScalarConstant(g, outer)) groupInputs.push_back(outer);
    body->mutableValue(b).origin = v.origin;
    body->mutableValue(b).layout = v.layout;
    inner[outer] = b;
    return b;
  };

  std::vector<NodeId> origins;
  for (NodeId id : order) {
    const Node& n = g.node(id);
    std::vector<ValueId> ins;
    for (ValueId in : n.inputs) ins.push_back(bodyValue(in));
    std::vector<OutputSpec> outs;
    for (ValueId o : n.outputs) outs.push_back({g.value(o).name, g.value(o).type});
    NodeId bn = body->addNode(n.op, ins, outs, n.attrs, n.name);
    Node& copy = body->mutableNode(bn);
    copy.domain = n.domain;
    copy.origins = n.origins;
    copy.body = n.body;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      inner[n.outputs[i]] = copy.outputs[i];
      body->mutableValue(copy.outputs[i]).origin = g.value(n.outputs[i]).origin;
      body->mutableValue(copy.outputs[i]).layout = g.value(n.outputs[i]).layout;
    }
    origins.insert(origins.end(), n.origins.begin(), n.origins.end());
  }

  std::vector<ValueId> groupOutputs;
  for (NodeId id : order)
    for (ValueId o : g.node(id).outputs) {
      const auto& users = g.value(o).users;
      bool usedOutside =
          std::any_of(users.begin(), users.end(), [&](NodeId u) { return !members.count(u); });
      if (usedOutside || g.isGraphOutput(o)) groupOutputs.push_back(o);
    }
  std::vector<ValueId> bodyOutputs;
  for (ValueId o : groupOutputs) bodyOutputs.push_back(inner[o]);
  body->setOutputs(bodyOutputs);

  std::vector<OutputSpec> outs;
  for (ValueId o : groupOutputs) outs.push_back({g.value(o).name, g.value(o).type});
  Attributes attrs;
  attrs.set("group", int64_t(groupId));
  attrs.set("kind", kind);
  NodeId fused = g.addNode(kFusedOp, groupInputs, outs, attrs, "group" + std::to_string(groupId));
  Node& fn = g.mutableNode(fused);
  fn.domain = kFuseLensDomain;
  std::sort(origins.begin(), origins.end());
  fn.origins = origins;
  fn.body = body;
  for (size_t i = 0; i < groupOutputs.size(); ++i) {
    ValueId newOut = fn.outputs[i];
    g.mutableValue(newOut).origin = g.value(groupOutputs[i]).origin;
    g.mutableValue(newOut).layout = g.value(groupOutputs[i]).layout;
    g.replaceAllUses(groupOutputs[i], newOut);
  }
  // Members' uses are now internal only; remove consumers before producers.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    for (ValueId o : g.node(*it).outputs) g.mutableValue(o).users.clear();
    g.removeNode(*it);
  }
  // Scalar constants were copied into the body; drop the outer ones nothing reads now.
  for (const auto& [outer, copy] : inner) {
    if (!g.hasValue(outer) || !g.value(outer).constant || !isScalarConstant(g, outer)) continue;
    if (g.value(outer).users.empty() && !g.isGraphOutput(outer)) g.removeValue(outer);
  }
  return fused;
}

}  // namespace fuselens
