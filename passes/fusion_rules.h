// The fusion rules: given the pattern kinds of a producer's group and a
// consumer's group, may the two become one kernel? Each row has a stable rule
// id and builds the sentence the user reads. Kept apart from the driver so the
// table reads as a table and the GUI/CLI texts come from one place.
#pragma once

#include <optional>
#include <string>

#include "core/ops/registry.h"
#include "passes/fusion_decision.h"

namespace fuselens {

struct EdgeFacts {
  std::string producer;           // "MatMul 'fc1'"
  std::string consumer;           // "Relu 'act1'"
  PatternKind producerKind;       // the producer op's own kind
  PatternKind consumerKind;       // the consumer op's own kind
  PatternKind producerGroupKind;  // strongest kind in the producer's group
  PatternKind consumerGroupKind;  // strongest kind in the consumer's group
};

struct RuleVerdict {
  bool accepted = false;
  FusionRule rule = FusionRule::Opaque;
  std::string sentence;  // without the "accepted: " / "rejected: " prefix
  std::string hint;
};

// The kind table (TVM's FuseOps rules): elementwise/broadcast/injective chains
// fuse; an OutEWiseFusable or CommReduce anchor takes an elementwise epilogue;
// injective ops feed a reduction; one anchor per group.
RuleVerdict decideKinds(const EdgeFacts& e);

// Combined kind of a merged group.
PatternKind mergeKinds(PatternKind a, PatternKind b);

}  // namespace fuselens
