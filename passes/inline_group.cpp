#include "passes/inline_group.h"

#include <map>

#include "passes/rewriter.h"

namespace fuselens {

std::vector<NodeId> inlineGroup(Graph& g, NodeId fusedId) {
  const Node fused = g.node(fusedId);  // a copy: adding nodes may move the arena
  const Graph& body = *fused.body;
  std::map<ValueId, ValueId> outer;  // body value -> value of g
  for (size_t i = 0; i < body.inputs().size() && i < fused.inputs.size(); ++i)
    outer[body.inputs()[i]] = fused.inputs[i];
  for (ValueId c : body.constants()) {
    if (outer.count(c)) continue;
    const Value& v = body.value(c);
    auto same = g.findValue(v.name);
    if (same && g.value(*same).constant == v.constant) {
      outer[c] = *same;
      continue;
    }
    ValueId copy = g.addConstant(freshName(g, v.name), v.constant);
    g.mutableValue(copy).origin = v.origin;
    g.mutableValue(copy).layout = v.layout;
    outer[c] = copy;
  }
  std::vector<NodeId> added;
  const std::vector<NodeId> order =
      body.topoOrder().value();  // a named copy: the optional is a temporary
  for (NodeId id : order) {
    const Node& n = body.node(id);
    std::vector<ValueId> ins;
    for (ValueId in : n.inputs) ins.push_back(in.valid() ? outer.at(in) : in);
    std::vector<OutputSpec> outs;
    for (ValueId o : n.outputs) outs.push_back({body.value(o).name, body.value(o).type});
    NodeId copy = g.addNode(n.op, ins, outs, n.attrs, n.name);
    Node& cn = g.mutableNode(copy);
    cn.domain = n.domain;
    cn.origins = n.origins;
    cn.body = n.body;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      ValueId o = g.node(copy).outputs[i];
      g.mutableValue(o).origin = body.value(n.outputs[i]).origin;
      g.mutableValue(o).layout = body.value(n.outputs[i]).layout;
      outer[n.outputs[i]] = o;
    }
    added.push_back(copy);
  }
  for (size_t i = 0; i < fused.outputs.size() && i < body.outputs().size(); ++i)
    g.replaceAllUses(fused.outputs[i], outer.at(body.outputs()[i]));
  g.removeNode(fusedId);
  return added;
}

}  // namespace fuselens
