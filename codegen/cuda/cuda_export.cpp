#include "codegen/cuda/cuda_export.h"

#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>

#include "codegen/cuda/cuda_program.h"
#include "codegen/cuda/device_binaries.h"
#include "codegen/cuda/nvrtc.h"
#include "core/support/atomic_file.h"

namespace fuselens {
namespace {

nlohmann::json figuresJson(const std::string& function,
                           const std::map<std::string, PtxasReport>& ptxas) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [sm, rep] : ptxas)
    if (auto it = rep.functions.find(function); it != rep.functions.end())
      j[sm] = {{"registers", it->second.registers},
               {"spill_stores", it->second.spillStores},
               {"spill_loads", it->second.spillLoads},
               {"stack_bytes", it->second.stackBytes}};
  return j;
}

Expected<CudaExportResult> exportCudaFiles(const Graph& g, const CudaExportOptions& opts,
                                           CudaBundleData data, const Progress& progress,
                                           const CancelToken& cancel);

}  // namespace

std::string cudaManifestJson(const Graph& g, const CudaModuleSource& m, const std::string& name,
                             const std::map<std::string, PtxasReport>& ptxas) {
  nlohmann::json kernels = nlohmann::json::array();
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const CudaKernel& k = m.kernels[i];
    const KernelInfo& info = m.infos[i];
    const size_t numInputs = k.paramTypes.size() - info.outputs.size();
    nlohmann::json params = nlohmann::json::array();
    size_t next = 0;
    for (size_t p = 0; p < k.paramTypes.size(); ++p) {
      const bool input = p < numInputs;
      const bool packed = std::find(k.prepackedParams.begin(), k.prepackedParams.end(),
                                    int32_t(p)) != k.prepackedParams.end();
      std::string value = "(prepacked by the compiler)";
      if (!packed && input && next < info.inputs.size())
        value = g.value(info.inputs[next++]).name;
      else if (!input)
        value = g.value(info.outputs[p - numInputs]).name;
      params.push_back({{"value", value},
                        {"dtype", dtypeName(k.paramTypes[p])},
                        {"elements", k.paramElements[p]},
                        {"role", input ? "input" : "output"}});
    }
    nlohmann::json stages = nlohmann::json::array();
    for (const CudaStage& s : k.stages) {
      nlohmann::json st = {
          {"function", s.name}, {"grid", s.grid}, {"block", s.block}, {"extent", s.extent}};
      if (s.gridY > 1 || s.gridZ > 1) st["grid_yz"] = {s.gridY, s.gridZ};  // a 3-D launch
      if (nlohmann::json f = figuresJson(s.name, ptxas); !f.empty()) st["ptxas"] = f;
      stages.push_back(st);
    }
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

Expected<std::map<std::string, PtxasReport>> ptxasFigures(const std::string& source,
                                                          const std::vector<std::string>& sms,
                                                          const std::string& name,
                                                          const std::string& ptxArch,
                                                          const std::string& ptxText) {
  // One NVRTC + ptxas per architecture, in parallel: ptxas on a large module
  // takes tens of seconds, and the architectures do not depend on each other.
  std::vector<std::future<Expected<PtxasReport>>> jobs;
  for (const std::string& sm : sms)
    jobs.push_back(std::async(std::launch::async, [&, sm]() -> Expected<PtxasReport> {
      auto ptx = virtualArchOf(sm) == ptxArch && !ptxText.empty()
                     ? Expected<std::string>(ptxText)
                     : compileToPtx(source, virtualArchOf(sm), name);
      if (!ptx) return ptx.status();
      return runPtxas(*ptx, sm);
    }));
  std::map<std::string, PtxasReport> out;
  Status first;
  for (size_t i = 0; i < sms.size(); ++i) {
    auto rep = jobs[i].get();
    if (!rep && first) first = rep.status();
    if (rep) out[sms[i]] = std::move(*rep);
  }
  if (!first) return first;
  return out;
}

Expected<CudaExportResult> exportCuda(const Graph& g, const CudaExportOptions& opts,
                                      CudaBundleData data, const Progress& progress,
                                      const CancelToken& cancel) {
  // Errors are values here; this catch is the backstop that keeps a bug (an
  // index past a table, a failed allocation, a filesystem error) from
  // aborting the process: it becomes the export's one sentence.
  try {
    return exportCudaFiles(g, opts, std::move(data), progress, cancel);
  } catch (const std::exception& e) {
    return Status::error(std::string("internal error while exporting CUDA (") + e.what() +
                             "); please report it with the model",
                         opts.outDir);
  }
}

namespace {

// <base>.sm_XX.cubin for each architecture ptxas assembled, and <base>.fatbin
// holding them with the PTX. A toolkit without fatbinary still gets the cubins;
// why the fat binary is missing goes into ptxSkipped, which the CLI prints.
Status writeDeviceBinaries(const std::string& base, const std::string& ptx,
                           const std::string& ptxArch,
                           const std::map<std::string, PtxasReport>& figures, CudaExportResult& r) {
  std::map<std::string, std::string> cubins;
  for (const auto& [sm, rep] : figures) {
    if (rep.cubin.empty()) continue;
    FL_RETURN_IF_ERROR(writeFileAtomically(base + "." + sm + ".cubin", rep.cubin));
    r.files.push_back(base + "." + sm + ".cubin");
    cubins[sm] = rep.cubin;
  }
  auto fat = makeFatbin(cubins, ptx, ptxArch);
  if (!fat) {
    r.ptxSkipped = fat.message();
    return Status::ok();
  }
  FL_RETURN_IF_ERROR(writeFileAtomically(base + ".fatbin", *fat));
  r.files.push_back(base + ".fatbin");
  return Status::ok();
}

Expected<CudaExportResult> exportCudaFiles(const Graph& g, const CudaExportOptions& opts,
                                           CudaBundleData data, const Progress& progress,
                                           const CancelToken& cancel) {
  std::error_code ec;
  std::filesystem::create_directories(opts.outDir, ec);
  if (ec) return Status::error("cannot create the output folder: " + ec.message(), opts.outDir);
  for (const std::string& sm : opts.ptxasArchs)
    if (sm.size() < 4 || sm.rfind("sm_", 0) != 0 ||
        sm.find_first_not_of("0123456789", 3) != std::string::npos)
      return Status::error("'" + sm + "' is not an SM architecture such as sm_80 or sm_90",
                           "--ptxas");
  // If/Loop: host steps between kernel segments, flattened for the shared parts.
  std::optional<CudaProgramPlan> program;
  if (cudaNeedsProgram(g) && opts.library.any())
    return Status::error(cudaLibraryControlFlowRefusal() + "; drop the option",
                         opts.library.mode != "none" ? "--cuda-library" : "--cuda-library-group");
  if (cudaNeedsProgram(g)) {
    auto p = planCudaProgram(g, progress, cancel);
    if (!p) return p.status();
    program = std::move(*p);
  }
  auto plan = program ? Expected<CudaLaunchPlan>(flattenCudaProgram(*program))
                      : planCudaLaunches(g, opts.bufferPlan, progress, cancel);
  if (!plan) return plan.status();
  FL_RETURN_IF_ERROR(applyCudaLibrary(g, *plan, opts.library));
  const CudaModuleSource& m = plan->module;
  CudaExportResult r;
  const std::string base = (std::filesystem::path(opts.outDir) / opts.name).string();
  FL_RETURN_IF_ERROR(writeFileAtomically(base + ".cu", m.source));
  r.files.push_back(base + ".cu");
  if (nvrtcAvailable(&r.ptxSkipped)) {
    report(progress, 0.6, "NVRTC: CUDA C to PTX");
    auto ptx = compileToPtx(m.source, opts.arch, opts.name + ".cu");
    if (!ptx) return ptx.status();
    FL_RETURN_IF_ERROR(writeFileAtomically(base + ".ptx", *ptx));
    r.files.push_back(base + ".ptx");
    if (!opts.ptxasArchs.empty() && !findPtxas(&r.ptxSkipped).empty()) {
      report(progress, 0.7, "ptxas -v: registers and spills");
      auto figures = ptxasFigures(m.source, opts.ptxasArchs, opts.name + ".cu", opts.arch, *ptx);
      if (!figures) return figures.status();
      data.ptxas = std::move(*figures);
      r.registers = cudaRegisterFeedback(g, *plan, data.ptxas, opts.registerBudget);
      FL_RETURN_IF_ERROR(writeDeviceBinaries(base, *ptx, opts.arch, data.ptxas, r));
    }
  }
  if (cancel.cancelled()) return Status::error("export cancelled");
  const std::string programJson =
      program ? cudaProgramManifestJson(*program, opts.name, data.ptxas) : std::string();
  FL_RETURN_IF_ERROR(writeFileAtomically(
      base + ".cuda.json", program ? programJson : cudaManifestJson(g, m, opts.name, data.ptxas)));
  r.files.push_back(base + ".cuda.json");
  report(progress, 0.9, "bundle: launcher, runner, CMakeLists.txt, data");
  auto bundle = writeCudaBundle(
      g, *plan, data, opts.outDir, opts.name,
      program ? cudaProgramLauncherSource(*program, opts.name) : std::string(), programJson,
      program ? cudaProgramLauncherHeader(*program, opts.name) : std::string());
  if (!bundle) return bundle.status();
  r.files.insert(r.files.end(), bundle->begin(), bundle->end());
  return r;
}

}  // namespace

}  // namespace fuselens
