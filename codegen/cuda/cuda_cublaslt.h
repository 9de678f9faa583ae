// Library offload for CUDA: MatMul/Gemm groups run as one cublasLtMatmul with
// the epilogue that computes the rest of the group, so a user sees the
// generated kernel and the library side by side on the same graph.
//
// A group goes to cuBLASLt when its body is one MatMul or Gemm followed by a
// chain cuBLASLt's epilogues can express, each op feeding only the next:
//
//   Y = act(alpha * op(A) op(B) + bias)   act: none, Relu, Gelu (tanh form)
//                                         bias: a [N] (or [1, N]) vector,
//                                         Gemm's C or one Add after the product
//
// (CUBLASLT_EPILOGUE_DEFAULT, BIAS, RELU_BIAS, GELU_BIAS, or RELU, GELU
// without a bias), f32 operands, static shapes. Batched MatMul maps to strided
// batches (a 2-D B folds the batch into M; a 2-D A is shared with stride 0).
// Anything else (a residual Add, Where, Mul, an exact-erf Gelu, f16, batch
// dims that broadcast both ways) keeps the generated kernel, and the choice
// records why in one sentence for manifest.json.
//
// Row-major tensors go to column-major cuBLASLt as their transposes:
// Y^T (N x M, ld N) = op(B)^T op(A)^T, so the bias is a per-row vector of D.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "codegen/cuda/cuda_launch_plan.h"

namespace fuselens {

// cuBLASLt's own epilogue values (cublasLt.h, cublasLtEpilogue_t), so the
// generated launcher and the dlopen'd executor pass them through unchanged.
enum class LtEpilogue : int {
  Default = 1,
  Relu = 2,
  Bias = 4,
  ReluBias = 6,
  Gelu = 32,
  GeluBias = 36,
};

// "CUBLASLT_EPILOGUE_RELU_BIAS" and so on.
const char* ltEpilogueName(LtEpilogue e);

// One cublasLtMatmul: Y[b] = act(alpha * op(A[b]) op(B[b]) + bias), row-major,
// b < batch, each operand `stride` elements from one batch to the next.
struct CudaLibraryCall {
  LtEpilogue epilogue = LtEpilogue::Default;
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  int64_t strideA = 0, strideB = 0, strideY = 0;  // elements; 0: shared by every batch
  bool transA = false, transB = false;            // A stored [K, M], B stored [N, K]
  float alpha = 1.0f;
  CudaArg a, b, y;
  bool hasBias = false;
  CudaArg bias;  // N floats, when hasBias
};

struct CudaLibraryOptions {
  std::string mode = "none";  // "cublaslt": every group cuBLASLt can express
  // Group (node) name -> "cublaslt" or "generated"; wins over `mode`.
  std::map<std::string, std::string> groups;
  bool any() const { return mode != "none" || !groups.empty(); }
};

// Parses --cuda-library and the NAME=cublaslt|generated of --cuda-library-group.
Expected<CudaLibraryOptions> parseCudaLibraryOptions(const std::string& mode,
                                                     const std::vector<std::string>& groups);

// Fills plan.library (one choice per kernel) when `o` asks for any offload.
// A group named in o.groups that the graph lacks is an error naming it.
Status applyCudaLibrary(const Graph& g, CudaLaunchPlan& plan, const CudaLibraryOptions& o);

// Why a graph with If, Loop or Scan takes no offload (its kernels are planned
// per segment, so a group is no node of the top-level graph): the sentence
// export, run, compare, compile and tune all give.
std::string cudaLibraryControlFlowRefusal();

// manifest.json's "library" entry of kernel k: {"engine": "cublaslt",
// "epilogue": ...} or {"engine": "generated", "why": ...}; null when plan.library is empty.
nlohmann::json cudaLibraryJson(const CudaLaunchPlan& plan, size_t k);

// Whether some kernel of the plan runs as a library call.
bool cudaLibraryUsed(const CudaLaunchPlan& plan);

// Launcher text (cuda_launcher.cpp): the table of calls and fl_lt_matmul over
// cuBLASLt, unless FL_LT_MATMUL is defined (the host emulation's reference
// GEMM); empty when no kernel is offloaded. `includes` goes before the
// launcher's namespace, `helpers` after its tables.
std::string cudaLibraryIncludes(const CudaLaunchPlan& plan);
std::string cudaLibraryHelpers(const CudaLaunchPlan& plan);
// library.tsv of the bundle, what tests/gpu/run_on_gpu.sh reads: per kernel
// index, name, engine (cublaslt or generated), epilogue, M N K batch, and why
// a MatMul group stays generated. Empty when plan.library is.
std::string cudaLibraryTable(const CudaLaunchPlan& plan);
// CMakeLists.txt lines that link CUDA::cublasLt into lib<name>.so when `used`.
std::string cudaLibraryCMake(bool used, const std::string& name);
// The statement that runs kernel k's call on stream `s` of context `ctx`.
std::string cudaLibraryLaunch(const CudaLaunchPlan& plan, size_t k,
                              const std::function<std::string(const CudaArg&)>& pointer);
// A reference GEMM with the same epilogue semantics behind FL_LT_MATMUL, for
// a host emulation of the CUDA runtime (tests/cuda/cuda_bundle_emulation_test).
std::string cudaLibraryHostEmulation();

}  // namespace fuselens
