// The fallback layout: ranks by longest path over the edges that point
// forward in the given node order (the others are back edges and ignored for
// ranking), one row per rank ordered by the mean position of each node's
// predecessors, rows centred; a cluster is one block whose members stack in
// order. Straight edges. No crossing reduction beyond that: it is the layout
// that always finishes, quickly, not the one that looks best.
#include <algorithm>
#include <map>
#include <numeric>

#include "session/graphview/box_layout.h"

namespace fuselens::graphview {
namespace {

constexpr double kGapX = 24, kGapY = 36, kClusterPad = 12;

// A thing placed in a row: a node outside clusters, or a whole cluster.
struct Block {
  std::vector<int> nodes;
  int cluster = -1;
  double width = 0, height = 0;
  int rank = 0;
  double order = 0;
  LayoutBox box;
};

}  // namespace

EdgePath straightEdge(const LayoutBox& from, const LayoutBox& to) {
  const LayoutPoint a{from.x + from.width / 2, from.y + from.height};
  const LayoutPoint tip{to.x + to.width / 2, to.y};
  const bool down = tip.y > a.y;
  const LayoutPoint end{tip.x, tip.y + (down ? -7 : 7)};
  const double bend = std::max(20.0, std::abs(end.y - a.y) / 2);
  EdgePath p;
  p.points = {a, {a.x, a.y + bend}, {end.x, end.y - (down ? bend : -bend)}, end};
  p.hasArrow = true;
  p.arrowTip = tip;
  return p;
}

BoxGeometry layeredLayout(const BoxGraph& g) {
  std::vector<Block> blocks;
  std::vector<int> blockOf(g.nodes.size(), -1);
  std::map<int, int> blockOfCluster;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int c = g.nodes[i].cluster;
    auto it = c >= 0 ? blockOfCluster.find(c) : blockOfCluster.end();
    if (it == blockOfCluster.end()) {
      blocks.push_back({});
      blocks.back().cluster = c;
      if (c >= 0) blockOfCluster[c] = int(blocks.size()) - 1;
      it = c >= 0 ? blockOfCluster.find(c) : blockOfCluster.end();
    }
    const int b = c >= 0 ? it->second : int(blocks.size()) - 1;
    blocks[size_t(b)].nodes.push_back(int(i));
    blockOf[i] = b;
  }
  for (Block& b : blocks) {
    for (int n : b.nodes) {
      b.width = std::max(b.width, g.nodes[size_t(n)].width);
      b.height += g.nodes[size_t(n)].height + (b.cluster >= 0 ? kGapY / 2 : 0);
    }
    if (b.cluster >= 0) {
      const BoxGraph::Cluster& c = g.clusters[size_t(b.cluster)];
      b.width = std::max(b.width, c.labelWidth) + 2 * kClusterPad;
      b.height += c.labelHeight + 2 * kClusterPad;
    }
  }
  // Blocks are in node order, so one sweep settles every forward edge.
  std::vector<std::vector<int>> preds(blocks.size());
  for (const BoxGraph::Edge& e : g.edges) {
    const int a = blockOf[size_t(e.from)], b = blockOf[size_t(e.to)];
    if (a < b) preds[size_t(b)].push_back(a);
  }
  int ranks = 0;
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (int p : preds[b]) blocks[b].rank = std::max(blocks[b].rank, blocks[size_t(p)].rank + 1);
    ranks = std::max(ranks, blocks[b].rank + 1);
  }
  std::vector<std::vector<int>> rows(static_cast<size_t>(ranks));
  for (size_t b = 0; b < blocks.size(); ++b) rows[size_t(blocks[b].rank)].push_back(int(b));
  BoxGeometry out;
  double y = 0;
  std::vector<double> rowWidth(rows.size(), 0);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int b : rows[r]) {
      Block& blk = blocks[size_t(b)];
      double sum = 0;
      for (int p : preds[size_t(b)]) sum += blocks[size_t(p)].order;
      blk.order = preds[size_t(b)].empty() ? double(b) : sum / double(preds[size_t(b)].size());
    }
    std::stable_sort(rows[r].begin(), rows[r].end(), [&](int a, int b) {
      return blocks[size_t(a)].order < blocks[size_t(b)].order;
    });
    double x = 0, height = 0;
    for (size_t k = 0; k < rows[r].size(); ++k) {
      Block& blk = blocks[size_t(rows[r][k])];
      blk.order = x + blk.width / 2;
      blk.box = {x, y, blk.width, blk.height};
      x += blk.width + kGapX;
      height = std::max(height, blk.height);
    }
    rowWidth[r] = std::max(0.0, x - kGapX);
    out.width = std::max(out.width, rowWidth[r]);
    y += height + kGapY;
  }
  out.height = std::max(0.0, y - kGapY);
  out.nodes.resize(g.nodes.size());
  out.clusters.resize(g.clusters.size());
  for (Block& blk : blocks) {
    blk.box.x += (out.width - rowWidth[size_t(blk.rank)]) / 2;
    double ny = blk.box.y;
    if (blk.cluster >= 0) {
      out.clusters[size_t(blk.cluster)] = blk.box;
      ny += g.clusters[size_t(blk.cluster)].labelHeight + kClusterPad;
    }
    for (int n : blk.nodes) {
      const BoxGraph::Node& node = g.nodes[size_t(n)];
      out.nodes[size_t(n)] = {blk.box.x + (blk.width - node.width) / 2, ny, node.width,
                              node.height};
      ny += node.height + kGapY / 2;
    }
  }
  for (const BoxGraph::Edge& e : g.edges)
    out.edges.push_back(straightEdge(out.nodes[size_t(e.from)], out.nodes[size_t(e.to)]));
  return out;
}

}  // namespace fuselens::graphview
