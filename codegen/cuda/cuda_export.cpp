#include "codegen/cuda/cuda_export.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "codegen/cuda/nvrtc.h"
#include "core/support/atomic_file.h"

namespace fuselens {

std::string cudaManifestJson(const Graph& g, const CudaModuleSource& m, const std::string& name) {
  nlohmann::json kernels = nlohmann::json::array();
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const CudaKernel& k = m.kernels[i];
    const KernelInfo& info = m.infos[i];
    nlohmann::json params = nlohmann::json::array();
    for (size_t p = 0; p < k.paramTypes.size(); ++p) {
      const bool input = p < info.inputs.size();
      const ValueId v = input ? info.inputs[p] : info.outputs[p - info.inputs.size()];
      params.push_back({{"value", g.value(v).name},
                        {"dtype", dtypeName(k.paramTypes[p])},
                        {"elements", k.paramElements[p]},
                        {"role", input ? "input" : "output"}});
    }
    nlohmann::json stages = nlohmann::json::array();
    for (const CudaStage& s : k.stages)
      stages.push_back(
          {{"function", s.name}, {"grid", s.grid}, {"block", s.block}, {"extent", s.extent}});
    kernels.push_back({{"name", k.name},
                       {"node", g.node(info.node).name},
                       {"params", params},
                       {"stages", stages},
                       {"scratch_bytes", k.scratchBytes}});
  }
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (ValueId v : g.inputs())
    inputs.push_back({{"name", g.value(v).name}, {"type", g.value(v).type.str()}});
  for (ValueId v : g.outputs())
    outputs.push_back({{"name", g.value(v).name}, {"type", g.value(v).type.str()}});
  nlohmann::json j = {
      {"format", "fuselens-cuda-1"},
      {"name", name},
      {"source", name + ".cu"},
      {"ptx", name + ".ptx"},
      {"inputs", inputs},
      {"outputs", outputs},
      {"kernels", kernels},
      {"note",
       "launch the kernels in order, each stage in order, with the stage's grid and block; "
       "every stage takes the kernel's params then a scratch pointer of scratch_bytes"}};
  return j.dump(2) + "\n";
}

Expected<CudaExportResult> exportCuda(const Graph& g, const CudaExportOptions& opts,
                                      const Progress& progress, const CancelToken& cancel) {
  std::error_code ec;
  std::filesystem::create_directories(opts.outDir, ec);
  if (ec) return Status::error("cannot create the output folder: " + ec.message(), opts.outDir);
  auto m = emitCudaModule(g, progress, cancel);
  if (!m) return m.status();
  CudaExportResult r;
  const std::string base = (std::filesystem::path(opts.outDir) / opts.name).string();
  FL_RETURN_IF_ERROR(writeFileAtomically(base + ".cu", m->source));
  r.files.push_back(base + ".cu");
  if (nvrtcAvailable(&r.ptxSkipped)) {
    report(progress, 0.8, "NVRTC: CUDA C to PTX");
    auto ptx = compileToPtx(m->source, opts.arch, opts.name + ".cu");
    if (!ptx) return ptx.status();
    FL_RETURN_IF_ERROR(writeFileAtomically(base + ".ptx", *ptx));
    r.files.push_back(base + ".ptx");
  }
  FL_RETURN_IF_ERROR(writeFileAtomically(base + ".cuda.json", cudaManifestJson(g, *m, opts.name)));
  r.files.push_back(base + ".cuda.json");
  return r;
}

}  // namespace fuselens
