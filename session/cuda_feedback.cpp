#include "session/cuda_feedback.h"

#include <set>

#include "passes/pass_manager.h"

namespace fuselens {

Expected<std::string> withFuseOpsSplit(const std::string& pipeline,
                                       const std::vector<std::string>& at) {
  auto specs = parsePipeline(pipeline);
  if (!specs) return specs.status();
  for (PassSpec& spec : *specs) {
    if (spec.name != "fuse-ops") continue;
    std::string& list = spec.options["split"];
    std::set<std::string> have;
    for (size_t i = 0; i <= list.size();) {
      const size_t end = std::min(list.find(';', i), list.size());
      if (end > i) have.insert(list.substr(i, end - i));
      i = end + 1;
    }
    bool grew = false;
    for (const std::string& name : at)
      if (have.insert(name).second) grew = true;
    if (!grew)
      return Status::error("every group to split is split already; its halves still spill",
                           "--cuda-register-feedback");
    list.clear();
    for (const std::string& name : have) list += (list.empty() ? "" : ";") + name;
    return pipelineString(*specs);
  }
  return Status::error("the pipeline has no fuse-ops, so no group can be split",
                       "--cuda-register-feedback");
}

}  // namespace fuselens
