// `fuselens-cli compare`: compile, run compiled and eager on the same inputs,
// and compare every kernel-boundary tensor; non-zero exit when any is out of
// tolerance.
#include <cstdio>
#include <iostream>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/compare_isolated.h"

namespace fuselens::cli {
namespace {

struct CompareArgs {
  std::string model;
  std::string passes = defaultPipelineText();
  InputArgs inputs;
  double atol = 1e-4, rtol = 1e-4;
  bool json = false;
  bool isolated = false;
  bool noFallback = false;
};

void printTable(const CompareReport& rep, const Session& s) {
  GraphStats st = graphStats(s.finalGraph());
  std::printf("pipeline %s: %zu fused group%s, %zu kernels\n", s.pipeline().c_str(), st.fusedGroups,
              st.fusedGroups == 1 ? "" : "s", s.compiled()->kernels().size());
  std::printf("%-32s %-20s %10s %10s %10s %9s  %s\n", "tensor", "producer", "max abs", "max rel",
              "rmse", "cosine", "status");
  for (const CompareRow& r : rep.rows) {
    const TensorMetrics& m = r.metrics;
    std::printf("%-32.32s %-20.20s %10s %10s %10s %9.6f  %s%s\n", r.name.c_str(),
                r.producer.c_str(), formatDouble(m.maxAbs).c_str(), formatDouble(m.maxRel).c_str(),
                formatDouble(m.rmse).c_str(), m.cosine, rowStatus(r).c_str(),
                r.isGraphOutput ? " (output)" : "");
  }
  std::printf("%s\n", rep.verdict().c_str());
  if (std::string note = rep.fallbackNote(); !note.empty()) std::printf("%s\n", note.c_str());
}

int runCompare(const CompareArgs& a) {
  Session session;
  if (Status s = openAndOptimize(session, a.model, a.passes, a.inputs.dims, a.inputs.shapes); !s)
    return fail(s);
  auto inputs = loadInputs(session, a.inputs);
  if (!inputs) return fail(inputs.status());
  if (Status s = fitToInputs(session, *inputs); !s) return fail(s);
  if (a.noFallback) {
    CompileOptions opts;
    opts.fallback = false;
    if (Status st = session.compile(opts, terminalProgress(), interruptToken()); !st)
      return fail(st);
  }
  if (a.isolated) return runIsolatedCompare(session, *inputs, Tolerance{a.atol, a.rtol}, a.json);
  auto rep =
      session.compare(*inputs, Tolerance{a.atol, a.rtol}, terminalProgress(), interruptToken());
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
                                     "tensor (exit 1 when out of tolerance)");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--passes", args->passes, "Pipeline string")->capture_default_str();
  addInputOptions(cmd, args->inputs);
  cmd->add_option("--atol", args->atol, "Absolute tolerance")->capture_default_str();
  cmd->add_option("--rtol", args->rtol, "Relative tolerance")->capture_default_str();
  cmd->add_flag("--json", args->json, "Print a JSON report");
  cmd->add_flag(
      "--no-fallback", args->noFallback,
      "Fail on ops without code generation instead of running them as the reference fallback");
  cmd->add_flag("--isolated", args->isolated,
                "Also compile every kernel alone and feed it eager inputs: tells a wrong kernel "
                "from error accumulated upstream");
  cmd->callback([args, &exitCode] { exitCode = runCompare(*args); });
}

}  // namespace fuselens::cli
