// Runs a graph's CUDA kernels on a GPU through the driver API (loaded with
// dlopen, cuda_driver.h): the PTX module loaded once per run, one device
// arena of the memory plan's size, the weights blob uploaded, every stage
// launched on one stream with its planned grid and block, CUDA events around
// every kernel for its time. It follows the same launch plan as the exported
// bundle's launcher (cuda_launch_plan.h). Without a driver or a device every
// call fails with one sentence that says so.
#pragma once

#include <string>
#include <vector>

#include "codegen/cuda/cuda_launch_plan.h"

namespace fuselens {

struct CudaRunResult {
  std::vector<TensorData> outputs;  // in graph output order
  std::vector<double> kernelMs;     // per kernel of the plan, from events
  double totalMs = 0;               // first kernel's start to the last one's end
};

// Whether a CUDA driver answers with at least one device; `why` says why not.
bool cudaDeviceAvailable(std::string* why = nullptr);

// Runs `plan` (its module compiled to `ptx`) on `inputs`, in graph input order.
Expected<CudaRunResult> runOnCuda(const CudaLaunchPlan& plan, const std::string& ptx,
                                  const std::vector<TensorData>& inputs,
                                  const CancelToken& cancel = {});

}  // namespace fuselens
