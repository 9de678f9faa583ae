// layoutScoped: local layouts bottom up (each open scope's children as one
// small BoxGraph, cached), then one walk down placing every local layout inside
// its frame, then the edges: dot's route where both ends are drawn in the
// scope that routed it, a straight edge between the showing boxes otherwise.
#include "session/graphview/scoped_layout.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <set>
#include <thread>
#include <utility>

#include "session/graphview/kernel_times.h"

namespace fuselens::graphview {

namespace {

// One open scope's layout in its own coordinates.
struct Local {
  struct Item {
    int node = -1;  // a FlatGraph node drawn here, or
    ScopeId scope;  // a child scope (collapsed or open)
    LayoutBox box;
  };
  std::vector<Item> items;
  std::vector<int> groups;  // FlatGraph groups drawn here
  std::vector<LayoutBox> groupBoxes;
  std::map<std::pair<int, int>, EdgePath> edges;  // by item pair
  double width = 0, height = 0;
  std::string note;
};

// The cache key: everything about a BoxGraph that dot's answer depends on.
std::string keyOf(const BoxGraph& g) {
  std::string key;
  key.reserve(g.nodes.size() * 16 + g.edges.size() * 12);
  auto add = [&](double v) { key += std::to_string(std::lround(v * 4)) + ","; };
  for (const BoxGraph::Node& n : g.nodes) {
    add(n.width);
    add(n.height);
    add(n.ellipse);
    add(n.cluster);
  }
  key += "|";
  for (const BoxGraph::Cluster& c : g.clusters) {
    add(c.labelWidth);
    add(c.labelHeight);
  }
  key += "|";
  for (const BoxGraph::Edge& e : g.edges) {
    add(e.from);
    add(e.to);
    add(e.labelWidth);
    add(e.labelHeight);
  }
  return key;
}

}  // namespace

std::shared_ptr<const BoxGeometry> LayoutCache::get(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second;
}

void LayoutCache::put(const std::string& key, std::shared_ptr<const BoxGeometry> geometry) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_[key] = std::move(geometry);
}

void LayoutCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
}

size_t LayoutCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

namespace {

constexpr size_t kMaxTitleChars = 32;

std::string elide(const std::string& s) {
  return s.size() <= kMaxTitleChars ? s : s.substr(0, kMaxTitleChars - 3) + "...";
}

std::string fmtHeat(double h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "heat %.2f", h);
  return buf;
}

LayoutBox collapsedSize(const SceneScope& s, const LayoutOptions& text) {
  size_t chars = 8;
  const std::vector<std::string> lines = collapsedLines(s);
  for (const std::string& l : lines) chars = std::max(chars, l.size() + 2);
  return {0, 0, double(chars) * text.charWidth + 24, double(lines.size()) * text.lineHeight + 14};
}

class Composer {
 public:
  Composer(const ScopeTree& tree, const Expansion& e, const std::vector<ScopeStats>& stats,
           const ScopedLayoutOptions& opts, LayoutCache& cache)
      : tree_(tree), e_(e), stats_(stats), opts_(opts), cache_(cache) {}

  Expected<SceneLayout> run() {
    const size_t scopes = tree_.scopes().size();
    focus_ = opts_.focus.valid() ? opts_.focus : tree_.root();
    shownOpen_.assign(scopes, 0);
    for (const Scope& s : tree_.scopes()) {
      char& open = shownOpen_[size_t(s.id.index)];
      if (s.id == focus_)
        open = 1;
      else if (s.parent.valid() && tree_.contains(focus_, s.id))
        open = e_.isOpen(s) && shownOpen_[size_t(s.parent.index)];
    }
    edgesIn_.assign(scopes, {});
    const FlatGraph& flat = tree_.flat();
    for (size_t i = 0; i < flat.edges.size(); ++i) {
      const ScopeId l = tree_.commonAncestor(tree_.scopeOfNode(flat.edges[i].from),
                                             tree_.scopeOfNode(flat.edges[i].to));
      edgesIn_[size_t(l.index)].push_back(int(i));
    }
    locals_.assign(scopes, nullptr);
    Status st = layOutAll();
    if (!st.isOk()) return st;
    place(focus_, 0, 0);
    const Local& root = *locals_[size_t(focus_.index)];
    out_.width = root.width;
    out_.height = root.height;
    finishEnds();
    addEdges();
    return std::move(out_);
  }

