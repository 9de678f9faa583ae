#include "core/ir/verifier.h"

#include <algorithm>

#include "core/ir/text_syntax.h"

namespace fuselens {
namespace {

std::string nodeWhere(const Node& n) {
  return "node '" + (n.name.empty() ? "#" + std::to_string(n.id.index) : n.name) + "' (" + n.op + ")";
}

Status verifyNode(const Graph& g, const Node& n, const Graph* original) {
  for (ValueId in : n.inputs) {
    if (!in.valid()) continue;
    if (!g.hasValue(in)) return Status::error("reads a value that no longer exists", nodeWhere(n));
    const auto& users = g.value(in).users;
    if (std::find(users.begin(), users.end(), n.id) == users.end())
      return Status::error("is missing from the users of " + valueRef(g, in), nodeWhere(n));
  }
  for (ValueId out : n.outputs) {
    if (!g.hasValue(out) || g.value(out).producer != n.id)
      return Status::error("has an output whose producer is another node", nodeWhere(n));
  }
  if (original)
    for (NodeId o : n.origins)
      if (!original->hasNode(o)) return Status::error("has an origin that is not in the imported graph", nodeWhere(n));
  if (!n.body) return Status::ok();
  const Graph& b = *n.body;
  if (b.inputs().size() != n.inputs.size() || b.outputs().size() != n.outputs.size())
    return Status::error("has a body whose inputs/outputs do not match the node's", nodeWhere(n));
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i].valid() && b.value(b.inputs()[i]).type != g.value(n.inputs[i]).type)
      return Status::error("body input " + std::to_string(i) + " has type " + b.value(b.inputs()[i]).type.str() +
                               " but the node's input has " + g.value(n.inputs[i]).type.str(),
                           nodeWhere(n));
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i].valid() && b.value(b.inputs()[i]).layout != g.value(n.inputs[i]).layout)
      return Status::error("body input " + std::to_string(i) + " has another layout than the node's input",
                           nodeWhere(n));
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (b.value(b.outputs()[i]).type != g.value(n.outputs[i]).type)
      return Status::error("body output " + std::to_string(i) + " has another type than the node's output",
                           nodeWhere(n));
  Status s = verifyGraph(b, original);
  if (!s) return Status::error("body: " + s.message(), nodeWhere(n));
  return Status::ok();
}

}  // namespace

Status verifyGraph(const Graph& g, const Graph* original) {
  for (NodeId id : g.nodeIds()) FL_RETURN_IF_ERROR(verifyNode(g, g.node(id), original));
  for (ValueId id : g.valueIds()) {
    const Value& v = g.value(id);
    for (NodeId u : v.users) {
      if (!g.hasNode(u)) return Status::error("is used by a node that no longer exists", "value " + valueRef(g, id));
      const auto& ins = g.node(u).inputs;
      if (std::find(ins.begin(), ins.end(), id) == ins.end())
        return Status::error("lists a user that does not read it", "value " + valueRef(g, id));
    }
    if (v.producer.valid() && !g.hasNode(v.producer))
      return Status::error("has a producer that no longer exists", "value " + valueRef(g, id));
    bool isInput = std::find(g.inputs().begin(), g.inputs().end(), id) != g.inputs().end();
    if (!v.producer.valid() && !v.constant && !isInput)
      return Status::error("is neither an input, a constant nor produced by a node", "value " + valueRef(g, id));
    if (original && v.origin.valid() && !original->hasValue(v.origin))
      return Status::error("has an origin that is not in the imported graph", "value " + valueRef(g, id));
    if (v.layout.blocked() && !v.layout.logicalType(v.type))
      return Status::error("has type " + v.type.str() + ", which is not " + v.layout.name() + " of " +
                               std::to_string(v.layout.channels) + " channels",
                           "value " + valueRef(g, id));
  }
  for (ValueId out : g.outputs())
    if (!g.hasValue(out)) return Status::error("a graph output no longer exists", "graph @" + g.name);
  if (!g.topoOrder()) return Status::error("the graph has a cycle", "graph @" + g.name);
  return Status::ok();
}

}  // namespace fuselens
