// The memory of a compiled run, laid out from the one buffer plan
// (core/plan/buffer_plan.h): the planned tensors in one arena at the plan's
// offsets, exactly the plan's arenaBytes (the peak memory-plan reports), and
// the kernels' scratch (packed operands, materialized reductions) in a block
// of its own, sized for the largest kernel, since kernels run one at a time.
// The CPU executor and the exported runtime both use it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/plan/buffer_plan.h"

namespace fuselens {

struct MemoryPlan {
  std::shared_ptr<const BufferPlan> buffers;
  std::map<int32_t, int64_t> offsetOf;  // planned value index -> arena offset
  int64_t arenaBytes = 0;               // buffers->arenaBytes
  int64_t scratchBytes = 0;             // the largest kernel's scratch, rounded to 64
  // For a runtime that allocates one block (export): scratch after the tensors.
  int64_t scratchOffset() const { return (arenaBytes + 63) / 64 * 64; }
  int64_t blockBytes() const { return scratchOffset() + scratchBytes; }
  std::string summary()
      const;  // "arena 1.50 MiB (tensors without reuse: 4.00 MiB), scratch 0.01 MiB"
};

MemoryPlan arenaLayout(std::shared_ptr<const BufferPlan> buffers, int64_t maxScratchBytes);

// The plan a compile of g runs with: `given` (memory-plan's, from the
// pipeline) when it places every value g's run needs, else the planner's own
// plan of g with the default options.
Expected<std::shared_ptr<const BufferPlan>> runPlan(const Graph& g,
                                                    std::shared_ptr<const BufferPlan> given);

}  // namespace fuselens
