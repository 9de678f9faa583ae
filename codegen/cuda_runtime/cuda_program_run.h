// Runs a control-flow program (codegen/cuda/cuda_program.h) on a GPU through
// the driver-API executor: every segment's kernels through runOnCuda, the
// host between them deciding which If branch runs. Values crossing steps pass
// through host memory here (the bundle's launcher keeps them on the device);
// the arithmetic is all CUDA kernels. Without a device it fails with
// runOnCuda's one sentence.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_program.h"
#include "codegen/cuda_runtime/cuda_executor.h"

namespace fuselens {

// Runs one Kernels step: its inputs in step.plan->inputs order -> its outputs.
using CudaSegmentRunner = std::function<Expected<std::vector<TensorData>>(
    const CudaStep& step, const std::vector<TensorData>& inputs)>;

// The host's walk of the program (If branches, Loop iterations, slots) with
// segments run by `runSegment`: what runCudaProgram does with the GPU, and
// what a test does with each segment compiled for the CPU.
Expected<std::vector<TensorData>> walkCudaProgram(const CudaProgramPlan& plan,
                                                  const std::vector<TensorData>& inputs,
                                                  const CudaSegmentRunner& runSegment,
                                                  const CancelToken& cancel = {});

// Each segment's module compiled by NVRTC for `arch` on first use.
Expected<CudaRunResult> runCudaProgram(const CudaProgramPlan& plan,
                                       const std::vector<TensorData>& inputs,
                                       const std::string& arch = "compute_80",
                                       const CancelToken& cancel = {});

}  // namespace fuselens
