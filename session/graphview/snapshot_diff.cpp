// diffSnapshots: op names of the earlier snapshot in a hash map, one pass over
// the later one, removed ops placed by their name's scope path.
#include "session/graphview/snapshot_diff.h"

#include <unordered_map>

namespace fuselens::graphview {
namespace {

bool sameOp(const LayoutNode& a, const LayoutNode& b) {
  return a.op == b.op && (a.group >= 0) == (b.group >= 0) && a.lines == b.lines;
}

// The deepest scope of `tree` on the way down `name`'s scope path.
ScopeId deepestScopeOf(const ScopeTree& tree, const std::string& name) {
  ScopeId s = tree.root();
  std::string path;
  for (const std::string& part : scopeOfName(name)) {
    path += "/" + part;
    const auto found = tree.find(path);
    if (!found) break;
    s = *found;
  }
  return s;
}

}  // namespace

SnapshotDiff diffSnapshots(const FlatGraph& before, const ScopeTree& after) {
  std::unordered_map<std::string, const LayoutNode*> old;
  for (const LayoutNode& n : before.nodes)
    if (n.kind == LayoutNodeKind::Op && !n.name.empty()) old.emplace(n.name, &n);
  const FlatGraph& flat = after.flat();
  const size_t scopes = after.scopes().size();
  SnapshotDiff d;
  d.nodes.assign(flat.nodes.size(), DiffMark::Same);
  d.added.assign(scopes, 0);
  d.changed.assign(scopes, 0);
  d.removed.assign(scopes, 0);
  std::unordered_map<std::string, bool> seen;
  for (size_t i = 0; i < flat.nodes.size(); ++i) {
    const LayoutNode& n = flat.nodes[i];
    if (n.kind != LayoutNodeKind::Op) continue;
    const size_t s = size_t(after.scopeOfNode(int(i)).index);
    auto it = old.find(n.name);
    if (it == old.end()) {
      d.nodes[i] = DiffMark::Added;
      ++d.added[s];
      continue;
    }
    seen[n.name] = true;
    if (!sameOp(*it->second, n)) {
      d.nodes[i] = DiffMark::Changed;
      ++d.changed[s];
    }
  }
  for (const auto& [name, node] : old)
    if (!seen.count(name)) ++d.removed[size_t(deepestScopeOf(after, name).index)];
  for (size_t i = scopes; i-- > 1;) {
    const size_t p = size_t(after.scopes()[i].parent.index);
    d.added[p] += d.added[i];
    d.changed[p] += d.changed[i];
    d.removed[p] += d.removed[i];
  }
  return d;
}

void applyDiff(std::vector<ScopeStats>& stats, const SnapshotDiff& diff) {
  for (size_t i = 0; i < stats.size() && i < diff.added.size(); ++i) {
    stats[i].diffed = true;
    stats[i].added = diff.added[i];
    stats[i].changed = diff.changed[i];
    stats[i].removed = diff.removed[i];
  }
}

}  // namespace fuselens::graphview
