// Internal to the dynamic-shape drivers (driver_dynamic_shape.cpp dispatches):
// one lowering per family, each with driver_kernel.h's contract, and the small
// helpers they share for running loop-IR kernels they JIT themselves.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/driver/driver_kernel.h"
#include "codegen/llvm/llvm_backend.h"

namespace fuselens {

// NonZero: a compiled count, then a compiled fill of [rank, count].
Expected<DriverKernel> lowerNonZeroDriver(const Graph& g, const Node& n, const std::string& name,
                                          const CompileOptions& opts);
// Range: the count from the scalars, then a compiled fill in fixed-size blocks.
Expected<DriverKernel> lowerRangeDriver(const Graph& g, const Node& n, const std::string& name,
                                        const CompileOptions& opts);
// Any other node touching a value whose shape is known only at run time:
// compiled at run time for the input types it meets, cached by them.
std::optional<Expected<DriverKernel>> lowerSpecializedDriver(const Graph& g, const Node& n,
                                                             const std::string& name,
                                                             const CompileOptions& opts);

// Loop-IR kernels compiled into one JIT module that the driver's closure keeps
// alive; kernels take their params' data pointers (no scratch: these kernels
// use no temps).
struct DriverJit {
  std::shared_ptr<JitModule> jit;
  std::string loopIr;  // every kernel's loop nest, for the listing
  JitModule::KernelFn fn(size_t i) const { return jit->kernel(i); }
};
Expected<DriverJit> jitDriverKernels(const std::vector<LoopFunc>& funcs, int optLevel);

// The input tensor at position i, checked against the type the kernels were
// compiled for; `where` names the node.
Expected<const TensorData*> checkedInput(const std::vector<const TensorData*>& in, size_t i,
                                         const TensorType& want, const std::string& where);

}  // namespace fuselens
