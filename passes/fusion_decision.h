// A fusion decision: what a fusion pass concluded about one producer->consumer
// edge, with a stable rule id and a sentence a user can act on. The GUI draws
// them on edges and `fuselens-cli explain` prints them.
#pragma once

#include <string>

#include "core/ir/ids.h"

namespace fuselens {

struct FusionDecision {
  NodeId producer;  // ids in the graph the pass ran on
  NodeId consumer;
  std::string producerName;  // display names, stable after the graph changes
  std::string consumerName;
  std::string producerOp;
  std::string consumerOp;
  ValueId edge;  // the value flowing from producer to consumer
  bool accepted = false;
  std::string rule;    // "elemwise-chain", "multi-user-outside-group", ...
  std::string reason;  // "accepted: ..." / "rejected: ..."
  std::string hint;    // what would let a rejected edge fuse, when something would
  int group = -1;      // the group the consumer (accepted) ended up in, else -1
  std::string passName;
};

}  // namespace fuselens
