// Kernel boundaries and why they are there. After a pipeline, every edge from
// one kernel to another in the final graph (a tensor written by one launch and
// read by the next) should have a rejected FusionDecision that says why the two
// did not fuse; `fuselens-cli explain` and the GUI read this list, and tests
// check that no boundary is left without a reason.
#pragma once

#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "passes/fusion_decision.h"

namespace fuselens {

struct SplitEdge {
  NodeId producer, consumer;  // kernels in the final graph (plain nodes or Fused groups)
  ValueId value;              // the tensor crossing the boundary
  std::string producerName, consumerName;      // the final nodes' names
  int producerGroup = -1, consumerGroup = -1;  // the Fused groups' ids, -1 for plain nodes
  const FusionDecision* decision = nullptr;    // the last rejected decision covering the edge
  std::string reason;                          // the decision's reason, or why there is none
};

// The names a final node stands for: its own, and for a Fused node its body's nodes.
std::vector<std::string> memberNames(const Node& n);

// Every node->node edge of `finalGraph`, each with the decision that split it.
// `decisions` must outlive the result.
std::vector<SplitEdge> splitEdges(const Graph& finalGraph,
                                  const std::vector<FusionDecision>& decisions);

}  // namespace fuselens
