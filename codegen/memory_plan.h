// Memory planning for a compiled run: every intermediate tensor (a kernel output
// that is not a graph output) gets an offset in one arena, reusing the bytes of
// tensors whose last reader has run (greedy best-fit over the kernel order, as
// in tinygrad's planner). Kernel scratch (packed operands, materialized
// reductions) is one region after them, sized for the largest kernel, since
// kernels run one at a time. The CPU executor and the exported runtime both
// lay out memory from this plan.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/graph.h"

namespace fuselens {

struct PlannedKernelUse {
  std::vector<ValueId> inputs;   // graph values the kernel reads
  std::vector<ValueId> outputs;  // graph values it writes
  int64_t scratchBytes = 0;
};

struct MemoryPlan {
  static constexpr int64_t kAlign = 64;
  std::map<int32_t, int64_t> offsetOf;  // storage value index -> arena offset
  int64_t scratchOffset = 0;            // the scratch region, after the tensors
  int64_t arenaBytes = 0;               // tensors + scratch
  int64_t unsharedBytes = 0;            // what the tensors would take without reuse
  std::string summary() const;          // "arena 1.5 MiB (tensors without reuse: 4.0 MiB)"
};

// aliases: (value, the value whose storage it shares). Values whose storage is a
// graph output, input or constant are not placed.
MemoryPlan planMemory(const Graph& g, const std::vector<PlannedKernelUse>& kernels,
                      const std::vector<std::pair<ValueId, ValueId>>& aliases);

}  // namespace fuselens
