// `fuselens-cli bisect`: which fused groups, or which pass, take a graph
// output beyond the error rounding explains (session/bisect_report.h). Exit 0
// when the output is within rounding with the whole pipeline, 1 when it is not
// (the report then says where it goes wrong), 2 for bad input.
#include <cstdio>
#include <iostream>

#include "app/cli/check_options.h"
#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "session/report_json.h"

namespace fuselens::cli {
namespace {

struct BisectArgs {
  std::string model;
  std::string passes = defaultPipelineText();
  InputArgs inputs;
  std::shared_ptr<CheckArgs> check = std::make_shared<CheckArgs>();
  std::string by = "groups";
  std::string output;
  bool json = false;
  std::string precision = "f32";
};

void printTrials(const BisectReport& rep) {
  std::printf("%-4s %-44s %8s  %-14s %s\n", "#", "variant", "kernels", "output", "status");
  for (size_t i = 0; i < rep.trials.size(); ++i) {
    const BisectTrial& t = rep.trials[i];
    std::printf("%-4zu %-44.44s %8zu  %-14.14s %s\n", i, t.what.c_str(), t.kernels, t.worst.c_str(),
                t.status.c_str());
  }
  std::printf("%s\n", rep.verdict().c_str());
}

int runBisect(const BisectArgs& a) {
  auto passes = pipelineWithPrecision(a.passes, a.precision);
  if (!passes) return fail(passes.status());
  Session session;
  auto inputs = openForInputs(session, a.model, *passes, a.inputs);
  if (!inputs) return fail(inputs.status());
  auto opts = applyCheckArgs(*a.check, session);
  if (!opts) return fail(opts.status());
  BisectRequest request;
  request.by = a.by == "passes" ? BisectBy::Passes : BisectBy::Groups;
  request.output = a.output;
  auto rep = session.bisect(*inputs, request, *opts, terminalProgress(), interruptToken());
  if (!rep) return fail(rep.status());
  if (a.json)
    std::cout << bisectJson(*rep) << "\n";
  else
    printTrials(*rep);
  return rep->outcome == BisectReport::Outcome::Within ? kExitOk : kExitCheckFailed;
}

}  // namespace

void addBisectCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<BisectArgs>();
  CLI::App* cmd = app.add_subcommand("bisect",
                                     "Find the fused groups (or the pass) that take an output "
                                     "beyond rounding (exit 1 when it is)");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--passes", args->passes, "Pipeline string")->capture_default_str();
  addPrecisionOption(cmd, args->precision);
  addInputOptions(cmd, args->inputs);
  addCheckOptions(cmd, args->check);
  cmd->add_option("--by", args->by,
                  "groups: the fewest fused groups to split back into single-op kernels; passes: "
                  "the first pass after which the output leaves its expected error")
      ->check(CLI::IsMember({"groups", "passes"}))
      ->capture_default_str();
  cmd->add_option("--output", args->output, "The graph output to watch (default: every output)");
  cmd->add_flag("--json", args->json, "Print a JSON report");
  cmd->callback([args, &exitCode] { exitCode = runBisect(*args); });
}

}  // namespace fuselens::cli