 private:
  SceneScope sceneScope(ScopeId id, bool collapsed) const {
    const Scope& s = tree_.scope(id);
    SceneScope out;
    out.scope = id;
    out.collapsed = collapsed;
    out.name = s.name;
    out.path = s.path;
    out.chunk = s.chunk;
    if (size_t(id.index) < stats_.size()) out.stats = stats_[size_t(id.index)];
    return out;
  }

  // The item in scope `s` that holds FlatGraph node n (n must be inside s).
  int itemFor(ScopeId s, int n, const std::map<int, int>& ofNode,
              const std::map<int, int>& ofChild) const {
    const ScopeId home = tree_.scopeOfNode(n);
    if (home == s) return ofNode.at(n);
    return ofChild.at(tree_.childToward(s, home).index);
  }

  // Every open scope's own layout, the deepest first: a scope needs the sizes
  // of its open children. Scopes of one depth are independent and run on a
  // few threads, so their dot children use every core.
  Status layOutAll() {
    std::vector<std::vector<ScopeId>> byDepth;
    const int top = tree_.scope(focus_).depth;
    for (const Scope& s : tree_.scopes()) {
      if (!shownOpen_[size_t(s.id.index)]) continue;
      const size_t d = size_t(s.depth - top);
      if (byDepth.size() <= d) byDepth.resize(d + 1);
      byDepth[d].push_back(s.id);
    }
    const size_t threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
    for (size_t d = byDepth.size(); d-- > 0;) {
      const std::vector<ScopeId>& level = byDepth[d];
      std::vector<Status> status(level.size());
      std::atomic<size_t> next{0};
      auto work = [&] {
        for (size_t i = next++; i < level.size(); i = next++) status[i] = ensureLocal(level[i]);
      };
      std::vector<std::thread> pool;
      for (size_t t = 1; t < std::min(threads, level.size()); ++t) pool.emplace_back(work);
      work();
      for (std::thread& t : pool) t.join();
      for (const Status& st : status)
        if (!st.isOk()) return st;
    }
    out_.dotRuns = dotRuns_;
    out_.cacheHits = cacheHits_;
    return Status::ok();
  }

  // One open scope's layout; its open children are laid out already.
  Status ensureLocal(ScopeId id) {
    const Scope& s = tree_.scope(id);
    std::vector<LayoutBox> childSize;
    for (ScopeId c : s.children) {
      LayoutBox size;
      if (shownOpen_[size_t(c.index)]) {
        const Local& l = *locals_[size_t(c.index)];
        size = {0, 0, std::max(l.width, 120.0) + 2 * opts_.framePad,
                l.height + opts_.frameHeader + opts_.framePad};
      } else {
        size = collapsedSize(sceneScope(c, true), opts_.text);
      }
      childSize.push_back(size);
    }
    Expected<std::shared_ptr<const Local>> local = layOut(id, childSize);
    if (!local.isOk()) return local.status();
    locals_[size_t(id.index)] = *local;
    return Status::ok();
  }

