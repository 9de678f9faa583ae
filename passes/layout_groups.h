// Layout inside fused groups: lets the layout pass run after fuse-ops. A group
// whose body holds a Conv or pool is opened (its nodes inlined into the graph,
// the group's id and kind kept), the layout pass rewrites the flat graph as
// usual, and each opened group is closed again over the nodes that replaced
// its members. The transforms between two blocked groups meet in the flat
// graph and cancel there; closing leaves the ones at a region's boundary
// outside the groups (ToNCHWc before, FromNCHWc after), except a transform
// between two members of one group (a member that stays NCHW), which the group
// keeps. foldBoundaryTransforms then moves boundary ones in where fuse-ops'
// rules would have.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "passes/fusion_decision.h"

namespace fuselens {

struct OpenedGroup {
  int id = 0;
  std::string kind;
  std::vector<NodeId> members;  // the inlined nodes, topological order
};

// Opens every Fused node of `g` whose body holds a Conv, MaxPool,
// AveragePool, GlobalAveragePool or GlobalMaxPool on a 4-D f32 plain value.
std::vector<OpenedGroup> openLayoutGroups(Graph& g);

// Closes each group again over the nodes that now stand for its members
// (`replaced`: old node index -> its blocked form) plus the layout transforms
// computed from a member and read by one. Returns the Fused nodes formed.
std::vector<NodeId> closeLayoutGroups(Graph& g, const std::vector<OpenedGroup>& groups,
                                      const std::map<int32_t, NodeId>& replaced);

// After fuse-ops, which will not see the transforms: each boundary ToNCHWc
// read only as the input of a blocked Conv/pool, and each FromNCHWc of a
// blocked Conv/pool/reduction result, joins the group beside it, by the rules
// fuse-ops applies when layout runs first (layoutTransformFold:
// layout-prologue, layout-epilogue); a blocked op fuse-ops left alone becomes a
// group with its transforms. Returns one accepted decision per folded edge.
std::vector<FusionDecision> foldBoundaryTransforms(Graph& g);

}  // namespace fuselens
