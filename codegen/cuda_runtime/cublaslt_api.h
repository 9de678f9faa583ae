// cuBLASLt, loaded at run time with dlopen("libcublasLt.so.13", then .so.12
// and .so) like the driver (cuda_driver.h): FuseLens links no CUDA library.
// Handles are opaque pointers and enums plain ints here, so no CUDA header is
// needed; the values below are cublasLt.h's, and cuda_cublaslt_abi_test
// checks them (and the heuristic result's size) against the installed header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fuselens::cublaslt {

using Status = int;    // cublasStatus_t; 0 is CUBLAS_STATUS_SUCCESS
using Handle = void*;  // cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, ...

// The enum values the executor passes (cublasLt.h, cublas_api.h, library_types.h).
inline constexpr int kComputeF32 = 68;        // CUBLAS_COMPUTE_32F
inline constexpr int kR32F = 0;               // CUDA_R_32F
inline constexpr int kOpN = 0, kOpT = 1;      // CUBLAS_OP_N, CUBLAS_OP_T
inline constexpr int kDescTransA = 3;         // CUBLASLT_MATMUL_DESC_TRANSA
inline constexpr int kDescTransB = 4;         // CUBLASLT_MATMUL_DESC_TRANSB
inline constexpr int kDescEpilogue = 7;       // CUBLASLT_MATMUL_DESC_EPILOGUE
inline constexpr int kDescBiasPointer = 8;    // CUBLASLT_MATMUL_DESC_BIAS_POINTER
inline constexpr int kLayoutBatchCount = 5;   // CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT
inline constexpr int kLayoutBatchStride = 6;  // CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET
inline constexpr int kPrefMaxWorkspace = 1;   // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES

// cublasLtMatmulHeuristicResult_t, field for field.
struct HeuristicResult {
  uint64_t algo[8];  // cublasLtMatmulAlgo_t
  size_t workspaceSize;
  Status state;
  float wavesCount;
  int reserved[4];
};

struct Api {
  Status (*create)(Handle*) = nullptr;
  Status (*destroy)(Handle) = nullptr;
  Status (*descCreate)(Handle*, int computeType, int scaleType) = nullptr;
  Status (*descSetAttribute)(Handle, int, const void*, size_t) = nullptr;
  Status (*descDestroy)(Handle) = nullptr;
  Status (*layoutCreate)(Handle*, int type, uint64_t rows, uint64_t cols, int64_t ld) = nullptr;
  Status (*layoutSetAttribute)(Handle, int, const void*, size_t) = nullptr;
  Status (*layoutDestroy)(Handle) = nullptr;
  Status (*prefCreate)(Handle*) = nullptr;
  Status (*prefSetAttribute)(Handle, int, const void*, size_t) = nullptr;
  Status (*prefDestroy)(Handle) = nullptr;
  Status (*getHeuristic)(Handle, Handle, Handle, Handle, Handle, Handle, Handle, int,
                         HeuristicResult*, int*) = nullptr;
  Status (*matmul)(Handle, Handle, const void*, const void*, Handle, const void*, Handle,
                   const void*, const void*, Handle, void*, Handle, const void* algo,
                   void* workspace, size_t workspaceBytes, void* stream) = nullptr;
};

// The loaded API, or nullptr with `why` set to one sentence ("no cuBLASLt:
// libcublasLt.so.13 cannot be loaded ..."). Loaded once per process.
const Api* library(std::string* why);

}  // namespace fuselens::cublaslt
