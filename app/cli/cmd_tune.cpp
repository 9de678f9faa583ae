// `fuselens-cli tune model.onnx --budget-seconds N`: measure schedule
// candidates for every kernel of the optimized model (MatMul tiles; loop splits,
// unroll and threads for the others) and record the
// fastest in a tuning log keyed by op signature and host CPU; `export
// --tuning-log` and compiles with $FUSELENS_TUNING_LOG set reuse it. Ctrl-C
// stops early and keeps what was found. `--target cuda` chooses per MatMul/Gemm
// group between cuBLASLt and the generated kernel (session/cuda_library.h).
#include <cstdio>
#include <iostream>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/cuda_library_view.h"

namespace fuselens::cli {
namespace {

struct TuneArgs {
  std::string model;
  std::vector<std::string> dims, shapes;
  std::string passes = defaultPipelineText();
  double budget = 30;
  std::string log = "fuselens_tuning.json";
  std::string target = "cpu";
};

// --target cuda: per MatMul/Gemm group, cuBLASLt or the generated kernel.
int runCudaTune(const TuneArgs& a) {
  Session s;
  if (Status st = openAndOptimize(s, a.model, a.passes, a.dims, a.shapes); !st) return fail(st);
  auto r = tuneCudaLibrary(s, 5, terminalProgress(), interruptToken());
  if (!r) return fail(r.status());
  printCudaLibraryTune(std::cout, *r);
  return kExitOk;
}

int runTune(const TuneArgs& a) {
  if (a.budget <= 0) return fail(Status::error("the budget must be positive", "--budget-seconds"));
  if (a.target == "cuda") return runCudaTune(a);
  Session s;
  if (Status st = openAndOptimize(s, a.model, a.passes, a.dims, a.shapes); !st) return fail(st);
  auto r = s.tune(TuneRequest{a.budget, a.log}, terminalProgress(), interruptToken());
  if (!r) return fail(r.status());
  char line[512];
  std::snprintf(line, sizeof line, "%-36s %12s %12s %8s %6s  %s\n", "kernel", "default ms",
                "tuned ms", "speedup", "tried", "schedule");
  std::cout << line;
  for (const KernelTuneResult& k : *r) {
    std::snprintf(line, sizeof line, "%-36s %12.3f %12.3f %7.2fx %6d  %s\n", k.kernel.c_str(),
                  k.defaultSeconds * 1e3, k.bestSeconds * 1e3,
                  k.bestSeconds > 0 ? k.defaultSeconds / k.bestSeconds : 0.0, k.measured,
                  k.best.name.c_str());
    std::cout << line;
  }
  if (r->empty()) std::cout << "no kernel has schedule candidates\n";
  std::cout << "tuning log: " << a.log << "\n";
  return kExitOk;
}

}  // namespace

void addTuneCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd =
      app.add_subcommand("tune", "Measure schedule candidates; keep the fastest in a tuning log");
  cmd->add_option("model", args->model, "ONNX model")->required()->check(CLI::ExistingFile);
  cmd->add_option("--budget-seconds", args->budget, "time to spend measuring (default 30)");
  addShapeOptions(cmd, args->dims, args->shapes);
  cmd->add_option("--log", args->log,
                  "tuning log JSON, read and updated (default fuselens_tuning.json)");
  cmd->add_option("--passes", args->passes, "pass pipeline (default: the -O2 pipeline)");
  cmd->add_option("--target", args->target,
                  "cpu (default: schedules, kept in the log) or cuda: per MatMul/Gemm group, "
                  "cuBLASLt or the generated kernel, timed on a device or else by rule, printed "
                  "as --cuda-library-group values")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->callback([args, &exitCode] { exitCode = runTune(*args); });
}

}  // namespace fuselens::cli
