// See cuda_register_feedback.h. The split point is the member in the middle of
// the group's body (topological order) that reads a value the body computes:
// rejecting the edges into it halves the group, and each half gets its own
// ptxas figures on the next round.
#include "codegen/cuda/cuda_register_feedback.h"

#include <algorithm>
#include <cstdlib>

namespace fuselens {
namespace {

// The body member nearest the middle that has a producer inside the body.
std::string middleMember(const Node& n) {
  if (!n.body) return {};
  auto order = n.body->topoOrder();
  if (!order || order->size() < 2) return {};
  const Graph& b = *n.body;
  std::string best;
  size_t bestDistance = order->size();
  const size_t middle = order->size() / 2;
  for (size_t i = 1; i < order->size(); ++i) {
    const Node& m = b.node((*order)[i]);
    const bool inner = std::any_of(m.inputs.begin(), m.inputs.end(), [&](ValueId v) {
      return v.valid() && b.value(v).producer.valid();
    });
    // Names the pipeline string cannot carry (fuse-ops{split=a;b}) are skipped.
    if (!inner || m.name.empty() || m.name.find_first_of(",;{}=") != std::string::npos) continue;
    const size_t d = i > middle ? i - middle : middle - i;
    if (d < bestDistance) best = m.name, bestDistance = d;
  }
  return best;
}

}  // namespace

int64_t cudaRegisterBudget(int64_t block, int64_t given) {
  if (given > 0) return given;
  return std::min<int64_t>(255, 65536 / std::max<int64_t>(block, 1));
}

std::vector<CudaRegisterVerdict> cudaRegisterFeedback(
    const Graph& g, const CudaLaunchPlan& plan, const std::map<std::string, PtxasReport>& ptxas,
    int64_t budget) {
  std::vector<CudaRegisterVerdict> out;
  for (size_t k = 0; k < plan.module.kernels.size(); ++k) {
    if (k < plan.library.size() && plan.library[k].call) continue;  // cuBLASLt runs it
    const CudaKernel& kernel = plan.module.kernels[k];
    std::string worst;
    for (const CudaStage& st : kernel.stages)
      for (const auto& [sm, rep] : ptxas) {
        auto f = rep.functions.find(st.name);
        if (f == rep.functions.end()) continue;
        const PtxasFigures& x = f->second;
        const int64_t limit = cudaRegisterBudget(st.block, budget);
        if (x.spillStores == 0 && x.spillLoads == 0 && x.registers <= limit) continue;
        if (!worst.empty()) continue;
        worst = st.name + " on " + sm + ": " + std::to_string(x.registers) + " registers, " +
                std::to_string(x.spillStores + x.spillLoads) + " spilled bytes; budget " +
                std::to_string(limit) + " for " + std::to_string(st.block) + "-thread blocks";
      }
    if (worst.empty()) continue;
    const Node& n = g.node(plan.module.infos[k].node);
    CudaRegisterVerdict v{n.name, kernel.name, {}, middleMember(n)};
    v.sentence = kernel.name + " (" + worst + ")" +
                 (v.splitAt.empty() ? ": its group cannot be split (one op)"
                                    : ": split its group before " + v.splitAt);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace fuselens
