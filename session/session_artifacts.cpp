// What Session makes of the final graph besides a run: code text for the code
// pane and `compile --emit`, ahead-of-time exports, tuning, and the notes that
// say which kernels are not plain compiled code.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/cuda/cuda_c.h"
#include "codegen/cuda/cuda_export.h"
#include "codegen/cuda/cuda_program.h"
#include "codegen/cuda/nvrtc.h"
#include "codegen/export/export.h"
#include "codegen/target.h"
#include "core/compare/storage_floor.h"
#include "core/ir/printer.h"
#include "session/reference_runs.h"
#include "session/session.h"

namespace fuselens {
namespace fs = std::filesystem;
namespace {

// The assembly of the final graph: an export without a link step into a
// scratch folder, whose .s is read back; the folder is removed either way.
Expected<std::string> assemblyText(const Graph& g, const CompileOptions& compile,
                                   const Progress& progress, const CancelToken& cancel) {
  std::error_code ec;
  fs::path dir = fs::temp_directory_path(ec) / ("fuselens-asm-" + std::to_string(::getpid()));
  ExportOptions o;
  o.outDir = dir.string();
  o.compile = compile;
  o.cc.clear();
  auto r = exportModel(g, o, progress, cancel);
  std::string text;
  if (r) {
    std::ifstream in(dir / (o.name + ".s"));
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  fs::remove_all(dir, ec);
  if (!r) return r.status();
  return text;
}

}  // namespace

Expected<std::string> Session::codeText(CodeKind kind, const Progress& progress,
                                        const CancelToken& cancel) {
  if (!model_) return Expected<std::string>::error("no model is open");
  switch (kind) {
    case CodeKind::Ir:
      return printGraph(finalGraph());
    case CodeKind::LoopIr:
    case CodeKind::LlvmIr:
      if (!compiled_) FL_RETURN_IF_ERROR(compile(compileOptions_, progress, cancel));
      return kind == CodeKind::LoopIr ? compiled_->loopIrText() : compiled_->llvmIrText();
    case CodeKind::Asm:
      return assemblyText(finalGraph(), compileOptions_, progress, cancel);
    case CodeKind::CudaC:
    case CodeKind::Ptx:
      break;
  }
  // With If/Loop: every segment's kernels, as the bundle's .cu holds them.
  auto source = [&]() -> Expected<std::string> {
    if (cudaNeedsProgram(finalGraph())) {
      auto program = planCudaProgram(finalGraph(), progress, cancel);
      if (!program) return program.status();
      return program->source;
    }
    auto cuda = emitCudaModule(finalGraph(), progress, cancel);
    if (!cuda) return cuda.status();
    return cuda->source;
  }();
  if (!source || kind == CodeKind::CudaC) return source;
  report(progress, 0.8, "NVRTC: CUDA C to PTX");
  return compileToPtx(*source);
}

std::string Session::kernelNameOf(NodeId n) const {
  if (!compiled_) return {};
  for (const KernelInfo& k : compiled_->kernels())
    if (k.node == n) return k.name;
  return {};
}

std::vector<std::string> Session::kernelNotes() const {
  std::vector<std::string> notes;
  if (!compiled_) return notes;
  for (const KernelInfo& k : compiled_->kernels())
    if (k.fallback)
      notes.push_back("kernel " + k.name + " is " + kFallbackLabel + ": " + k.fallbackReason);
    else if (k.driver)
      notes.push_back(
          "kernel " + k.name +
          " is a driver kernel (compiled; control decided at run time): " + k.driverSummary);
  return notes;
}

Status Session::checkCpuName(const std::string& name) {
  auto t = cpuTargetNamed(name);
  return t ? Status::ok() : t.status();
}

Expected<ExportFiles> Session::exportCpu(const CpuExportRequest& request, const Progress& progress,
                                         const CancelToken& cancel) {
  if (!model_) return Expected<ExportFiles>::error("no model is open");
  ExportOptions o;
  o.outDir = request.outDir;
  o.name = request.name;
  o.compile = compileOptions_;
  // The export's arena is the memory-plan pass's plan when that pass ran last,
  // as in compile(): one plan, reported and run.
  if (!o.compile.bufferPlan && !snapshots_.empty())
    o.compile.bufferPlan = snapshots_.back().record.bufferPlan;
  o.compile.optLevel = request.optLevel;
  o.cpu = request.cpu;
  if (!request.tuningLog.empty()) o.compile.tuningLog = request.tuningLog;
  if (!request.link) o.cc.clear();
  auto r = exportModel(finalGraph(), o, progress, cancel);
  if (!r) return r.status();
  return ExportFiles{r->files, {}};
}

Expected<ExportFiles> Session::exportCuda(const CudaExportRequest& request,
                                          const Progress& progress, const CancelToken& cancel) {
  if (!model_) return Expected<ExportFiles>::error("no model is open");
  CudaExportOptions o{request.outDir, request.name, request.arch, request.ptxasArchs};
  auto library = parseCudaLibraryOptions(request.library, request.libraryGroups);
  if (!library) return library.status();
  o.library = std::move(*library);
  o.registerBudget = request.registerBudget;
  if (!snapshots_.empty()) o.bufferPlan = snapshots_.back().record.bufferPlan;
  // What the bundle's `verify` runs on: seeded inputs and, per output, the
  // exact (f64) and f32-sample runs the rounding verdicts stand on.
  CudaBundleData data;
  const Graph& g = finalGraph();
  for (NodeId id : g.nodeIds()) {
    std::vector<std::string>& names = data.origins[id.index];
    for (NodeId o : g.node(id).origins)
      if (original().hasNode(o)) names.push_back(original().node(o).name);
  }
  std::string note;
  auto inputs = randomInputs(seed);
  auto refs = inputs ? runReferences(original(), *inputs, true, cancel)
                     : Expected<ReferenceRuns>(inputs.status());
  if (refs) {
    for (ValueId v : g.inputs())
      if (auto it = inputs->find(g.value(v).name); it != inputs->end())
        data.inputs.push_back(it->second);
    for (ValueId v : g.outputs()) {
      const TensorData* exact = refs->exactOf(g.value(v).origin);
      const TensorData* sample = refs->sampleOf(g.value(v).origin);
      if (!exact || !sample) break;
      data.exact.push_back(*exact);
      data.sample.push_back(*sample);
    }
    if (data.exact.size() != g.outputs().size() || data.inputs.size() != g.inputs().size())
      data.exact.clear(), data.sample.clear(), data.inputs.clear();
    data.storage = storagePrecision(original(), g);
  }
  if (!refs || data.exact.empty())
    note = "the bundle has no reference outputs (" +
           (refs ? std::string("an input or output has no reference tensor") : refs.message()) +
           "), so its verify cannot judge";
  auto r = fuselens::exportCuda(g, o, std::move(data), progress, cancel);
  if (!r) return r.status();
  if (!r->ptxSkipped.empty()) note += (note.empty() ? "" : "; ") + ("no .ptx: " + r->ptxSkipped);
  ExportFiles files{r->files, note, {}};
  // A large model may have dozens: the first three are named, the rest counted.
  constexpr size_t kNamed = 3;
  for (size_t i = 0; i < r->registers.size(); ++i) {
    const CudaRegisterVerdict& v = r->registers[i];
    if (i < kNamed) files.note += (files.note.empty() ? "" : "; ") + ("ptxas: " + v.sentence);
    if (!v.splitAt.empty()) files.cudaSplits.push_back(v.splitAt);
  }
  if (r->registers.size() > kNamed)
    files.note += "; and " + std::to_string(r->registers.size() - kNamed) +
                  " more kernels over their register budget (manifest.json has every figure)";
  return files;
}

Expected<std::vector<KernelTuneResult>> Session::tune(const TuneRequest& request,
                                                      const Progress& progress,
                                                      const CancelToken& cancel) {
  if (!model_) return Status::error("no model is open");
  if (request.budgetSeconds <= 0)
    return Status::error("the budget must be positive", "--budget-seconds");
  auto log = TuningLog::load(request.logPath);
  if (!log) return log.status();
  TuneOptions o;
  o.budgetSeconds = request.budgetSeconds;
  auto r = tuneGraph(finalGraph(), o, *log, progress, cancel);
  if (!r) return r.status();
  FL_RETURN_IF_ERROR(log->save(request.logPath));
  return r;
}

}  // namespace fuselens
