// Internal to fuse-patterns: the match functions of the table's rows, split over
// two files (pattern_table.cpp: anchored patterns; pattern_decomposed.cpp:
// decomposed LayerNorm, GELU and softmax, which may be rewritten to one op).
#pragma once

#include "passes/pattern_table.h"

namespace fuselens::patterns {

PatternOutcome matmulBiasAct(const Graph& g, const Node& root);
PatternOutcome convBnAct(const Graph& g, const Node& root);
PatternOutcome attention(const Graph& g, const Node& root);
PatternOutcome silu(const Graph& g, const Node& root);
PatternOutcome layerNorm(const Graph& g, const Node& root);
PatternOutcome gelu(const Graph& g, const Node& root);
PatternOutcome softmax(const Graph& g, const Node& root);

NearMiss nearMiss(const Node& producer, const Node& consumer, ValueId edge, std::string sentence,
                  std::string hint = {});

}  // namespace fuselens::patterns
