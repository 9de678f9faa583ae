#include "codegen/symbolic/symbolic_plan.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>

namespace fuselens {
namespace {

// The loop IR with every number blanked: samples with the same fingerprint
// differ only in numbers. A schedule changes shape at some lengths (a split's
// tail vanishes at a multiple of its factor, a short row is cached in
// registers), so the samples are grouped and the largest group that
// generalizes wins; lengths of other shapes still get its kernel, unverified.
std::string fingerprint(const LoopFunc& f) {
  std::string text = printLoopFunc(f), out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (out.empty() || out.back() != '#') out += '#';
      continue;
    }
    out += text[i];
  }
  return out;
}

// SymbolicKernel::servesUnverified: the samples left out of `group` are all
// shorter than its own (by the first atom).
bool servesUnverified(const std::vector<const LoopFunc*>& all,
                      const std::vector<const LoopFunc*>& group, const SymbolicKernel& k) {
  const auto atom0 = [&](const LoopFunc* f) {
    return f->buffer(f->params[k.atoms[0].param]).shape[k.atoms[0].axis];
  };
  int64_t low = INT64_MAX;
  for (const LoopFunc* f : group) low = std::min(low, atom0(f));
  for (const LoopFunc* f : all)
    if (std::find(group.begin(), group.end(), f) == group.end() && atom0(f) >= low) return false;
  return true;
}

}  // namespace

Schedule symbolicSchedule() {
  Schedule s = Schedule::defaults();
  s.shapeStable = true;
  return s;
}

const std::vector<int64_t>& symbolicSampleLengths() {
  static const std::vector<int64_t> lengths = {13, 17, 22, 29, 38, 45, 53, 67, 76, 91, 101, 121};
  return lengths;
}

std::string kernelIdentity(const Graph& g, const KernelInfo& info) {
  const Node& n = g.node(info.node);
  return info.name + "|" + n.name + "|" + n.op;
}

SymbolicKernels buildSymbolicKernels(
    const std::vector<std::pair<const Graph*, const KernelPlan*>>& samples) {
  auto t0 = std::chrono::steady_clock::now();
  SymbolicKernels table;
  if (samples.empty()) return table;
  // Each identity's funcs across the samples, in sample order.
  std::map<std::string, std::vector<const LoopFunc*>> byIdentity;
  for (const auto& [g, plan] : samples)
    for (size_t i = 0; i < plan->infos.size(); ++i) {
      const KernelInfo& info = plan->infos[i];
      if (info.fallback || info.driver) continue;
      byIdentity[kernelIdentity(*g, info)].push_back(&plan->funcs[i]);
    }
  for (const auto& [id, funcs] : byIdentity) {
    if (funcs.size() != samples.size()) {
      table.refused[id] = "the kernel is not made at every sample length";
      continue;
    }
    std::map<std::string, std::vector<const LoopFunc*>> groups;
    for (const LoopFunc* f : funcs) groups[fingerprint(*f)].push_back(f);
    std::vector<std::vector<const LoopFunc*>> bySize;
    for (auto& [print, group] : groups) bySize.push_back(std::move(group));
    std::stable_sort(bySize.begin(), bySize.end(),
                     [](const auto& a, const auto& b) { return a.size() > b.size(); });
    std::string why;
    for (const auto& group : bySize) {
      if (group.size() < 4) break;  // too few to pin a quadratic form down and check it
      auto k = generalizeKernel(group);
      if (k) {
        k->servesUnverified = servesUnverified(funcs, group, *k);
        table.kernels.emplace(id, std::move(*k));
        break;
      }
      if (why.empty()) why = k.status().diagnostic().message;
    }
    if (table.kernels.count(id)) continue;
    if (why.empty())
      why = "its loop IR changes with the dim (at most " + std::to_string(bySize[0].size()) +
            " of " + std::to_string(funcs.size()) + " sample lengths share one shape)";
    table.refused[id] = why;
  }
  table.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return table;
}

void applySymbolicKernels(const SymbolicKernels& table, const Graph& g, KernelPlan& plan,
                          CompileStats& stats) {
  for (size_t i = 0; i < plan.infos.size(); ++i) {
    const KernelInfo& info = plan.infos[i];
    if (info.fallback || info.driver) continue;
    auto it = table.kernels.find(kernelIdentity(g, info));
    if (it == table.kernels.end()) continue;
    auto inst = instantiate(it->second, plan.funcs[i]);
    if (!inst || (!inst->verified && !it->second.servesUnverified))
      continue;  // compiled for this shape (SymbolicKernel::servesUnverified)
    plan.funcs[i] = std::move(inst->func);
    ++stats.symbolicKernels;
    stats.verifiedSymbolic += inst->verified;
  }
}

}  // namespace fuselens
