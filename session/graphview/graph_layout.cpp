// Builds a Graphviz graph from a Graph (fused bodies as clusters, constants
// folded into their users' labels), runs dot, and reads the geometry back.
#include "session/graphview/graph_layout.h"

#include <graphviz/gvc.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <utility>

namespace fuselens::graphview {
namespace {

constexpr double kPointsPerInch = 72.0;
constexpr size_t kMaxLineChars = 30;
constexpr double kPadX = 16.0, kPadY = 8.0;

// One context for the process, created lazily and used under the mutex only.
std::mutex& graphvizMutex() {
  static std::mutex m;
  return m;
}
GVC_t* graphvizContext() {
  static GVC_t* gvc = gvContext();
  return gvc;
}

void set(void* obj, const char* name, const std::string& value) {
  agsafeset(obj, const_cast<char*>(name), const_cast<char*>(value.c_str()), const_cast<char*>(""));
}

std::string inches(double points) { return std::to_string(points / kPointsPerInch); }

std::string elide(std::string s) {
  if (s.size() <= kMaxLineChars) return s;
  return s.substr(0, kMaxLineChars - 3) + "...";
}

bool isFusedGroup(const Node& n) {
  return n.op == kFusedOp && n.domain == kFuseLensDomain && n.body != nullptr;
}

size_t countOps(const Graph& g) {
  size_t n = 0;
  for (NodeId id : g.nodeIds()) {
    const Node& node = g.node(id);
    n += isFusedGroup(node) ? countOps(*node.body) : 1;
  }
  return n;
}

std::vector<NodeId> orderedNodes(const Graph& g) {
  auto order = g.topoOrder();
  return order ? *order : g.nodeIds();
}

// Where a value comes from, as the layout sees it: a drawn node, or a
// constant that is folded into its users' labels.
struct Source {
  int node = -1;
  const Value* constant = nullptr;
  ValueId value;
};

class Builder {
 public:
  Builder(Agraph_t* root, const LayoutOptions& opts) : root_(root), opts_(opts) {}

  void build(const Graph& g) {
    std::vector<Source> inputs;
    for (ValueId v : g.inputs()) {
      const Value& value = g.value(v);
      LayoutNode n;
      n.kind = LayoutNodeKind::Input;
      n.value = v;
      n.op = n.name = value.name;
      n.outputs = {value.name};
      n.lines = {value.type.str()};
      inputs.push_back({addNode(root_, std::move(n)), nullptr, v});
    }
    std::vector<Source> outs = emitGraph(g, root_, inputs, NodeId(), -1);
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      const Value& value = g.value(g.outputs()[i]);
      LayoutNode n;
      n.kind = LayoutNodeKind::Output;
      n.value = value.id;
      n.op = n.name = value.name;
      n.outputs = {value.name};
      n.lines = {value.type.str()};
      int me = addNode(root_, std::move(n));
      if (i < outs.size() && outs[i].node >= 0) addEdge(outs[i].node, me, outs[i].value);
    }
  }

  // Reads dot's geometry back into the layout; y grows downwards.
  GraphLayout finish() {
    boxf bb = GD_bb(root_);
    auto flip = [&](pointf p) { return LayoutPoint{p.x - bb.LL.x, bb.UR.y - p.y}; };
    out_.width = bb.UR.x - bb.LL.x;
    out_.height = bb.UR.y - bb.LL.y;
    for (size_t i = 0; i < out_.nodes.size(); ++i) {
      LayoutPoint c = flip(ND_coord(agNodes_[i]));
      double w = ND_width(agNodes_[i]) * kPointsPerInch,
             h = ND_height(agNodes_[i]) * kPointsPerInch;
      out_.nodes[i].box = {c.x - w / 2, c.y - h / 2, w, h};
    }
    for (size_t i = 0; i < out_.edges.size(); ++i) {
      readSpline(agEdges_[i], flip, out_.edges[i]);
      const textlabel_t* label = ED_label(agEdges_[i]);
      if (out_.edges[i].hasLabel && label && label->set)
        out_.edges[i].labelCenter = flip(label->pos);
      else
        out_.edges[i].hasLabel = false;
    }
    for (size_t i = 0; i < out_.clusters.size(); ++i) {
      boxf cb = GD_bb(agClusters_[i]);
      LayoutPoint tl = flip(pointf{cb.LL.x, cb.UR.y});
      out_.clusters[i].box = {tl.x, tl.y, cb.UR.x - cb.LL.x, cb.UR.y - cb.LL.y};
    }
    return std::move(out_);
  }

