// The codegen entry point: lowers every kernel of an optimized graph (each
// fused group, and each unfused compute op) to the loop IR, compiles the loop
// IR through LLVM (ORC JIT) and runs it on the CPU executor. LLVM headers stay
// inside codegen/*.cpp: this header is cheap to include.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/schedule/schedule.h"
#include "core/ir/graph.h"
#include "core/plan/buffer_plan.h"
#include "core/support/cancel.h"
#include "core/support/status.h"

namespace fuselens {

struct SymbolicKernels;  // codegen/symbolic/symbolic_plan.h

struct CompileOptions {
  int optLevel = 3;  // LLVM optimization level, 0..3
  // The schedule for every kernel; unset: Schedule::defaults() for the host.
  std::optional<Schedule> schedule;
  // A tuning log (codegen/schedule/tuner.h) whose schedules replace `schedule` for the
  // kernels it has measured on this host. Unset: $FUSELENS_TUNING_LOG when set;
  // "": none.
  std::optional<std::string> tuningLog;
  // Nodes the lowering cannot handle run through the op registry's eager kernel
  // as labelled host kernels (KernelInfo::fallback) instead of failing the
  // compile. Off: such a node is a compile error (what coverage tests want).
  bool fallback = true;
  // Nodes whose control is decided at run time (If/Loop/Scan, NonZero, Range,
  // run-time shapes) run as driver kernels (codegen/driver/driver_kernel.h) whose
  // arithmetic is compiled. Off (the CUDA emitter): such nodes are not lowered.
  bool drivers = true;
  // The memory-plan pass's plan of this graph (PassRecord::bufferPlan). Unset,
  // or made for another graph: the compiler calls the same planner itself.
  std::shared_ptr<const BufferPlan> bufferPlan;
  // Symbolic kernels (`--dynamic`): a kernel the table has a symbolic form of
  // runs as that form's instance at this shape, so every shape shares one
  // compiled kernel (codegen/symbolic/symbolic_kernel.h). Null: none.
  std::shared_ptr<const SymbolicKernels> symbolic;
};

// One launch of the compiled run: a fused group or a single op.
struct KernelInfo {
  std::string name;             // "k0_fused_matmul_add_relu"
  NodeId node;                  // the node in the optimized graph
  std::vector<ValueId> inputs;  // values of the optimized graph
  std::vector<ValueId> outputs;
  // Not compiled: the node runs through its eager kernel (reference fallback),
  // because lowering said `fallbackReason`. Its outputs are not codegen's work.
  bool fallback = false;
  std::string fallbackReason;
  // Compiled, but driven from the host at run time (driver_kernel.h): which
  // branch, how many iterations, how large an output. Counted as codegen's work.
  bool driver = false;
  std::string driverSummary;  // "If: both branches compiled (3 + 2 kernels)"
};

// The label every tensor of a fallback kernel carries in reports.
inline constexpr const char* kFallbackLabel = "not compiled (reference fallback)";
// "k3_nonzero (NonZero), k5_loop (Loop)": the fallback kernels of a module; empty when none.
std::string fallbackKernelList(const std::vector<KernelInfo>& kernels);

// Seconds per compile step, and how the backend got each kernel's code.
struct CompileStats {
  double lowerSeconds = 0;         // graph -> loop IR, schedules included
  double llvmEmitSeconds = 0;      // kernel keys, loop IR -> LLVM IR (summed over threads)
  double llvmOptimizeSeconds = 0;  // the -O pipeline (summed over threads)
  double llvmCodegenSeconds = 0;   // machine code (summed over threads) and JIT linking
  double llvmWallSeconds = 0;      // the whole LLVM backend, start to end
  // Kernels: every function the run calls; unique: distinct keys among them
  // (structurally identical kernels share one); cached: unique ones whose
  // object came from the disk cache; compiled: unique ones LLVM compiled now.
  size_t kernels = 0, uniqueKernels = 0, cachedKernels = 0, compiledKernels = 0;
  // Kernels that ran as a symbolic kernel's instance (CompileOptions::symbolic),
  // and of them those whose lowering at this shape matched the forms exactly.
  size_t symbolicKernels = 0, verifiedSymbolic = 0;
  int compileThreads = 1;
  std::string cacheDir;  // where compiled kernels are cached; empty when off
};
// "120 kernels: 14 unique, 10 cached, 4 compiled on 2 threads; lower 0.21 s,
// LLVM 0.84 s": one line for both faces.
std::string compileStatsText(const CompileStats& s);

// What one run of a kernel must move and compute, for a roofline: flops are
// the floating-point operations of its loop IR (an FMA is two), each weighted
// by its loop trip counts; bytes are its inputs and outputs once each (the
// traffic no schedule can avoid). Zero flops: not counted (host kernels).
struct KernelCost {
  double flops = 0;
  double bytes = 0;
};

// Timed runs of a compiled module (runInto, after a warm-up), each with
// per-kernel clocks.
struct ModuleProfile {
  std::vector<double> kernelSeconds;  // median per kernel, kernels() order
  double runSeconds = 0;              // median whole run
  double overheadSeconds = 0;         // median over runs of (the run - its kernels)
  // The run of median length, per kernel: start and length from the run's start.
  std::vector<double> traceStart, traceSeconds;
  double traceRunSeconds = 0;
};

class CompiledModule {
 public:
  virtual ~CompiledModule() = default;
  virtual const std::vector<KernelInfo>& kernels() const = 0;
  virtual std::string loopIrText() const = 0;  // every kernel's loop nest, C-like
  virtual std::string llvmIrText() const = 0;  // the module before JIT
  virtual CompileStats stats() const { return {}; }
  // Runs the graph on inputs by graph-input name. Returns every tensor at a
  // kernel boundary (graph inputs, kernel outputs), indexed by the optimized
  // graph's ValueId.index.
  virtual Expected<std::vector<std::optional<TensorData>>> run(
      const std::map<std::string, TensorData>& inputs, const CancelToken& cancel = {}) const = 0;
  // Runs into output tensors by graph-output name (allocated when missing; when
  // present they must match the graph's dtype and shape). Intermediates live in
  // one arena from the memory plan and are not returned: the deployment path.
  virtual Status runInto(const std::map<std::string, TensorData>& inputs,
                         std::map<std::string, TensorData>& outputs,
                         const CancelToken& cancel = {}) const;
  // Median seconds per kernel (kernels() order) over `runs` runInto passes;
  // what per-group benchmark rows and a profile view show.
  virtual Expected<std::vector<double>> profileKernels(
      const std::map<std::string, TensorData>& inputs, int runs) const {
    return Status::error("this compiled module cannot profile its kernels");
  }
  // Median kernel times, whole-run times and one traced run; what `profile` shows.
  virtual Expected<ModuleProfile> profile(const std::map<std::string, TensorData>& inputs,
                                          int runs) const {
    return Status::error("this compiled module cannot profile its kernels");
  }
  // Per kernel (kernels() order); empty when unknown.
  virtual std::vector<KernelCost> kernelCosts() const { return {}; }
  // "arena 1.50 MiB (tensors without reuse: 4.00 MiB)"; empty when not planned.
  virtual std::string memoryPlanText() const { return {}; }
  // The bytes of the arena runInto allocates for intermediates: the buffer
  // plan's peak (memory-plan's "peak bytes after"); -1 when not planned.
  virtual int64_t arenaBytes() const { return -1; }
};

// The graph must have static shapes. Ops the lowering does not cover fail with
// a Status naming the node.
Expected<std::unique_ptr<CompiledModule>> compileGraph(const Graph& g, const CompileOptions& opts,
                                                       const Progress& progress = {},
                                                       const CancelToken& cancel = {});

}  // namespace fuselens
