// `fuselens-cli profile`: compile the model, time every kernel over N runs and
// print where the time goes against this machine's roofs (Session::profile);
// --trace writes the last run as Chrome trace JSON.
#include <iostream>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "core/support/atomic_file.h"

namespace fuselens::cli {
namespace {

struct ProfileArgs {
  std::string model;
  std::string passes = defaultPipelineText();
  InputArgs inputs;
  int runs = 20;
  int threads = 0;
  bool json = false;
  std::string trace;
  std::string precision = "f32";
};

int runProfile(const ProfileArgs& a) {
  auto passes = pipelineWithPrecision(a.passes, a.precision);
  if (!passes) return fail(passes.status());
  Session session;
  if (Status s = openAndOptimize(session, a.model, *passes, a.inputs); !s) return fail(s);
  auto inputs = loadInputs(session, a.inputs);
  if (!inputs) return fail(inputs.status());
  ProfileRequest request;
  request.runs = a.runs;
  request.threads = a.threads;
  auto report = session.profile(*inputs, request, terminalProgress(), interruptToken());
  if (!report) return fail(report.status());
  std::cerr << "compiled: " << session.compileSummary() << "\n";
  if (!a.trace.empty())
    if (Status s = writeFileAtomically(a.trace, report->chromeTrace() + "\n"); !s) return fail(s);
  std::cout << (a.json ? report->json() + "\n" : report->text());
  return kExitOk;
}

}  // namespace

void addProfileCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "Time every compiled kernel against this machine's FMA peak and copy bandwidth");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--passes", args->passes, "Pipeline")->capture_default_str();
  addPrecisionOption(cmd, args->precision);
  addInputOptions(cmd, args->inputs);
  cmd->add_option("--runs", args->runs, "Timed runs after one warm-up (medians)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "Threads a run may use (0: every hardware thread)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print the profile as JSON");
  cmd->add_option("--trace", args->trace, "Write the last run as Chrome trace JSON (Perfetto)");
  cmd->callback([args, &exitCode] { exitCode = runProfile(*args); });
}

}  // namespace fuselens::cli
