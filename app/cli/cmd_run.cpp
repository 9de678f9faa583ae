// `fuselens-cli run`: run the model eagerly or compiled and write every graph
// output as <output name>.npy.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/run_sweep.h"
#include "core/io/npy.h"

namespace fuselens::cli {
namespace {

struct RunArgs {
  std::string model;
  std::string engine = "eager";
  std::string passes = defaultPipelineText();
  InputArgs inputs;
  std::string outputDir = ".";
  bool json = false;
  SweepArgs sweep;  // run --sweep (app/cli/run_sweep.h)
  std::string precision = "f32";
  CudaRunRequest library;  // --cuda-library, --cuda-library-group
};

// Output names may hold '/' or ':' (exporters write "/fc1/Gemm_output_0"):
// keep file names flat and portable.
std::string fileNameFor(const std::string& name) {
  std::string out;
  for (char c : name)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  return out.empty() ? "output" : out;
}

int runRun(const RunArgs& a) {
  if (Status st = checkCudaLibraryArgs(a.library, a.engine == "cuda", "--engine cuda"); !st)
    return fail(st);
  auto passes = pipelineWithPrecision(a.passes, a.precision);
  if (!passes) return fail(passes.status());
  if (!a.sweep.sweep.empty())
    return runSweepCommand(a.sweep, a.model, a.engine, *passes, a.inputs, a.json);
  if (!a.sweep.buckets.empty() || a.sweep.checkEager || a.sweep.padCheck || a.sweep.dynamic)
    return fail(Status::error("--buckets, --dynamic, --check-eager and --pad-check go with --sweep",
                              "run"));
  // Left to the process's exit, as compilers leave their ASTs: freeing a
  // 20,000-node model's pass snapshots and kernels took ~8% of a warm run.
  // `kept` keeps it reachable, so leak checkers do not count it.
  static Session* kept = nullptr;
  kept = new Session;
  Session& session = *kept;
  if (Status s = openAndOptimize(session, a.model, a.engine != "eager" ? *passes : "", a.inputs);
      !s)
    return fail(s);
  auto inputs = loadInputs(session, a.inputs);
  if (!inputs) return fail(inputs.status());
  const Engine engine = a.engine == "cuda"  ? Engine::Cuda
                        : a.engine == "cpu" ? Engine::Cpu
                                            : Engine::Eager;
  session.cudaRun = a.library;
  auto outputs = session.run(engine, *inputs, terminalProgress(), interruptToken());
  if (!outputs) return fail(outputs.status());
  std::string compiled = session.compileSummary();
  if (!compiled.empty() && !a.json) std::cerr << "compiled: " << compiled << "\n";
  std::error_code ec;
  std::filesystem::create_directories(a.outputDir, ec);
  nlohmann::json report = nlohmann::json::array();
  for (const auto& [name, t] : *outputs) {
    std::string path = (std::filesystem::path(a.outputDir) / (fileNameFor(name) + ".npy")).string();
    if (Status s = writeNpy(path, t); !s) return fail(s);
    report.push_back({{"name", name},
                      {"file", path},
                      {"dtype", std::string(dtypeName(t.dtype))},
                      {"shape", t.shape}});
    if (!a.json) std::cout << name << ": " << t.type().str() << " -> " << path << "\n";
  }
  if (a.json)
    std::cout
        << nlohmann::json{{"engine", a.engine}, {"compiled", compiled}, {"outputs", report}}.dump(2)
        << "\n";
  return kExitOk;
}

}  // namespace

void addRunCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd =
      app.add_subcommand("run", "Run a model eagerly or compiled; write outputs as .npy");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--engine", args->engine,
                  "eager (reference interpreter), cpu (compiled with LLVM) or cuda (CUDA C on "
                  "GPU 0 through the driver API)")
      ->check(CLI::IsMember({"eager", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--passes", args->passes, "Pipeline for --engine cpu|cuda")
      ->capture_default_str();
  addPrecisionOption(cmd, args->precision);
  addCudaLibraryOptions(cmd, args->library, "--engine cuda");
  addInputOptions(cmd, args->inputs);
  cmd->add_option("--output-dir", args->outputDir, "Where <output name>.npy files go")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print a JSON report");
  addSweepOptions(cmd, args->sweep);
  cmd->callback([args, &exitCode] { exitCode = runRun(*args); });
}

}  // namespace fuselens::cli
