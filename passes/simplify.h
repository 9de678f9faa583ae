// simplify: algebraic simplification by a table of named local rewrites
// (simplify.cpp lists them, one row each: x*1 -> x, identity and dropout
// removal, reshape and transpose chains, squeeze/unsqueeze pairs, Cast no-ops,
// Sub/Div by constants into Add/Mul where exact, Conv/Gemm + BatchNormalization
// folding). Rows are tried in table order on every node, sweeping until no row
// matches. Each applied rewrite is logged (a Note naming the rule and the node)
// and counted in the stats under the rule's name.
//
// Keeps: graph outputs and their names (a rewrite that would forward a graph
// output to another value does not fire), node names (a replacement node takes
// the name of the node it replaces), origins. Exact: every row gives the same
// values as before (x+0 -> x up to the sign of a zero). Best after const-fold
// and cse; run dce after it if other passes left dead nodes.
#pragma once

#include "passes/pass.h"

namespace fuselens {

class SimplifyPass : public Pass {
 public:
  std::string name() const override { return "simplify"; }
  PassResult run(Graph& g, PassContext& ctx) override;
};

// The rule names in table order (for --help, the GUI and tests).
std::vector<std::string> simplifyRuleNames();

}  // namespace fuselens
