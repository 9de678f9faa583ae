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

RuleVerdict accept(std::string rule, std::string sentence) {
  return {true, std::move(rule), std::move(sentence), {}};
}
RuleVerdict reject(std::string rule, std::string sentence, std::string hint = {}) {
  return {false, std::move(rule), std::move(sentence), std::move(hint)};
}

}  // namespace

PatternKind mergeKinds(PatternKind a, PatternKind b) { return std::max(a, b); }

RuleVerdict decideKinds(const EdgeFacts& e) {
  const PatternKind pg = e.producerGroupKind, cg = e.consumerGroupKind;
  const std::string both = e.producer + " -> " + e.consumer;
  // Light -> light: one loop nest with the producer inlined.
  if (isLight(pg) && isLight(cg)) {
    bool ew = isElementwise(pg) && isElementwise(cg);
    return accept(ew ? "elemwise-chain" : "injective-chain",
                  both + " are " + kind(pg) + " and " + kind(cg) +
                      "; the producer is computed inline in the consumer's loop");
  }
  // Anchor -> elementwise epilogue: applied to the result before it is stored.
  if (isAnchor(pg) && isLight(cg)) {
    if (isElementwise(cg))
      return accept(pg == PatternKind::OutEWiseFusable ? "anchor-epilogue" : "reduce-epilogue",
                    e.consumer + " is " + kind(cg) + " and becomes the epilogue of the " + kind(pg) +
                        " group of " + e.producer);
    return reject("injective-after-anchor",
                  e.consumer + " is Injective and cannot follow the " + kind(pg) + " group of " +
                      e.producer + "; an anchor takes only an elementwise epilogue");
  }
  // Light prologue -> reduction: the reduction reads the inlined producer.
  if (isLight(pg) && cg == PatternKind::CommReduce)
    return accept("into-reduce", e.producer + " is " + kind(pg) + " and is computed inline where " +
                                     e.consumer + " (CommReduce) reads it");
  if (isLight(pg) && cg == PatternKind::OutEWiseFusable)
    return reject("prologue-into-anchor",
                  e.consumer + " is OutEWiseFusable: it starts its own group and takes an elementwise "
                               "epilogue only, so " + e.producer + " (" + kind(pg) + ") stays outside it");
  if (isAnchor(pg) && isAnchor(cg))
    return reject("two-anchors", "the group of " + e.producer + " is " + kind(pg) + " and the group of " +
                                     e.consumer + " is " + kind(cg) +
                                     "; a group holds at most one reduction or complex op");
  return reject("opaque", both + ": " + kind(pg) + " -> " + kind(cg) + " has no fusion rule");
}

}  // namespace fuselens
