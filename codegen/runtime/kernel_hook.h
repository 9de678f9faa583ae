// A hook called after each kernel of a compiled CPU run (CpuExecutor::run),
// on the thread that runs it, with the kernel's name and its output tensors,
// which it may change before later kernels read them. Fault injection uses it
// (Session's perturbations: a known error added to one kernel's output, so
// localization can be tested and taught). A per-thread setting rather than a
// run argument, so CompiledModule::run keeps its signature for every backend;
// the deployment path (runInto) never calls it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/ir/tensor.h"

namespace fuselens {

using AfterKernelHook =
    std::function<void(const std::string& kernel, const std::vector<TensorData*>& outputs)>;

// The hook set on this thread; nullptr when none.
const AfterKernelHook* afterKernelHook();

class ScopedAfterKernelHook {
 public:
  explicit ScopedAfterKernelHook(AfterKernelHook hook);
  ~ScopedAfterKernelHook();
  ScopedAfterKernelHook(const ScopedAfterKernelHook&) = delete;
  ScopedAfterKernelHook& operator=(const ScopedAfterKernelHook&) = delete;

 private:
  const AfterKernelHook* saved_;
  AfterKernelHook hook_;
};

}  // namespace fuselens
