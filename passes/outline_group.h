// Outlining: replaces a set of nodes by one Fused node (op "Fused", domain
// "fuselens") whose body graph holds them. Shared by the fusion passes.
//
// The group's inputs are the values its members read from outside (weights
// included, so the executor binds them; scalar constants are copied into the
// body so codegen can fold them); its outputs are member outputs read outside
// the group or returned by the graph. Origins are carried into the body and
// onto the Fused node, so every tensor still maps back to the imported graph.
#pragma once

#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace fuselens {

// `members` in an order that runs: the given order when it already is one,
// else Kahn's algorithm over the members alone, smallest id first. Visits only
// the members and their edges, so calling it once per group stays linear.
std::vector<NodeId> topoOrderOf(const Graph& g, const std::vector<NodeId>& members);

// `members` must be convex (no path leaves the set and comes back). Handing
// them in topological order saves sorting them.
NodeId outlineGroup(Graph& g, const std::vector<NodeId>& members, int groupId,
                    const std::string& kind);

}  // namespace fuselens
