// The reduce-precision pass; the contract is in reduce_precision.h.
//
//   1. outline: a compute node outside a group that touches a candidate
//      tensor becomes a one-op group (its conversions need a body);
//   2. choose: the candidate tensors, shrunk to a fixed point where every
//      producer and user of a chosen tensor can store or read it reduced;
//   3. rewrite: initializers converted, views retyped, each group given
//      conversions at the entries and exits that carry chosen tensors.
#include "passes/reduce_precision.h"

#include <algorithm>
#include <set>
#include <variant>

#include "core/ops/op_util.h"
#include "core/ops/registry.h"
#include "passes/outline_group.h"

namespace fuselens {
namespace {

// ONNX TensorProto codes, the values Cast's `to` attribute holds.
constexpr int64_t kOnnxFloat = 1, kOnnxFloat16 = 10, kOnnxBfloat16 = 16;

bool isGroup(const Node& n) { return n.op == kFusedOp && n.domain == kFuseLensDomain && n.body; }

bool isStatic(const Graph& g, ValueId v) { return g.value(v).type.staticShape().has_value(); }

// If, Loop and Scan carry their branches and bodies as graph attributes, and
// those read outer values by name: they run as driver kernels, kept in f32.
bool hasSubgraph(const Node& n) {
  for (const auto& [name, a] : n.attrs.all())
    if (std::holds_alternative<std::shared_ptr<const Graph>>(a)) return true;
  return false;
}

// Inputs that parametrize an op rather than carry data: rounding Resize's
// scales would change the output's shape, and lowering reads them as constants.
bool isParameterUse(const Node& n, size_t input) {
  if (n.op == "Resize") return input == 1 || input == 2;
  if (n.op == "Upsample") return input == 1;
  return false;
}

// Whether group input `i` of n feeds a parameter position inside its body.
bool feedsParameter(const Node& n, size_t i) {
  if (!isGroup(n)) {
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (k == i && isParameterUse(n, k)) return true;
    return false;
  }
  const Graph& body = *n.body;
  if (i >= body.inputs().size()) return true;
  ValueId in = body.inputs()[i];
  for (NodeId u : body.value(in).users) {
    const Node& un = body.node(u);
    for (size_t k = 0; k < un.inputs.size(); ++k)
      if (un.inputs[k] == in && isParameterUse(un, k)) return true;
  }
  return false;
}

// A kernel whose boundary tensors may be stored reduced: its code reads and
// writes through a body we can put conversions in.
bool reducibleKernel(const Graph& g, const Node& n) {
  if (!needsKernel(g, n)) return false;
  for (ValueId v : n.inputs)
    if (v.valid() && !isStatic(g, v)) return false;
  for (ValueId v : n.outputs)
    if (!isStatic(g, v)) return false;
  if (isGroup(n)) {
    for (NodeId id : n.body->nodeIds())
      if (n.body->node(id).body || hasSubgraph(n.body->node(id))) return false;
    return true;
  }
  if (n.body || hasSubgraph(n)) return false;
  const OpInfo* info = OpRegistry::instance().find(n.domain, n.op);
  return info && info->eager;
}

// f32, not the graph's own input or output, static, and produced or initialized.
bool candidate(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  if (val.type.dtype != DType::F32 || g.isGraphOutput(v) || !isStatic(g, v)) return false;
  if (val.constant) return val.constant->numel() > 1;  // one element: a literal in the code
  return val.producer.valid();
}

// `groupsOnly`: kernels outside a group count as not reducible (after step 1,
// a kernel still outside one has no body for its conversions).
class Chooser {
 public:
  Chooser(const Graph& g, bool groupsOnly) : g_(g), groupsOnly_(groupsOnly) {}

  std::set<ValueId> run() {
    for (ValueId v : g_.valueIds())
      if (candidate(g_, v)) chosen_.insert(v);
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = chosen_.begin(); it != chosen_.end();) {
        if (keeps(*it)) {
          ++it;
        } else {
          it = chosen_.erase(it);
          changed = true;
        }
      }
    }
    return chosen_;
  }

 private:
  bool reducible(const Node& n) const {
    return reducibleKernel(g_, n) && (!groupsOnly_ || isGroup(n));
  }

  bool keeps(ValueId v) const {
    const Value& val = g_.value(v);
    if (val.producer.valid()) {
      const Node& p = g_.node(val.producer);
      if (!needsKernel(g_, p) ? !chosen_.count(p.inputs[0]) : !reducible(p)) return false;
    }
    for (NodeId u : val.users) {
      const Node& un = g_.node(u);
      for (size_t k = 0; k < un.inputs.size(); ++k) {
        if (un.inputs[k] != v) continue;
        if (!needsKernel(g_, un)) {
          // A view aliases its data input: both are reduced or neither is.
          if (k != 0 || !chosen_.count(un.outputs[0])) return false;
        } else if (!reducible(un) || feedsParameter(un, k)) {
          return false;
        }
      }
    }
    return true;
  }

