// Walks a Graph the way the whole-graph layout does (session/graphview/graph_layout.cpp)
// but records nodes and edges only; a fused body's inputs are bound to what
// feeds the Fused node outside, so edges reach the body ops that use them.
#include "session/graphview/flat_graph.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <variant>

namespace fuselens::graphview {
namespace {

constexpr size_t kMaxLineChars = 30;
constexpr double kPadX = 16.0, kPadY = 8.0;

std::string elide(std::string s) {
  if (s.size() <= kMaxLineChars) return s;
  s.resize(kMaxLineChars - 3);  // in place: a 10,000-op graph elides thousands of lines
  return s += "...";
}

// "w f32[16,16]", elided; a name that fills the line alone skips formatting the type.
std::string constantLine(const Value& c) {
  if (c.name.size() + 1 >= kMaxLineChars - 3) return elide(c.name);
  return c.name + " " + c.type.str();
}

// "key=value" for the attributes a user would search by; tensors and graphs are left out.
std::vector<std::string> attrEntries(const Attributes& attrs) {
  std::vector<std::string> out;
  for (const auto& [key, a] : attrs.all()) {
    std::string v;
    if (const auto* i = std::get_if<int64_t>(&a)) v = std::to_string(*i);
    if (const auto* d = std::get_if<double>(&a)) v = std::to_string(*d);
    if (const auto* str = std::get_if<std::string>(&a)) v = *str;
    if (const auto* is = std::get_if<std::vector<int64_t>>(&a))
      for (size_t k = 0; k < is->size(); ++k) v += (k ? "," : "") + std::to_string((*is)[k]);
    if (!v.empty()) out.push_back(key + "=" + v);
  }
  return out;
}

// The graph's topological order as Graph::topoOrder gives it (ready nodes by
// smallest id). Graphs whose ids already run in dependency order, as a fused
// body and most snapshots do, are that order as they stand: checking costs one
// pass, where the heap costs allocations per graph, and a 10,000-op snapshot
// holds thousands of fused bodies.
std::optional<std::vector<NodeId>> orderOf(const Graph& g) {
  std::vector<NodeId> ids = g.nodeIds();
  for (NodeId id : ids)
    for (ValueId in : g.node(id).inputs)
      if (in.valid() && g.hasValue(in) && g.value(in).producer.valid() &&
          g.value(in).producer.index >= id.index)
        return g.topoOrder();
  return ids;
}

bool isFusedGroup(const Node& n) {
  return n.op == kFusedOp && n.domain == kFuseLensDomain && n.body != nullptr;
}

// Where a value comes from: a drawn node, or a constant folded into labels.
struct Source {
  int node = -1;
  const Value* constant = nullptr;
  ValueId value;
};

class Flattener {
 public:
  explicit Flattener(int maxConstantLines) : maxConstantLines_(maxConstantLines) {}

  FlatGraph run(const Graph& g) {
    out_.nodes.reserve(g.nodeCount() + g.inputs().size() + g.outputs().size());
    out_.edges.reserve(2 * g.nodeCount());
    std::vector<Source> inputs;
    for (ValueId v : g.inputs())
      inputs.push_back({addPort(g.value(v), LayoutNodeKind::Input), nullptr, v});
    std::vector<Source> outs = emitGraph(g, inputs, NodeId(), -1);
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      int me = addPort(g.value(g.outputs()[i]), LayoutNodeKind::Output);
      if (i < outs.size() && outs[i].node >= 0) addEdge(outs[i].node, me, outs[i].value);
    }
    return std::move(out_);
  }

 private:
  int addPort(const Value& value, LayoutNodeKind kind) {
    LayoutNode n;
    n.kind = kind;
    n.value = value.id;
    n.op = n.name = value.name;
    n.outputs = {value.name};
    n.lines = {value.type.str()};
    return addNode(std::move(n));
  }