  Expected<std::shared_ptr<const Local>> layOut(ScopeId id, const std::vector<LayoutBox>& sizes) {
    const Scope& s = tree_.scope(id);
    const FlatGraph& flat = tree_.flat();
    struct Entry {
      int first;
      int unit = -1;
      size_t child = 0;
    };
    std::vector<Entry> entries;
    for (int u : s.units) entries.push_back({tree_.units()[size_t(u)].nodes[0], u});
    for (size_t c = 0; c < s.children.size(); ++c)
      entries.push_back({tree_.scope(s.children[c]).firstNode, -1, c});
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Entry& a, const Entry& b) { return a.first < b.first; });

    auto local = std::make_shared<Local>();
    BoxGraph g;
    std::map<int, int> ofNode, ofChild;
    auto addNode = [&](int n, int cluster) {
      const LayoutBox size = nodeSize(flat.nodes[size_t(n)], opts_.text);
      ofNode[n] = int(local->items.size());
      local->items.push_back({n, ScopeId(), {}});
      g.nodes.push_back(
          {size.width, size.height, flat.nodes[size_t(n)].kind != LayoutNodeKind::Op, cluster});
    };
    for (const Entry& en : entries) {
      if (en.unit < 0) {
        const ScopeId c = s.children[en.child];
        ofChild[c.index] = int(local->items.size());
        local->items.push_back({-1, c, {}});
        g.nodes.push_back({sizes[en.child].width, sizes[en.child].height, false, -1});
        continue;
      }
      const ScopeUnit& u = tree_.units()[size_t(en.unit)];
      if (u.group < 0) {
        addNode(u.nodes[0], -1);
        continue;
      }
      const std::string& label = flat.groups[size_t(u.group)].cluster.label;
      local->groups.push_back(u.group);
      g.clusters.push_back(
          {double(label.size() + 2) * opts_.text.charWidth, opts_.text.lineHeight});
      for (int m : u.nodes) addNode(m, int(g.clusters.size()) - 1);
    }
    std::vector<std::pair<int, int>> pairs;
    std::set<std::pair<int, int>> seen;
    for (int ei : edgesIn_[size_t(id.index)]) {
      const FlatEdge& fe = flat.edges[size_t(ei)];
      const int a = itemFor(id, fe.from, ofNode, ofChild), b = itemFor(id, fe.to, ofNode, ofChild);
      if (a == b || !seen.insert({a, b}).second) continue;
      BoxGraph::Edge edge{a, b, 0, 0};
      const Local::Item &ia = local->items[size_t(a)], &ib = local->items[size_t(b)];
      if (ia.node >= 0 && ib.node >= 0) {
        auto it = opts_.text.edgeLabels.find(
            {flat.nodes[size_t(ia.node)].name, flat.nodes[size_t(ib.node)].name});
        if (it != opts_.text.edgeLabels.end()) {
          edge.labelWidth = double(it->second.size()) * opts_.text.labelCharWidth;
          edge.labelHeight = opts_.text.lineHeight * 0.9;
        }
      }
      g.edges.push_back(edge);
      pairs.push_back({a, b});
    }
    const std::string key = keyOf(g);
    std::shared_ptr<const BoxGeometry> geo = cache_.get(key);
    if (geo) {
      ++cacheHits_;
    } else {
      Expected<BoxGeometry> fresh = layoutBoxes(g, opts_.engine);
      if (!fresh.isOk()) return fresh.status();
      ++dotRuns_;
      geo = std::make_shared<const BoxGeometry>(std::move(*fresh));
      cache_.put(key, geo);
    }
    for (size_t i = 0; i < local->items.size(); ++i) local->items[i].box = geo->nodes[i];
    local->groupBoxes = geo->clusters;
    for (size_t i = 0; i < pairs.size(); ++i) local->edges[pairs[i]] = geo->edges[i];
    local->width = geo->width;
    local->height = geo->height;
    local->note = geo->note;
    return std::shared_ptr<const Local>(local);
  }

  static LayoutBox shifted(LayoutBox b, double dx, double dy) {
    b.x += dx;
    b.y += dy;
    return b;
  }

  void place(ScopeId id, double dx, double dy) {
    const Local& local = *locals_[size_t(id.index)];
    const FlatGraph& flat = tree_.flat();
    origin_[id.index] = {dx, dy};
    std::vector<SceneEnd>& ends = itemEnds_[id.index];
    if (!local.note.empty())
      out_.notes.push_back((id == tree_.root() ? std::string("(top)") : tree_.scope(id).path) +
                           ": " + local.note);
    for (size_t g = 0; g < local.groups.size(); ++g) {
      LayoutCluster c = flat.groups[size_t(local.groups[g])].cluster;
      c.box = shifted(local.groupBoxes[g], dx, dy);
      out_.clusters.push_back(std::move(c));
    }
    for (const Local::Item& item : local.items) {
      const LayoutBox box = shifted(item.box, dx, dy);
      if (item.node >= 0) {
        LayoutNode n = flat.nodes[size_t(item.node)];
        n.box = box;
        ends.push_back({int(out_.nodes.size()), -1});
        out_.nodes.push_back(std::move(n));
        out_.flatIndex.push_back(item.node);
        continue;
      }
      const bool open = shownOpen_[size_t(item.scope.index)];
      SceneScope s = sceneScope(item.scope, !open);
      s.box = box;
      if (open) s.note = locals_[size_t(item.scope.index)]->note;
      sceneOfScope_[item.scope.index] = int(out_.scopes.size());
      ends.push_back({-1, int(out_.scopes.size())});
      out_.scopes.push_back(std::move(s));
      if (open) {
        place(item.scope, box.x + opts_.framePad, box.y + opts_.frameHeader);
      } else {
        ++out_.collapsed;
      }
    }
  }

  void finishEnds() {
    const FlatGraph& flat = tree_.flat();
    out_.nodeOfFlat.assign(flat.nodes.size(), -1);
    for (size_t i = 0; i < out_.flatIndex.size(); ++i)
      out_.nodeOfFlat[size_t(out_.flatIndex[i])] = int(i);
    // The outermost collapsed scope above each hidden scope shows its ops.
    std::vector<int> shownBy(tree_.scopes().size(), -1);
    for (const Scope& s : tree_.scopes()) {
      if (!s.parent.valid() || shownOpen_[size_t(s.id.index)]) continue;
      auto it = sceneOfScope_.find(s.id.index);
      shownBy[size_t(s.id.index)] = shownOpen_[size_t(s.parent.index)] && it != sceneOfScope_.end()
                                        ? it->second
                                        : shownBy[size_t(s.parent.index)];
    }
    out_.endOfFlat.resize(flat.nodes.size());
    for (size_t n = 0; n < flat.nodes.size(); ++n)
      out_.endOfFlat[n] = out_.nodeOfFlat[n] >= 0
                              ? SceneEnd{out_.nodeOfFlat[n], -1}
                              : SceneEnd{-1, shownBy[size_t(tree_.scopeOfNode(int(n)).index)]};
  }

  LayoutBox boxOf(const SceneEnd& e) const {
    return e.node >= 0 ? out_.nodes[size_t(e.node)].box : out_.scopes[size_t(e.scope)].box;
  }

  void addEdges() {
    const FlatGraph& flat = tree_.flat();
    std::set<std::pair<SceneEnd, SceneEnd>> seen;
    for (const FlatEdge& fe : flat.edges) {
      const SceneEnd a = out_.endOfFlat[size_t(fe.from)], b = out_.endOfFlat[size_t(fe.to)];
      if (a == b || (a.node < 0 && a.scope < 0) || (b.node < 0 && b.scope < 0)) continue;
      if (!seen.insert({a, b}).second) continue;
      SceneEdge edge{a, b, {}, fe.value, {}, {}, false};
      if (a.node >= 0 && b.node >= 0) {
        edge.fromName = out_.nodes[size_t(a.node)].name;
        edge.toName = out_.nodes[size_t(b.node)].name;
      }
      edge.routed = routed(fe, a, b, edge.path);
      if (!edge.routed) edge.path = straightEdge(boxOf(a), boxOf(b));
      out_.edges.push_back(std::move(edge));
    }
  }

  // dot's route for the edge, when the scope that routed it draws both ends as they are.
  bool routed(const FlatEdge& fe, const SceneEnd& a, const SceneEnd& b, EdgePath& path) const {
    const ScopeId l = tree_.commonAncestor(tree_.scopeOfNode(fe.from), tree_.scopeOfNode(fe.to));
    if (!shownOpen_[size_t(l.index)]) return false;
    const Local& local = *locals_[size_t(l.index)];
    auto itemOf = [&](int n) {
      const ScopeId home = tree_.scopeOfNode(n);
      for (size_t i = 0; i < local.items.size(); ++i) {
        const Local::Item& it = local.items[i];
        if (home == l ? it.node == n : it.scope == tree_.childToward(l, home)) return int(i);
      }
      return -1;
    };
    const int ia = itemOf(fe.from), ib = itemOf(fe.to);
    if (ia < 0 || ib < 0) return false;
    const std::vector<SceneEnd>& ends = itemEnds_.at(l.index);
    if (!(ends[size_t(ia)] == a) || !(ends[size_t(ib)] == b)) return false;
    auto it = local.edges.find({ia, ib});
    if (it == local.edges.end() || it->second.points.empty()) return false;
    const auto [dx, dy] = origin_.at(l.index);
    path = it->second;
    for (LayoutPoint& p : path.points) p = {p.x + dx, p.y + dy};
    path.arrowTip = {path.arrowTip.x + dx, path.arrowTip.y + dy};
    path.labelCenter = {path.labelCenter.x + dx, path.labelCenter.y + dy};
    return true;
  }

  const ScopeTree& tree_;
  const Expansion& e_;
  const std::vector<ScopeStats>& stats_;
  const ScopedLayoutOptions& opts_;
  LayoutCache& cache_;
  ScopeId focus_;
  std::atomic<size_t> dotRuns_{0}, cacheHits_{0};
  std::vector<char> shownOpen_;
  std::vector<std::vector<int>> edgesIn_;  // flat edges by the scope that holds both ends
  std::vector<std::shared_ptr<const Local>> locals_;
  std::map<int, std::pair<double, double>> origin_;
  std::map<int, std::vector<SceneEnd>> itemEnds_;
  std::map<int, int> sceneOfScope_;
  SceneLayout out_;
};

}  // namespace

