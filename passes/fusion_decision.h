// A fusion decision: what a fusion pass concluded about one producer->consumer
// edge, with a typed rule and a sentence a user can act on. The GUI draws
// them on edges and `fuselens-cli explain` prints them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/ir/ids.h"

namespace fuselens {

// Every rule a fusion pass decides an edge by. Code compares these; users read
// their display ids (fusionRuleId: "elemwise-chain", ...), which CLI output,
// JSON, the GUI and docs/fusion-rules.md print, so an id never changes.
enum class FusionRule {
  // accepted (fuse-ops, layout)
  ElemwiseChain,
  InjectiveChain,
  AnchorEpilogue,
  ReduceEpilogue,
  IntoReduce,
  Reconverge,
  ReduceChain,
  LayoutPrologue,
  LayoutEpilogue,
  SameGroup,
  // rejected (fuse-ops)
  Opaque,
  OpaqueOp,
  ProducerHasOtherUsers,
  TwoAnchors,
  PrologueIntoAnchor,
  InjectiveAfterAnchor,
  FusionWindow,
  GroupInputs,
  RegisterPressure,
  AlreadyFused,
  DynamicDim,
  // fuse-patterns: one per pattern table row, also the group's kind
  PatternAttention,
  PatternSoftmax,
  PatternLayerNorm,
  PatternConvBnAct,
  PatternMatMulBiasAct,
  PatternGelu,
  PatternSilu,
  // rejected (fuse-ops): ptxas said the kernel of the group spills (split=)
  CudaSpills,
};

// The display id of a rule: "producer-has-other-users".
std::string_view fusionRuleId(FusionRule r);
// The rule with this display id, if any (for readers of printed decisions).
std::optional<FusionRule> fusionRuleFromId(std::string_view id);

struct FusionDecision {
  NodeId producer;  // ids in the graph the pass ran on
  NodeId consumer;
  std::string producerName;  // display names, stable after the graph changes
  std::string consumerName;
  std::string producerOp;
  std::string consumerOp;
  ValueId edge;  // the value flowing from producer to consumer
  bool accepted = false;
  FusionRule rule = FusionRule::Opaque;
  std::string reason;  // "accepted: ..." / "rejected: ..."
  std::string hint;    // what would let a rejected edge fuse, when something would
  int group = -1;      // the group the consumer (accepted) ended up in, else -1
  std::string passName;

  std::string ruleId() const { return std::string(fusionRuleId(rule)); }  // for display
};

}  // namespace fuselens
