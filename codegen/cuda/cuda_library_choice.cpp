// See cuda_library_choice.h: the rule and the timed choice, each with its sentence.
#include "codegen/cuda/cuda_library_choice.h"

#include <cstdio>

#include "codegen/cuda/cuda_cublaslt.h"

namespace fuselens {
namespace {

std::string shapeText(const CudaLibraryCall& c) {
  std::string s =
      "M " + std::to_string(c.m) + ", N " + std::to_string(c.n) + ", K " + std::to_string(c.k);
  return c.batch > 1 ? s + ", batch " + std::to_string(c.batch) : s;
}

}  // namespace

CudaEngineChoice cudaLibraryRule(const CudaLibraryChoice& offload) {
  if (!offload.call) return {false, "cuBLASLt cannot run it: " + offload.why};
  const CudaLibraryCall& c = *offload.call;
  if (c.m <= kCudaLibraryMaxSmallM)
    return {false, "by rule: " + shapeText(c) +
                       " has at most 16 rows, where the generated small-M stage (a column per "
                       "thread) reads B once as a library GEMM would"};
  if (c.m * c.n * c.k * c.batch < kCudaLibraryMinMacs)
    return {false, "by rule: " + shapeText(c) +
                       " is under 2^21 multiply-adds, one launch of generated tiles with no "
                       "library call around it"};
  const std::string rest =
      c.epilogue == LtEpilogue::Default
          ? ""
          : std::string(", and ") + ltEpilogueName(c.epilogue) + " does the rest of the group";
  return {true, "by rule: " + shapeText(c) +
                    " is a large GEMM, where cuBLASLt's tuned kernels win" + rest};
}

CudaEngineChoice cudaLibraryTimed(double libraryMs, double generatedMs) {
  char text[160];
  std::snprintf(text, sizeof text, "timed on the device: cuBLASLt %.4f ms, generated %.4f ms",
                libraryMs, generatedMs);
  return {libraryMs < generatedMs, text};
}

}  // namespace fuselens
