// const-fold: evaluates at compile time every node whose inputs are all
// constants, with the op registry's eager kernels (never codegen: the eager
// kernels are the reference), and replaces its outputs by constants. Shape of
// a value with a static type folds even when that value is not constant, so
// shape chains (Shape -> Gather -> Concat -> Reshape) fold as far as the
// registry has kernels for their ops.
//
// Keeps: node names (a folded constant takes its value's name and origin),
// graph outputs. Skips, with a note: nodes whose kernel fails (the error then
// happens at run time, where it belongs), non-deterministic ops, nodes with a
// body, and folds that would add a constant of more than `max-elements`
// elements while its inputs stay alive (so weights are not duplicated; a fold
// whose constant inputs die with it never grows the model and always runs).
// Run dce after it for constants that only fed folded nodes and are still
// read nowhere (the ones the fold itself orphaned are removed here).
//
// Options: max-elements (default 65536).
#pragma once

#include "passes/pass.h"

namespace fuselens {

class ConstFoldPass : public Pass {
 public:
  explicit ConstFoldPass(int64_t maxElements) : maxElements_(maxElements) {}
  std::string name() const override { return "const-fold"; }
  PassResult run(Graph& g, PassContext& ctx) override;

 private:
  int64_t maxElements_;
};

}  // namespace fuselens
