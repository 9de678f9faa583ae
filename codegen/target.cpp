// Host detection through LLVM's Support library (cheap headers, no ORC).
#include "codegen/target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/Support/Host.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace fuselens {

std::string CpuTarget::key() const {
  return cpu + "/v" + std::to_string(vectorBits) + "/" + std::to_string(threads) + "t";
}

const CpuTarget& hostTarget() {
  static const CpuTarget t = [] {
    CpuTarget c;
    c.cpu = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> feats;
    std::vector<std::string> on;
    if (llvm::sys::getHostCPUFeatures(feats))
      for (const auto& f : feats)
        if (f.getValue()) on.push_back(f.getKey().str());
    std::sort(on.begin(), on.end());
    for (const std::string& f : on) c.features += (c.features.empty() ? "+" : ",+") + f;
    auto has = [&](const char* f) { return feats.count(f) && feats.lookup(f); };
    c.vectorBits = has("avx512f") ? 512 : has("avx2") && has("fma") ? 256 : 128;
    c.threads = int(std::max(1u, std::thread::hardware_concurrency()));
    return c;
  }();
  return t;
}

}  // namespace fuselens
