// Internal to lowering: the pieces lower.cpp composes (checking a body, planning
// which reductions take an elementwise epilogue).
#pragma once

#include <vector>

#include "codegen/lower/compute.h"

namespace fuselens {

// Every op lowerable, shapes static and consistent, dtypes handled.
Status checkKernelBody(const Graph& body, const std::vector<NodeId>& order);

// Which reduction results are materialized and which are fused into the
// store of a kernel output as the accumulator of its epilogue.
struct FusionPlan {
  // epilogueOf[output value index] = the reduction value computed in its loop nest.
  std::map<int32_t, ValueId> epilogueOf;
  // Reduction values that need a buffer (a temp, or their output buffer).
  std::vector<ValueId> materialized;
};
// `outputs`: the kernel's own outputs (the body's, less any taps).
FusionPlan planFusion(const Graph& body, const std::vector<NodeId>& order,
                      const std::vector<ValueId>& outputs);
// The fused accumulator (a value of plan.epilogueOf) that computing v inline
// reads, if any: a tap of v can only be stored in that accumulator's epilogue,
// since the accumulator exists nowhere else.
std::optional<ValueId> fusedAccumulatorOf(const Graph& body, const FusionPlan& plan, ValueId v);

}  // namespace fuselens
