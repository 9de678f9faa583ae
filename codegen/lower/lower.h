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

// A tapped variant of a fused group (session/tap_compare.h) carries this
// attribute: its last `tap_outputs` outputs (node and body alike) are taps,
// values computed inside the group that lowering also stores to those extra
// buffers, where they are computed, without changing the group's own loops.
inline constexpr const char* kTapOutputsAttr = "tap_outputs";
// How many of n's outputs are taps: 0 for every node that is not a tapped variant.
inline size_t tapOutputCount(const Node& n) {
  int64_t k = n.attrs.getInt(kTapOutputsAttr, 0);
  return k > 0 && size_t(k) <= n.outputs.size() ? size_t(k) : 0;
}

// Lowers node `n` of `g`. The LoopFunc's params skip omitted (invalid) inputs.
// The schedule's templates (MatMul tiling) shape the nests lowering builds;
// applySchedule is still the caller's step for the other loops.
Expected<LoopFunc> lowerKernel(const Graph& g, const Node& n, const std::string& name,
                               const Schedule& sched);
inline Expected<LoopFunc> lowerKernel(const Graph& g, const Node& n, const std::string& name) {
  return lowerKernel(g, n, name, Schedule::defaults());
}

}  // namespace fuselens
