// The memory plan of a compiled run, and the one planner that makes it. The
// memory-plan pass (passes/memory_plan.cpp) calls it and reports the plan; the
// CPU executor and export (codegen/) lay out their arena from it, or call the
// same planner when the pipeline has no memory-plan pass, so the peak the pass
// reports is the arena that runs.
//
// A run is a list of steps: one per top-level node that needs a kernel
// (needsKernel, core/ops/registry.h), in topological order; a view node makes
// no step, its output aliases its data input. Graph inputs, constants and
// every value whose storage is a graph output live outside the arena (the
// caller's memory), as do values with a dynamic shape (allocated at run time).
//
// Walking the steps, each planned value gets a buffer: in place of an input
// when the step may update in place (an ElemWise/Broadcast op or group with
// one output), the input has the output's dtype size and shape, and this step
// is its last reader; otherwise the smallest free buffer large enough (best
// fit); otherwise a new one. A buffer is freed after the last step that reads
// a value it holds. Buffers are laid out in order in one arena, each rounded
// up to the alignment.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/graph.h"

namespace fuselens {

struct BufferPlan {
  struct Entry {
    ValueId value;
    std::string name;  // the value's name, for display
    int buffer = -1;
    int64_t offset = 0;  // bytes from the arena's start
    int64_t bytes = 0;   // the value's own size
    enum class How { Fresh, Reused, InPlace, Alias } how = How::Fresh;
    ValueId over;  // InPlace: the input it overwrites; Alias: the value it reads
  };
  int64_t alignment = 64;
  std::vector<int64_t> bufferBytes;   // size of each buffer (aligned)
  std::vector<int64_t> bufferOffset;  // where each buffer starts in the arena
  int64_t arenaBytes = 0;             // the sum of the buffer sizes: the peak
  int64_t unsharedBytes = 0;          // every planned value in its own buffer
  int64_t peakLiveBytes = 0;          // the most bytes live at once (a lower bound)
  std::vector<Entry> values;          // in step order
  std::vector<ValueId> skipped;       // dynamic shapes: allocated at run time

  const Entry* find(ValueId v) const;
  // "arena 1.50 MiB (tensors without reuse: 4.00 MiB)"
  std::string summary() const;
};

// One step of a run: the values a kernel reads and writes.
struct PlanStep {
  NodeId node;
  std::vector<ValueId> inputs;  // valid ones only
  std::vector<ValueId> outputs;
  bool inPlace = false;  // may write its output over an input it reads last
};

struct RunSteps {
  std::vector<PlanStep> steps;
  std::vector<std::pair<ValueId, ValueId>> aliases;  // (view output, data input), in order
  std::vector<size_t> aliasBefore;                   // per alias: how many steps run before it
};

// The steps a compiled run of g takes (top level only; a group's body is one step).
Expected<RunSteps> runStepsOf(const Graph& g);

struct PlanOptions {
  int64_t alignment = 64;  // every buffer rounded up to it
  bool inPlace = true;
};

BufferPlan planBuffers(const Graph& g, const RunSteps& run, const PlanOptions& opts = {});

// Does `plan` give a place to every value of `run` that needs one? (A plan
// made for another graph does not; the caller then plans again.)
bool planCovers(const BufferPlan& plan, const Graph& g, const RunSteps& run);

}  // namespace fuselens
