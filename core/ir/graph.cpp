#include "core/ir/graph.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <queue>

namespace fuselens {

namespace {
std::atomic<uint64_t> lastStamp{0};
}

void Graph::touch() { stamp_ = lastStamp.fetch_add(1, std::memory_order_relaxed) + 1; }

ValueId Graph::newValue(std::string name, TensorType type) {
  touch();
  ValueId id(static_cast<int32_t>(values_.size()));
  Value v;
  v.id = id;
  v.name = std::move(name);
  v.type = std::move(type);
  values_.emplace_back(std::move(v));
  return id;
}

ValueId Graph::addInput(std::string name, TensorType type) {
  ValueId id = newValue(std::move(name), std::move(type));
  inputs_.push_back(id);
  return id;
}

ValueId Graph::addConstant(std::string name, std::shared_ptr<const TensorData> data) {
  assert(data && "a constant needs data");
  ValueId id = newValue(std::move(name), data->type());
  values_[id.index]->constant = std::move(data);
  return id;
}

NodeId Graph::addNode(std::string op, std::vector<ValueId> inputs, std::vector<OutputSpec> outputs,
                      Attributes attrs, std::string name) {
  touch();
  NodeId id(static_cast<int32_t>(nodes_.size()));
  Node n;
  n.id = id;
  n.op = std::move(op);
  n.name = std::move(name);
  n.attrs = std::move(attrs);
  n.inputs = std::move(inputs);
  for (auto& o : outputs) {
    ValueId v = newValue(std::move(o.name), std::move(o.type));
    values_[v.index]->producer = id;
    n.outputs.push_back(v);
  }
  for (ValueId in : n.inputs)
    if (in.valid()) addUser(in, id);
  nodes_.emplace_back(std::move(n));
  ++liveNodes_;
  return id;
}

void Graph::markAsOriginal() {
  touch();
  for (auto& n : nodes_)
    if (n) n->origins = {n->id};
  for (auto& v : values_)
    if (v) v->origin = v->id;
}

void Graph::addUser(ValueId v, NodeId n) {
  auto& users = mutableValue(v).users;
  if (std::find(users.begin(), users.end(), n) == users.end()) users.push_back(n);
}

void Graph::dropUserIfUnused(ValueId v, NodeId n) {
  if (!v.valid() || !hasValue(v)) return;
  const auto& ins = node(n).inputs;
  if (std::find(ins.begin(), ins.end(), v) != ins.end()) return;
  auto& users = mutableValue(v).users;
  users.erase(std::remove(users.begin(), users.end(), n), users.end());
}

void Graph::setInput(NodeId n, size_t index, ValueId v) {
  Node& nd = mutableNode(n);
  assert(index < nd.inputs.size() && "input index out of range");
  ValueId old = nd.inputs[index];
  nd.inputs[index] = v;
  if (v.valid()) addUser(v, n);
  dropUserIfUnused(old, n);
}

void Graph::replaceAllUses(ValueId from, ValueId to) {
  if (from == to) return;
  touch();
  std::vector<NodeId> users = value(from).users;
  for (NodeId u : users) {
    Node& nd = mutableNode(u);
    for (auto& in : nd.inputs)
      if (in == from) in = to;
    addUser(to, u);
  }
  mutableValue(from).users.clear();
  for (auto& o : outputs_)
    if (o == from) o = to;
}

void Graph::removeNode(NodeId n) {
  touch();
  Node nd = node(n);
  for (ValueId o : nd.outputs) {
    assert(value(o).users.empty() && !isGraphOutput(o) && "removing a node whose outputs are used");
    values_[o.index].reset();
  }
  nodes_[n.index].reset();
  --liveNodes_;
  for (ValueId in : nd.inputs) {
    if (!in.valid() || !hasValue(in)) continue;
    auto& users = mutableValue(in).users;
    users.erase(std::remove(users.begin(), users.end(), n), users.end());
  }
}

void Graph::removeValue(ValueId v) {
  touch();
  assert(value(v).users.empty() && !value(v).producer.valid() && "removing a live value");
  inputs_.erase(std::remove(inputs_.begin(), inputs_.end(), v), inputs_.end());
  values_[v.index].reset();
}

Node& Graph::mutableNode(NodeId n) {
  assert(hasNode(n) && "no such node");
  touch();
  return *nodes_[n.index];
}
Value& Graph::mutableValue(ValueId v) {
  assert(hasValue(v) && "no such value");
  touch();
  return *values_[v.index];
}
const Node& Graph::node(NodeId n) const {
  assert(hasNode(n) && "no such node");
  return *nodes_[n.index];
}
const Value& Graph::value(ValueId v) const {
  assert(hasValue(v) && "no such value");
  return *values_[v.index];
}
bool Graph::hasNode(NodeId n) const {
  return n.valid() && size_t(n.index) < nodes_.size() && nodes_[n.index].has_value();
}
bool Graph::hasValue(ValueId v) const {
  return v.valid() && size_t(v.index) < values_.size() && values_[v.index].has_value();
}

std::vector<NodeId> Graph::nodeIds() const {
  std::vector<NodeId> ids;
  for (const auto& n : nodes_)
    if (n) ids.push_back(n->id);
  return ids;
}

std::vector<ValueId> Graph::valueIds() const {
  std::vector<ValueId> ids;
  for (const auto& v : values_)
    if (v) ids.push_back(v->id);
  return ids;
}

std::vector<ValueId> Graph::constants() const {
  std::vector<ValueId> ids;
  for (const auto& v : values_)
    if (v && v->constant) ids.push_back(v->id);
  return ids;
}

std::optional<std::vector<NodeId>> Graph::topoOrder() const {
  // Kahn's algorithm with a min-heap on id so the order is stable and readable.
  // pending counts each node's distinct produced inputs, as users lists hold a
  // reader once however often it reads a value: a pop then touches each user
  // once, never scanning a wide node's inputs per producer (quadratic).
  std::vector<int> pending(nodes_.size(), 0);
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> ready;
  std::vector<ValueId> produced;
  for (const auto& n : nodes_) {
    if (!n) continue;
    produced.clear();
    for (ValueId in : n->inputs)
      if (in.valid() && hasValue(in) && value(in).producer.valid()) produced.push_back(in);
    std::sort(produced.begin(), produced.end());
    pending[n->id.index] = int(std::unique(produced.begin(), produced.end()) - produced.begin());
    if (pending[n->id.index] == 0) ready.push(n->id.index);
  }
  std::vector<NodeId> order;
  while (!ready.empty()) {
    NodeId id(ready.top());
    ready.pop();
    order.push_back(id);
    for (ValueId o : node(id).outputs)
      for (NodeId u : value(o).users)
        if (--pending[u.index] == 0) ready.push(u.index);
  }
  if (order.size() != liveNodes_) return std::nullopt;
  return order;
}

bool Graph::isGraphOutput(ValueId v) const {
  return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
}

std::optional<ValueId> Graph::findValue(const std::string& name) const {
  for (const auto& v : values_)
    if (v && v->name == name) return v->id;
  return std::nullopt;
}

std::optional<NodeId> Graph::findNode(const std::string& name) const {
  for (const auto& n : nodes_)
    if (n && n->name == name) return n->id;
  return std::nullopt;
}

Graph graphOfNode(const Graph& g, const Node& n,
                  const std::function<ValueId(Graph& alone, size_t input)>& input) {
  Graph alone;
  alone.name = n.name;
  std::vector<ValueId> ins;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    ins.push_back(n.inputs[i].valid() ? input(alone, i) : ValueId());
  std::vector<OutputSpec> outs;
  for (ValueId v : n.outputs) outs.push_back({g.value(v).name, g.value(v).type});
  NodeId id = alone.addNode(n.op, ins, outs, n.attrs, n.name);
  alone.mutableNode(id).domain = n.domain;
  alone.mutableNode(id).body = n.body;
  for (ValueId v : alone.node(id).outputs) alone.addOutput(v);
  return alone;
}

}  // namespace fuselens
