// `fuselens-cli export model.onnx --out DIR`: optimize the model, compile every
// kernel ahead of time and write the .ll, .s, .o, a .so with its C header
// (model.h) and a manifest JSON (codegen/export.h), each file atomically.
// `--cpu x86-64-v2` (or x86-64, -v3, -v4) builds for every CPU of that level
// instead of this host.
#include <iostream>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "session/cuda_feedback.h"

namespace fuselens::cli {
namespace {

struct ExportArgs {
  std::string model;
  std::vector<std::string> dims, shapes;
  std::string out;
  std::string name = "model";
  std::string passes = defaultPipelineText();
  std::string tuningLog;
  int opt = 3;
  bool noLink = false;
  std::string target = "cpu";
  std::string arch = "compute_90";
  std::vector<std::string> ptxas = {"sm_80", "sm_90"};
  CudaRunRequest library;  // --cuda-library, --cuda-library-group
  bool registerFeedback = false;
  int64_t registerBudget = 0;
  std::string cpu = "native";
  std::string precision = "f32";
};

// "none" asks for no ptxas run (a large model's kernels take ptxas minutes).
std::vector<std::string> ptxasArchs(const std::vector<std::string>& given) {
  if (given.size() == 1 && given[0] == "none") return {};
  return given;
}

// At most this many re-runs of the pipeline for ptxas feedback.
constexpr int kFeedbackRounds = 3;

// export --target cuda; with --cuda-register-feedback, while ptxas finds
// kernels that spill (or exceed the register budget), the pipeline runs again
// with their groups split (fuse-ops{split=...}, rule cuda-spills) and the
// bundle is written again.
int runCudaExport(const ExportArgs& a, std::string pipeline) {
  for (int round = 0;; ++round) {
    Session s;
    if (Status st = openAndOptimize(s, a.model, pipeline, a.dims, a.shapes); !st) return fail(st);
    auto r = s.exportCuda(
        CudaExportRequest{a.out, a.name, a.arch, ptxasArchs(a.ptxas), a.library.library,
                          a.library.libraryGroups, a.registerBudget},
        terminalProgress(), interruptToken());
    if (!r) return fail(r.status());
    std::string next;
    if (a.registerFeedback && !r->cudaSplits.empty() && round < kFeedbackRounds) {
      auto split = withFuseOpsSplit(pipeline, r->cudaSplits);
      if (split)
        next = *split;
      else
        r->note += (r->note.empty() ? "" : "; ") + split.message();
    }
    if (next.empty()) {
      for (const std::string& f : r->files) std::cout << f << "\n";
      if (!r->note.empty()) std::cerr << "note: " << r->note << "\n";
      if (round > 0)
        std::cerr << "note: ptxas feedback ran the pipeline " << round + 1
                  << " times; `explain` with --passes '" << pipeline
                  << "' shows the splits (rule cuda-spills)\n";
      return kExitOk;
    }
    std::cerr << "note: ptxas feedback, round " << round + 1 << ": " << r->note << "\n";
    pipeline = next;
  }
}

int runExport(const ExportArgs& a) {
  // A bad --cpu fails before the model is read.
  if (Status st = Session::checkCpuName(a.cpu); !st) return fail(st);
  if (Status st = checkCudaLibraryArgs(a.library, a.target == "cuda", "--target cuda"); !st)
    return fail(st);
  auto passes = pipelineWithPrecision(a.passes, a.precision);
  if (!passes) return fail(passes.status());
  if (a.target == "cuda") return runCudaExport(a, *passes);
  Session s;
  if (Status st = openAndOptimize(s, a.model, *passes, a.dims, a.shapes); !st) return fail(st);
  auto r = s.exportCpu(CpuExportRequest{a.out, a.name, a.opt, a.cpu, a.tuningLog, !a.noLink},
                       terminalProgress(), interruptToken());
  if (!r) return fail(r.status());
  for (const std::string& f : r->files) std::cout << f << "\n";
  if (!r->note.empty()) std::cerr << "note: " << r->note << "\n";
  return kExitOk;
}

}  // namespace

void addExportCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Compile the model ahead of time: .ll, .s, .o, a .so with a C header, a manifest");
  cmd->add_option("model", args->model, "ONNX model")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out, "output folder (created when missing)")->required();
  cmd->add_option("--name", args->name, "file base name and C prefix (default: model)");
  cmd->add_option("--passes", args->passes, "pass pipeline (default: the -O2 pipeline)");
  addPrecisionOption(cmd, args->precision);
  cmd->add_option("--tuning-log", args->tuningLog, "use schedules tuned by `fuselens-cli tune`");
  cmd->add_option("--opt", args->opt, "LLVM optimization level 0..3 (default 3)");
  cmd->add_flag("--no-link", args->noLink, "skip the .so (no C compiler needed)");
  cmd->add_option("--cpu", args->cpu,
                  "CPU for --target cpu: native (this host, default), x86-64, x86-64-v2, "
                  "x86-64-v3 or x86-64-v4");
  addShapeOptions(cmd, args->dims, args->shapes);
  cmd->add_option("--target", args->target,
                  "cpu (.ll .s .o .so model.h manifest) or cuda (.cu, .ptx through NVRTC, launch "
                  "plan .cuda.json, and a bundle that builds with nvcc alone: launcher, runner, "
                  "CMakeLists.txt, inputs and references, manifest.json)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--arch", args->arch,
                  "NVRTC virtual architecture for --target cuda (default compute_90)");
  cmd->add_option("--ptxas", args->ptxas,
                  "for --target cuda: the SM architectures ptxas -v reports registers and spills "
                  "for (default sm_80,sm_90; none to skip)")
      ->delimiter(',');
  addCudaLibraryOptions(cmd, args->library, "--target cuda");
  cmd->add_flag("--cuda-register-feedback", args->registerFeedback,
                "for --target cuda: when ptxas -v finds a kernel that spills or uses more "
                "registers than its launch allows, run the pipeline again with that group split "
                "(fuse-ops{split=...}, rule cuda-spills; up to 3 rounds)");
  cmd->add_option("--cuda-register-budget", args->registerBudget,
                  "for --target cuda: registers per thread a kernel may use before ptxas "
                  "feedback splits it (default: 65536 / its block size, at most 255)")
      ->check(CLI::Range(int64_t(1), int64_t(255)));
  cmd->callback([args, &exitCode] { exitCode = runExport(*args); });
}

}  // namespace fuselens::cli
