// Why ops fused or did not, as one report both faces print: the fusion
// decisions the pipeline made (filtered to a node or a fused group), every
// kernel boundary of the final graph with the decision that explains it, and
// which pass removed a node that is gone. `fuselens-cli explain` prints it;
// the GUI's inspector and edges read the same decisions.
#pragma once

#include <string>
#include <vector>

#include "passes/explain.h"
#include "passes/fusion_decision.h"

namespace fuselens {

struct Snapshot;
class Session;

struct ExplainQuery {
  std::string node;  // only decisions touching this node (by its model name); empty: all
  int group = -1;    // only decisions and boundaries of this fused group; -1: all
};

struct ExplainBoundary {
  std::string producer, consumer;  // the kernels' names in the final graph
  std::string value;               // the tensor crossing the boundary
  bool explained = false;
  std::string rule, reason, hint;
};

struct ExplainReport {
  std::vector<FusionDecision> decisions;  // in the order the passes made them
  std::vector<ExplainBoundary> boundaries;
  std::string removed;  // "node 'x' was removed by pass dce" and its notes; empty when it survived
  size_t accepted = 0, rejected = 0, unexplained = 0;
  bool fusionRan = false;  // a fusion pass made decisions at all
  // "12 accepted, 3 rejected, 4 kernel boundaries[, 1 without a reason]"
  std::string summary() const;
  // A boundary without a reason after a fusion pass ran is a defect to report.
  bool complete() const { return unexplained == 0 || !fusionRan; }
};

// The decisions in effect in snapshot `row`: those made by passes 1..row. An
// edge decided twice (fuse-patterns, then fuse-ops) keeps the later decision.
std::vector<FusionDecision> decisionsUpTo(const std::vector<Snapshot>& snapshots, int row);

// "FUSED   MatMul 'fc1' -> Add 'add1'  [group 0]" with its rule, reason and hint lines.
std::string decisionText(const FusionDecision& d);

}  // namespace fuselens
