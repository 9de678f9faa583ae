// The self-contained CUDA bundle `export --target cuda` writes beside the
// .cu/.ptx/.cuda.json: everything a machine with the CUDA toolkit alone needs
// to build the graph into a library and check it against the reference.
//
//   <name>_launcher.h     the C API: <name>_create(&ctx, weights path),
//                         <name>_run(ctx, host inputs, host outputs),
//                         <name>_run_device(ctx, device pointers, stream),
//                         <name>_destroy, <name>_last_error, tensor and kernel
//                         tables, per-kernel times of the last run (events)
//   <name>_launcher.cu    includes <name>.cu, allocates one device arena of the
//                         memory plan's size (tensors, then scratch) and
//                         launches every stage with its planned grid and block
//   <name>.weights        constants and prepacked operands, one blob
//   <name>_runner.cu      `verify` (compare's columns and verdict words) and `bench`
//   CMakeLists.txt        builds lib<name>.so and <name>_runner with nvcc (sm_80, sm_90)
//   inputs/<i>.npy        the inputs verify runs on
//   reference/<i>.exact.npy, <i>.sample.npy   per output, the f64 run and the
//                         f32-summing sample (as f64): what rounding verdicts need
//   manifest.json         groups -> kernels -> launch configuration -> origins
//                         (and, with --cuda-library, per group "library": cuBLASLt
//                         and its epilogue, or why the generated kernel stays)
//   library.tsv           with --cuda-library: the same per kernel, for tests/gpu/run_on_gpu.sh
//
// A graph with If or Loop nodes (codegen/cuda/cuda_program.h) gets the same
// files; its launcher runs host code between kernel segments, its header adds
// <name>_output_shape, and its manifest lists programs -> steps -> kernels.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_launch_plan.h"
#include "codegen/cuda/ptxas.h"

namespace fuselens {

// What the bundle is checked with; tensors in graph order. Empty vectors:
// no inputs/ or reference/ is written (and `verify` says it cannot run).
struct CudaBundleData {
  std::vector<TensorData> inputs;
  std::vector<TensorData> exact, sample;  // per output
  // Float storage between kernels (--precision): its ulp is the verdicts'
  // floor (core/compare/storage_floor.h), written as reference/storage.txt.
  DType storage = DType::F32;
  // Per kernel node of the optimized graph: the imported node names it stands for.
  std::map<int32_t, std::vector<std::string>> origins;
  // Per sm ("sm_80"): ptxas figures of every stage function.
  std::map<std::string, PtxasReport> ptxas;
};

// Writes the bundle's files into `dir` atomically; returns their paths. A
// control-flow program (cuda_program.h) passes its flat plan with its own
// launcher source and manifest text.
Expected<std::vector<std::string>> writeCudaBundle(const Graph& g, const CudaLaunchPlan& plan,
                                                   const CudaBundleData& data,
                                                   const std::string& dir, const std::string& name,
                                                   const std::string& launcherSource = {},
                                                   const std::string& manifest = {},
                                                   const std::string& launcherHeader = {});

// The launcher's header and source, the runner, the CMakeLists.txt (exposed for tests).
std::string cudaLauncherHeader(const CudaLaunchPlan& plan, const std::string& name);
std::string cudaLauncherSource(const CudaLaunchPlan& plan, const std::string& name);
std::string cudaBundleRunnerSource(const std::string& name);
std::string cudaBundleCMake(const std::string& name);

}  // namespace fuselens
