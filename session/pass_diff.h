// What a pass changed, or what differs between any two snapshots: the IR text
// as a line diff, and the graph as nodes added, removed and changed. Nodes are
// matched by name (or, unnamed, by their first output's name); a removed node
// whose original ops now live inside another node (a fused group, a folded
// Conv) names that node, found through origins. Both faces show this: the
// CLI's `diff` and the GUI's pass diff.
#pragma once

#include <string>
#include <vector>

#include "passes/pass_manager.h"

namespace fuselens {

struct DiffLine {
  enum class Kind { Same, Added, Removed };
  Kind kind = Kind::Same;
  std::string text;
  // For an added or removed line, the index (in the same diff) of the line on
  // the other side that holds the same node, found by origin (its loc("...")
  // or the value it defines); -1 when none. `moved` when the two differ only
  // in place and indentation: the pass moved the node (into a fused group's
  // body, up or down the order) without changing it. Set by markMoves.
  int partner = -1;
  bool moved = false;
};

// A line diff of two texts (Myers' algorithm on lines). Past `maxEdits`
// differing lines the middle of the texts is reported as removed then added,
// so a diff of two huge, unrelated texts stays bounded.
std::vector<DiffLine> diffLines(const std::string& a, const std::string& b, size_t maxEdits = 4000);

struct NodeChange {
  std::string node;  // its name, or "%" + its first output's name
  std::string op;
  std::string into;  // removed only: the node of the newer snapshot holding its ops
};

struct PassDiff {
  std::string from, to;  // snapshot labels
  std::vector<NodeChange> added, removed, changed;
  size_t unchanged = 0;
  std::vector<DiffLine> lines;
  size_t addedLines = 0, removedLines = 0;  // moved lines included
  size_t movedLines = 0;                    // pairs: one removed and one added line each

  // "fuse-ops{max-ops=8}: 3 nodes added, 8 removed, 1 changed, 4 unchanged;
  // IR +12 -30 lines (5 moved)".
  std::string summary() const;
  // The IR diff as unified text: "+ ", "- " and "  " prefixes; a moved line is
  // "< " where it was and "> " where it went. Unchanged runs longer than
  // 2 * context lines fold to "@@ N unchanged lines @@".
  std::string unifiedText(size_t context = 3) const;
};

PassDiff diffPass(const Snapshot& from, const Snapshot& to);

// A snapshot by its position ("0" is the imported graph), "import", or a pass
// name ("fuse-ops" finds "fuse-ops{max-ops=8}"; the first match when a pass
// runs twice). An unknown name is an error listing the snapshots.
Expected<size_t> findSnapshot(const std::vector<Snapshot>& snapshots, const std::string& which);

// {"from", "to", "added": [{node, op}], "removed": [{node, op, into}],
//  "changed": [...], "unchanged", "ir": {"added_lines", "removed_lines",
//  "moved_lines", "diff"}}.
std::string diffJson(const PassDiff& d);

}  // namespace fuselens
