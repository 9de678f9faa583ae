// Host detection through LLVM's Support library (cheap headers, no ORC), the
// x86-64 levels, and the per-thread override that export uses.
#include "codegen/target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/Support/Host.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace fuselens {
namespace {

struct Level {
  const char* name;
  const char* features;  // LLVM feature names, each level adding to the one before
  int vectorBits;
};

// The x86-64 psABI micro-architecture levels, in LLVM's feature names.
const Level kLevels[] = {
    {"x86-64", "+cx8,+fxsr,+mmx,+sse,+sse2", 128},
    {"x86-64-v2", "+cx16,+popcnt,+sahf,+sse3,+sse4.1,+sse4.2,+ssse3", 128},
    {"x86-64-v3", "+avx,+avx2,+bmi,+bmi2,+f16c,+fma,+lzcnt,+movbe,+xsave", 256},
    {"x86-64-v4", "+avx512bw,+avx512cd,+avx512dq,+avx512f,+avx512vl", 512},
};

thread_local const CpuTarget* tlsTarget = nullptr;

}  // namespace

std::string CpuTarget::key() const {
  return cpu + "/v" + std::to_string(vectorBits) + "/" + std::to_string(threads) + "t";
}

const CpuTarget& hostTarget() {
  static const CpuTarget t = [] {
    CpuTarget c;
    c.name = "native";
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
    // 0 or -1 where the C library cannot tell (some VMs): keep the default.
    long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    if (l1 >= (4 << 10) && l1 <= (4 << 20)) c.l1DataBytes = l1;
    return c;
  }();
  return t;
}

Expected<CpuTarget> cpuTargetNamed(const std::string& name) {
  if (name == "native") return hostTarget();
  CpuTarget t;
  t.threads = hostTarget().threads;
  for (const Level& l : kLevels) {
    t.features += (t.features.empty() ? "" : ",") + std::string(l.features);
    if (name == l.name) {
      t.name = t.cpu = l.name;
      t.vectorBits = l.vectorBits;
      return t;
    }
  }
  std::string valid = "native";
  for (const Level& l : kLevels) valid += std::string(", ") + l.name;
  return Status::error("unknown CPU target '" + name + "'; valid targets are " + valid);
}

bool hostCanRun(const CpuTarget& t) {
  if (t.native()) return true;
  llvm::StringMap<bool> host;
  if (!llvm::sys::getHostCPUFeatures(host)) return false;
  size_t at = 0;
  while (at < t.features.size()) {
    size_t end = t.features.find(',', at);
    if (end == std::string::npos) end = t.features.size();
    std::string f = t.features.substr(at + 1, end - at - 1);  // past the '+'
    // mmx and the like may be absent from the host's list on newer CPUs; only
    // SSE and later decide.
    if (f != "mmx" && f != "cx8" && f != "fxsr" && !(host.count(f) && host.lookup(f))) return false;
    at = end + 1;
  }
  return true;
}

const CpuTarget& codegenTarget() { return tlsTarget ? *tlsTarget : hostTarget(); }

ScopedCpuTarget::ScopedCpuTarget(const CpuTarget& t) : previous_(tlsTarget), target_(t) {
  tlsTarget = &target_;
}

ScopedCpuTarget::~ScopedCpuTarget() { tlsTarget = previous_; }

}  // namespace fuselens