std::vector<std::string> collapsedLines(const SceneScope& s) {
  std::vector<std::string> lines = {elide(s.name)};
  std::string counts = std::to_string(s.stats.ops) + (s.stats.ops == 1 ? " op" : " ops");
  if (s.stats.groups > 0)
    counts += ", " + std::to_string(s.stats.groups) + (s.stats.groups == 1 ? " group" : " groups");
  lines.push_back(counts);
  std::string badges;
  if (s.stats.rejected > 0) badges = std::to_string(s.stats.rejected) + " rejected";
  if (s.stats.worstHeat >= 0) badges += (badges.empty() ? "" : ", ") + fmtHeat(s.stats.worstHeat);
  if (s.stats.seconds >= 0) badges += (badges.empty() ? "" : ", ") + formatSeconds(s.stats.seconds);
  if (!badges.empty()) lines.push_back(badges);
  if (s.stats.diffed && !s.stats.unchanged())
    lines.push_back("+" + std::to_string(s.stats.added) + " ~" + std::to_string(s.stats.changed) +
                    " -" + std::to_string(s.stats.removed));
  return lines;
}

std::string frameTitle(const SceneScope& s) {
  std::string title = s.path.empty() ? "(top)" : (s.chunk ? s.name : s.path);
  title += "   " + std::to_string(s.stats.ops) + " ops";
  if (s.stats.groups > 0) title += ", " + std::to_string(s.stats.groups) + " groups";
  if (s.stats.diffed && !s.stats.unchanged())
    title += "   +" + std::to_string(s.stats.added) + " ~" + std::to_string(s.stats.changed) +
             " -" + std::to_string(s.stats.removed);
  if (!s.note.empty()) title += "   [" + s.note + "]";
  return title;
}

Expected<SceneLayout> layoutScoped(const ScopeTree& tree, const Expansion& e,
                                   const std::vector<ScopeStats>& stats,
                                   const ScopedLayoutOptions& opts, LayoutCache& cache) {
  return Composer(tree, e, stats, opts, cache).run();
}

}  // namespace fuselens::graphview
