// Builds the scope tree: units from the flat graph, scopes from op names,
// chunks where a scope holds too many ops of its own; then the aggregates and
// the expansion helpers.
#include "session/graphview/scope_tree.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "passes/fusion_decision.h"

namespace fuselens::graphview {
namespace {

std::vector<std::string> commonPrefix(const std::vector<std::string>& a,
                                      const std::vector<std::string>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return {a.begin(), a.begin() + long(n)};
}

// The text before the last '/' of what all `names` share: "/a/b/X", "/a/bc/Y"
// -> "/a". Split into scopes it is the common prefix of their scopes, so a
// fused group finds its scope through the same cache as a single op, without
// splitting every member's name. nullopt where the two could differ: a
// leading slash on some names only, or a doubled slash in the shared text or
// where the names part (a doubled slash after it changes nothing).
std::optional<std::string_view> sharedPrefix(const std::vector<LayoutNode>& nodes,
                                             const std::vector<int>& members) {
  const std::string_view first = nodes[size_t(members[0])].name;
  std::string_view common = first;
  for (int m : members) {
    const std::string_view name = nodes[size_t(m)].name;
    if ((name.substr(0, 1) == "/") != (first.substr(0, 1) == "/")) return std::nullopt;
    size_t n = 0;
    while (n < common.size() && n < name.size() && common[n] == name[n]) ++n;
    common = common.substr(0, n);
  }
  if (common.find("//") != std::string_view::npos) return std::nullopt;
  if (!common.empty() && common.back() == '/')
    for (int m : members) {
      const std::string_view name = nodes[size_t(m)].name;
      if (name.size() > common.size() && name[common.size()] == '/') return std::nullopt;
    }
  const size_t slash = common.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : common.substr(0, slash);
}

}  // namespace

std::vector<std::string> scopeOfName(const std::string& opName) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t slash = opName.find('/', start);
    if (slash == std::string::npos) break;  // what follows the last slash is the op itself
    if (slash > start) parts.push_back(opName.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

ScopeTree::ScopeTree(FlatGraph flat, size_t chunkSize) : flat_(std::move(flat)) {
  addScope(ScopeId(), "", "", false);
  unitOfNode_.assign(flat_.nodes.size(), -1);
  std::vector<int> groupOfNode(flat_.nodes.size(), -1);
  for (size_t g = 0; g < flat_.groups.size(); ++g)
    for (int m : flat_.groups[g].members) groupOfNode[size_t(m)] = int(g);

  // Most ops share their scope with their neighbours: the text before the
  // last '/' finds the scope without splitting the name again.
  std::unordered_map<std::string_view, ScopeId> byPrefix;
  units_.reserve(flat_.nodes.size());
  for (size_t i = 0; i < flat_.nodes.size(); ++i) {
    if (unitOfNode_[i] >= 0) continue;
    ScopeUnit u;
    u.group = groupOfNode[i];
    u.nodes = u.group >= 0 ? flat_.groups[size_t(u.group)].members : std::vector<int>{int(i)};
    const std::string& name = flat_.nodes[i].name;
    const size_t slash = name.rfind('/');
    const bool isOp = flat_.nodes[i].kind == LayoutNodeKind::Op;
    std::optional<std::string_view> shared;
    if (isOp && u.group < 0)
      shared =
          slash == std::string::npos ? std::string_view() : std::string_view(name).substr(0, slash);
    else if (isOp)
      shared = sharedPrefix(flat_.nodes, u.nodes);
    const bool plain = shared.has_value();
    const std::string_view prefix = shared.value_or(std::string_view());
    auto cached = plain ? byPrefix.find(prefix) : byPrefix.end();
    if (cached != byPrefix.end()) {
      u.scope = cached->second;
    } else {
      std::vector<std::string> where;
      if (flat_.nodes[i].kind == LayoutNodeKind::Op) {
        where = scopeOfName(flat_.nodes[size_t(u.nodes[0])].name);
        for (int m : u.nodes) where = commonPrefix(where, scopeOfName(flat_.nodes[size_t(m)].name));
      }
      ScopeId s = root();
      std::string path;
      for (const std::string& part : where) {
        path += "/" + part;
        auto it = byPath_.find(path);
        s = it != byPath_.end() ? it->second : addScope(s, part, path, false);
      }
      u.scope = s;
      if (plain) byPrefix.emplace(prefix, s);  // the view points into flat_, which lives on
    }
    const ScopeId s = u.scope;
    const int index = int(units_.size());
    for (int m : u.nodes) unitOfNode_[size_t(m)] = index;
    scopes_[size_t(s.index)].units.push_back(index);
    units_.push_back(std::move(u));
  }
  for (const ScopeUnit& u : units_) {
    Scope& home = scopes_[size_t(u.scope.index)];
    home.firstNode = std::min(home.firstNode, u.nodes.front());
    home.lastNode = std::max(home.lastNode, u.nodes.back());
  }
  firstNodes(root());
  const size_t named = scopes_.size();
  for (size_t s = 0; s < named; ++s) chunk(ScopeId(int32_t(s)), chunkSize);
  nodeByName_.reserve(flat_.nodes.size());
  for (size_t i = 0; i < flat_.nodes.size(); ++i)
    if (flat_.nodes[i].kind == LayoutNodeKind::Op && !flat_.nodes[i].name.empty())
      nodeByName_.emplace(flat_.nodes[i].name, int(i));
  renumber();
}

ScopeId ScopeTree::addScope(ScopeId parent, std::string name, std::string path, bool isChunk) {
  Scope s;
  s.id = ScopeId(int32_t(scopes_.size()));
  s.parent = parent;
  s.name = std::move(name);
  s.path = std::move(path);
  s.chunk = isChunk;
  s.firstNode = int(flat_.nodes.size());
  if (parent.valid()) scopes_[size_t(parent.index)].children.push_back(s.id);
  byPath_[s.path] = s.id;
  scopes_.push_back(std::move(s));
  return scopes_.back().id;
}

// The smallest and largest node index inside each scope, its subtree included.
int ScopeTree::firstNodes(ScopeId s) {
  int first = scope(s).firstNode;
  for (ScopeId c : scope(s).children) {
    first = std::min(first, firstNodes(c));
    scopes_[size_t(s.index)].lastNode = std::max(scope(s).lastNode, scope(c).lastNode);
  }
  scopes_[size_t(s.index)].firstNode = first;
  return first;
}

// Cuts what `s` holds directly (ops and child scopes, in topological order)
// into runs when there is too much of it; into runs of runs when the runs are
// too many. Inputs and outputs stay put. A named scope moved into a chunk
// keeps its path, so the expansion and `--scope` still find it.
void ScopeTree::chunk(ScopeId s, size_t chunkSize) {
  struct Item {
    int first, last;  // FlatGraph nodes
    int unit;
    ScopeId child;
  };
  std::vector<Item> items;
  std::vector<int> ports;
  for (int u : scope(s).units) {
    if (flat_.nodes[size_t(units_[size_t(u)].nodes[0])].kind != LayoutNodeKind::Op)
      ports.push_back(u);
    else
      items.push_back({units_[size_t(u)].nodes.front(), units_[size_t(u)].nodes.back(), u, {}});
  }
  for (ScopeId c : scope(s).children)
    items.push_back({scope(c).firstNode, scope(c).lastNode, -1, c});
  if (items.size() <= chunkSize) return;
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.first < b.first; });
  size_t span = chunkSize;
  while ((items.size() + span - 1) / span > chunkSize) span *= chunkSize;
  scopes_[size_t(s.index)].units = ports;
  scopes_[size_t(s.index)].children.clear();
  for (size_t first = 0, k = 0; first < items.size(); first += span, ++k) {
    const size_t last = std::min(items.size(), first + span);
    int lastNode = -1;
    for (size_t i = first; i < last; ++i) lastNode = std::max(lastNode, items[i].last);
    const ScopeId c = addScope(
        s, chunkName(items[first].child, items[last - 1].child, items[first].first, lastNode),
        scope(s).path + "/#" + std::to_string(k), true);
    Scope& chunkScope = scopes_[size_t(c.index)];
    chunkScope.firstNode = items[first].first;
    chunkScope.lastNode = lastNode;
    for (size_t i = first; i < last; ++i) {
      if (items[i].unit >= 0) {
        units_[size_t(items[i].unit)].scope = c;
        scopes_[size_t(c.index)].units.push_back(items[i].unit);
      } else {
        scopes_[size_t(items[i].child.index)].parent = c;
        scopes_[size_t(c.index)].children.push_back(items[i].child);
      }
    }
    chunk(c, chunkSize);
  }
}

