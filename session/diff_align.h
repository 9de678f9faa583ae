// What a line diff means for the nodes behind the lines. Each IR line that
// defines a value names its node: its origin loc("...") or, without one, the
// value it defines. A removed and an added line with the same origin are one
// node seen twice: moved (same text once indentation is set aside, as when
// fuse-ops moves a node into a group's body) or changed (the pass rewrote
// it). The side-by-side view lines the two texts up on those pairs. Both
// faces use this: `fuselens-cli diff --side-by-side` and the GUI's Diff tab.
#pragma once

#include <string>
#include <vector>

#include "session/pass_diff.h"

namespace fuselens {

// The node a line of printed IR stands for: the text inside its loc("..."),
// else "%name" of the value it defines, else "" (graph headers, returns,
// braces: lines no node owns).
std::string lineOrigin(const std::string& line);

// Pairs removed and added lines by origin (DiffLine::partner, moved). Lines
// with the same text (indentation aside) pair first, in order, so a block
// moved whole pairs line by line; the rest pair by origin alone.
// Returns the number of moved pairs.
size_t markMoves(std::vector<DiffLine>& lines);

// One row of the side-by-side view: A's line on the left, B's on the right
// (line numbers from 1; 0 where that side has none).
struct DiffRow {
  enum class Kind {
    Same,      // both sides, equal
    Changed,   // both sides, different: the same node rewritten, or lines replaced in place
    Removed,   // left only
    Added,     // right only
    MovedOut,  // left only: the node moved to line `rightLine` of B
    MovedIn,   // right only: the node came from line `leftLine` of A
    Folded,    // "N unchanged lines", both sides
  };
  Kind kind = Kind::Same;
  std::string left, right;
  size_t leftLine = 0, rightLine = 0;
  size_t folded = 0;  // Folded: how many unchanged lines the row stands for
  // Same/Changed: the two sides are one node that moved (indentation, or a
  // new place in the same run of changes) rather than two lines diffed.
  bool moved = false;
};

// The diff as side-by-side rows. Within a run of changes, pairs of the same
// node stand on one row; the remaining removed and added lines of the run
// share rows in order; moved lines keep a row of their own on their side.
// Unchanged runs longer than 2 * context fold to one row.
std::vector<DiffRow> sideBySide(const std::vector<DiffLine>& lines, size_t context = 3);

// The rows as two columns of `width` characters each (longer lines cut with
// "..."), a marker between them: "|" same, "~" changed, "<" removed, ">"
// added, "m" the same node moved, "<m" moved away, "m>" moved here. A moved
// line's number on its empty side is where it went (or came from).
std::string sideBySideText(const std::vector<DiffRow>& rows, size_t width = 80);

}  // namespace fuselens
