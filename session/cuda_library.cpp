// See cuda_library.h: the offload option of run/compare/compile, read by
// export's parser and applied to the final graph's launch plan.
#include "session/cuda_library.h"

#include "codegen/cuda/cuda_program.h"

namespace fuselens {

Expected<CudaLibraryOptions> cudaLibraryOptions(const CudaRunRequest& request) {
  return parseCudaLibraryOptions(request.library, request.libraryGroups);
}

std::string cudaOffloadRefusal(const Session& s) {
  if (!cudaNeedsProgram(s.finalGraph())) return {};
  return cudaLibraryControlFlowRefusal();
}

Expected<CudaLaunchPlan> cudaPlanWithLibrary(const Session& s, const CudaLibraryOptions& o,
                                             const Progress& progress, const CancelToken& cancel) {
  const Graph& g = s.finalGraph();
  if (std::string why = cudaOffloadRefusal(s); o.any() && !why.empty())
    return Status::error(why + "; drop the option",
                         o.mode != "none" ? "--cuda-library" : "--cuda-library-group");
  const auto& snaps = s.snapshots();
  auto plan = planCudaLaunches(g, snaps.empty() ? nullptr : snaps.back().record.bufferPlan,
                               progress, cancel);
  if (!plan) return plan.status();
  FL_RETURN_IF_ERROR(applyCudaLibrary(g, *plan, o));
  return plan;
}

Expected<std::vector<TensorData>> cudaFeed(const Graph& g,
                                           const std::map<std::string, TensorData>& inputs) {
  std::vector<TensorData> feed;
  for (ValueId v : g.inputs()) {
    auto it = inputs.find(g.value(v).name);
    if (it == inputs.end())
      return Status::error("input '" + g.value(v).name + "' is not given", "--engine cuda");
    feed.push_back(it->second);
  }
  return feed;
}

Expected<std::vector<CudaLibraryRow>> cudaLibraryRows(const Session& s,
                                                      const CudaRunRequest& request,
                                                      const Progress& progress,
                                                      const CancelToken& cancel) {
  auto o = cudaLibraryOptions(request);
  if (!o) return o.status();
  // Without offload the rows still say why each group stays generated.
  if (!o->any() && !cudaOffloadRefusal(s).empty()) return std::vector<CudaLibraryRow>{};
  auto plan = cudaPlanWithLibrary(s, *o, progress, cancel);
  if (!plan) return plan.status();
  std::vector<CudaLibraryRow> rows;
  for (size_t k = 0; k < plan->module.kernels.size(); ++k) {
    if (plan->gemmShapes[k].size() != 3) continue;
    const Node& n = s.finalGraph().node(plan->module.infos[k].node);
    nlohmann::json lib = cudaLibraryJson(*plan, k);  // null when no offload was asked
    if (lib.is_null()) lib = {{"engine", "generated"}, {"why", "--cuda-library is none"}};
    rows.push_back({plan->module.kernels[k].name, n.name, std::move(lib)});
  }
  return rows;
}

}  // namespace fuselens