 private:
  // Lays out g's nodes inside `sub`, g's inputs bound to `inputs`; returns
  // where each of g's outputs comes from. `outer` is the Fused node that g is
  // the body of (invalid at the top level).
  std::vector<Source> emitGraph(const Graph& g, Agraph_t* sub, const std::vector<Source>& inputs,
                                NodeId outer, int group) {
    std::vector<Source> byValue(g.valueCapacity());
    for (size_t i = 0; i < g.inputs().size() && i < inputs.size(); ++i)
      byValue[g.inputs()[i].index] = inputs[i];
    for (ValueId c : g.constants()) byValue[c.index] = {-1, &g.value(c), c};

    for (NodeId id : orderedNodes(g)) {
      const Node& node = g.node(id);
      std::vector<Source> srcs;
      for (ValueId v : node.inputs) srcs.push_back(v.valid() ? byValue[v.index] : Source{});
      std::vector<Source> outs;
      if (isFusedGroup(node)) {
        outs = emitGroup(node, sub, srcs, outer.valid() ? outer : id);
      } else {
        int me = emitOp(g, node, sub, srcs, outer, group);
        for (ValueId v : node.outputs) outs.push_back({me, nullptr, v});
      }
      for (size_t i = 0; i < node.outputs.size() && i < outs.size(); ++i)
        byValue[node.outputs[i].index] = outs[i];
    }
    std::vector<Source> result;
    for (ValueId v : g.outputs()) result.push_back(byValue[v.index]);
    return result;
  }

  std::vector<Source> emitGroup(const Node& node, Agraph_t* parent, const std::vector<Source>& srcs,
                                NodeId top) {
    int group = static_cast<int>(node.attrs.getInt("group", -1));
    std::string kind = node.attrs.getString("kind", "");
    std::string name =
        "cluster_" + std::to_string(group) + "_" + std::to_string(out_.clusters.size());
    Agraph_t* sub = agsubg(parent, const_cast<char*>(name.c_str()), 1);
    LayoutCluster c;
    c.group = group;
    c.kind = kind;
    c.label = "group " + std::to_string(group) + (kind.empty() ? "" : " (" + kind + ")");
    c.node = node.id;
    // dot reserves room for the label; the view draws its own text there.
    set(sub, "label", c.label);
    set(sub, "fontsize", std::to_string(opts_.lineHeight));  // roomy: the view draws bold
    set(sub, "labeljust", "l");
    set(sub, "margin", "12");
    out_.clusters.push_back(std::move(c));
    agClusters_.push_back(sub);
    return emitGraph(*node.body, sub, srcs, top, group);
  }

  int emitOp(const Graph& g, const Node& node, Agraph_t* sub, const std::vector<Source>& srcs,
             NodeId outer, int group) {
    LayoutNode n;
    n.node = outer.valid() ? outer : node.id;
    n.bodyNode = outer.valid() ? node.id : NodeId();
    n.group = group;
    n.op = node.op;
    n.name = node.name;
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
      if (++constants <= opts_.maxConstantLines)
        n.lines.push_back(s.constant->name + " " + s.constant->type.str());
    }
    if (constants > opts_.maxConstantLines)
      n.lines.push_back("+" + std::to_string(constants - opts_.maxConstantLines) + " constants");
    int me = addNode(sub, std::move(n));
    for (const Source& s : srcs)
      if (s.node >= 0) addEdge(s.node, me, s.value);
    return me;
  }

