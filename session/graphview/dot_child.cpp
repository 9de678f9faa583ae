// The Graphviz side of runDot: what runs in the dot helper process (or in a
// forked child where the helper is missing), and the encoding of a BoxGraph
// and of dot's answer as doubles through a pipe.
#include "session/graphview/dot_child.h"

#include <graphviz/gvc.h>

#include <cmath>
#include <string>

namespace fuselens::graphview {
namespace {

constexpr double kPointsPerInch = 72.0;

void set(void* obj, const char* name, const std::string& value) {
  agsafeset(obj, const_cast<char*>(name), const_cast<char*>(value.c_str()), const_cast<char*>(""));
}

std::string inches(double points) { return std::to_string(points / kPointsPerInch); }

// dot sizes labels from font metrics: Courier is 0.6 em per character, so a
// run of characters in it reserves the width and height asked for.
void reserveLabel(void* obj, double width, double height) {
  const double fontSize = std::max(4.0, height / 1.2);
  const int chars = std::max(1, int(std::ceil(width / (0.6 * fontSize))));
  set(obj, "label", std::string(size_t(chars), 'M'));
  set(obj, "fontname", "Courier");
  set(obj, "fontsize", std::to_string(fontSize));
}

void put(std::vector<double>& out, LayoutPoint p) {
  out.push_back(p.x);
  out.push_back(p.y);
}

}  // namespace

// One context per process: loading Graphviz's plugins is the slow part of starting.
GVC_t* graphvizContext() {
  static GVC_t* gvc = gvContext();
  return gvc;
}

namespace {}  // namespace

std::vector<double> layOutWithDot(const BoxGraph& g) {
  GVC_t* gvc = graphvizContext();
  if (!gvc) return {};
  Agraph_t* root = agopen(const_cast<char*>("g"), Agdirected, nullptr);
  set(root, "rankdir", "TB");
  set(root, "nodesep", "0.3");
  set(root, "ranksep", "0.4");
  agattr(root, AGNODE, const_cast<char*>("fixedsize"), const_cast<char*>("true"));
  agattr(root, AGNODE, const_cast<char*>("label"), const_cast<char*>(""));
  std::vector<Agraph_t*> clusters;
  for (size_t i = 0; i < g.clusters.size(); ++i) {
    const std::string name = "cluster_" + std::to_string(i);
    Agraph_t* sub = agsubg(root, const_cast<char*>(name.c_str()), 1);
    reserveLabel(sub, g.clusters[i].labelWidth, g.clusters[i].labelHeight);
    set(sub, "labeljust", "l");
    set(sub, "margin", "12");
    clusters.push_back(sub);
  }
  std::vector<Agnode_t*> nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const BoxGraph::Node& n = g.nodes[i];
    const std::string name = "n" + std::to_string(i);
    Agraph_t* owner = n.cluster >= 0 ? clusters[size_t(n.cluster)] : root;
    Agnode_t* an = agnode(owner, const_cast<char*>(name.c_str()), 1);
    set(an, "shape", n.ellipse ? "ellipse" : "box");
    set(an, "width", inches(n.width));
    set(an, "height", inches(n.height));
    nodes.push_back(an);
  }
  std::vector<Agedge_t*> edges;
  for (const BoxGraph::Edge& e : g.edges) {
    Agedge_t* ae = agedge(root, nodes[size_t(e.from)], nodes[size_t(e.to)], nullptr, 1);
    if (e.labelWidth > 0) reserveLabel(ae, e.labelWidth, e.labelHeight);
    edges.push_back(ae);
  }
  if (gvLayout(gvc, root, "dot") != 0) {
    agclose(root);
    return {};
  }

