// fuse-ops: groups producer->consumer chains into Fused nodes, TVM style, and
// records a FusionDecision for every edge it considers.
//
// Rewrites: each group of two or more nodes becomes one Fused node whose body
// holds them (see outline_group.h). Keeps: node names, origins, graph inputs
// and outputs; ops it does not fuse are left as they are. Run dce first so dead
// users do not block fusion; nothing needs to run after it.
//
// Options: max-ops (the fusion window, default 8).
#pragma once

#include "passes/pass.h"

namespace fuselens {

class FuseOpsPass : public Pass {
 public:
  explicit FuseOpsPass(int64_t maxOps) : maxOps_(maxOps) {}
  std::string name() const override { return "fuse-ops"; }
  PassResult run(Graph& g, PassContext& ctx) override;

 private:
  int64_t maxOps_;
};

}  // namespace fuselens
