// Sinking what follows an If into its branches (see cuda_program.h). When the
// branches give an output different shapes and later nodes read it, no one
// kernel fits both: every node after the If moves into both branches, so each
// branch's copy is specialized to that branch's shapes, and the If's outputs
// become the graph's.
//
//   c -> If{then: t, else: e} -> b -> Relu -> y        (b: f32[1,8] or f32[3])
//   c -> If{then: t -> Relu, else: e -> Relu} -> y     (each Relu has one shape)
//
// Values computed before the If that the moved nodes (or the graph outputs)
// read become implicit inputs of the new If, by name, as the importer makes them.
#include <algorithm>
#include <map>
#include <set>

#include "codegen/cuda/cuda_program.h"
#include "core/ops/registry.h"

namespace fuselens {
namespace {

std::shared_ptr<const Graph> branchOf(const Node& n, const char* attr) {
  const Attribute* a = n.attrs.find(attr);
  if (!a || !std::holds_alternative<std::shared_ptr<const Graph>>(*a)) return nullptr;
  return std::get<std::shared_ptr<const Graph>>(*a);
}

// The branch `b` with the moved nodes appended; outer values it reads arrive
// as inputs named as they are outside.
Graph extendBranch(const Graph& s, const Node& n, const Graph& b, const std::vector<NodeId>& rest,
                   const std::vector<ValueId>& outer) {
  Graph e = b;
  std::map<int32_t, ValueId> at;  // value of s -> value of e
  for (size_t k = 0; k < n.outputs.size(); ++k) at[n.outputs[k].index] = b.outputs()[k];
  for (ValueId v : outer) {
    auto found = std::find_if(e.inputs().begin(), e.inputs().end(),
                              [&](ValueId i) { return e.value(i).name == s.value(v).name; });
    at[v.index] = found != e.inputs().end() ? *found : e.addInput(s.value(v).name, s.value(v).type);
  }
  auto map = [&](ValueId v) -> ValueId {
    if (!v.valid()) return v;
    if (auto it = at.find(v.index); it != at.end()) return it->second;
    return at[v.index] = e.addConstant(s.value(v).name, s.value(v).constant);
  };
  for (NodeId id : rest) {
    const Node& r = s.node(id);
    std::vector<ValueId> ins;
    for (ValueId v : r.inputs) ins.push_back(map(v));
    NodeId m = copyNodeInto(e, s, r, ins);
    for (size_t i = 0; i < r.outputs.size(); ++i) at[r.outputs[i].index] = e.node(m).outputs[i];
  }
  std::vector<ValueId> outs;
  for (ValueId v : s.outputs()) outs.push_back(map(v));
  e.setOutputs(outs);
  return e;
}

}  // namespace

NodeId copyNodeInto(Graph& to, const Graph& from, const Node& n,
                    const std::vector<ValueId>& inputs) {
  std::vector<OutputSpec> outs;
  for (ValueId v : n.outputs) outs.push_back({from.value(v).name, from.value(v).type});
  NodeId m = to.addNode(n.op, inputs, outs, n.attrs, n.name);
  Node& copy = to.mutableNode(m);
  copy.domain = n.domain;
  copy.body = n.body;
  for (size_t i = 0; i < n.outputs.size(); ++i)
    to.mutableValue(copy.outputs[i]).layout = from.value(n.outputs[i]).layout;
  return m;
}

Status sinkIntoBranches(Graph& s, NodeId ifId) {
  auto order = s.topoOrder();
  if (!order) return Status::error("graph '" + s.name + "' has a cycle", "CUDA program");
  const Node n = s.node(ifId);
  auto then = branchOf(n, "then_branch"), otherwise = branchOf(n, "else_branch");
  if (!then || !otherwise)
    return Status::error("needs then_branch and else_branch graphs", describeNode(n));
  const auto pos = std::find(order->begin(), order->end(), ifId);
  const std::vector<NodeId> rest(pos + 1, order->end());
  std::set<int32_t> inside;  // the If's outputs and what the moved nodes make
  for (ValueId v : n.outputs) inside.insert(v.index);
  for (NodeId id : rest)
    for (ValueId v : s.node(id).outputs) inside.insert(v.index);
  // Outer values the moved nodes and the graph outputs read, in first-use order.
  std::vector<ValueId> outer;
  std::set<int32_t> seen;
  auto read = [&](ValueId v) {
    if (v.valid() && !inside.count(v.index) && !s.value(v).constant && seen.insert(v.index).second)
      outer.push_back(v);
  };
  for (NodeId id : rest)
    for (ValueId v : s.node(id).inputs) read(v);
  for (ValueId v : s.outputs()) read(v);
  std::vector<std::string> names = implicitInputNames(n);
  std::vector<ValueId> inputs = n.inputs;
  for (ValueId v : outer)
    if (std::find(inputs.begin() + 1, inputs.end(), v) == inputs.end()) {
      inputs.push_back(v);
      names.push_back(s.value(v).name);
    }
  // Every outer value the new branches read, the If's own implicit inputs too.
  std::vector<ValueId> implicit(inputs.begin() + 1, inputs.end());
  Attributes attrs = n.attrs;
  attrs.set("then_branch",
            std::make_shared<const Graph>(extendBranch(s, n, *then, rest, implicit)));
  attrs.set("else_branch",
            std::make_shared<const Graph>(extendBranch(s, n, *otherwise, rest, implicit)));
  attrs.set("implicit_inputs", names);
  std::vector<OutputSpec> specs;
  std::vector<std::string> outNames;
  for (ValueId v : s.outputs()) {
    specs.push_back({s.value(v).name + "/sunk", s.value(v).type});
    outNames.push_back(s.value(v).name);
  }
  NodeId m = s.addNode("If", inputs, specs, attrs, n.name);
  s.mutableNode(m).domain = n.domain;
  s.mutableNode(m).origins = n.origins;
  s.setOutputs(s.node(m).outputs);
  for (auto it = rest.rbegin(); it != rest.rend(); ++it) s.removeNode(*it);
  s.removeNode(ifId);
  for (size_t i = 0; i < outNames.size(); ++i)
    s.mutableValue(s.node(m).outputs[i]).name = outNames[i];
  return Status::ok();
}

}  // namespace fuselens