  std::vector<double> out;
  const boxf bb = GD_bb(root);
  auto flip = [&](pointf p) { return LayoutPoint{p.x - bb.LL.x, bb.UR.y - p.y}; };
  out.push_back(bb.UR.x - bb.LL.x);
  out.push_back(bb.UR.y - bb.LL.y);
  for (Agnode_t* an : nodes) {
    const LayoutPoint c = flip(ND_coord(an));
    const double w = ND_width(an) * kPointsPerInch, h = ND_height(an) * kPointsPerInch;
    out.insert(out.end(), {c.x - w / 2, c.y - h / 2, w, h});
  }
  for (Agraph_t* sub : clusters) {
    const boxf cb = GD_bb(sub);
    const LayoutPoint tl = flip(pointf{cb.LL.x, cb.UR.y});
    out.insert(out.end(), {tl.x, tl.y, cb.UR.x - cb.LL.x, cb.UR.y - cb.LL.y});
  }
  for (Agedge_t* ae : edges) {
    std::vector<double> pts;
    double arrow = 0;
    LayoutPoint tip;
    if (const splines* spl = ED_spl(ae)) {
      for (int b = 0; b < spl->size; ++b) {
        const bezier& bz = spl->list[b];
        for (int i = pts.empty() ? 0 : 1; i < bz.size; ++i) put(pts, flip(bz.list[i]));
        if (bz.eflag) {
          arrow = 1;
          tip = flip(bz.ep);
        }
      }
    }
    out.push_back(double(pts.size() / 2));
    out.insert(out.end(), pts.begin(), pts.end());
    out.insert(out.end(), {arrow, tip.x, tip.y});
    const textlabel_t* label = ED_label(ae);
    const bool hasLabel = label && label->set;
    out.push_back(hasLabel ? 1 : 0);
    put(out, hasLabel ? flip(label->pos) : LayoutPoint{});
  }
  gvFreeLayout(gvc, root);  // the helper serves many requests: free each
  agclose(root);
  return out;
}

std::vector<double> encodeBoxGraph(const BoxGraph& g) {
  std::vector<double> out = {double(g.nodes.size()), double(g.clusters.size()),
                             double(g.edges.size())};
  for (const BoxGraph::Node& n : g.nodes)
    out.insert(out.end(), {n.width, n.height, n.ellipse ? 1.0 : 0.0, double(n.cluster)});
  for (const BoxGraph::Cluster& c : g.clusters)
    out.insert(out.end(), {c.labelWidth, c.labelHeight});
  for (const BoxGraph::Edge& e : g.edges)
    out.insert(out.end(), {double(e.from), double(e.to), e.labelWidth, e.labelHeight});
  return out;
}

bool decodeBoxGraph(const std::vector<double>& in, BoxGraph& g) {
  if (in.size() < 3) return false;
  const double nodes = in[0], clusters = in[1], edges = in[2];
  if (!(nodes >= 0 && clusters >= 0 && edges >= 0 && nodes < 1e7 && clusters < 1e7 && edges < 1e7))
    return false;
  if (in.size() != 3 + size_t(nodes) * 4 + size_t(clusters) * 2 + size_t(edges) * 4) return false;
  size_t i = 3;
  auto index = [](double v, double n) { return v >= -1 && v < n ? int(v) : -2; };
  for (size_t k = 0; k < size_t(nodes); ++k, i += 4)
    g.nodes.push_back({in[i], in[i + 1], in[i + 2] > 0, index(in[i + 3], clusters)});
  for (size_t k = 0; k < size_t(clusters); ++k, i += 2) g.clusters.push_back({in[i], in[i + 1]});
  for (size_t k = 0; k < size_t(edges); ++k, i += 4)
    g.edges.push_back({index(in[i], nodes), index(in[i + 1], nodes), in[i + 2], in[i + 3]});
  for (const BoxGraph::Node& n : g.nodes)
    if (n.cluster < -1) return false;
  for (const BoxGraph::Edge& e : g.edges)
    if (e.from < 0 || e.to < 0) return false;
  return true;
}

}  // namespace fuselens::graphview
