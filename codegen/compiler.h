// The codegen entry point: lowers every kernel of an optimized graph (each
// fused group, and each unfused compute op) to the loop IR, compiles the loop
// IR through LLVM (ORC JIT) and runs it on the CPU executor. LLVM headers stay
// inside codegen/*.cpp: this header is cheap to include.
#pragma once

#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "codegen/schedule.h"
#include "core/ir/graph.h"
#include "core/support/cancel.h"
#include "core/support/status.h"

namespace fuselens {

struct CompileOptions {
  int optLevel = 3;  // LLVM optimization level, 0..3
  // The schedule for every kernel; unset: Schedule::defaults() for the host.
  std::optional<Schedule> schedule;
};

// One launch of the compiled run: a fused group or a single op.
struct KernelInfo {
  std::string name;             // "k0_fused_matmul_add_relu"
  NodeId node;                  // the node in the optimized graph
  std::vector<ValueId> inputs;  // values of the optimized graph
  std::vector<ValueId> outputs;
};

class CompiledModule {
 public:
  virtual ~CompiledModule() = default;
  virtual const std::vector<KernelInfo>& kernels() const = 0;
  virtual std::string loopIrText() const = 0;  // every kernel's loop nest, C-like
  virtual std::string llvmIrText() const = 0;  // the module before JIT
  // Runs the graph on inputs by graph-input name. Returns every tensor at a
  // kernel boundary (graph inputs, kernel outputs), indexed by the optimized
  // graph's ValueId.index.
  virtual Expected<std::vector<std::optional<TensorData>>> run(
      const std::map<std::string, TensorData>& inputs, const CancelToken& cancel = {}) const = 0;
};

// The graph must have static shapes. Ops the lowering does not cover fail with
// a Status naming the node.
Expected<std::unique_ptr<CompiledModule>> compileGraph(const Graph& g, const CompileOptions& opts,
                                                       const Progress& progress = {},
                                                       const CancelToken& cancel = {});

}  // namespace fuselens
