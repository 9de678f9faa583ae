// The pass registry: one row per pass, read by both the CLI pipeline string
// and the GUI pass list. There is no second path to create a pass.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/support/status.h"
#include "passes/pass.h"

namespace fuselens {

struct PassInfo {
  std::string name;                  // "fuse-ops"
  std::string summary;               // one line for --help and the GUI
  std::vector<std::string> options;  // accepted option keys, e.g. {"max-ops"}
  std::function<Expected<std::unique_ptr<Pass>>(const PassOptions&)> create;
};

const std::vector<PassInfo>& passRegistry();
const PassInfo* findPass(const std::string& name);

// Reads an integer option, with a sentence naming the pass when it is malformed.
Expected<int64_t> intOption(const std::string& pass, const PassOptions& opts,
                            const std::string& key, int64_t fallback, int64_t min, int64_t max);

}  // namespace fuselens
