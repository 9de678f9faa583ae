// The executor's side of library offload (codegen/cuda/cuda_cublaslt.h): a
// kernel the plan sends to cuBLASLt runs as one cublasLtMatmul on the run's
// stream, through the dlopen'd library (cublaslt_api.h), with the same
// column-major mapping as the bundle's launcher.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_cublaslt.h"

namespace fuselens {

class CudaLtRun {
 public:
  // Loads cuBLASLt and creates a handle; `workspace` (device memory of
  // `workspaceBytes`) must outlive the object. Fails with one sentence.
  static Expected<std::unique_ptr<CudaLtRun>> open(unsigned long long workspace,
                                                   size_t workspaceBytes);
  ~CudaLtRun();
  CudaLtRun(const CudaLtRun&) = delete;
  CudaLtRun& operator=(const CudaLtRun&) = delete;

  // Enqueues `c` on `stream` (a CUstream) with device pointers.
  Status run(const CudaLibraryCall& c, unsigned long long a, unsigned long long b,
             unsigned long long bias, unsigned long long y, void* stream);

 private:
  CudaLtRun() = default;
  void* handle_ = nullptr;
  unsigned long long workspace_ = 0;
  size_t workspaceBytes_ = 0;
  std::vector<void*> descs_, layouts_;  // destroyed with the object
};

// Bytes of device workspace the executor gives cuBLASLt.
inline constexpr size_t kCudaLtWorkspaceBytes = size_t(32) << 20;

}  // namespace fuselens
