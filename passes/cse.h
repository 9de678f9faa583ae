// cse: common subexpression elimination. Two nodes with the same op, domain,
// attributes and inputs compute the same tensors, so the later one's users read
// the earlier one's outputs; two constants with the same type and bytes become
// one. Keeps: the first node of each class (its name and origins), graph
// outputs (a node or constant that is a graph output is never merged away, so
// output names stay). Skips non-deterministic ops and nodes with a body.
// Best after const-fold (folded constants can then merge) and before simplify.
#pragma once

#include "passes/pass.h"

namespace fuselens {

class CsePass : public Pass {
 public:
  std::string name() const override { return "cse"; }
  PassResult run(Graph& g, PassContext& ctx) override;
};

}  // namespace fuselens
