// See memory_plan.h. Liveness is by kernel position: a tensor is born at the
// kernel that writes it and dies after the last kernel that reads it (through
// any alias). Free blocks are kept sorted by offset and merged on release.
#include "codegen/memory_plan.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace fuselens {
namespace {

int64_t roundUp(int64_t n) {
  return (n + MemoryPlan::kAlign - 1) / MemoryPlan::kAlign * MemoryPlan::kAlign;
}

class FreeList {
 public:
  int64_t take(int64_t bytes) {
    auto best = blocks_.end();
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it)
      if (it->second >= bytes && (best == blocks_.end() || it->second < best->second)) best = it;
    if (best == blocks_.end()) {
      // Grow: extend a free block at the end, or append.
      if (!blocks_.empty() && blocks_.rbegin()->first + blocks_.rbegin()->second == end_) {
        auto last = std::prev(blocks_.end());
        int64_t off = last->first;
        end_ = off + bytes;
        blocks_.erase(last);
        return off;
      }
      int64_t off = end_;
      end_ += bytes;
      return off;
    }
    int64_t off = best->first, size = best->second;
    blocks_.erase(best);
    if (size > bytes) blocks_[off + bytes] = size - bytes;
    return off;
  }
  void give(int64_t off, int64_t bytes) {
    auto it = blocks_.emplace(off, bytes).first;
    auto next = std::next(it);
    if (next != blocks_.end() && off + bytes == next->first) {
      it->second += next->second;
      blocks_.erase(next);
    }
    if (it != blocks_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        blocks_.erase(it);
      }
    }
  }
  int64_t end() const { return end_; }

 private:
  std::map<int64_t, int64_t> blocks_;  // offset -> size
  int64_t end_ = 0;
};

}  // namespace

std::string MemoryPlan::summary() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "arena %.2f MiB (tensors without reuse: %.2f MiB)",
                double(arenaBytes) / (1 << 20), double(unsharedBytes) / (1 << 20));
  return buf;
}

MemoryPlan planMemory(const Graph& g, const std::vector<PlannedKernelUse>& kernels,
                      const std::vector<std::pair<ValueId, ValueId>>& aliases) {
  std::map<int32_t, int32_t> aliasOf;
  for (auto& [v, src] : aliases) aliasOf[v.index] = src.index;
  auto storage = [&](ValueId v) {
    int32_t i = v.index;
    for (auto it = aliasOf.find(i); it != aliasOf.end(); it = aliasOf.find(i)) i = it->second;
    return i;
  };
  std::set<int32_t> pinned;  // storage that outlives the run or is not ours
  for (ValueId o : g.outputs()) pinned.insert(storage(o));
  for (ValueId i : g.inputs()) pinned.insert(storage(i));

  std::map<int32_t, size_t> lastUse;
  for (size_t k = 0; k < kernels.size(); ++k)
    for (ValueId v : kernels[k].inputs) lastUse[storage(v)] = k;

  MemoryPlan plan;
  FreeList free;
  std::map<size_t, std::vector<int32_t>> dying;  // kernel position -> storage freed after it
  std::map<int32_t, int64_t> sizeOf;
  int64_t scratch = 0;
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (ValueId v : kernels[k].outputs) {
      int32_t s = storage(v);
      if (pinned.count(s) || g.value(ValueId(s)).constant || plan.offsetOf.count(s)) continue;
      const TensorType& t = g.value(ValueId(s)).type;
      int64_t bytes =
          roundUp(std::max<int64_t>(1, t.numElements().value_or(0)) * int64_t(dtypeSize(t.dtype)));
      plan.offsetOf[s] = free.take(bytes);
      sizeOf[s] = bytes;
      plan.unsharedBytes += bytes;
      auto it = lastUse.find(s);
      dying[it == lastUse.end() ? k : std::max(k, it->second)].push_back(s);
    }
    for (int32_t s : dying[k]) free.give(plan.offsetOf[s], sizeOf[s]);
    scratch = std::max(scratch, roundUp(kernels[k].scratchBytes));
  }
  plan.scratchOffset = roundUp(free.end());
  plan.arenaBytes = plan.scratchOffset + scratch;
  return plan;
}

}  // namespace fuselens
