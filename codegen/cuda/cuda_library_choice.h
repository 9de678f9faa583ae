// The tuner's choice between a MatMul/Gemm group's generated kernel and its
// cuBLASLt call (cuda_cublaslt.h), per group. On a device both are timed
// through the executor and the faster one wins; without one nothing can be
// timed, so a rule decides from the call's shape:
//
//   cuBLASLt cannot express the group      -> generated (applyCudaLibrary's why)
//   M <= 16 rows (a GEMV, a decode step)   -> generated: the small-M stage
//                                             (a column per thread) is already
//                                             bound by reading B once
//   M * N * K * batch < 2^21 multiply-adds -> generated: one launch of 64x64
//                                             tiles, no library call overhead
//   otherwise                              -> cuBLASLt, its epilogue doing the rest
//
// The result is what `--cuda-library-group NAME=cublaslt|generated` says.
#pragma once

#include <cstdint>
#include <string>

#include "codegen/cuda/cuda_launch_plan.h"

namespace fuselens {

struct CudaEngineChoice {
  bool library = false;  // true: cuBLASLt, false: the generated kernel
  std::string why;       // one sentence
};

// At most this many rows keep the generated small-M stage (cuda_matmul_small.cpp).
inline constexpr int64_t kCudaLibraryMaxSmallM = 16;
// Fewer multiply-adds than this keep the generated kernel.
inline constexpr int64_t kCudaLibraryMinMacs = int64_t(1) << 21;

// The rule above for one kernel's offload choice (made with mode "cublaslt").
CudaEngineChoice cudaLibraryRule(const CudaLibraryChoice& offload);

// The faster of the two as timed on a device (milliseconds per run).
CudaEngineChoice cudaLibraryTimed(double libraryMs, double generatedMs);

}  // namespace fuselens
