// `fuselens-cli compare`: compile, run compiled and eager on the same inputs,
// and compare every kernel-boundary tensor. By default each tensor is judged
// against the error f32 rounding alone explains (core/compare/rounding.h);
// --atol/--rtol ask for fixed tolerances instead. Exit 1 only for a tensor
// beyond rounding (out of tolerance) or wrong. --tap NAME adds a row for a
// value computed inside a fused group (session/tap_compare.h); tap rows count
// toward the exit code like the others.
#include <cstdio>
#include <iostream>
#include <optional>

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
  std::vector<std::string> taps;
  std::string precision = "f32";
  CudaRunRequest library;  // --cuda-library, --cuda-library-group
};

// One table line: the same columns for compare rows and tap rows.
void printHeader(const char* first, const char* second) {
  std::printf("%-32s %-20s %10s %10s %10s %9s %10s  %s\n", first, second, "max abs", "max rel",
              "rmse", "cosine", "expected", "status");
}

void printRow(const CompareRow& r, const std::string& producer, const std::string& suffix) {
  const TensorMetrics& m = r.metrics;
  const std::string expected = r.rounding ? formatDouble(r.rounding->expected) : "-";
  std::printf("%-32.32s %-20.20s %10s %10s %10s %9.6f %10s  %s%s\n", r.name.c_str(),
              producer.c_str(), formatDouble(m.maxAbs).c_str(), formatDouble(m.maxRel).c_str(),
              formatDouble(m.rmse).c_str(), m.cosine, expected.c_str(), rowStatus(r).c_str(),
              suffix.c_str());
}

void printTable(const CompareReport& rep, const Session& s) {
  GraphStats st = graphStats(s.finalGraph());
  std::printf("pipeline %s: %zu fused group%s, %zu kernels\n", s.pipeline().c_str(), st.fusedGroups,
              st.fusedGroups == 1 ? "" : "s",
              s.compiled() ? s.compiled()->kernels().size() : st.kernels);
  if (std::string line = precisionLine(s.pipeline()); !line.empty())
    std::printf("%s\n", line.c_str());
  printHeader("tensor", "producer");
  for (const CompareRow& r : rep.rows) printRow(r, r.producer, r.isGraphOutput ? " (output)" : "");
  std::printf("%s\n", rep.verdict().c_str());
  if (!rep.referenceNote.empty()) std::printf("NOTE: %s\n", rep.referenceNote.c_str());
  if (std::string note = rep.fallbackNote(); !note.empty()) std::printf("%s\n", note.c_str());
}

void printTaps(const TapReport& taps) {
  printHeader("tap (inside a group)", "kernel");
  for (const TapRow& t : taps.rows) {
    // The kernel's id ("k3"): its full name would not fit beside the group.
    const std::string kernel =
        "group " + std::to_string(t.group) + " (" + t.kernel.substr(0, t.kernel.find('_')) + ")";
    printRow(t.row, kernel, t.outputsIdentical ? "" : " (" + t.outputsNote + ")");
  }
  std::printf("%s\n", taps.verdict().c_str());
}

int runCompare(const CompareArgs& a) {
  if (!a.taps.empty() && (a.isolated || a.engine == "cuda"))
    return fail(Status::error(
        "--tap compares inside fused groups of the CPU end-to-end run; drop --isolated and "
        "--engine cuda",
        "compare"));
  if (a.engine == "cuda" && (a.isolated || !a.check->perturb.empty()))
    return fail(
        Status::error("--isolated and --perturb run on the CPU engine only; drop them "
                      "or --engine cuda",
                      "compare"));
  if (Status st = checkCudaLibraryArgs(a.library, a.engine == "cuda", "--engine cuda"); !st)
    return fail(st);
  auto passes = pipelineWithPrecision(a.passes, a.precision);
  if (!passes) return fail(passes.status());
  Session session;
  session.cudaRun = a.library;
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
  // Taps first: a bad name is one sentence before the long runs.
  std::optional<TapReport> taps;
  if (!a.taps.empty()) {
    auto t = session.compareTaps(a.taps, *inputs, *opts, terminalProgress(), interruptToken());
    if (!t) return fail(t.status());
    taps = std::move(*t);
  }
  auto rep = a.engine == "cuda"
                 ? session.compareCuda(*inputs, *opts, terminalProgress(), interruptToken())
                 : session.compare(*inputs, *opts, terminalProgress(), interruptToken());
  if (!rep) return fail(rep.status());
  if (a.json) {
    std::cout << compareJson(*rep, session, taps ? &*taps : nullptr) << "\n";
  } else {
    printTable(*rep, session);
    if (taps) printTaps(*taps);
  }
  const bool passed = rep->allWithin() && (!taps || taps->allWithin());
  return passed ? kExitOk : kExitCheckFailed;
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
  cmd->add_option("--tap", args->taps,
                  "Also compare NAME, a tensor of the model that a fused group computes inside "
                  "itself, through a tapped variant of that group (repeatable)");
  cmd->add_option("--engine", args->engine,
                  "cpu (compiled with LLVM, every kernel boundary) or cuda (GPU 0 through the "
                  "driver API, graph outputs)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  addCudaLibraryOptions(cmd, args->library, "--engine cuda");
  cmd->callback([args, &exitCode] { exitCode = runCompare(*args); });
}

}  // namespace fuselens::cli
