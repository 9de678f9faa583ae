// What a pass changed, for the graph view's diff mode: ops matched by name
// between two snapshots (passes keep op names, a fused body holds its members
// under their own), then by origin (an op a pass renamed is the op whose
// imported nodes it carries). An op of the later snapshot is added (no op of
// that name or origin before) or changed (renamed, another op type, output
// type, constants, or fused-group membership); ops of the earlier snapshot
// that are gone count as removed in the scope of the op now holding their
// origin (a folded BatchNorm in its Conv's), else in the deepest scope of the
// later tree that their name still reaches. Qt-free.
#pragma once

#include <vector>

#include "session/graphview/scope_tree.h"

namespace fuselens::graphview {

enum class DiffMark : char { Same = 0, Added = 1, Changed = 2 };

struct SnapshotDiff {
  std::vector<DiffMark> nodes;  // per FlatGraph node of the later snapshot
  // Per scope of the later tree, summed over its subtree.
  std::vector<size_t> added, changed, removed;
};

SnapshotDiff diffSnapshots(const FlatGraph& before, const ScopeTree& after);

// Copies the per-scope counts into the stats the boxes show (diffed: true).
void applyDiff(std::vector<ScopeStats>& stats, const SnapshotDiff& diff);

}  // namespace fuselens::graphview
