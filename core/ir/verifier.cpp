#include "core/ir/verifier.h"

#include <algorithm>
#include <vector>

#include "core/ir/text_syntax.h"

namespace fuselens {
namespace {

std::string nodeWhere(const Node& n) {
  return "node '" + (n.name.empty() ? "#" + std::to_string(n.id.index) : n.name) + "' (" + n.op +
         ")";
}

// (node, value) as one key, for the sets of reads and of listed users.
uint64_t edgeKey(NodeId n, ValueId v) {
  return uint64_t(uint32_t(n.index)) << 32 | uint32_t(v.index);
}
// Edges as a sorted vector: one allocation where a hash set made one per edge
// (the verifier runs after every pass, on 20,000-node graphs too).
struct EdgeSet {
  std::vector<uint64_t> keys;
  void insert(uint64_t k) { keys.push_back(k); }
  void seal() { std::sort(keys.begin(), keys.end()); }
  bool count(uint64_t k) const { return std::binary_search(keys.begin(), keys.end(), k); }
};

Status verifyNode(const Graph& g, const Node& n, const Graph* original, const EdgeSet& listed) {
  for (ValueId in : n.inputs) {
    if (!in.valid()) continue;
    if (!g.hasValue(in)) return Status::error("reads a value that no longer exists", nodeWhere(n));
    if (!listed.count(edgeKey(n.id, in)))
      return Status::error("is missing from the users of " + valueRef(g, in), nodeWhere(n));
  }
  for (ValueId out : n.outputs) {
    if (!g.hasValue(out) || g.value(out).producer != n.id)
      return Status::error("has an output whose producer is another node", nodeWhere(n));
  }
  if (original)
    for (NodeId o : n.origins)
      if (!original->hasNode(o))
        return Status::error("has an origin that is not in the imported graph", nodeWhere(n));
  if (!n.body) return Status::ok();
  const Graph& b = *n.body;
  if (b.inputs().size() != n.inputs.size() || b.outputs().size() != n.outputs.size())
    return Status::error("has a body whose inputs/outputs do not match the node's", nodeWhere(n));
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i].valid() && b.value(b.inputs()[i]).type != g.value(n.inputs[i]).type)
      return Status::error("body input " + std::to_string(i) + " has type " +
                               b.value(b.inputs()[i]).type.str() + " but the node's input has " +
                               g.value(n.inputs[i]).type.str(),
                           nodeWhere(n));
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i].valid() && b.value(b.inputs()[i]).layout != g.value(n.inputs[i]).layout)
      return Status::error(
          "body input " + std::to_string(i) + " has another layout than the node's input",
          nodeWhere(n));
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (b.value(b.outputs()[i]).type != g.value(n.outputs[i]).type)
      return Status::error(
          "body output " + std::to_string(i) + " has another type than the node's output",
          nodeWhere(n));
  Status s = verifyGraph(b, original);
  if (!s) return Status::error("body: " + s.message(), nodeWhere(n));
  return Status::ok();
}

}  // namespace

Status verifyGraph(const Graph& g, const Graph* original) {
  // The reads, the listed users and the graph inputs as sets: a node with
  // 50,000 inputs (or a value with 50,000 users) must not make each edge scan
  // them all (quadratic).
  EdgeSet reads, listed;
  for (ValueId id : g.valueIds())
    for (NodeId u : g.value(id).users) listed.insert(edgeKey(u, id));
  listed.seal();
  for (NodeId id : g.nodeIds()) {
    FL_RETURN_IF_ERROR(verifyNode(g, g.node(id), original, listed));
    for (ValueId in : g.node(id).inputs)
      if (in.valid()) reads.insert(edgeKey(id, in));
  }
  reads.seal();
  std::vector<bool> isInput(g.valueCapacity(), false);
  for (ValueId in : g.inputs())
    if (size_t(in.index) < isInput.size()) isInput[in.index] = true;
  for (ValueId id : g.valueIds()) {
    const Value& v = g.value(id);
    for (NodeId u : v.users) {
      if (!g.hasNode(u))
        return Status::error("is used by a node that no longer exists", "value " + valueRef(g, id));
      if (!reads.count(edgeKey(u, id)))
        return Status::error("lists a user that does not read it", "value " + valueRef(g, id));
    }
    if (v.producer.valid() && !g.hasNode(v.producer))
      return Status::error("has a producer that no longer exists", "value " + valueRef(g, id));
    if (!v.producer.valid() && !v.constant && !isInput[id.index])
      return Status::error("is neither an input, a constant nor produced by a node",
                           "value " + valueRef(g, id));
    if (original && v.origin.valid() && !original->hasValue(v.origin))
      return Status::error("has an origin that is not in the imported graph",
                           "value " + valueRef(g, id));
    if (v.layout.blocked() && !v.layout.logicalType(v.type))
      return Status::error("has type " + v.type.str() + ", which is not " + v.layout.name() +
                               " of " + std::to_string(v.layout.channels) + " channels",
                           "value " + valueRef(g, id));
  }
  for (ValueId out : g.outputs())
    if (!g.hasValue(out))
      return Status::error("a graph output no longer exists", "graph @" + g.name);
  if (!g.topoOrder()) return Status::error("the graph has a cycle", "graph @" + g.name);
  return Status::ok();
}

}  // namespace fuselens
