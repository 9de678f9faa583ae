// cuBLASLt offload for the faces (codegen/cuda/cuda_cublaslt.h), beyond
// export: the option `run | compare --engine cuda` take (Session::cudaRun),
// what `compile --target cuda` reports per MatMul/Gemm group, and the tuner's
// choice between the library and the generated kernel per group
// (codegen/cuda/cuda_library_choice.h). Every flag value is read by export's
// parser, so a bad one reads the same sentence on every command.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_cublaslt.h"
#include "session/session.h"

namespace fuselens {

// The request as options, or one sentence naming the bad --cuda-library or
// --cuda-library-group value.
Expected<CudaLibraryOptions> cudaLibraryOptions(const CudaRunRequest& request);

// Why offload cannot apply to the final graph (it has If, Loop or Scan, whose
// kernels are planned per segment), in one sentence; empty when it can.
std::string cudaOffloadRefusal(const Session& s);

// The final graph's launch plan (the memory-plan pass's arena when it ran
// last) with `o` applied. Offload asked on a graph cudaOffloadRefusal names
// is that sentence.
Expected<CudaLaunchPlan> cudaPlanWithLibrary(const Session& s, const CudaLibraryOptions& o,
                                             const Progress& progress = {},
                                             const CancelToken& cancel = {});

// The inputs in the graph's order; a missing one is a sentence.
Expected<std::vector<TensorData>> cudaFeed(const Graph& g,
                                           const std::map<std::string, TensorData>& inputs);

// One MatMul/Gemm group of the plan and the engine that runs it.
struct CudaLibraryRow {
  std::string kernel;      // "k1_fused_gemm_relu"
  std::string group;       // the node name --cuda-library-group takes
  nlohmann::json library;  // manifest.json's "library" entry: engine, epilogue or why
};

// What `compile --target cuda` reports: per MatMul/Gemm group of the final graph.
Expected<std::vector<CudaLibraryRow>> cudaLibraryRows(const Session& s,
                                                      const CudaRunRequest& request,
                                                      const Progress& progress = {},
                                                      const CancelToken& cancel = {});

// The tuner's choice for one MatMul/Gemm group.
struct CudaLibraryTuneRow {
  std::string kernel, group;
  bool library = false;                     // cuBLASLt, else the generated kernel
  std::string why;                          // one sentence: the rule or the two times
  double libraryMs = -1, generatedMs = -1;  // when timed on a device
};

struct CudaLibraryTuneReport {
  std::vector<CudaLibraryTuneRow> rows;
  std::string note;  // why the choice is by rule (no device); empty when timed
  // The choice as --cuda-library-group values: "NAME=cublaslt", "NAME=generated".
  std::vector<std::string> groupValues() const;
};

// Per MatMul/Gemm group of the final graph: on a device, both engines timed
// (median of `runs` runs on seeded inputs) through the executor; without one,
// the rule, with `note` saying why. A graph cudaOffloadRefusal names fails
// with that sentence.
Expected<CudaLibraryTuneReport> tuneCudaLibrary(const Session& s, int runs = 5,
                                                const Progress& progress = {},
                                                const CancelToken& cancel = {});

}  // namespace fuselens
