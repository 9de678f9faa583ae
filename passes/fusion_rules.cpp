#include "passes/fusion_rules.h"

#include <algorithm>

namespace fuselens {
namespace {

bool isLight(PatternKind k) { return k <= PatternKind::Injective; }
bool isElementwise(PatternKind k) { return k <= PatternKind::Broadcast; }
bool isAnchor(PatternKind k) {
  return k == PatternKind::CommReduce || k == PatternKind::OutEWiseFusable;
}
std::string kind(PatternKind k) { return std::string(patternKindName(k)); }

RuleVerdict accept(FusionRule rule, std::string sentence) {
  return {true, rule, std::move(sentence), {}};
}
RuleVerdict reject(FusionRule rule, std::string sentence, std::string hint = {}) {
  return {false, rule, std::move(sentence), std::move(hint)};
}

struct RuleRow {
  FusionRule rule;
  std::string_view id;
};

// One row per rule: its display id, never changed (docs/fusion-rules.md).
constexpr RuleRow kRules[] = {
    {FusionRule::ElemwiseChain, "elemwise-chain"},    // elementwise producer inlined
    {FusionRule::InjectiveChain, "injective-chain"},  // index remap in a light chain
    {FusionRule::AnchorEpilogue, "anchor-epilogue"},  // MatMul/Conv + elementwise
    {FusionRule::ReduceEpilogue, "reduce-epilogue"},  // reduction + elementwise
    {FusionRule::IntoReduce, "into-reduce"},          // light producer read by a reduction
    {FusionRule::Reconverge, "reconverge"},           // all users in one group
    {FusionRule::ReduceChain, "reduce-chain"},        // reductions over the same rows
    {FusionRule::LayoutPrologue, "layout-prologue"},  // ToNCHWc into a blocked anchor
    {FusionRule::LayoutEpilogue, "layout-epilogue"},  // FromNCHWc after a blocked group
    {FusionRule::SameGroup, "same-group"},            // already one group
    {FusionRule::Opaque, "opaque"},                   // no kind rule for the pair
    {FusionRule::OpaqueOp, "opaque-op"},              // one side is Opaque
    {FusionRule::ProducerHasOtherUsers, "producer-has-other-users"},  // read outside
    {FusionRule::TwoAnchors, "two-anchors"},                          // one anchor per group
    {FusionRule::PrologueIntoAnchor, "prologue-into-anchor"},         // anchors take no prologue
    {FusionRule::InjectiveAfterAnchor, "injective-after-anchor"},     // only elementwise epilogues
    {FusionRule::FusionWindow, "fusion-window"},                      // max-ops
    {FusionRule::GroupInputs, "group-inputs"},                        // max-inputs
    {FusionRule::RegisterPressure, "register-pressure"},              // live-budget
    {FusionRule::AlreadyFused, "already-fused"},                      // an earlier pass's group
    {FusionRule::DynamicDim, "dynamic-dim"},                          // dims differ before run time
    {FusionRule::PatternAttention, "pattern-attention"},              // fuse-patterns rows
    {FusionRule::PatternSoftmax, "pattern-softmax"},
    {FusionRule::PatternLayerNorm, "pattern-layernorm"},
    {FusionRule::PatternConvBnAct, "pattern-conv-bn-act"},
    {FusionRule::PatternMatMulBiasAct, "pattern-matmul-bias-act"},
    {FusionRule::PatternGelu, "pattern-gelu"},
    {FusionRule::PatternSilu, "pattern-silu"},
    {FusionRule::CudaSpills, "cuda-spills"},  // split= from ptxas feedback (export --target cuda)
};

}  // namespace

std::string_view fusionRuleId(FusionRule r) {
  for (const RuleRow& row : kRules)
    if (row.rule == r) return row.id;
  return "unknown-rule";
}

std::optional<FusionRule> fusionRuleFromId(std::string_view id) {
  for (const RuleRow& row : kRules)
    if (row.id == id) return row.rule;
  return std::nullopt;
}

PatternKind mergeKinds(PatternKind a, PatternKind b) { return std::max(a, b); }

RuleVerdict decideKinds(const EdgeFacts& e) {
  const PatternKind pg = e.producerGroupKind, cg = e.consumerGroupKind;
  const std::string both = e.producer + " -> " + e.consumer;
  // Light -> light: one loop nest with the producer inlined.
  if (isLight(pg) && isLight(cg)) {
    bool ew = isElementwise(pg) && isElementwise(cg);
    return accept(ew ? FusionRule::ElemwiseChain : FusionRule::InjectiveChain,
                  both + " are " + kind(pg) + " and " + kind(cg) +
                      "; the producer is computed inline in the consumer's loop");
  }
  // Anchor -> elementwise epilogue: applied to the result before it is stored.
  if (isAnchor(pg) && isLight(cg)) {
    if (isElementwise(cg))
      return accept(pg == PatternKind::OutEWiseFusable ? FusionRule::AnchorEpilogue
                                                       : FusionRule::ReduceEpilogue,
                    e.consumer + " is " + kind(cg) + " and becomes the epilogue of the " +
                        kind(pg) + " group of " + e.producer);
    return reject(FusionRule::InjectiveAfterAnchor,
                  e.consumer + " is Injective and cannot follow the " + kind(pg) + " group of " +
                      e.producer + "; an anchor takes only an elementwise epilogue");
  }
  // Light prologue -> reduction: the reduction reads the inlined producer.
  if (isLight(pg) && cg == PatternKind::CommReduce)
    return accept(FusionRule::IntoReduce, e.producer + " is " + kind(pg) +
                                              " and is computed inline where " + e.consumer +
                                              " (CommReduce) reads it");
  if (isLight(pg) && cg == PatternKind::OutEWiseFusable)
    return reject(FusionRule::PrologueIntoAnchor,
                  e.consumer +
                      " is OutEWiseFusable: it starts its own group and takes an elementwise "
                      "epilogue only, so " +
                      e.producer + " (" + kind(pg) + ") stays outside it");
  if (isAnchor(pg) && isAnchor(cg))
    return reject(FusionRule::TwoAnchors,
                  "the group of " + e.producer + " is " + kind(pg) + " and the group of " +
                      e.consumer + " is " + kind(cg) +
                      "; a group holds at most one reduction or complex op");
  return reject(FusionRule::Opaque,
                both + ": " + kind(pg) + " -> " + kind(cg) + " has no fusion rule");
}

}  // namespace fuselens
