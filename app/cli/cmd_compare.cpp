// `fuselens-cli compare`: compile, run compiled and eager on the same inputs,
// and compare every kernel-boundary tensor. By default each tensor is judged
// against the error f32 rounding alone explains (core/compare/rounding.h);
// --atol/--rtol ask for fixed tolerances instead. Exit 1 only for a tensor
// beyond rounding (out of tolerance) or wrong.
#include <cstdio>
#include <iostream>

#include "app/cli/check_options.h"
#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/compare_isolated.h"

namespace fuselens::cli {
namespace {

struct CompareArgs {
  std::string model;
  std::string passes = defaultPipelineText();
  InputArgs inputs;
  std::shared_ptr<CheckArgs> check = std::make_shared<CheckArgs>();
  bool json = false;
  bool isolated = false;
  bool noFallback = false;
  std::string engine = "cpu";
  std::string precision = "f32";
};

void printTable(const CompareReport& rep, const Session& s) {
  GraphStats st = graphStats(s.finalGraph());
  std::printf("pipeline %s: %zu fused group%s, %zu kernels\n", s.pipeline().c_str(), st.fusedGroups,
              st.fusedGroups == 1 ? "" : "s",
              s.compiled() ? s.compiled()->kernels().size() : st.kernels);
  if (std::string line = precisionLine(s.pipeline()); !line.empty())
    std::printf("%s\n", line.c_str());
  std::printf("%-32s %-20s %10s %10s %10s %9s %10s  %s\n", "tensor", "producer", "max abs",
              "max rel", "rmse", "cosine", "expected", "status");
  for (const CompareRow& r : rep.rows) {
    const TensorMetrics& m = r.metrics;
    const std::string expected = r.rounding ? formatDouble(r.rounding->expected) : "-";
    std::printf("%-32.32s %-20.20s %10s %10s %10s %9.6f %10s  %s%s\n", r.name.c_str(),
                r.producer.c_str(), formatDouble(m.maxAbs).c_str(), formatDouble(m.maxRel).c_str(),
                formatDouble(m.rmse).c_str(), m.cosine, expected.c_str(), rowStatus(r).c_str(),
                r.isGraphOutput ? " (output)" : "");
  }
  std::printf("%s\n", rep.verdict().c_str());
  if (!rep.referenceNote.empty()) std::printf("NOTE: %s\n", rep.referenceNote.c_str());
  if (std::string note = rep.fallbackNote(); !note.empty()) std::printf("%s\n", note.c_str());
}

int runCompare(const CompareArgs& a) {
  if (a.engine == "cuda" && (a.isolated || !a.check->perturb.empty()))
    return fail(
        Status::error("--isolated and --perturb run on the CPU engine only; drop them "
                      "or --engine cuda",
                      "compare"));
  auto passes = pipelineWithPrecision(a.passes, a.precision);
  if (!passes) return fail(passes.status());
  Session session;
  auto inputs = openForInputs(session, a.model, *passes, a.inputs);
  if (!inputs) return fail(inputs.status());
  if (a.noFallback) {
    CompileOptions opts;
    opts.fallback = false;
    if (Status st = session.compile(opts, terminalProgress(), interruptToken()); !st)
      return fail(st);
  }
  auto opts = applyCheckArgs(*a.check, session);
  if (!opts) return fail(opts.status());
  if (a.isolated) return runIsolatedCompare(session, *inputs, *opts, a.json);
  auto rep = a.engine == "cuda"
                 ? session.compareCuda(*inputs, *opts, terminalProgress(), interruptToken())
                 : session.compare(*inputs, *opts, terminalProgress(), interruptToken());
  if (!rep) return fail(rep.status());
  if (a.json)
    std::cout << compareJson(*rep, session) << "\n";
  else
    printTable(*rep, session);
  return rep->allWithin() ? kExitOk : kExitCheckFailed;
}

}  // namespace

void addCompareCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand("compare",
                                     "Compare the compiled run with the eager reference, tensor by "
                                     "tensor (exit 1 when beyond rounding or wrong)");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--passes", args->passes, "Pipeline string")->capture_default_str();
  addPrecisionOption(cmd, args->precision);
  addInputOptions(cmd, args->inputs);
  addCheckOptions(cmd, args->check);
  cmd->add_flag("--json", args->json, "Print a JSON report");
  cmd->add_flag(
      "--no-fallback", args->noFallback,
      "Fail on ops without code generation instead of running them as the reference fallback");
  cmd->add_flag("--isolated", args->isolated,
                "Also compile every kernel alone and feed it eager inputs: tells a wrong kernel "
                "from error accumulated upstream");
  cmd->add_option("--engine", args->engine,
                  "cpu (compiled with LLVM, every kernel boundary) or cuda (GPU 0 through the "
                  "driver API, graph outputs)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd->callback([args, &exitCode] { exitCode = runCompare(*args); });
}

}  // namespace fuselens::cli
