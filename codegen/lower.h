// Lowering: one kernel of the optimized graph (a fused group, or one compute
// op) becomes one LoopFunc whose params are the kernel's inputs then outputs,
// in the node's order. Reshape-like ops (Reshape, Squeeze, Unsqueeze, Flatten)
// and Identity outside groups need no kernel (the executor aliases their
// buffers): `isAliasNode` says which nodes get none.
#pragma once

#include <string>

#include "codegen/loop_ir.h"
#include "codegen/schedule.h"
#include "core/ir/graph.h"
#include "core/support/status.h"

namespace fuselens {

bool isAliasNode(const Node& n);  // top-level Reshape, Identity, Squeeze, Unsqueeze, Flatten

// Lowers node `n` of `g`. The LoopFunc's params skip omitted (invalid) inputs.
// The schedule's templates (MatMul tiling) shape the nests lowering builds;
// applySchedule is still the caller's step for the other loops.
Expected<LoopFunc> lowerKernel(const Graph& g, const Node& n, const std::string& name,
                               const Schedule& sched);
inline Expected<LoopFunc> lowerKernel(const Graph& g, const Node& n, const std::string& name) {
  return lowerKernel(g, n, name, Schedule::defaults());
}

}  // namespace fuselens