  int addNode(Agraph_t* sub, LayoutNode n) {
    for (std::string& line : n.lines) line = elide(std::move(line));
    n.op = elide(std::move(n.op));
    size_t chars = n.op.size() + 2;  // the op name is drawn bold
    for (const std::string& line : n.lines) chars = std::max(chars, line.size());
    double w = std::max(56.0, chars * opts_.charWidth + kPadX);
    double h = (1 + n.lines.size()) * opts_.lineHeight + kPadY;
    bool ellipse = n.kind != LayoutNodeKind::Op;
    if (ellipse) w *= 1.2;

    std::string name = "n" + std::to_string(out_.nodes.size());
    Agnode_t* an = agnode(sub, const_cast<char*>(name.c_str()), 1);
    set(an, "shape", ellipse ? "ellipse" : "box");
    set(an, "width", inches(w));
    set(an, "height", inches(h));
    out_.nodes.push_back(std::move(n));
    agNodes_.push_back(an);
    return static_cast<int>(out_.nodes.size()) - 1;
  }

  void addEdge(int from, int to, ValueId v) {
    if (!edgeSeen_.insert({from, to}).second) return;  // Mul(x, x) draws one edge
    Agedge_t* e = agedge(root_, agNodes_[from], agNodes_[to], nullptr, 1);
    LayoutEdge edge;
    edge.from = from;
    edge.to = to;
    edge.value = v;
    edge.hasLabel = addLabel(e, out_.nodes[size_t(from)], out_.nodes[size_t(to)]);
    out_.edges.push_back(std::move(edge));
    agEdges_.push_back(e);
  }

  // dot sizes a label from its own font metrics: a fixed-size font scaled to
  // the view's label font keeps the room it leaves close to what is drawn.
  bool addLabel(Agedge_t* e, const LayoutNode& from, const LayoutNode& to) {
    if (from.kind != LayoutNodeKind::Op || to.kind != LayoutNodeKind::Op) return false;
    auto it = opts_.edgeLabels.find({from.name, to.name});
    if (it == opts_.edgeLabels.end()) return false;
    set(e, "label", it->second);
    set(e, "fontname", "Courier");  // 0.6 em per character
    set(e, "fontsize", std::to_string(opts_.labelCharWidth / 0.6));
    return true;
  }

  template <class Flip>
  static void readSpline(Agedge_t* e, const Flip& flip, LayoutEdge& edge) {
    const splines* spl = ED_spl(e);
    if (!spl) return;
    for (int b = 0; b < spl->size; ++b) {
      const bezier& bz = spl->list[b];
      // Later pieces continue the first; skip their repeated start point.
      for (int i = edge.points.empty() ? 0 : 1; i < bz.size; ++i)
        edge.points.push_back(flip(bz.list[i]));
      if (bz.eflag) {
        edge.hasArrow = true;
        edge.arrowTip = flip(bz.ep);
      }
    }
  }

  Agraph_t* root_;
  const LayoutOptions& opts_;
  GraphLayout out_;
  std::vector<Agnode_t*> agNodes_;
  std::vector<Agedge_t*> agEdges_;
  std::vector<Agraph_t*> agClusters_;
  std::set<std::pair<int, int>> edgeSeen_;
};

}  // namespace

Expected<GraphLayout> layoutGraph(const Graph& g, const LayoutOptions& opts) {
  size_t ops = countOps(g);
  if (ops > opts.maxNodes)
    return Expected<GraphLayout>::error("The graph has " + std::to_string(ops) +
                                        " ops, more than the " + std::to_string(opts.maxNodes) +
                                        " the graph view can lay out.");

  std::lock_guard<std::mutex> lock(graphvizMutex());
  GVC_t* gvc = graphvizContext();
  if (!gvc) return Expected<GraphLayout>::error("Graphviz could not be initialized.");
  Agraph_t* root = agopen(const_cast<char*>("g"), Agdirected, nullptr);
  set(root, "rankdir", "TB");
  set(root, "nodesep", "0.3");
  set(root, "ranksep", "0.4");
  agattr(root, AGNODE, const_cast<char*>("fixedsize"), const_cast<char*>("true"));
  agattr(root, AGNODE, const_cast<char*>("label"), const_cast<char*>(""));

  Builder builder(root, opts);
  builder.build(g);
  if (gvLayout(gvc, root, "dot") != 0) {
    agclose(root);
    return Expected<GraphLayout>::error("Graphviz could not lay out the graph.");
  }
  GraphLayout layout = builder.finish();
  gvFreeLayout(gvc, root);
  agclose(root);
  return layout;
}

}  // namespace fuselens::graphview
