// memory-plan: liveness analysis and buffer assignment for the kernel-boundary
// values of the top-level graph (the outputs of top-level nodes, fused groups
// included; values inside a group's body are registers, not buffers).
//
// Walking the nodes in topological order, each planned value gets a buffer:
// in place of one of its node's inputs when the node is elementwise (an
// ElemWise/Broadcast op, or a Fused group of kind ElemWise/Broadcast), the
// output has the input's byte size, and that input's buffer is last read by
// this node; otherwise the smallest freed buffer that is large enough
// (best fit); otherwise a new buffer. A buffer is freed after the last node
// that reads any value it holds. Graph inputs and constants are not planned;
// graph outputs live to the end, so their buffers are never reused. Outputs of
// Reshape/Identity/Flatten/Squeeze/Unsqueeze alias their input's buffer and
// extend its life. Values with a dynamic or unknown shape are skipped with a
// note (they would need run-time allocation).
//
// Keeps: the graph as it is, so the pass never changes meaning and reports
// changed=false. The plan is a report (stats and one note per buffer,
// "buffer 2 (4096 bytes): %a, %c (in place of %a)") and data: a BufferPlan
// (buffer_plan.h: value -> buffer, arena offset, size) left in
// PassContext::bufferPlan, which the pass manager keeps in the PassRecord,
// for codegen to read. (The IR text has no graph attributes to carry it.)
// Stats: "values planned", "aliases", "buffers", "in-place", "values skipped
// (dynamic shape)", "peak bytes before" (the sum of the sizes of all planned
// values: every value its own buffer), "peak bytes after" (the sum of the
// buffer sizes) and "peak live bytes" (the most bytes live at once, the lower
// bound for plans without in-place updates: each value held from its node
// to its last reader, a node's inputs and outputs together).
// Must run after fuse-ops (and anything else that changes kernels): it plans
// the buffers between kernels, so a later fusion would make the plan stale.
// Options: alignment=N rounds every buffer up to N bytes (default 1);
// in-place=0 turns in-place updates off (default 1).
#pragma once

#include "passes/pass.h"

namespace fuselens {

struct MemoryPlanOptions {
  int64_t alignment = 1;
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
