// DCE: removes nodes none of whose outputs reach a graph output, and constants
// nothing reads. Keeps graph inputs (even unused ones: they are the model's
// contract) and every node with an Opaque op whose outputs are used.
// Can run anywhere in a pipeline; fuse-ops leaves nothing for it.
#pragma once

#include "passes/pass.h"

namespace fuselens {

class DcePass : public Pass {
 public:
  std::string name() const override { return "dce"; }
  PassResult run(Graph& g, PassContext& ctx) override;
};

}  // namespace fuselens
