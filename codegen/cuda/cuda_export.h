// Exporting a graph's kernels as CUDA: `<name>.cu` (every kernel's stages),
// `<name>.ptx` when NVRTC is installed, and `<name>.cuda.json`, the launch
// plan a host program follows (kernels in order, each stage's grid and block,
// the graph values each param binds, scratch bytes). Files are written
// atomically.
#pragma once

#include <string>
#include <vector>

#include "codegen/cuda/cuda_c.h"

namespace fuselens {

struct CudaExportOptions {
  std::string outDir;
  std::string name = "model";
  std::string arch = "compute_90";  // NVRTC's virtual architecture for the .ptx
};

struct CudaExportResult {
  std::vector<std::string> files;  // written, in order
  std::string ptxSkipped;          // why no .ptx was written; empty when it was
};

Expected<CudaExportResult> exportCuda(const Graph& g, const CudaExportOptions& opts,
                                      const Progress& progress = {},
                                      const CancelToken& cancel = {});

// The launch plan as JSON text (what `<name>.cuda.json` holds).
std::string cudaManifestJson(const Graph& g, const CudaModuleSource& m, const std::string& name);

}  // namespace fuselens
