// The pass table. Adding a pass: its file, and one row here.
#include "passes/registry.h"

#include <cstdlib>

#include "passes/dce.h"
#include "passes/fuse_ops.h"

namespace fuselens {
namespace {

template <class P>
Expected<std::unique_ptr<Pass>> make(P* p) {
  return std::unique_ptr<Pass>(p);
}

std::vector<PassInfo> buildRegistry() {
  return {
      {"dce", "remove nodes and constants that no graph output depends on", {},
       [](const PassOptions&) { return make(new DcePass()); }},
      {"fuse-ops", "fuse elementwise chains and anchor ops with their epilogues (TVM FuseOps)",
       {"max-ops"},
       [](const PassOptions& o) -> Expected<std::unique_ptr<Pass>> {
         auto maxOps = intOption("fuse-ops", o, "max-ops", 8, 1, 1 << 20);
         if (!maxOps) return maxOps.status();
         return make(new FuseOpsPass(*maxOps));
       }},
  };
}

}  // namespace

const std::vector<PassInfo>& passRegistry() {
  static const std::vector<PassInfo> rows = buildRegistry();
  return rows;
}

const PassInfo* findPass(const std::string& name) {
  for (const auto& p : passRegistry())
    if (p.name == name) return &p;
  return nullptr;
}

Expected<int64_t> intOption(const std::string& pass, const PassOptions& opts, const std::string& key,
                            int64_t fallback, int64_t min, int64_t max) {
  auto it = opts.find(key);
  if (it == opts.end()) return fallback;
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || v < min || v > max)
    return Expected<int64_t>::error("option " + key + "=" + it->second + " must be an integer from " +
                                        std::to_string(min) + " to " + std::to_string(max),
                                    "pass " + pass);
  return int64_t(v);
}

}  // namespace fuselens
