// See memory_plan.h. The planning itself is core/plan/buffer_plan.cpp.
#include "codegen/runtime/memory_plan.h"

#include <cstdio>

namespace fuselens {

std::string MemoryPlan::summary() const {
  std::string s = buffers ? buffers->summary() : "arena 0.00 MiB";
  if (scratchBytes == 0) return s;
  char buf[64];
  std::snprintf(buf, sizeof buf, ", scratch %.2f MiB", double(scratchBytes) / (1 << 20));
  return s + buf;
}

MemoryPlan arenaLayout(std::shared_ptr<const BufferPlan> buffers, int64_t maxScratchBytes) {
  MemoryPlan m;
  for (const auto& e : buffers->values) m.offsetOf[e.value.index] = e.offset;
  m.arenaBytes = buffers->arenaBytes;
  m.scratchBytes = (maxScratchBytes + 63) / 64 * 64;
  m.buffers = std::move(buffers);
  return m;
}

Expected<std::shared_ptr<const BufferPlan>> runPlan(const Graph& g,
                                                    std::shared_ptr<const BufferPlan> given) {
  auto run = runStepsOf(g);
  if (!run) return run.status();
  // Kernels assume their dtype's alignment, so a plan packed tighter is not run.
  if (given && given->alignment % 8 == 0 && planCovers(*given, g, *run)) return given;
  return std::shared_ptr<const BufferPlan>(std::make_shared<BufferPlan>(planBuffers(g, *run)));
}

}  // namespace fuselens
