// The fuse-ops checks that need the graph, not only the pattern kinds (those
// are the kind table in fusion_rules.h): reductions over the same rows, dynamic
// dims, the layout hint, and how a pattern group looks to fuse-ops.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ops/registry.h"
#include "passes/fusion_rules.h"

namespace fuselens {

// A pattern group (fuse-patterns) counts as one node whose kind is the
// strongest kind of its body and whose size is its body's op count.
PatternKind groupNodeKind(const Node& fused);
int64_t groupNodeSize(const Node& n);

// reduce-chain: merging two CommReduce groups. Accepted when every reduction in
// both reduces the same rows and multi-anchor groups are on; rejected with
// rule reduce-chain (and the option as the hint) when they are off; the
// two-anchors verdict with the rows named when the rows differ.
RuleVerdict reduceChain(const Graph& g, const std::vector<NodeId>& producerGroup,
                        const std::vector<NodeId>& consumerGroup, const std::string& producer,
                        const std::string& consumer, bool multiAnchor);

// dynamic-dim: `edge` (read by the elementwise consumer `cn`) and cn's output
// name different dynamic dims at one position, so one loop nest cannot be
// shaped for both at compile time. nullopt when the dims agree.
std::optional<RuleVerdict> dynamicDim(const Graph& g, ValueId edge, const Node& cn,
                                      const std::string& producer, const std::string& consumer);

// True when `n` (or a member of its body) is a Conv or pooling op on a plain
// (not channel-blocked) rank-4 tensor.
bool touchesNchwConv(const Graph& g, const Node& n);
// The hint for a rejected edge of an NCHW Conv region when no layout pass runs
// before fuse-ops; empty when the rule is not one layout changes.
std::string layoutHint(FusionRule rule);

// layout-prologue / layout-epilogue: the layout pass's transforms at a blocked
// region's boundary join the anchor group beside them instead of costing a
// kernel each. A ToNCHWc read as the input of a ConvNCHWc / pool NCHWc is an
// index map the anchor's loads apply; a FromNCHWc reading an anchor group's
// blocked result is a last stage of that kernel (codegen materializes the
// anchor's result and reads it back through the map). nullopt for any other
// edge, which the kind table decides. The ToNCHWc joins only alone
// (`producerAlone`): ops fused before it would be recomputed at every tap of
// the window, which prologue-into-anchor keeps out.
std::optional<RuleVerdict> layoutTransformFold(const Node& pn, const Node& cn, ValueId edge,
                                               bool producerAlone, PatternKind producerGroup,
                                               PatternKind consumerGroup,
                                               const std::string& producer,
                                               const std::string& consumer);

// What a rejected two-anchors edge could do instead, when there is something.
std::string twoAnchorsHint(const Graph& g, const Node& pn, const Node& cn);

}  // namespace fuselens
