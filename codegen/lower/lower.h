// Lowering: one kernel of the optimized graph (a fused group, or one compute
// op) becomes one LoopFunc whose params are the kernel's inputs then outputs,
// in the node's order. View ops outside groups need no kernel (the executor
// aliases their buffers): `needsKernel` (core/ops/registry.h) says which.
#pragma once

#include <string>

#include "codegen/loop/loop_ir.h"
#include "codegen/schedule/schedule.h"
#include "core/ir/graph.h"
#include "core/support/status.h"

namespace fuselens {

// Lowers node `n` of `g`. The LoopFunc's params skip omitted (invalid) inputs.
// The schedule's templates (MatMul tiling) shape the nests lowering builds;
// applySchedule is still the caller's step for the other loops.
Expected<LoopFunc> lowerKernel(const Graph& g, const Node& n, const std::string& name,
                               const Schedule& sched);
inline Expected<LoopFunc> lowerKernel(const Graph& g, const Node& n, const std::string& name) {
  return lowerKernel(g, n, name, Schedule::defaults());
}

}  // namespace fuselens
