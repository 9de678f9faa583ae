// memory-plan: the memory plan of a compiled run of this graph, made by the one
// buffer planner (core/plan/buffer_plan.h) that the CPU executor and export
// also use, so the peak reported here is the arena that runs. It plans the
// kernel-boundary values of the top-level graph (the outputs of the nodes that
// need a kernel, fused groups included; values inside a group's body are
// registers, not buffers).
//
// Walking the kernels in topological order, each planned value gets a buffer:
// in place of one of its node's inputs when the node is elementwise (an
// ElemWise/Broadcast op, or a Fused group of kind ElemWise/Broadcast, with one
// output), the input has the output's shape and dtype size, and this node
// reads it last; otherwise the smallest freed buffer that is large enough
// (best fit); otherwise a new buffer. A buffer is freed after the last node
// that reads any value it holds. Graph inputs, constants and graph outputs
// (and what they alias) live in the caller's memory, not the arena. Outputs
// of view ops (Reshape/Identity/Flatten/Squeeze/Unsqueeze: the op registry's
// Launch::View) alias their input's buffer and extend its life. Values with a
// dynamic or unknown shape are skipped with a note (run-time allocation).
//
// Keeps: the graph as it is, so the pass never changes meaning and reports
// changed=false. The plan is a report (stats and one note per buffer,
// "buffer 2 (4096 bytes): %a, %c (in place of %a)") and data: a BufferPlan
// (value -> buffer, arena offset, size) left in PassContext::bufferPlan, which
// the pass manager keeps in the PassRecord and the compiler runs with.
// Stats: "values planned", "aliases", "buffers", "in-place", "values skipped
// (dynamic shape)", "peak bytes before" (the sum of the sizes of all planned
// values: every value its own buffer), "peak bytes after" (the arena: the sum
// of the buffer sizes, what the CPU executor allocates) and "peak live bytes"
// (the most bytes live at once, a lower bound).
// Must run after fuse-ops (and anything else that changes kernels): it plans
// the buffers between kernels, so a later fusion would make the plan stale.
// Options: alignment=N rounds every buffer up to N bytes (default 64, the
// executor's); in-place=0 turns in-place updates off (default 1).
#pragma once

#include "passes/pass.h"

namespace fuselens {

struct MemoryPlanOptions {
  int64_t alignment = 64;
  bool inPlace = true;
};

class MemoryPlanPass : public Pass {
 public:
  explicit MemoryPlanPass(MemoryPlanOptions opts = {}) : opts_(opts) {}
  std::string name() const override { return "memory-plan"; }
  PassResult run(Graph& g, PassContext& ctx) override;

 private:
  MemoryPlanOptions opts_;
};

}  // namespace fuselens
