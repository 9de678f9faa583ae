// Reduced precision on purpose: every f32 tensor that crosses a kernel
// boundary, and every f32 initializer a kernel reads, is stored in f16 (or
// bf16); arithmetic stays f32, so what a user sees is the cost of the storage
// alone, kernel by kernel.
//
// Rewrites: a compute node outside a group becomes a one-op group (kind
// "single") so that conversions have a body to live in; each group whose input
// is reduced converts it back to f32 at entry (`Cast(to=f32)` in the body), and
// each group whose output is reduced rounds it at exit (`Cast(to=f16)`). Views
// (Reshape, Flatten, ...) take the dtype of the tensor they alias. Initializers
// are converted once, here.
//
// Keeps: graph inputs and outputs in f32 (users feed and read f32); values
// inside a group in f32 (registers); integer and bool tensors; one-element
// constants (they are literals in the code); parameters that are not data
// (Resize roi and scales); nodes with a body of their own (If, Loop, Scan),
// ops without an eager kernel and tensors of unknown shape, with every tensor
// they touch. Origins and layouts are carried, so compare still maps each
// reduced tensor to its f32 eager twin.
//
// Runs after the fusion passes (it defines the kernel boundaries they chose)
// and before memory-plan (which then plans the smaller buffers).
#pragma once

#include "core/ir/dtype.h"
#include "passes/pass.h"

namespace fuselens {

class ReducePrecisionPass : public Pass {
 public:
  explicit ReducePrecisionPass(DType storage) : storage_(storage) {}
  std::string name() const override { return "reduce-precision"; }
  PassResult run(Graph& g, PassContext& ctx) override;

 private:
  DType storage_;  // F16 or BF16
};

}  // namespace fuselens
