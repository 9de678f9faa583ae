// diffSnapshots: op names and origins of the earlier snapshot in hash maps,
// one pass over the later one; removed ops placed where their origin went, or
// by their name's scope path.
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
  std::unordered_map<int32_t, const LayoutNode*> oldByOrigin;
  for (const LayoutNode& n : before.nodes) {
    if (n.kind != LayoutNodeKind::Op) continue;
    if (!n.name.empty()) old.emplace(n.name, &n);
    for (int32_t o : n.origins) oldByOrigin.emplace(o, &n);
  }
  const FlatGraph& flat = after.flat();
  // Which later op holds each original node: where an op the pass removed went.
  std::unordered_map<int32_t, int> holder;
  for (size_t i = 0; i < flat.nodes.size(); ++i)
    if (flat.nodes[i].kind == LayoutNodeKind::Op)
      for (int32_t o : flat.nodes[i].origins) holder.emplace(o, int(i));
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
      // A new name for an op that was there (same origin, its old name gone):
      // changed, not added.
      const LayoutNode* was = nullptr;
      for (int32_t o : n.origins)
        if (auto w = oldByOrigin.find(o);
            w != oldByOrigin.end() && after.nodeNamed(w->second->name) < 0)
          was = w->second;
      if (was && !seen.count(was->name)) {
        seen[was->name] = true;
        d.nodes[i] = DiffMark::Changed;
        ++d.changed[s];
        continue;
      }
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
  // A removed op counts in the scope of the op that now holds its origin (a
  // BatchNorm folded into its Conv, ops merged by a pattern), else in the
  // deepest scope its name still reaches.
  for (const auto& [name, node] : old) {
    if (seen.count(name)) continue;
    ScopeId where = deepestScopeOf(after, name);
    for (int32_t o : node->origins)
      if (auto h = holder.find(o); h != holder.end()) {
        where = after.scopeOfNode(h->second);
        break;
      }
    ++d.removed[size_t(where.index)];
  }
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
