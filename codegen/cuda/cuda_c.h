// The CUDA C backend's source emitter: every kernel of a graph's kernel plan,
// lowered with the GPU schedule, becomes CUDA C that NVRTC compiles to PTX
// (codegen/cuda/nvrtc.h) and nvcc to a .so.
//
// Mapping. A kernel's top-level statements run one after another and may read
// what the previous one wrote, so each becomes its own `__global__` stage,
// launched in order (a launch boundary is the grid-wide barrier between them).
// A stage whose loop the schedule marks Parallel is a grid-stride loop over
// that loop's counter; any other stage runs on one thread. Four loop shapes
// get GPU schedules of their own: contractions and convs (an implicit GEMM)
// become shared-memory tiled stages (cuda_matmul.cpp, cuda_conv.cpp), row
// reductions one block per row (cuda_rows.cpp), elementwise nests with a
// contiguous operand 16 bytes a thread (cuda_vector.cpp). Inner loops stay
// serial loops in each thread; Local buffers become per-thread arrays, Temp
// buffers live in one global scratch area at the offsets of scratchLayout.
// Arithmetic follows the loop IR's definitions exactly as the LLVM backend
// does (max as a > b ? a : b, integer division by 0 as division by 1, ONNX
// casts with saturation, f16/bf16 rounded to nearest even), so the same
// kernel gives the same numbers on both backends up to libm differences.
//
// The emitted source only uses plain C++ and the CUDA built-ins blockIdx,
// blockDim, gridDim and threadIdx, so it also compiles as host C++ with
// cudaHostEmulationPrelude(): the tests run the CUDA C on the CPU that way and
// compare it with the eager reference on machines without a GPU.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codegen/compiler.h"
#include "codegen/loop/loop_ir.h"

namespace fuselens {

// One launch of a kernel's stage: `grid` blocks of `block` threads.
struct CudaStage {
  std::string name;    // the __global__ function
  int64_t extent = 1;  // iterations of its grid-stride loop (1: a single-thread stage)
  int64_t grid = 1, block = 1;
  // A 2-D or 3-D grid's other dims (tiled MatMul: row tiles on y, batch on
  // z), each at most 65535; the stage grid-strides over every dim.
  int64_t gridY = 1, gridZ = 1;
};

// One kernel of the plan in CUDA C. Every stage takes the kernel's params in
// order (inputs, then outputs) and then the scratch pointer.
struct CudaKernel {
  std::string name;
  std::vector<CudaStage> stages;
  std::vector<DType> paramTypes;  // per param, the element type
  std::vector<int64_t> paramElements;
  std::vector<int32_t> prepackedParams;  // params whose data the compiler supplies
  std::vector<std::shared_ptr<const TensorData>> prepackedData;  // per prepackedParams entry
  int64_t scratchBytes = 0;
};

struct CudaModuleSource {
  std::string source;  // the .cu text: prelude, then every kernel's stages
  std::vector<CudaKernel> kernels;
  std::vector<KernelInfo> infos;  // per kernel, what it reads and writes in the graph
  std::vector<std::pair<ValueId, ValueId>> aliases;  // (view output, data input), in order
};

// The schedule CUDA lowering uses: outermost loops parallel whatever their
// size, no CPU register tiling (the tile loops would run serially per thread).
Schedule cudaSchedule();
// The options CUDA lowering plans kernels with: cudaSchedule(), no CPU tuning
// log, and neither reference fallback nor driver kernels (host code).
CompileOptions cudaCompileOptions();

// Emits one loop function as CUDA C stages (no prelude); `from`, the ONNX node
// names the kernel stands for, opens every stage as a `// from:` comment.
Expected<CudaKernel> emitCudaKernel(const LoopFunc& f, std::string* source,
                                    const std::string& from = {});

// Lowers every kernel of the optimized graph `g` with cudaSchedule() and emits
// them as one .cu text. Ops that codegen cannot lower fail with their node named.
// `kernelPrefix` opens every kernel's name, so several modules share one .cu
// (the control-flow program's segments, cuda_program.h).
Expected<CudaModuleSource> emitCudaModule(const Graph& g, const Progress& progress = {},
                                          const CancelToken& cancel = {},
                                          const std::string& kernelPrefix = {});

// The C type the emitted code stores a dtype in ("float", "fl_f16", ...).
const char* cudaTypeName(DType t);

// Type names and helper functions every emitted file starts with.
std::string cudaPrelude();
// Definitions that make emitted CUDA C compile as host C++ (the tests' check).
std::string cudaHostEmulationPrelude();

}  // namespace fuselens