  const Graph& g_;
  const bool groupsOnly_;
  std::set<ValueId> chosen_;
};

// Step 1: one-op groups for compute nodes outside a group whose tensors may be reduced.
int64_t outlineSingles(Graph& g) {
  int nextGroup = 0;
  for (NodeId id : g.nodeIds())
    if (isGroup(g.node(id)))
      nextGroup = std::max<int>(nextGroup, int(g.node(id).attrs.getInt("group", -1)) + 1);
  const std::set<ValueId> chosen = Chooser(g, false).run();
  // Chosen first, outlined after: outlining gives a node's outputs new ids.
  std::vector<NodeId> singles;
  for (NodeId id : g.nodeIds()) {
    const Node& n = g.node(id);
    if (isGroup(n) || !reducibleKernel(g, n)) continue;
    bool touches = false;
    for (ValueId v : n.inputs) touches |= v.valid() && chosen.count(v);
    for (ValueId v : n.outputs) touches |= chosen.count(v) != 0;
    if (touches) singles.push_back(id);
  }
  for (NodeId id : singles) outlineGroup(g, {id}, nextGroup++, "single");
  return int64_t(singles.size());
}

ValueId addCast(Graph& body, ValueId from, DType to, const std::string& name) {
  TensorType t = body.value(from).type;
  t.dtype = to;
  Attributes a;
  a.set("to", to == DType::F32 ? kOnnxFloat : to == DType::F16 ? kOnnxFloat16 : kOnnxBfloat16);
  NodeId c = body.addNode("Cast", {from}, {{name, t}}, a, name);
  ValueId out = body.node(c).outputs[0];
  body.mutableValue(out).origin = body.value(from).origin;
  body.mutableValue(out).layout = body.value(from).layout;
  return out;
}

// Step 3 for one group: entries convert reduced inputs to f32, exits round
// reduced outputs. Returns the conversions added.
int64_t convertBoundaries(Graph& g, NodeId id, const std::set<ValueId>& chosen, DType storage) {
  const Node& n = g.node(id);
  auto body = std::make_shared<Graph>(*n.body);
  const std::string suffix = "_" + std::string(dtypeName(storage));
  int64_t added = 0;
  for (size_t i = 0; i < n.inputs.size() && i < body->inputs().size(); ++i) {
    if (!chosen.count(n.inputs[i])) continue;
    ValueId in = body->inputs()[i];
    std::vector<NodeId> users = body->value(in).users;
    body->mutableValue(in).type.dtype = storage;
    ValueId wide = addCast(*body, in, DType::F32, body->value(in).name + "_f32");
    for (NodeId u : users) {
      const Node& un = body->node(u);
      for (size_t k = 0; k < un.inputs.size(); ++k)
        if (body->node(u).inputs[k] == in) body->setInput(u, k, wide);
    }
    std::vector<ValueId> outs = body->outputs();
    std::replace(outs.begin(), outs.end(), in, wide);
    body->setOutputs(outs);
    ++added;
  }
  std::vector<ValueId> outs = body->outputs();
  for (size_t j = 0; j < n.outputs.size() && j < outs.size(); ++j) {
    if (!chosen.count(n.outputs[j])) continue;
    outs[j] = addCast(*body, outs[j], storage, body->value(outs[j]).name + suffix);
    ++added;
  }
  body->setOutputs(outs);
  g.mutableNode(id).body = body;
  return added;
}

}  // namespace

PassResult ReducePrecisionPass::run(Graph& g, PassContext& ctx) {
  if (!g.topoOrder())
    return PassResult::failed(Status::error("the graph has a cycle", "reduce-precision"));
  const int64_t outlined = outlineSingles(g);
  const std::set<ValueId> chosen = Chooser(g, true).run();
  if (chosen.empty()) return PassResult::unchanged();

  int64_t initializers = 0, conversions = 0;
  for (ValueId v : chosen) {
    if (!g.value(v).constant) continue;
    g.mutableValue(v).constant =
        std::make_shared<const TensorData>(ops::castTensor(*g.value(v).constant, storage_));
    ++initializers;
  }
  for (NodeId id : g.nodeIds()) {
    if (ctx.cancel.cancelled()) return PassResult::failed(Status::error("cancelled"));
    if (isGroup(g.node(id))) conversions += convertBoundaries(g, id, chosen, storage_);
  }
  for (ValueId v : chosen) g.mutableValue(v).type.dtype = storage_;

  PassResult r;
  r.changed = true;
  r.stats["tensors reduced"] = int64_t(chosen.size()) - initializers;
  r.stats["initializers reduced"] = initializers;
  r.stats["conversions added"] = conversions;
  r.stats["one-op groups made"] = outlined;
  return r;
}

}  // namespace fuselens
