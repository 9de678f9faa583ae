// Inlining: the inverse of outlining. Replaces a Fused node by the nodes of its
// body, so fuse-ops can outline a pattern group together with the epilogue ops
// it adds to it into one flat group (codegen lowers flat bodies; a group
// inside a group would be a second kernel boundary in disguise).
//
// Keeps: every body node's name, attributes and origins, every body value's
// name, origin and layout. Scalar constants the body holds become constants of
// `g` again (an existing constant of the same name and data is reused).
#pragma once

#include <vector>

#include "core/ir/graph.h"

namespace fuselens {

// Returns the new nodes, in the body's topological order.
std::vector<NodeId> inlineGroup(Graph& g, NodeId fused);

}  // namespace fuselens
