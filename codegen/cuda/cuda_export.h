// Exporting a graph's kernels as CUDA: `<name>.cu` (every kernel's stages),
// `<name>.ptx` when NVRTC is installed, `<name>.cuda.json`, the launch plan a
// host program follows (kernels in order, each stage's grid and block, the
// graph values each param binds, scratch bytes, and per stage the registers
// and spills `ptxas -v` reports for sm_80 and sm_90 when ptxas is installed),
// and the self-contained bundle of cuda_bundle.h (launcher, runner,
// CMakeLists.txt, weights, inputs and references, manifest.json). Files are
// written atomically.
#pragma once

#include <string>
#include <vector>

#include "codegen/cuda/cuda_bundle.h"
#include "codegen/cuda/cuda_c.h"
#include "codegen/cuda/cuda_cublaslt.h"
#include "codegen/cuda/cuda_register_feedback.h"

namespace fuselens {

struct CudaExportOptions {
  std::string outDir;
  std::string name = "model";
  std::string arch = "compute_90";  // NVRTC's virtual architecture for the .ptx
  std::vector<std::string> ptxasArchs = {"sm_80", "sm_90"};
  std::shared_ptr<const BufferPlan> bufferPlan;  // the memory-plan pass's, when it ran
  CudaLibraryOptions library;                    // MatMul/Gemm groups offloaded to cuBLASLt
  int64_t registerBudget = 0;  // registers per thread a kernel may use; 0: its launch's limit
};

struct CudaExportResult {
  std::vector<std::string> files;  // written, in order
  std::string ptxSkipped;  // why no .ptx (or no ptxas figures) was written; empty when it was
  // Kernels ptxas found spilling or over budget (cuda_register_feedback.h).
  std::vector<CudaRegisterVerdict> registers;
};

// `data` holds what the bundle's verify runs on (inputs, references) and the
// origins of every kernel node; exportCuda adds the ptxas figures.
Expected<CudaExportResult> exportCuda(const Graph& g, const CudaExportOptions& opts,
                                      CudaBundleData data = {}, const Progress& progress = {},
                                      const CancelToken& cancel = {});

// The module compiled by NVRTC for each of `sms` and assembled by ptxas -v:
// per sm, every stage function's figures. `ptxText`, already compiled for
// `ptxArch`, is reused for the sm of that architecture. Fails when NVRTC or
// ptxas is absent.
Expected<std::map<std::string, PtxasReport>> ptxasFigures(const std::string& source,
                                                          const std::vector<std::string>& sms,
                                                          const std::string& name = "model.cu",
                                                          const std::string& ptxArch = {},
                                                          const std::string& ptxText = {});

// The launch plan as JSON text (what `<name>.cuda.json` holds).
std::string cudaManifestJson(const Graph& g, const CudaModuleSource& m, const std::string& name,
                             const std::map<std::string, PtxasReport>& ptxas = {});

}  // namespace fuselens