  std::vector<Source> emitGraph(const Graph& g, const std::vector<Source>& inputs, NodeId outer,
                                int group) {
    std::vector<Source> byValue(g.valueCapacity());
    for (size_t i = 0; i < g.inputs().size() && i < inputs.size(); ++i)
      byValue[size_t(g.inputs()[i].index)] = inputs[i];
    for (ValueId c : g.constants()) byValue[size_t(c.index)] = {-1, &g.value(c), c};
    auto order = orderOf(g);
    for (NodeId id : order ? *order : g.nodeIds()) {
      const Node& node = g.node(id);
      std::vector<Source> srcs;
      srcs.reserve(node.inputs.size());
      for (ValueId v : node.inputs) srcs.push_back(v.valid() ? byValue[size_t(v.index)] : Source{});
      std::vector<Source> outs;
      outs.reserve(node.outputs.size());
      if (isFusedGroup(node)) {
        outs = emitGroup(node, srcs, outer.valid() ? outer : id);
      } else {
        int me = emitOp(g, node, srcs, outer, group);
        for (ValueId v : node.outputs) outs.push_back({me, nullptr, v});
      }
      for (size_t i = 0; i < node.outputs.size() && i < outs.size(); ++i)
        byValue[size_t(node.outputs[i].index)] = outs[i];
    }
    std::vector<Source> result;
    for (ValueId v : g.outputs()) result.push_back(byValue[size_t(v.index)]);
    return result;
  }

  std::vector<Source> emitGroup(const Node& node, const std::vector<Source>& srcs, NodeId top) {
    FlatGroup fg;
    fg.cluster.group = static_cast<int>(node.attrs.getInt("group", -1));
    fg.cluster.kind = node.attrs.getString("kind", "");
    fg.cluster.label = "group " + std::to_string(fg.cluster.group) +
                       (fg.cluster.kind.empty() ? "" : " (" + fg.cluster.kind + ")");
    fg.cluster.node = node.id;
    const size_t first = out_.nodes.size();
    const size_t index = out_.groups.size();
    out_.groups.push_back(std::move(fg));
    std::vector<Source> outs = emitGraph(*node.body, srcs, top, out_.groups[index].cluster.group);
    for (size_t i = first; i < out_.nodes.size(); ++i)
      out_.groups[index].members.push_back(static_cast<int>(i));
    return outs;
  }

  int emitOp(const Graph& g, const Node& node, const std::vector<Source>& srcs, NodeId outer,
             int group) {
    LayoutNode n;
    n.node = outer.valid() ? outer : node.id;
    n.bodyNode = outer.valid() ? node.id : NodeId();
    n.group = group;
    n.op = node.op;
    n.name = node.name;
    n.attrs = attrEntries(node.attrs);
    n.origins.reserve(node.origins.size());
    for (NodeId o : node.origins) n.origins.push_back(o.index);
    n.outputs.reserve(node.outputs.size());
    for (ValueId v : node.outputs)
      if (v.valid()) n.outputs.push_back(g.value(v).name);
    if (!node.outputs.empty()) {
      std::string type = g.value(node.outputs[0]).type.str();
      if (node.outputs.size() > 1) type += " +" + std::to_string(node.outputs.size() - 1);
      n.lines.push_back(type);
    }
    int constants = 0;
    for (const Source& s : srcs) {
      if (!s.constant) continue;
      if (++constants <= maxConstantLines_) n.lines.push_back(constantLine(*s.constant));
    }
    if (constants > maxConstantLines_)
      n.lines.push_back("+" + std::to_string(constants - maxConstantLines_) + " constants");
    int me = addNode(std::move(n));
    for (size_t i = 0; i < srcs.size(); ++i) {
      if (srcs[i].node < 0) continue;
      // Mul(x, x) draws one edge: a node's few inputs are checked, not a set of all edges.
      bool seen = false;
      for (size_t j = 0; j < i && !seen; ++j) seen = srcs[j].node == srcs[i].node;
      if (!seen) addEdge(srcs[i].node, me, srcs[i].value);
    }
    return me;
  }

  int addNode(LayoutNode n) {
    for (std::string& line : n.lines) line = elide(std::move(line));
    n.op = elide(std::move(n.op));
    out_.nodes.push_back(std::move(n));
    return static_cast<int>(out_.nodes.size()) - 1;
  }

  void addEdge(int from, int to, ValueId v) { out_.edges.push_back({from, to, v}); }

  int maxConstantLines_;
  FlatGraph out_;
};

}  // namespace

FlatGraph flattenGraph(const Graph& g, int maxConstantLines) {
  return Flattener(maxConstantLines).run(g);
}

LayoutBox nodeSize(const LayoutNode& n, const LayoutOptions& opts) {
  size_t chars = n.op.size() + 2;  // the op name is drawn bold
  for (const std::string& line : n.lines) chars = std::max(chars, line.size());
  double w = std::max(56.0, double(chars) * opts.charWidth + kPadX);
  double h = double(1 + n.lines.size()) * opts.lineHeight + kPadY;
  if (n.kind != LayoutNodeKind::Op) w *= 1.2;
  return {0, 0, w, h};
}

}  // namespace fuselens::graphview
