// Where every argument of every CUDA launch points, for a host that runs a
// graph's kernels on a GPU: the generated launcher of the export bundle
// (cuda_bundle.h) and the driver-API executor both follow this one plan.
//
// Memory is the CPU executor's: one device arena laid out from the memory plan
// (codegen/runtime/memory_plan.h), the kernels' scratch after the tensors;
// graph inputs and outputs in the caller's buffers; constants and compiler
// prepacked operands in one weights blob, uploaded once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_c.h"
#include "codegen/runtime/memory_plan.h"

namespace fuselens {

// What one kernel argument points at.
struct CudaArg {
  enum class Kind { Input, Output, Arena, Weights };
  Kind kind = Kind::Arena;
  int64_t index = 0;  // Input/Output: position in the graph's list; Arena/Weights: byte offset
};

struct CudaTensorSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t bytes = 0;
};

struct CudaLibraryCall;  // cuda_cublaslt.h

// Per kernel when library offload was asked for (cuda_cublaslt.h): the call
// that replaces its stages, or why the generated kernel runs.
struct CudaLibraryChoice {
  std::shared_ptr<const CudaLibraryCall> call;  // null: the generated kernel runs
  std::string why;                              // one sentence when call is null
};

struct CudaLaunchPlan {
  CudaModuleSource module;
  std::vector<std::vector<CudaArg>> args;  // per kernel: its params, then the scratch pointer
  std::vector<unsigned char> weights;      // every constant and prepacked operand, 256-aligned
  MemoryPlan memory;                       // arena (tensors, then scratch): memory.blockBytes()
  std::vector<CudaTensorSpec> inputs, outputs;
  // Outputs whose storage is an input, a constant or another output: copied
  // device to device after the last kernel.
  struct OutputCopy {
    int64_t output = 0;
    CudaArg from;
    int64_t bytes = 0;
  };
  std::vector<OutputCopy> copies;
  // Per kernel: {M, N, K} when its group computes a MatMul or Gemm (what a
  // cuBLASLt baseline is timed with), else empty.
  std::vector<std::vector<int64_t>> gemmShapes;
  // Per kernel (empty: no offload asked): see applyCudaLibrary in cuda_cublaslt.h.
  std::vector<CudaLibraryChoice> library;
};

// Emits the CUDA module of `g` and places every argument, the arena laid out
// from `given` (the memory-plan pass's plan) when it covers g, else from the
// planner's own plan. Dynamic shapes and values without a place fail with a
// sentence naming them.
Expected<CudaLaunchPlan> planCudaLaunches(const Graph& g,
                                          std::shared_ptr<const BufferPlan> given = nullptr,
                                          const Progress& progress = {},
                                          const CancelToken& cancel = {},
                                          const std::string& kernelPrefix = {});

}  // namespace fuselens
