// The fuse-patterns table: one row per named pattern, each with a stable rule
// id. A row's match reads the graph at one root node (never mutates it) and
// returns the nodes the pattern covers, or the near misses it saw: the edge
// where the pattern stopped matching and the fact that stopped it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "passes/fusion_decision.h"

namespace fuselens {

// An input of a rewrite's replacement node: an existing value or a new constant.
struct PatternOperand {
  ValueId value;
  std::shared_ptr<const TensorData> data;  // set: a new constant named `name`
  std::string name;
};

struct PatternMatch {
  std::vector<NodeId> members;  // every node the pattern covers
  NodeId exit;                  // the member whose result leaves the match
  std::string facts;            // the deciding facts, quoted in the decisions
  bool multiAnchor = false;     // holds more than one reduction / complex op
  // Set when the match can be replaced by one op computing exactly the same
  // function (a decomposed LayerNorm by LayerNormalization); empty: a group.
  std::string rewriteOp;
  std::vector<PatternOperand> rewriteInputs;
  Attributes rewriteAttrs;
  std::string whyNoRewrite;  // for rewritable shapes that stay a group: why
};

struct NearMiss {
  NodeId producer, consumer;
  ValueId edge;
  std::string sentence, hint;
};

struct PatternOutcome {
  std::optional<PatternMatch> match;
  std::vector<NearMiss> misses;
};

struct PatternRow {
  FusionRule rule;    // PatternAttention: the decisions' rule; its id is the group's kind
  const char* shape;  // the pattern in one line, for docs and the decision text
  PatternOutcome (*match)(const Graph& g, const Node& root);
};

// In priority order: a node claimed by an earlier row's match is not offered
// to later rows.
const std::vector<PatternRow>& patternTable();

}  // namespace fuselens