// "layer.0 .. layer.39" when the run starts and ends with named scopes, else
// its first and last ops: "Relu_0 .. Mul_319" (the names' last parts).
std::string ScopeTree::chunkName(ScopeId first, ScopeId last, int firstNode, int lastNode) const {
  if (first.valid() && last.valid() && !scope(first).chunk && !scope(last).chunk)
    return scope(first).name + " .. " + scope(last).name;
  auto shortName = [&](int n) {
    const LayoutNode& node = flat_.nodes[size_t(n)];
    const std::string& name = node.name.empty() ? node.op : node.name;
    return name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
  };
  return shortName(firstNode) + " .. " + shortName(lastNode);
}

// Numbers scopes in preorder (children by their first op), so a parent always
// comes before its children, and sets depths.
void ScopeTree::renumber() {
  std::vector<Scope> old = std::move(scopes_);
  scopes_.clear();
  std::vector<ScopeId> newId(old.size());
  std::function<void(ScopeId, ScopeId, int)> visit = [&](ScopeId o, ScopeId parent, int depth) {
    Scope s = std::move(old[size_t(o.index)]);  // visited once; its children are not yet
    std::stable_sort(s.children.begin(), s.children.end(), [&](ScopeId a, ScopeId b) {
      return old[size_t(a.index)].firstNode < old[size_t(b.index)].firstNode;
    });
    const std::vector<ScopeId> children = s.children;
    s.id = ScopeId(int32_t(scopes_.size()));
    s.parent = parent;
    s.depth = depth;
    s.children.clear();
    newId[size_t(o.index)] = s.id;
    scopes_.push_back(std::move(s));
    const ScopeId me = scopes_.back().id;
    for (ScopeId c : children) {
      scopes_[size_t(me.index)].children.push_back(ScopeId(int32_t(scopes_.size())));
      visit(c, me, depth + 1);
    }
  };
  visit(ScopeId(0), ScopeId(), 0);
  for (ScopeUnit& u : units_) u.scope = newId[size_t(u.scope.index)];
  byPath_.clear();
  for (const Scope& s : scopes_) byPath_[s.path] = s.id;
}

