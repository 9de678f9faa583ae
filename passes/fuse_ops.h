// fuse-ops: groups producer->consumer chains into Fused nodes, TVM style, and
// records a FusionDecision for every edge it considers.
//
// Rewrites: each group of two or more nodes becomes one Fused node whose body
// holds them (see outline_group.h). Keeps: node names, origins, graph inputs
// and outputs; ops it does not fuse are left as they are. Run dce first so dead
// users do not block fusion; nothing needs to run after it.
//
// Options: max-ops (the fusion window, default 8); max-inputs (tensors a group
// may read, i.e. kernel arguments, default 16); target (cpu or cuda) and
// live-budget (estimated values live at once per thread; default 32 for cpu,
// 64 for cuda); multi-anchor (0/1, default 1): let two reductions over the
// same rows share a group (rule reduce-chain: softmax's max and sum,
// LayerNorm's mean and variance); codegen lowers them as consecutive stages of
// one kernel. With multi-anchor=0 (one anchor per kernel, as before that
// lowering existed) such edges are rejected with rule reduce-chain.
// split (node names joined by ';'): every edge into a named node is rejected
// with rule cuda-spills, so a group starts there; `export --target cuda
// --cuda-register-feedback` writes it for groups whose kernel ptxas found
// spilling (codegen/cuda/cuda_register_feedback.h).
//
// Pattern groups from fuse-patterns (Fused nodes with kind "pattern-...") are
// one node each to fuse-ops, of the strongest kind in their body: they take
// epilogues (and prologues into reductions) by the same rules, are never
// split, and a group that gains ops is outlined flat with its pattern kind.
// Other Fused nodes are left alone (already-fused).
#pragma once

#include <set>
#include <string>

#include "passes/pass.h"

namespace fuselens {

struct FuseOpsOptions {
  int64_t maxOps = 8;
  int64_t maxInputs = 16;
  std::string target = "cpu";
  int64_t liveBudget = 32;
  bool multiAnchor = true;
  // Node names where a group must start (option split=A;B, rule cuda-spills):
  // every edge into them is rejected. Written by the ptxas feedback of
  // `export --target cuda` for kernels that spilled.
  std::set<std::string> split;
};

// The live-value budget a target gets when none is given.
int64_t defaultLiveBudget(const std::string& target);

class FuseOpsPass : public Pass {
 public:
  explicit FuseOpsPass(FuseOpsOptions opts) : opts_(std::move(opts)) {}
  std::string name() const override { return "fuse-ops"; }
  PassResult run(Graph& g, PassContext& ctx) override;

 private:
  FuseOpsOptions opts_;
};

}  // namespace fuselens
