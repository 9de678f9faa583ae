// `--dynamic`: the symbolic kernels of a model for one dim. The model is bound
// at a few sample values of the dim, optimized and lowered (no LLVM), and
// every kernel whose loop IR generalizes gets a symbolic form
// (codegen/symbolic/symbolic_kernel.h); the sweep then compiles each shape
// with the table, so its kernels share one compile across every length.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/support/cancel.h"
#include "core/support/status.h"

namespace fuselens {

struct SymbolicKernels;

struct SymbolicTableReport {
  std::shared_ptr<const SymbolicKernels> table;
  size_t symbolic = 0, refused = 0;  // kernels with a form; kernels without, each with a reason
  std::vector<std::string> reasons;  // "k7_fused_softmax: its loop IR changes with the dim (...)"
  std::vector<int64_t> samples;      // the values the model was lowered at
  double seconds = 0;                // binding, passes and lowering of the samples, and fitting
};

// The dim must be symbolic in `model`; samples that cannot be bound (a conv
// wider than the input) are skipped.
Expected<SymbolicTableReport> symbolicKernelsFor(const Graph& model, const std::string& label,
                                                 const std::string& dim,
                                                 const std::string& pipeline,
                                                 const CancelToken& cancel = {});

}  // namespace fuselens