std::optional<ScopeId> ScopeTree::find(const std::string& path) const {
  auto it = byPath_.find(path);
  if (it == byPath_.end()) return std::nullopt;
  return it->second;
}

int ScopeTree::nodeNamed(const std::string& name) const {
  auto it = nodeByName_.find(name);
  return it == nodeByName_.end() ? -1 : it->second;
}

bool ScopeTree::contains(ScopeId a, ScopeId b) const {
  while (b.valid() && scope(b).depth > scope(a).depth) b = scope(b).parent;
  return b == a;
}

ScopeId ScopeTree::commonAncestor(ScopeId a, ScopeId b) const {
  while (scope(a).depth > scope(b).depth) a = scope(a).parent;
  while (scope(b).depth > scope(a).depth) b = scope(b).parent;
  while (a != b) {
    a = scope(a).parent;
    b = scope(b).parent;
  }
  return a;
}

ScopeId ScopeTree::childToward(ScopeId ancestor, ScopeId s) const {
  while (s.valid() && scope(s).parent != ancestor) s = scope(s).parent;
  return s;
}

std::vector<ScopeId> ScopeTree::chain(ScopeId s) const {
  std::vector<ScopeId> out;
  for (; s.valid(); s = scope(s).parent) out.push_back(s);
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<ScopeStats> scopeStats(const ScopeTree& tree,
                                   const std::vector<FusionDecision>& decisions,
                                   const std::map<std::string, double>& heat,
                                   const std::map<std::string, double>& seconds) {
  std::vector<ScopeStats> stats(tree.scopes().size());
  for (const ScopeUnit& u : tree.units()) {
    ScopeStats& s = stats[size_t(u.scope.index)];
    if (u.group >= 0) ++s.groups;
    for (int n : u.nodes) {
      const LayoutNode& node = tree.flat().nodes[size_t(n)];
      if (node.kind != LayoutNodeKind::Op) continue;
      ++s.ops;
      for (const std::string& v : node.outputs) {
        auto it = heat.find(v);
        if (it != heat.end()) s.worstHeat = std::max(s.worstHeat, it->second);
        if (auto t = seconds.find(v); t != seconds.end())
          s.seconds = std::max(s.seconds, 0.0) + t->second;
      }
    }
  }
  for (const FusionDecision& d : decisions) {
    if (d.accepted) continue;
    const int n = tree.nodeNamed(d.consumerName);
    if (n >= 0) ++stats[size_t(tree.scopeOfNode(n).index)].rejected;
  }
  for (size_t i = tree.scopes().size(); i-- > 1;) {
    ScopeStats& p = stats[size_t(tree.scopes()[i].parent.index)];
    p.ops += stats[i].ops;
    p.groups += stats[i].groups;
    p.rejected += stats[i].rejected;
    p.worstHeat = std::max(p.worstHeat, stats[i].worstHeat);
    if (stats[i].seconds >= 0) p.seconds = std::max(p.seconds, 0.0) + stats[i].seconds;
  }
  return stats;
}

namespace {

// Boxes an open scope draws itself: its units' nodes and its children.
size_t ownBoxes(const ScopeTree& tree, const Scope& s) {
  size_t n = s.children.size();
  for (int u : s.units) n += tree.units()[size_t(u)].nodes.size();
  return n;
}

}  // namespace

size_t visibleBoxes(const ScopeTree& tree, const Expansion& e) {
  std::vector<char> shownOpen(tree.scopes().size(), 0);
  size_t boxes = 0;
  for (const Scope& s : tree.scopes()) {
    const bool parentOpen = !s.parent.valid() || shownOpen[size_t(s.parent.index)];
    if (!parentOpen || !e.isOpen(s)) continue;
    shownOpen[size_t(s.id.index)] = 1;
    boxes += ownBoxes(tree, s);
    if (s.parent.valid()) --boxes;  // its own collapsed box is gone
  }
  return boxes;
}

Expansion initialExpansion(const ScopeTree& tree, size_t budget) {
  Expansion e;
  size_t boxes = ownBoxes(tree, tree.scope(tree.root()));
  std::deque<ScopeId> queue(tree.scope(tree.root()).children.begin(),
                            tree.scope(tree.root()).children.end());
  while (!queue.empty()) {
    const Scope& s = tree.scope(queue.front());
    queue.pop_front();
    const size_t grown = boxes + ownBoxes(tree, s) - 1;
    if (grown > budget) continue;
    boxes = grown;
    e.open.insert(s.path);
    queue.insert(queue.end(), s.children.begin(), s.children.end());
  }
  return e;
}

void reveal(const ScopeTree& tree, ScopeId s, Expansion& e, bool self) {
  for (ScopeId a : tree.chain(s))
    if (a != tree.root() && (a != s || self)) e.open.insert(tree.scope(a).path);
}

Expansion expandToDepth(const ScopeTree& tree, int depth) {
  Expansion e;
  for (const Scope& s : tree.scopes())
    if (s.depth >= 1 && s.depth <= depth) e.open.insert(s.path);
  return e;
}

}  // namespace fuselens::graphview
