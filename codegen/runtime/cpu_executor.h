// Runs compiled kernels over the tensors of one graph. Two ways:
//   run      checks and binds the inputs, gives every kernel output its own
//            tensor and returns every boundary tensor by ValueId.index (what
//            compare-with-eager needs);
//   runInto  writes the graph outputs into caller-owned tensors and keeps every
//            intermediate in one arena laid out by the buffer plan (the one
//            planner, core/plan/buffer_plan.h: liveness, reuse, in place),
//            and the kernels' scratch in a block of its own (deployment speed).
//            A value whose shape is known only at run time (an If whose
//            branches differ, NonZero, a Loop's outputs) has no place in the
//            arena: only host kernels make or read one, and it lives in a
//            tensor of its own for the run, a graph output included.
// Both point kernels at constants in place, stop between kernels when
// cancelled, and check every allocation (a failure is a Status, not an abort).
// Reshape / Identity outside groups are aliases: they share their source's
// storage while running and get their own copy in run's result.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "codegen/runtime/memory_plan.h"
#include "core/ir/graph.h"
#include "core/support/cancel.h"
#include "core/support/status.h"

namespace fuselens {

struct AlignedBlock;

struct ExecKernel {
  std::string name;
  void (*fn)(void** args) = nullptr;
  std::vector<ValueId> inputs;  // the kernel's params, inputs then outputs
  std::vector<ValueId> outputs;
  // Input params the compiler supplies (prepacked constants), by param position;
  // the graph values in `inputs` fill the other input positions in order.
  std::map<size_t, std::shared_ptr<const TensorData>> prepacked;
  int64_t scratchBytes = 0;  // > 0: one more argument, the scratch base
  // Set for a reference-fallback kernel (host_kernel.h): called instead of fn,
  // on the input tensors (k.inputs order); returns the outputs.
  std::function<Expected<std::vector<TensorData>>(const std::vector<const TensorData*>&)> host;
};

// The cancel token of the run (run or runInto) that is calling a host kernel
// on this thread, so a driver can stop between iterations; outside a run, a
// token nobody cancels.
CancelToken currentRunCancelToken();

class CpuExecutor {
 public:
  // aliases: (value, the value whose storage it shares), in topological order.
  // buffers: the plan of g's run (codegen/runtime/memory_plan.h runPlan).
  CpuExecutor(std::shared_ptr<const Graph> g, std::vector<ExecKernel> kernels,
              std::vector<std::pair<ValueId, ValueId>> aliases,
              std::shared_ptr<const BufferPlan> buffers);

  Expected<std::vector<std::optional<TensorData>>> run(
      const std::map<std::string, TensorData>& inputs, const CancelToken& cancel) const;

  // outputs: by graph-output name; missing ones are allocated, present ones must
  // have the output's dtype and shape.
  Status runInto(const std::map<std::string, TensorData>& inputs,
                 std::map<std::string, TensorData>& outputs, const CancelToken& cancel,
                 std::vector<double>* kernelSeconds = nullptr,
                 std::vector<double>* kernelStarts = nullptr) const;

  const MemoryPlan& memoryPlan() const { return plan_; }
  // The bytes of the arena runInto allocates for intermediates: the plan's
  // arenaBytes, the peak memory-plan reports. Scratch is not in it.
  int64_t arenaBytes() const { return plan_.arenaBytes; }

  // Median seconds of each kernel over `runs` runInto passes (after a warm-up).
  Expected<std::vector<double>> profile(const std::map<std::string, TensorData>& inputs,
                                        int runs) const;
  // Per-kernel medians, the median whole run, the median of each run's own
  // overhead (its time minus its kernels'), and the median run as a trace,
  // all from the same `runs` runs after a warm-up. (compiler.h's
  // ModuleProfile is made of these.)
  Status profileRuns(const std::map<std::string, TensorData>& inputs, int runs,
                     std::vector<double>& kernelMedians, double& runMedian, double& overheadMedian,
                     std::vector<double>& traceStart, std::vector<double>& traceSeconds,
                     double& traceRun) const;

 private:
  Status checkInputs(const std::map<std::string, TensorData>& inputs) const;
  ValueId storageOf(ValueId v) const;
  // Calls kernel k with `data(v)` for its graph values; scratch at `scratch`.
  Status call(const ExecKernel& k, const std::function<void*(ValueId)>& data, void* scratch,
              std::vector<void*>& args) const;
  // A host kernel in the arena runtime: tensors of static shape copied in and
  // out of the arena, those known only at run time read from and kept in
  // `dynamic` (by storage value index).
  Status callHost(const ExecKernel& k, const std::function<void*(ValueId)>& data,
                  std::map<int32_t, TensorData>& dynamic) const;

  std::shared_ptr<const Graph> g_;
  std::vector<ExecKernel> kernels_;
  std::vector<std::pair<ValueId, ValueId>> aliases_;
  std::map<int32_t, ValueId> aliasSource_;
  MemoryPlan plan_;
  std::map<std::string, ValueId> inputByName_;
  // The arena and scratch kept between runs (shared so the executor stays movable).
  struct ArenaCache {
    std::mutex mu;
    std::shared_ptr<AlignedBlock> arena, scratch;
  };
  std::shared_ptr<ArenaCache> arenaCache_ = std::make_shared<ArenaCache>();
};

}  // namespace fuselens
