// `fuselens-cli tensor MODEL NAME`: the tensor inspector's headless twin.
// Runs compare as `compare` does (same input and check options), then prints
// one tensor of it: header, the stats lines and a text histogram, the same
// words the GUI's inspector dock shows (session/tensor_inspect.h); with
// --slice the values of a 2-D slice, with --npy the tensor as a .npy file.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "app/cli/check_options.h"
#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "core/io/npy.h"

namespace fuselens::cli {
namespace {

// The slice table is for reading, not for data: --npy writes the whole tensor.
constexpr int64_t kMaxRows = 32, kMaxCols = 12;

struct TensorArgs {
  std::string model, name;
  std::string passes = defaultPipelineText();
  InputArgs inputs;
  std::shared_ptr<CheckArgs> check = std::make_shared<CheckArgs>();
  std::string side = "compiled";
  std::string slice, npy;
  int bins = 20;
  bool json = false;
};

void printSlice(const TensorData& s, const std::string& spec) {
  const int64_t rows = s.shape[0], cols = s.shape[1];
  const int64_t shownRows = std::min(rows, kMaxRows), shownCols = std::min(cols, kMaxCols);
  std::printf("slice [%s]: %lld x %lld", spec.c_str(), static_cast<long long>(rows),
              static_cast<long long>(cols));
  if (shownRows < rows || shownCols < cols)
    std::printf(" (first %lld x %lld shown)", static_cast<long long>(shownRows),
                static_cast<long long>(shownCols));
  std::printf("\n");
  for (int64_t r = 0; r < shownRows; ++r) {
    for (int64_t c = 0; c < shownCols; ++c) std::printf(" %11.5g", s.at(r * cols + c));
    std::printf("\n");
  }
}

int runTensor(const TensorArgs& a) {
  const auto side = parseSide(a.side);
  if (!side) return fail(Status::error("--side must be eager, compiled, exact, error or ratio"));
  if (a.bins < 1) return fail(Status::error("--bins must be at least 1"));
  Session session;
  auto inputs = openForInputs(session, a.model, a.passes, a.inputs);
  if (!inputs) return fail(inputs.status());
  auto opts = applyCheckArgs(*a.check, session);
  if (!opts) return fail(opts.status());
  auto rep = session.compare(*inputs, *opts, terminalProgress(), interruptToken());
  if (!rep) return fail(rep.status());

  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto tensor = session.inspectTensor(a.name);
  if (!tensor) return fail(tensor.status());
  auto shown = sideTensor(*tensor, *side);
  if (!shown) return fail(shown.status());
  const auto t1 = Clock::now();
  const TensorStats stats = tensorStats(**shown);
  auto hist = histogram(**shown, a.bins);
  if (!hist) return fail(hist.status());
  const auto t2 = Clock::now();
  std::optional<TensorData> slice;
  if (!a.slice.empty()) {
    auto spec = parseSlice(a.slice, (*shown)->shape);
    if (!spec) return fail(spec.status());
    auto s = slice2D(**shown, *spec);
    if (!s) return fail(s.status());
    slice = std::move(*s);
  }
  if (!a.npy.empty())
    if (Status st = writeNpy(a.npy, **shown); !st) return fail(st);
  std::fprintf(stderr, "tensor: fetched in %.3f s, stats and histogram in %.3f s\n",
               std::chrono::duration<double>(t1 - t0).count(),
               std::chrono::duration<double>(t2 - t1).count());

  if (a.json) {
    std::cout << tensorJson(*tensor, a.side, **shown, stats, *hist, slice ? &*slice : nullptr)
              << "\n";
    return kExitOk;
  }
  std::printf("%s\n", headerLine(*tensor).c_str());
  std::printf("side %s: %s\n", a.side.c_str(), shapeText(**shown).c_str());
  for (const std::string& line : statsLines(stats)) std::printf("%s\n", line.c_str());
  for (const std::string& line : histogramLines(*hist)) std::printf("%s\n", line.c_str());
  if (slice) printSlice(*slice, a.slice);
  if (!tensor->note.empty()) std::printf("NOTE: %s\n", tensor->note.c_str());
  if (!session.keptTensorsNote().empty())
    std::printf("NOTE: %s\n", session.keptTensorsNote().c_str());
  if (!a.npy.empty()) std::printf("wrote %s\n", a.npy.c_str());
  return kExitOk;
}

}  // namespace

void addTensorCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<TensorArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tensor",
      "Inspect one tensor of the compare run: shape, dtype, statistics, histogram, a slice's "
      "values, eager / compiled / exact / error map, and save it as .npy");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("name", args->name, "The tensor (value) name, as compare lists it")->required();
  cmd->add_option("--passes", args->passes, "Pipeline string")->capture_default_str();
  addInputOptions(cmd, args->inputs);
  addCheckOptions(cmd, args->check);
  cmd->add_option("--side", args->side,
                  "eager, compiled, exact (f64), error (|compiled - eager|) or ratio "
                  "(|compiled - exact| / expected rounding error)")
      ->capture_default_str();
  cmd->add_option("--slice", args->slice,
                  "A 2-D slice to print: one entry per axis, ':' for the two axes shown "
                  "(e.g. 0,3,:,:)");
  cmd->add_option("--npy", args->npy, "Write the side's tensor (logical layout) to this .npy file");
  cmd->add_option("--bins", args->bins, "Histogram bins")->capture_default_str();
  cmd->add_flag("--json", args->json, "Print JSON instead of text");
  cmd->callback([args, &exitCode] { exitCode = runTensor(*args); });
}

}  // namespace fuselens::cli
